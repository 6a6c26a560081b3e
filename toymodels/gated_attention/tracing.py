"""A real model's forward pass, instrumented for measurement (the real-model section's one way into SmolLM2 and
MiniLM, loaded through the shared loader ``toymodels.realmodels``):

``tokenize(key, text, max_tokens=MAX_TOKENS) -> (ids, tokens)``
    the token ids and strings of a text as the model reads it (SmolLM2 adds no BOS token: token 0 is the text's
    first token; MiniLM adds [CLS] ... [SEP]); ``InputError`` beyond ``max_tokens``.
``trace(key, text, attentions=True, hidden=True, max_tokens=MAX_TOKENS) -> Trace``
    one forward pass, for measurement: ``attentions`` (layers, heads, T, T) float32 (softmax weights, row = query),
    ``hidden`` (layers + 1, T, d) float32: ``hidden[0]`` the embeddings, ``hidden[l]`` the residual stream after
    block ``l`` (SmolLM2: before the final RMSNorm, which transformers' ``hidden_states[-1]`` would include;
    MiniLM: each layer's post-LayerNorm output), ``ids``, ``tokens``, ``logits_last`` (the next-token logits after
    the last token, SmolLM2 only). Bounded to ``MAX_TOKENS`` tokens.

A trace runs under the model's lock (``realmodels.BUSY``), so its working memory (``TRACE_MB``) is counted once per
process, not once per visitor. Nothing here imports torch until a trace runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toymodels.errors import InputError
from toymodels.realmodels import BUSY, MAX_CHARS, Loaded, Text, load
from toymodels.topic import bounded

from .config import KNOBS, MAX_TOKENS

#: A trace's working memory, MB: attention maps and hidden states (float32, torch and NumPy copies) and the
#: eager attention's scores, at MAX_TOKENS. SmolLM2: 30 x 9 x T^2 x 4 B = 71 MB of maps, held twice, plus
#: 31 x T x 576 x 4 B = 18 MB of hidden states, twice.
TRACE_MB = {"smollm2": 250.0, "minilm": 100.0}


@dataclass(frozen=True)
class Trace:
    """One forward pass of a model over one text (see the module docstring for the shapes). ``final``: SmolLM2's
    last hidden state after its final RMSNorm (what transformers' ``hidden_states[-1]`` holds), (T, d); ``nll``: the
    next-token negative log-likelihood at positions 0..T-2, nats (SmolLM2, when asked)."""

    key: str
    text: str
    ids: list
    tokens: list
    attentions: np.ndarray | None
    hidden: np.ndarray | None
    logits_last: np.ndarray | None = None
    final: np.ndarray | None = None
    nll: np.ndarray | None = None
    meta: dict = field(default_factory=dict)


def tokenize(key: str, text: str, max_tokens: int = MAX_TOKENS) -> tuple[list[int], list[str]]:
    """The ids and token strings of ``text`` as the model reads it; ``InputError`` when longer than
    ``max_tokens`` (nothing is truncated silently)."""
    Text(MAX_CHARS).check("text", text)
    m = load(key)
    ids = m.tokenizer(text)["input_ids"]
    if len(ids) > max_tokens:
        raise InputError(f"the text has {len(ids):,} tokens for {m.info.name}; at most {max_tokens:,}")
    if len(ids) < 2:
        raise InputError("the text needs at least two tokens")
    return list(ids), list(m.tokenizer.convert_ids_to_tokens(ids))


def _blocks(m: Loaded):
    return m.model.model.layers if m.key == "smollm2" else m.model.encoder.layer


def _patch_hook(position: int, dims, values):
    """A forward hook that sets ``output[0, position, dims] = values`` (an activation patch, Sun et al. 2024)."""
    import torch

    def hook(_module, _args, output):
        h = output[0] if isinstance(output, tuple) else output
        h = h.clone()
        h[0, position, list(dims)] = torch.as_tensor(values, dtype=h.dtype)
        return (h, *output[1:]) if isinstance(output, tuple) else h

    return hook


@bounded(**KNOBS.specs(group="trace"), _free=("patch",))
def trace(key: str, text: str, attentions: bool = True, hidden: bool = True, max_tokens: int = MAX_TOKENS,
          nll: bool = False, patch: tuple | None = None) -> Trace:
    """One forward pass over ``text``: attention maps and the residual stream after every block (float32 NumPy).

    Runs under the model's lock (one computation per model and process). ``hidden[l]`` is read by a forward hook
    on block ``l`` (its output, before any final norm), ``hidden[0]`` from the embedding output. ``nll=True``
    (SmolLM2) also returns each next token's negative log-likelihood. ``patch=(block, position, dims, values)``
    overwrites the output of block ``block`` (1-based) at ``position``, dimensions ``dims``, with ``values`` before
    the next block reads it (and before ``hidden`` records it)."""
    import torch

    ids, tokens = tokenize(key, text, max_tokens)
    m = load(key)
    outs: list = []

    def hook(_module, _args, output):
        outs.append((output[0] if isinstance(output, tuple) else output).detach())

    blocks = _blocks(m)
    if patch is not None and not 1 <= int(patch[0]) <= len(blocks):
        raise InputError(f"patch block must be between 1 and {len(blocks)}, got {patch[0]}")
    with BUSY[key], torch.inference_mode():
        handles = []
        try:
            if patch is not None:
                handles.append(blocks[int(patch[0]) - 1].register_forward_hook(_patch_hook(*patch[1:])))
            if hidden:
                handles += [b.register_forward_hook(hook) for b in blocks]
            x = torch.tensor([ids])
            kwargs = dict(output_attentions=attentions, output_hidden_states=hidden or key == "smollm2")
            if key == "smollm2":
                out = m.model(input_ids=x, logits_to_keep=0 if nll else 1, use_cache=False, **kwargs)
            else:
                out = m.model(input_ids=x, attention_mask=torch.ones_like(x), **kwargs)
        finally:
            for h in handles:
                h.remove()
        att = torch.stack(out.attentions)[:, 0].float().numpy() if attentions else None
        hid = torch.stack([out.hidden_states[0]] + outs)[:, 0].float().numpy() if hidden else None
        logits = final = lp = None
        if key == "smollm2":
            logits = out.logits[0, -1].float().numpy()
            final = out.hidden_states[-1][0].float().numpy()
            if nll:
                logp = torch.log_softmax(out.logits[0, :-1].double(), -1)
                lp = (-logp.gather(1, x[0, 1:, None])[:, 0]).numpy()
    return Trace(key, text, ids, tokens, att, hid, logits, final, lp, {"model": m.info.name, "n_tokens": len(ids)})
