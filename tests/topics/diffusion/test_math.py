"""Diffusion memorisation, the math: the closed-form denoiser, samplers, schedules and metrics against independent
computations (brute force, autograd, Monte Carlo, hand-made cases)."""
import math

import numpy as np
import pytest
import torch

import toymodels.diffusion as D
from toymodels.diffusion import config, core, experiments, rf
from toymodels.topic import InputError

torch.set_num_threads(1)


def brute_posterior_mean(x, train, a, sigma):
    """E[x_0 | x_t = x] under the empirical measure, from Gaussian likelihoods in float64, one point at a time."""
    out = []
    for q in x:
        logw = np.array([-np.sum((q - a * m) ** 2) / (2 * sigma**2) for m in train])
        w = np.exp(logw - logw.max())
        out.append((w[:, None] * train).sum(0) / w.sum())
    return np.array(out)


# --------------------------------------------------------------------------- closed-form denoiser


@pytest.mark.parametrize("a,sigma", [(0.9, 0.4), (0.3, 1.0), (1.0, 2.5)])
def test_closed_form_denoiser_matches_direct_posterior_mean(a, sigma):
    rng = np.random.default_rng(1)
    train = rng.standard_normal((37, 5))
    x = rng.standard_normal((11, 5)) * 1.5
    got = core.empirical_denoiser(torch.tensor(x), torch.tensor(train), a, sigma).numpy()
    np.testing.assert_allclose(got, brute_posterior_mean(x, train, a, sigma), rtol=1e-9, atol=1e-10)
    # score and noise prediction follow from the denoiser
    s = core.empirical_score(torch.tensor(x), torch.tensor(train), a, sigma).numpy()
    np.testing.assert_allclose(s, (a * got - x) / sigma**2, rtol=1e-9)
    e = core.empirical_eps(torch.tensor(x), torch.tensor(train), a, sigma).numpy()
    np.testing.assert_allclose(e, -sigma * s, rtol=1e-9)


def test_closed_form_score_is_the_gradient_of_the_log_density():
    rng = np.random.default_rng(2)
    train = torch.tensor(rng.standard_normal((9, 3)))
    x = torch.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    a, sigma = 0.7, 0.6
    logp = torch.logsumexp(-((x[:, None] - a * train[None]) ** 2).sum(-1) / (2 * sigma**2), 1).sum()
    (g,) = torch.autograd.grad(logp, x)
    np.testing.assert_allclose(core.empirical_score(x.detach(), train, a, sigma).numpy(), g.numpy(), rtol=1e-8)


def test_tiny_sigma_gives_nearest_point_and_huge_sigma_the_mean():
    rng = np.random.default_rng(3)
    train = torch.tensor(rng.standard_normal((50, 4)), dtype=torch.float32)
    x = torch.tensor(rng.standard_normal((20, 4)), dtype=torch.float32)
    near = core.empirical_denoiser(x, train, 1.0, 1e-4)       # logits ~ 1e8: stable only with log-sum-exp
    assert torch.isfinite(near).all()
    idx = torch.cdist(x, train).argmin(1)
    torch.testing.assert_close(near, train[idx])
    far = core.empirical_denoiser(x, train, 1.0, 1e4)
    torch.testing.assert_close(far, train.mean(0).expand_as(far), atol=1e-4, rtol=0)


def test_flow_velocity_is_bertrand_prop1():
    rng = np.random.default_rng(4)
    train = rng.standard_normal((13, 3))
    x = rng.standard_normal((5, 3))
    t = 0.35
    logits = np.array([[-np.sum((q - t * m) ** 2) / (2 * (1 - t) ** 2) for m in train] for q in x])
    lam = np.exp(logits - logits.max(1, keepdims=True))
    lam /= lam.sum(1, keepdims=True)
    want = np.einsum("bi,bid->bd", lam, (train[None] - x[:, None]) / (1 - t))
    got = core.flow_velocity(torch.tensor(x), torch.tensor(train), t).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9)
    with pytest.raises(InputError):
        core.flow_velocity(torch.tensor(x), torch.tensor(train), 1.0)


@pytest.mark.parametrize("method", ["ddim", "sde"])
@pytest.mark.parametrize("kind", ["ddpm", "ou", "ve"])
def test_closed_form_sampler_reproduces_training_points(method, kind):
    gx, gy = torch.meshgrid(torch.arange(4.0), torch.arange(3.0), indexing="ij")
    train = 1.2 * (torch.stack([gx.flatten(), gy.flatten()], 1) - torch.tensor([1.5, 1.0]))   # 12 points, 1.2 apart
    z = torch.randn(200, 2, generator=torch.Generator().manual_seed(0))
    sched = core.Schedule(kind)
    x = core.sample(core.closed_form_denoiser(train), z, sched, 100, method=method,
                    generator=torch.Generator().manual_seed(1))
    dist = torch.cdist(x, train).min(1).values
    assert float(dist.max()) < 5e-3
    assert core.memorised(x, train).all()
    # and it does not collapse onto one point: many training points are hit
    assert len(set(torch.cdist(x, train).argmin(1).tolist())) >= 8


def test_gmm_score_matches_autograd_of_the_mixture_density():
    a, s, mu, d = 0.6, 0.8, 1.0, 8
    x = torch.randn(6, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).requires_grad_(True)
    v = a * a + s * s
    m = a * mu * torch.ones(d, dtype=torch.float64)
    logp = torch.logsumexp(torch.stack([-((x - m) ** 2).sum(-1) / (2 * v), -((x + m) ** 2).sum(-1) / (2 * v)]), 0)
    (g,) = torch.autograd.grad(logp.sum(), x)
    np.testing.assert_allclose(core.gmm_score(x.detach(), a, s, mu).numpy(), g.numpy(), rtol=1e-10)


# --------------------------------------------------------------------------- schedules


@pytest.mark.parametrize("kind", ["ddpm", "ou", "ve"])
def test_forward_process_marginal_variance_matches_schedule(kind):
    sched = core.Schedule(kind)
    x0 = torch.from_numpy(core.gmm_sample(200_000, 2, 1.0, seed=0)).double()   # per-coordinate variance 2
    for u in (0.05, 0.3, 0.8):
        a, s = (float(v) for v in sched.coeffs(u))
        xt = core.forward_noise(x0, a, s, torch.Generator().manual_seed(5))
        want = sched.marginal_var(u, 2.0)
        assert abs(float(xt.var(0).mean()) / want - 1) < 0.01


def test_schedules_hand_values():
    ab = core.Schedule("ddpm").alpha_bar()
    assert ab[0] == pytest.approx(1 - 1e-4) and ab.shape == (1000,)
    assert ab[-1] == pytest.approx(np.prod(1 - np.linspace(1e-4, 2e-2, 1000)))
    a, s = core.Schedule("ou", t_max=2.0).coeffs(0.5)
    assert a == pytest.approx(math.exp(-1)) and s**2 == pytest.approx(1 - math.exp(-2))
    with pytest.raises(InputError):
        core.Schedule("cosine")
    with pytest.raises(InputError, match=r"\[0, 1\]"):                  # no silent clamping of u
        core.Schedule().coeffs(1.5)


# --------------------------------------------------------------------------- metrics


def test_memorisation_criterion_on_hand_made_points():
    train = torch.tensor([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    samples = torch.tensor([[0.1, 0.0],   # 0.1 / 9.9: memorised
                            [3.0, 0.0],   # 3 / 7 = 0.43: not
                            [2.4, 0.0],   # 2.4 / 7.6 = 0.316: memorised
                            [5.0, 5.0]])  # equidistant: not
    assert core.memorised(samples, train).tolist() == [True, False, True, False]
    assert core.memorised(samples, train, k=0.5).tolist() == [True, True, True, False]
    with pytest.raises(InputError):
        core.memorised(samples, train[:1])


def test_fmem_bootstrap_interval():
    flags = np.r_[np.ones(30), np.zeros(70)]
    f, lo, hi = core.fmem_ci(flags, n_boot=2000, seed=0)
    assert f == 0.3 and lo < 0.3 < hi
    se = math.sqrt(0.3 * 0.7 / 100)                       # the normal-approximation interval, for comparison
    assert abs((hi - lo) - 2 * 1.96 * se) < 0.03
    assert core.fmem_ci(flags, seed=0) == core.fmem_ci(flags, seed=0)


def test_mmd_and_slopes_and_crossings():
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(500, 3, generator=g), torch.randn(500, 3, generator=g)
    assert abs(float(core.mmd2(x, y))) < 5e-3
    assert float(core.mmd2(x, y + 2.0)) > 0.1
    assert core.loglog_slope([1, 2, 4], [3, 6, 12]) == pytest.approx(1.0)
    assert core.first_crossing([10, 100, 1000], [0.0, 0.0, 0.2], 0.1) == pytest.approx(math.sqrt(100 * 1000))
    assert math.isnan(core.first_crossing([1, 2], [0, 0], 1.0))


# --------------------------------------------------------------------------- random features


def test_rf_constants_match_the_notes_table():
    c = rf.rf_constants(0.1)
    assert c["delta"] == pytest.approx(0.181, abs=1e-3)
    assert c["a"] == pytest.approx(0.606, abs=2e-3) and c["b"] == pytest.approx(0.258, abs=2e-3)
    assert c["v2"] == pytest.approx(0.0139, abs=3e-4) and c["s2"] == pytest.approx(0.0136, abs=3e-4)
    taus = [rf.tau_mem_theory(c, 64, psi) for psi in (4, 8, 16, 32)]
    np.testing.assert_allclose(taus, [2.5e3, 5.9e3, 12.8e3, 22.1e3], rtol=0.03)


def _small_rf(seed=0):
    d, p, n, t = 6, 48, 18, 0.1
    gen = torch.Generator().manual_seed(seed)
    W = torch.randn(p, d, generator=gen, dtype=torch.float64)
    x = torch.randn(n, d, generator=gen, dtype=torch.float64)
    U, V = rf.feature_moments(x, W, t, 50, gen)
    Ut, Vt = rf.feature_moments(torch.randn(100, d, generator=gen, dtype=torch.float64), W, t, 20, gen)
    return d, p, t, U, V, Ut, Vt


def test_rf_loss_at_zero_and_long_time_limit():
    d, p, t, U, V, Ut, Vt = _small_rf()
    delta = -math.expm1(-2 * t)
    out = rf.rf_losses(U, V, Ut, Vt, delta, p / d, np.array([0.0, 1e12]), d)
    assert out["train"][0] == pytest.approx(1.0) and out["test"][0] == pytest.approx(1.0)   # A = 0
    inf = 1 - float(torch.trace(V.T @ torch.linalg.solve(U, V))) / d                          # 1 − Tr(VᵀU⁻¹V)/d
    assert out["train"][1] == pytest.approx(inf, rel=1e-6) and out["train_inf"] == pytest.approx(inf, rel=1e-6)


def test_rf_eigen_form_matches_gradient_descent_on_A():
    """Euler steps of Ȧ = −2Δ(d/p)AU − (2d√Δ/√p)Vᵀ from A = 0, losses from the definition, vs the eigen-form."""
    d, p, t, U, V, Ut, Vt = _small_rf(1)
    delta = -math.expm1(-2 * t)
    A = torch.zeros(d, p, dtype=torch.float64)
    dt, steps = 0.05, 4000
    for _ in range(steps):
        A = A + dt * (-2 * delta * (d / p) * A @ U - (2 * d * math.sqrt(delta) / math.sqrt(p)) * V.T)
    B = math.sqrt(delta) * A / math.sqrt(p)

    def loss(Um, Vm):
        return 1 + float(torch.trace(B @ Um @ B.T) + 2 * torch.trace(B @ Vm)) / d

    out = rf.rf_losses(U, V, Ut, Vt, delta, p / d, np.array([dt * steps]), d)
    assert out["train"][0] == pytest.approx(loss(U, V), abs=2e-3)
    assert out["test"][0] == pytest.approx(loss(Ut, Vt), abs=2e-3)
    assert out["train"][0] < 0.95


def test_rf_run_small_and_bad_inputs():
    res = experiments.run_rf(config.RFConfig(d=8, psi_p=32, psi_ns=[2, 4], samples=5000, n_test=200, test_draws=5))
    s = res["summary"]
    assert list(s.psi_n) == [2.0, 4.0]
    assert (s.loss_train_10 < 1).all() and (s.tau_mem_theory.diff().dropna() > 0).all()
    for bad in (dict(d=1000), dict(psi_p=1000), dict(psi_ns=[100]), dict(t=5.0), dict(samples=10),
                dict(psi_ns=[4]), dict(psi_ns=[4, 4.0])):
        with pytest.raises(InputError):
            experiments.run_rf(config.RFConfig(**bad))


def test_rf_live_budget_refuses_before_computing_and_counts_the_work():
    cfg = config.RFConfig(d=32, psi_p=128, psi_ns=[1, 2, 4, 8, 16, 32, 64])
    with pytest.raises(InputError, match="live budget"):
        experiments.run_rf(cfg)
    # hand count for a small case: rows = n_test·test_draws + Σ n·max(4, samples // n); p = 8·4 = 32
    small = config.RFConfig(d=8, psi_p=4, psi_ns=[1, 2], samples=5000, n_test=100, test_draws=5)
    rows = 100 * 5 + 8 * (5000 // 8) + 16 * (5000 // 16)
    assert config.rf_cost(small) == pytest.approx(rows * 32 * (32 + 8) + 3 * 2 * 32**3)
    assert config.rf_cost(D.VIEWS["rf"].arguments()["cfg"]) <= config.RF_BUDGET   # the shipped default is a live run


