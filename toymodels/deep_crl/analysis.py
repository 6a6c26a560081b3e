"""What the shipped runs say: per-seed outcomes, the tests the claims run, and the numbers the page prints.

Light (NumPy, pandas; SciPy inside functions): the claims, the command line and the page call it on stored results
without torch. Every threshold a claim uses is a constant here, written before the run that decides it.

* Online (issue 29): a seed *solves* the far goal when its final success rate (the mean of its last 5 evaluations,
  each the share of 128 episodes that come within 0.5 of the goal) exceeds ``SOLVED_AT``. Depths are compared with
  Fisher's exact test, one-sided, and Newcombe's interval for the difference in solve rates.
* Offline: the critics of one seed share one data set, so depths are compared per seed (a paired t interval).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.special import ndtri, stdtrit  # = scipy.stats' norm.ppf and t.ppf, bit for bit, and 0.6 s faster to import

# --------------------------------------------------------------------------- pre-registered constants

SOLVED_AT = 0.5          # a seed solves the far goal when its final success rate exceeds this
ALPHA = 0.05             # one-sided level of every test below
PRIMARY = (4, 8)         # the online test: depth 8 against depth 4 (the paper's first step, where Ant mazes jump)
ONLINE_EFFECT = 0.25     # the paper's effect in solve rate: a quarter of the seeds more (its 4 -> 8 jumps are 5-9x)
OFFLINE_MARGIN = 0.03    # "little" in Spearman rho: about one seed's spread of one critic in the pilot (SD 0.02-0.03)
LEVEL = 0.95             # two-sided level of the intervals shown for the online difference
PAIRED_LEVEL = 0.90      # two-sided level of the paired offline intervals (their ends are one-sided 5% bounds)

#: The first registered online test (issue 29, seeds 100-119, 20 per depth), as its shipped views gave it (online_d4,
#: online_d8; superseded by issue 41's 60 fresh seeds per depth and no longer shipped).
FIRST_ONLINE_TEST = {"n_shallow": 20, "n_deep": 20, "solved_shallow": 4, "solved_deep": 7, "diff": 0.15,
                     "ci": (-0.1242, 0.3978), "p_value": 0.2401}

# Issue 41, registered before the runs (config.ONLINE60, QMAP16, ABLATION20, CRITIC_FRESH): every test is decided by
# toymodels.claims' shared rules on a 90% two-sided interval (a one-sided 5% test at each end).
RULE_LEVEL = 0.90
CORRIDOR_EFFECT = 0.10   # "follows the corridor": c = rho(corridor) - rho(straight line) of +0.10 (a tenth of rho's
                         # unit range; depth 4's seeds 100-119 have a median of -0.14), and depth 16's c above depth
                         # 4's by +0.10
ABLATION_EFFECT = 0.25   # the cost in solve rate an ablation must show (as ONLINE_EFFECT)
ABLATION_MIN_SOLVED = 5  # precondition: the full network solves at least 5 of its 20 seeds (else nothing to lose)


# --------------------------------------------------------------------------- tests


def fisher_greater(solved_a: int, n_a: int, solved_b: int, n_b: int) -> float:
    """One-sided p-value of Fisher's exact test that arm a solves more often than arm b: the hypergeometric tail
    P(X >= solved_a), X the solved seeds in arm a given both margins, summed in exact integers. It equals
    ``scipy.stats.fisher_exact(..., alternative="greater")`` (tested on every table of up to 20 + 20 seeds) and
    spares a page its 0.6 s import of ``scipy.stats``."""
    n, k = n_a + n_b, solved_a + solved_b
    tail = sum(math.comb(k, x) * math.comb(n - k, n_a - x) for x in range(solved_a, min(k, n_a) + 1))
    return tail / math.comb(n, n_a)


def wilson(x: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval for a proportion x/n."""
    z = float(ndtri(0.5 + level / 2))
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(x1: int, n1: int, x2: int, n2: int, level: float = LEVEL) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 − p2 (his method 10, Stat. Med. 1998): the Wilson intervals of the
    two proportions combined. Good coverage at small n and at rates of 0 or 1, where the Wald interval fails."""
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = wilson(x1, n1, level)
    l2, u2 = wilson(x2, n2, level)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lo), min(1.0, hi)


def paired_interval(diffs, level: float = PAIRED_LEVEL) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of the mean of paired differences."""
    d = np.asarray(diffs, float)
    m = float(d.mean())
    if len(d) < 2:
        return m, -math.inf, math.inf
    half = float(stdtrit(len(d) - 1, 0.5 + level / 2)) * float(d.std(ddof=1)) / math.sqrt(len(d))
    return m, m - half, m + half


# --------------------------------------------------------------------------- online


def online_table(runs: Mapping[int, Mapping]) -> pd.DataFrame:
    """One row per seed of the powered test's runs (``{depth: online_seeds result}``), with ``solved``."""
    rows = [pd.DataFrame(r["per_seed"]).assign(depth=int(d)) for d, r in sorted(runs.items())]
    out = pd.concat(rows, ignore_index=True)
    out["solved"] = out["success"] > SOLVED_AT
    return out


def solved(final: pd.DataFrame) -> int:
    """How many seeds of a run's ``final`` table solve the far goal (final success rate above ``SOLVED_AT``)."""
    return int((pd.DataFrame(final).success > SOLVED_AT).sum())


def online_curves(runs: Mapping[int, Mapping]) -> pd.DataFrame:
    """Every evaluation of every seed of the powered test's runs, with its depth."""
    return pd.concat([pd.DataFrame(r["curves"]).assign(depth=int(d)) for d, r in sorted(runs.items())],
                     ignore_index=True)


def online_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per depth: seeds, seeds solved, solve rate with its Wilson interval, and mean ± s.e.m. of the metrics."""
    rows = []
    for d, g in table.groupby("depth"):
        n, k = len(g), int(g.solved.sum())
        lo, hi = wilson(k, n)
        row = {"depth": int(d), "n_seeds": n, "solved": k, "solve_rate": k / n, "solve_lo": lo, "solve_hi": hi}
        for col in ("success", "time_at_goal", "critic_accuracy", "critic_accuracy_fresh", "spearman_euclid",
                    "spearman_corridor"):
            row[f"{col}_mean"] = float(g[col].mean())
            row[f"{col}_sem"] = float(g[col].sem(ddof=1)) if n > 1 else 0.0
        rows.append(row)
    return pd.DataFrame(rows)


def online_test(table: pd.DataFrame, shallow: int = PRIMARY[0], deep: int = PRIMARY[1]) -> dict:
    """Fisher's exact test (one-sided: does ``deep`` solve more often than ``shallow``?) and Newcombe's interval of
    the difference in solve rates (deep − shallow)."""
    a, b = table[table.depth == deep], table[table.depth == shallow]
    ka, kb, na, nb = int(a.solved.sum()), int(b.solved.sum()), len(a), len(b)
    lo, hi = newcombe(ka, na, kb, nb)
    return {"test": "Fisher's exact test, one-sided", "shallow": shallow, "deep": deep, "n_shallow": nb, "n_deep": na,
            "solved_shallow": kb, "solved_deep": ka, "diff": ka / na - kb / nb, "ci": [lo, hi], "level": LEVEL,
            "p_value": fisher_greater(ka, na, kb, nb), "alpha": ALPHA, "effect": ONLINE_EFFECT}


def online_rule_test(table: pd.DataFrame, shallow: int = PRIMARY[0], deep: int = PRIMARY[1]) -> dict:
    """The registered test of issue 41: the difference in solve rates (deep − shallow) with its 90% Newcombe
    interval (for the superiority rule), and Fisher's one-sided p beside it."""
    t = online_test(table, shallow, deep)
    a, b = table[table.depth == deep], table[table.depth == shallow]
    t["ci"] = list(newcombe(int(a.solved.sum()), len(a), int(b.solved.sum()), len(b), RULE_LEVEL))
    t["level"] = RULE_LEVEL
    return t


def t_interval(values, level: float = RULE_LEVEL) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of a mean (contains the mean by construction)."""
    return paired_interval(values, level)


def welch_interval(a, b, level: float = RULE_LEVEL) -> tuple[float, float, float]:
    """(mean(a) − mean(b), low, high): Welch's t interval of a difference of means of independent samples."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    d = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se > 0 else len(a) + len(b) - 2
    half = float(stdtrit(dof, 0.5 + level / 2)) * se
    return d, d - half, d + half


def corridor_rule_test(deep: pd.DataFrame, shallow: pd.DataFrame) -> dict:
    """The value-map test of issue 41: per seed c = ρ(−f, corridor) − ρ(−f, straight line). The mean c of the
    deep seeds with its 90% t interval, and the difference of means deep − shallow with its 90% Welch interval."""
    cd = (deep.spearman_corridor - deep.spearman_euclid).to_numpy()
    cs = (shallow.spearman_corridor - shallow.spearman_euclid).to_numpy()
    m, lo, hi = t_interval(cd)
    d, dlo, dhi = welch_interval(cd, cs)
    return {"n_deep": len(cd), "n_shallow": len(cs), "mean_deep": m, "mean_deep_ci": [lo, hi],
            "mean_shallow": float(cs.mean()), "diff": d, "diff_ci": [dlo, dhi], "median_deep": float(np.median(cd)),
            "median_shallow": float(np.median(cs)), "level": RULE_LEVEL, "effect": CORRIDOR_EFFECT}


def ablation_rule_test(full: pd.DataFrame, ablated: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Each ablation against the full network (issue 41): seeds solved, and the difference in solve rates
    (full − ablation) with its 90% Newcombe interval."""
    kf, nf = int((full.success > SOLVED_AT).sum()), len(full)
    rows = []
    for name, t in ablated.items():
        k, n = int((t.success > SOLVED_AT).sum()), len(t)
        lo, hi = newcombe(kf, nf, k, n, RULE_LEVEL)
        rows.append({"ablation": name, "n_seeds": n, "solved": k, "full_solved": kf, "full_seeds": nf,
                     "diff": kf / nf - k / n, "diff_lo": lo, "diff_hi": hi,
                     "success_mean": float(t.success.mean()), "p_hurts": fisher_greater(kf, nf, k, n)})
    return pd.DataFrame(rows)


def corridor_test(table: pd.DataFrame, shallow: int, deep: int) -> dict:
    """The value map (Fig. 9) described: per seed c = ρ(−f, corridor) − ρ(−f, straight line) over the maze, its
    median at ``shallow`` and at ``deep``. The registered test of it is ``corridor_rule_test``."""
    c = table.spearman_corridor - table.spearman_euclid
    cd, cs = c[table.depth == deep].to_numpy(), c[table.depth == shallow].to_numpy()
    return {"shallow": shallow, "deep": deep, "n_deep": len(cd), "n_shallow": len(cs),
            "median_deep": float(np.median(cd)), "median_shallow": float(np.median(cs))}


def ablation_test(full: pd.DataFrame, ablated: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Each ablation against the full network: seeds solved, and Fisher's one-sided tests both ways."""
    kf, nf = int((full.success > SOLVED_AT).sum()), len(full)
    rows = [{"ablation": "none", "n_seeds": nf, "solved": kf, "success_mean": float(full.success.mean()),
             "critic_accuracy_mean": float(full.critic_accuracy.mean()), "p_hurts": None, "p_helps": None}]
    for name, t in ablated.items():
        k, n = int((t.success > SOLVED_AT).sum()), len(t)
        rows.append({"ablation": name, "n_seeds": n, "solved": k, "success_mean": float(t.success.mean()),
                     "critic_accuracy_mean": float(t.critic_accuracy.mean()),
                     "p_hurts": fisher_greater(kf, nf, k, n), "p_helps": fisher_greater(k, n, kf, nf)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- offline critic


def critic_paired(critic: Mapping) -> dict:
    """Per-seed differences of ρ(−Q, corridor) between the offline critics of one seed (same data, same held-out
    pairs): deepest − depth 4 at the same width (depth), and deepest − the wide depth-4 critic with the deepest's
    parameters (depth for parameters), each with its paired t interval."""
    ps = pd.DataFrame(critic["per_seed"])
    width = int(critic["config"]["width"])
    by = ps[ps.width == width].pivot_table(index="seed", columns="depth", values="spearman_geodesic")
    shallow, deep = int(min(critic["depths"])), int(max(critic["depths"]))
    out = {"shallow": shallow, "deep": deep, "seeds": [int(s) for s in by.index], "level": PAIRED_LEVEL,
           "margin": OFFLINE_MARGIN}
    d_depth = (by[deep] - by[shallow]).to_numpy()
    out["depth_gain"] = d_depth.tolist()
    out["depth_mean"], out["depth_lo"], out["depth_hi"] = paired_interval(d_depth)
    wide = ps[ps.width != width].set_index("seed").spearman_geodesic
    if len(wide):
        d_wide = (by[deep] - wide.reindex(by.index)).to_numpy()
        out["wide_width"] = int(ps[ps.width != width].width.iloc[0])
        out["param_gain"] = d_wide.tolist()
        out["param_mean"], out["param_lo"], out["param_hi"] = paired_interval(d_wide)
    return out


def critic_contrasts(critic: Mapping) -> dict:
    """Issue 41's offline contrasts, per seed (same data set for every critic of a seed), each with its 90% paired t
    interval: ``depth`` = depth 64 − depth 4 at the same width (the paper's §4.6 comparison), ``width`` = depth 64 −
    the wide depth-4 critic with depth 64's parameters (the width parity), ``step1`` = depth 16 − depth 4 and
    ``step2`` = depth 64 − depth 16 (Fig. 11's trend)."""
    ps = pd.DataFrame(critic["per_seed"])
    width = int(critic["config"]["width"])
    by = ps[ps.width == width].pivot_table(index="seed", columns="depth", values="spearman_geodesic")
    depths = sorted(int(d) for d in critic["depths"])
    out = {"depths": depths, "seeds": [int(s) for s in by.index], "level": RULE_LEVEL}
    pairs = {"depth": (depths[-1], depths[0])}
    if len(depths) >= 3:
        pairs.update(step1=(depths[1], depths[0]), step2=(depths[-1], depths[1]))
    for key, (a, b) in pairs.items():
        out[key], out[f"{key}_lo"], out[f"{key}_hi"] = paired_interval((by[a] - by[b]).to_numpy(), RULE_LEVEL)
    wide = ps[ps.width != width].set_index("seed").spearman_geodesic
    if len(wide):
        out["wide_width"] = int(ps[ps.width != width].width.iloc[0])
        out["width"], out["width_lo"], out["width_hi"] = paired_interval(
            (by[depths[-1]] - wide.reindex(by.index)).to_numpy(), RULE_LEVEL)
    return out


def critic_lead(critic: Mapping) -> dict:
    """The learning-speed story of the offline critics: the step where the deepest critic leads depth 4 most (mean
    over seeds), the lead there, and the wide critic's value at that step."""
    cur = pd.DataFrame(critic["curves"])
    width = int(critic["config"]["width"])
    m = cur.groupby(["depth", "width", "step"]).spearman_geodesic.agg(["mean", "sem"]).reset_index()
    shallow, deep = int(min(critic["depths"])), int(max(critic["depths"]))
    d = m[(m.depth == deep) & (m.width == width)].set_index("step")
    s = m[(m.depth == shallow) & (m.width == width)].set_index("step")
    w = m[m.width != width].set_index("step")
    lead = d["mean"] - s["mean"]
    step = int(lead.idxmax())
    return {"step": step, "lead": float(lead.loc[step]), "deep": float(d.loc[step, "mean"]),
            "shallow": float(s.loc[step, "mean"]), "wide": float(w.loc[step, "mean"]) if len(w) else None,
            "final_lead": float(lead.iloc[-1])}


def critic_table(critic: Mapping) -> pd.DataFrame:
    """Per critic (each depth at the base width, then the wide depth-4 control): parameters, ρ with corridor
    distance, ρ with the exact occupancy and top-1 retrieval, mean and s.e.m. over seeds."""
    ps = pd.DataFrame(critic["per_seed"])
    width = int(critic["config"]["width"])
    rows = []
    for (d, w), g in ps.groupby(["depth", "width"], sort=False):
        rows.append({"critic": f"depth {d}" if w == width else f"depth {d}, width {w} (wide)", "depth": int(d),
                     "width": int(w), "params": int(g.params.iloc[0]), "seeds": len(g),
                     "rho_corridor": float(g.spearman_geodesic.mean()),
                     "rho_corridor_sem": float(g.spearman_geodesic.sem(ddof=1)) if len(g) > 1 else 0.0,
                     "rho_occupancy": float(g.spearman_occupancy.mean()), "retrieval": float(g.retrieval.mean()),
                     "retrieval_sem": float(g.retrieval.sem(ddof=1)) if len(g) > 1 else 0.0})
    return pd.DataFrame(rows)


def critic_curve_bands(critic: Mapping) -> pd.DataFrame:
    """The offline critics' ρ(−Q, corridor) against SGD steps: mean ± s.e.m. over seeds per critic (``net``)."""
    cur = pd.DataFrame(critic["curves"])
    width = int(critic["config"]["width"])
    g = cur.groupby(["depth", "width", "step"]).spearman_geodesic.agg(["mean", "sem"]).reset_index()
    g["sem"] = g["sem"].fillna(0.0)
    g["net"] = [f"depth {d}" if w == width else f"depth {d}, width {w}" for d, w in zip(g.depth, g.width)]
    return g.assign(lo=g["mean"] - g["sem"], hi=g["mean"] + g["sem"])


def online_curve_means(runs: Mapping[int, Mapping]) -> pd.DataFrame:
    """The online agents' training curves, mean over seeds per depth and evaluation."""
    cur = online_curves(runs)
    return cur.groupby(["depth", "env_steps"], as_index=False)[["success", "critic_accuracy", "alpha"]].mean()


def search_summary(search: Mapping) -> dict:
    """The regimes of the critic search where the deeper critic led beyond seed noise (the search's own rule:
    a gain above twice its standard error and 0.01), and the rest."""
    tab = pd.DataFrame(search["table"])
    return {"helps": tab[tab.depth_helps].what.tolist(), "rest": tab[~tab.depth_helps].what.tolist(),
            "n": len(tab)}
