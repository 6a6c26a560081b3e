"""A visitor's embedding or LM-head matrix: parsing an upload (.npy without pickles, .safetensors) and its checks."""
from __future__ import annotations

import io

import numpy as np

from toymodels.errors import InputError

MAX_ROWS, MAX_COLS = 200_000, 8_192


def validate_matrix(A) -> np.ndarray:
    """Check an embedding / LM-head matrix: 2-D, numeric, finite, within the size cap. Returns float32."""
    A = np.asarray(A)
    if A.dtype.kind not in "fiu" and A.dtype != np.float16:
        raise InputError(f"the matrix must be numeric, got dtype {A.dtype}")
    if A.ndim != 2:
        raise InputError(f"the matrix must be 2-D (vocabulary × width), got shape {A.shape}")
    if A.shape[0] > MAX_ROWS or A.shape[1] > MAX_COLS:
        raise InputError(f"the matrix is {A.shape[0]:,} × {A.shape[1]:,}; the cap is {MAX_ROWS:,} × {MAX_COLS:,}")
    if A.shape[0] < 2 or A.shape[1] < 1:
        raise InputError(f"need at least 2 rows and 1 column, got {A.shape}")
    A = A.astype(np.float32)
    if not np.isfinite(A).all():
        raise InputError("the matrix contains NaN or infinite values")
    return A


def _short(text, limit: int = 160) -> str:
    """One line of at most ``limit`` characters: what a message may quote of a file's name or a reader's error."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def load_matrix(data: bytes, filename: str) -> tuple[np.ndarray, str]:
    """Read an uploaded .npy (allow_pickle=False) or .safetensors file; returns (matrix, tensor name). Every
    failure is an InputError of one line that quotes at most 60 characters of the file's name."""
    name = str(filename).lower()
    filename = _short(filename, 60)
    if name.endswith(".npy"):
        try:
            A = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            raise InputError(f"could not read {filename} as a plain .npy array (pickled objects are refused): "
                             f"{_short(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - any malformed file is a user error
            raise InputError(f"could not read {filename} as .npy: {_short(exc)}") from None
        return validate_matrix(A), "array"
    if name.endswith(".safetensors"):
        from safetensors.numpy import load as st_load
        try:
            tensors = st_load(data)
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"could not read {filename} as .safetensors: {_short(exc)}") from None
        mats = {k: v for k, v in tensors.items() if v.ndim == 2}
        if not mats:
            raise InputError(f"{filename} holds no 2-D tensor")
        prefer = [k for k in mats if any(t in k for t in ("lm_head", "embed_out", "embed_tokens", "wte",
                                                           "word_embeddings"))]
        key = prefer[0] if prefer else max(mats, key=lambda k: mats[k].size)
        return validate_matrix(mats[key]), key
    raise InputError("upload a .npy or .safetensors file")
