"""Every bounded call the page and the command line make: one run, the page's live comparison of depths, the
registered many-seed study, and the real model. Results are plain bundles (arrays, lists, numbers); judgements
live in ``analysis``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import platform
import time
from pathlib import Path

import numpy as np
import torch

from toymodels.device import get_device
from toymodels.errors import InputError
from toymodels.topic import as_progress, bounded

from . import circuits as C
from . import lmc as LMC
from . import realmodel
from .config import (
    KNOBS,
    MAX_STUDY_SECONDS,
    Config,
    LiveConfig,
    StudyConfig,
    check_budget,
    expected_seconds,
)
from .model import forward, to_numpy, to_torch
from .training import held_out, measure, train

DEFAULT = Config()
DEFAULT_LIVE = LiveConfig()
#: the registered study: 20 fresh seeds (100-119) per arm, held-out measurements every 10 steps
STUDY = StudyConfig(run=Config(eval_every=10))
PREV_MIN = 0.3          # a layer-1 head with a previous-token score at least this is a previous-token head
#: the residual-stream operations of the symmetry test, and the rotation and gain seeds (fixed before the run)
SYMMETRY_OPS = ("none", "rms", "tanh", "rms_gain")
ROTATION_SEED = 2025
GAIN_SEED = 2026


def _meta(device) -> dict:
    """What a bundle records of where and with what it was computed."""
    dev = get_device(device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or platform.machine()
    src = Path(__file__).resolve().parent
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in sorted(src.glob("*.py"))}
    return {"device": f"{dev.type} ({name})", "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "threads": torch.get_num_threads(), "sources": files}


def _budget(cfg: Config, device=None, progress=None) -> None:
    check_budget(cfg)


def _instance_view(res: dict, cfg: Config, e: int = 0) -> dict:
    """One trained instance, as the page draws it: weights, per-head scores, circuits."""
    p = C.instance(res["params"], e)
    out = {"params": {k: v[e] for k, v in res["params"].items()}}
    if cfg.n_layers:
        out["copying"] = C.copying_scores(p)
        out["heads"] = C.head_table(p, res["induction"][e, -1], res["prev_token"][e, -1])
    if cfg.n_layers == 2:
        out["composition"] = C.composition_scores(p)
    return out


@torch.no_grad()
def _sample_attention(params: dict, cfg: Config, device, n: int = 4) -> dict:
    """Attention maps of the first ``n`` held-out sequences (float16), for the page's picture."""
    ho = held_out(cfg, device, n=max(n, 16))
    tok = ho.tokens[:n]
    _, attns = forward(to_torch(params, device), tok, cfg.d_head, want_attn=True)
    maps = np.stack([a[0].cpu().numpy() for a in attns], 1) if attns else np.zeros((n, 0, cfg.n_heads, 1, 1))
    return {"tokens": ho.batch.tokens[:n], "period": ho.batch.period[:n], "attn": maps.astype(np.float16)}


@bounded(cfg=KNOBS.fields(Config), _budget=_budget)
def run(cfg: Config = DEFAULT, device=None, progress=None) -> dict:
    """One seed: the training curves (held-out copy loss, induction and previous-token score per head), the final
    per-head table, the circuits' scores and the trained weights, and the attention maps of four held-out
    sequences."""
    res = train(cfg, [cfg.seed], device, progress)
    dev = get_device(device)
    inst = {k: v[:1] for k, v in res["params"].items()}
    out = {"config": dataclasses.asdict(cfg), "eval_step": res["eval_step"], "eval_loss": res["eval_loss"][0],
           "induction": res["induction"][0], "prev_token": res["prev_token"][0],
           "train_loss": res["train_loss"][0], "seconds": res["seconds"], **_instance_view(res, cfg),
           "sample": _sample_attention(inst, cfg, dev), "meta": _meta(device)}
    return out


def _live_budget(live: LiveConfig, device=None, progress=None) -> None:
    for n in live.layers:
        if n not in (0, 1, 2):
            raise InputError(f"layers must be 0, 1 or 2; got {n!r}")
    secs = sum(expected_seconds(live.config(n)) for n in live.layers)
    if secs > 90:
        raise InputError(f"this comparison would take about {secs:.0f} s (limit 90 s): fewer steps")


@bounded(live=KNOBS.fields(LiveConfig, group="live"), _budget=_live_budget)
def compare_depths(live: LiveConfig = DEFAULT_LIVE, device=None, progress=None) -> dict:
    """The page's live run: the same data and seed for 0, 1 and 2 layers (``live.layers``); per depth the held-out
    copy-loss curve and the scores of ``run``."""
    prog = as_progress(progress)
    out = {"config": dataclasses.asdict(live), "runs": {}}
    for i, n in enumerate(live.layers):
        out["runs"][str(n)] = run.__wrapped__(live.config(n), device, prog.part(i, len(live.layers)))
    return out


# --------------------------------------------------------------------------- the registered study


def _study_budget(cfg: StudyConfig, device=None, progress=None) -> None:
    secs = sum(expected_seconds(dataclasses.replace(cfg.run, n_layers=n, period_mode=m), cfg.n_seeds)
               for n, m in cfg.arms)
    if secs > MAX_STUDY_SECONDS:
        raise InputError(f"this study would take about {secs:.0f} s on one CPU thread (limit {MAX_STUDY_SECONDS:.0f})")
    if cfg.lmc_pairs * 2 > cfg.n_seeds:
        raise InputError("lmc_pairs needs two seeds per pair")


@torch.no_grad()
def knockouts(params: dict, cfg: Config, prev: np.ndarray, device) -> dict:
    """Per instance of a 2-layer model: the held-out copy loss with the layer-1 previous-token heads (score >=
    ``PREV_MIN``) zeroed, and with the layer-1 head of the lowest previous-token score zeroed instead (the
    control). NaN where the model has no previous-token head."""
    ho = held_out(cfg, device)
    E = params["W_E"].shape[0]
    prev_ko, other_ko, n_prev = np.full(E, np.nan), np.full(E, np.nan), np.zeros(E, int)
    for e in range(E):
        pe = to_torch({k: v[e:e + 1] for k, v in params.items()}, device)
        heads = [int(h) for h in np.flatnonzero(prev[e, 0] >= PREV_MIN)]
        n_prev[e] = len(heads)
        if heads:
            prev_ko[e] = measure(pe, cfg, ho, knockout=tuple((0, h) for h in heads))["loss"][0]
        other_ko[e] = measure(pe, cfg, ho, knockout=((0, int(np.argmin(prev[e, 0]))),))["loss"][0]
    return {"prev_heads_knocked": prev_ko, "other_head_knocked": other_ko, "n_prev_heads": n_prev}


@torch.no_grad()
def symmetry(params: dict, cfg: Config) -> dict:
    """The no-privileged-basis test (float64, CPU): per instance, the largest change of any held-out logit when the
    residual stream is rotated by a Haar-random orthogonal R (``ROTATION_SEED`` + instance), for the model as
    trained ("none") and with an elementwise operation put on the residual stream (``model.RESID_OPS``): "rms"
    (x / rms(x), rotation-invariant), "tanh" and "rms_gain" (a LayerNorm-style gain g ⊙ x / rms(x), g = 1 + 0.5 z,
    z ~ N(0, 1), ``GAIN_SEED``). Also the largest |logit| (the scale of the changes)."""
    ho = held_out(cfg, "cpu")
    E, d = params["W_E"].shape[0], params["W_E"].shape[-1]
    Rs = [C.random_orthogonal(d, ROTATION_SEED + e) for e in range(E)]
    rotated = {k: np.stack([C.rotate({k: v[e]}, Rs[e])[k] for e in range(E)]) for k, v in params.items()}
    base, rot = to_torch(params, "cpu", torch.float64), to_torch(rotated, "cpu", torch.float64)
    gain = torch.as_tensor(1 + 0.5 * np.random.default_rng(GAIN_SEED).standard_normal(d))
    out = {}
    for op in SYMMETRY_OPS:
        a = forward(base, ho.tokens, cfg.d_head, resid_op=op, gain=gain)
        b = forward(rot, ho.tokens, cfg.d_head, resid_op=op, gain=gain)
        out[op] = (a - b).abs().amax((1, 2, 3)).numpy()
        out[f"{op}_scale"] = a.abs().amax((1, 2, 3)).numpy()
    out["orthogonality_error"] = np.array([np.abs(R.T @ R - np.eye(d)).max() for R in Rs])
    return out


@torch.no_grad()
def lmc_pairs(params: dict, cfg: Config, pairs: int, device) -> dict:
    """Theus et al.'s comparison on ``pairs`` disjoint pairs of instances (0, 1), (2, 3), ...: the held-out loss
    along the straight line between the two models for each arm of ``lmc.ARMS`` and its barrier."""
    ho = held_out(cfg, device)
    losses = np.zeros((pairs, len(LMC.ARMS), len(LMC.LAMBDAS)))
    for k in range(pairs):
        pA, pB = C.instance(params, 2 * k), C.instance(params, 2 * k + 1)
        for a, arm in enumerate(LMC.ARMS):
            batch = to_torch(LMC.stack(LMC.path(pA, pB, arm)), device)
            losses[k, a] = measure(batch, cfg, ho)["loss"]
    barriers = np.array([[LMC.barrier(losses[k, a])[0] for a in range(len(LMC.ARMS))] for k in range(pairs)])
    return {"arms": list(LMC.ARMS), "lambdas": list(LMC.LAMBDAS), "losses": losses, "barrier": barriers}


def _arm_name(n_layers: int, mode: str) -> str:
    return f"L{n_layers}{mode[0]}"


@bounded(cfg=KNOBS.fields(StudyConfig, group="study", run=KNOBS.fields(Config)), _budget=_study_budget)
def study(cfg: StudyConfig = STUDY, device=None, progress=None) -> dict:
    """The registered study. Per arm (``L<layers><v|f>``): the seeds, the held-out curves (copy loss, induction and
    previous-token scores per head, every ``eval_every`` steps), the training loss (mean of every 10 steps), the
    final copy loss on the other period mode's held-out set, the copying scores and (2 layers) the composition
    scores and knock-outs per seed, and the weights of the first ``keep_weights`` seeds. Then, on the 2-layer
    variable-period arm, the symmetry test and the linear-interpolation barriers; the random baseline of the
    K-composition score; and where and with what it ran (``meta``)."""
    prog = as_progress(progress)
    dev = get_device(device)
    seeds = list(range(cfg.first_seed, cfg.first_seed + cfg.n_seeds))
    t0 = time.perf_counter()
    arms, timings = {}, {}
    for i, (n, mode) in enumerate(cfg.arms):
        c = dataclasses.replace(cfg.run, n_layers=n, period_mode=mode)
        name = _arm_name(n, mode)
        res = train(c, seeds, dev, prog.sub(i / (len(cfg.arms) + 1), (i + 1) / (len(cfg.arms) + 1), f"{name}: "))
        timings[name] = res["seconds"]
        P = res["params"]
        other = "fixed" if mode == "variable" else "variable"
        cross = measure(to_torch(P, dev), c, held_out(c, dev, other))["loss"]
        tl = res["train_loss"]
        arm = {"seeds": seeds, "eval_step": res["eval_step"], "eval_loss": res["eval_loss"],
               "induction": res["induction"].astype(np.float32), "prev_token": res["prev_token"].astype(np.float32),
               "train_loss": tl[:, : tl.shape[1] // 10 * 10].reshape(len(seeds), -1, 10).mean(-1),
               "cross_loss": cross, "params_kept": {k: v[:cfg.keep_weights] for k, v in P.items()}}
        if n:
            arm["copying"] = np.stack([C.copying_scores(C.instance(P, e)) for e in range(len(seeds))])
        if n == 2:
            comp = [C.composition_scores(C.instance(P, e)) for e in range(len(seeds))]
            arm["composition"] = {k: np.stack([x[k] for x in comp]) for k in ("K", "Q", "V")}
            arm["knockout"] = knockouts(P, c, res["prev_token"][:, -1], dev)
        if (n, mode) == (2, "variable"):
            prog((i + 1) / (len(cfg.arms) + 1), "symmetry and interpolation")
            arm["symmetry"] = symmetry(P, c)
            arm["lmc"] = lmc_pairs(P, c, cfg.lmc_pairs, dev)
        arms[name] = arm
    baseline = C.composition_baseline(cfg.run.d_model, cfg.run.d_head)
    prog(1.0, "done")
    return {"config": dataclasses.asdict(cfg), "arms": arms, "k_baseline": baseline,
            "seconds": {**timings, "total": time.perf_counter() - t0}, "meta": _meta(dev)}


@bounded(**KNOBS.specs("n_seq", "block", "seed", group="real"))
def real_model(n_seq: int = 32, block: int = 50, seed: int = 1, progress=None) -> dict:
    """SmolLM2-135M's prefix-matching and copying scores per head (``realmodel.run``); loads the model through the
    shared loader (about 20 s and 700 MB the first time in a process)."""
    return realmodel.run(n_seq, block, seed, progress)


def copy_params(params: dict) -> dict:
    """A plain numpy copy of (possibly read-only) weights."""
    return {k: np.array(v) for k, v in params.items()}


__all__ = ["run", "compare_depths", "study", "real_model", "knockouts", "symmetry", "lmc_pairs", "to_numpy"]
