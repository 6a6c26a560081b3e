"""Reading a visitor's evaluations: a CSV of (model, problem, n, c) counts or of one row per sample.

Everything a visitor uploads goes through ``read_evaluations``: it validates every cell (whole, bounded,
consistent counts), names the first offending row and never echoes a long input back.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from toymodels.errors import InputError
from toymodels.tables import check_header, inert

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "rlvr"
EXAMPLE_CSV = DATA_DIR / "example_toy_counts.csv"
MAX_ROWS = 100_000
MAX_N = 100_000
MAX_BYTES = 20_000_000  # 100,000 rows of two 80-character labels and two counts fit in about 17 MB
MAX_COLUMNS = 50  # the layouts need 3 or 4; the header is checked before pandas reads the body
MAX_LABEL_CHARS = 200  # a model or problem name is a label (Hugging Face ids are at most 96 characters)
MAX_MODELS = 100  # models in one table: each gets a curve, a crossover and a row of the summary
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")  # linear: no two adjacent runs of digits


TEMPLATE_COUNTS = (
    "model,problem,n,c\n"
    "base,p1,256,3\nbase,p2,256,0\nbase,p3,256,200\n"
    "rl,p1,256,40\nrl,p2,256,0\nrl,p3,256,256\n"
)
TEMPLATE_SAMPLES = "model,problem,correct\nbase,p1,0\nbase,p1,1\nbase,p2,0\nrl,p1,1\nrl,p1,1\nrl,p2,0\n"
SHOW_CHARS = 40  # an uploaded value quoted in a message is cut to this many characters


def _row(i: int) -> str:
    return f"data row {i + 1} (line {i + 2} of the file)"


def _q(value) -> str:
    """An uploaded value quoted for a message, cut short: a message never echoes a long input back."""
    text = repr(value) if isinstance(value, str) else repr(str(value))
    return text if len(text) <= SHOW_CHARS else (text[:SHOW_CHARS - 4] + "…" + text[-1]
                                                 + f" ({len(str(value)):,} characters)")


def _check_header(names) -> list[str]:
    try:
        return check_header(names, MAX_COLUMNS, "file")
    except InputError as exc:  # this module's messages are sentences
        msg = str(exc)
        raise InputError(msg[:1].upper() + msg[1:] + ("" if msg.endswith(".") else ".")) from None


def _header_names(text: str) -> list[str]:
    """The header row as the csv module reads it (cheap, before pandas reads the body); InputError if it cannot."""
    try:
        header = next((row for row in csv.reader(io.StringIO(text)) if row), None)
    except csv.Error as exc:
        why = (f"one of its names is longer than {csv.field_size_limit():,} characters" if "field larger" in str(exc)
               else inert(exc, 120))
        raise InputError(f"Could not read the CSV header: {why}.") from None
    if header is None:
        raise InputError("The file is empty.")
    return header


def read_evaluations(data) -> pd.DataFrame:
    """Parse and validate an evaluation table into one row per (model, problem) with integer n and c.

    ``data`` is bytes, str or a DataFrame, in one of two layouts:

    * counts:  ``model, problem, n, c``     (c correct out of n samples)
    * samples: ``model, problem, correct``  (one row per sample; correct is 0/1 or true/false)

    Column names are matched ignoring case, surrounding spaces and a byte-order mark (``toymodels.tables``); two
    columns with the same name (``n`` and ``N``), more than MAX_COLUMNS columns or a name over
    ``tables.MAX_HEADER_CHARS`` characters are refused, as is a file over MAX_BYTES, a model or problem name over
    MAX_LABEL_CHARS characters and more than MAX_MODELS models. Counts must be whole, non-negative numbers with
    c <= n and n <= MAX_N (so ``1e300`` is rejected, not cast to a negative int64). Raises InputError with a
    one-line message naming the problem and the first offending row; any value quoted from the file is cut to
    SHOW_CHARS characters.
    """
    if isinstance(data, pd.DataFrame):
        if data.shape[1] > MAX_COLUMNS:  # before copying a very wide frame
            _check_header(data.columns)
        if len(data) > MAX_ROWS:
            raise InputError(f"The file has {len(data):,} data rows; the limit is {MAX_ROWS:,}. "
                             "Aggregate samples into counts (model,problem,n,c) to shrink it.")
        df = pd.DataFrame({i: data.iloc[:, i].to_numpy() for i in range(data.shape[1])}, index=range(len(data)))
        names = list(data.columns)
    else:
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        if not isinstance(data, bytes):
            raise InputError(f"Expected the file's bytes or text, got {type(data).__name__}.")
        if len(data) > MAX_BYTES:
            raise InputError(f"The file is {len(data) / 1e6:,.1f} MB; the limit is {MAX_BYTES / 1e6:.0f} MB. "
                             "Aggregate samples into counts (model,problem,n,c) to shrink it.")
        if len(data) == 0 or not data.strip():
            raise InputError("The file is empty.")
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise InputError("The file is UTF-16 text: save it as UTF-8 (CSV UTF-8) and upload again.")
        if b"\x00" in data[:4096]:
            raise InputError("This does not look like a CSV file (it contains binary data).")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"This does not look like a CSV file (it is not UTF-8 text: byte {exc.start:,}). "
                             "Save it as UTF-8 and upload again.") from None
        names = _header_names(text)
        _check_header(names)  # before pandas reads the body (a wide header takes seconds)
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, header=None, skipinitialspace=True,
                             keep_default_na=False, nrows=MAX_ROWS + 2)  # the header and one row too many
        except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error, ValueError, MemoryError,
                RecursionError) as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"Could not read the file as CSV: {inert(msg, 200)}.") from None
        if df.shape[1] != len(names):  # the csv module and pandas disagree on the header: trust neither
            raise InputError(f"Could not read the file as CSV: its header has {len(names):,} fields as one reader "
                             f"sees it and {df.shape[1]:,} as another (check the quotes in the first line).")
        names = [str(v) for v in df.iloc[0]] if len(df) else names
        df = df.iloc[1:].reset_index(drop=True)
        df.columns = range(df.shape[1])
    if len(names) == 0:
        raise InputError("The file is empty.")
    keys = _check_header(names)
    if len(df) == 0:
        raise InputError("The file has a header but no data rows.")
    if len(df) > MAX_ROWS:
        raise InputError(f"The file has more than {MAX_ROWS:,} data rows; the limit is {MAX_ROWS:,}. "
                         "Aggregate samples into counts (model,problem,n,c) to shrink it.")
    if len(keys) == 1 and any(sep in keys[0] for sep in (";", "\t", "|")):
        raise InputError(f"Only one column was found ({_q(names[0])}): separate the columns with commas.")
    cols = {k: i for i, k in enumerate(keys) if k}
    if {"n", "c"} & cols.keys() or "correct" not in cols:
        layout, needed = "counts", ["model", "problem", "n", "c"]
    else:
        layout, needed = "samples", ["model", "problem", "correct"]
    missing = [col for col in needed if col not in cols]
    if missing:
        found = ", ".join(_q(col) for col in names[:8]) + (f" and {len(names) - 8:,} more" if len(names) > 8
                                                           else "")
        raise InputError(f"Missing column(s) {', '.join(repr(m) for m in missing)}. Expected the header "
                         f"'model,problem,n,c' (counts) or 'model,problem,correct' (one row per sample); "
                         f"found: {found}.")
    df = pd.DataFrame({col: df[cols[col]].to_numpy() for col in needed})  # only the columns read, by name
    for col in needed:
        df[col] = df[col].fillna("").astype(str)
    for col in ("model", "problem"):
        s = df[col].str.strip()
        empty = np.nonzero((s == "").to_numpy())[0]
        if empty.size:
            raise InputError(f"Empty {col!r} in {_row(int(empty[0]))}.")
        long = np.nonzero((s.str.len() > MAX_LABEL_CHARS).to_numpy())[0]
        if long.size:
            i = int(long[0])
            raise InputError(f"The {col} name in {_row(i)} has {len(s.iloc[i]):,} characters; the limit is "
                             f"{MAX_LABEL_CHARS} (it is a label: shorten it).")
        df[col] = s
    n_models = df["model"].nunique()
    if n_models > MAX_MODELS:
        raise InputError(f"The file has {n_models:,} models; the limit is {MAX_MODELS} (each gets its own curve): "
                         "upload a subset.")
    numeric = ["n", "c"] if layout == "counts" else ["correct"]
    for col in numeric:
        raw = df[col].str.strip()
        if layout == "samples":
            raw = raw.str.lower().replace({"true": "1", "false": "0"})
        vals = pd.to_numeric(raw, errors="coerce")
        bad = np.nonzero(vals.isna().to_numpy())[0]
        if bad.size:
            i = int(bad[0])
            if _NUMBER.fullmatch(raw.iloc[i]):  # a number pandas could not hold (thousands of digits)
                raise InputError(f"Count {_q(df[col].iloc[i])} in column {col!r}, {_row(i)}, is too large: the "
                                 f"limit is {MAX_N:,} samples per problem.")
            raise InputError(f"Non-numeric value {_q(df[col].iloc[i])} in column {col!r}, {_row(i)}.")
        v = vals.to_numpy(dtype=np.float64)
        bad = np.nonzero(~np.isfinite(v) | (v != np.round(v)))[0]
        if bad.size:
            i = int(bad[0])
            raise InputError(f"Column {col!r} must hold whole numbers; {_row(i)} has {_q(df[col].iloc[i])}.")
        bad = np.nonzero(v < 0)[0]
        if bad.size:
            i = int(bad[0])
            raise InputError(f"Negative count {_q(df[col].iloc[i])} in column {col!r}, {_row(i)}.")
        bad = np.nonzero(v > MAX_N)[0]  # before the cast: 1e300 must not wrap around to a negative int64
        if bad.size:
            i = int(bad[0])
            raise InputError(f"Count {_q(df[col].iloc[i])} in column {col!r}, {_row(i)}, is too large: the "
                             f"limit is {MAX_N:,} samples per problem.")
        df[col] = v.astype(np.int64)
    if layout == "samples":
        bad = np.nonzero(df["correct"].to_numpy() > 1)[0]
        if bad.size:
            i = int(bad[0])
            raise InputError(f"Column 'correct' must be 0 or 1; {_row(i)} has {int(df['correct'].iloc[i])}.")
        df = (df.groupby(["model", "problem"], sort=False)["correct"].agg(["size", "sum"]).reset_index()
              .rename(columns={"size": "n", "sum": "c"}))
    else:
        bad = np.nonzero((df["c"] > df["n"]).to_numpy())[0]
        if bad.size:
            i = int(bad[0])
            raise InputError(f"c > n in {_row(i)}: {int(df['c'].iloc[i])} correct out of {int(df['n'].iloc[i])} "
                             "samples.")
        bad = np.nonzero((df["n"] == 0).to_numpy())[0]
        if bad.size:
            raise InputError(f"n = 0 in {_row(int(bad[0]))}: every problem needs at least one sample.")
        dup = df.duplicated(["model", "problem"], keep="first").to_numpy()
        if dup.any():
            i = int(np.nonzero(dup)[0][0])
            first = int(np.nonzero(((df["model"] == df["model"].iloc[i]) &
                                    (df["problem"] == df["problem"].iloc[i])).to_numpy())[0][0])
            raise InputError(f"Duplicate row for model {_q(df['model'].iloc[i])}, problem "
                             f"{_q(df['problem'].iloc[i])}: {_row(i)} repeats {_row(first)}.")
        df = df[["model", "problem", "n", "c"]]
    big = np.nonzero((df["n"] > MAX_N).to_numpy())[0]
    if big.size:
        raise InputError(f"n = {int(df['n'].iloc[big[0]]):,} samples for model {_q(df['model'].iloc[big[0]])}, "
                         f"problem {_q(df['problem'].iloc[big[0]])}; the limit is {MAX_N:,}.")
    return df.reset_index(drop=True)


def load_example() -> pd.DataFrame:
    """The shipped example table (toy output, not a real model's evaluation)."""
    return read_evaluations(EXAMPLE_CSV.read_bytes())
