"""The paper's measurements against brute force and planted answers: interpolation, spread and noise, the
finite-seed floor, the L0 misfit formula, the frontier of a known scaling law, the schedule model's α."""
import numpy as np
import pytest

from toymodels.supercollapse import collapse as C
from toymodels.supercollapse import noise_model as N


def test_x_grid_and_window():
    xs = C.x_grid()
    assert xs[0] == pytest.approx(0.02) and xs[-1] == pytest.approx(1.0) and len(xs) == 50
    inside = xs[C.in_window(xs)]
    assert inside[0] == pytest.approx(0.2) and inside[-1] == pytest.approx(0.94)


def test_at_fractions_interpolates_between_whole_steps():
    steps = 10
    xs = np.array([0.25, 0.5, 1.0])                      # x T = 2.5, 5, 10
    rec = C.record_steps(steps, xs)
    assert set([2, 3, 5, 6, 10, 0]) <= set(rec.tolist())
    loss = np.array([100.0 - t ** 2 for t in rec])       # any curve: linear between the two neighbours
    got = C.at_fractions(loss, rec, steps, xs)
    assert got == pytest.approx([100 - (4 + 9) / 2, 100 - 25, 100 - 100])
    with pytest.raises(ValueError):
        C.at_fractions(loss[:3], rec[:3], steps, xs)


def test_seed_collapse_by_brute_force_loops():
    rng = np.random.default_rng(1)
    k, s, n = 3, 5, 7
    lx = 1 + rng.random((k, s, n))
    lf = 0.5 + rng.random((k, s))
    out = C.seed_collapse(lx, lf, l0=0.1)
    ell = [[[(lx[i, j, x] - 0.1) / (lf[i, j] - 0.1) for x in range(n)] for j in range(s)] for i in range(k)]
    ell = np.array(ell)
    for x in range(n):
        means = [np.mean(ell[i, :, x]) for i in range(k)]
        sds = [np.std(ell[i, :, x], ddof=1) for i in range(k)]
        assert out["spread"][x] == pytest.approx(np.std(means))
        assert out["noise"][x] == pytest.approx(np.mean(sds))
        assert out["ratio"][x] == pytest.approx(np.std(means) / np.mean(sds))


def test_the_finite_seed_floor_and_its_removal():
    # Identical true curves plus seed noise: the measured spread is pure floor, √((k-1)/k /S) σ; the systematic
    # spread is about zero. Add a known offset per size: the systematic spread recovers it.
    rng = np.random.default_rng(0)
    k, s, n, sigma = 4, 10, 400, 0.01
    true = np.linspace(2.0, 1.2, n)
    lf = np.ones((k, s))
    noise = sigma * rng.standard_normal((k, s, n))
    flat = C.seed_collapse(true + noise, lf)
    floor = np.sqrt((k - 1) / k / s) * sigma
    assert np.sqrt(np.mean(flat["spread"] ** 2)) == pytest.approx(floor, rel=0.1)
    assert np.median(flat["systematic"]) < 0.3 * floor
    offsets = np.array([-1.5, -0.5, 0.5, 1.5])[:, None, None] * 0.01    # population std 0.0112
    shifted = C.seed_collapse(true + offsets + noise, lf)
    assert np.median(shifted["systematic"]) == pytest.approx(np.std(offsets), rel=0.1)


def test_a_misfit_l0_by_the_formula():
    # ℓ_L0 = 1 + (ℓ - 1) / (1 - r), r = L0 / L(T): curves that collapse exactly at L0 = 0 (L_p = c_p g(x)) spread
    # by that formula at L0 ≠ 0.
    g = np.linspace(3.0, 1.0, 20)
    c = np.array([1.0, 0.7, 0.5])
    lx = (c[:, None] * g)[:, None, :].repeat(2, axis=1)
    lf = c[:, None].repeat(2, axis=1)
    assert np.allclose(C.seed_collapse(lx, lf)["spread"], 0, atol=1e-15)
    l0 = C.misfit_l0(lf, 0.2)
    assert l0 == pytest.approx(0.1)
    r = l0 / c
    want = np.std(1 + (g - 1)[None, :] / (1 - r[:, None]), axis=0)
    assert np.allclose(C.seed_collapse(lx, lf, l0)["spread"], want)


def test_bootstrap_intervals_contain_their_points_and_the_percentile_bias_is_real():
    """Issue 41: the shipped intervals are normal bootstrap intervals (point ± z sd), which contain their points;
    the percentile interval of the same resamples sits above the point where Δ is the seed floor (the stated bias:
    a resampled Δ carries the floor twice), which is why it was replaced."""
    rng = np.random.default_rng(2)
    xs, k, s = C.x_grid(), 4, 20
    trend = np.linspace(1, 0, 50)
    # Systematic spread (offsets 10x the noise): the interval is centred on the point.
    offsets = np.array([-1.5, -0.5, 0.5, 1.5])[:, None, None] * 0.1
    lx = 1 + trend + offsets + 0.01 * rng.standard_normal((k, s, 50))
    lf = np.ones((k, s))
    sys = C.ratio_summary(lx, lf, xs, resamples=500, seed=0)
    assert sys["ratio"] == pytest.approx(np.std(offsets) / 0.01, rel=0.15)
    lo, hi = sys["ratio_ci"]
    assert lo < sys["ratio"] < hi and (lo + hi) / 2 == pytest.approx(sys["ratio"], rel=1e-9)
    # Pure seed noise: Δ is the floor √((k-1)/k/S) σ; the normal interval contains it ...
    pure = 1 + trend + 0.01 * rng.standard_normal((k, s, 50))
    floor = C.ratio_summary(pure, lf, xs, resamples=500, seed=0)
    assert floor["ratio"] == pytest.approx(np.sqrt((k - 1) / k / s), rel=0.25)
    assert floor["ratio_ci"][0] <= floor["ratio"] <= floor["ratio_ci"][1]
    # ... while the percentile interval of the same resamples lies above it, around √2 times the point
    ell = C.normalise(pure, lf)
    plo, phi = C.seed_bootstrap(lambda idx: C._windowed(ell, xs, idx, "ratio"), s, 500, 0)
    assert floor["ratio"] < plo and np.mean([plo, phi]) == pytest.approx(np.sqrt(2) * floor["ratio"], rel=0.25)
    # The exact spread over σ: a given Δ(x) = 0.005 against σ = 0.01 reads 0.5, its interval around it.
    ex = C.ratio_summary(pure, lf, xs, resamples=500, seed=0, exact=np.full(50, 0.005))
    assert ex["exact"] == pytest.approx(0.5, rel=0.1)
    assert ex["exact_ci"][0] < ex["exact"] < ex["exact_ci"][1]


def test_the_noise_ratio_is_paired():
    rng = np.random.default_rng(4)
    xs, trend = C.x_grid(), np.linspace(1, 0, 50)
    eps = rng.standard_normal((4, 20, 50))
    lf = np.ones((4, 20))
    same = C.noise_ratio(1 + trend + 0.01 * eps, lf, 1 + trend + 0.01 * eps, lf, xs, resamples=200)
    assert same["ratio"] == pytest.approx(1.0) and same["ratio_ci"] == pytest.approx([1.0, 1.0])
    # the same draws at half the amplitude: exactly 0.5 in every resample (pairing), so a zero-width interval
    half = C.noise_ratio(1 + trend + 0.005 * eps, lf, 1 + trend + 0.01 * eps, lf, xs, resamples=200)
    assert half["ratio"] == pytest.approx(0.5) and half["ratio_ci"] == pytest.approx([0.5, 0.5])


def test_the_frontier_of_a_known_scaling_law():
    # L(t, p) = p^-0.5 + t^-(1/3): at compute c = p t the best p solves 0.5 p^-1.5 = (1/3) (c/p)^(-1/3) / p, so
    # t_opt = (2/3)^3 p^1.5: the optimal horizon grows as p^1.5 with prefactor 8/27.
    sizes = [int(round(32 * 2 ** (k / 4))) for k in range(21)]
    curves = []
    for p in sizes:
        steps = np.unique(np.round(np.geomspace(1, 40 * p ** 1.5, 400)))
        curves.append((p, steps, p ** -0.5 + steps ** (-1 / 3)))
    env = C.frontier(curves, n_points=2000)
    ok = np.isfinite(env["optimal_steps"])
    assert 10 <= ok.sum() <= len(sizes) - 2                        # the first and last sizes have no whole interval
    gamma, scale = C.fit_power(env["sizes"][ok], env["optimal_steps"][ok])
    assert gamma == pytest.approx(1.5, abs=0.02)
    assert scale == pytest.approx(8 / 27, rel=0.15)


def test_fit_power_recovers_a_planted_law():
    x = np.array([1.0, 2, 4, 8, np.nan])
    assert C.fit_power(x, 3 * x ** 1.7) == pytest.approx((1.7, 3.0))


def test_schedule_model_pieces_by_hand():
    lrs = np.array([0.2, 0.1, 0.0])
    assert N.flow_time(lrs, 0.2) == pytest.approx([0, 1, 1.5, 1.5])
    const = np.array([4.0, 3.0, 2.0, 1.0])
    sched = np.array([4.0, 3.5, 3.0, 2.0])
    # τ = 0, 1, 1.5, 1.5 -> L_const(τ) = 4, 3, 2.5, 2.5
    assert N.deformation(sched, const, lrs, 0.2) == pytest.approx([0, 0.5, 0.5, -0.5])
    assert N.noise_term(lrs, np.array([1.0, 2.0, 3.0, 4.0]), 0.2) == pytest.approx([0, -0.2, -0.6, -0.8])


def test_fit_alpha_recovers_a_planted_alpha():
    rng = np.random.default_rng(3)
    terms = [rng.standard_normal(50), rng.standard_normal(80)]
    deform = [0.37 * t for t in terms]
    assert N.fit_alpha(deform, terms) == pytest.approx(0.37)
    assert N.relative_error(deform[0], terms[0], 0.37) == pytest.approx(0.0, abs=1e-12)
    assert N.relative_error(deform[0], terms[0], 0.0) == pytest.approx(1.0)
