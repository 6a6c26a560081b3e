"""Circuits, copying and composition scores, the rotation symmetry and Theus et al.'s alignment, against hand cases
and independent computations (the full V x V matrices, the model's own forward pass)."""
import numpy as np
import pytest
import torch

from toymodels.induction_heads import circuits as C
from toymodels.induction_heads import lmc as LMC
from toymodels.induction_heads.config import Config
from toymodels.induction_heads.model import forward, init_params, to_numpy, to_torch

SMALL = Config(n_layers=2, d_model=16, n_heads=2, vocab=12, n_ctx=16, period_min=3, period_max=6)


def _params(seeds=(0,)):
    return to_numpy(init_params(SMALL, list(seeds), dtype=torch.float64), np.float64)


def _logits(params, op="none", gain=None):
    tok = torch.randint(0, SMALL.vocab, (4, SMALL.n_ctx), generator=torch.Generator().manual_seed(0))
    g = None if gain is None else torch.as_tensor(gain)
    return forward(to_torch(params, "cpu", torch.float64), tok, SMALL.d_head, resid_op=op, gain=g).numpy()


# --------------------------------------------------------------------------- copying scores


@pytest.mark.parametrize("M, want", [
    (np.eye(4), 1.0),
    (-np.eye(3), -1.0),
    (np.array([[0.0, -1.0], [1.0, 0.0]]), 0.0),             # a 90-degree rotation: eigenvalues ±i
    (np.diag([1.0, 1.0, -1.0]), 1 / 3),
    (np.diag([2.0, -1.0]), 1 / 3),
    (np.array([[2.0, 1.0], [0.0, 3.0]]), 1.0),              # triangular: eigenvalues 2 and 3
])
def test_eigen_copying_score_hand_cases(M, want):
    assert C.eigen_copying_score(M) == pytest.approx(want, abs=1e-12)


def test_the_small_matrix_gives_the_full_ov_circuits_score():
    p = C.instance(_params((3,)), 0)
    for layer in range(2):
        for h in range(SMALL.n_heads):
            full = C.ov_tokens(p, layer, h)                                   # V x V
            assert C.copying_score(p, layer, h) == pytest.approx(C.eigen_copying_score(full), abs=1e-9)


def test_a_head_built_to_copy_scores_one():
    p = C.instance(_params((4,)), 0)
    W_E = p["W_E"]
    p["W_U"] = np.linalg.pinv(W_E)                    # unembed = the embedding's inverse (V x d, d < V)
    p["W_V0"][0] = np.eye(16)[:, :8]                  # value: the first 8 residual directions ...
    p["W_O0"][0] = np.eye(16)[:8]                     # ... written back unchanged: W_OV a projection
    assert C.copying_score(p, 0, 0) == pytest.approx(1.0, abs=1e-9)
    p["W_O0"][0] = -np.eye(16)[:8]
    assert C.copying_score(p, 0, 0) == pytest.approx(-1.0, abs=1e-9)


# --------------------------------------------------------------------------- composition


def test_k_composition_is_the_norm_of_the_bilinear_form_through_the_earlier_head():
    p = C.instance(_params((5,)), 0)
    rng = np.random.default_rng(0)
    q, y = rng.standard_normal((3, 16)), rng.standard_normal((3, 16))
    for h2 in range(2):
        for h1 in range(2):
            # the key reads what head h1 wrote from y: y W_V W_O; the score is q W_Q (key W_K)^T
            direct = (q @ p["W_Q1"][h2]) @ ((y @ C.W_OV(p, 0, h1)) @ p["W_K1"][h2]).T
            M = C.W_QK(p, 1, h2) @ C.W_OV(p, 0, h1).T
            np.testing.assert_allclose(direct, q @ M @ y.T, atol=1e-10)
            want = np.linalg.norm(M) / (np.linalg.norm(C.W_QK(p, 1, h2)) * np.linalg.norm(C.W_OV(p, 0, h1)))
            assert C.k_composition(p, h2, h1) == pytest.approx(want)


def test_composition_scores_are_scale_free_and_the_baseline_sits_near_one_over_sqrt_d():
    p = C.instance(_params((6,)), 0)
    s = C.k_composition(p, 1, 0)
    p["W_Q1"] *= 7.0
    p["W_O0"] *= 0.1
    assert C.k_composition(p, 1, 0) == pytest.approx(s)
    b = C.composition_baseline(64, 16, n=400)
    assert 0.10 < b.mean() < 0.15 and b.std() < 0.02                     # ≈ 1/sqrt(64) for random matrices
    np.testing.assert_array_equal(b, C.composition_baseline(64, 16, n=400))  # seeded


# --------------------------------------------------------------------------- no privileged basis


def test_a_random_rotation_leaves_the_logits_unchanged():
    p = _params((7, 8))
    R = C.random_orthogonal(16, 0)
    np.testing.assert_allclose(R.T @ R, np.eye(16), atol=1e-12)
    np.testing.assert_allclose(_logits(C.rotate(p, R)), _logits(p), atol=1e-10)
    np.testing.assert_allclose(_logits(C.rotate(p, R), "rms"), _logits(p, "rms"), atol=1e-10)


def test_an_elementwise_operation_or_a_gain_or_a_non_orthogonal_map_breaks_it():
    p = _params((9,))
    R = C.random_orthogonal(16, 1)
    gain = 1 + 0.5 * np.random.default_rng(2).standard_normal(16)
    assert np.abs(_logits(C.rotate(p, R), "tanh") - _logits(p, "tanh")).max() > 1e-3
    assert np.abs(_logits(C.rotate(p, R), "rms_gain", gain) - _logits(p, "rms_gain", gain)).max() > 1e-3
    S = R @ np.diag(np.linspace(0.5, 2.0, 16))                          # invertible, not orthogonal
    assert np.abs(_logits(C.rotate(p, S)) - _logits(p)).max() > 1e-3


# --------------------------------------------------------------------------- Theus et al.


def test_the_barrier_on_hand_made_loss_curves():
    lam = LMC.LAMBDAS
    assert LMC.barrier([1.0 + 0.5 * x for x in lam])[0] == pytest.approx(0.0, abs=1e-12)   # a straight line
    bump = [1.0 + 2.0 * (1 - abs(2 * x - 1)) for x in lam]            # peak 3 at λ = 0.5, endpoints 1
    assert LMC.barrier(bump) == (pytest.approx(2.0), pytest.approx(0.5))
    uneven = [x * 1.0 + (1 - x) * 2.0 + (0.7 if x == 0.3 else 0.0) for x in lam]   # L(θ_A) = 1, L(θ_B) = 2
    b, at = LMC.barrier(uneven)
    assert at == pytest.approx(0.3) and b == pytest.approx(0.7)


def _circuit_logits(c):
    return _logits(LMC.stack([c]))


def test_alignment_is_a_symmetry_of_each_model():
    pA, pB = C.instance(_params((10,)), 0), C.instance(_params((11,)), 0)
    cA, cB = LMC.to_circuits(pA), LMC.to_circuits(pB)
    np.testing.assert_allclose(_circuit_logits(cB), _logits({k: v[None] for k, v in pB.items()}), atol=1e-10)
    for kind in ("orthogonal", "permutation"):
        al = LMC.weight_matching(cA, cB, kind, iterations=4)
        np.testing.assert_allclose(_circuit_logits(al["aligned"]), _circuit_logits(cB), atol=1e-9)
        R = al["R"]
        np.testing.assert_allclose(R.T @ R, np.eye(16), atol=1e-10)
        if kind == "permutation":
            assert set(np.unique(R)) <= {0.0, 1.0}


@pytest.mark.parametrize("kind", ["orthogonal", "permutation"])
def test_weight_matching_undoes_a_hidden_symmetry(kind):
    """B = A rotated (or permuted) in its residual stream and with its heads reordered: matching recovers A exactly,
    and the straight line between them is flat (barrier 0)."""
    cA = LMC.to_circuits(C.instance(_params((12,)), 0))
    rng = np.random.default_rng(3)
    R = C.random_orthogonal(16, 5) if kind == "orthogonal" else np.eye(16)[rng.permutation(16)]
    cB = LMC.rotate_circuits(cA, R)
    for layer in range(2):
        cB[f"QK{layer}"], cB[f"OV{layer}"] = cB[f"QK{layer}"][::-1], cB[f"OV{layer}"][::-1]
    al = LMC.weight_matching(cA, cB, kind)
    for k in cA:
        np.testing.assert_allclose(al["aligned"][k], cA[k], atol=1e-8)
    unaligned = [LMC.interpolate(cA, cB, lam) for lam in LMC.LAMBDAS]
    aligned = [LMC.interpolate(cA, al["aligned"], lam) for lam in LMC.LAMBDAS]
    assert max(np.abs(_circuit_logits(m) - _circuit_logits(cA)).max() for m in aligned) < 1e-7
    assert max(np.abs(_circuit_logits(m) - _circuit_logits(cA)).max() for m in unaligned) > 1e-2
