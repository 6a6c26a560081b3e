"""A visitor's responses: the shipped example set, pasted text and uploaded CSV / JSONL, parsed into a validated
(model, prompt, response) table.

Input from a visitor is bounded before any work: parsing is one linear pass that stops at the first cap it passes
(labels, models, prompts, pool size, rows, columns; the ``MAX_*`` constants of ``config``), and parsed inputs are
memoised by bytes (``_PARSED``). Any failure to read an upload is an ``InputError`` with a short message, and a
message quotes a visitor's names only through ``inert``.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re

import numpy as np
import pandas as pd

from toymodels.tables import MAX_HEADER_CHARS, check_header, column_key
from toymodels.topic import InputError

from .config import (
    COLUMNS,
    EXAMPLE_CSV,
    MAX_CHARS,
    MAX_COLUMNS,
    MAX_MODEL_CHARS,
    MAX_MODELS,
    MAX_POOL,
    MAX_PROMPT_CHARS,
    MAX_PROMPTS,
    MAX_RESPONSES,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    PARSE_MEMO_BYTES,
)
from .memo import _ByteLRU, approx_bytes


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


def _columns(names: list) -> dict[str, object]:
    """Map model/prompt/response to the table's column labels, matched by ``tables.column_key`` (ignoring case,
    surrounding spaces and a byte-order mark).

    Two columns with the same key (``response`` and ``Response``), a name over ``tables.MAX_HEADER_CHARS``
    characters or more than MAX_COLUMNS columns raise InputError: picking one of two columns silently could
    analyse the wrong text. A missing column raises InputError naming what was found.
    """
    keys = check_header(names, MAX_COLUMNS, "table")
    cols: dict[str, object] = {k: label for k, label in zip(keys, names) if k in COLUMNS}
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
            if len(str(k)) > 4 * MAX_HEADER_CHARS:
                raise InputError(f"record {where:,} has a key of {len(str(k)):,} characters; the limit is "
                                 f"{MAX_HEADER_CHARS}")
            key = column_key(k)
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
