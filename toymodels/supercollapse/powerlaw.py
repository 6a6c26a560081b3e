"""The solvable power-law SGD model (the paper's theory side, §4-5): data, schedules, horizons, and the exact
expected loss of one-pass minibatch SGD.

Features x_j ~ N(0, λ_j) with λ_j = j^-a; target y = Σ_j β_j x_j with per-feature signal power λ_j β_j² = j^-b.
A model of size p is f(x) = Σ_{j≤p} θ_j x_j with θ(0) = 0. The features beyond p are independent Gaussians the
model cannot see, so for it they are label noise of variance ζ(b, p + 1) = Σ_{j>p} j^-b (the Hurwitz zeta
function), and the irreducible loss of the infinite model is L0 = 0 exactly. The loss is the population
squared error L(θ) = E (f(x) - y)² = Σ_{j≤p} λ_j (θ_j - β_j)² + ζ(b, p + 1).

With Gaussian features the expected loss of one-pass SGD (batch B, learning rate η_t, a fresh batch every
step) closes on the diagonal second moments m_j = E (θ_j - β_j)²:

    m_j <- m_j (1 - 2 η_t λ_j + η_t² λ_j² (1 + 1/B)) + (η_t² λ_j / B) (Σ_k λ_k m_k + ζ(b, p + 1)),
    E L = Σ_j λ_j m_j + ζ(b, p + 1),

because E[x_j² r²] = λ_j L + 2 λ_j² δ_j² for a Gaussian x and a residual r = x·δ - noise: only diagonal moments
enter. The recursion is exact (no continuum limit); ``tests/topics/supercollapse`` checks it against seeded SGD.
"""
from __future__ import annotations

import numpy as np
from scipy.special import zeta

from .config import horizon_steps as horizon  # noqa: F401 - t*(p) = t0 (p/p0)^γ, γ* = a

SCHEDULES = ("constant", "linear", "cosine")


def spectrum(p: int, a: float) -> np.ndarray:
    """λ_j = j^-a for j = 1..p: the variances of the features a model of size p sees. (p,)"""
    return np.arange(1, p + 1, dtype=float) ** -a


def initial_moments(p: int, a: float, b: float) -> np.ndarray:
    """m_j(0) = β_j² = j^-b / λ_j = j^(a-b): the squared distance to the target at θ = 0. (p,)"""
    return np.arange(1, p + 1, dtype=float) ** (a - b)


def tail_variance(p: int, b: float) -> float:
    """ζ(b, p + 1) = Σ_{j>p} j^-b: the signal beyond the model's p features, which it sees as noise (b > 1)."""
    return float(zeta(b, p + 1))


def lr_schedule(kind: str, steps: int, peak: float) -> np.ndarray:
    """η_t for t = 0..steps-1 (the rate of the update that takes step t to t + 1): ``constant`` η, ``linear``
    decay η (1 - t/T) to zero, ``cosine`` η (1 + cos(π t/T)) / 2. (steps,)"""
    t = np.arange(steps, dtype=float) / steps
    if kind == "constant":
        return np.full(steps, float(peak))
    if kind == "linear":
        return peak * (1.0 - t)
    if kind == "cosine":
        return peak * 0.5 * (1.0 + np.cos(np.pi * t))
    raise ValueError(f"unknown schedule {kind!r}; schedules: {', '.join(SCHEDULES)}")


def expected_loss(p: int, lrs: np.ndarray, batch: int, a: float, b: float,
                  with_noise_trace: bool = False) -> dict:
    """The exact expected loss E L(t), t = 0..T, of one-pass SGD on a model of size p (the recursion above).

    ``lrs``: (R, T) learning rates, one row per run (runs of one size and one horizon advance together; a row
    may end early with zeros: η = 0 leaves m unchanged). Returns ``loss`` (R, T + 1) and, with
    ``with_noise_trace``, ``grad_cov_trace`` (R, T + 1): tr Σ_B(t) = (tr Λ · E L + Σ_j λ_j² m_j) / B, the
    trace of the minibatch gradient covariance, which the paper's schedule model (Eq. for L_sched) uses.
    """
    lrs = np.atleast_2d(np.asarray(lrs, dtype=float))
    runs, steps = lrs.shape
    lam = spectrum(p, a)
    lam_twice = 2.0 * lam
    lam_sq_k = lam * lam * (1.0 + 1.0 / batch)
    lam_sq = lam * lam
    tail = tail_variance(p, b)
    m = np.tile(initial_moments(p, a, b), (runs, 1))          # (R, p)
    loss = np.empty((runs, steps + 1))
    trace = np.empty((runs, steps + 1)) if with_noise_trace else None
    factor = np.empty((runs, p))
    tmp = np.empty((runs, p))
    last = None
    for t in range(steps + 1):
        np.multiply(m, lam, out=tmp)
        cur = tmp.sum(axis=1) + tail                            # (R,) E L(t); row by row, so a row's numbers
        loss[:, t] = cur                                        # do not depend on the rows beside it
        if trace is not None:
            np.multiply(m, lam_sq, out=tmp)
            trace[:, t] = (lam.sum() * cur + tmp.sum(axis=1)) / batch
        if t == steps:
            break
        eta = lrs[:, t:t + 1]                                   # (R, 1)
        if last is None or not np.array_equal(eta, last):       # constant stretches reuse the contraction
            np.multiply(eta * eta, lam_sq_k, out=factor)
            factor -= eta * lam_twice
            factor += 1.0
            last = eta.copy()
        m *= factor                                             # m_j (1 - 2ηλ_j + η²λ_j²(1 + 1/B))
        np.multiply((eta * eta / batch) * cur[:, None], lam, out=tmp)
        m += tmp                                                # + (η²λ_j/B) E L
    out = {"loss": loss}
    if trace is not None:
        out["grad_cov_trace"] = trace
    return out


def expected_moments(p: int, lrs: np.ndarray, batch: int, a: float, b: float, at: np.ndarray) -> np.ndarray:
    """The moments m_j(t) at the steps ``at`` (sorted), for one run: (len(at), p). For tests and the page's
    mode-by-mode picture; the same recursion as ``expected_loss``."""
    lrs = np.asarray(lrs, dtype=float).ravel()
    lam = spectrum(p, a)
    tail = tail_variance(p, b)
    m = initial_moments(p, a, b).copy()
    at = np.asarray(at, dtype=int)
    out = np.empty((len(at), p))
    k = 0
    for t in range(int(at.max()) + 1):
        while k < len(at) and at[k] == t:
            out[k] = m
            k += 1
        if t == len(lrs):
            break
        eta = lrs[t]
        cur = lam @ m + tail
        m = m * (1.0 - 2.0 * eta * lam + eta * eta * lam * lam * (1.0 + 1.0 / batch)) + (eta * eta / batch) * lam * cur
    return out
