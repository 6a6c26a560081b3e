"""The header of a visitor's table, checked the same way by every upload parser (rlvr, hivemind).

A column name is matched by its *key*: Unicode-normalised (NFKC, so a full-width ``ｍｏｄｅｌ`` is ``model``), with
invisible format characters (a byte-order mark, zero-width spaces) removed, surrounding white space stripped and
case folded. ``check_header`` refuses, with a one-line ``InputError``:

* more than ``max_columns`` columns (before pandas reads the body: it takes seconds and gigabytes for a header of
  hundreds of thousands of columns);
* a name longer than ``MAX_HEADER_CHARS`` characters (a label: it is shown back, never analysed);
* two columns with the same key (``n`` and ``N``, ``model`` and `` model ``): picking one of them silently could
  analyse the wrong numbers, and pandas would rename one ``n.1`` or (pandas 3) fail on the doubled label.

Columns without a name (a leading index column written by ``DataFrame.to_csv``, a trailing comma) are allowed and
ignored; the parsers only read the columns they need. Messages quote a name only through ``inert``.
"""
from __future__ import annotations

import re
import unicodedata

from toymodels.errors import InputError

MAX_HEADER_CHARS = 200  # a column name is a label
_NOT_INERT = re.compile(r"[^\w ,'-]+")


def inert(value, limit: int = 40) -> str:
    """``value`` safe to quote in a message a page may render as Markdown: only letters, digits, spaces and
    ``_,'-`` survive (each run of anything else becomes one ``?``), at most ``limit`` characters (then ``…``)."""
    s = _NOT_INERT.sub("?", str(value)[:4 * limit])
    return s if len(s) <= limit else s[:limit] + "…"


def column_key(name) -> str:
    """The name a column is matched by: NFKC, format characters (BOM, zero-width) removed, stripped, casefolded."""
    s = unicodedata.normalize("NFKC", str(name))
    if not s.isascii():
        s = "".join(ch for ch in s if unicodedata.category(ch) != "Cf")
    return s.strip().casefold()


def check_header(names, max_columns: int, what: str = "table") -> list[str]:
    """The keys of ``names`` (see the module's docstring); InputError for too many, too long or doubled names."""
    names = list(names)
    if len(names) > max_columns:
        raise InputError(f"the {what} has {len(names):,} columns; the limit is {max_columns}: keep only the "
                         "columns it needs")
    keys, first = [], {}
    for i, name in enumerate(names, 1):
        raw = str(name)
        if len(raw) > 4 * MAX_HEADER_CHARS and len(raw.strip()) > MAX_HEADER_CHARS:
            raise InputError(f"column {i:,} of the {what} has a name of {len(raw.strip()):,} characters; the limit "
                             f"is {MAX_HEADER_CHARS}")
        key = column_key(raw)
        if len(key) > MAX_HEADER_CHARS:
            raise InputError(f"column {i:,} of the {what} has a name of {len(key):,} characters; the limit is "
                             f"{MAX_HEADER_CHARS}")
        if key and key in first:
            raise InputError(f"two columns of the {what} ({first[key]:,} and {i:,}) are named {inert(key)!r} (names "
                             "are matched ignoring case and surrounding spaces): keep one")
        first.setdefault(key, i)
        keys.append(key)
    return keys
