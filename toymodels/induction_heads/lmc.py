"""Linear mode connectivity up to symmetry (Theus et al., "Generalized Linear Mode Connectivity for Transformers",
NeurIPS 2025), on two trained attention-only models.

Definitions, as in the paper and its code (read from the authors' repository, not copied):

* **Loss barrier** (their Eq. "barrier"): with θ(λ) = λ θ_A + (1 - λ) θ_B,
  B = sup_λ [ L(θ(λ)) - (λ L(θ_A) + (1 - λ) L(θ_B)) ], the sup taken over the grid λ = 0, 0.1, ..., 1, the loss on
  held-out data.
* **Heads as circuits.** Before aligning, every head is re-parameterised by its two circuits, W_QK = W_Q W_Kᵀ and
  W_OV = W_V W_O (their ``project_to_attn_circuits``): the invertible maps inside a head no longer matter, and an
  aligned interpolation interpolates circuits. The unaligned baseline interpolates the weights as trained.
* **Weight matching** (their ``weight_matching``, 15 iterations): each iteration finds the map of the residual
  stream that best matches B's weights to A's (each weight with the residual index as rows, scaled by 1/sqrt of its
  columns: the embeddings, the positions and the unembedding; from the second iteration on also every head's
  circuits) and applies it to B; then, layer by layer, the permutation of B's heads that minimises
  ||QK_A - QK_B||_F + ||OV_A - OV_B||_F. The map is an **orthogonal** matrix (the Procrustes solution U Vᵀ) or, for
  the permutation-only arm, a **permutation** (the optimal assignment on the same matrix).

Every alignment is a symmetry: the aligned B computes exactly B's function (``tests`` check it to 1e-10).

"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from .config import LAMBDAS

ITERATIONS = 15
ARMS = ("none", "circuits", "permutation", "orthogonal")


def to_circuits(p: dict) -> dict[str, np.ndarray]:
    """One instance's factored weights -> W_E, W_pos, W_U and per layer QK{l}, OV{l} (H, d, d)."""
    out = {k: np.asarray(p[k], np.float64) for k in ("W_E", "W_pos", "W_U")}
    layer = 0
    while f"W_Q{layer}" in p:
        Q, K, V, O = (np.asarray(p[f"W_{n}{layer}"], np.float64) for n in "QKVO")
        out[f"QK{layer}"] = Q @ np.swapaxes(K, -1, -2)
        out[f"OV{layer}"] = V @ O
        layer += 1
    return out


def n_layers(c: dict) -> int:
    return sum(1 for k in c if k.startswith("QK"))


def rotate_circuits(c: dict, R: np.ndarray) -> dict:
    """The same model with its residual stream mapped by R (x -> x R): W_E R, W_pos R, Rᵀ W_U, Rᵀ QK R, Rᵀ OV R."""
    out = {"W_E": c["W_E"] @ R, "W_pos": c["W_pos"] @ R, "W_U": R.T @ c["W_U"]}
    for layer in range(n_layers(c)):
        out[f"QK{layer}"] = R.T @ c[f"QK{layer}"] @ R
        out[f"OV{layer}"] = R.T @ c[f"OV{layer}"] @ R
    return out


def _features(c: dict, with_heads: bool) -> np.ndarray:
    """d x (...) : every weight with the residual index as rows, each scaled by 1/sqrt(its columns)."""
    parts = [c["W_E"].T, c["W_pos"].T, c["W_U"]]
    if with_heads:
        for layer in range(n_layers(c)):
            for M in (c[f"QK{layer}"], c[f"OV{layer}"]):
                for h in range(M.shape[0]):
                    parts += [M[h], M[h].T]
    return np.concatenate([x / np.sqrt(x.shape[1]) for x in parts], axis=1)


def _residual_map(FA: np.ndarray, FB: np.ndarray, kind: str) -> np.ndarray:
    """R minimising ||FA - Rᵀ FB||_F over orthogonal matrices (Procrustes) or permutations (assignment)."""
    C = FB @ FA.T
    if kind == "orthogonal":
        U, _, Vt = np.linalg.svd(C)
        return U @ Vt
    rows, cols = linear_sum_assignment(-C)
    R = np.zeros_like(C)
    R[rows, cols] = 1.0
    return R


def _head_permutation(cA: dict, cB: dict, layer: int) -> np.ndarray:
    QA, QB, OA, OB = cA[f"QK{layer}"], cB[f"QK{layer}"], cA[f"OV{layer}"], cB[f"OV{layer}"]
    cost = (np.linalg.norm(QA[:, None] - QB[None], axis=(2, 3)) + np.linalg.norm(OA[:, None] - OB[None], axis=(2, 3)))
    _, perm = linear_sum_assignment(cost)
    return perm                       # A's head i is matched with B's head perm[i]


def weight_matching(cA: dict, cB: dict, kind: str = "orthogonal", iterations: int = ITERATIONS) -> dict:
    """B aligned to A (circuit form): ``aligned`` (B under the symmetry found), ``R`` (the total residual map) and
    ``perms`` (per layer, B's head order). ``kind``: "orthogonal" or "permutation"."""
    if kind not in ("orthogonal", "permutation"):
        raise ValueError(f"kind must be 'orthogonal' or 'permutation', got {kind!r}")
    d = cA["W_E"].shape[1]
    B, R_total = dict(cB), np.eye(d)
    perms = [np.arange(cB[f"QK{layer}"].shape[0]) for layer in range(n_layers(cB))]
    for it in range(iterations):
        R = _residual_map(_features(cA, it > 0), _features(B, it > 0), kind)
        B = rotate_circuits(B, R)
        R_total = R_total @ R
        for layer in range(n_layers(B)):
            perm = _head_permutation(cA, B, layer)
            B[f"QK{layer}"], B[f"OV{layer}"] = B[f"QK{layer}"][perm], B[f"OV{layer}"][perm]
            perms[layer] = perms[layer][perm]
    return {"aligned": B, "R": R_total, "perms": perms}


def interpolate(a: dict, b: dict, lam: float) -> dict:
    """λ a + (1 - λ) b, weight by weight (both in the same form: factored or circuits)."""
    return {k: lam * np.asarray(a[k]) + (1 - lam) * np.asarray(b[k]) for k in a}


def barrier(losses, lambdas=LAMBDAS) -> tuple[float, float]:
    """(B, the λ where it is reached) from the losses L(θ(λ)) on the grid (θ(1) = θ_A, θ(0) = θ_B)."""
    L = np.asarray(losses, dtype=np.float64)
    lam = np.asarray(lambdas, dtype=np.float64)
    i0, i1 = int(np.argmin(lam)), int(np.argmax(lam))
    excess = L - (lam * L[i1] + (1 - lam) * L[i0])
    k = int(np.argmax(excess))
    return float(excess[k]), float(lam[k])


def path(pA: dict, pB: dict, arm: str, iterations: int = ITERATIONS) -> list[dict]:
    """The weights along the straight line from B (λ = 0) to A (λ = 1) for one arm of the comparison: "none"
    (factored weights as trained), "circuits" (heads as circuits, no alignment), "permutation", "orthogonal"."""
    if arm == "none":
        A, B = ({k: np.asarray(v, np.float64) for k, v in p.items()} for p in (pA, pB))
    else:
        A, B = to_circuits(pA), to_circuits(pB)
        if arm in ("permutation", "orthogonal"):
            B = weight_matching(A, B, arm, iterations)["aligned"]
    return [interpolate(A, B, lam) for lam in LAMBDAS]


def stack(models: list[dict]) -> dict[str, np.ndarray]:
    """A list of single-instance weight dicts -> one batched dict (instances first), for ``model.forward``."""
    return {k: np.stack([m[k] for m in models]) for k in models[0]}
