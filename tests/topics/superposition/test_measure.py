"""Superposition toy: the paper's measurements (overlap, Welch bound, φ, Eq. 4, the exponent fit), the bounds of
the live calls and the upload checks, against brute force, Monte Carlo and hand-worked cases."""
import io
import math

import numpy as np
import pytest

import toymodels.superposition as M
from toymodels.topic import InputError

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


def test_selection_share_and_ideal_weak_loss_by_hand():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    assert M.selection_share(np.array([1.0, 0.9, 0.0, 0.0]), p) == 1.0           # keeps the top two
    assert M.selection_share(np.array([1.0, 0.0, 0.0, 0.8]), p) == 0.5           # the first and the rarest
    assert M.selection_share(np.array([0.0, 0.0, 0.7, 0.0]), p) == 0.0
    assert math.isnan(M.selection_share(np.zeros(4), p))
    assert M.selection_share(np.array([0.0, 1.0, 0.0, 0.0]), p[::-1]) == 0.0       # rank by frequency, not index
    assert M.ideal_weak_loss(p, 2) == pytest.approx(4 / 3 * 0.3 - 0.04 - 0.01)    # Eq. 4 over features 3 and 4
    assert M.ideal_weak_loss(p, 2) == pytest.approx(M.weak_prediction(np.array([1.0, 1.0, 0.0, 0.0]), p))
    assert M.ideal_weak_loss(p, 4) == 0.0


def test_fit_exponent_recovers_a_known_power_law():
    ms = np.array([10, 15, 25, 39, 63, 100])
    rng = np.random.default_rng(3)
    losses = 3.0 * ms ** -0.73 * np.exp(rng.normal(0, 0.01, len(ms)))
    f = M.fit_exponent(ms, losses)
    assert f["alpha_m"] == pytest.approx(0.73, abs=0.03) and f["r2"] > 0.99 and f["C"] == pytest.approx(3.0, rel=0.1)
    exact = M.fit_exponent(ms, 2.0 / ms)
    assert exact["alpha_m"] == pytest.approx(1.0) and exact["r2"] == pytest.approx(1.0)


def test_fit_exponent_is_scipys_linregress():
    """Our least squares against scipy.stats.linregress on random noisy power laws (3-11 points)."""
    from scipy import stats

    rng = np.random.default_rng(1)
    for _ in range(200):
        ms = np.sort(rng.choice(np.arange(4, 400), rng.integers(3, 12), replace=False))
        losses = ms ** -rng.uniform(0.5, 2) * np.exp(rng.normal(0, rng.choice([1e-3, 0.1, 1]), len(ms)))
        f, g = M.fit_exponent(ms, losses), stats.linregress(np.log(ms), np.log(losses))
        assert (f["alpha_m"], f["r2"], f["C"]) == pytest.approx((-g.slope, g.rvalue ** 2, np.exp(g.intercept)),
                                                                rel=1e-12)
        assert f["stderr"] == pytest.approx(g.stderr, rel=1e-4)   # linregress loses digits in 1 - r² when r² -> 1


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


def test_memory_budget_by_hand_and_against_the_bench_model():
    """``memory_mb``: the work buffers by hand, and the same as bench_memory's fitted ``model_superposition`` where
    every group has the widest width; a live call over ``MAX_MB`` is refused before anything runs."""
    from bench.bench_memory import model_superposition

    z, W = 4 * 128 * 1000, 16 * 1000 * 20
    step, active = 4 * 1024 * 1000, 10 * 1.0 * 1024 * 20
    assert M.memory_mb(1000, [20], 128) == pytest.approx(90 + (z + W + step + active) / 2**20)
    for n, ms, batch, E in ((2000, [128] * 32, 1024, 1.0), (500, [64, 64], 256, 5.0)):
        assert M.memory_mb(n, ms, batch, E) == pytest.approx(model_superposition(n, [len(ms)], batch, max(ms), E))
    with pytest.raises(InputError, match="MB"):
        M.gamma_sweep(n=2000, m=128, gammas=[0.1] * 32, steps=10, batch=1024)
    assert M.memory_mb(2000, [128] * 32, 1024) > M.MAX_MB


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


