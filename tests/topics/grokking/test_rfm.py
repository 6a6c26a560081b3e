"""The RFM math against independent computations: hand-worked kernels and AGOPs, finite differences, the dense
definition of the AGOP, scipy's matrix square root, brute-force circulant averages."""
import itertools

import numpy as np
import pytest
import scipy.linalg

from toymodels.grokking import rfm


def _spd(d, rng):
    Q = rng.standard_normal((d, d))
    return Q @ Q.T / d + 0.5 * np.eye(d)


# --------------------------------------------------------------------------- data


@pytest.mark.parametrize("op", ["x+y", "x-y"])
def test_pairs_and_labels_by_brute_force(op):
    p = 7
    pairs, labels = rfm.modular_pairs(p, op)
    want = [((x, y), (x + y) % p if op == "x+y" else (x - y) % p) for x, y in itertools.product(range(p), repeat=2)]
    assert [tuple(r) for r in pairs] == [w[0] for w in want]
    assert labels.tolist() == [w[1] for w in want]


def test_split_is_seeded_disjoint_and_complete():
    a, b = rfm.split(11, "x+y", 0.5, 3), rfm.split(11, "x+y", 0.5, 3)
    assert np.array_equal(a["train_pairs"], b["train_pairs"])
    assert len(a["train_pairs"]) == int(0.5 * 121) and len(a["test_pairs"]) == 121 - 60
    seen = {tuple(r) for r in a["train_pairs"]} | {tuple(r) for r in a["test_pairs"]}
    assert len(seen) == 121
    assert not np.array_equal(a["train_pairs"], rfm.split(11, "x+y", 0.5, 4)["train_pairs"])
    X = rfm.one_hot_inputs(a["train_pairs"], 11)
    assert X.shape == (60, 22) and np.all(X.sum(1) == 2)
    rows = np.arange(60)
    assert np.all(X[rows, a["train_pairs"][:, 0]] == 1) and np.all(X[rows, 11 + a["train_pairs"][:, 1]] == 1)


# --------------------------------------------------------------------------- the kernel


def test_kernel_by_hand():
    u = np.array([[1.0, 0, 0, 1]])   # x = 0, y = 1 at p = 2
    v = np.array([[0.0, 1, 0, 1]])   # x = 1, y = 1: u - v = (1, -1, 0, 0)
    L = 1.5
    assert rfm.gaussian_kernel(u, v, np.eye(4), L)[0, 0] == pytest.approx(np.exp(-2 / (2 * L * L)), rel=1e-14)
    assert rfm.gaussian_kernel(u, v, np.diag([1.0, 2, 3, 4]), L)[0, 0] == pytest.approx(np.exp(-3 / (2 * L * L)))
    M = np.eye(4)
    M[0, 1] = M[1, 0] = 0.5          # (u - v)ᵀ M (u - v) = 1 + 1 - 2 · 0.5 = 1
    assert rfm.gaussian_kernel(u, v, M, L)[0, 0] == pytest.approx(np.exp(-1 / (2 * L * L)))
    assert rfm.gaussian_kernel(u, u, M, L)[0, 0] == pytest.approx(1.0)


def test_kernel_against_pairwise_loop_and_clamp():
    rng = np.random.default_rng(0)
    U, V, M = rng.standard_normal((5, 6)), rng.standard_normal((4, 6)), _spd(6, rng)
    K = rfm.gaussian_kernel(U, V, M, 2.0)
    for i, j in itertools.product(range(5), range(4)):
        d = U[i] - V[j]
        assert K[i, j] == pytest.approx(np.exp(-d @ M @ d / 8.0), rel=1e-12)
    # An indefinite metric gives a negative squared distance: clamped at 0, so the kernel is at most 1.
    assert rfm.gaussian_kernel(U, V, -np.eye(6), 2.0).max() == 1.0


def test_ridge_zero_interpolates():
    s = rfm.split(7, "x+y", 0.5, 0)
    X, Y = rfm.one_hot_inputs(s["train_pairs"], 7), rfm.one_hot_targets(s["train_labels"], 7)
    K = rfm.gaussian_kernel(X, X, np.eye(14), 2.5)
    A = rfm.solve(K, Y)
    assert np.allclose(K @ A, Y, atol=1e-8)
    assert rfm.evaluate(K, A, Y)[0] == 1.0
    A_ridge = rfm.solve(K, Y, ridge=0.1)
    assert np.allclose((K + 0.1 * np.eye(len(K))) @ A_ridge, Y)


def test_evaluate_by_hand():
    K = np.eye(3)
    A = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    Y = np.array([[1.0, 0], [0, 1], [0, 1]])
    acc, mse = rfm.evaluate(K, A, Y)
    assert acc == pytest.approx(2 / 3)
    assert mse == pytest.approx(np.mean((A - Y) ** 2))


# --------------------------------------------------------------------------- gradients and the AGOP


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    p = 5
    s = rfm.split(p, "x+y", 0.6, 1)
    X, Y = rfm.one_hot_inputs(s["train_pairs"], p), rfm.one_hot_targets(s["train_labels"], p)
    M, L = _spd(2 * p, rng), 2.0
    A = rfm.solve(rfm.gaussian_kernel(X, X, M, L), Y, ridge=1e-3)
    U = np.vstack([X[:3], rng.standard_normal((2, 2 * p))])   # training points and points off the one-hot grid
    G = rfm.predictor_gradients(U, X, A, M, L)                 # (5, c, d)
    h = 1e-6
    for k in range(2 * p):
        e = np.zeros(2 * p)
        e[k] = h
        fd = (rfm.gaussian_kernel(U + e, X, M, L) @ A - rfm.gaussian_kernel(U - e, X, M, L) @ A) / (2 * h)
        assert np.allclose(G[:, :, k], fd, rtol=1e-6, atol=1e-8)


def test_agop_of_two_points_by_hand():
    """Two points x1, x2, δ = x1 - x2, K12 = K_M(x1, x2): ∇f_c(x1) = -(A_2c K12 / L²) M δ and
    ∇f_c(x2) = +(A_1c K12 / L²) M δ, so the AGOP is (1/2) Σ_c (A_1c² + A_2c²) (K12² / L⁴) M δ δᵀ M; centred,
    Σ_c ((A_1c + A_2c) / 2)² (K12² / L⁴) M δ δᵀ M."""
    rng = np.random.default_rng(2)
    X = np.array([[1.0, 0, 0, 1], [0, 1, 0, 1]])
    A = rng.standard_normal((2, 3))
    M, L = _spd(4, rng), 1.7
    delta = X[0] - X[1]
    K12 = np.exp(-delta @ M @ delta / (2 * L * L))
    outer = np.outer(M @ delta, M @ delta) * K12 ** 2 / L ** 4
    plain = 0.5 * np.sum(A[0] ** 2 + A[1] ** 2) * outer
    centred = np.sum(((A[0] + A[1]) / 2) ** 2) * outer
    assert np.allclose(rfm.agop(X, A, M, L, centering=False), plain, rtol=1e-12, atol=1e-15)
    assert np.allclose(rfm.agop(X, A, M, L, centering=True), centred, rtol=1e-12, atol=1e-15)
    pairs = np.array([[0, 1], [1, 1]])   # the same points as digits at p = 2: the digit-grouped path
    assert np.allclose(rfm.agop(X, A, M, L, centering=True, pairs=pairs, p=2), centred, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("centering", [True, False])
@pytest.mark.parametrize("grouped", [True, False])
def test_chunked_agop_equals_the_dense_definition(centering, grouped):
    rng = np.random.default_rng(3)
    p = 7
    s = rfm.split(p, "x-y", 0.5, 5)
    X, Y = rfm.one_hot_inputs(s["train_pairs"], p), rfm.one_hot_targets(s["train_labels"], p)
    M, L = _spd(2 * p, rng), 2.5
    A = rfm.solve(rfm.gaussian_kernel(X, X, M, L), Y)
    G = rfm.predictor_gradients(X, X, A, M, L)                      # (n, c, d), the naive tensor
    if centering:
        G = G - G.mean(axis=0)
    want = np.einsum("icd,ice->de", G, G) / len(X)
    kw = dict(pairs=s["train_pairs"], p=p) if grouped else {}
    got = rfm.agop(X, A, M, L, centering=centering, chunk_bytes=8 * p * 2 * p * 5, **kw)   # chunks of 5 points
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    assert np.array_equal(got, got.T)


# --------------------------------------------------------------------------- matrix power


def test_matrix_power_matches_scipy_sqrtm_and_integer_powers():
    rng = np.random.default_rng(4)
    S = _spd(12, rng)
    assert np.allclose(rfm.matrix_power(S, 0.5), np.real(scipy.linalg.sqrtm(S)), atol=1e-10)
    assert np.allclose(rfm.matrix_power(S, 1.0), S, atol=1e-12)
    R = rfm.matrix_power(S, 0.25)
    assert np.allclose(R @ R @ R @ R, S, atol=1e-9)
    # A PSD matrix with a round-off negative eigenvalue: clipped, no NaN.
    v = rng.standard_normal(12)
    low = np.outer(v, v) - 1e-14 * np.eye(12)
    assert np.all(np.isfinite(rfm.matrix_power(low, 0.5)))


# --------------------------------------------------------------------------- circulant structure


def _circ_brute(B, hankel=False):
    p = len(B)
    out = np.zeros_like(B)
    for i, j in itertools.product(range(p), repeat=2):
        cells = [(k, (i + j - k) % p) if hankel else (k, (k + j - i) % p) for k in range(p)]
        out[i, j] = np.mean([B[a, b] for a, b in cells])
    return out


@pytest.mark.parametrize("hankel", [False, True])
def test_circulant_part_by_brute_force(hankel):
    B = np.random.default_rng(5).standard_normal((7, 7))
    assert np.allclose(rfm.circulant_part(B, hankel), _circ_brute(B, hankel))


def _with_block(B):
    p = len(B)
    M = np.eye(2 * p)
    M[:p, p:], M[p:, :p] = B, B.T
    return M


def test_circulant_deviation_extremes():
    p = 11
    rng = np.random.default_rng(6)
    col = rng.standard_normal(p)
    C = scipy.linalg.circulant(col)
    assert rfm.circulant_deviation(_with_block(C), "x+y") == pytest.approx(0.0, abs=1e-12)
    assert rfm.circulant_deviation(_with_block(np.rot90(C)), "x-y") == pytest.approx(0.0, abs=1e-12)
    assert rfm.circulant_deviation(_with_block(np.rot90(C)), "x+y") > 0.5    # a Hankel block is not circulant
    noise = [rfm.circulant_deviation(_with_block(rng.standard_normal((p, p))), "x+y") for _ in range(200)]
    # For i.i.d. entries, E|B - circ B|² / E|B - mean B|² = (p² - p) / (p² - 1): D ≈ sqrt(p / (p + 1)).
    assert np.mean(np.square(noise)) == pytest.approx(p / (p + 1), rel=0.02)
    assert np.isnan(rfm.circulant_deviation(np.eye(2 * p)))


@pytest.mark.parametrize("op", ["x+y", "x-y"])
def test_random_circulant_metric_is_the_official_construction(op):
    p = 13
    M = rfm.random_circulant_metric(p, op, seed=7)
    col = np.random.default_rng(7).random(p)
    col -= col.mean()
    C = scipy.linalg.circulant(col) if op == "x+y" else np.rot90(scipy.linalg.circulant(col))
    Z = scipy.linalg.sqrtm(np.block([[np.eye(p) - 1 / p, C], [C.T, np.eye(p) - 1 / p]]))
    assert np.allclose(np.real(Z @ Z)[:p, p:], C, atol=1e-8)   # the square root of the intended block matrix
    assert np.allclose(M, np.real(Z))


def test_random_circulant_metric_for_addition_is_a_circulant_psd_metric():
    """For x + y the real part of sqrtm is symmetric, positive semi-definite and its off-diagonal block circulant.
    (For x - y the block matrix has repeated negative eigenvalues, so sqrtm has no principal root and scipy's answer
    can be non-symmetric: the lab notebook records it; the kernel only sees M's symmetric part.)"""
    for p in (13, 31, 61):
        M = rfm.random_circulant_metric(p, "x+y", seed=7)
        assert np.allclose(M, M.T, atol=1e-9)
        assert np.linalg.eigvalsh((M + M.T) / 2).min() > -1e-9
        assert rfm.circulant_deviation(M, "x+y") < 1e-8
