"""Gated attention: every bounded call the page and the command line make (comparisons, sweeps, views).

* **the sink** (``SINK_CFG``: 2 layers x 2 heads, T = 128, per-head QK-norm as Qwen3, learned positions, lr
  2e-2, 400 steps): all seven variants of paper Table 4 trained on the same batches; F-Attn, the sink rate of
  Gu et al., the gate scores, the loss against the realised Bayes cross-entropy of the same tokens;
* **massive activations** (``MACT_CFG``, the configuration the search in ``notebook`` picked): baseline, G1
  elementwise and the head-shared G1 control at 4 heads; per layer the largest |h| of the residual stream,
  its ratio to the median |h|, where it sits and the first token's largest |h| (Sun et al. 2024).
"""
from __future__ import annotations

from dataclasses import asdict, replace

import numpy as np
import pandas as pd
import torch

from toymodels import store
from toymodels.device import get_device
from toymodels.topic import InputError, Progress, as_progress, bounded

from .config import (
    ALL_VARIANTS,
    HIST_BINS,
    HSD_PILOT_SEED,
    HSD_PILOTS,
    KNOBS,
    MACT_CFG,
    MACT_VARIANTS,
    SEARCH_CONFIGS,
    SEED_SWEEP_WORK,
    SINK_CFG,
    VARIANTS,
    Config,
    _live_budget,
    _work,
    check_budget,
    check_structure,
    hsd_config,
    search_config,
)
from .data import make_data
from .model import GatedLM
from .training import measure, train


def _dev_key(device) -> str | None:
    """A device as a plain string, so it can be part of a cache key."""
    return None if device is None else str(get_device(device))




def _top_layer(f: dict, e: int = 0) -> int:
    """The layer whose largest |h| is the most massive relative to its median."""
    return int(np.argmax(f["mact_ratio"][e]))


def _bos_ratios(f: dict, e: int = 0) -> np.ndarray:
    """Per layer, the first token's (<s>) largest |h| over its layer's median |h|: where a sink token's massive
    activation shows even when a larger ratio sits elsewhere (Sun et al. find them on the first token)."""
    return f["mact_first"][e] / np.maximum(f["mact_median"][e], 1e-30)


def _summary(variant: str, res: dict, e: int = 0) -> dict:
    f = res["final"]
    top = _top_layer(f, e)
    tok = int(f["mact_token"][e, top])
    kind = "<s>" if int(f["mact_pos"][e, top]) == 0 else ("delimiter" if tok == res["delimiter_token"] else "other")
    bos = _bos_ratios(f, e)
    return {"variant": variant, "label": VARIANTS[variant],
            "fattn": float(f["fattn"][e].mean()), "floor": res["floor"],
            "sink_rate": float(100 * f["sink"][e].mean()),
            "mact": float(f["mact"][e].mean()),
            "mact_ratio": float(f["mact_ratio"][e, top]), "mact_layer": top + 1,
            "mact_pos": int(f["mact_pos"][e, top]), "mact_kind": kind,
            "mact_max": float(f["mact"][e, top]), "mact_median": float(f["mact_median"][e, top]),
            "first_token_max": float(f["mact_first"][e].max()),
            "bos_ratio": float(bos.max()), "bos_layer": int(bos.argmax()) + 1,
            "gate_mean": float(f["gate_mean"][e].mean()) if "gate_mean" in f else None,
            "val_loss": float(f["loss"][e]), "bayes_ce": res["bayes_ce"],
            "excess_loss": float(f["loss"][e]) - res["bayes_ce"],
            "val_loss_2x": float(res["long"]["loss"][e]), "fattn_2x": float(res["long"]["fattn"][e].mean()),
            "diverged": bool(res["diverged"][e]), "train_seconds": res["seconds"]}


def _compare(cfg: Config, variants: list[str], device=None, progress: Progress | None = None) -> dict:
    variants = list(dict.fromkeys(variants))
    if not variants:
        raise InputError("pick at least one variant")
    p = as_progress(progress)
    summ, layers, curves, hist, maps = [], [], [], [], {}
    res = None
    for i, v in enumerate(variants):
        # each variant's run is cached on its own, so a second comparison reuses the baseline
        res = store.cached(train, replace(cfg, variant=v), device=_dev_key(device),
                           progress=p.part(i, len(variants), f"{VARIANTS[v]}: "))
        summ.append(_summary(v, res))
        f = res["final"]
        for l in range(cfg.n_layers):
            layers.append({"variant": v, "layer": l + 1, "fattn": float(f["fattn"][0, l].mean()),
                           "sink_rate": float(100 * f["sink"][0, l].mean()), "mact": float(f["mact"][0, l]),
                           "mact_median": float(f["mact_median"][0, l]), "mact_ratio": float(f["mact_ratio"][0, l]),
                           "mact_pos": int(f["mact_pos"][0, l]), "mact_token": int(f["mact_token"][0, l]),
                           "mact_dim": int(f["mact_dim"][0, l]), "first_token_max": float(f["mact_first"][0, l]),
                           "bos_ratio": float(_bos_ratios(f)[l]),
                           "gate_mean": float(f["gate_mean"][0, l]) if "gate_mean" in f else None})
            if "gate_hist" in f:
                h = f["gate_hist"][0, l]
                for b in range(HIST_BINS):
                    hist.append({"variant": v, "layer": l + 1, "bin_lo": b / HIST_BINS,
                                 "bin_hi": (b + 1) / HIST_BINS, "share": float(h[b] / h.sum())})
        c = res["curves"].drop(columns=["instance", "lr"])
        c.insert(0, "variant", v)
        curves.append(c)
        maps[v] = res["sample_attn"][0]
    tokens = res["sample_tokens"]
    trig = np.isin(tokens, res["triggers"])
    return {"config": asdict(cfg), "summary": pd.DataFrame(summ), "layers": pd.DataFrame(layers),
            "curves": pd.concat(curves, ignore_index=True),
            "hist": pd.DataFrame(hist, columns=["variant", "layer", "bin_lo", "bin_hi", "share"]),
            "tokens": tokens, "trigger_positions": np.flatnonzero(trig), "maps": maps,
            "needed_key": make_data(cfg).needed_key(tokens[None])[0],
            "floor": res["floor"], "bayes_ce": res["bayes_ce"], "delimiter_token": res["delimiter_token"]}


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs("variants", group="run"), _budget=_live_budget)
def compare(cfg: Config, variants: list[str], device=None, progress: Progress | None = None) -> dict:
    """Train each variant (same seed, same data) and gather everything the page draws.

    Returns ``summary`` (one row per variant), ``layers`` (variant x layer: F-Attn, sink rate, massive-activation
    statistics, gate mean), ``curves``, ``hist`` (variant x layer x bin), the sample sequence, its attention maps
    ``maps[variant]`` (L, H, T, T), the trigger positions and the realised Bayes cross-entropy ``bayes_ce`` of
    the validation tokens. One training must fit the compute budget of a live run.
    """
    return _compare(cfg, variants, device, progress)


def _sweep_budget(cfg, lrs, variants=("baseline", "g1_elementwise"), **_) -> None:
    check_structure(cfg)
    n = max(1, len(set(map(float, lrs))))
    check_budget(cfg, factor=n / 1.5, instances=n)


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs("lrs", "variants", group="run"), _budget=_sweep_budget)
def lr_sweep(cfg: Config, lrs: list[float], variants: list[str] = ("baseline", "g1_elementwise"),
             device=None, progress: Progress | None = None) -> pd.DataFrame:
    """For each variant, train one batched model whose instances use the learning rates ``lrs``."""
    lrs = sorted({float(x) for x in lrs})
    p = as_progress(progress)
    rows = []
    for i, v in enumerate(variants):
        res = store.cached(train, replace(cfg, variant=v), lrs=lrs, device=_dev_key(device),
                           progress=p.part(i, len(variants), f"{VARIANTS[v]}: "))
        for e, lr in enumerate(lrs):
            rows.append({"lr": lr, **_summary(v, res, e)})
    return pd.DataFrame(rows)


def n_params(model: GatedLM) -> int:
    """Parameters of one instance."""
    return int(sum(p[0].numel() for p in model.params.values()))


@bounded(cfg=KNOBS.fields(Config), _budget=lambda cfg, **_: check_structure(cfg))
def layer_demo(cfg: Config, device=None) -> pd.DataFrame:
    """Each variant at initialisation: where the gate sits, its shape, parameters added and gate mean (≈ 0.5).

    Untrained and cheap (one forward pass on 4 sequences); the page's table of variants.
    """
    dev = get_device(device)
    data = make_data(cfg)
    x = torch.as_tensor(data.sample(4, cfg.seq_len + 1, np.random.default_rng([cfg.data_seed, 7])), device=dev)
    H, dh = cfg.n_heads, cfg.head_dim
    where = {"baseline": ("—", "—", "—"),
             "g1_elementwise": ("after SDPA", f"(T, H={H}, d_h={dh})", "q_proj: d→2·H·d_h"),
             "g1_headwise": ("after SDPA", f"(T, H={H}, 1)", "q_proj: d→H·d_h+H"),
             "g1_headshared": ("after SDPA", f"(T, 1, d_h={dh}) shared", "q_proj: d→2·H·d_h, mean over heads"),
             "g2_elementwise": ("after v_proj", f"(T, H={H}, d_h={dh})", "v_proj: d→2·H·d_h"),
             "g1_input_independent": ("after SDPA", f"(H={H}, d_h={dh}), no X", "θ ∈ R^{H×d_h}, zero init"),
             "g1_ns_sigmoid": ("after SDPA", f"(T, H={H}, d_h={dh}) in [0.5, 1]", "q_proj: d→2·H·d_h")}
    base = n_params(GatedLM(replace(cfg, variant="baseline"), 1, dev))
    rows = []
    for v in VARIANTS:
        m = GatedLM(replace(cfg, variant=v), 1, dev)
        r = measure(m, x)
        rows.append({"variant": v, "label": VARIANTS[v], "position": where[v][0], "gate_shape": where[v][1],
                     "projection": where[v][2], "params_added": n_params(m) - base,
                     "params_added_per_layer": (n_params(m) - base) // cfg.n_layers,
                     "gate_mean_init": float(r["gate_mean"].mean()) if "gate_mean" in r else None,
                     "loss_init": float(r["loss"][0])})
    return pd.DataFrame(rows)


def _midway_budget(cfg, switch, **_) -> None:
    check_structure(cfg)
    check_budget(cfg)
    if not 1 <= int(switch) < cfg.steps:
        raise InputError(f"the gate must be added between step 1 and step {cfg.steps - 1}, got {switch}")


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs("switch", group="run"), _budget=_midway_budget)
def gate_midway(cfg: Config, switch: int, device=None, progress: Progress | None = None) -> dict:
    """Train ungated until step ``switch``, then add the gate ``cfg.variant`` and continue (paper App. A.7).

    Compare its curves with ``compare(cfg, ["baseline", cfg.variant])``: same seed, same batches.
    """
    res = store.cached(train, cfg, device=_dev_key(device), progress=progress, gate_from_step=int(switch))
    return {"curves": res["curves"].drop(columns=["instance", "lr"]), "summary": _summary(cfg.variant, res),
            "switch": int(switch)}


# --------------------------------------------------------------------------- the search for massive activations


def search(names: list[str] | None = None, device=None, progress: Progress | None = None) -> pd.DataFrame:
    """Rerun search configurations (baseline and G1 elementwise each): the rows of ``MACT_SEARCH``."""
    names = list(SEARCH_CONFIGS) if not names else list(names)
    p = as_progress(progress)
    rows = []
    for i, name in enumerate(names):
        cfg = search_config(name)
        r = _compare(cfg, ["baseline", "g1_elementwise"], device, p.part(i, len(names), f"{name}: "))
        s = r["summary"].set_index("variant")
        b, g = s.loc["baseline"], s.loc["g1_elementwise"]
        rows.append({"config": name, "what": SEARCH_CONFIGS[name][1], "seed": cfg.seed,
                     "ratio_baseline": round(float(b.mact_ratio), 1),
                     "where_baseline": f"{b.mact_kind} (layer {b.mact_layer}, pos {b.mact_pos})",
                     "ratio_g1": round(float(g.mact_ratio), 1),
                     "where_g1": f"{g.mact_kind} (layer {g.mact_layer}, pos {g.mact_pos})",
                     "bos_ratio_baseline": round(float(b.bos_ratio), 1), "bos_ratio_g1": round(float(g.bos_ratio), 1),
                     "first_max_baseline": round(float(b.first_token_max), 2),
                     "first_max_g1": round(float(g.first_token_max), 2),
                     "fattn_baseline": round(float(b.fattn), 3), "fattn_g1": round(float(g.fattn), 3),
                     "val_loss_baseline": round(float(b.val_loss), 3), "val_loss_g1": round(float(g.val_loss), 3),
                     "bayes_ce": round(float(r["bayes_ce"]), 3),
                     "cpu_seconds": None, "wall_seconds": round(float(b.train_seconds + g.train_seconds))})
    return pd.DataFrame(rows)



def reproduction(sink_cfg: Config = SINK_CFG, mact_cfg: Config = MACT_CFG,
                 progress: Progress | None = None) -> dict:
    """The headline: all seven variants on the sink configuration, and baseline / G1 elementwise / head-shared
    G1 (4 heads) on the massive-activation configuration."""
    p = as_progress(progress)
    sink = _compare(sink_cfg, ALL_VARIANTS, progress=p.sub(0.0, 0.45, "sink: "))
    mact = _compare(mact_cfg, MACT_VARIANTS, progress=p.sub(0.45, 1.0, "massive activations: "))
    return {"sink": sink, "mact": mact}


# --------------------------------------------------------------------------- over seeds


def _seeds_budget(cfg, variants, seeds, **_) -> None:
    check_structure(cfg)
    n = len(set(variants)) * len(set(seeds))
    if _work(cfg) * n > SEED_SWEEP_WORK:
        raise InputError(f"{n} trainings of this configuration are {_work(cfg) * n / SEED_SWEEP_WORK:.1f}× over the "
                         "budget of a seed sweep (a precomputed view, not a live run): fewer seeds or variants")


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs("variants", "seeds", group="run"), _budget=_seeds_budget)
def seed_sweep(cfg: Config, variants: list[str], seeds: list[int], device=None,
               progress: Progress | None = None) -> dict:
    """Train each variant with each seed (the model's init and its batches; the task, set by ``data_seed``, is the
    same) and gather what the claims read, one row per variant and seed.

    Returns ``summary`` (variant, seed: F-Attn, the uniform floor, gate mean, val loss and the realised Bayes CE,
    the massive-activation statistics of ``_summary``), ``layers`` (variant, seed, layer: F-Attn, max |h|, its
    ratio to the median, the first token's largest |h| and its ratio) and ``first``: the full comparison of the
    first seed (attention maps, curves, gate histograms) for the page. A precomputed view: its budget
    (``SEED_SWEEP_WORK``) is far above a live run's.
    """
    seeds = [int(x) for x in dict.fromkeys(seeds)]
    p = as_progress(progress)
    summ, layers, first = [], [], None
    for i, seed in enumerate(seeds):
        r = _compare(replace(cfg, seed=seed), variants, device, p.part(i, len(seeds), f"seed {seed}: "))
        summ.append(r["summary"].assign(seed=seed))
        layers.append(r["layers"].assign(seed=seed))
        if first is None:
            first = {k: r[k] for k in ("summary", "layers", "curves", "hist", "tokens", "trigger_positions", "maps",
                                       "needed_key", "floor", "bayes_ce", "delimiter_token")}
    return {"config": asdict(cfg), "seeds": seeds, "variants": list(dict.fromkeys(variants)),
            "summary": pd.concat(summ, ignore_index=True), "layers": pd.concat(layers, ignore_index=True),
            "floor": first["floor"], "first": first}


def hsd_pilot(names: list[str] | None = None, seeds: list[int] | None = None, device=None,
              progress: Progress | None = None) -> pd.DataFrame:
    """Train the baseline of each head-specific-dormancy candidate once per seed (default: the first pilot,
    every candidate with ``HSD_PILOT_SEED``): the rows ``notebook.hsd_pick`` / ``hsd_pick2`` choose from
    (``python -m toymodels gated-attention pilot [NAME ...]``)."""
    names = list(HSD_PILOTS) if not names else list(names)
    seeds = [HSD_PILOT_SEED] if not seeds else [int(x) for x in seeds]
    p = as_progress(progress)
    rows = []
    runs = [(name, seed) for name in names for seed in seeds]
    for i, (name, seed) in enumerate(runs):
        cfg = replace(hsd_config(name), seed=seed)
        res = store.cached(train, cfg, device=_dev_key(device), progress=p.part(i, len(runs), f"{name}: "))
        s = _summary("baseline", res)
        rows.append({"config": name, "seed": seed, "what": HSD_PILOTS[name][1], "val_loss": round(s["val_loss"], 4),
                     "bayes_ce": round(s["bayes_ce"], 4), "excess_loss": round(s["excess_loss"], 4),
                     "fattn": round(s["fattn"], 4), "floor": round(s["floor"], 4),
                     "fattn_layers": [round(float(x), 4) for x in res["final"]["fattn"][0].mean(-1)],
                     "wall_seconds": round(s["train_seconds"], 1)})
    return pd.DataFrame(rows)
