"""The data of the toy (paper Eq. 1): sparse features x_i = u_i v_i with frequency profiles p_i.

x_i = u_i v_i,  u_i ~ Bernoulli(p_i),  v_i ~ U(0, 2)  (so ⟨v⟩ = 1, ⟨v²⟩ = 4/3), with Σ p_i = E. The paper's profiles:
a power law p_i ∝ i^(-α) (its code's alpha is α − 1), and for the large models an exponential p_i ∝ e^(-i/τ) and a
linear p_i ∝ n + 1 − i. NumPy only: the page and the contract read these without importing torch.
"""
from __future__ import annotations

import math

import numpy as np

from toymodels.errors import InputError

V_MEAN, V_SQ = 1.0, 4.0 / 3.0      # ⟨v⟩ and ⟨v²⟩ for v ~ U(0, 2)
PROFILES = ("power", "exponential", "linear")


def profile_weights(n: int, profile: str = "power", alpha: float = 1.0, tau: float | None = None) -> np.ndarray:
    """Unnormalised frequency profile over features i = 1…n.

    power: i^(-α); exponential: exp(−i/τ) (τ defaults to the paper's 400 rescaled to n: 400·n/10240);
    linear: n + 1 − i.
    """
    i = np.arange(1, n + 1, dtype=np.float64)
    if profile == "power":
        return i ** (-float(alpha))
    if profile == "exponential":
        t = 400.0 * n / 10240.0 if tau is None else float(tau)
        if not t > 0:
            raise InputError(f"the exponential profile needs τ > 0, got {t:g}")
        return np.exp(-(i - 1.0) / t)
    if profile == "linear":
        return n + 1.0 - i
    raise InputError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")


def feature_probs(n: int, alpha: float = 1.0, E: float = 1.0, profile: str = "power",
                  tau: float | None = None) -> np.ndarray:
    """Feature frequencies p_i (i = 1…n), scaled so that Σ p_i = E. Raises InputError if some p_i > 1.

    >>> p = feature_probs(4, alpha=1.0, E=1.0); bool(abs(p.sum() - 1) < 1e-12 and p[0] > p[1])
    True
    """
    w = profile_weights(n, profile, alpha, tau)
    p = E * w / w.sum()
    if p.max() > 1.0 + 1e-12:
        raise InputError(f"activation density E = {E:g} makes p_1 = {p.max():.3g} > 1 for this profile: "
                         "lower E or flatten the profile")
    return np.minimum(p, 1.0)


def n_eff(p) -> float:
    """Effective number of features (Σ p_i)² / Σ p_i², i.e. 1 / Σ q_i² for q = p / Σ p (the issue's N_eff)."""
    p = np.asarray(p, dtype=np.float64)
    return float(p.sum() ** 2 / np.sum(p * p))


def param_for_neff(profile: str, n: int, target: float) -> float:
    """The profile parameter (power: exponent α; exponential: τ) whose N_eff equals ``target`` (bisection)."""
    if profile == "power":
        lo, hi = 0.0, 4.0                     # N_eff falls as α grows
        if n_eff(profile_weights(n, "power", lo)) < target:
            raise InputError(f"no power law over n = {n} features reaches N_eff = {target:g} (at most {n})")
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if n_eff(profile_weights(n, "power", mid)) >= target else (lo, mid)
        return round(lo, 4)
    if profile == "exponential":
        lo, hi = 1e-3, 1e6                    # N_eff grows with τ
        if n_eff(profile_weights(n, "exponential", tau=hi)) < target:
            raise InputError(f"no exponential profile over n = {n} features reaches N_eff = {target:g}")
        for _ in range(80):
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if n_eff(profile_weights(n, "exponential", tau=mid)) >= target else (mid, hi)
        return round(hi, 3)
    raise InputError(f"profile {profile!r} has no parameter to set N_eff")
