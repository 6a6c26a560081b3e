"""The circuits of Elhage et al. (2021), read off the weights (numpy, float64; light: no torch).

Row-vector convention, as in ``model``: ``x' = x W``. For one instance's weights (the dict of ``model.param_names``
with the instance dimension removed):

* **QK circuit** of head h (where it attends): W_QK = W_Q W_Kᵀ (d x d); token-to-token W_E W_QK W_Eᵀ (V x V,
  query token x key token) and position-to-position W_pos W_QK W_posᵀ (T x T).
* **OV circuit** (what it writes when it attends to a token): W_OV = W_V W_O; token to logits W_E W_OV W_U
  (V x V, attended token x logit), the transpose of the paper's W_U W_O W_V W_E in column convention.
* **Copying score** (§ "Copying / OV eigenvalues"): sum(λ) / sum(|λ|) over the eigenvalues λ of the full OV
  circuit; 1 for a head that raises the logit of the token it attends to (positive eigenvalues).
* **Composition** of a layer-2 head h2 with a layer-1 head h1: K-composition ||W_QK^{h2} W_OV^{h1}ᵀ||_F /
  (||W_QK^{h2}||_F ||W_OV^{h1}||_F): the key side of h2 reads what h1 wrote (Q-composition: the query side;
  V-composition: h2's values). ``composition_baseline`` is the same score of random Gaussian matrices of the same
  shapes (the paper's comparison), fixed before any claim is tested.
* **No privileged basis:** ``rotate(params, R)`` maps every write by R and every read by Rᵀ (R orthogonal):
  W_E R, W_pos R, Rᵀ W_Q, Rᵀ W_K, Rᵀ W_V, W_O R, Rᵀ W_U. With no elementwise operation on the residual stream the
  logits are unchanged.
"""
from __future__ import annotations

import numpy as np


def instance(params: dict, e: int) -> dict[str, np.ndarray]:
    """Instance ``e`` of batched weights, as float64 arrays."""
    return {k: np.asarray(v[e], dtype=np.float64) for k, v in params.items()}


def n_layers(p: dict) -> int:
    return sum(1 for k in p if k.startswith("W_Q"))


def W_QK(p: dict, layer: int, head: int) -> np.ndarray:
    return p[f"W_Q{layer}"][head] @ p[f"W_K{layer}"][head].T


def W_OV(p: dict, layer: int, head: int) -> np.ndarray:
    return p[f"W_V{layer}"][head] @ p[f"W_O{layer}"][head]


def qk_tokens(p: dict, layer: int, head: int) -> np.ndarray:
    """(V, V) query token x key token: the direct-path QK circuit W_E W_QK W_Eᵀ."""
    return p["W_E"] @ W_QK(p, layer, head) @ p["W_E"].T


def qk_positions(p: dict, layer: int, head: int) -> np.ndarray:
    """(T, T) query position x key position: W_pos W_QK W_posᵀ."""
    return p["W_pos"] @ W_QK(p, layer, head) @ p["W_pos"].T


def ov_tokens(p: dict, layer: int, head: int) -> np.ndarray:
    """(V, V) attended token x logit: the full OV circuit W_E W_OV W_U."""
    return p["W_E"] @ W_OV(p, layer, head) @ p["W_U"]


def induction_qk(p: dict, head2: int, head1: int) -> np.ndarray:
    """(V, V) query token x the key's *previous* token, through K-composition with layer-1 head ``head1``: the
    query side reads the current token (W_E), the key side reads what head1 wrote there (W_E W_OV^{head1}, the
    token head1 attended to). An induction head with a previous-token head1 has a bright diagonal."""
    return p["W_E"] @ W_QK(p, 1, head2) @ (p["W_E"] @ W_OV(p, 0, head1)).T


def eigen_copying_score(M: np.ndarray) -> float:
    """sum(λ) / sum(|λ|) over the eigenvalues of a square matrix (1: all positive; -1: all negative; 0 for a
    rotation's ±i pairs). NaN for the zero matrix."""
    lam = np.linalg.eigvals(np.asarray(M, dtype=np.float64))
    den = np.abs(lam).sum()
    return float(np.real(lam.sum()) / den) if den > 0 else float("nan")


def copying_score(p: dict, layer: int, head: int) -> float:
    """The copying score of a head's full OV circuit. The nonzero eigenvalues of W_E W_V W_O W_U equal those of the
    d_head x d_head matrix W_O W_U W_E W_V (cyclic property), which is what is computed."""
    small = p[f"W_O{layer}"][head] @ p["W_U"] @ p["W_E"] @ p[f"W_V{layer}"][head]
    return eigen_copying_score(small)


def copying_scores(p: dict) -> np.ndarray:
    """(L, H) copying score of every head."""
    L, H = n_layers(p), p["W_Q0"].shape[0] if n_layers(p) else 0
    return np.array([[copying_score(p, layer, h) for h in range(H)] for layer in range(L)]).reshape(L, H)


def _comp(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(A @ B) / (np.linalg.norm(A) * np.linalg.norm(B)))


def k_composition(p: dict, head2: int, head1: int) -> float:
    """||W_QK^{h2} W_OV^{h1}ᵀ||_F / (||W_QK^{h2}||_F ||W_OV^{h1}||_F): layer-2 head ``head2``'s keys read what
    layer-1 head ``head1`` wrote."""
    return _comp(W_QK(p, 1, head2), W_OV(p, 0, head1).T)


def q_composition(p: dict, head2: int, head1: int) -> float:
    return _comp(W_OV(p, 0, head1), W_QK(p, 1, head2))


def v_composition(p: dict, head2: int, head1: int) -> float:
    return _comp(W_OV(p, 0, head1), W_OV(p, 1, head2))


def composition_scores(p: dict) -> dict[str, np.ndarray]:
    """{"K", "Q", "V"}: (H2, H1) composition scores of every layer-2 head with every layer-1 head."""
    H = p["W_Q0"].shape[0]
    out = {}
    for name, fn in (("K", k_composition), ("Q", q_composition), ("V", v_composition)):
        out[name] = np.array([[fn(p, h2, h1) for h1 in range(H)] for h2 in range(H)])
    return out


def composition_baseline(d_model: int, d_head: int, n: int = 2000, seed: int = 12345) -> np.ndarray:
    """K-composition scores of ``n`` draws of random Gaussian W_Q, W_K, W_V, W_O of the model's shapes (d x d_head
    and d_head x d): the baseline a trained pair is compared with. Scale-free (any variance gives the same
    scores)."""
    rng = np.random.default_rng(seed)
    out = np.empty(n)
    for i in range(n):
        Wq, Wk, Wv = (rng.standard_normal((d_model, d_head)) for _ in range(3))
        Wo = rng.standard_normal((d_head, d_model))
        out[i] = _comp(Wq @ Wk.T, (Wv @ Wo).T)
    return out


def random_orthogonal(d: int, seed: int) -> np.ndarray:
    """A Haar-random orthogonal matrix (QR of a Gaussian matrix, signs fixed by R's diagonal)."""
    rng = np.random.default_rng(seed)
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))[None, :]


def rotate(params: dict, R: np.ndarray) -> dict:
    """The same model in a rotated residual basis (works on batched or single-instance weights): writes x R,
    reads Rᵀ x. ``R`` is d x d orthogonal (or, for the test that breaks it, anything)."""
    out = {}
    for k, v in params.items():
        v = np.asarray(v, dtype=np.float64)
        if k in ("W_E", "W_pos") or k.startswith("W_O"):
            out[k] = v @ R
        elif k == "W_U" or k.startswith(("W_Q", "W_K", "W_V")):
            out[k] = np.swapaxes(np.swapaxes(v, -1, -2) @ R, -1, -2)         # Rᵀ W
        else:
            raise KeyError(f"unknown weight {k!r}")
    return out


def head_table(p: dict, induction: np.ndarray, prev: np.ndarray) -> list[dict]:
    """One row per head: layer, head, induction score, previous-token score, copying score."""
    cs = copying_scores(p)
    return [{"layer": layer + 1, "head": h, "induction": float(induction[layer, h]),
             "prev_token": float(prev[layer, h]), "copying": float(cs[layer, h])}
            for layer in range(cs.shape[0]) for h in range(cs.shape[1])]
