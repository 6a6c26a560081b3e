"""The pass@k estimator (paper Eq. 2, App. A.2, from Chen et al. 2021).

With n samples of a problem of which c are correct,

    pass@k = 1 - C(n-c, k) / C(n, k),     averaged over problems.

``pass_at_k`` evaluates it in product form, C(n-c, k)/C(n, k) = prod_{t<k} (1 - c/(n-t)), vectorised (one
cumulative product per distinct (n, c) pair, then a gather), with no binomial coefficient ever formed. The
official code (``math/pass@k.py``) computes the same product: ``1 - prod(1 - k / arange(n - c + 1, n + 1))``.
"""
from __future__ import annotations

import math

import numpy as np

from toymodels.errors import InputError

COUNT_LIMIT = 2**53  # counts above this are not exact in float64 (and would overflow int64 near 9.2e18)


def _as_counts(x, name: str) -> np.ndarray:
    """``x`` as an int64 array of whole, non-negative counts no larger than COUNT_LIMIT; InputError otherwise."""
    try:
        a = np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        raise InputError(f"{name} must be an array of whole numbers") from None
    if a.dtype == bool:
        a = a.astype(np.int64)
    if a.dtype.kind not in "iuf":
        raise InputError(f"{name} must be numeric, got dtype {a.dtype}")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)):
            raise InputError(f"{name} must be finite")
        if np.any(a != np.round(a)):
            raise InputError(f"{name} must be whole numbers")
        if a.size and (a.min() < 0):
            raise InputError(f"{name} must be non-negative (got {a.min():g})")
        if a.size and a.max() > COUNT_LIMIT:
            raise InputError(f"{name} is too large (got {a.max():g}; the limit is 2**53)")
    elif a.dtype.kind == "u" and a.size and a.max() > COUNT_LIMIT:
        raise InputError(f"{name} is too large (got {a.max()}; the limit is 2**53)")
    a = a.astype(np.int64)
    if a.size and a.min() < 0:
        raise InputError(f"{name} must be non-negative (got {a.min()})")
    if a.size and a.max() > COUNT_LIMIT:
        raise InputError(f"{name} is too large (got {a.max()}; the limit is 2**53)")
    return a


def _survival_table(n: np.ndarray, c: np.ndarray, kmax: int) -> np.ndarray:
    """R[u, k] = C(n_u - c_u, k) / C(n_u, k) for k = 0..kmax, as prod_{t<k} (1 - c/(n - t)).

    Each factor lies in [0, 1] (clipped to 0 once t >= n - c, where the binomial ratio is exactly 0), so the
    cumulative product never overflows and loses at most O(k) ulps; it underflows harmlessly to 0.
    """
    out = np.empty((len(n), kmax + 1))
    out[:, 0] = 1.0
    if kmax == 0:
        return out
    t = np.arange(kmax, dtype=np.float64)
    rows = max(1, 4_000_000 // max(kmax, 1))  # bound the temporary to ~32 MB
    for lo in range(0, len(n), rows):
        nn = n[lo:lo + rows, None].astype(np.float64)
        cc = c[lo:lo + rows, None].astype(np.float64)
        denom = nn - t
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(denom > 0, 1.0 - cc / denom, 0.0)
        np.clip(f, 0.0, 1.0, out=f)
        np.cumprod(f, axis=1, out=out[lo:lo + rows, 1:])
    return out


TABLE_LIMIT = 20_000_000  # entries of the (distinct (n, c)) x k table before switching to log-gamma


def _pass_at_k_lgamma(n, c, k) -> np.ndarray:
    """1 - C(n-c, k)/C(n, k) through log-gamma (for very large n, where a table over every k would not fit).
    Relative error ~1e-12 on the ratio; exactly 1 where n - c < k."""
    from scipy.special import gammaln

    n, c, k = (np.asarray(a, dtype=np.float64) for a in (n, c, k))
    short = n - c < k
    safe_k = np.where(short, 0.0, k)
    log_ratio = gammaln(n - c + 1) - gammaln(n - c - safe_k + 1) - gammaln(n + 1) + gammaln(n - safe_k + 1)
    return np.where(short, 1.0, -np.expm1(np.minimum(log_ratio, 0.0)))


def pass_at_k(n, c, k):
    """Unbiased pass@k of one problem (paper Eq. 2): 1 - C(n-c, k)/C(n, k).

    Parameters
    ----------
    n, c, k : int or array-like of ints, broadcast together (NumPy rules)
        Samples drawn, samples correct, and the budget k.

    Returns
    -------
    float (all scalar inputs) or ndarray of the broadcast shape. Exactly 1.0 where n - c < k, 0.0 where c = 0.

    Raises
    ------
    InputError (a ValueError)
        If any value is negative, not a whole number or above 2**53, if c > n, or if k > n.

    Example
    -------
    >>> pass_at_k(4, 1, 2)          # 1 - C(3,2)/C(4,2) = 1 - 3/6
    0.5
    >>> pass_at_k([10, 10], [0, 10], 3).tolist()
    [0.0, 1.0]
    """
    n_a, c_a, k_a = _as_counts(n, "n"), _as_counts(c, "c"), _as_counts(k, "k")
    scalar = n_a.ndim == 0 and c_a.ndim == 0 and k_a.ndim == 0
    n_b, c_b = np.broadcast_arrays(n_a, c_a)
    if np.any(c_b > n_b):
        i = np.unravel_index(int(np.argmax(c_b > n_b)), c_b.shape)
        raise InputError(f"c > n at index {i}: c={c_b[i]}, n={n_b[i]} (cannot have more correct samples than samples)")
    shape = np.broadcast_shapes(n_b.shape, k_a.shape)
    if k_a.size and n_b.size and np.any(np.broadcast_to(k_a, shape) > np.broadcast_to(n_b, shape)):
        raise InputError(f"k > n: the estimator needs at least k samples (max k={int(k_a.max())}, "
                         f"min n={int(n_b.min())})")
    if n_b.size == 0 or k_a.size == 0:
        return np.zeros(shape)
    pairs, inv = np.unique(np.stack([n_b.ravel(), c_b.ravel()], 1), axis=0, return_inverse=True)
    if len(pairs) * (int(k_a.max()) + 1) > TABLE_LIMIT:  # huge n: evaluate each element directly instead
        out = _pass_at_k_lgamma(*np.broadcast_arrays(n_b, c_b, k_a))
        return float(out) if scalar else out
    table = _survival_table(pairs[:, 0], pairs[:, 1], int(k_a.max()))
    idx = inv.reshape(n_b.shape)
    flat = idx * table.shape[1] + k_a  # broadcast linear index: a flat take is ~4x faster than 2-D fancy indexing
    out = 1.0 - np.take(table.ravel(), flat)
    return float(out) if scalar else np.asarray(out, dtype=np.float64).reshape(shape)


def pass_at_k_curve(n, c, ks) -> np.ndarray:
    """Mean over problems of ``pass_at_k(n_i, c_i, k)`` for each k in ``ks``.

    ``n`` is one number (every problem sampled n times) or one per problem; ``c`` has one entry per problem.
    Returns an array with one value per k.

    >>> pass_at_k_curve(4, [0, 1, 4], [1, 2]).round(4).tolist()
    [0.4167, 0.5]
    """
    c_a = np.atleast_1d(_as_counts(c, "c"))
    n_a = np.broadcast_to(np.atleast_1d(_as_counts(n, "n")), c_a.shape)
    ks_a = np.atleast_1d(_as_counts(ks, "ks"))
    if c_a.size == 0:
        raise InputError("pass_at_k_curve needs at least one problem")
    pass_at_k(n_a[:1], c_a[:1], ks_a[:1])  # the same validation messages as pass_at_k ...
    if np.any(c_a > n_a):
        i = int(np.argmax(c_a > n_a))
        raise InputError(f"c > n for problem {i}: c={c_a[i]}, n={n_a[i]}")
    if ks_a.size and ks_a.max() > n_a.min():
        raise InputError(f"k > n: the estimator needs at least k samples (max k={int(ks_a.max())}, "
                         f"min n={int(n_a.min())})")
    # ... then one survival row per distinct (n, c), weighted by how many problems share it
    pairs, counts = np.unique(np.stack([n_a, c_a], 1), axis=0, return_counts=True)
    if ks_a.size and len(pairs) * (int(ks_a.max()) + 1) > TABLE_LIMIT:
        vals = _pass_at_k_lgamma(pairs[:, 0, None], pairs[:, 1, None], ks_a[None, :])
        return (counts @ vals) / c_a.size
    table = _survival_table(pairs[:, 0], pairs[:, 1], int(ks_a.max()) if ks_a.size else 0)
    return 1.0 - (counts @ table[:, ks_a]) / c_a.size


def pass_at_k_exact(p, ks) -> np.ndarray:
    """Exact pass@k from per-problem success probabilities: mean_i 1 - (1 - p_i)^k, one value per k."""
    p = np.asarray(p, dtype=np.float64)[..., :, None]
    ks = np.asarray(ks, dtype=np.float64)
    return 1.0 - np.exp(ks * np.log1p(-np.clip(p, 0.0, 1.0 - 1e-300))).mean(axis=-2) if p.size else np.zeros(len(ks))


def pass_at_k_loop(n, c, k) -> float:
    """The straightforward reference: mean over problems of 1 - comb(n-c, k)/comb(n, k) with exact integers."""
    vals = []
    for ni, ci in zip(np.broadcast_to(n, np.shape(c)), c):
        ni, ci = int(ni), int(ci)
        vals.append(1.0 if ni - ci < k else 1.0 - math.comb(ni - ci, k) / math.comb(ni, k))
    return float(np.mean(vals))


def crossover_k(ks, base, rl, tol: float = 1e-12) -> int | None:
    """Smallest k at which the base model's pass@k is at least the RL model's, None if there is none.

    A tie only counts if base goes on to lead strictly at some k at or after it: two curves that merely meet
    (for instance both at 1.0, or both solving exactly the same problems at k = n) have not crossed.

    >>> crossover_k([1, 2, 4], [0.1, 0.5, 0.9], [0.3, 0.5, 0.6])
    2
    >>> crossover_k([1, 2, 4], [0.1, 0.5, 0.9], [0.3, 0.6, 0.9]) is None
    True
    """
    ks, base, rl = np.asarray(ks), np.asarray(base, dtype=float), np.asarray(rl, dtype=float)
    ge = base >= rl - tol
    lead_later = np.flip(np.logical_or.accumulate(np.flip(base > rl + tol)))
    hit = np.nonzero(ge & lead_later)[0]
    return int(ks[hit[0]]) if hit.size else None


def k_grid(k_max: int, points: int = 48) -> np.ndarray:
    """Every power of two up to k_max, plus log-spaced integers, plus k_max itself (for charts)."""
    k_max = int(k_max)
    pw = 2 ** np.arange(0, int(np.floor(np.log2(max(k_max, 1)))) + 1)
    logs = np.unique(np.round(np.logspace(0, np.log10(max(k_max, 1)), points)).astype(int))
    return np.unique(np.concatenate([pw, logs, [k_max]]))


SE_K = 256  # the paper's Δ_SE budget: pass@256(base) − pass@1(RL)
