"""Reading the shipped sweeps: exponents per seed with their intervals, the mechanism width by width, the ideal
weak regime at finite n, and the m = 10 recipes. Light (NumPy, pandas, SciPy; no torch): the claims, the page
and the command line all read the same numbers from here, and none of it is stored with a view, so a change
here never makes a view stale.

Conventions. A sweep's table has one row per (regime, seed, width). An exponent is fitted per seed
(least squares of log L on log m, ``measure.fit_exponent``) and the seeds give its mean and a 95 % t-interval;
with one seed, the fit's own standard error stands in for the spread. The strong regime is read over widths
m ≥ ``MIN_M`` (three octaves, 20…160), where its mechanism is judged too: at m = 10 the large-model bias rate
(lr_b = 2/m = 0.2) lets rows cluster (``m10_table``), a finding reported apart.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # = scipy.stats' t.ppf, bit for bit, and 0.6 s faster to import

from .data import feature_probs
from .measure import fit_exponent, ideal_weak_loss

MIN_M = 20                    # the strong regime's exponent and mechanism are read over m ≥ 20
STRONG, WEAK = "strong", "weak"
WEAK_ALPHA = 1.5              # the weak headline regime's data exponent (p_i ∝ i^-1.5)


# --------------------------------------------------------------------------- intervals and fits


def interval(values, level: float = 0.95) -> dict:
    """Mean of per-seed values with a two-sided t-interval: ``{"mean", "lo", "hi", "se", "k"}`` (lo, hi and se
    are nan for one value)."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=np.float64)
    k = len(v)
    if k == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "se": float("nan"), "k": 0}
    mean = float(v.mean())
    if k == 1:
        return {"mean": mean, "lo": float("nan"), "hi": float("nan"), "se": float("nan"), "k": 1}
    se = float(v.std(ddof=1) / math.sqrt(k))
    half = float(stdtrit(k - 1, 0.5 + level / 2) * se)
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "se": se, "k": k}


def ci_text(iv: dict, fmt: str = ".2f") -> str | None:
    """``"95 % CI [0.98, 1.06] over 5 seeds"``, or None for one seed."""
    if iv["k"] < 2:
        return None
    return f"95 % CI [{iv['lo']:{fmt}}, {iv['hi']:{fmt}}] over {iv['k']} seeds"


def _rows(table: pd.DataFrame, regime: str, min_m: float = 0, max_m: float = math.inf) -> pd.DataFrame:
    return table[(table["regime"] == regime) & (table["m"] >= min_m) & (table["m"] <= max_m)]


def per_seed(table: pd.DataFrame, regime: str, min_m: float = 0, column: str = "loss") -> pd.DataFrame:
    """One fit per seed of ``column`` ∝ m^(-α) over widths ≥ ``min_m``: seed, alpha_m, stderr, r2, C."""
    out = []
    for seed, g in _rows(table, regime, min_m).groupby("seed"):
        g = g.sort_values("m")
        out.append({"seed": int(seed), **fit_exponent(g["m"], g[column])})
    return pd.DataFrame(out, columns=["seed", "alpha_m", "stderr", "r2", "C"])


def exponent(table: pd.DataFrame, regime: str, min_m: float = 0, column: str = "loss") -> dict:
    """α_m of ``column`` ∝ m^(-α_m): the mean of the per-seed fits, its interval, the standard error used by the
    claims (the seeds' spread, or the fit's own with one seed), R² of the fit to the seed-mean curve, and the
    prefactor C of that curve (to draw it)."""
    ps = per_seed(table, regime, min_m, column)
    iv = interval(ps["alpha_m"])
    mean_curve = _rows(table, regime, min_m).groupby("m", as_index=False)[column].mean()
    f = fit_exponent(mean_curve["m"], mean_curve[column])
    se = iv["se"] if iv["k"] >= 2 else float(ps["stderr"].iloc[0]) if len(ps) else float("nan")
    return {**iv, "se": se, "per_seed": ps["alpha_m"].tolist(), "r2": f["r2"], "C": f["C"], "fit_mean": f["alpha_m"],
            "widths": [int(m) for m in mean_curve["m"]]}


# --------------------------------------------------------------------------- the mechanism, width by width


def by_width(table: pd.DataFrame, regime: str, n: int | None = None) -> pd.DataFrame:
    """Per width, over seeds: loss, the mean squared overlap against 1/m and the Welch bound (mean and
    interval of overlap / Welch), φ_1/2, Eq. 4 on the measured rows against the loss (mean and interval of
    their ratio), how many features are represented (with ``n``) and the share of them among as many most
    frequent ones, convergence, and ``local_alpha``, the exponent between a width and the one before it."""
    rows = []
    for m, g in _rows(table, regime).groupby("m"):
        ratio = interval(g["overlap"] / g["welch"])
        eq4 = interval(g["weak_pred"] / g["loss"])
        rows.append({"m": int(m), "seeds": int(len(g)), "loss": float(g["loss"].mean()),
                     "loss_sd": float(g["loss"].std(ddof=1)) if len(g) > 1 else float("nan"),
                     "overlap": float(g["overlap"].mean()), "inv_m": 1.0 / m, "welch": float(g["welch"].iloc[0]),
                     "overlap_over_welch": ratio["mean"], "overlap_over_welch_lo": ratio["lo"],
                     "overlap_over_welch_hi": ratio["hi"], "overlap_times_m": float(g["overlap"].mean() * m),
                     "phi_half": float(g["phi_half"].mean()),
                     "represented": float(g["phi_half"].mean() * n) if n else float("nan"),
                     "eq4": float(g["weak_pred"].mean()), "eq4_ratio": eq4["mean"], "eq4_ratio_lo": eq4["lo"],
                     "eq4_ratio_hi": eq4["hi"],
                     "top_share": float(g["top_share"].mean()) if "top_share" in g else float("nan"),
                     "converged": bool(g["converged"].all()), "drift_max": float(g["drift"].max()),
                     "steps_run_max": int(g["steps_run"].max())})
    out = pd.DataFrame(rows)
    if len(out):  # the exponent between neighbouring widths: where the power law bends
        out["local_alpha"] = -np.log(out["loss"]).diff() / np.log(out["m"]).diff()
    return out


def weak_ideal(n: int, ms, alpha: float = WEAK_ALPHA) -> dict:
    """The ideal weak regime at finite n (Eq. 4 with the m most frequent features kept, φn = m) over the
    widths ``ms``: its losses and their exponent. As n → ∞ the exponent is α − 1 (Eq. 14)."""
    p = feature_probs(n, alpha)
    ms = [int(m) for m in ms]
    losses = [ideal_weak_loss(p, m) for m in ms]
    return {"widths": ms, "loss": losses, "alpha_m": fit_exponent(ms, losses)["alpha_m"], "n_to_inf": alpha - 1.0}


# --------------------------------------------------------------------------- what the claims and the page read


def converged(table: pd.DataFrame, regimes=None) -> bool:
    rows = table if regimes is None else table[table["regime"].isin(list(regimes))]
    return bool(len(rows)) and bool(rows["converged"].all())


def profile_regimes_of(table: pd.DataFrame) -> list[str]:
    """The strong-regime profile runs of a scaling table (``"strong · power"`` …), in table order."""
    return [r for r in dict.fromkeys(table["regime"]) if str(r).startswith("strong · ")]


def profiles(table: pd.DataFrame, min_m: float = MIN_M) -> pd.DataFrame:
    """The strong regime per frequency profile: its parameter, N_eff, N_eff / largest width, α_m over m ≥ min_m
    (mean, interval), α_m over every width, and convergence."""
    rows = []
    for name in profile_regimes_of(table):
        g = _rows(table, name)
        e, every = exponent(table, name, min_m), exponent(table, name)
        first = g.iloc[0]
        param = (f"α = {first['alpha']:.3g}" if first["profile"] == "power" else
                 f"τ = {first['tau']:.1f}" if first["profile"] == "exponential" else "p_i ∝ n + 1 − i")
        rows.append({"regime": name, "profile": first["profile"], "parameter": param, "n_eff": float(first["n_eff"]),
                     "n_eff_over_max_m": float(first["n_eff"] / g["m"].max()), "alpha_m": e["mean"],
                     "alpha_lo": e["lo"], "alpha_hi": e["hi"], "alpha_all_widths": every["mean"],
                     "seeds": e["k"], "converged": converged(g)})
    return pd.DataFrame(rows)


def m10_table(res: dict) -> pd.DataFrame:
    """The m = 10 recipes (``small_width_recipes``): per recipe, overlap / Welch (mean and interval), the loss,
    the steps run and convergence."""
    t = res["table"]
    rows = []
    for name, g in t.groupby("recipe", sort=False):
        r = interval(g["overlap"] / g["welch"])
        rows.append({"recipe": name, "lr_recipe": g["lr_recipe"].iloc[0], "steps": int(g["steps"].iloc[0]),
                     "batch": int(g["batch"].iloc[0]), "overlap_over_welch": r["mean"], "lo": r["lo"], "hi": r["hi"],
                     "loss": float(g["loss"].mean()), "steps_run_max": int(g["steps_run"].max()),
                     "converged": bool(g["converged"].all()), "seeds": int(len(g))})
    return pd.DataFrame(rows)


def summary(res: dict) -> dict:
    """Every number the claims, the metrics and the page read from a ``scaling`` result."""
    t = res["table"]
    n = int(res["settings"]["n"])
    strong, weak = by_width(t, STRONG, n), by_width(t, WEAK, n)
    widths = [int(m) for m in strong["m"]]
    ideal = weak_ideal(n, widths)
    return {
        "widths": widths, "n": n, "min_m": MIN_M,
        "alpha_strong": exponent(t, STRONG, MIN_M), "alpha_strong_all": exponent(t, STRONG),
        "overlap_slope": exponent(t, STRONG, MIN_M, column="overlap"),
        "alpha_weak": exponent(t, WEAK), "alpha_weak_eq4": exponent(t, WEAK, column="weak_pred"),
        "alpha_weak_ideal": ideal["alpha_m"], "weak_ideal": ideal,
        "strong": strong, "weak": weak, "profiles": profiles(t),
        "converged": converged(t), "max_drift": float(t["drift"].max()), "steps_run_max": int(t["steps_run"].max()),
        "strong_seed_spread": float((strong["loss_sd"] / strong["loss"])[strong["m"] >= MIN_M].max()),
        "eq4_max_deviation": float((weak["eq4_ratio"] - 1.0).abs().max()),
        "seeds": sorted(int(s) for s in t["seed"].unique()),
    }


def fit_line(table: pd.DataFrame, regime: str, min_m: float = 0, points: int = 12) -> pd.DataFrame:
    """The fitted power law C·m^(-α_m) of a regime's seed-mean loss over widths ≥ min_m, for drawing."""
    e = exponent(table, regime, min_m)
    lo, hi = min(e["widths"]), max(e["widths"])
    ms = np.geomspace(lo, hi, points)
    return pd.DataFrame({"m": ms, "loss": e["C"] * ms ** (-e["fit_mean"])})


def project_2d(W: np.ndarray) -> np.ndarray:
    """Feature vectors for drawing: the vectors themselves in 2-D, else their coordinates in the plane of the two
    leading principal directions (an SVD of W, uncentred)."""
    W = np.asarray(W, dtype=np.float64)
    if W.shape[1] <= 2:
        return W
    return W @ np.linalg.svd(W, full_matrices=False)[2][:2].T


# --------------------------------------------------------------------------- frames for the page's figures


def loss_points(table: pd.DataFrame, regimes) -> pd.DataFrame:
    """The loss of every run (one point per regime, seed and width) and the seed mean per width, long format:
    ``kind`` is "run" or "mean"."""
    rows = table[table["regime"].isin(list(regimes))]
    runs = rows[["regime", "seed", "m", "loss", "drift", "phi_half", "n_eff"]].assign(kind="run")
    means = rows.groupby(["regime", "m"], as_index=False, sort=False).agg(
        loss=("loss", "mean"), drift=("drift", "max"), phi_half=("phi_half", "mean"), n_eff=("n_eff", "first"))
    return pd.concat([runs, means.assign(kind="mean", seed=-1)], ignore_index=True)


def overlap_frame(res: dict) -> pd.DataFrame:
    """Strong regime, per width: the measured mean squared overlap (seed mean), the Welch bound and 1/m, long
    format (``series``), with overlap / Welch and overlap × m for the tooltip."""
    w = by_width(res["table"], STRONG, int(res["settings"]["n"]))
    base = w[["m", "overlap_over_welch", "overlap_times_m"]]
    parts = [base.assign(series=name, value=w[col]) for name, col in
             (("measured ⟨(Ŵ_i·Ŵ_j)²⟩", "overlap"), ("Welch bound (N − m)/(m(N − 1))", "welch"), ("1/m", "inv_m"))]
    return pd.concat(parts, ignore_index=True)


def weak_frame(res: dict) -> pd.DataFrame:
    """Weak regime, per width: the measured loss, Eq. 4 summed over the rows the model left out, and the ideal
    (the m most frequent features kept), long format (``series``), with the share of the represented features
    among the most frequent."""
    n = int(res["settings"]["n"])
    w = by_width(res["table"], WEAK, n)
    ideal = weak_ideal(n, w["m"])
    parts = [w[["m", "top_share", "represented"]].assign(series=name, loss=values) for name, values in
             (("measured loss", w["loss"]), ("Eq. 4 on the measured rows", w["eq4"]),
              ("ideal: the m most frequent kept (Eq. 4)", ideal["loss"]))]
    return pd.concat(parts, ignore_index=True)


def live_fits(df: pd.DataFrame) -> pd.DataFrame:
    """α_m per regime of a live width sweep (every width, seed means), with whether every run converged."""
    rows = []
    for name in dict.fromkeys(df["regime"]):
        e = exponent(df, name)
        rows.append({"regime": name, "alpha_m": e["fit_mean"], "C": e["C"], "r2": e["r2"],
                     "label": "converged" if converged(_rows(df, name)) else "lower bound (not converged)"})
    return pd.DataFrame(rows)


def geometry_frame(geo: dict, k: int) -> pd.DataFrame:
    """The k-th γ of a ``geometry`` result, for drawing: each feature's vector in the plane (``project_2d``), its
    norm, its frequency and whether it is represented (‖W_i‖ > 1/2, Eq. 3)."""
    W = np.asarray(geo["W"][k], dtype=np.float64)
    P = project_2d(W)
    norms = np.linalg.norm(W, axis=1)
    label = np.where(norms > 0.5, "‖W_i‖ > 1/2", "‖W_i‖ ≤ 1/2")
    return pd.DataFrame({"feature": [f"{i + 1}" for i in range(len(W))], "x": P[:, 0], "y": P[:, 1], "norm": norms,
                         "p_i": np.asarray(geo["p"]), "represented": label, "x0": 0.0, "y0": 0.0})


def gram_frame(geo: dict, k: int) -> pd.DataFrame:
    """The Gram matrix W Wᵀ of the k-th γ of a ``geometry`` result, long format (i, j, value)."""
    G = np.asarray(geo["gram"][k], dtype=np.float64)
    return pd.DataFrame([(f"{i + 1}", f"{j + 1}", float(G[i, j])) for i in range(len(G)) for j in range(len(G))],
                        columns=["i", "j", "WWᵀ"])
