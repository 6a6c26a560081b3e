"""pass@k curves, crossovers, Δ_SE, coverage and accuracy histograms of an evaluation table (yours, or the
shipped example): the paper's analyses (Fig. 2, Fig. 5, Table 4, §4) on counts of correct samples."""
from __future__ import annotations

import numpy as np
import pandas as pd

from toymodels.topic import InputError, bounded

from .config import KNOBS
from .passk import SE_K, crossover_k, k_grid, pass_at_k_curve
from .uploads import read_evaluations


def _analysis_ks(kmax: int) -> np.ndarray:
    """Every k up to 4096; beyond that every k of a fine log grid (and all chart points) up to kmax."""
    if kmax <= 4096:
        return np.arange(1, kmax + 1)
    return np.unique(np.concatenate([np.arange(1, 1025), k_grid(kmax, 48),
                                     np.round(np.logspace(3, np.log10(kmax), 400)).astype(int), [kmax]]))


@bounded(**KNOBS.specs(group="evaluations"), _free=("df", "base"))
def analyse_counts(df: pd.DataFrame, base: str | None = None, points: int = 48) -> dict:
    """pass@k curves, crossovers, Δ_SE, coverage and accuracy histograms for a validated evaluation table.

    Parameters
    ----------
    df : DataFrame with columns model, problem, n, c (the output of ``read_evaluations``)
    base : the model treated as the base model (default: the first model in the table)

    Each model's curve runs over k = 1 … min_i n_i (its smallest per-problem sample count). The crossover of
    an RL model is the smallest k at which the base model's pass@k is at least the RL model's, on the k both
    curves share; Δ_SE = pass@k(base) − pass@1(RL) at the paper's k = 256 (``delta_se_k`` says which k: the
    largest both curves share when that is below 256). Coverage counts a problem as solved when at least one of
    its samples is correct (pass@n > 0).
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"analyse_counts needs a table (a DataFrame), got {type(df).__name__}")
    df = read_evaluations(df)
    models = list(dict.fromkeys(df["model"]))
    base = base if base in models else models[0]
    curves, summary, hist = [], [], []
    solved: dict[str, set] = {}
    kmaxes = {}
    bins = np.array([0, 1e-12, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1 - 1e-12, 1.0 + 1e-9])
    labels = ["0", "(0,.1)", "[.1,.2)", "[.2,.3)", "[.3,.4)", "[.4,.5)", "[.5,.6)", "[.6,.7)", "[.7,.8)",
              "[.8,.9)", "[.9,1)", "1"]
    full: dict[str, np.ndarray] = {}
    for m in models:
        sub = df[df["model"] == m]
        n, c = sub["n"].to_numpy(), sub["c"].to_numpy()
        kmax = int(n.min())
        kmaxes[m] = kmax
        full[m] = pass_at_k_curve(n, c, _analysis_ks(kmax))
        grid = k_grid(kmax, points)
        vals = np.interp(grid, _analysis_ks(kmax), full[m])  # exact: every grid k is in _analysis_ks
        for k, v in zip(grid, vals):
            curves.append({"model": m, "k": int(k), "pass_at_k": float(v)})
        solved[m] = set(sub["problem"][c > 0])
        acc = c / n
        counts, _ = np.histogram(acc, bins=bins)
        for lab, cnt in zip(labels, counts):
            hist.append({"model": m, "accuracy": lab, "share": cnt / len(acc), "problems": int(cnt)})
    all_problems = list(dict.fromkeys(df["problem"]))
    for m in models:
        kk = min(kmaxes[m], kmaxes[base])
        row = {"model": m, "problems": int((df["model"] == m).sum()), "k_max": kmaxes[m],
               "pass@1": float(full[m][0]), "pass@k_max": float(full[m][-1]), "solved": len(solved[m])}
        if m != base:
            ks_common = _analysis_ks(kk)
            fb = np.interp(ks_common, _analysis_ks(kmaxes[base]), full[base])
            fm = np.interp(ks_common, _analysis_ks(kmaxes[m]), full[m])
            row["crossover_k"] = crossover_k(ks_common, fb, fm)
            k_se = min(SE_K, kk)
            row["delta_se"] = float(fb[k_se - 1] - fm[0])   # ks_common is 1..kk here for every kk <= 4096
            row["delta_se_k"] = k_se
            row["subset_of_base"] = solved[m] <= solved[base]
            row["solved_only_by_this"] = len(solved[m] - solved[base])
            row["solved_only_by_base"] = len(solved[base] - solved[m])
            row["share_also_solved_by_base"] = (len(solved[m] & solved[base]) / len(solved[m])
                                                if solved[m] else None)
        summary.append(row)
    coverage = pd.DataFrame([{"problem": p, **{m: (p in solved[m]) for m in models}} for p in all_problems])
    return {"base": base, "models": models, "curves": pd.DataFrame(curves), "summary": pd.DataFrame(summary),
            "histogram": pd.DataFrame(hist), "coverage": coverage}
