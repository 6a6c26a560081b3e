"""The paper's measurements of a trained W (its §2, Eqs. 3, 4 and 9; Fig. 5d, 6d) and the exponent fit.

φ_1/2 = |{i: ‖W_i‖ > 1/2}|/n (Eq. 3), φ_1 = |{i: ‖W_i‖ > 1}|/n (Eq. 9), the mean squared overlap of the normalised
rows ⟨(Ŵ_i·Ŵ_j)²⟩ over i < j (the official ``LLMs/overlap-0.py``), the Welch bound it cannot go below, Eq. 4's
loss of the features left out, and the least-squares exponent of L ∝ m^(-α_m). NumPy and SciPy only.
"""
from __future__ import annotations

import numpy as np

from .data import V_MEAN, V_SQ

HIST_BINS = np.linspace(0.0, 2.0, 41)


def mean_sq_overlap(W: np.ndarray) -> float:
    """⟨(Ŵ_i·Ŵ_j)²⟩ over pairs i < j of L2-normalised rows, via the m×m Gram: (‖ŴᵀŴ‖_F² − N)/(N(N−1)).
    Rows of zero norm have no direction: they are left out (nan when fewer than two rows remain)."""
    W = np.asarray(W, dtype=np.float64)
    norms = np.linalg.norm(W, axis=1)
    W = W[norms > 0]
    N = W.shape[0]
    if N < 2:
        return float("nan")
    Wh = W / np.linalg.norm(W, axis=1, keepdims=True)
    G = Wh.T @ Wh
    sq = np.sum(Wh**2, axis=1)
    return float((np.sum(G * G) - np.sum(sq**2)) / (N * (N - 1)))


def welch_bound(N: int, m: int) -> float:
    """Lower bound on the mean (and max) squared overlap of N unit vectors in R^m: (N − m)/(m(N − 1))."""
    return max(0.0, (N - m) / (m * (N - 1))) if N > 1 else float("nan")


def weak_prediction(norms: np.ndarray, p: np.ndarray) -> float:
    """Eq. 4: the loss of the features left out (‖W_i‖ ≤ 1/2), Σ (⟨v²⟩p_i − ⟨v⟩²p_i²)."""
    out = norms <= 0.5
    return float(np.sum(V_SQ * p[out] - V_MEAN**2 * p[out] ** 2))


def ideal_weak_loss(p: np.ndarray, k: int) -> float:
    """Eq. 4 in the ideal weak regime: the k most frequent features kept (φn = k), the rest left out,
    Σ_{i>k} (⟨v²⟩p_i − ⟨v⟩²p_i²) over features sorted by frequency (the paper's ideal case, at finite n)."""
    q = np.sort(np.asarray(p, dtype=np.float64))[::-1][int(k):]
    return float(np.sum(V_SQ * q - V_MEAN**2 * q**2))


def selection_share(norms: np.ndarray, p: np.ndarray) -> float:
    """Of the k features a model represents (‖W_i‖ > 1/2), the share that are among the k most frequent:
    1 when the model keeps exactly the top-k features by frequency (the ideal of Eq. 4), nan when k = 0."""
    rep = np.asarray(norms) > 0.5
    k = int(rep.sum())
    if k == 0:
        return float("nan")
    top = np.argsort(-np.asarray(p, dtype=np.float64), kind="stable")[:k]
    return float(rep[top].sum() / k)


def measure(W: np.ndarray, p: np.ndarray) -> dict:
    """Row norms and the paper's measurements for one model's W (n × m)."""
    n, m = W.shape
    norms = np.linalg.norm(W, axis=1)
    rep = norms > 0.5
    hist, _ = np.histogram(np.clip(norms, 0, HIST_BINS[-1] - 1e-9), bins=HIST_BINS)
    return {"norms": norms, "phi_half": float(rep.mean()), "phi_one": float((norms > 1).mean()),
            "overlap": mean_sq_overlap(W), "overlap_rep": mean_sq_overlap(W[rep]) if rep.sum() > 1 else float("nan"),
            "welch": welch_bound(n, m), "inv_m": 1.0 / m, "etf_bound": min(1.0, m * m / (2.0 * n)),
            "weak_pred": weak_prediction(norms, p), "hist": hist}


def fit_exponent(ms, losses) -> dict:
    """Least-squares fit of log L = c − α_m log m. Returns α_m, its standard error, R² and the prefactor."""
    x, y = np.log(np.asarray(ms, float)), np.log(np.asarray(losses, float))
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return {"alpha_m": float("nan"), "stderr": float("nan"), "r2": float("nan"), "C": float("nan")}
    if ok.sum() == 2:
        slope = (y[ok][1] - y[ok][0]) / (x[ok][1] - x[ok][0])
        return {"alpha_m": float(-slope), "stderr": float("nan"), "r2": 1.0,
                "C": float(np.exp(y[ok][0] - slope * x[ok][0]))}
    x, y = x[ok], y[ok]                     # ordinary least squares, as scipy.stats.linregress (tested against it)
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy, sxy = float(dx @ dx), float(dy @ dy), float(dx @ dy)
    slope = sxy / sxx
    r2 = sxy * sxy / (sxx * syy) if syy > 0 else 1.0
    resid = dy - slope * dx
    stderr = np.sqrt(float(resid @ resid) / (len(x) - 2) / sxx)
    return {"alpha_m": float(-slope), "stderr": float(stderr), "r2": float(r2),
            "C": float(np.exp(y.mean() - slope * x.mean()))}
