"""Hypothesis classes: a class is a 2-D 0/1 NumPy array ``H`` (rows = hypotheses, columns = points), checked and
normalised by ``as_class``; typed by a visitor as 0/1 rows (``parse_class``, linear in the text); and the preset
families of the page (thresholds, intervals, singletons, all functions, tree classes of notes §4–§5, the class G of
notes §7 and products on disjoint domains)."""
from __future__ import annotations

import itertools

import numpy as np

from toymodels.topic import InputError, bounded

from .config import G_ROWS, KNOBS, MAX_CLASS_ROWS, MAX_CLASS_TEXT, MAX_HYPOTHESES, MAX_POINTS, PRESETS, SIZED_PRESETS


def as_class(H, max_points: int = MAX_POINTS, max_hypotheses: int = MAX_HYPOTHESES) -> np.ndarray:
    """Check and normalise a class: a 2-D 0/1 uint8 array with distinct rows, within the size limits."""
    H = np.asarray(H)
    if H.ndim != 2:
        raise InputError(f"a class is a 2-D 0/1 array (rows = hypotheses, columns = points); got shape {H.shape}")
    if H.shape[0] == 0 or H.shape[1] == 0:
        raise InputError("the class is empty: give at least one hypothesis on at least one point")
    if not np.isin(H, (0, 1)).all():
        raise InputError("a class may only contain 0 and 1")
    if H.shape[1] > max_points:
        raise InputError(f"{H.shape[1]} points is too many: the exact game values are limited to {max_points} points")
    H = H.astype(np.uint8)
    if len(np.unique(H, axis=0)) != len(H):
        raise InputError("the class has duplicate hypotheses (use parse_class or dedupe to remove them)")
    if H.shape[0] > max_hypotheses:
        raise InputError(f"{H.shape[0]} hypotheses is too many: the exact game values are limited to "
                         f"{max_hypotheses} hypotheses")
    return H


def dedupe(H) -> tuple[np.ndarray, int]:
    """Remove duplicate rows, keeping the first occurrence in order. Returns (class, number removed)."""
    H = np.asarray(H, dtype=np.uint8)
    if H.ndim == 2 and H.shape[1] <= 62:  # each row as one integer: a fast sort (rows of bytes sort slowly)
        codes = (H.astype(np.int64) << np.arange(H.shape[1], dtype=np.int64)).sum(axis=1)
        _, first = np.unique(codes, return_index=True)
    else:
        _, first = np.unique(H, axis=0, return_index=True)
    keep = np.sort(first)
    return H[keep], len(H) - len(keep)


def parse_class(text: str) -> tuple[np.ndarray, list[str]]:
    """Parse a class typed as 0/1 rows (one hypothesis per line or per whitespace/comma-separated word).

    Returns ``(H, notes)``; ``notes`` says what was cleaned (e.g. duplicates removed).
    Raises ``InputError`` with a readable message for ragged rows, other characters, an empty
    class or one over the size limits.
    """
    if not isinstance(text, str):
        raise InputError(f"a class is typed as text, got {type(text).__name__}")
    if len(text) > MAX_CLASS_TEXT:
        raise InputError(f"the class text is {len(text):,} characters long; at most {MAX_CLASS_TEXT:,} "
                         f"({MAX_POINTS} points x {MAX_HYPOTHESES} rows fit in about 17,400)")
    # Every step below is one pass over the text or the rows (linear in the text, which is capped above).
    words = [w for w in text.replace(",", " ").replace(";", " ").split() if w]
    if not words:
        raise InputError("the class is empty: type one hypothesis per line as a string of 0s and 1s, e.g. 0110")
    if len(words) > MAX_CLASS_ROWS:
        raise InputError(f"the class text has {len(words):,} rows; at most {MAX_CLASS_ROWS:,} may be typed (at most "
                         f"{MAX_HYPOTHESES} distinct hypotheses are used)")
    for i, w in enumerate(words, 1):
        bad = sorted(set(w) - {"0", "1"})
        if bad:
            raise InputError(f"row {i} ({w[:20]!r}) contains {', '.join(repr(c) for c in bad[:5])}: "
                             "only the characters 0 and 1 are allowed")
    lengths = sorted({len(w) for w in words})
    if len(lengths) > 1:
        first_bad = next(i for i, w in enumerate(words, 1) if len(w) != len(words[0]))
        raise InputError(f"rows have different lengths ({', '.join(map(str, lengths[:6]))}); row {first_bad} "
                         f"differs from row 1 ({len(words[0])} points). Every row needs one digit per point.")
    if lengths[0] > MAX_POINTS:
        raise InputError(f"{lengths[0]} points is too many: the exact game values are limited to {MAX_POINTS} points")
    H = (np.frombuffer("".join(words).encode("ascii"), dtype=np.uint8) - ord("0")).reshape(len(words), lengths[0])
    H, removed = dedupe(H)
    notes = [f"removed {removed} duplicate hypothes{'is' if removed == 1 else 'es'}"] if removed else []
    if len(H) > MAX_HYPOTHESES:
        raise InputError(f"{len(H)} distinct hypotheses is too many: the exact game values are limited to "
                         f"{MAX_HYPOTHESES} hypotheses")
    return H, notes


def format_class(H) -> str:
    """The class as text, one 0/1 row per line (the inverse of ``parse_class``)."""
    return "\n".join("".join(str(int(v)) for v in row) for row in np.asarray(H))


def thresholds(n: int) -> np.ndarray:
    """h_t(x) = 1[x ≥ t] for t = 0..n on points 0..n-1 (n+1 hypotheses); LD = ⌊log2(n+1)⌋."""
    return np.array([[int(x >= t) for x in range(n)] for t in range(n + 1)], dtype=np.uint8)


def intervals(n: int) -> np.ndarray:
    """h_{a,b}(x) = 1[a ≤ x ≤ b] for 0 ≤ a ≤ b < n, plus the empty interval."""
    rows = [[0] * n] + [[int(a <= x <= b) for x in range(n)] for a in range(n) for b in range(a, n)]
    return np.array(rows, dtype=np.uint8)


def singletons(n: int) -> np.ndarray:
    """h_i(x) = 1[x = i] plus the all-zero function; LD = 1."""
    return np.vstack([np.zeros((1, n), np.uint8), np.eye(n, dtype=np.uint8)])


def all_functions(k: int) -> np.ndarray:
    """All 2^k functions on k points; VC = LD = M_tr = k."""
    return np.array(list(itertools.product((0, 1), repeat=k)), dtype=np.uint8)


def tree_class(depth: int, p: float = 0.0, seed: int = 0) -> np.ndarray:
    """The class shattering a complete binary tree with depth+1 levels (notes §4–§5).

    Points are the 2^(depth+1) − 1 tree nodes in heap order (root 0, children 2u+1, 2u+2). For each
    b ∈ {0,1}^(depth+1), h_b walks from the root, labels the i-th node on its path b_i and steps to
    child b_i; every off-path node gets an i.i.d. Bernoulli(p) bit. p = 0 is the minimal tree class
    (3 points for depth 1, 7 for depth 2); LD = depth + 1 for every p.
    """
    rng = np.random.default_rng(seed)
    n = 2 ** (depth + 1) - 1
    rows = []
    for b in itertools.product((0, 1), repeat=depth + 1):
        h = (rng.random(n) < p).astype(np.uint8)
        u = 0
        for bit in b:
            h[u] = bit
            u = 2 * u + 1 + bit
        rows.append(h)
    return np.array(rows, dtype=np.uint8)


def class_G() -> np.ndarray:
    return parse_class(G_ROWS)[0]


def product(*classes) -> np.ndarray:
    """The product of classes on disjoint domains: every concatenation (h_1, ..., h_k)."""
    out = np.zeros((1, 0), np.uint8)
    for C in classes:
        C = np.asarray(C, np.uint8)
        out = np.hstack([np.repeat(out, len(C), axis=0), np.tile(C, (len(out), 1))])
    return out


def random_class(n: int, m: int, seed: int = 0) -> np.ndarray:
    """m distinct uniformly random functions on n points (m ≤ 2^n)."""
    if m > 2 ** n:
        raise InputError(f"there are only {2 ** n} distinct functions on {n} points; asked for {m}")
    rng = np.random.default_rng(seed)
    codes = rng.choice(2 ** n, size=m, replace=False)
    return ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(np.uint8)


@bounded(**KNOBS.specs("name", group="preset_class"), **KNOBS.specs("n", "depth", "p", "seed"))
def preset_class(name: str, n: int = 7, depth: int = 2, p: float = 0.5, seed: int = 0) -> np.ndarray:
    """The preset classes of the page. ``n`` sizes the families in ``SIZED_PRESETS``; ``depth``, ``p`` and
    ``seed`` the random tree class. A size past a family's limit raises InputError (never clamped)."""
    if name in SIZED_PRESETS and n > SIZED_PRESETS[name]:
        raise InputError(f"{PRESETS[name]}: at most n = {SIZED_PRESETS[name]} points "
                         f"({2 ** SIZED_PRESETS[name]} hypotheses); got n = {n}")
    if name == "thresholds":
        return thresholds(n)
    if name == "intervals":
        return intervals(n)
    if name == "singletons":
        return singletons(n)
    if name == "all":
        return all_functions(n)
    if name == "minimal3":
        return tree_class(1, 0.0)
    if name == "minimal7":
        return tree_class(2, 0.0)
    if name == "G":
        return class_G()
    if name == "GxG":
        return product(class_G(), class_G())
    return tree_class(depth, float(p), seed)   # "tree"
