"""Reading a visitor's evaluations: a CSV of (model, problem, n, c) counts or of one row per sample.

Everything a visitor uploads goes through ``read_evaluations``: it validates every cell (whole, bounded,
consistent counts), names the first offending row and never echoes a long input back.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from toymodels.errors import InputError

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "rlvr"
EXAMPLE_CSV = DATA_DIR / "example_toy_counts.csv"
MAX_ROWS = 100_000
MAX_N = 100_000


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


def read_evaluations(data) -> pd.DataFrame:
    """Parse and validate an evaluation table into one row per (model, problem) with integer n and c.

    ``data`` is bytes, str or a DataFrame, in one of two layouts:

    * counts:  ``model, problem, n, c``     (c correct out of n samples)
    * samples: ``model, problem, correct``  (one row per sample; correct is 0/1 or true/false)

    Counts must be whole, non-negative numbers with c <= n and n <= MAX_N (so ``1e300`` is rejected, not cast
    to a negative int64). Raises InputError with a message naming the problem and the first offending row;
    any value quoted from the file is cut to SHOW_CHARS characters.
    """
    if isinstance(data, pd.DataFrame):
        df = data.copy()
    else:
        if isinstance(data, str):
            data = data.encode()
        if data is None or len(data) == 0 or not data.strip():
            raise InputError("The file is empty.")
        if b"\x00" in data[:4096]:
            raise InputError("This does not look like a CSV file (it contains binary data).")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError("This does not look like a CSV file (it is not UTF-8 text).") from None
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, skipinitialspace=True, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, MemoryError, RecursionError) as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"Could not read the file as CSV: {msg[:200]}") from None
    if df.shape[1] == 0:
        raise InputError("The file is empty.")
    if len(df) == 0:
        raise InputError("The file has a header but no data rows.")
    if len(df) > MAX_ROWS:
        raise InputError(f"The file has {len(df):,} data rows; the limit is {MAX_ROWS:,}. "
                         "Aggregate samples into counts (model,problem,n,c) to shrink it.")
    df.columns = [str(col).strip().lower() for col in df.columns]
    if df.shape[1] == 1 and any(sep in df.columns[0] for sep in (";", "\t", "|")):
        raise InputError(f"Only one column was found ({_q(df.columns[0])}): separate the columns with commas.")
    cols = set(df.columns)
    if {"n", "c"} & cols or "correct" not in cols:
        layout, needed = "counts", ["model", "problem", "n", "c"]
    else:
        layout, needed = "samples", ["model", "problem", "correct"]
    missing = [col for col in needed if col not in cols]
    if missing:
        found = ", ".join(_q(col) for col in df.columns[:8]) + (f" and {df.shape[1] - 8:,} more" if df.shape[1] > 8
                                                                 else "")
        raise InputError(f"Missing column(s) {', '.join(repr(m) for m in missing)}. Expected the header "
                         f"'model,problem,n,c' (counts) or 'model,problem,correct' (one row per sample); "
                         f"found: {found}.")
    for col in ("model", "problem"):
        s = df[col].astype(str).str.strip()
        empty = np.nonzero((s == "").to_numpy())[0]
        if empty.size:
            raise InputError(f"Empty {col!r} in {_row(int(empty[0]))}.")
        df[col] = s
    numeric = ["n", "c"] if layout == "counts" else ["correct"]
    for col in numeric:
        raw = df[col].astype(str).str.strip()
        if layout == "samples":
            raw = raw.str.lower().replace({"true": "1", "false": "0"})
        vals = pd.to_numeric(raw, errors="coerce")
        bad = np.nonzero(vals.isna().to_numpy())[0]
        if bad.size:
            i = int(bad[0])
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
