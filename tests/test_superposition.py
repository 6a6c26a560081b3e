"""Superposition toy: the math against independent computations, bad inputs, the shipped store, the page."""
import io
import math

import numpy as np
import pytest
import torch
from scipy import stats

from toymodels import store
from toymodels import superposition as M
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
    df = M.width_sweep(n, [3, 5], rg, lr=1e-2, warmup=0.05, lr_recipe="paper-large", bounded=False, **kw)
    p = M.feature_probs(n, 1.0, 1.0, "linear")[None]
    for m in (3, 5):
        lw, lb = M.lr_for(m, recipe="paper-large")
        alone = M.train_batched(n, [m], [-1.0], p, [0], lr=lw, lr_b=lb, warmup=0.05, **kw)
        other = M.train_batched(n, [m], [-1.0], p, [0], lr=lw, lr_b=lb, warmup=0.1, **kw)
        got = df.loc[df.m == m, "loss"].item()
        assert got == pytest.approx(alone["loss"][0], rel=1e-6) and got != pytest.approx(other["loss"][0], rel=1e-6)


def test_feature_probs_rejects_impossible_density():
    with pytest.raises(ValueError, match="p_1"):
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


def test_hand_gradients_match_autograd_of_the_dense_model():
    I, B, n, m = 3, 64, 30, 4
    torch.manual_seed(0)
    W, b = torch.randn(I, n, m) / 2, torch.randn(I, n) * 0.3
    p = torch.tensor(np.stack([M.feature_probs(n, a, 1.5) for a in (0.0, 0.7, 1.2)]), dtype=torch.float32)[:, None]
    r = torch.rand(I, B, n)
    gW, gb, loss = M.grads(W, b, r, p)
    x = M.sample_x(r, p)
    Wa, ba = W.clone().requires_grad_(), b.clone().requires_grad_()
    y = torch.relu(torch.bmm(torch.bmm(x, Wa), Wa.transpose(1, 2)) + ba[:, None])
    ((y - x) ** 2).mean((1, 2)).sum().backward()
    assert torch.allclose(gW, Wa.grad, atol=1e-6) and torch.allclose(gb, ba.grad, atol=1e-6)
    assert torch.allclose(loss, ((y - x) ** 2).sum((1, 2)).detach() / B, rtol=1e-5)  # n × MSE


def test_lr_recipes():
    assert M.lr_for(40) == (1e-2, 1e-2)
    lw, lb = M.lr_for(8, recipe="paper-large")
    assert lw == pytest.approx(0.02) and lb == pytest.approx(0.25)
    assert M.lr_for(128, recipe="paper-large")[0] == pytest.approx(0.01)
    with pytest.raises(ValueError):
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
    (dict(gamma=float("nan")), "gamma"), (dict(E=15.0, alpha=2.0), "p_1"),
])
def test_config_rejects_bad_settings(bad, match):
    with pytest.raises(ValueError, match=match):
        M.run(M.Config(**bad))


def test_live_calls_are_bounded():
    with pytest.raises(ValueError, match="too large"):
        M.width_sweep(2000, [64, 128], steps=6000, batch=1024)


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
    with pytest.raises(ValueError, match=match):
        M.load_matrix(data, "emb.npy")


def test_matrix_size_cap_and_file_types():
    huge = np.broadcast_to(np.float32(1.0), (M.MAX_ROWS + 1, 8))     # no memory allocated
    with pytest.raises(ValueError, match="cap"):
        M.validate_matrix(huge)
    with pytest.raises(ValueError, match=".npy or .safetensors"):
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
    fn, args, kwargs = M.default_call("geometry")
    store.verify_shipped(M.TOPIC, "geometry", fn, *args, rtol=1e-3, **kwargs)


def test_every_default_view_is_shipped():
    for name in M.DEFAULT_CALLS:
        fn, args, kwargs = M.default_call(name)
        folder = store.shipped_path(M.TOPIC, name)
        assert (folder / "meta.json").exists(), name
        assert store.read_bundle(folder)[1]["key"] == store.call_key(fn, args, kwargs), name


def test_shipped_quick_reproduction_lands_in_the_papers_range():
    """The shipped --quick run (same call as the CLI's) against the issue's acceptance bands."""
    fn, args, kwargs = M.default_call("scaling_quick")
    h = M.headline(store.cached(fn, *args, **kwargs))
    assert M.reproduced(h)  # strong α_m in 0.8–1.2, weak within 0.2 of 0.5, overlap slope within 0.25 of −1
    assert 0.8 <= h["alpha_strong"] <= 1.2 and abs(h["alpha_weak"] - 0.5) <= 0.2
    assert abs(h["overlap_slope"] + 1) <= 0.25 and min(h["phi_strong"]) == 1.0
    assert all(w < 0.15 for w in h["phi_weak"])


def test_shipped_robustness_strong_beats_weak_and_power_linear_near_one():
    """Shipped robustness view (8000 × 128, paper-large lr, 5 % warmup) against the paper's App. D.1 bands."""
    fn, args, kwargs = M.default_call("robustness")
    f = store.cached(fn, *args, **kwargs)["fits"]
    a = f.assign(sup=f["regime"].str.split(" · ").str[0]).set_index(["sup", "profile"])["alpha_m"]
    assert all(a["strong", p] > a["weak", p] + 0.2 for p in M.PROFILES)
    assert 0.8 <= a["strong", "power"] <= 1.2 and 0.75 <= a["strong", "linear"] <= 1.05   # paper 1.0±0.1, 0.89±0.05
    r2 = f.set_index("regime")["r2"]
    assert r2["strong · power"] > 0.95 and r2["strong · linear"] > 0.95


@pytest.mark.slow
def test_full_cpu_reproduction():
    h = M.reproduce(quick=False)
    assert 0.8 <= h["alpha_strong_m20"] <= 1.2 and abs(h["alpha_weak"] - 0.5) <= 0.2


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("superposition")


def test_page_defaults_render_from_shipped_results():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "Superposition & scaling"
    assert not at.error
    assert any("α_m" in str(t.value) for t in at.markdown) or len(at.dataframe) >= 2


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


def test_page_bad_upload_shows_a_message_not_a_traceback():
    at = _page()
    at.file_uploader(key="sp_upload").set_value(("evil.npy", _npy(np.array([{"x": 1}], dtype=object),
                                                                   allow_pickle=True), "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    assert any("Cannot use this file" in e.value for e in at.error)


def test_page_geometry_knobs_and_gamma_slider():
    at = _page()
    at.select_slider(key="geo_gamma").set_value(0.5).run()
    assert not at.exception, at.exception
    assert any("γ = +0.50" in c.value for c in at.caption)


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


@pytest.mark.slow
@pytest.mark.skipif(not torch.cuda.is_available(), reason="the paper-scale run (20 000 × 2048, m = 10…100) needs a GPU")
def test_paper_scale_reproduction_on_gpu():
    p = M.PAPER
    res = M.scaling(p["n"], list(p["ms"]), p["steps"], p["batch"], device="cuda", lr_recipe=p["lr_recipe"])
    h = M.headline(res)
    assert 0.85 <= h["alpha_strong"] <= 1.15 and abs(h["overlap_slope"] + 1) <= 0.15
