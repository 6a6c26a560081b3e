"""The paper's measurements of collapse (§2-3, Fig. 1b-c), as its official ``collapse.ipynb`` defines them.

* Normalised curve of one run: ℓ(x) = (L(x T) - L0) / (L(T) - L0) against x = c / c(T) = t / T (compute c = p t,
  so the constant 6 and the size cancel), each seed normalised by its own final loss (the notebook's
  ``add_scaled_metrics`` on every seed's row).
* Spread across sizes Δ(x): the standard deviation over sizes p of the seed-mean curve ℓ̄_p(x).
* Seed noise σ(x): the standard deviation over seeds of ℓ_p(x), averaged over p.
* Supercollapse: Δ(x) < σ(x). Summaries are medians over x in ``SUMMARY_WINDOW`` = [0.2, 0.95].

With S seeds the seed mean itself carries noise σ/√S, so the measured Δ has a floor of about σ/√S even when the
expected curves coincide exactly. ``systematic_spread`` removes that floor; the expected (exact) curves give the
systematic spread directly.
"""
from __future__ import annotations

import numpy as np

from .config import N_X, SUMMARY_WINDOW, X_STEP


def x_grid() -> np.ndarray:
    """x = 0.02, 0.04, ..., 1.00: the normalised compute at which curves are compared. (N_X,)"""
    return np.round(X_STEP * np.arange(1, N_X + 1), 10)


def in_window(xs: np.ndarray) -> np.ndarray:
    """The points of ``xs`` inside the summary window [0.2, 0.95]."""
    lo, hi = SUMMARY_WINDOW
    return (xs >= lo - 1e-9) & (xs <= hi + 1e-9)


def record_steps(steps: int, xs: np.ndarray) -> np.ndarray:
    """The whole steps a run of ``steps`` steps must record to give L(x T) for every x by linear interpolation
    between neighbouring steps: ⌊x T⌋, ⌊x T⌋ + 1, and 0 and T. Sorted, distinct."""
    lo = np.floor(np.asarray(xs) * steps).astype(int)
    return np.unique(np.clip(np.concatenate([[0, steps], lo, lo + 1]), 0, steps))


def at_fractions(loss: np.ndarray, recorded: np.ndarray, steps: int, xs: np.ndarray) -> np.ndarray:
    """L(x T) for every x, linear between the recorded whole steps around x T. ``loss``: (..., len(recorded));
    returns (..., len(xs))."""
    xt = np.asarray(xs) * steps
    lo = np.clip(np.floor(xt).astype(int), 0, steps)
    hi = np.minimum(lo + 1, steps)
    recorded = np.asarray(recorded)
    i0 = np.minimum(np.searchsorted(recorded, lo), len(recorded) - 1)
    i1 = np.minimum(np.searchsorted(recorded, hi), len(recorded) - 1)
    if not (np.array_equal(recorded[i0], lo) and np.array_equal(recorded[i1], hi)):
        raise ValueError("the run did not record the steps around x T (see record_steps)")
    w = xt - lo
    return loss[..., i0] * (1.0 - w) + loss[..., i1] * w


def normalise(loss_x: np.ndarray, loss_final: np.ndarray, l0: float = 0.0) -> np.ndarray:
    """ℓ(x) = (L(x T) - L0) / (L(T) - L0); ``loss_final`` has the shape of ``loss_x`` without its last axis."""
    return (loss_x - l0) / (np.asarray(loss_final)[..., None] - l0)


def spread(ell: np.ndarray) -> np.ndarray:
    """Δ(x): the standard deviation over sizes (axis 0) of the curves ℓ_p(x). (k, n_x) -> (n_x,)"""
    return np.asarray(ell).std(axis=0)


def window_median(values: np.ndarray, xs: np.ndarray) -> float:
    """The median of ``values`` over the summary window of x (the paper-notes' summary of a curve)."""
    return float(np.median(np.asarray(values)[..., in_window(xs)], axis=-1))


def seed_collapse(loss_x: np.ndarray, loss_final: np.ndarray, l0: float = 0.0) -> dict:
    """Spread and noise of seeded runs. ``loss_x``: (k sizes, S seeds, n_x) losses at the x grid, ``loss_final``:
    (k, S) each run's final loss. Returns the seed-mean curves ``mean`` (k, n_x) and their seed standard
    deviations ``sd`` (k, n_x), ``spread`` Δ(x), ``noise`` σ(x), ``ratio`` Δ/σ and ``systematic`` (Δ with the
    finite-seed floor removed), each (n_x,)."""
    ell = normalise(np.asarray(loss_x, dtype=float), np.asarray(loss_final, dtype=float), l0)
    mean, sd = ell.mean(axis=1), ell.std(axis=1, ddof=1)
    delta, sigma = spread(mean), sd.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(sigma > 0, delta / sigma, np.inf)
    return {"mean": mean, "sd": sd, "spread": delta, "noise": sigma, "ratio": ratio,
            "systematic": systematic_spread(mean, sd, ell.shape[1])}


def systematic_spread(mean: np.ndarray, sd: np.ndarray, n_seeds: int) -> np.ndarray:
    """Δ with the seed-mean noise removed: √max(0, Var_p ℓ̄ - (k-1)/k · mean_p(s_p²) / S), since the variance over
    k sizes (divided by k) of seed means carries (k-1)/k · σ²/S of pure seed noise. (n_x,)"""
    k = mean.shape[0]
    floor = (k - 1) / k * (sd ** 2).mean(axis=0) / n_seeds
    return np.sqrt(np.maximum(0.0, mean.var(axis=0) - floor))


def misfit_l0(loss_final: np.ndarray, frac: float) -> float:
    """A misfit irreducible loss: ``frac`` times the (seed-mean) final loss of the largest size (the true L0 of
    this model is 0). ``loss_final``: (k, S) or (k,), sizes ascending."""
    last = np.asarray(loss_final, dtype=float)[-1]
    return float(frac * np.mean(last))


def _windowed(ell: np.ndarray, xs: np.ndarray, idx: np.ndarray, what: str, exact: np.ndarray | None = None):
    """For each resample of seeds (a row of ``idx``), the windowed median of Δ/σ (``ratio``), of σ (``noise``),
    of the systematic Δ over σ (``systematic``) or of a given exact spread over σ (``exact``, (n_x,)).
    ``ell``: (k, S, n_x); ``idx``: (R, m) seed indices. Returns (R,)."""
    win = in_window(xs)
    e = ell[:, :, win]
    out = np.empty(len(idx))
    for start in range(0, len(idx), 200):
        rows = idx[start:start + 200]
        sample = e[:, rows, :]                                            # (k, R, m, n_w)
        mean, sd = sample.mean(axis=2), sample.std(axis=2, ddof=1)        # (k, R, n_w)
        sigma = sd.mean(axis=0)                                           # (R, n_w)
        with np.errstate(divide="ignore", invalid="ignore"):
            if what == "noise":
                val = sigma
            elif what == "ratio":
                val = mean.std(axis=0) / sigma
            elif what == "exact":
                val = np.asarray(exact)[win] / sigma
            else:
                k, m = mean.shape[0], sample.shape[2]
                floor = (k - 1) / k * (sd ** 2).mean(axis=0) / m
                val = np.sqrt(np.maximum(0.0, mean.var(axis=0) - floor)) / sigma
        out[start:start + len(rows)] = np.median(val, axis=-1)
    return out


def seed_bootstrap(statistic, n_seeds: int, resamples: int, seed: int, level: float = 0.95,
                   point: float | None = None) -> tuple[float, float]:
    """A bootstrap interval over seeds: the seeds are the units, resampled with replacement, the same draw for every
    size and arm (so two schedules run on the same seeds stay paired). ``statistic(idx)``: (R, m) seed indices ->
    (R,) values.

    With ``point`` (the statistic on all seeds), the normal bootstrap interval point ± z·sd(resampled statistics):
    it contains its point estimate by construction (issue 41). The percentile interval (without ``point``) does
    not here: a resample with repeated seeds has a smaller seed spread (its plug-in variance is (S-1)/S of the
    sample's), and where Δ is mostly the finite-seed floor a resampled Δ carries the floor twice,
    √(Δ² + (k-1)/k σ²/S), so the resampled Δ/σ sit above the point (up to √2 ×) and a percentile interval can
    exclude it (0.11 with [0.12, 0.14]). BCa was tried: undefined where every resample lies above the point."""
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_seeds, size=(resamples, n_seeds))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.asarray(statistic(idx), dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return float("nan"), float("nan")
    if point is None:
        a = (1 - level) / 2
        return float(np.quantile(values, a)), float(np.quantile(values, 1 - a))
    half = float(norm.ppf(0.5 + level / 2)) * float(values.std(ddof=1))
    return float(point) - half, float(point) + half


def ratio_summary(loss_x: np.ndarray, loss_final: np.ndarray, xs: np.ndarray, l0: float = 0.0,
                  resamples: int = 2000, seed: int = 0, exact: np.ndarray | None = None) -> dict:
    """Δ/σ, σ and the systematic Δ/σ of seeded runs (and, given the exact spread Δ(x) of their expected curves,
    ``exact`` over σ), as windowed medians with 95% normal bootstrap intervals over seeds around them
    (``seed_bootstrap``)."""
    ell = normalise(np.asarray(loss_x, dtype=float), np.asarray(loss_final, dtype=float), l0)
    stats = seed_collapse(loss_x, loss_final, l0)
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        points = {"ratio": stats["ratio"], "noise": stats["noise"], "systematic": stats["systematic"] / stats["noise"]}
        if exact is not None:
            points["exact"] = np.asarray(exact) / stats["noise"]
    for what, point in points.items():
        out[what] = window_median(point, xs)
        out[f"{what}_ci"] = list(seed_bootstrap(lambda idx, w=what: _windowed(ell, xs, idx, w, exact), ell.shape[1],
                                                resamples, seed, point=out[what]))
    out["spread"] = window_median(stats["spread"], xs)
    return out


def noise_ratio(loss_x_a, loss_final_a, loss_x_b, loss_final_b, xs: np.ndarray, resamples: int = 2000,
                seed: int = 0) -> dict:
    """The windowed median seed noise of arm a over that of arm b (same seeds: paired), with its 95% bootstrap
    interval (``seed_bootstrap``)."""
    ell_a = normalise(np.asarray(loss_x_a, float), np.asarray(loss_final_a, float))
    ell_b = normalise(np.asarray(loss_x_b, float), np.asarray(loss_final_b, float))
    point = window_median(seed_collapse(loss_x_a, loss_final_a)["noise"], xs) / \
        window_median(seed_collapse(loss_x_b, loss_final_b)["noise"], xs)
    ci = seed_bootstrap(lambda idx: _windowed(ell_a, xs, idx, "noise") / _windowed(ell_b, xs, idx, "noise"),
                        ell_a.shape[1], resamples, seed, point=float(point))
    return {"ratio": float(point), "ratio_ci": list(ci)}


# --------------------------------------------------------------------------- the compute-optimal frontier


def frontier(curves: list[tuple[int, np.ndarray, np.ndarray]], n_points: int = 400) -> dict:
    """The lower envelope of loss against compute c = p t over sizes (``curves``: (p, steps, loss), steps ascending
    from 1, constant learning rate), as the official ``fit_optimal_horizon.ipynb`` reads the Pareto frontier, and
    for each size the range of compute where it is the best size.

    A size competes at compute c while its run covers t = c / p. Returns ``compute`` (n_points,), ``loss`` (the
    envelope), ``best`` (the best size at each compute), and per size ``optimal_steps``: the geometric middle of
    the steps t = c / p over which it is best, NaN unless that interval is a whole one: the size was already
    running when it took the lead and still running when it lost it (so the first and the last size, and a
    size whose run was too short, give NaN).
    """
    lo = min(float(p * s[0]) for p, s, _ in curves)
    hi = max(float(p * s[-1]) for p, s, _ in curves)
    cs = np.geomspace(lo, hi, n_points)
    table = np.full((len(curves), n_points), np.inf)
    for i, (p, steps, loss) in enumerate(curves):
        t = cs / p
        ok = (t >= steps[0]) & (t <= steps[-1])
        table[i, ok] = np.exp(np.interp(np.log(t[ok]), np.log(steps), np.log(loss)))
    best = table.argmin(axis=0)
    sizes = np.array([p for p, _, _ in curves])
    optimal = np.full(len(curves), np.nan)
    for i in range(len(curves)):
        where = np.flatnonzero(best == i)
        if not len(where) or where[0] == 0 or where[-1] == n_points - 1:
            continue
        if np.isfinite(table[i, where[0] - 1]) and np.isfinite(table[i, where[-1] + 1]):
            optimal[i] = np.sqrt(cs[where[0]] * cs[where[-1]]) / sizes[i]
    return {"compute": cs, "loss": table.min(axis=0), "best": sizes[best], "sizes": sizes,
            "optimal_steps": optimal}


def fit_power(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least squares of log y = log c + k log x over the finite points: (k, c)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    k, logc = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return float(k), float(np.exp(logc))
