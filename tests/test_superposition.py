"""Superposition toy: the math against independent computations, bad inputs, the shipped store, the page."""
import io
import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from toymodels import store, topic
from toymodels import superposition as M
from toymodels import superposition_core as C
from toymodels.topic import InputError
from tests.apptest_helpers import open_page

torch.set_num_threads(1)


# --------------------------------------------------------------------------- Eq. 2


def test_eq2_negative_gamma_hand_worked_and_pulls_norms_toward_one():
    W = torch.tensor([[[3.0, 4.0], [0.3, 0.4], [0.6, 0.8]]])      # norms 5, 0.5, 1
    out = M.eq2_step(W.clone(), torch.tensor([-1.0]), lr_t=0.1)
    # W_i − ηγ W_i (1/‖W_i‖ − 1) = W_i (1 + 0.1 (1/‖W_i‖ − 1))
    expect = torch.stack([W[0, 0] * (1 + 0.1 * (0.2 - 1)), W[0, 1] * (1 + 0.1 * (2 - 1)), W[0, 2]])
    assert torch.allclose(out[0], expect, atol=1e-6)
    norms = out.norm(dim=2)[0]
    assert norms[0] < 5 and norms[0] > 1 and norms[1] > 0.5 and norms[1] < 1 and abs(norms[2] - 1) < 1e-6
    # many steps converge to unit norm from both sides
    W = torch.randn(1, 50, 7) * torch.linspace(0.1, 3, 50).view(1, 50, 1)
    for _ in range(300):
        M.eq2_step(W, torch.tensor([-1.0]), lr_t=0.05)
    assert torch.allclose(W.norm(dim=2), torch.ones(1, 50), atol=1e-3)


def test_eq2_positive_gamma_shrinks_and_gammas_are_per_instance():
    W = torch.randn(3, 20, 4)
    before = W.norm(dim=2)
    out = M.eq2_step(W.clone(), torch.tensor([0.5, 0.0, -1.0]), lr_t=0.1)
    assert torch.allclose(out[0], W[0] * (1 - 0.05), atol=1e-6)       # standard decoupled decay
    assert torch.equal(out[1], W[1])                                   # γ = 0: untouched
    assert torch.all(out[0].norm(dim=1) < before[0])
    assert torch.all((out[2].norm(dim=1) - 1).abs() <= (before[2] - 1).abs() + 1e-6)


# --------------------------------------------------------------------------- data


@pytest.mark.parametrize("profile,alpha,E", [("power", 1.0, 1.0), ("power", 0.5, 3.0), ("exponential", 1.0, 2.0),
                                             ("linear", 1.0, 1.0)])
def test_feature_probs_sum_to_E_and_follow_profile(profile, alpha, E):
    p = M.feature_probs(200, alpha, E, profile)
    assert abs(p.sum() - E) < 1e-9 and np.all(np.diff(p) <= 1e-15) and p.max() <= 1
    if profile == "power":
        assert math.isclose(p[0] / p[9], 10**alpha, rel_tol=1e-9)
    if profile == "linear":
        assert math.isclose(p[0] / p[-1], 200.0, rel_tol=1e-9)


def test_profiles_are_the_papers_large_model_profiles():
    """exp-17: linear p ∝ (n − i)/n for i = 0…n−1, i.e. n, n−1, …, 1; exponential p ∝ e^{−i/400} at n = 10240."""
    n = 1000
    lin = M.feature_probs(n, 1.0, 1.0, "linear")
    ref = np.arange(n, 0, -1, dtype=float)
    assert np.allclose(lin, ref / ref.sum(), rtol=1e-12)
    ex = M.feature_probs(n, 1.0, 1.0, "exponential")
    tau = 400.0 * n / 10240.0
    assert np.allclose(np.log(ex[:-1] / ex[1:]), 1.0 / tau, rtol=1e-9)
    big = M.feature_probs(10240, 1.0, 1.0, "exponential")
    assert math.isclose(big[0] / big[400], math.e, rel_tol=1e-9)
    pw = M.feature_probs(n, 1.2, 1.0, "power")
    assert math.isclose(pw[0] / pw[1], 2**1.2, rel_tol=1e-12) and abs(pw.sum() - 1) < 1e-12


def test_width_sweep_passes_its_warmup_to_training():
    n, kw = 40, dict(steps=40, batch=16)
    rg = [dict(name="s", gamma=-1.0, alpha=1.0, profile="linear")]
    df = C.sweep(n, [3, 5], rg, lr_recipe="paper-large", warmup=0.05, **kw)
    p = M.feature_probs(n, 1.0, 1.0, "linear")[None]
    for m in (3, 5):
        alone = C.train_groups(n, [(m, [dict(gamma=-1.0, seed=0, data=0)])], p, lr_recipe="paper-large",
                               warmup=0.05, **kw)[0]
        other = C.train_groups(n, [(m, [dict(gamma=-1.0, seed=0, data=0)])], p, lr_recipe="paper-large",
                               warmup=0.1, **kw)[0]
        got = df.loc[df.m == m, "loss"].item()
        assert got == pytest.approx(alone["loss"][0], rel=1e-6) and got != pytest.approx(other["loss"][0], rel=1e-6)


def test_sweep_batched_equals_the_one_by_one_loop():
    """The benchmark's claim: one batched model per width, data shared, sparse gradients, gives the numbers of
    training each model alone in plain PyTorch (``train_alone``: dense x, autograd), stopping steps included."""
    regs = [dict(name="s", gamma=-1.0, alpha=1.0), dict(name="w", gamma=0.3, alpha=1.5),
            dict(name="e", gamma=-1.0, profile="exponential", tau=20.0)]
    kw = dict(n=80, ms=[4, 8], regimes=regs, steps=60, batch=32, seeds=(0, 3), max_steps=200, tol=0.006)
    fast, slow = C.sweep(**kw), C.sweep(**kw, one_by_one=True)
    assert len(fast) == 2 * 3 * 2
    # models stop on their own: some at the scheduled 60 steps, some later, some at the cap, the same in both
    assert fast["steps_run"].nunique() >= 3 and {60, 200} <= set(fast["steps_run"])
    assert (fast["steps_run"] == slow["steps_run"]).all()
    assert np.allclose(fast["loss"], slow["loss"], rtol=1e-4)
    assert np.allclose(fast["overlap"], slow["overlap"], rtol=1e-3)
    assert (fast["converged"] == slow["converged"]).all()


def test_train_alone_is_plain_pytorch_on_the_same_streams():
    """The honest loop by hand: the seed's init stream, its data stream, Eq. 2 and Adam written out for 2 steps."""
    n, m, p, lr = 30, 3, M.feature_probs(30, 1.0), 1e-2
    one = C.train_alone(n, m, -1.0, 5, p, steps=2, batch=8, lr=lr, warmup=0.0, eval_samples=64)
    W0, b0 = C.init_params(n, m, 5)
    data = torch.Generator().manual_seed(5 * 3 + 1)
    params = [W0.clone(), b0.clone()]
    mom = [torch.zeros_like(q) for q in params]
    var = [torch.zeros_like(q) for q in params]
    for t in (1, 2):
        W, b = (q.clone().requires_grad_() for q in params)
        x = M.sample_x(torch.rand(8, n, generator=data), torch.tensor(p, dtype=torch.float32))
        ((torch.relu(x @ W @ W.T + b) - x) ** 2).mean().backward()
        lr_t = C.lr_at(t - 1, 2, lr, 0.0)
        with torch.no_grad():
            params[0] = W * (1 + lr_t * (1 / (W.norm(dim=1, keepdim=True) + 1e-8) - 1))   # Eq. 2 with γ = −1
            params[1] = b.detach().clone()
            for k, grad in enumerate((W.grad, b.grad)):
                mom[k] = 0.9 * mom[k] + 0.1 * grad
                var[k] = 0.999 * var[k] + 0.001 * grad**2
                params[k] = params[k] - lr_t * (mom[k] / (1 - 0.9**t)) / ((var[k] / (1 - 0.999**t)).sqrt() + 1e-8)
    assert np.allclose(one["W"], params[0].numpy(), atol=1e-5) and np.allclose(one["b"], params[1].numpy(), atol=1e-5)
    assert one["steps_run"] == 2 and not np.allclose(one["W"], W0.numpy(), atol=1e-3)


# --------------------------------------------------------------------------- N_eff and convergence


def test_n_eff_hand_worked_and_profiles_parameterised_for_it():
    assert M.n_eff(np.full(50, 0.02)) == pytest.approx(50)              # uniform: every feature counts
    assert M.n_eff(np.array([1.0] + [0.0] * 9)) == pytest.approx(1)     # one feature
    assert M.n_eff(np.array([0.3, 0.1])) == pytest.approx(0.16 / 0.10)  # (Σp)²/Σp²
    big = M.feature_probs(20000, E=1.0, profile="exponential", tau=50.0)
    assert M.n_eff(big) == pytest.approx(2 * 50, rel=0.02)              # exponential: N_eff ≈ 2τ
    for prof in ("power", "exponential"):
        rg = [r for r in C.profile_regimes(1000, 80) if r["profile"] == prof][0]
        p = M.feature_probs(1000, rg.get("alpha", 1.0), 1.0, prof, rg.get("tau"))
        assert 4 * 80 <= M.n_eff(p) <= 4.2 * 100                        # ≥ 4× the largest width (5× by default)
    lin = M.feature_probs(1000, profile="linear")
    assert M.n_eff(lin) == pytest.approx(0.75 * 1000, rel=0.01)         # linear: ≈ 3n/4
    # the paper's τ = 400 rescaled to n = 1000 is the 1.59 case: N_eff ≈ 78, about the largest width
    assert M.n_eff(M.feature_probs(1000, profile="exponential")) == pytest.approx(78, abs=1.5)


def test_drift_reads_the_last_fifth_of_training():
    steps = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    L = np.array([[5.0, 4.0, 3.0, 2.5, 2.2, 2.1, 2.05, 1.02, 1.01, 1.0]]).T  # (K, I = 1)
    assert C.drift(steps, L, 100)[0] == pytest.approx(abs(1.0 - 1.02) / 1.0)   # from step 80 to 100
    assert C.drift(steps[:8], L[:8], 80)[0] == pytest.approx(abs(1.02 - 2.1) / 1.02)  # from step 60 (≤ 64)


def test_training_continues_until_the_rule_holds_or_the_cap():
    p = M.feature_probs(60, 1.0)[None]
    grp = [(6, [dict(gamma=-1.0, seed=0, data=0)])]
    kw = dict(n=60, probs=p, steps=100, batch=32, eval_samples=512)
    strict = C.train_groups(groups=[(6, [dict(g) for g in grp[0][1]])], max_steps=160, tol=1e-12, **kw)[0]
    assert strict["steps_run"][0] == 160 and not strict["converged"][0]     # never holds: stops at the cap
    loose = C.train_groups(groups=[(6, [dict(g) for g in grp[0][1]])], max_steps=160, tol=10.0, **kw)[0]
    assert loose["steps_run"][0] == 100 and loose["converged"][0]           # holds at once: no extension
    plain = C.train_groups(groups=[(6, [dict(g) for g in grp[0][1]])], **kw)[0]
    assert np.allclose(plain["W"], loose["W"])
    d = C.drift(strict["check_steps"][0], strict["check_loss"][0][:, None], 160)   # per model: (K,)
    assert d[0] == pytest.approx(strict["drift"][0])
    assert list(strict["check_steps"][0][:3]) == [5, 10, 15] and strict["check_steps"][0][-1] == 160


def test_schedule_checkpoints_and_stopping_by_hand():
    s = C.Schedule(1000, max_steps=1500, tol=0.02)
    assert s.every == 50 and s.cap == 1500 and s.checkpoint(50) and not s.checkpoint(75) and s.checkpoint(1500)
    steps = [200, 400, 600, 800, 1000]
    L = np.array([[3.0, 2.0], [2.5, 1.5], [2.0, 1.2], [1.01, 1.1], [1.0, 1.0]])   # (K, I = 2)
    assert list(s.stop(800, steps[:4], L[:4])) == [False, False]              # before the scheduled steps
    assert list(s.stop(1000, steps, L)) == [True, False]                      # drift 1 % vs 10 % (from step 800)
    assert list(s.stop(1500, steps + [1500], np.vstack([L, [1.0, 0.5]]))) == [True, True]  # the cap
    assert list(C.Schedule(1000).stop(1000, steps, L)) == [True, True]        # no max_steps: stop at steps


def _synthetic(strong=1.0, weak=0.5, profiles=(1.0, 1.0, 0.9), converged=True):
    """A scaling result with exact power laws, to test the verdict by hand."""
    rows = []
    specs = [("strong", "power", strong, 34.0), ("weak", "power", weak, 5.4)] + [
        (f"strong · {p}", p, a, 400.0) for p, a in zip(M.PROFILES, profiles)]
    for name, prof, a, ne in specs:
        for m in (10, 20, 40, 80):
            rows.append(dict(regime=name, profile=prof, gamma=-1.0 if name.startswith("strong") else 0.1, alpha=1.0,
                             tau=float("nan"), n_eff=ne, seed=0, m=m, loss=2.0 * m ** -a, drift=0.01,
                             converged=converged, steps_run=12000, phi_half=1.0, phi_one=0.5,
                             overlap=1.0 / m, overlap_rep=1.0 / m, inv_m=1.0 / m, welch=0.9 / m, weak_pred=0.1,
                             ms_per_step=1.0))
    df = pd.DataFrame(rows)
    return {"table": df, "fits": C.fits(df), "fits_m20": C.fits(df, min_m=20)}


def test_verdict_bands_by_hand():
    v = M.verdict(_synthetic())
    assert v.reproduced is True and v.metrics["alpha_strong"] == pytest.approx(1.0)
    assert v.metrics["alpha_weak"] == pytest.approx(0.5) and v.metrics["converged"] is True
    assert M.verdict(_synthetic(strong=0.85)).reproduced is False           # outside [0.9, 1.1]
    assert M.verdict(_synthetic(weak=0.8)).reproduced is False              # weak off α − 1 by 0.3
    assert M.verdict(_synthetic(profiles=(1.0, 1.5, 0.9))).reproduced is False  # one profile breaks
    steep = _synthetic()
    steep["fits"] = steep["fits"].copy()
    steep["fits"].loc[steep["fits"]["regime"] == "strong", "overlap_slope"] = -1.5  # the mechanism's slope is off
    partly = M.verdict(steep)
    assert partly.reproduced is None and "mechanism is not" in partly.summary
    un = M.verdict(_synthetic(converged=False))
    assert un.reproduced is None and "lower bound" in un.summary and un.ours.startswith("α_m ≥")
    h = M.headline(_synthetic())
    assert {p["profile"] for p in h["profiles"]} == set(M.PROFILES) and h["alpha_weak_pred"] == 0.5


def test_no_float64_tensor_in_training_or_evaluation():
    """Issue 14 #11: float64 stays in NumPy on the CPU (MPS has no float64): no torch op may produce one."""
    from torch.overrides import TorchFunctionMode

    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor) and out.dtype == torch.float64:
                seen.append(getattr(func, "__name__", str(func)))
            return out

    p = M.feature_probs(50, 1.0)[None]
    with Spy():
        C.train_groups(50, [(4, [dict(gamma=-1.0, seed=0, data=0)])], p, steps=20, batch=16, eval_samples=256)
    assert not seen, seen


def test_feature_probs_rejects_impossible_density():
    with pytest.raises(InputError, match="p_1"):
        M.feature_probs(10, 2.0, 5.0)


def test_sampler_matches_bernoulli_frequencies_E_and_uniform_values():
    n, B = 40, 200_000
    p = M.feature_probs(n, 1.0, 2.0)
    g = torch.Generator().manual_seed(1)
    x = M.sample_x(torch.rand(B, n, generator=g), torch.tensor(p, dtype=torch.float32)).numpy()
    freq = (x > 0).mean(0)
    se = np.sqrt(p * (1 - p) / B)
    assert np.all(np.abs(freq - p) < 5 * se)                          # Bernoulli(p_i) per feature
    assert abs((x > 0).sum(1).mean() - 2.0) < 0.02                     # E = Σ p_i active per sample
    v = x[x > 0]
    assert abs(v.mean() - 1) < 0.01 and abs(v.var() - 1 / 3) < 0.01   # U(0,2): mean 1, variance 1/3
    assert stats.kstest(v / 2, "uniform").pvalue > 1e-3
    # u and v independent: the value distribution of a rare feature is the same as of a frequent one
    assert abs(x[:, 0][x[:, 0] > 0].mean() - x[:, -1][x[:, -1] > 0].mean()) < 0.05


# --------------------------------------------------------------------------- model, gradients, batching


@pytest.mark.parametrize("sparse_below", [0.0, 1.0])     # the dense output side and the sparse one
def test_hand_gradients_match_autograd_of_the_dense_model(sparse_below):
    I, B, n, m = 3, 64, 30, 4
    torch.manual_seed(0)
    W, b = torch.randn(I, n, m) / 2, torch.randn(I, n) * 0.3 - 0.4
    p = torch.tensor(np.stack([M.feature_probs(n, a, 1.5) for a in (0.0, 0.7, 1.2)]), dtype=torch.float32)[:, None]
    r = torch.rand(I, B, n)
    gW, gb, loss = M.grads(W, b, r, p, sparse_below=sparse_below)
    x = M.sample_x(r, p)
    Wa, ba = W.clone().requires_grad_(), b.clone().requires_grad_()
    y = torch.relu(torch.bmm(torch.bmm(x, Wa), Wa.transpose(1, 2)) + ba[:, None])
    ((y - x) ** 2).mean((1, 2)).sum().backward()
    assert torch.allclose(gW, Wa.grad, atol=1e-6) and torch.allclose(gb, ba.grad, atol=1e-6)
    assert torch.allclose(loss, ((y - x) ** 2).sum((1, 2)).detach() / B, rtol=1e-5)  # n × MSE
    assert 0.05 < float((y > 0).float().mean()) < 0.6                 # both kinds of entry are present


def test_sparse_output_side_is_used_once_the_bias_is_negative():
    """After the first steps few pre-activations are positive, and the sparse path gives the dense numbers."""
    I, B, n, m = 2, 128, 400, 16
    g = torch.Generator().manual_seed(1)
    W = torch.randn(I, n, m, generator=g) / math.sqrt(m)
    b = torch.full((I, n), -1.5)                                          # a trained model's negative bias
    p = torch.tensor(M.feature_probs(n, 1.0), dtype=torch.float32)[None, None]
    r = torch.rand(I, B, n, generator=g)
    x = M.sample_x(r, p)
    z = torch.bmm(torch.bmm(x, W), W.transpose(1, 2)) + b[:, None]
    assert float((z > 0).float().mean()) < C.SPARSE_BELOW                # the default takes the sparse path
    sparse, dense = M.grads(W, b, r, p), M.grads(W, b, r, p, sparse_below=0.0)
    for a, d in zip(sparse, dense):
        assert torch.allclose(a, d, rtol=1e-5, atol=1e-9)


def test_lr_recipes():
    assert M.lr_for(40) == (1e-2, 1e-2)
    lw, lb = M.lr_for(8, recipe="paper-large")
    assert lw == pytest.approx(0.02) and lb == pytest.approx(0.25)
    assert M.lr_for(128, recipe="paper-large")[0] == pytest.approx(0.01)
    with pytest.raises(InputError):
        M.lr_for(8, recipe="adamw")


def test_lr_schedule_warmup_then_cosine_to_five_percent():
    lrs = [M.lr_at(s, 1000, 0.01, 0.1) for s in range(1000)]
    assert lrs[0] == pytest.approx(1e-4) and lrs[99] == pytest.approx(0.01)
    assert np.all(np.diff(lrs[:100]) > 0) and np.all(np.diff(lrs[100:]) <= 1e-12)
    assert lrs[-1] == pytest.approx(0.0005, rel=1e-2)


def test_batched_training_equals_separate_models_with_same_seeds():
    n = 60
    specs = [(6, -1.0, 1.0, 0), (3, 0.3, 1.5, 0), (6, -0.5, 0.5, 7)]   # different widths, γ, α, seeds
    probs = np.stack([M.feature_probs(n, a, 1.0) for _, _, a, _ in specs])
    kw = dict(steps=100, batch=32, lr=1e-2, eval_samples=256)
    joint = M.train_batched(n, [s[0] for s in specs], [s[1] for s in specs], probs, [s[3] for s in specs], **kw)
    for k, (m, gam, _, seed) in enumerate(specs):
        alone = M.train_batched(n, [m], [gam], probs[k:k + 1], [seed], **kw)
        assert np.allclose(joint["W"][k, :, :m], alone["W"][0], atol=2e-4)
        assert np.all(joint["W"][k, :, m:] == 0)                      # padding stays exactly zero
        assert joint["loss"][k] == pytest.approx(alone["loss"][0], rel=1e-3)
    again = M.train_batched(n, [s[0] for s in specs], [s[1] for s in specs], probs, [s[3] for s in specs], **kw)
    assert np.array_equal(again["W"], joint["W"])                      # same seed, same numbers


def test_training_separates_strong_and_weak_regimes():
    out = M.train_batched(200, [8, 8], [-1.0, 0.6], np.stack([M.feature_probs(200, 1.0, 1.0)] * 2), [0, 0],
                          steps=800, batch=64, eval_samples=2048)
    assert out["phi_half"][0] > 0.9 and out["phi_half"][1] < 0.2     # strong keeps all rows, weak drops most
    assert out["curve"][0, -1] < out["curve"][0, 0] / 10


# --------------------------------------------------------------------------- measurements


def test_mean_sq_overlap_brute_force_and_random_vectors_give_one_over_m():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(40, 5)) * rng.uniform(0.1, 3, size=(40, 1))
    Wh = W / np.linalg.norm(W, axis=1, keepdims=True)
    brute = np.mean([(Wh[i] @ Wh[j]) ** 2 for i in range(40) for j in range(i + 1, 40)])
    assert M.mean_sq_overlap(W) == pytest.approx(brute, rel=1e-10)
    for m in (4, 16, 64):    # Monte Carlo: (Ŵ_i·Ŵ_j)² ~ Beta(1/2, (m−1)/2), mean 1/m
        est = M.mean_sq_overlap(rng.normal(size=(3000, m)))
        assert est == pytest.approx(1 / m, rel=0.05)


def test_welch_bound_is_attained_by_the_mercedes_frame():
    ang = np.array([0, 2 * np.pi / 3, 4 * np.pi / 3])
    W = np.stack([np.cos(ang), np.sin(ang)], 1)
    assert M.mean_sq_overlap(W) == pytest.approx(M.welch_bound(3, 2)) == pytest.approx(0.25)
    assert M.welch_bound(1000, 10) == pytest.approx(990 / 9990)


def test_measure_counts_phi_and_eq4_by_hand():
    W = np.array([[1.2, 0.0], [0.0, 0.9], [0.3, 0.0], [0.0, 0.1]])   # norms 1.2, 0.9, 0.3, 0.1
    p = np.array([0.4, 0.3, 0.2, 0.1])
    met = M.measure(W, p)
    assert met["phi_half"] == 0.5 and met["phi_one"] == 0.25 and met["hist"].sum() == 4
    assert met["weak_pred"] == pytest.approx(4 / 3 * 0.3 - 0.04 - 0.01)


def test_fit_exponent_recovers_a_known_power_law():
    ms = np.array([10, 15, 25, 39, 63, 100])
    rng = np.random.default_rng(3)
    losses = 3.0 * ms ** -0.73 * np.exp(rng.normal(0, 0.01, len(ms)))
    f = M.fit_exponent(ms, losses)
    assert f["alpha_m"] == pytest.approx(0.73, abs=0.03) and f["r2"] > 0.99 and f["C"] == pytest.approx(3.0, rel=0.1)
    exact = M.fit_exponent(ms, 2.0 / ms)
    assert exact["alpha_m"] == pytest.approx(1.0) and exact["r2"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("bad,match", [
    (dict(m=30, n=20), "must not exceed"), (dict(steps=10**6), "steps"), (dict(profile="zipf"), "profile"),
    (dict(gamma=float("nan")), "gamma"), (dict(E=15.0, alpha=2.0), "p_1"), (dict(n=1), "n must be between"),
])
def test_config_rejects_bad_settings(bad, match):
    with pytest.raises(InputError, match=match):
        M.run(M.Config(**bad))


def test_no_silent_clamping_in_live_calls():
    with pytest.raises(InputError, match="n must be between 3 and 20"):
        M.geometry(n=25)
    with pytest.raises(InputError, match="m must be one of"):
        M.geometry(m=4)
    with pytest.raises(InputError, match="too large"):
        M.width_sweep(2000, [64, 128], steps=6000, batch=1024)
    with pytest.raises(InputError, match="two distinct widths"):
        M.width_sweep(100, [8, 8], steps=10)
    with pytest.raises(InputError, match="regimes"):
        M.width_sweep(100, [4, 8], regimes=["medium"], steps=10)
    assert M.run.bounds["cfg"].specs["steps"].hi == 8000                  # the page reads its limits from here


def test_all_zero_matrix_is_rejected_not_nan():
    """Issue 14 #9: an all-zero upload gave overlap nan with no message."""
    with pytest.raises(InputError, match="non-zero"):
        M.embedding_overlap(np.zeros((10, 4), np.float32))
    with pytest.raises(InputError, match="non-zero"):
        M.embedding_overlap(np.vstack([np.ones((1, 4)), np.zeros((9, 4))]))
    assert math.isfinite(M.embedding_overlap(np.vstack([np.eye(4), np.zeros((3, 4))]))["overlap"])


def _npy(arr, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


@pytest.mark.parametrize("data,match", [
    (_npy(np.zeros((3, 4, 5))), "2-D"),
    (_npy(np.array([["a", "b"], ["c", "d"]])), "numeric"),
    (_npy(np.array([[1.0, np.nan], [0.0, 1.0]])), "NaN"),
    (_npy(np.array([{"a": 1}, None], dtype=object), allow_pickle=True), "pickle"),
    (b"not a numpy file", "could not read"),
])
def test_load_matrix_rejects_bad_uploads(data, match):
    with pytest.raises(InputError, match=match):
        M.load_matrix(data, "emb.npy")


def test_matrix_size_cap_and_file_types():
    huge = np.broadcast_to(np.float32(1.0), (M.MAX_ROWS + 1, 8))     # no memory allocated
    with pytest.raises(InputError, match="cap"):
        M.validate_matrix(huge)
    with pytest.raises(InputError, match=".npy or .safetensors"):
        M.load_matrix(b"", "weights.pt")


def test_safetensors_upload_and_embedding_overlap():
    from safetensors.numpy import save
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(2000, 32)).astype(np.float32)
    data = save({"model.embed_tokens.weight": emb, "layer.bias": np.zeros((2, 3), np.float32)})
    A, name = M.load_matrix(data, "m.safetensors")
    assert name == "model.embed_tokens.weight" and A.shape == (2000, 32)
    res = M.embedding_overlap(A)
    assert res["overlap"] == pytest.approx(1 / 32, rel=0.05) and res["welch"] < res["overlap"]


# --------------------------------------------------------------------------- shipped store, CLI contract


def test_shipped_geometry_view_is_current():
    fn, kwargs = topic.view_call(M, "geometry")
    store.verify_shipped(M.TOPIC, "geometry", fn, rtol=1e-3, **kwargs)


def test_every_view_is_shipped_and_fresh():
    assert topic.stale_views(M) == {}


def test_shipped_headline_meets_the_issue_acceptance():
    """Issue 15: strong α_m in [0.9, 1.1] from converged runs, weak near α − 1, strong ≈ 1 for every profile."""
    res = store.load_shipped(M.TOPIC, M.HEADLINE)
    h = M.headline(res)
    assert h["converged"] and h["final_loss_drift"] < M.CONV_TOL
    assert all(p["n_eff"] >= 4 * p["max_width"] for p in h["profiles"])
    assert M.STRONG_BAND[0] <= h["alpha_strong"] <= M.STRONG_BAND[1], h["alpha_strong"]
    assert all(M.PROFILE_BAND[0] <= p["alpha_strong"] <= M.PROFILE_BAND[1] for p in h["profiles"])
    v = M.verdict(res)
    assert v.reproduced is not False, v.summary  # the claim's exponents; the overlap slope may make it "partly"


def test_shipped_neff_sweep_breaks_when_n_eff_nears_m():
    f = store.load_shipped(M.TOPIC, "neff_sweep")["fits"].sort_values("ratio")
    assert f["alpha_m"].iloc[0] > f["alpha_m"].iloc[-1] + 0.2             # N_eff ≈ m/2 … m: far steeper than 1/m


@pytest.mark.slow
def test_quick_reproduction_converges_and_prints_the_keys():
    h = M.reproduce(quick=True)
    assert h["converged"] and h["final_loss_drift"] < M.CONV_TOL
    for key in ("alpha_strong", "alpha_weak", "alpha_weak_pred", "converged", "final_loss_drift", "profiles"):
        assert key in h
    assert {p["profile"] for p in h["profiles"]} == set(M.PROFILES)


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("superposition")


def test_page_defaults_render_from_shipped_results():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "Superposition & scaling"
    assert not at.error
    assert any("converged" in str(t.value).lower() for t in at.markdown)


def test_page_other_preset_and_training_a_small_model():
    at = _page()
    at.selectbox(key="preset").set_value("paper: weak").run()
    assert not at.exception, at.exception
    assert at.slider(key="gamma").value == pytest.approx(0.1) and at.slider(key="alpha").value == pytest.approx(1.5)
    at.number_input(key="n").set_value(200).run()
    at.number_input(key="steps").set_value(200).run()
    at.button(key="train_btn").click().run()
    assert not at.exception, at.exception
    assert not at.error
    assert any("γ = 0.1" in c.value and "n = 200" in c.value for c in at.caption)


@pytest.mark.parametrize("name,data,match", [
    ("evil.npy", _npy(np.array([{"x": 1}], dtype=object), allow_pickle=True), "pickle"),
    ("zero.npy", _npy(np.zeros((20, 8), np.float32)), "non-zero"),
])
def test_page_bad_upload_shows_a_message_not_a_traceback(name, data, match):
    at = _page()
    at.file_uploader(key="sp_upload").set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    assert any("Cannot use this file" in e.value and match in e.value for e in at.error)


def test_page_geometry_gamma_slider_and_neff_slider_are_cheap():
    at = _page()
    at.select_slider(key="geo_gamma").set_value(0.5).run()
    assert not at.exception, at.exception
    assert any("γ = +0.50" in c.value for c in at.caption)
    at.select_slider(key="neff_ratio").set_value(1.0).run()
    assert not at.exception, at.exception


def test_page_sweep_runs_small_and_offers_csv():
    at = _page()
    at.number_input(key="sw_steps").set_value(100)
    at.number_input(key="sw_n").set_value(100)
    at.multiselect(key="sw_ms").set_value([5, 10])
    at.run()
    at.button(key="sweep_btn").click().run()
    assert not at.exception, at.exception
    assert not at.error
    assert len(at.get("download_button")) >= 1


def _fuzz(at, rng, press: bool):
    """Random and extreme values for every widget outside the geometry form."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    for key, options in (("geo_gamma", M.GEOMETRY_GAMMAS), ("neff_ratio", M.NEFF_RATIOS)):
        try:   # neff_ratio exists only once the converged sweep is shipped
            at.select_slider(key=key).set_value(pick(list(options)))
        except KeyError:
            pass
    at.selectbox(key="preset").set_value(pick(list(M.PRESETS) + ["custom"]))
    at.number_input(key="n").set_value(int(pick([10, 11, 37, 500, 2000])))
    at.number_input(key="m").set_value(int(pick([2, 3, 9, 64, 128])))
    at.slider(key="alpha").set_value(float(pick([0.0, 0.125, 1.0, 2.5])))
    at.slider(key="gamma").set_value(float(pick([-1.5, -0.05, 0.0, 1.0])))
    at.slider(key="E").set_value(float(pick([0.1, 1.0, 5.0])))
    at.number_input(key="steps").set_value(int(pick([100, 8000])))
    at.select_slider(key="batch").set_value(int(pick([32, 512])))
    at.select_slider(key="lr").set_value(float(pick([1e-3, 3e-2])))
    at.number_input(key="seed").set_value(int(pick([0, 10_000])))
    at.selectbox(key="profile").set_value(pick(list(M.PROFILES)))
    at.radio(key="sw_kind").set_value(pick(["width", "gamma"]))
    at.run()
    if press:   # the smallest settings, so that a press costs seconds
        at.number_input(key="n").set_value(10)
        at.number_input(key="m").set_value(int(pick([2, 3, 128])))
        at.number_input(key="steps").set_value(100)
        at.select_slider(key="batch").set_value(32)
        at.run()
        at.button(key="train_btn").click().run()
        at.number_input(key="sw_steps").set_value(100)
        at.number_input(key="sw_n").set_value(50)
        if at.radio(key="sw_kind").value == "width":
            at.multiselect(key="sw_ms").set_value(pick([[5, 8], [], [5], [128, 5]]))
            at.multiselect(key="sw_reg").set_value(pick([["strong"], [], ["strong", "weak"]]))
        else:
            at.slider(key="sw_gcount").set_value(int(pick([2, 3])))
            at.number_input(key="sw_gm").set_value(int(pick([2, 128])))
        at.run()
        at.button(key="sweep_btn").click().run()
    return at


def _fuzz_run(combos: int, seed: int):
    rng = np.random.default_rng(seed)
    at = _page()
    for i in range(combos):
        _fuzz(at, rng, press=(i % 5 == 0))
        assert not at.exception, (i, at.exception)


def test_page_fuzz_20_combinations():
    _fuzz_run(20, seed=0)


@pytest.mark.slow
def test_page_fuzz_many():
    _fuzz_run(100, seed=1)


def test_page_geometry_form_rejects_nothing_silently():
    at = _page()
    at.slider(key="geo_n").set_value(3)
    at.slider(key="geo_alpha").set_value(2.0)
    at.select_slider(key="geo_E").set_value(1.0)
    at.button(key="geo_train").click().run()
    assert not at.exception, at.exception
    assert any("of 3 features" in c.value for c in at.caption) or any("E =" in e.value for e in at.error)
