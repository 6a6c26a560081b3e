"""Intervals over seeds, for the claims: a t-interval for a mean, Clopper–Pearson for a share of seeds, and a
percentile bootstrap for a median (a crossover k, which can be "none": +inf)."""
from __future__ import annotations

import numpy as np
from scipy.special import betaincinv, stdtrit  # = scipy.stats' t.ppf and beta.ppf, bit for bit, and 0.6 s faster


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lo, hi): the two-sided Student-t interval of the mean of ``values`` (one per seed).

    >>> t_interval([1.0, 2.0, 3.0])[0]
    2.0
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        m = float(x.mean()) if x.size else float("nan")
        return m, float("nan"), float("nan")
    m, se = float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))
    half = float(stdtrit(x.size - 1, 0.5 + level / 2)) * se
    return m, m - half, m + half


def clopper_pearson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a share: ``successes`` of ``n`` seeds.

    >>> round(clopper_pearson(20, 20)[0], 4)     # (0.025) ** (1 / 20)
    0.8316
    """
    alpha = 1 - level
    lo = 0.0 if successes == 0 else float(betaincinv(successes, n - successes + 1, alpha / 2))
    hi = 1.0 if successes == n else float(betaincinv(successes + 1, n - successes, 1 - alpha / 2))
    return lo, hi


def bootstrap_median(values, level: float = 0.95, resamples: int = 4000, seed: int = 0) -> tuple[float, float, float]:
    """(median, lo, hi): the median of ``values`` and its percentile-bootstrap interval (seeded). Values may be
    +inf (a crossover that never happens up to k = n); the interval is then +inf where the resampled medians are."""
    x = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    meds = np.median(x[rng.integers(0, x.size, size=(resamples, x.size))], axis=1)
    lo, hi = np.quantile(meds, [(1 - level) / 2, 0.5 + level / 2], method="inverted_cdf")
    return float(np.median(x)), float(lo), float(hi)
