"""Every bounded call the page and the command line make: one RFM run (with its controls) and the same run over
many seeds. Results are plain bundles (lists, arrays), raw per iteration: judgements live in ``analysis``.

Bookkeeping follows the official ``train_kernel.py``: iteration t solves the kernel regression with the metric
M_t (M_0 = I), reports its train and test accuracy and MSE, then computes the AGOP of that predictor, which becomes
M_{t+1}. The circulant deviation and the snapshot of iteration t are of that M_{t+1}: the features the predictor at
iteration t has learned (the official code logs the updated M at step t as well).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from toymodels.errors import InputError
from toymodels.topic import as_progress, bounded

from . import rfm
from .config import (
    KNOBS,
    MAX_BYTES,
    MAX_SECONDS,
    SWEEPS,
    Config,
    SeedsConfig,
    check_budget,
    expected_bytes,
    expected_seconds,
)

DEFAULT = Config()
DEFAULT_STUDY = SeedsConfig()
SWEEP_DEFAULT = Config(p=31)
MAX_STUDY_SECONDS = 900.0  # the many-seed study is a precompute (the page shows it shipped, never runs it live)


def _budget(cfg: Config, progress=None) -> None:
    check_budget(cfg)


def _data(cfg: Config) -> dict:
    s = rfm.split(cfg.p, cfg.op, cfg.train_frac, cfg.seed)
    return {"X": rfm.one_hot_inputs(s["train_pairs"], cfg.p), "Y": rfm.one_hot_targets(s["train_labels"], cfg.p),
            "Xt": rfm.one_hot_inputs(s["test_pairs"], cfg.p), "Yt": rfm.one_hot_targets(s["test_labels"], cfg.p),
            "pairs": s["train_pairs"]}


def _fit_and_score(data: dict, M: np.ndarray, cfg: Config) -> dict:
    """Solve the kernel regression with metric M; train and test accuracy and MSE."""
    K = rfm.gaussian_kernel(data["X"], data["X"], M, cfg.bandwidth)
    A = rfm.solve(K, data["Y"], cfg.ridge)
    train_acc, train_mse = rfm.evaluate(K, A, data["Y"])
    test_acc, test_mse = rfm.evaluate(rfm.gaussian_kernel(data["Xt"], data["X"], M, cfg.bandwidth), A, data["Yt"])
    return {"K": K, "A": A, "train_acc": train_acc, "train_mse": train_mse, "test_acc": test_acc,
            "test_mse": test_mse}


def _control_metric(cfg: Config) -> np.ndarray:
    if cfg.control == "random_circulant":
        return rfm.random_circulant_metric(cfg.p, cfg.op, cfg.seed)
    return np.eye(2 * cfg.p)


@bounded(cfg=KNOBS.fields(Config), _budget=_budget)
def run(cfg: Config = DEFAULT, progress=None) -> dict:
    """RFM on (x ∘ y) mod p (or a control), iteration by iteration.

    Returns ``config``; per iteration ``iteration``, ``train_acc``, ``train_mse``, ``test_acc``, ``test_mse``,
    ``circulant_deviation`` (D of the off-diagonal block of the metric the iteration's AGOP gives) and ``agop_trace``;
    ``M`` (iterations, 2p, 2p) float32 snapshots of those metrics; and ``random_circulant_test_acc`` /
    ``identity_test_acc``: the two controls on the same split (one solve each, no learning). A control run
    (``cfg.control`` not ``"rfm"``) keeps its metric fixed: one iteration, its snapshot that metric."""
    prog = as_progress(progress)
    data = _data(cfg)
    keys = ("train_acc", "train_mse", "test_acc", "test_mse", "circulant_deviation", "agop_trace")
    out = {k: [] for k in keys}
    snapshots = []
    learn = cfg.control == "rfm"
    M = np.eye(2 * cfg.p) if learn else _control_metric(cfg)
    iters = cfg.iters if learn else 1
    for t in range(iters):
        fit = _fit_and_score(data, M, cfg)
        for k in ("train_acc", "train_mse", "test_acc", "test_mse"):
            out[k].append(fit[k])
        if learn:
            G = rfm.agop(data["X"], fit["A"], M, cfg.bandwidth, K=fit["K"], pairs=data["pairs"], p=cfg.p)
            M = rfm.matrix_power(G, cfg.power)
            out["agop_trace"].append(float(np.trace(G)))
        else:
            out["agop_trace"].append(float("nan"))
        out["circulant_deviation"].append(rfm.circulant_deviation(M, cfg.op))
        snapshots.append(M.astype(np.float32))
        prog((t + 1) / (iters + 2), f"iteration {t + 1} of {iters}: test accuracy {fit['test_acc']:.3f}")
    controls = {}
    for name in ("random_circulant", "identity"):
        ctrl = dataclasses.replace(cfg, control=name)
        controls[f"{name}_test_acc"] = _fit_and_score(data, _control_metric(ctrl), ctrl)["test_acc"]
    prog(1.0, "controls done")
    return {"config": dataclasses.asdict(cfg), "iteration": list(range(iters)), **out, "M": np.stack(snapshots),
            **controls}


def _study_budget(cfg: SeedsConfig, progress=None) -> None:
    if cfg.run.control != "rfm":
        raise InputError("the many-seed study runs RFM (its controls are evaluated on every split)")
    secs = expected_seconds(cfg.run, cfg.n_seeds)
    if secs > MAX_STUDY_SECONDS or expected_bytes(cfg.run) > MAX_BYTES:
        raise InputError(f"this study would take about {secs:.0f} s (limit {MAX_STUDY_SECONDS:.0f} s): lower p, the "
                         "iterations or the seeds")


@bounded(cfg=KNOBS.fields(SeedsConfig, group="study", run=KNOBS.fields(Config)), _budget=_study_budget)
def run_seeds(cfg: SeedsConfig = DEFAULT_STUDY, progress=None) -> dict:
    """``run`` over ``cfg.n_seeds`` splits: per-seed, per-iteration arrays (seeds × iterations) of ``train_acc``,
    ``test_acc``, ``test_mse`` and ``circulant_deviation``; per seed ``random_circulant_test_acc`` and
    ``identity_test_acc``; ``seeds``; ``config``. No metric snapshots (they would be seeds × iterations × 4p²)."""
    prog = as_progress(progress)
    seeds = [cfg.first_seed + i for i in range(cfg.n_seeds)]
    rows = []
    for i, seed in enumerate(seeds):
        res = run.__wrapped__(dataclasses.replace(cfg.run, seed=seed), progress=prog.part(i, len(seeds),
                                                                                         f"seed {seed}: "))
        rows.append(res)
    arrays = {k: np.array([r[k] for r in rows]) for k in ("train_acc", "test_acc", "test_mse", "circulant_deviation")}
    controls = {k: [r[k] for r in rows] for k in ("random_circulant_test_acc", "identity_test_acc")}
    return {"config": dataclasses.asdict(cfg), "seeds": seeds, **arrays, **controls}



def _sweep_budget(cfg: Config, param: str, values, progress=None) -> None:
    if param not in SWEEPS:
        raise InputError(f"param must be one of {', '.join(SWEEPS)}; got {param!r}")
    for v in values:
        KNOBS.specs(param)[param].check(param, v)
    if cfg.control != "rfm":
        raise InputError("a sweep runs RFM (set the metric to RFM)")
    secs = sum(expected_seconds(dataclasses.replace(cfg, **{param: v})) for v in values)
    if secs > MAX_SECONDS:
        raise InputError(f"this sweep would take about {secs:.0f} s (limit {MAX_SECONDS:.0f} s): fewer values, a "
                         "smaller p or fewer iterations")


@bounded(cfg=KNOBS.fields(Config), **KNOBS.specs("param", "values", group="sweep"), _budget=_sweep_budget)
def sweep(cfg: Config = SWEEP_DEFAULT, param: str = "train_frac", values=SWEEPS["train_frac"], progress=None) -> dict:
    """``run`` once per value of ``param`` (the rest of ``cfg`` fixed): per value, the per-iteration curves (no
    metric snapshots) and both controls. Returns ``param``, ``values``, ``runs`` (one dict per value), ``config``."""
    prog = as_progress(progress)
    runs = []
    for i, v in enumerate(values):
        res = run.__wrapped__(dataclasses.replace(cfg, **{param: v}),
                              progress=prog.part(i, len(values), f"{param} = {v:g}: "))
        res.pop("M")
        runs.append(res)
    return {"param": param, "values": [float(v) for v in values], "runs": runs, "config": dataclasses.asdict(cfg)}
