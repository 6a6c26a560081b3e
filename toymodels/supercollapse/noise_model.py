"""The paper's model of how a learning-rate schedule deforms a loss curve (§5, Fig. 1e; Figs. 6 and 12):

    L_sched(t) ≈ L_const(τ(t)) + α (η(t)/η_peak - 1) tr(P Σ_t),    τ(t) = Σ_{s<t} η(s)/η_peak,

the constant-rate curve read at the same "gradient-flow time" τ, plus a noise term: the trace of the minibatch
gradient covariance Σ_t of the scheduled run, preconditioned by P (for SGD, P = η_peak I; the official
``lr_schedules.ipynb`` absorbs the peak rate into P and keeps only the schedule, (η - η_peak)/η_peak), times one
fitted constant α per task. For SGD on a quadratic whose noisy modes equilibrate fast, E L - L_flow ≈ (η/2) tr Σ
per unit of η, so α = 1/2 is the quasi-static value; slow modes lower it.
"""
from __future__ import annotations

import numpy as np


def flow_time(lrs: np.ndarray, peak: float) -> np.ndarray:
    """τ(t) = Σ_{s<t} η(s) / η_peak for t = 0..T (in steps at the peak rate). (T + 1,)"""
    return np.concatenate([[0.0], np.cumsum(np.asarray(lrs, float) / peak)])


def deformation(loss_sched: np.ndarray, loss_const: np.ndarray, lrs: np.ndarray, peak: float) -> np.ndarray:
    """L_sched(t) - L_const(τ(t)), t = 0..T: what the schedule changed beyond slowing the flow down.
    ``loss_const``: the constant-rate curve at steps 0..len-1 (it must reach τ(T) ≤ T)."""
    tau = flow_time(lrs, peak)
    const_at_tau = np.interp(tau, np.arange(len(loss_const)), loss_const)
    return np.asarray(loss_sched, float) - const_at_tau


def noise_term(lrs: np.ndarray, grad_cov_trace: np.ndarray, peak: float) -> np.ndarray:
    """(η(t)/η_peak - 1) tr(P Σ_t) with P = η_peak I, t = 0..T (η(T) taken as η(T - 1))."""
    eta = np.concatenate([np.asarray(lrs, float), [lrs[-1]]])
    return (eta / peak - 1.0) * peak * np.asarray(grad_cov_trace, float)


def fit_alpha(deformations: list[np.ndarray], terms: list[np.ndarray]) -> float:
    """The one α that best maps the noise terms onto the deformations (least squares through the origin,
    pooled over every curve given)."""
    d = np.concatenate([np.asarray(x, float) for x in deformations])
    n = np.concatenate([np.asarray(x, float) for x in terms])
    return float(n @ d / (n @ n))


def relative_error(deform: np.ndarray, term: np.ndarray, alpha: float) -> float:
    """RMS of (predicted - actual deformation) over the RMS of the deformation: 0 is a perfect prediction, 1 is
    no better than predicting no deformation at all."""
    deform, term = np.asarray(deform, float), np.asarray(term, float)
    return float(np.sqrt(np.mean((alpha * term - deform) ** 2) / np.mean(deform ** 2)))
