"""The Recursive Feature Machine on modular arithmetic: the paper's math, in numpy (float64).

Mallinar et al., "Emergence in non-neural models: grokking modular arithmetic via average gradient outer
product" (arXiv 2407.20199), §2 and the official code (``nmallinar/rfm-grokking``: ``train_kernel.py``,
``models/gaussian_kernel.py``, ``train_random_circulant_kernel.py``), read for its definitions.

One RFM iteration (§2, Algorithm 1):

1. kernel regression with the Mahalanobis Gaussian kernel K_M(u, v) = exp(-(u - v)ᵀ M (u - v) / (2 L²)):
   A = (K_M(X, X) + λ I)⁻¹ Y, so the predictor is f(u) = Σ_j A_j K_M(u, x_j);
2. the gradients of the predictor at the training points, ∇f_c(x_i) = -(1/L²) Σ_j A_jc K_ij M (x_i - x_j),
   centred over i (the official ``centering=True``);
3. M <- AGOP^s with AGOP = (1/n) Σ_i G_iᵀ G_i (G_i: the c × d Jacobian at x_i) and s = 1/2 by default.

Inputs are one-hot(x) ++ one-hot(y) (d = 2p), targets one-hot((x ∘ y) mod p). Everything here is pure and seeded.
"""
from __future__ import annotations

import numpy as np

OPERATIONS = ("x+y", "x-y")

# The AGOP accumulates per-point Jacobians over chunks of training points holding at most this many bytes, so the
# naive n × c × d gradient tensor (about 110 MB at p = 61) is never built.
CHUNK_BYTES = 16 << 20


# --------------------------------------------------------------------------- data


def modular_pairs(p: int, op: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (x, y) in [0, p)² and its label (x ∘ y) mod p, in the official order (x major, y minor).

    Returns ``pairs`` (p², 2) int and ``labels`` (p²,) int."""
    if op not in OPERATIONS:
        raise ValueError(f"op must be one of {OPERATIONS}")
    x, y = np.divmod(np.arange(p * p), p)
    z = x + y if op == "x+y" else x - y
    return np.stack([x, y], axis=1), np.mod(z, p)


def split(p: int, op: str, train_frac: float, seed: int) -> dict:
    """A seeded random split of all p² pairs: the first ``int(train_frac · p²)`` of a permutation train, the rest
    test (the official ``make_data_splits``, with numpy's generator in place of torch's)."""
    pairs, labels = modular_pairs(p, op)
    perm = np.random.default_rng(seed).permutation(p * p)
    n_train = int(train_frac * p * p)
    tr, te = perm[:n_train], perm[n_train:]
    return {"train_pairs": pairs[tr], "train_labels": labels[tr], "test_pairs": pairs[te], "test_labels": labels[te]}


def one_hot_inputs(pairs: np.ndarray, p: int) -> np.ndarray:
    """one-hot(x) ++ one-hot(y): (n, 2p) float64, two ones per row."""
    X = np.zeros((len(pairs), 2 * p))
    rows = np.arange(len(pairs))
    X[rows, pairs[:, 0]] = 1.0
    X[rows, p + pairs[:, 1]] = 1.0
    return X


def one_hot_targets(labels: np.ndarray, p: int) -> np.ndarray:
    """(n, p) float64."""
    return np.eye(p)[labels]


# --------------------------------------------------------------------------- the kernel machine


def gaussian_kernel(U: np.ndarray, V: np.ndarray, M: np.ndarray, bandwidth: float) -> np.ndarray:
    """K_M(u, v) = exp(-(u - v)ᵀ M (u - v) / (2 L²)) for every row pair: (len(U), len(V)).

    The squared Mahalanobis distance uᵀMu + vᵀMv - 2 uᵀMv is clamped at 0 before the exponential, as the official
    ``gaussian_M`` does (round-off, and the indefinite metric of the random-circulant control, can make it
    slightly negative)."""
    UM = U @ M                                         # (nu, d)
    d2 = np.einsum("id,id->i", UM, U)[:, None] + np.einsum("jd,jd->j", V @ M, V)[None, :] - 2.0 * (UM @ V.T)
    np.maximum(d2, 0.0, out=d2)
    d2 *= -1.0 / (2.0 * bandwidth ** 2)
    return np.exp(d2, out=d2)


def solve(K: np.ndarray, Y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """The kernel regression coefficients A = (K + λ I)⁻¹ Y: (n, c). An LU solve, as the official code
    (``np.linalg.solve``); with λ = 0 the predictor interpolates the training labels."""
    if ridge:
        K = K + ridge * np.eye(len(K))
    return np.linalg.solve(K, Y)


def predictor_gradients(x: np.ndarray, X: np.ndarray, A: np.ndarray, M: np.ndarray, bandwidth: float) -> np.ndarray:
    """∇f_c(u) for every row u of ``x`` and class c: (m, c, d), straight from the definition (dense; for checks and
    small problems). f_c(u) = Σ_j A_jc K_M(u, x_j), so ∇f_c(u) = -(1/L²) Σ_j A_jc K_M(u, x_j) M (u - x_j)."""
    K = gaussian_kernel(x, X, M, bandwidth)                              # (m, n)
    diff = x[:, None, :] - X[None, :, :]                                 # (m, n, d)
    return -np.einsum("mj,jc,mjd->mcd", K, A, diff @ M) / bandwidth ** 2


def agop(X: np.ndarray, A: np.ndarray, M: np.ndarray, bandwidth: float, K: np.ndarray | None = None,
         centering: bool = True, pairs: np.ndarray | None = None, p: int | None = None,
         chunk_bytes: int = CHUNK_BYTES) -> np.ndarray:
    """The average gradient outer product of the kernel predictor at its own training points (§2, Eq. 3):
    (1/n) Σ_i G̃_iᵀ G̃_i, with G_i the (c × d) Jacobian at x_i and G̃_i = G_i - mean_i G_i when ``centering``.

    Memory stays bounded: since ∇f_c(x_i) = -(1/L²) M w_ic with w_ic = (KA)_ic x_i - Σ_j K_ij A_jc x_j, the AGOP is
    (1/L⁴) M H M with H = (1/n) Σ_ic w̃_ic w̃_icᵀ, accumulated over chunks of points of at most ``chunk_bytes``.
    The mean over i is exact and closed-form (Σ_i K_ij is K's column sum), so centring needs no first pass. With
    ``pairs`` and ``p`` (one-hot inputs), Σ_j K_ij A_jc x_j is a sum over the points sharing each digit, 2 n² c
    multiply-adds instead of the dense n² c d.

    ``K``: K_M(X, X), when already computed. Returns (d, d), symmetric."""
    n, d = X.shape
    c = A.shape[1]
    if K is None:
        K = gaussian_kernel(X, X, M, bandwidth)
    KA = K @ A                                                           # (n, c)
    # mean_i w_ic = (1/n) [Σ_i (KA)_ic x_i - Σ_j (Σ_i K_ij) A_jc x_j]
    mean = ((KA - K.sum(axis=0)[:, None] * A).T @ X) / n if centering else np.zeros((c, d))   # (c, d)
    groups = _digit_groups(pairs, p) if pairs is not None and p is not None else None
    rows = max(1, int(chunk_bytes // (8 * c * d)))
    H = np.zeros((d, d))
    for start in range(0, n, rows):
        I = slice(start, min(n, start + rows))
        Z = _kernel_weighted_inputs(K[I], A, X, groups)                  # (b, c, d): Σ_j K_ij A_jc x_j
        W = KA[I][:, :, None] * X[I][:, None, :] - Z
        W -= mean
        W = W.reshape(-1, d)
        H += W.T @ W
    H /= n
    G = M @ H @ M / bandwidth ** 4
    return (G + G.T) / 2


def _digit_groups(pairs: np.ndarray, p: int) -> list[tuple[np.ndarray, list[slice]]]:
    """For each input block (x, then y): the order that sorts the points by that digit, and the slice of each digit
    value in that order."""
    out = []
    for col in range(2):
        order = np.argsort(pairs[:, col], kind="stable")
        bounds = np.searchsorted(pairs[order, col], np.arange(p + 1))
        out.append((order, [slice(bounds[v], bounds[v + 1]) for v in range(p)]))
    return out


def _kernel_weighted_inputs(K_rows: np.ndarray, A: np.ndarray, X: np.ndarray, groups) -> np.ndarray:
    """Z_ic = Σ_j K_ij A_jc x_j for the rows of ``K_rows``: (b, c, d). Dense without ``groups``; with one-hot
    inputs, Z_ic[v] (block x) = Σ_{j: x_j = v} K_ij A_jc, a product per digit value."""
    b, c, d = len(K_rows), A.shape[1], X.shape[1]
    if groups is None:  # dense: one matrix product per class, (b, n) @ (n, d)
        return np.stack([K_rows @ (A[:, k, None] * X) for k in range(c)], axis=1)
    p = d // 2
    Z = np.zeros((b, c, d))
    for block, (order, slices) in enumerate(groups):
        Kb, Ab = K_rows[:, order], A[order]
        for v, s in enumerate(slices):
            Z[:, :, block * p + v] = Kb[:, s] @ Ab[s]
    return Z


def matrix_power(S: np.ndarray, power: float) -> np.ndarray:
    """S^s for a symmetric positive semi-definite S, through its eigendecomposition (eigenvalues below 0, from
    round-off, count as 0). The official code takes the real part of ``scipy.linalg.sqrtm`` for s = 1/2: the same
    matrix for a PSD S."""
    w, V = np.linalg.eigh((S + S.T) / 2)
    w = np.clip(w, 0.0, None) ** power
    out = (V * w) @ V.T
    return (out + out.T) / 2


def evaluate(K: np.ndarray, A: np.ndarray, Y: np.ndarray) -> tuple[float, float]:
    """(accuracy, MSE) of the predictions K A against one-hot targets Y: the official ``eval``, with the MSE the
    mean over every entry of (K A - Y)²."""
    pred = K @ A
    return float(np.mean(pred.argmax(1) == Y.argmax(1))), float(np.mean((pred - Y) ** 2))


# --------------------------------------------------------------------------- features


def circulant_part(B: np.ndarray, hankel: bool = False) -> np.ndarray:
    """circ(B): B averaged along its wrapped diagonals, the entries with equal (j - i) mod p (a circulant matrix);
    with ``hankel``, along wrapped anti-diagonals, equal (i + j) mod p."""
    p = len(B)
    i, j = np.indices(B.shape)
    key = np.mod(i + j, p) if hankel else np.mod(j - i, p)
    means = np.bincount(key.ravel(), weights=B.ravel(), minlength=p) / p
    return means[key]


def circulant_deviation(M: np.ndarray, op: str = "x+y") -> float:
    """D(B) = |B - circ(B)|_F / |B - mean(B)|_F for the off-diagonal block B = M[:p, p:] (the x-y interaction of the
    metric): 0 for a circulant block, about 1 for an unstructured one. For x - y the block the paper's control
    builds is Hankel (``rot90`` of a circulant), so it is measured against wrapped anti-diagonals. NaN when B is
    constant (M = I)."""
    p = len(M) // 2
    B = M[:p, p:]
    spread = np.linalg.norm(B - B.mean())
    if spread == 0:
        return float("nan")
    return float(np.linalg.norm(B - circulant_part(B, hankel=op == "x-y")) / spread)


def random_circulant_metric(p: int, op: str, seed: int) -> np.ndarray:
    """The paper's random-circulant control (``train_random_circulant_kernel.py``): M = sqrtm([[I - 11ᵀ/p, C],
    [Cᵀ, I - 11ᵀ/p]]) (real part) with C the circulant of a centred uniform random column (x + y), its ``rot90``
    (a Hankel matrix, x - y). No learning: the structure alone."""
    import scipy.linalg  # here, not at the top: a cold page that only reads shipped runs skips its import

    col = np.random.default_rng(seed).random(p)
    col -= col.mean()
    C = scipy.linalg.circulant(col)
    if op == "x-y":
        C = np.rot90(C)
    centre = np.eye(p) - np.ones((p, p)) / p
    M = np.block([[centre, C], [C.T, centre]])
    return np.real(scipy.linalg.sqrtm(M))
