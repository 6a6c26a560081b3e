"""Real pretrained models beside the toy: the attention sink, the massive activations, Sun et al.'s ablation of them,
and Skean et al.'s prompt entropy per layer, in SmolLM2-135M-Instruct (ungated, causal, pre-norm) and
all-MiniLM-L6-v2 (ungated, bidirectional, post-norm), on the prompts of ``data/realmodels/prompts.json``.

Neither model has the paper's output gate, and no gated twin of either exists offline: they show the phenomenon the
gate removes, not the gate's effect (which is not testable on them). Definitions, per prompt of T tokens:

* **first-token share** (the paper's F-Attn, Fig. 2): A^{l,h}[i, 0] averaged over queries i ≥ 1 (and over heads for
  a layer, over layers for a prompt), beside the share a uniform head would give: mean over i ≥ 1 of 1/(i + 1) for a
  causal model, 1/T for an encoder;
* **massive activation** (Sun et al. 2024; the toy's ``MACT_RATIO_MIN``): at hidden state l (the residual stream
  after block l), the largest |h| of token 0 over its layer's median |h| (all tokens and dimensions); Sun et al.'s
  stricter bar is |h| > 100 and ≥ 1000× the median. M-Act (the paper's Table 4): the largest |h| of each layer's
  output, averaged over layers;
* **prompt entropy** (Skean et al. 2025, the official ``metric_utils.compute_entropy`` with α = 1 and the
  ``maxEntropy`` normalisation): the hidden states of one prompt, centred over tokens and scaled to unit rows
  (the official ``normalize``), their Gram matrix (or D × D covariance when T > D) with negative entries set to 0,
  the von Neumann entropy of its positive eigenvalues normalised to sum 1, divided by min(log T, log D). Layers as
  transformers returns them (SmolLM2's last after its final RMSNorm). The sink-excluded control drops token 0 first.
"""
from __future__ import annotations

import json
import math
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from toymodels import realmodels
from toymodels.topic import bounded

from .config import KNOBS, MAX_PROMPTS, VISITOR_CHARS  # noqa: F401 - where the bounds are
from .summary import MACT_RATIO_MIN
from .tracing import trace

PROMPTS_FILE = Path(__file__).resolve().parent.parent / "data" / "realmodels" / "prompts.json"
SUN_RATIO = 1000.0      # Sun et al.'s massive activation: at least 1000x the layer's median |h| ...
SUN_ABS = 100.0         # ... and larger than 100 in magnitude
SINK_FACTOR = 3.0       # a layer "has a sink" when its first-token share is at least 3x the uniform share
INTERIOR = (0.2, 0.8)   # the valley's interior: hidden states l with 0.2 L <= l <= 0.8 L


@lru_cache(maxsize=1)
def _prompt_file() -> dict:
    return json.loads(PROMPTS_FILE.read_text())


def prompts(which: str = "registered") -> tuple[str, ...]:
    """The registered prompts (they decide the claims) or the development ones (``"dev"``), with provenance in
    ``data/realmodels/prompts.json``."""
    return tuple(_prompt_file()[which])


# --------------------------------------------------------------------------- the measures (pure NumPy)


def uniform_share(T: int, causal: bool) -> float:
    """The first-token share of a head that attends uniformly, averaged over queries i >= 1 (T tokens)."""
    if causal:
        return float(np.mean(1.0 / (np.arange(1, T) + 1.0)))
    return 1.0 / T


def first_token_share(att: np.ndarray) -> np.ndarray:
    """(layers, heads): A[l, h, i, 0] averaged over queries i >= 1, from maps (layers, heads, T, T)."""
    return att[:, :, 1:, 0].astype(np.float64).mean(-1)


def massive_stats(hidden: np.ndarray, top: int = 3) -> pd.DataFrame:
    """Per hidden state l (rows 0..L): the median |h| over every token and dimension, the largest |h| and where it
    sits (position, dimension), token 0's largest |h| and its dimension, their ratios to the median, and token 0's
    dimensions at or above the massive bar (MACT_RATIO_MIN x the median; at most ``top``, largest first)."""
    rows = []
    for layer, h in enumerate(np.abs(hidden.astype(np.float64))):
        med = float(np.median(h))
        pos, dim = np.unravel_index(int(h.argmax()), h.shape)
        d0 = int(h[0].argmax())
        over = np.flatnonzero(h[0] >= MACT_RATIO_MIN * med)
        over = over[np.argsort(-h[0, over])][:top]
        rows.append({"layer": layer, "median_abs": med, "max_abs": float(h[pos, dim]), "max_pos": int(pos),
                     "max_dim": int(dim), "ratio": float(h[pos, dim] / med), "first_max": float(h[0, d0]),
                     "first_dim": d0, "first_ratio": float(h[0, d0] / med),
                     "first_sun": bool(h[0, d0] > SUN_ABS and h[0, d0] >= SUN_RATIO * med),
                     "first_dims": ",".join(str(int(d)) for d in over)})
    return pd.DataFrame(rows)


def prompt_entropy(H: np.ndarray, alpha: float = 1.0) -> float:
    """Skean et al.'s prompt entropy of one prompt's hidden states H (T x D), normalised to [0, 1] by
    min(log T, log D) (see the module docstring; α = 1 only, the paper's choice)."""
    if alpha != 1.0:
        raise ValueError("only alpha = 1 (the von Neumann entropy) is implemented")
    Z = np.asarray(H, dtype=np.float64)
    Z = Z - Z.mean(0, keepdims=True)
    Z = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    N, D = Z.shape
    K = Z.T @ Z if N > D else Z @ Z.T
    K = np.clip(K, 0.0, None)
    ev = np.linalg.eigvalsh(K)
    ev = ev[ev > 0]
    p = ev / ev.sum()
    return float(-(p * np.log(p)).sum() / min(math.log(N), math.log(D)))


def valley_depth(curve: np.ndarray) -> float:
    """How far the curve dips inside (hidden states 0.2 L .. 0.8 L) below the lower of its two ends (the embedding
    and the last layer): min(E_0, E_L) - min interior E; negative when there is no dip."""
    L = len(curve) - 1
    lo, hi = math.ceil(INTERIOR[0] * L), math.floor(INTERIOR[1] * L)
    return float(min(curve[0], curve[-1]) - np.min(curve[lo:hi + 1]))


def first_layer(flags) -> int | None:
    """The 1-based index of the first True in ``flags`` (None if none)."""
    idx = np.flatnonzero(np.asarray(flags, bool))
    return int(idx[0]) + 1 if len(idx) else None


# --------------------------------------------------------------------------- one prompt, one model


def measure_prompt(key: str, text: str) -> dict:
    """Everything the claims read for one prompt (one forward pass)."""
    info = realmodels.MODELS[key]
    tr = trace(key, text)
    T = len(tr.ids)
    share = first_token_share(tr.attentions)                          # (L, H)
    u = uniform_share(T, info.causal)
    ms = massive_stats(tr.hidden)
    states = tr.hidden.copy()
    if tr.final is not None:
        states[-1] = tr.final                                          # transformers' convention (official code)
    ent = np.array([prompt_entropy(s) for s in states])
    ent_x = np.array([prompt_entropy(s[1:]) for s in states])
    layer_share = share.mean(1)
    l_mass = first_layer(ms.first_ratio.to_numpy()[1:] >= MACT_RATIO_MIN)   # block whose output first holds it
    l_sink = first_layer(layer_share >= SINK_FACTOR * u)
    return {"text": text, "tokens": tr.tokens, "T": T, "uniform": u, "share": share, "massive": ms,
            "entropy": ent, "entropy_excl": ent_x, "first_massive_block": l_mass, "first_sink_layer": l_sink,
            "maps": tr.attentions.mean(1).astype(np.float32), "first_rows": tr.hidden[:, 0, :].copy()}


# --------------------------------------------------------------------------- Sun et al.'s ablation (SmolLM2)


def ablation_target(per_prompt: list[dict]) -> dict | None:
    """Where to ablate, fixed from the intact runs over all prompts: the block whose output most often first holds a
    massive activation at Sun et al.'s bar on token 0, the dimensions of token 0 at that bar there in at least half
    of the prompts, and their mean values over the prompts (Sun et al.'s 'set to mean'). None when no prompt has
    one."""
    firsts = []
    for r in per_prompt:
        sun = r["massive"].first_sun.to_numpy()[1:]
        firsts.append(first_layer(sun))
    seen = [f for f in firsts if f is not None]
    if not seen:
        return None
    block = int(pd.Series(seen).mode().min())
    counts: dict[int, int] = {}
    for r in per_prompt:
        h = np.abs(r["first_rows"][block])
        med = r["massive"].median_abs.iloc[block]
        for d in np.flatnonzero((h > SUN_ABS) & (h >= SUN_RATIO * med)):
            counts[int(d)] = counts.get(int(d), 0) + 1
    dims = sorted(d for d, c in counts.items() if c >= len(per_prompt) / 2)
    if not dims:
        return None
    values = np.mean([r["first_rows"][block][dims] for r in per_prompt], axis=0)
    return {"block": block, "dims": dims, "mean_values": [float(v) for v in values],
            "prompts_with_sun": len(seen), "first_blocks": [f if f is not None else -1 for f in firsts]}


def _later_share(att: np.ndarray, block: int) -> float:
    """The first-token share averaged over the layers after ``block`` (their attention reads its output)."""
    return float(first_token_share(att[block:]).mean())


def ablate(text: str, target: dict) -> dict:
    """NLL (mean over next tokens) and the later layers' first-token share of one prompt: intact, with token 0's
    massive dimensions set to zero, and set to their mean, at the target block's output."""
    out = {}
    for arm, values in (("intact", None), ("zero", [0.0] * len(target["dims"])), ("mean", target["mean_values"])):
        patch = None if values is None else (target["block"], 0, target["dims"], values)
        tr = trace("smollm2", text, hidden=False, nll=True, patch=patch)
        out[f"nll_{arm}"] = float(tr.nll.mean())
        out[f"share_{arm}"] = _later_share(tr.attentions, target["block"])
        out["uniform"] = uniform_share(len(tr.ids), True)
    return out


# --------------------------------------------------------------------------- the view


@bounded(**KNOBS.specs("key", "texts", "ablation", group="real_model"))
def real_model(key: str, texts: list[str], ablation: bool = True, progress=None) -> dict:
    """The real-model view: per layer (means over prompts), per prompt, per head, the first prompt's head-averaged
    maps, and (SmolLM2, ``ablation``) Sun et al.'s ablation at the block where token 0's massive activation first
    appears. ``meta`` records the CPU seconds of the call (the model's loading included when it happens here)."""
    from toymodels.topic import as_progress

    p = as_progress(progress)
    c0 = time.process_time()
    info = realmodels.MODELS[key]
    rows = []
    for i, text in enumerate(texts):
        rows.append(measure_prompt(key, text))
        p((i + 1) / len(texts) * (0.6 if ablation else 1.0), f"{info.name}: prompt {i + 1}/{len(texts)}")
    L = info.layers
    per_prompt = pd.DataFrame([{
        "prompt": i, "T": r["T"], "uniform": r["uniform"], "share": float(r["share"].mean()),
        "excess": float(r["share"].mean() - r["uniform"]),
        "first_ratio_max": float(r["massive"].first_ratio.iloc[1:].max()),
        "first_ratio_max_layer": int(r["massive"].first_ratio.iloc[1:].to_numpy().argmax()) + 1,
        "max_on_first": bool(r["massive"].max_pos.iloc[1 + int(r["massive"].first_ratio.iloc[1:].to_numpy().argmax())]
                             == 0),
        "first_massive_block": r["first_massive_block"] or -1, "first_sink_layer": r["first_sink_layer"] or -1,
        "valley": valley_depth(r["entropy"]), "valley_excl": valley_depth(r["entropy_excl"]),
        "mact": float(r["massive"].max_abs.iloc[1:].mean())} for i, r in enumerate(rows)])
    layers = pd.DataFrame({
        "layer": np.arange(L + 1),
        "share": [np.nan] + [float(np.mean([r["share"][lay].mean() for r in rows])) for lay in range(L)],
        "uniform": float(np.mean([r["uniform"] for r in rows])),
        "first_ratio": [float(np.median([r["massive"].first_ratio.iloc[lay] for r in rows])) for lay in range(L + 1)],
        "ratio": [float(np.median([r["massive"].ratio.iloc[lay] for r in rows])) for lay in range(L + 1)],
        "max_abs": [float(np.median([r["massive"].max_abs.iloc[lay] for r in rows])) for lay in range(L + 1)],
        "max_on_first": [float(np.mean([r["massive"].max_pos.iloc[lay] == 0 for r in rows])) for lay in range(L + 1)],
        "first_dim": [int(pd.Series([r["massive"].first_dim.iloc[lay] for r in rows]).mode().min())
                      for lay in range(L + 1)],
        "massive_share": [float(np.mean([r["massive"].first_ratio.iloc[lay] >= MACT_RATIO_MIN for r in rows]))
                          for lay in range(L + 1)],
        "sun_share": [float(np.mean([r["massive"].first_sun.iloc[lay] for r in rows])) for lay in range(L + 1)],
        "entropy": np.mean([r["entropy"] for r in rows], axis=0),
        "entropy_excl": np.mean([r["entropy_excl"] for r in rows], axis=0),
    })
    heads = pd.DataFrame(np.mean([r["share"] for r in rows], axis=0),
                         columns=[f"head_{h + 1}" for h in range(info.heads)]).assign(layer=np.arange(1, L + 1))
    out = {"model": info.name, "key": key, "layers": layers, "prompts": per_prompt, "heads": heads,
           "example": {"tokens": rows[0]["tokens"], "maps": rows[0]["maps"],
                       "dims": rows[0]["massive"].first_dims.tolist()}}
    if key == "smollm2" and ablation:
        target = ablation_target(rows)
        abl = []
        if target is not None:
            for i, text in enumerate(texts):
                abl.append({"prompt": i, **ablate(text, target)})
                p(0.6 + 0.4 * (i + 1) / len(texts), f"ablation: prompt {i + 1}/{len(texts)}")
        out["ablation"] = {"target": target, "prompts": pd.DataFrame(abl)}
    import torch
    import transformers

    out["meta"] = {"cpu_seconds": round(time.process_time() - c0, 1), "prompts": len(texts),
                   "torch": torch.__version__, "transformers": transformers.__version__,
                   "threads": torch.get_num_threads(), "model": info.name}
    return out


# --------------------------------------------------------------------------- a visitor's prompt (the page's live run)



def expected_real_seconds(key: str = "smollm2") -> float:
    """Seconds (one CPU core) to read one visitor prompt: loading the model when this process has not yet, plus
    about 2 s for the pass (SmolLM2 at 256 tokens: 0.7 CPU-s measured; entropy eigendecompositions included)."""
    return 2.0 + (0.0 if realmodels.is_loaded(key) else realmodels.MODELS[key].load_seconds)


@bounded(**KNOBS.specs("key", "text", group="real_prompt"))
def real_prompt(key: str, text: str) -> dict:
    """One visitor prompt through a real model: per layer, the first-token share beside the uniform one, token 0's
    largest |h| over the median (and where the layer's largest sits), the prompt entropy with and without token 0;
    the tokens and the head-averaged maps. Bounded: VISITOR_CHARS characters, MAX_TOKENS tokens, one
    pass under the model's lock (working memory about tracing.TRACE_MB)."""
    r = measure_prompt(key, text)
    ms = r["massive"]
    share = np.concatenate([[np.nan], r["share"].mean(1)])
    layers = ms.assign(share=share, uniform=r["uniform"], entropy=r["entropy"], entropy_excl=r["entropy_excl"],
                       max_token=[r["tokens"][p] for p in ms.max_pos])
    return {"model": realmodels.MODELS[key].name, "tokens": r["tokens"], "layers": layers, "maps": r["maps"],
            "first_massive_block": r["first_massive_block"], "first_sink_layer": r["first_sink_layer"],
            "valley": valley_depth(r["entropy"]), "valley_excl": valley_depth(r["entropy_excl"])}
