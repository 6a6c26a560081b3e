"""The typed toy's experiments (issue 28): one seed in detail (the page's headline figure), many seeds (the
evidence the claims read) and a sweep of one knob, above all the data property a (the share of atypical
problems).

Every run trains on the training split only and is measured on both splits, base against RL at each training
length, with the paper's unbiased pass@k estimator from n sampled completions per problem (Eq. 2; n = 1024, as
for AIME24 and AMC23) and, beside it, the exact mean_i 1 - (1 - p_i)^k. Within a split every policy is sampled
with the same uniforms (common random numbers), so two policies differ by their p_i, not by luck.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from toymodels.topic import InputError, as_progress, bounded

from .config import (
    CLAIM_SEEDS,
    HEADLINE_LENGTH,
    KNOBS,
    MAX_TYPED_SWEEP,
    SWEEP_SEEDS,
    TYPED_LENGTHS,
    TYPED_SWEEPABLE,
    TYPED_WORK_LIMIT,
    TypedConfig,
    check_typed,
    typed_seconds,
    typed_work,
)
from .measure import _summary
from .passk import k_grid, pass_at_k_curve, pass_at_k_exact
from .policy import base_logits, success_prob
from .stats import t_interval
from .training import distill_typed, train_typed
from .typed import typed_policy, typed_world

SPLITS = ("train", "held-out")
CURVE_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)   # the k of the per-seed curves (powers of two)


def _evaluate(probs: np.ndarray, problems: dict, n: int, W: np.ndarray, ks: np.ndarray) -> dict:
    """p_i, the correct counts c_i of n completions (``W``: the split's common uniforms), and pass@k estimated
    (Eq. 2) and exact, for every k in ``ks``."""
    p = success_prob(probs, problems)
    c = (W[:, :n] < p[:, None]).sum(1)
    return {"p": p, "c": c, "est": pass_at_k_curve(n, c, ks), "exact": pass_at_k_exact(p, ks)}


def _nan(x):
    return float("nan") if x is None else float(x)


def _row(seed: int, split: str, steps: int, base: dict, rl: dict, problems: dict, n: int) -> dict:
    s = _summary(base, rl, n)
    aty = problems["atypical"]
    lost = (base["c"] > 0) & (rl["c"] == 0)
    return {"seed": seed, "split": split, "steps": steps,
            **{k: s[k] for k in ("pass1_base", "pass1_rl", "pass1_gain", "pass256_base", "pass256_rl",
                                 "pass256_drop", "passkmax_base", "passkmax_rl", "delta_se", "solved_base",
                                 "solved_rl", "solved_rl_only", "solved_base_only", "rl_solved_subset_fraction")},
            "crossover_k": _nan(s["crossover_k"]), "crossover_k_exact": _nan(s["crossover_k_exact"]),
            "p_atypical_base": float(base["p"][aty].mean()) if aty.any() else float("nan"),
            "p_atypical_rl": float(rl["p"][aty].mean()) if aty.any() else float("nan"),
            "p_typical_base": float(base["p"][~aty].mean()) if (~aty).any() else float("nan"),
            "p_typical_rl": float(rl["p"][~aty].mean()) if (~aty).any() else float("nan"),
            "lost_atypical": int((lost & aty).sum()), "lost_typical": int((lost & ~aty).sum()),
            "atypical_problems": int(aty.sum())}


def typed_seed(cfg: TypedConfig, lengths=TYPED_LENGTHS, detail: bool = False, progress=None) -> dict:
    """One seed (``cfg.seed``) of the typed toy: train on the training split to every length in ``lengths``,
    distil, and measure base, RL at each length and the distilled policy on both splits.

    Returns ``summary`` (one row per split and length: the headline numbers of RL against base), ``distill``
    (one row per split), ``curves`` (pass@k at ``CURVE_KS``; with ``detail``, at every k of a fine log grid, with
    the exact curve) and, with ``detail``, ``problems`` (every problem's type, atypical flag and p_i under base
    and under RL at the headline length and the longest one).
    """
    p = as_progress(progress)
    lengths = sorted(set(int(x) for x in lengths))
    _typical, train, heldout = typed_world(cfg)
    ck = [0] + lengths
    thetas = train_typed(train, base_logits(cfg), cfg.n_types, algorithm=cfg.algorithm, lr=cfg.lr,
                         kl=cfg.kl_coef, group_size=cfg.group_size, steps=max(lengths),
                         prompts_per_step=cfg.prompts_per_step, checkpoints=ck,
                         rng=np.random.default_rng([cfg.seed, 1]), progress=p.sub(0.0, 0.45, "RL: "))
    theta_d = distill_typed(train, cfg, cfg.n_types, np.random.default_rng([cfg.seed, 2]),
                            progress=p.sub(0.45, 0.6, "SFT: "))
    n = cfg.n_samples
    ks = np.arange(1, n + 1)
    chart_ks = k_grid(n) if detail else np.array([k for k in CURVE_KS if k <= n])
    rows, dist_rows, curve_rows, problem_rows = [], [], [], []
    for si, (split, probs) in enumerate((("train", train), ("held-out", heldout))):
        p(0.6 + 0.2 * si, f"sampling {n} completions of every {split} problem")
        W = np.random.default_rng([cfg.seed, 4, si]).random((len(probs["q"]), n), dtype=np.float32)
        base = _evaluate(typed_policy(thetas[0], probs), probs, n, W, ks)
        policies = [("base", 0, base)]
        for j, steps in enumerate(lengths):
            rl = _evaluate(typed_policy(thetas[j + 1], probs), probs, n, W, ks)
            rows.append(_row(cfg.seed, split, steps, base, rl, probs, n))
            policies.append(("RL", steps, rl))
        dis = _evaluate(typed_policy(theta_d, probs), probs, n, W, ks)
        policies.append(("distilled", 0, dis))
        dist_rows.append({"seed": cfg.seed, "split": split, "pass1": float(dis["est"][0]),
                          "pass256": float(dis["est"][min(256, n) - 1]), "passkmax": float(dis["est"][-1]),
                          "above_base_all_k": bool(np.all(dis["est"] > base["est"])),
                          "above_base_all_k_exact": bool(np.all(dis["exact"] > base["exact"])),
                          "min_margin": float(np.min(dis["est"] - base["est"]))})
        for name, steps, res in policies:
            for k in chart_ks:
                row = {"seed": cfg.seed, "split": split, "policy": name, "steps": steps, "k": int(k),
                       "pass_at_k": float(res["est"][k - 1])}
                if detail:
                    row["exact"] = float(res["exact"][k - 1])
                curve_rows.append(row)
        if detail:
            at = {L: res for name, L, res in policies if name == "RL"}
            head = at.get(HEADLINE_LENGTH, at[lengths[0]])
            problem_rows.append(pd.DataFrame({
                "split": split, "problem": np.arange(len(probs["q"])), "type": probs["type"] + 1,
                "atypical": probs["atypical"], "strategy": probs["primary"] + 1, "q": probs["q"],
                "p_base": base["p"], "p_rl": head["p"], "p_rl_longest": at[lengths[-1]]["p"],
                "c_base": base["c"], "c_rl": head["c"], "c_rl_longest": at[lengths[-1]]["c"]}))
    p(1.0, "done")
    out = {"seed": cfg.seed, "lengths": lengths, "summary": pd.DataFrame(rows), "distill": pd.DataFrame(dist_rows),
           "curves": pd.DataFrame(curve_rows)}
    if detail:
        out["problems"] = pd.concat(problem_rows, ignore_index=True)
        out["theta_base"] = thetas[0]
        out["theta_rl"] = thetas[ck.index(HEADLINE_LENGTH) if HEADLINE_LENGTH in ck else -1]
    return out


# --------------------------------------------------------------------------- aggregation over seeds

TABLE_COLUMNS = ("pass1_base", "pass1_rl", "pass1_gain", "pass256_base", "pass256_rl", "pass256_drop",
                 "p_atypical_base", "p_atypical_rl", "p_typical_base", "p_typical_rl")


def seed_table(summary: pd.DataFrame, by=("split", "steps")) -> pd.DataFrame:
    """Mean over seeds of each headline number, with its 95% t-interval (``<col>_lo``, ``<col>_hi``), the
    median crossover k (NaN: none up to k = n in more than half the seeds) and the share of seeds that cross."""
    out = []
    for key, g in summary.groupby(list(by), sort=True):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        row["seeds"] = int(g["seed"].nunique())
        for col in TABLE_COLUMNS:
            m, lo, hi = t_interval(g[col].dropna())
            row.update({col: m, f"{col}_lo": lo, f"{col}_hi": hi})
        cross = g["crossover_k"].astype(float)
        med = float(np.median(cross.fillna(np.inf)))
        row["crossover_k_median"] = med if np.isfinite(med) else float("nan")
        row["crossover_share"] = float(cross.notna().mean())
        out.append(row)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- bounded entry points


def _typed_budget(cfg, lengths=TYPED_LENGTHS, seeds=(0,), **_):
    check_typed(cfg, lengths, len(seeds))


def _run_budget(cfg, lengths=TYPED_LENGTHS, progress=None):
    check_typed(cfg, lengths, 1)


@bounded(cfg=KNOBS.fields(TypedConfig, group="typed"), **KNOBS.specs("lengths", group="typed_run"),
         _budget=_run_budget)
def typed_run(cfg: TypedConfig = TypedConfig(), lengths: tuple = TYPED_LENGTHS,  # noqa: B008 - frozen
              progress=None) -> dict:
    """One seed of the typed toy in detail (the page's headline figure): ``typed_seed`` with ``detail``, and the
    configuration."""
    out = typed_seed(cfg, lengths, detail=True, progress=progress)
    return {"config": dataclasses.asdict(cfg), **out}


@bounded(cfg=KNOBS.fields(TypedConfig, group="typed"), **KNOBS.specs(group="typed_run"), _budget=_typed_budget)
def typed_seeds(cfg: TypedConfig = TypedConfig(), lengths: tuple = TYPED_LENGTHS,  # noqa: B008 - frozen
                seeds: tuple = CLAIM_SEEDS, progress=None) -> dict:
    """The typed toy over ``seeds`` (``cfg.seed`` is ignored): every seed's summary, distillation rows and
    pass@k at ``CURVE_KS``, and ``table``, their means over seeds with 95% t-intervals (``seed_table``). The
    evidence every claim of the typed toy reads."""
    p = as_progress(progress)
    seeds = [int(s) for s in seeds]
    parts = [typed_seed(dataclasses.replace(cfg, seed=s), lengths, progress=p.part(i, len(seeds), f"seed {s}: "))
             for i, s in enumerate(seeds)]
    summary = pd.concat([x["summary"] for x in parts], ignore_index=True)
    return {"config": dataclasses.asdict(cfg), "seeds": seeds, "lengths": sorted(set(int(x) for x in lengths)),
            "summary": summary, "distill": pd.concat([x["distill"] for x in parts], ignore_index=True),
            "curves": pd.concat([x["curves"] for x in parts], ignore_index=True), "table": seed_table(summary)}


def _sweep_budget(cfg, param, values, lengths=TYPED_LENGTHS, seeds=SWEEP_SEEDS, progress=None):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or \
            not 1 <= len(values) <= MAX_TYPED_SWEEP:
        raise InputError(f"give between 1 and {MAX_TYPED_SWEEP} values to sweep")
    configs = []
    for v in values:
        KNOBS.specs(param, group="typed")[param].check(param, v)
        configs.append(dataclasses.replace(cfg, **{param: TYPED_SWEEPABLE[param][1](v)}))
    for c in configs:
        check_typed(c, lengths, 0)                                            # the cross-field limits
    total = sum(typed_work(c, lengths, len(seeds)) for c in configs)
    if total > TYPED_WORK_LIMIT:
        limit = typed_seconds(TypedConfig()) * TYPED_WORK_LIMIT / typed_work(TypedConfig())
        raise InputError(f"this sweep needs about {typed_seconds(cfg) * total / typed_work(cfg):.0f} s of compute; "
                         f"the limit is about {limit:.0f} s: fewer values, seeds or steps")


@bounded(cfg=KNOBS.fields(TypedConfig, group="typed"), **KNOBS.specs("lengths", group="typed_run"),
         **KNOBS.specs(group="typed_sweep"), _budget=_sweep_budget)
def typed_sweep(cfg: TypedConfig, param: str, values: tuple, lengths: tuple = TYPED_LENGTHS,
                seeds: tuple = SWEEP_SEEDS, progress=None) -> dict:
    """The typed toy at each value of one knob (``param``: the data property ``atypical`` above all), over
    ``seeds``: ``summary`` (every value, seed, split and length) and ``table`` (means over seeds with 95%
    t-intervals, per value, split and length)."""
    p = as_progress(progress)
    kind = TYPED_SWEEPABLE[param][1]
    values = [kind(v) for v in values]
    seeds = [int(s) for s in seeds]
    frames, dists = [], []
    total = len(values) * len(seeds)
    for i, v in enumerate(values):
        for j, s in enumerate(seeds):
            one = typed_seed(dataclasses.replace(cfg, **{param: v}, seed=s), lengths,
                             progress=p.part(i * len(seeds) + j, total, f"{param} = {v}, seed {s}: "))
            frames.append(one["summary"].assign(**{param: v}))
            dists.append(one["distill"].assign(**{param: v}))
    summary = pd.concat(frames, ignore_index=True)
    return {"config": dataclasses.asdict(cfg), "param": param, "values": values, "seeds": seeds,
            "lengths": sorted(set(int(x) for x in lengths)), "summary": summary,
            "distill": pd.concat(dists, ignore_index=True), "table": seed_table(summary, (param, "split", "steps"))}


def curve_table(curves: pd.DataFrame) -> pd.DataFrame:
    """pass@k over seeds: the mean of each (split, policy, steps, k) with its 95% t-interval (``lo``, ``hi``), from
    the per-seed curves of ``typed_seeds`` (for the page's headline figure)."""
    out = []
    for (split, policy, steps, k), g in curves.groupby(["split", "policy", "steps", "k"], sort=True):
        m, lo, hi = t_interval(g["pass_at_k"])
        out.append({"split": split, "policy": policy, "steps": int(steps), "k": int(k), "pass_at_k": m, "lo": lo,
                    "hi": hi, "seeds": int(g["seed"].nunique())})
    return pd.DataFrame(out)


def coverage_story(summary: pd.DataFrame, steps: int) -> pd.DataFrame:
    """Where RL's coverage goes at one training length, summed over seeds, per split: the problems base solves
    (some correct sample of n) and RL does not (``lost``), split into atypical and typical ones, the problems only
    RL solves (``gained``), and the atypical problems' mean success probability under base and RL."""
    rows = []
    for split, g in summary[summary["steps"] == steps].groupby("split", sort=False):
        lost = int(g["lost_atypical"].sum() + g["lost_typical"].sum())
        rows.append({"split": split, "seeds": int(g["seed"].nunique()), "lost": lost,
                     "lost_atypical": int(g["lost_atypical"].sum()), "lost_typical": int(g["lost_typical"].sum()),
                     "gained": int(g["solved_rl_only"].sum()), "atypical_problems": int(g["atypical_problems"].sum()),
                     "atypical_share_of_lost": float(g["lost_atypical"].sum() / lost) if lost else float("nan"),
                     "p_atypical_base": float(g["p_atypical_base"].mean()),
                     "p_atypical_rl": float(g["p_atypical_rl"].mean()),
                     "p_typical_base": float(g["p_typical_base"].mean()),
                     "p_typical_rl": float(g["p_typical_rl"].mean())})
    return pd.DataFrame(rows)
