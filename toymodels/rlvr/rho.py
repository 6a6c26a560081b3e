"""The capacity-share (ρ) toy's experiments (issue 16), kept as a labelled contrast to the typed toy: the
default run, sweeps of one knob, the ρ grid that chose ρ = 0.65, and the example evaluation file."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd

from toymodels.topic import InputError, as_progress, bounded

from .config import (
    KNOBS,
    MAX_SWEEP,
    REGIME,
    RHO_GRID,
    RHO_SEEDS,
    RHO_STEPS,
    SWEEPABLE,
    ToyConfig,
    _check_config,
)
from .measure import _ckpts, _curves_for, _summary, _weighted_median, rl_label
from .passk import SE_K, crossover_k, k_grid
from .policy import base_logits, make_problems
from .training import distill, train_rl
from .uploads import DATA_DIR, EXAMPLE_CSV


def _config_budget(cfg, progress=None):
    _check_config(cfg)


@bounded(cfg=KNOBS.fields(ToyConfig), _budget=_config_budget)
def run_toy(cfg: ToyConfig = ToyConfig(), progress=None) -> dict:  # noqa: B008 - frozen, never mutated
    """The page's main experiment: base, RL checkpoints (at capacity share ``cfg.rho``), the tabular control
    (rho = 1) and the distillation arm.

    pass@k for every policy is estimated with the unbiased estimator from ``n_samples`` sampled completions per
    problem; the exact mean_i 1 - (1 - p_i)^k sits beside it.
    """
    p = as_progress(progress)
    rng = np.random.default_rng(cfg.seed)
    problems = make_problems(cfg, rng)
    theta0 = base_logits(cfg)
    ck = _ckpts(cfg.steps)
    n = cfg.n_samples
    ks_chart = k_grid(n)
    snaps = train_rl(problems, theta0, algorithms=[cfg.algorithm, cfg.algorithm], lrs=[cfg.lr, cfg.lr],
                     kls=[cfg.kl_coef, cfg.kl_coef], group_sizes=[cfg.group_size] * 2, rhos=[cfg.rho, 1.0],
                     steps=cfg.steps, prompts_per_step=cfg.prompts_per_step, checkpoints=ck,
                     rng=np.random.default_rng([cfg.seed, 1]), progress=p.sub(0.0, 0.6, "RL: "))
    dist = distill(problems, cfg, np.random.default_rng([cfg.seed, 2]), [cfg.distill_steps],
                   progress=p.sub(0.6, 0.8, "SFT: "))
    p(0.8, "sampling completions")
    erng = np.random.default_rng([cfg.seed, 3])
    W = np.random.default_rng([cfg.seed, 4]).random((cfg.n_problems, n))  # common random numbers (see above)
    base_probs = snaps[0, 0]
    base, rows = _curves_for("base", base_probs, problems, n, erng, ks_chart, W)
    ckpt_rows, ckpt_stats = [], []
    ref_logp = np.log(base_probs)
    nll_rows = []
    rl = None
    for j, step in enumerate(ck):
        if step == 0:
            continue
        res, r = _curves_for(f"RL step {step}", snaps[0, j], problems, n, erng, ks_chart, W)
        for row in r:
            row["step"] = step
        ckpt_rows += r
        ckpt_stats.append(_summary(base, res, n) | {"step": step,
                          "median_base_nll_of_rl": _weighted_median(-ref_logp, res["counts"])})
        rl = res
    base_nll_median = _weighted_median(-ref_logp, base["counts"])
    tab, tab_rows = _curves_for("tabular RL", snaps[1, -1], problems, n, erng, ks_chart, W)
    dis, dis_rows = _curves_for("distilled", dist[-1], problems, n, erng, ks_chart, W)
    rl_rows = ([dict(r, policy=rl_label(cfg.algorithm)) for r in ckpt_rows if r["step"] == cfg.steps]
               if cfg.steps else [])
    curves = pd.DataFrame(rows + rl_rows + tab_rows + dis_rows)
    # accuracy histograms (per-problem c/n) for base and the final RL policy
    hist = []
    bins = np.linspace(0, 1, 11)
    rl_ = rl if rl is not None else base
    for label, res in (("base", base), ("RL", rl_)):
        acc = res["c"] / n
        zero = acc == 0
        hc, _ = np.histogram(acc[~zero], bins=bins)
        hist.append({"policy": label, "bin": "0", "lo": 0.0, "share": float(zero.mean())})
        for lo, cnt in zip(bins[:-1], hc):
            hist.append({"policy": label,
                         "bin": f"({lo:.1f},{lo + 0.1:.1f}]" if lo == 0 else f"[{lo:.1f},{lo + .1:.1f})",
                         "lo": float(lo) + 0.05, "share": cnt / len(acc)})
    # base log-likelihood of samples: base's own vs the final RL policy's
    for label, res in (("base samples", base), ("RL samples", rl_)):
        vals, w = (-ref_logp).ravel(), res["counts"].ravel()
        hc, edges = np.histogram(vals, bins=np.linspace(0, 16, 33), weights=w)
        for lo, cnt in zip(edges[:-1], hc):
            nll_rows.append({"samples": label, "nll": float(lo) + 0.25, "share": cnt / w.sum()})
    ks = np.arange(1, n + 1)
    metrics = _summary(base, rl_, n)
    metrics.update({
        "tabular_crossover_k": crossover_k(ks, base["est"], tab["est"]),
        "tabular_crossover_k_exact": crossover_k(ks, base["exact"], tab["exact"]),
        "tabular_pass1": float(tab["est"][0]), "tabular_passkmax": float(tab["est"][-1]),
        "tabular_pass256": float(tab["est"][min(SE_K, n) - 1]),
        "distill_pass1": float(dis["est"][0]), "distill_passkmax": float(dis["est"][-1]),
        "distill_above_base_all_k": bool(np.all(dis["est"] > base["est"])),
        "distill_above_base_all_k_exact": bool(np.all(dis["exact"] > base["exact"])),
        "median_base_nll_base_samples": base_nll_median,
        "median_base_nll_rl_samples": _weighted_median(-ref_logp, rl_["counts"]),
        "zero_acc_base": float((base["c"] == 0).mean()), "zero_acc_rl": float((rl_["c"] == 0).mean()),
        "high_acc_base": float((base["c"] / n >= 0.5).mean()), "high_acc_rl": float((rl_["c"] / n >= 0.5).mean()),
        "steps": cfg.steps, "algorithm": cfg.algorithm, "rho": float(cfg.rho),
    })
    coverage = pd.DataFrame({"problem": np.arange(cfg.n_problems), "q": problems["q"],
                             "correct_strategy": problems["primary"] + 1,
                             "p_base": base["p"], "p_rl": rl_["p"], "p_tabular": tab["p"], "p_distilled": dis["p"],
                             "c_base": base["c"], "c_rl": rl_["c"], "c_tabular": tab["c"], "c_distilled": dis["c"]})
    p(1.0, "done")
    return {"config": dataclasses.asdict(cfg), "metrics": metrics, "curves": curves,
            "checkpoints": pd.DataFrame(ckpt_rows), "checkpoint_stats": pd.DataFrame(ckpt_stats),
            "histogram": pd.DataFrame(hist), "likelihood": pd.DataFrame(nll_rows), "coverage": coverage,
            "theta_base": theta0, "theta_rl_probs_mean": snaps[0, -1].mean(0), "base_probs_mean": base_probs.mean(0),
            "distill_probs_mean": dist[-1].mean(0)}


def _sweep_budget(cfg, param, values, progress=None):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not 1 <= len(values) <= MAX_SWEEP:
        raise InputError(f"give between 1 and {MAX_SWEEP} values to sweep")
    kind = SWEEPABLE[param][1]
    for v in values:
        KNOBS.specs(param)[param].check(param, v)
    policies = 1 if param == "steps" else len(values)
    worst = dataclasses.replace(cfg, **({param: kind(max(values))} if param in ("steps", "group_size") else {}))
    _check_config(worst, policies)


@bounded(cfg=KNOBS.fields(ToyConfig), **KNOBS.specs(group="run_sweep"), _budget=_sweep_budget)
def run_sweep(cfg: ToyConfig, param: str, values: list, progress=None) -> pd.DataFrame:
    """pass@1, pass@256, pass@k_max and the crossover k against one knob, all settings trained together as one
    batched model (a leading instance axis). ``steps`` is swept from the checkpoints of a single run of
    max(values)."""
    p = as_progress(progress)
    values = [SWEEPABLE[param][1](v) for v in values]
    rng = np.random.default_rng(cfg.seed)
    problems = make_problems(cfg, rng)
    theta0 = base_logits(cfg)
    M = 1 if param == "steps" else len(values)
    steps = int(max(values)) if param == "steps" else cfg.steps
    ck = sorted(set([0] + [int(v) for v in values])) if param == "steps" else [0, cfg.steps]
    col = lambda name: [values[m] if param == name else getattr(cfg, name) for m in range(M)]  # noqa: E731
    snaps = train_rl(problems, theta0, algorithms=col("algorithm"), lrs=col("lr"), kls=col("kl_coef"),
                     group_sizes=col("group_size"), rhos=col("rho"), steps=steps,
                     prompts_per_step=cfg.prompts_per_step, checkpoints=ck,
                     rng=np.random.default_rng([cfg.seed, 1]), progress=p.sub(0.0, 0.9, "training: "))
    n = cfg.n_samples
    erng = np.random.default_rng([cfg.seed, 3])
    W = np.random.default_rng([cfg.seed, 4]).random((cfg.n_problems, n))  # the same draws as run_toy
    base, _ = _curves_for("base", snaps[0, 0], problems, n, erng, [1], W)
    rows = []
    for i, v in enumerate(values):
        probs = snaps[0, ck.index(int(v))] if param == "steps" else snaps[i, -1]
        res, _ = _curves_for("rl", probs, problems, n, erng, [1], W)
        s = _summary(base, res, n)
        rows.append({param: v, "pass@1 (RL)": s["pass1_rl"], "pass@256 (RL)": s["pass256_rl"],
                     "pass@k_max (RL)": s["passkmax_rl"], "pass@1 (base)": s["pass1_base"],
                     "pass@256 (base)": s["pass256_base"], "pass@k_max (base)": s["passkmax_base"],
                     "pass@1 gain": s["pass1_gain"], "pass@256 drop": s["pass256_drop"],
                     "pass@1 exact (RL)": s["pass1_rl_exact"], "pass@k_max exact (RL)": s["passkmax_rl_exact"],
                     "crossover k": s["crossover_k"], "Δ_SE": s["delta_se"], "k_max": n})
    p(1.0, "done")
    return pd.DataFrame(rows)


def in_regime(pass1_gain: float, pass256_drop: float, crossover) -> bool:
    """Is one RL policy in the paper's regime (REGIME, and a finite crossover)?"""
    return bool(pass1_gain >= REGIME["min_pass1_gain"]
                and REGIME["min_pass256_drop"] <= pass256_drop <= REGIME["max_pass256_drop"]
                and crossover is not None and not (isinstance(crossover, float) and math.isnan(crossover)))


def _grid_budget(cfg, rhos, steps, seeds, progress=None):
    _check_config(dataclasses.replace(cfg, steps=int(max(steps))), len(rhos) * len(seeds))


@bounded(cfg=KNOBS.fields(ToyConfig), **KNOBS.specs(group="rho_sweep"), _budget=_grid_budget)
def rho_sweep(cfg: ToyConfig = ToyConfig(), rhos: tuple = RHO_GRID, steps: tuple = RHO_STEPS,  # noqa: B008
              seeds: tuple = RHO_SEEDS, progress=None) -> dict:
    """Every capacity share in ``rhos`` at every training length in ``steps``, for each seed: all rhos of a
    seed train together as one batched model (checkpoints give the lengths); ``cfg.rho`` and ``cfg.steps``
    are ignored.

    Returns ``summary`` (one row per seed, steps and rho: pass@1 base and RL and their ratio, pass@256 base and
    RL and the drop base − RL, crossover k estimated and exact, Δ_SE at k = 256, in_regime), ``table`` (the
    same, over seeds: mean, min and max of gain and drop, median crossover, all seeds in the regime),
    ``curves`` (pass@k per steps and rho, estimated and exact, first seed) and ``base_curve``.
    """
    p = as_progress(progress)
    rhos = [float(r) for r in rhos]
    steps = sorted(set(int(s) for s in steps))
    seeds = [int(s) for s in seeds]
    n = cfg.n_samples
    ks, ks_chart = np.arange(1, n + 1), k_grid(n)  # noqa: F841
    rows, curves, base_rows = [], [], []
    for si, seed in enumerate(seeds):
        ps = p.part(si, len(seeds), f"seed {seed}: ")
        problems = make_problems(cfg, np.random.default_rng(seed))
        M = len(rhos)
        snaps = train_rl(problems, base_logits(cfg), algorithms=[cfg.algorithm] * M, lrs=[cfg.lr] * M,
                         kls=[cfg.kl_coef] * M, group_sizes=[cfg.group_size] * M, rhos=rhos, steps=max(steps),
                         prompts_per_step=cfg.prompts_per_step, checkpoints=[0] + steps,
                         rng=np.random.default_rng([seed, 1]), progress=ps.sub(0.0, 0.7, "training: "))
        erng = np.random.default_rng([seed, 3])
        W = np.random.default_rng([seed, 4]).random((cfg.n_problems, n))  # the same draws as run_toy
        base, brows = _curves_for("base", snaps[0, 0], problems, n, erng, ks_chart, W)
        if si == 0:
            base_rows = brows
        for j, st in enumerate(steps):
            ps(0.7 + 0.3 * j / len(steps), f"sampling at step {st}")
            for i, rho in enumerate(rhos):
                res, r = _curves_for("RL", snaps[i, j + 1], problems, n, erng, ks_chart, W)
                s = _summary(base, res, n)
                rows.append({"seed": seed, "steps": st, "rho": rho, "pass1_base": s["pass1_base"],
                             "pass1_rl": s["pass1_rl"], "pass1_gain": s["pass1_gain"],
                             "pass256_base": s["pass256_base"], "pass256_rl": s["pass256_rl"],
                             "pass256_drop": s["pass256_drop"], "crossover_k": s["crossover_k"],
                             "crossover_k_exact": s["crossover_k_exact"], "delta_se_256": s["delta_se"],
                             "in_regime": in_regime(s["pass1_gain"], s["pass256_drop"], s["crossover_k"])})
                if si == 0:
                    curves += [dict(row, steps=st, rho=rho) for row in r]
    summary = pd.DataFrame(rows)
    cross = summary["crossover_k"].astype(float).fillna(np.inf)
    g = summary.assign(cross=cross).groupby(["steps", "rho"], sort=True)
    table = pd.DataFrame({
        "pass1_gain": g["pass1_gain"].mean(), "pass1_gain_min": g["pass1_gain"].min(),
        "pass1_gain_max": g["pass1_gain"].max(), "pass256_drop": g["pass256_drop"].mean(),
        "pass256_drop_min": g["pass256_drop"].min(), "pass256_drop_max": g["pass256_drop"].max(),
        "crossover_k_median": g["cross"].median(), "crossover_k_min": g["cross"].min(),
        "crossover_k_max": g["cross"].max(), "delta_se_256": g["delta_se_256"].mean(),
        "all_seeds_in_regime": g["in_regime"].all()}).reset_index()
    for c in ("crossover_k_median", "crossover_k_min", "crossover_k_max"):
        table[c] = table[c].replace(np.inf, np.nan)   # NaN: no crossover up to k = n
    p(1.0, "done")
    return {"config": dataclasses.asdict(cfg), "seeds": seeds, "steps": steps, "rhos": rhos, "k_max": n,
            "summary": summary, "table": table, "curves": pd.DataFrame(curves), "base_curve": pd.DataFrame(base_rows)}


def choose_rho(table: pd.DataFrame, steps: int = 400) -> float | None:
    """RHO_RULE: the centre of the band of rho in which every seed is in the paper's regime at ``steps``
    training steps, rounded to the nearest rho of the grid; None when no rho is."""
    t = table[table["steps"] == steps].sort_values("rho")
    ok = t[t["all_seeds_in_regime"].astype(bool)]["rho"].to_numpy(dtype=float)
    if ok.size == 0:
        return None
    centre = (ok.min() + ok.max()) / 2
    grid = t["rho"].to_numpy(dtype=float)
    return float(grid[np.argmin(np.abs(grid - centre) + 1e-9 * grid)])  # ties go to the smaller rho


def example_counts(seed: int = 0) -> pd.DataFrame:
    """A model,problem,n,c table made by the toy (200 problems, 256 samples each): the base policy, the GRPO
    policy after 400 steps and the distilled policy. Toy output, not a real model's evaluation."""
    cfg = ToyConfig(n_problems=200, n_samples=256, seed=seed)
    cov = run_toy(cfg)["coverage"]
    frames = [pd.DataFrame({"model": name, "problem": [f"toy-{i:03d}" for i in cov.problem], "n": cfg.n_samples,
                            "c": cov[col].astype(int)})
              for name, col in (("toy-base", "c_base"), ("toy-grpo", "c_rl"), ("toy-distilled", "c_distilled"))]
    return pd.concat(frames, ignore_index=True)


def write_example() -> Path:
    """Regenerate the shipped example CSV (toymodels/data/rlvr/example_toy_counts.csv)."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    example_counts().to_csv(EXAMPLE_CSV, index=False)
    return EXAMPLE_CSV
