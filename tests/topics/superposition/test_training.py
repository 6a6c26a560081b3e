"""Superposition toy: the data (Eq. 1), Eq. 2, the hand-written gradients, the batched engine and its
convergence rule, each against an independent computation (hand-worked cases, autograd, plain PyTorch, Monte
Carlo)."""
import math

import numpy as np
import pytest
import torch
from scipy import stats

import toymodels.superposition as M
from toymodels.superposition import sweeps as S
from toymodels.superposition import training as C
from toymodels.topic import InputError

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
    df = S.sweep(n, [3, 5], rg, lr_recipe="paper-large", warmup=0.05, **kw)
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
    fast, slow = S.sweep(**kw), S.sweep(**kw, one_by_one=True)
    assert len(fast) == 2 * 3 * 2
    # models stop on their own: some at the scheduled 60 steps, some later, some at the cap, the same in both
    assert fast["steps_run"].nunique() >= 3 and {60, 200} <= set(fast["steps_run"])
    assert (fast["steps_run"] == slow["steps_run"]).all()
    assert np.allclose(fast["loss"], slow["loss"], rtol=1e-4)
    assert np.allclose(fast["overlap"], slow["overlap"], rtol=1e-3)
    assert (fast["converged"] == slow["converged"]).all()


def test_sweep_reports_the_share_of_top_features_from_the_trained_norms():
    """``top_share`` is ``selection_share`` of the trained model's row norms (recomputed from train_groups)."""
    n, p = 120, M.feature_probs(120, 1.5)
    df = S.sweep(n, [6], [dict(name="w", gamma=0.3, alpha=1.5)], steps=300, batch=64, seeds=(2,))
    alone = C.train_groups(n, [(6, [dict(gamma=0.3, seed=2, data=0)])], p[None], 300, 64, lr_recipe="paper-large",
                           warmup=0.05)[0]
    norms = alone["norms"][0]
    assert df["top_share"].item() == pytest.approx(M.selection_share(norms, p))
    assert df["phi_half"].item() == pytest.approx((norms > 0.5).mean())


def test_small_width_recipes_train_each_recipe_on_its_own_schedule():
    recipes = (dict(name="a", lr_recipe="paper-large", steps=40, batch=16, warmup=0.05, max_steps=None),
               dict(name="b", lr_recipe="constant", steps=60, batch=32, warmup=0.1, max_steps=None))
    res = S.small_width_recipes(n=60, m=4, seeds=(1, 2), recipes=recipes)
    t = res["table"]
    assert list(t["recipe"]) == ["a", "a", "b", "b"] and list(t["steps_run"]) == [40, 40, 60, 60]
    one = S.sweep(60, [4], M.HEADLINE_REGIMES[:1], 60, 32, seeds=(2,), lr_recipe="constant", warmup=0.1)
    assert t["loss"].iloc[3] == pytest.approx(one["loss"].item(), rel=1e-6)


def test_cost_model_is_within_a_factor_of_three_of_the_cpu_time():
    """``expected_seconds`` (what the page's buttons promise) against the process CPU time of a live call."""
    import time

    for cfg in (M.Config(n=400, m=8, steps=600, batch=64), M.Config(n=600, m=64, steps=300, batch=256)):
        t = time.process_time()
        M.run(cfg)
        spent = time.process_time() - t
        want = M.expected_seconds(cfg.n, [cfg.m], cfg.steps, cfg.batch)
        assert want / 3 <= spent <= want * 3, (cfg, spent, want)


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
        rg = [r for r in S.profile_regimes(1000, 80) if r["profile"] == prof][0]
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


