"""The paper's measures and the standard diversity metrics, as pure functions of texts and embeddings.

The paper's own aggregates (Jiang et al., arXiv 2510.22954, written here by hand):

* a pool's mean similarity (§3, Fig. 4): the mean cosine similarity over a (model, prompt) pool's distinct pairs,
  diagonal excluded, ``mean_{i<j} cos(e_i, e_j)`` (``mean_offdiag``; the paper's code ``get_pairwise_similarity``
  averages the upper triangle with ``k=1``);
* cluster mixing (Fig. 8): among each response's N nearest neighbours (same prompt, pooled over models), the
  number of distinct source models, averaged over responses (``cluster_mixing``);
* the Vendi score (Friedman & Dieng 2023), ``VS = exp(-sum_i lambda_i log lambda_i)`` with lambda the eigenvalues of
  K/n, K the cosine-similarity matrix; with K = E E^T (unit rows), K/n and E^T E/n share their non-zero
  eigenvalues, so for n > d we take the d x d "dual" form (``vendi_score_embeddings``).

Lexical metrics: TTR and MATTR (moving-average TTR, Covington & McFall 2010) on lower-cased word tokens (regex
``[a-z0-9]+(?:'[a-z]+)?``); distinct-n (Li et al. 2016) = unique n-grams / total n-grams over a pool; Self-BLEU
(Zhu et al. 2018): each response is the hypothesis, the other responses of its pool the references, averaged, with
**sacrebleu 2.6.0** ``BLEU(tokenize="13a", smooth_method="exp", max_ngram_order=4, effective_order=True,
lowercase=False)`` on a 0-100 scale; gzip compression ratio = UTF-8 bytes / gzip bytes of the pool joined by
newlines (higher = more repetitive).
"""
from __future__ import annotations

import gzip
import re
from collections import Counter

import numpy as np
import pandas as pd

from .config import BLEU_SETTINGS, SACREBLEU_VERSION

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased word tokens used by TTR, MATTR and distinct-n."""
    return _WORD.findall(text.lower())


def ttr(tokens: list[str]) -> float:
    """Type-token ratio: distinct tokens / tokens (NaN for no tokens)."""
    return len(set(tokens)) / len(tokens) if tokens else float("nan")


def mattr(tokens: list[str], window: int = 25) -> float:
    """Moving-average TTR (Covington & McFall 2010): mean TTR over every window of ``window`` tokens.

    Texts shorter than the window fall back to plain TTR. O(len) with a sliding counter.
    """
    n = len(tokens)
    if n == 0:
        return float("nan")
    if n <= window:
        return ttr(tokens)
    counts = Counter(tokens[:window])
    types, total = len(counts), len(counts)
    for i in range(window, n):
        out, inn = tokens[i - window], tokens[i]
        counts[out] -= 1
        if counts[out] == 0:
            types -= 1
        if counts[inn] == 0:
            types += 1
        counts[inn] += 1
        total += types
    return total / (window * (n - window + 1))


def distinct_n(texts: list[str], n: int) -> float:
    """distinct-n over a set of texts: unique n-grams / total n-grams (n-grams do not cross texts)."""
    return distinct_n_tokens([words(t) for t in texts], n)


def distinct_n_tokens(token_lists: list[list[str]], n: int) -> float:
    """distinct-n over already tokenised texts (``words``)."""
    grams = Counter()
    for tok in token_lists:
        grams.update(zip(*(tok[k:] for k in range(n))))
    total = sum(grams.values())
    return len(grams) / total if total else float("nan")


def compression_ratio(texts: list[str]) -> float:
    """gzip compression ratio of the texts joined by newlines: raw bytes / compressed bytes (level 9)."""
    raw = "\n".join(texts).encode("utf-8")
    return len(raw) / len(gzip.compress(raw, compresslevel=9, mtime=0)) if raw else float("nan")


def _bleu():
    import sacrebleu
    from sacrebleu.metrics import BLEU

    if sacrebleu.__version__ != SACREBLEU_VERSION:  # pragma: no cover - pinned in pyproject
        import warnings

        warnings.warn(f"Self-BLEU is specified against sacrebleu {SACREBLEU_VERSION}; found {sacrebleu.__version__}")  # noqa: B028
    return BLEU(**BLEU_SETTINGS)


def self_bleu_naive(texts: list[str]) -> list[float]:
    """Self-BLEU per text the straightforward way: one sacrebleu ``sentence_score`` per hypothesis,
    with all other texts as references. O(n^2) n-gram extraction; the reference for ``self_bleu``."""
    bleu = _bleu()
    return [bleu.sentence_score(t, texts[:i] + texts[i + 1:]).score for i, t in enumerate(texts)]


class _BleuGrams:
    """Every text's sacrebleu n-gram counts and length, extracted once, for Self-BLEU of any subset.

    The n-grams are numbered once; a text is a row of (n-gram id, count, order) entries. For a subset, one
    sort by (id, -count) gives every n-gram's largest count, its owner and the second largest, so the clipped
    counts "max over the other references" of every hypothesis come out of array operations.
    """

    def __init__(self, texts: list[str]):
        from sacrebleu.metrics.helpers import extract_all_word_ngrams

        self.bleu = _bleu()
        tok, order = self.bleu.tokenizer, self.bleu.max_ngram_order
        ids: dict[tuple, int] = {}
        gid, cnt, lvl, starts, lens = [], [], [], [0], []
        for t in texts:
            g, length = extract_all_word_ngrams(tok(t.rstrip()), 1, order)
            for ng, c in g.items():
                gid.append(ids.setdefault(ng, len(ids)))
                cnt.append(c)
                lvl.append(len(ng) - 1)
            starts.append(len(gid))
            lens.append(length)
        self.gid = np.asarray(gid, dtype=np.int64)
        self.cnt = np.asarray(cnt, dtype=np.int64)
        self.lvl = np.asarray(lvl, dtype=np.int64)
        self.starts = np.asarray(starts, dtype=np.int64)
        self.lens = np.asarray(lens, dtype=np.int64)

    def self_bleu(self, idx) -> list[float]:
        """Self-BLEU of texts ``idx`` (each against the others of ``idx``): see ``self_bleu``."""
        idx = np.asarray(list(idx), dtype=np.int64)
        n = len(idx)
        if n < 2:
            return [float("nan")] * n
        bleu, order = self.bleu, self.bleu.max_ngram_order
        # the subset's entries: text position, n-gram id, count, order
        sizes = self.starts[idx + 1] - self.starts[idx]
        pos = np.repeat(np.arange(n), sizes)
        rows = np.repeat(self.starts[idx] - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        gid, cnt, lvl = self.gid[rows], self.cnt[rows], self.lvl[rows]
        # per n-gram: the largest count (c1) and its owner, and the second largest (c2; 0 if one owner)
        srt = np.lexsort((-cnt, gid))
        g_s = gid[srt]
        first = np.ones(len(srt), dtype=bool)
        first[1:] = g_s[1:] != g_s[:-1]
        head = np.flatnonzero(first)
        group = np.cumsum(first) - 1
        c1, owner = cnt[srt][head], pos[srt][head]
        has2 = np.append(head[1:], len(srt)) - head > 1
        c2 = np.where(has2, cnt[srt][np.minimum(head + 1, len(srt) - 1)], 0)
        grp = np.empty(len(srt), dtype=np.int64)
        grp[srt] = group
        ref = np.where(pos == owner[grp], c2[grp], c1[grp])
        correct = np.bincount(pos * order + lvl, weights=np.minimum(cnt, ref), minlength=n * order)
        total = np.bincount(pos * order + lvl, weights=cnt, minlength=n * order)
        correct = correct.reshape(n, order).astype(np.int64)
        total = total.reshape(n, order).astype(np.int64)
        # closest reference length among the others, ties to the shorter
        lens = self.lens[idx]
        uniq, counts = np.unique(lens, return_counts=True)
        at = np.searchsorted(uniq, lens)
        scores = []
        for k in range(n):
            L, j = int(lens[k]), int(at[k])
            if counts[j] > 1:
                ref_len = L
            else:
                below = int(uniq[j - 1]) if j > 0 else None
                above = int(uniq[j + 1]) if j + 1 < len(uniq) else None
                if below is None or (above is not None and above - L < L - below):
                    ref_len = above
                else:
                    ref_len = below
            scores.append(bleu.compute_bleu(correct[k].tolist(), total[k].tolist(), L, ref_len,
                                            smooth_method=bleu.smooth_method, smooth_value=bleu.smooth_value,
                                            effective_order=bleu.effective_order, max_ngram_order=order).score)
        return scores


def self_bleu(texts: list[str]) -> list[float]:
    """Self-BLEU per text (0-100), identical to ``self_bleu_naive`` but O(n) n-gram extraction.

    Multi-reference BLEU clips each hypothesis n-gram count by its maximum count over the references; we
    extract every text's n-grams once and keep, for each n-gram, its two largest counts and the owner of the
    largest, so "max over the others" is a lookup. The closest reference length (ties to the shorter) and the
    final formula (smoothing, effective order, brevity penalty) are sacrebleu's own ``BLEU.compute_bleu``.
    """
    return _BleuGrams(texts).self_bleu(range(len(texts)))


def _unit_rows(emb: np.ndarray) -> np.ndarray:
    e = np.asarray(emb, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    return e / np.where(norms == 0, 1.0, norms)


def cosine_matrix(emb: np.ndarray) -> np.ndarray:
    """Cosine similarity matrix in one matrix product (rows re-normalised, so any input works)."""
    e = _unit_rows(emb)
    return np.clip(e @ e.T, -1.0, 1.0)


def mean_offdiag(S: np.ndarray) -> float:
    """Mean of the strict upper triangle (i < j) of a symmetric matrix: the paper's pool average."""
    n = S.shape[0]
    if n < 2:
        return float("nan")
    return float((S.sum() - np.trace(S)) / (n * (n - 1)))


def _entropy_exp(lam: np.ndarray) -> float:
    lam = lam[lam > 1e-12]
    return float(np.exp(-np.sum(lam * np.log(lam))))


def vendi_score(K: np.ndarray) -> float:
    """Vendi score exp(-sum lambda log lambda), lambda = eigenvalues of K/n (0 log 0 = 0).

    K must be symmetric PSD with unit diagonal; tiny negative eigenvalues from round-off are dropped.
    This is the n x n form; ``vendi_score_embeddings`` gives the same number from the embeddings in O(n d^2).
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n == 0:
        return float("nan")
    return _entropy_exp(np.linalg.eigvalsh(K / n))


def vendi_score_embeddings(emb: np.ndarray) -> float:
    """Vendi score of the cosine kernel K = E E^T of the (row-normalised) embeddings E (n x d).

    When d < n this uses the dual form: E^T E / n (d x d) has the same non-zero eigenvalues as K / n, so the
    score is the same and costs O(n d^2 + d^3) instead of O(n^3) (Friedman & Dieng 2023, ``score_dual``).
    """
    e = _unit_rows(emb)
    n, d = e.shape
    if n == 0:
        return float("nan")
    if d < n:
        return _entropy_exp(np.linalg.eigvalsh(e.T @ e / n))
    return _entropy_exp(np.linalg.eigvalsh(e @ e.T / n))


def pca_2d(X: np.ndarray) -> np.ndarray:
    """The first two principal-component scores of the rows of X (n x d), from the d x d covariance.

    Equal, up to each axis's sign, to scikit-learn's ``PCA(n_components=2, svd_solver="full").fit_transform(X)``
    (the tests check 1e-6): the top two eigenvectors of the centred scatter matrix Xc^T Xc (``scipy.linalg.eigh``
    with ``subset_by_index``) are the top two right singular vectors of Xc. O(n d^2 + d^2) instead of an SVD of
    the n x d matrix (the straightforward version: ``bench/bench_diversity.py``).
    """
    from scipy.linalg import eigh

    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    Xc = X - X.mean(axis=0)
    k = min(2, d)
    _, V = eigh(Xc.T @ Xc, subset_by_index=(d - k, d - 1))
    xy = Xc @ V[:, ::-1]
    return xy if k == 2 else np.hstack([xy, np.zeros((n, 2 - k))])


def cluster_mixing(S: np.ndarray, models: np.ndarray, max_n: int = 50) -> np.ndarray:
    """Mean number of distinct source models among each response's N nearest neighbours, N = 1..max_n.

    Neighbours are by cosine similarity within one prompt's pooled responses, excluding the response itself
    (scikit-learn NearestNeighbors on the precomputed distance 1 - S). Returns an array of length
    min(max_n, n - 1).
    """
    from sklearn.neighbors import NearestNeighbors

    n = S.shape[0]
    m = min(max_n, n - 1)
    if m < 1:
        return np.zeros(0)
    D = np.clip(1.0 - S, 0.0, 2.0)
    np.fill_diagonal(D, 0.0)
    _, idx = NearestNeighbors(n_neighbors=m + 1, metric="precomputed").fit(D).kneighbors(D)
    # drop self: it is the first neighbour unless an exact duplicate tied with it (then drop the last)
    is_self = idx == np.arange(n)[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), m)
    keep = np.ones_like(idx, dtype=bool)
    keep[np.arange(n), drop] = False
    nbrs = idx[keep].reshape(n, m)
    codes = pd.factorize(models)[0]
    lab = codes[nbrs]  # (n, m): model of each response's k-th nearest neighbour
    # a neighbour adds a model when its model has not been seen earlier in the row
    seen = np.zeros((n, codes.max() + 1), dtype=bool)
    rows = np.arange(n)
    new = np.empty((n, m), dtype=np.int64)
    for k in range(m):
        new[:, k] = ~seen[rows, lab[:, k]]
        seen[rows, lab[:, k]] = True
    return new.cumsum(axis=1).mean(axis=0).astype(np.float64)
