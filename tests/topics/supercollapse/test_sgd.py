"""Seeded SGD against the exact recursion (Monte Carlo), the fast sampler against the plain minibatch (in
distribution, and one step's first two moments against their closed forms), and the seeds' independence."""
import numpy as np
import pytest
from scipy import stats

from toymodels.supercollapse import powerlaw as P
from toymodels.supercollapse.sgd import simulate

A = B_EXP = 1.5


@pytest.mark.parametrize("sampler", ["fast", "plain"])
@pytest.mark.parametrize("schedule", ["constant", "linear"])
def test_seed_means_match_the_exact_recursion(sampler, schedule):
    p, steps, seeds = 16, 60, 3000
    rec = np.array([0, 1, 5, 20, 59, 60])
    out = simulate([p], [steps], schedule, 0.2, 4, A, B_EXP, range(seeds), [rec], sampler=sampler)
    lrs = P.lr_schedule(schedule, steps, 0.2)
    exact = P.expected_loss(p, lrs[None], 4, A, B_EXP)["loss"][0][rec]
    loss = out["loss"][0]
    assert loss[:, 0] == pytest.approx(exact[0])                                 # θ(0) = 0 for every seed
    z = (loss[:, 1:].mean(axis=0) - exact[1:]) / (loss[:, 1:].std(axis=0, ddof=1) / np.sqrt(seeds))
    assert np.abs(z).max() < 4.5, z
    # and mode by mode, E (θ_j - β_j)² at the end
    m = P.expected_moments(p, lrs, 4, A, B_EXP, [steps])[0]
    d2 = out["final_delta"][0] ** 2
    zm = (d2.mean(axis=0) - m) / (d2.std(axis=0, ddof=1) / np.sqrt(seeds))
    assert np.abs(zm).max() < 4.5, zm


def test_fast_and_plain_samplers_agree_in_distribution():
    p, steps, seeds = 12, 40, 2000
    rec = [np.array([steps])]
    fast = simulate([p], [steps], "cosine", 0.25, 4, A, B_EXP, range(seeds), rec, sampler="fast")["loss"][0][:, 0]
    plain = simulate([p], [steps], "cosine", 0.25, 4, A, B_EXP, range(seeds, 2 * seeds), rec,
                     sampler="plain")["loss"][0][:, 0]
    assert stats.ks_2samp(fast, plain).pvalue > 1e-3


def test_one_fast_step_has_the_closed_form_gradient_moments():
    # One step at η = 1 from θ = 0: ĝ = δ(0) - δ(1). For Gaussian x and r = x·δ - n:
    #   E ĝ = Λ δ,  Cov ĝ_jk = (λ_j λ_k δ_j δ_k + [j = k] λ_j L) / B,  L = Σ λ_j δ_j² + ζ.
    p, batch, n = 4, 3, 40_000
    out = simulate([p], [1], "constant", 1.0, batch, A, B_EXP, range(n), [np.array([0, 1])], sampler="fast")
    delta0 = -np.sqrt(P.initial_moments(p, A, B_EXP))
    g = delta0 - out["final_delta"][0]                                           # (n, p)
    lam = P.spectrum(p, A)
    loss = lam @ delta0 ** 2 + P.tail_variance(p, B_EXP)
    mean = lam * delta0
    cov = (np.outer(lam * delta0, lam * delta0) + np.diag(lam * loss)) / batch
    se_mean = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(g.mean(axis=0) - mean) < 4.5 * se_mean)
    emp = np.cov(g.T)
    # the standard error of a sample covariance of Gaussian-ish data: √((Σ_jj Σ_kk + Σ_jk²) / n); ĝ is not
    # Gaussian (products of Gaussians), so allow a wide band
    se_cov = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov ** 2) / n)
    assert np.all(np.abs(emp - cov) < 8 * se_cov), (emp, cov)


def test_a_seed_gives_the_same_curve_whatever_runs_beside_it():
    rec64 = np.array([0, 10, 100, 200])
    alone = simulate([64], [200], "linear", 0.2, 16, A, B_EXP, [3], [rec64])["loss"][0]
    together = simulate([32, 64], [50, 200], "linear", 0.2, 16, A, B_EXP, [1, 3],
                        [np.array([0, 50]), rec64])["loss"][1]
    assert np.array_equal(alone[0], together[1])
    again = simulate([64], [200], "linear", 0.2, 16, A, B_EXP, [3], [rec64])["loss"][0]
    assert np.array_equal(alone, again)                                          # same seed, same numbers
    other = simulate([64], [200], "linear", 0.2, 16, A, B_EXP, [4], [rec64])["loss"][0]
    assert not np.array_equal(alone, other)


def test_a_size_stops_at_its_own_horizon():
    rec = [np.array([0, 10]), np.array([0, 10, 50])]
    both = simulate([32, 64], [10, 50], "linear", 0.2, 16, A, B_EXP, [0, 1], rec)
    alone = simulate([32], [10], "linear", 0.2, 16, A, B_EXP, [0, 1], rec[:1])
    assert np.array_equal(both["loss"][0], alone["loss"][0])
    assert np.array_equal(both["final_delta"][0], alone["final_delta"][0])      # frozen after step 10
