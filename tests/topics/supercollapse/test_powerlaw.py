"""The power-law model's math against independent computations: brute-force sums, a step worked by hand, the
gradient-descent limit in closed form."""
import math

import numpy as np
import pytest

from toymodels.supercollapse import powerlaw as P


def test_tail_variance_is_the_sum_of_the_features_beyond_p():
    # Σ_{j>p} j^-b by brute force up to 10^6, plus the integral of the rest (∫_{N+1/2}^∞ j^-b dj, midpoint rule)
    for p, b in [(10, 1.5), (64, 1.5), (3, 2.0)]:
        j = np.arange(p + 1, 10 ** 6 + 1, dtype=float)
        brute = (j ** -b).sum() + (10 ** 6 + 0.5) ** (1 - b) / (b - 1)
        assert P.tail_variance(p, b) == pytest.approx(brute, rel=1e-9)
    assert P.tail_variance(2, 2.0) == pytest.approx(math.pi ** 2 / 6 - 1.25, rel=1e-12)


def test_spectrum_and_signal_powers():
    lam, m0 = P.spectrum(4, 1.5), P.initial_moments(4, 1.5, 2.0)
    assert np.allclose(lam, [1, 2 ** -1.5, 3 ** -1.5, 4 ** -1.5])
    assert np.allclose(lam * m0, np.arange(1, 5) ** -2.0)       # λ_j β_j² = j^-b


def test_schedules_by_hand():
    assert np.allclose(P.lr_schedule("constant", 3, 0.2), [0.2, 0.2, 0.2])
    assert np.allclose(P.lr_schedule("linear", 4, 0.2), [0.2, 0.15, 0.1, 0.05])
    assert np.allclose(P.lr_schedule("cosine", 2, 0.2), [0.2, 0.1])
    with pytest.raises(ValueError):
        P.lr_schedule("step", 3, 0.2)


def test_horizon_is_t0_times_a_power_of_the_size_ratio():
    assert P.horizon(64, 1.5, 830, 64) == 830
    assert P.horizon(256, 1.5, 830, 64) == 830 * 8
    assert P.horizon(128, 1.0, 300, 64) == 600
    assert P.horizon(64, 1.5, 0.2, 64) == 1                      # at least one step


def test_one_step_of_the_recursion_worked_by_hand():
    # p = 2, a = b = 2: λ = (1, 1/4), m(0) = (1, 1), ζ(2, 3) = π²/6 - 5/4, so E L(0) = π²/6. η = 0.1, B = 4:
    #   m1 = 1 - 2(0.1)(1) + (0.01)(1)(1.25) + (0.01)(1)/4 · π²/6       = 0.8125 + 0.0025 · 1.644934... = 0.816612335
    #   m2 = 1 - 2(0.1)(1/4) + (0.01)(1/16)(1.25) + (0.01)(1/4)/4 · π²/6 = 0.95078125 + 0.000625 · 1.644934 = 0.95180933
    #   E L(1) = m1 + m2 / 4 + ζ(2, 3)                                   = 1.449498735
    zeta2 = math.pi ** 2 / 6
    m1 = 0.8125 + 0.0025 * zeta2
    m2 = 0.95078125 + 0.000625 * zeta2
    loss = P.expected_loss(2, np.array([[0.1]]), batch=4, a=2.0, b=2.0)["loss"][0]
    assert loss[0] == pytest.approx(zeta2, rel=1e-12)
    assert loss[1] == pytest.approx(m1 + m2 / 4 + zeta2 - 1.25, rel=1e-12)
    assert loss[1] == pytest.approx(1.449498735, abs=1e-9)
    assert np.allclose(P.expected_moments(2, np.array([0.1]), 4, 2.0, 2.0, [1])[0], [m1, m2], rtol=1e-12)


def test_infinite_batch_is_gradient_descent_in_closed_form():
    # With B -> infinity the noise terms vanish: m_j(t) = (1 - η λ_j)^(2t) m_j(0) exactly.
    p, a, b, eta, steps = 50, 1.5, 1.5, 0.3, 200
    loss = P.expected_loss(p, np.full((1, steps), eta), batch=10 ** 12, a=a, b=b)["loss"][0]
    lam, m0 = P.spectrum(p, a), P.initial_moments(p, a, b)
    t = np.arange(steps + 1)[:, None]
    closed = ((1 - eta * lam) ** (2 * t) * m0 * lam).sum(axis=1) + P.tail_variance(p, b)
    assert np.allclose(loss, closed, rtol=1e-9)


def test_rows_advance_independently_and_zero_rates_freeze():
    lrs = np.stack([P.lr_schedule("linear", 40, 0.2), P.lr_schedule("cosine", 40, 0.2)])
    both = P.expected_loss(32, lrs, 16, 1.5, 1.5)["loss"]
    for r in range(2):
        alone = P.expected_loss(32, lrs[r:r + 1], 16, 1.5, 1.5)["loss"][0]
        assert np.array_equal(both[r], alone)
    padded = np.concatenate([P.lr_schedule("constant", 10, 0.2), np.zeros(5)])[None]
    out = P.expected_loss(32, padded, 16, 1.5, 1.5)["loss"][0]
    assert np.all(out[10:] == out[10])                          # η = 0 leaves the moments where they were


def test_gradient_covariance_trace_by_brute_force():
    # tr Σ_B = (1/B) Σ_j (E[x_j² r²] - (E x_j r)²): estimated from samples at the moments after 30 steps, with the
    # deterministic δ_j = ±√m_j (the trace is linear in the δ_j², so any δ with these squares gives the same value).
    p, a, b, batch = 6, 1.5, 1.5, 8
    lrs = P.lr_schedule("constant", 30, 0.2)
    run = P.expected_loss(p, lrs[None], batch, a, b, with_noise_trace=True)
    m = P.expected_moments(p, lrs, batch, a, b, [30])[0]
    lam, tail = P.spectrum(p, a), P.tail_variance(p, b)
    rng = np.random.default_rng(0)
    n = 400_000
    x = rng.standard_normal((n, p)) * np.sqrt(lam)
    r = x @ np.sqrt(m) - rng.standard_normal(n) * np.sqrt(tail)
    g = x * r[:, None]
    brute = g.var(axis=0).sum() / batch
    assert run["grad_cov_trace"][0, 30] == pytest.approx(brute, rel=0.02)
