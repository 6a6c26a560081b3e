"""The exact transductive value M_tr(H) = max_π W(H, 1) and the VC dimension, within a budget of time and memory.

M_tr is computed by building π from the back over suffix sets T, keeping for each T only the Pareto-maximal vectors
of cell ranks (notes §3, "a fast exact algorithm"); here it runs layer by layer, batched in NumPy, with an exact
branch-and-bound (comb(a, b) ≤ log2(2^a + 2^b), so a vector with Σ_cells 2^v < 2^(L+1) cannot beat an order already
worth L). How many vectors a class keeps is only known as the layers are built, so the solver meters itself: before
each chunk it checks the memory model (``_layer_bytes``) against ``MAX_TR_BYTES`` and its work against a limit
(``MAX_TR_WORK``, or a page link's ``LINK_TR_WORK``), and raises ``CostLimit`` (a BudgetError) before allocating or
working past them.
"""
from __future__ import annotations

import math

import numpy as np

from toymodels.errors import BudgetError
from toymodels.topic import as_progress, bounded

from .classes import as_class
from .config import KNOBS, MAX_POINTS, MAX_TR_BYTES, MAX_TR_SECONDS, MAX_TR_WORK, TR_WORK_PER_SECOND
from .games import _masks, comb

# Memory model of one layer of ``_backward`` (bytes), from the arrays it builds; checked by the tests against
# tracemalloc's peak. Per layer: N front rows (int8, one entry per hypothesis), C = N·(n−k) candidates, G suffix
# sets T' (each with an int16 cell id per hypothesis), A candidates kept so far (int8 rows), m hypotheses.
# Phase 1 (candidates, chunk by chunk) holds the fronts, the cell ids and the kept candidates; phase 2 (sorting)
# the kept candidates twice (the chunks and the sorted array); phase 3 (Pareto filter) the sorted array and the
# new front. Index vectors: int64, a few per candidate and per kept row; chunk temporaries: bounded by the
# chunk sizes below.
_CHUNK_CELLS = 1 << 19        # candidate rows x hypotheses per chunk (work arrays of ~27 bytes per cell)
_GROUP_CELLS = 1 << 17        # suffix sets x hypotheses per chunk of the cell-id computation (~80 bytes per cell)
_PAIR_BLOCK = 1 << 17         # ordered pairs (i, j) of the Pareto filter whose indices exist at once
_PAIR_CELLS = 1 << 21         # pairs x hypotheses compared at once (4 work arrays of 1 byte per cell)
_TR_CHUNK_BYTES = 24 * 2**20  # the work arrays of any one phase (measured ≤ 22 MB at 1024 hypotheses)
_TR_FIXED_BYTES = 2 * 2**20   # per-class arrays: bits, xbit, T masks, the heuristic's masks
_BYTES_PER_C = 96             # rows, xs, new T, tidx (int64) and np.unique's temporaries over the candidates
_BYTES_PER_A = 192            # the kept candidates' index vectors, sort keys and the Pareto filter's vectors


def _layer_bytes(m: int, n: int, N: int, C: int, G: int, A: int) -> int:
    """Peak bytes of one layer of ``_backward`` with A candidates kept (see the model above)."""
    return (m * (max(N + 2 * G, A) + A) + (17 * n + 16) * N + _BYTES_PER_C * C + _BYTES_PER_A * A
            + _TR_CHUNK_BYTES)


_ROW_UNITS = 30               # per candidate row, besides its m hypotheses
_W_CELLS = 7                  # per suffix set x hypothesis (_cell_ids)
_W_PAIR = 1 / 20              # per ordered pair of rows x hypothesis compared by the Pareto filter


def vc_dimension(H) -> int:
    """The largest k such that some k points are shattered (all 2^k patterns appear). VC(∅-class) is 0."""
    H = as_class(H)
    m, n = H.shape
    codes = (H.astype(np.int64) << np.arange(n, dtype=np.int64)).sum(axis=1)
    best = 0
    shattered = [0]  # shattered sets of the current size, as masks (shattering is closed under subsets)
    for k in range(1, min(n, int(math.log2(m))) + 1):
        cand = sorted({s | (1 << x) for s in shattered for x in range(n) if not s >> x & 1})
        if not cand:
            break
        cand = np.array(cand, dtype=np.int64)
        distinct = np.empty(len(cand), dtype=np.int64)
        step = max(1, _CHUNK_CELLS // (4 * m))  # (sets, m) int64 arrays of ~1 MB, not C(16, 8) x 1024 at once
        for s in range(0, len(cand), step):
            proj = np.sort(codes[None, :] & cand[s:s + step, None], axis=1)
            distinct[s:s + step] = 1 + (np.diff(proj, axis=1) != 0).sum(axis=1)
        shattered = cand[distinct == 2 ** k].tolist()
        if not shattered:
            break
        best = k
    return best


def _reduce_points(H: np.ndarray) -> list[int]:
    """Points that matter for the game: drop constant columns and columns equal or complementary to an
    earlier one (after the first of such a pair is labelled, the other is forced), keeping the first."""
    keep, seen = [], set()
    for x in range(H.shape[1]):
        col = H[:, x]
        if col.min() == col.max():
            continue
        key = col.tobytes() if col[0] == 0 else (1 - col).tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(x)
    return keep


class CostLimit(BudgetError):
    """The exact transductive solver stopped before an allocation or a step that would pass one of its limits.

    ``cost`` holds what it had measured: ``limit`` ("memory" or "work"), ``layer`` and ``layers`` (suffix
    sets of size ``layer`` of ``layers`` were next), ``bytes`` (what that step needed, by the memory model)
    and ``max_bytes``, ``work`` (done or committed so far, in work units) and ``max_work``, and ``seconds`` /
    ``max_seconds`` (the same work in CPU seconds, by ``TR_WORK_PER_SECOND``)."""

    def __init__(self, message: str, cost: dict):
        super().__init__(message)
        self.cost = dict(cost)


def _mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.0f} MB"


class _Meter:
    """Counts the backward pass's memory and work *before* it allocates or does them, and raises CostLimit
    the moment a step would pass ``max_bytes`` or ``max_work``. The solver asks ``need(bytes)`` with the
    peak that the next step's arrays would reach (``_layer_bytes``), and ``spend(units)`` with its work."""

    def __init__(self, n: int, max_work: float, max_bytes: float):
        self.n, self.max_work, self.max_bytes = n, float(max_work), float(max_bytes)
        self.work, self.peak, self.layer = 0.0, 0, 0
        self.persistent = 0  # the back pointers kept for every layer (16 bytes per kept row)

    def _cost(self, limit: str, nbytes: float) -> dict:
        return {"limit": limit, "layer": self.layer + 1, "layers": self.n, "bytes": int(nbytes),
                "max_bytes": int(self.max_bytes), "work": self.work, "max_work": self.max_work,
                "seconds": self.work / TR_WORK_PER_SECOND, "max_seconds": self.max_work / TR_WORK_PER_SECOND}

    def need(self, nbytes: float) -> None:
        nbytes = int(nbytes + self.persistent + _TR_FIXED_BYTES)
        if nbytes > self.max_bytes:
            raise CostLimit(f"this class is too large for the exact transductive value: at suffix sets of size "
                            f"{self.layer + 1} (of {self.n} points) its arrays would need {_mib(nbytes)}, and the "
                            f"limit is {_mib(self.max_bytes)}. Try fewer points or fewer hypotheses.",
                            self._cost("memory", nbytes))
        self.peak = max(self.peak, nbytes)

    def spend(self, units: float) -> None:
        if self.work + units > self.max_work:
            self.work += units
            raise CostLimit(_work_message(self.layer + 1, self.n, self.work, self.max_work), self._cost("work", 0))
        self.work += units


def _work_message(layer: int, n: int, work: float, max_work: float) -> str:
    return (f"this class is too large for the exact transductive value: by suffix sets of size {layer} (of {n} "
            f"points) it needs more than about {work / TR_WORK_PER_SECOND:,.1f} s of CPU, and the limit is "
            f"{max_work / TR_WORK_PER_SECOND:,.1f} s. Try fewer points or fewer hypotheses.")


def _order_rank(masks, full: int, order) -> int:
    """W(H, 1) along ``order`` by walking the labelling trie (each node visited once, so no memo)."""
    n = len(order)

    def w(V: int, t: int) -> int:
        while t < n:
            a = V & masks[order[t]]
            if a and a != V:
                return comb(w(V ^ a, t + 1), w(a, t + 1))
            t += 1
        return 0

    return w(full, 0)


def _lower_bound_order(Hr: np.ndarray, tries: int = 24, seed: int = 0) -> tuple[int, list[int]]:
    """A good order, found cheaply (it only speeds up the exact search, never changes its value): the best of
    the identity order, its reverse and ``tries`` seeded random orders, then a pass of adjacent swaps."""
    m, n = Hr.shape
    masks = _masks(Hr)
    full = (1 << m) - 1
    rng = np.random.default_rng(seed)
    orders = [list(range(n)), list(range(n))[::-1]] + [rng.permutation(n).tolist() for _ in range(tries)]
    best, arg = -1, orders[0]
    for o in orders:
        v = _order_rank(masks, full, o)
        if v > best:
            best, arg = v, o
    improved = True
    while improved and best < int(m).bit_length() - 1:
        improved = False
        for i in range(n - 1):
            o = arg[:i] + [arg[i + 1], arg[i]] + arg[i + 2:]
            v = _order_rank(masks, full, o)
            if v > best:
                best, arg, improved = v, o, True
    return best, arg


def _tr_budget(H, progress=None, max_work: float = MAX_TR_WORK) -> None:
    """Refuse at once a class whose exact solve was already refused with these limits (``_REFUSED``).
    The solver's own limits (``_Meter``) are checked inside it, before each allocation."""
    _raise_if_refused(as_class(H), max_work)


#: Classes the solver refused (shape, bytes, max_work) -> (message, cost): asking again is answered at once.
_REFUSED: dict[tuple, tuple[str, dict]] = {}
_REFUSED_SIZE = 256


def _refusal_key(H: np.ndarray, max_work: float) -> tuple:
    return H.shape, H.tobytes(), float(max_work)


def _raise_if_refused(H: np.ndarray, max_work: float) -> None:
    got = _REFUSED.get(_refusal_key(H, max_work))
    if got is not None:
        raise CostLimit(*got)


def _remember_refusal(H: np.ndarray, max_work: float, exc: CostLimit) -> None:
    if len(_REFUSED) >= _REFUSED_SIZE:
        _REFUSED.pop(next(iter(_REFUSED)), None)
    _REFUSED[_refusal_key(H, max_work)] = (str(exc), exc.cost)


@bounded(**KNOBS.specs(group="solve"), _budget=_tr_budget, _free=("H",))
def transductive_value(H, progress=None, max_work: float = MAX_TR_WORK) -> tuple[int, list[int]]:
    """M_tr(H) = max over orders π of W(H, 1), and an optimal order (a permutation of all points).

    Exact, by the notes' backward algorithm: for a suffix set T, hypotheses fall into cells by their
    labels on X∖T; an order of T gives each cell its rank W. Prepending a point x to T merges the two
    cells that differ only at x with comb. For each T only the Pareto-maximal rank vectors are kept
    (comb is monotone, so a dominated vector can never lead to a larger value). Vectors are stored per
    hypothesis (the rank of its cell) so all subsets of one size are processed as one NumPy batch.

    Branch and bound (exact): comb(a, b) ≤ log2(2^a + 2^b), so a rank vector whose cells c satisfy
    Σ_c 2^{v_c} < 2^{L+1} can never reach more than L, whatever is prepended. L is the value of a cheap
    heuristic order; only vectors that could beat it are kept. If none survives, M_tr = L (that order).

    Bounded: the solve stops with ``CostLimit`` (a BudgetError) before any allocation past ``MAX_TR_BYTES``
    of arrays or any step past ``max_work`` work units (at most ``MAX_TR_WORK``, about ``MAX_TR_SECONDS``
    of CPU); how many Pareto vectors a class has is only known as the layers are built, so the check is made
    layer by layer and chunk by chunk, from the sizes already known (``_layer_bytes``).
    """
    H = as_class(H)
    _raise_if_refused(H, max_work)
    m, n_all = H.shape
    pts = _reduce_points(H)
    rest = [x for x in range(n_all) if x not in pts]
    if len(pts) == 0:
        return 0, list(range(n_all))
    lower, lower_order = _lower_bound_order(H[:, pts])
    try:
        value, order = _backward(H[:, pts], lower, progress, max_work=max_work)
    except CostLimit as exc:
        _remember_refusal(H, max_work, exc)
        cost = exc.cost
        if max_work < MAX_TR_WORK and (cost["limit"] == "memory" or cost["work"] > MAX_TR_WORK):
            # The pass is deterministic: the full budget would reach the same step, so it is refused too.
            full = dict(cost, max_work=MAX_TR_WORK, max_seconds=MAX_TR_SECONDS)
            _remember_refusal(H, MAX_TR_WORK, CostLimit(
                str(exc) if cost["limit"] == "memory" else
                _work_message(cost["layer"], cost["layers"], cost["work"], MAX_TR_WORK), full))
        raise
    if value is None:
        value, order = lower, lower_order
    return value, [pts[i] for i in order] + rest


_POW2 = np.array([1 << i for i in range(MAX_POINTS + 2)] + [0], dtype=np.int64)
_POW2_32 = _POW2.astype(np.int32)  # the same table, 4 bytes an entry (2^17 fits): for the pruning sums


def local_dtype(m: int):
    """The dtype of cell ids among m hypotheses (ids are < m)."""
    return np.int16 if m < 2**15 else np.int64


def _cell_ids(bits: np.ndarray, off: np.ndarray, n: int, m: int) -> np.ndarray:
    """(G, m): for each suffix set (its complement's mask in ``off``) and hypothesis h, the id of h's cell
    (the hypotheses that agree with h off the set), numbered 0, 1, ... in the order of their labels off it.
    Computed in chunks of suffix sets (the same numbers as all at once: a row's ids only depend on the row)."""
    local = np.empty((len(off), m), dtype=local_dtype(m))
    step = max(1, _GROUP_CELLS // m)
    for s in range(0, len(off), step):
        keys = bits[None, :] & off[s:s + step, None]                              # labels off T'
        flat = (np.arange(len(keys), dtype=np.int64)[:, None] << n) | keys
        _, inv = np.unique(flat.ravel(), return_inverse=True)
        inv = inv.reshape(len(keys), m)
        local[s:s + step] = inv - inv.min(axis=1, keepdims=True)               # cell id of h, in [0, m)
    return local


def _backward(Hr: np.ndarray, lower: int = -1, progress=None, max_work: float = MAX_TR_WORK,
              max_bytes: float = MAX_TR_BYTES, meter: _Meter | None = None) -> tuple[int | None, list[int]]:
    """The backward Pareto-front algorithm on a reduced class (every column splits, no two columns equal or
    complementary), keeping only rank vectors that can exceed ``lower``. Returns (value, order of the columns),
    or (None, []) when no order beats ``lower``. ``lower = -1`` prunes nothing (the plain algorithm).

    Every layer is built in chunks of candidate rows, and ``meter`` (a ``_Meter``; one is made from
    ``max_work`` and ``max_bytes``) is asked before each chunk, so the pass raises CostLimit before it
    allocates past ``max_bytes`` or works past ``max_work``."""
    p = as_progress(progress)
    m, n = Hr.shape
    meter = meter if meter is not None else _Meter(n, max_work, max_bytes)
    bits = (Hr.astype(np.int64) << np.arange(n, dtype=np.int64)).sum(axis=1)  # (m,)
    xbit = Hr.T.astype(np.int64)                                                 # (n, m): h(x)
    full = (1 << n) - 1
    need = 1 << (lower + 1) if lower >= 0 else 0  # a row survives iff Σ_cells 2^v ≥ need
    if m < need:
        return None, []

    # Layer k holds every suffix set T with |T| = k: masks (G,), and fronts as rows F (N, m) with group g (N,).
    T_masks = np.array([0], dtype=np.int64)
    F = np.zeros((1, m), dtype=np.int8)
    g = np.array([0], dtype=np.int64)
    back = []  # per layer: (parent row index, point x) of every kept row
    R = max(1, _CHUNK_CELLS // m)  # candidate rows per chunk
    xbit = xbit.astype(np.int32)
    row_base = np.arange(R, dtype=np.int32)[:, None] * m                       # (R, 1) first slot of each row
    for k in range(n):
        meter.layer = k
        N = len(F)
        C = N * (n - k)  # every front row of T, prepended with every x not in T
        meter.need(_layer_bytes(m, n, N, C, min(C, math.comb(n, k + 1)), 0))
        meter.spend(C * (m + _ROW_UNITS))
        Tm = T_masks[g]                                                         # (N,)
        free = ((Tm[:, None] >> np.arange(n)) & 1) == 0                         # (N, n)
        rows, xs = np.nonzero(free)
        newT = Tm[rows] | (np.int64(1) << xs)                                   # (C,)
        del Tm, free
        # Cells of T' = T ∪ {x}: hypotheses agreeing off T'. Within one candidate row, the T'-cell of h
        # contains h's T-cell (value V[h]) and possibly the T-cell with x flipped. Find, for each
        # (row, T'-cell), the value on the x=0 side and on the x=1 side, by scatter.
        Tu, tidx = np.unique(newT, return_inverse=True)                         # the sets T' of layer k+1
        G = len(Tu)
        meter.spend(_W_CELLS * G * m)
        local = _cell_ids(bits, full ^ Tu, n, m)                                # (G', m) T'-cell id of h
        parts, kept, sums, A_n, weight = [], [], [], 0, None
        # One chunk's work arrays, allocated once per layer: a fresh multi-megabyte array per chunk comes as fresh
        # pages from the kernel each time (glibc gives freed ones back), a third of the CPU time at 12 x 992.
        buf = {name: np.empty(min(R, C) * m * width, dtype=dt) for name, dt, width in [
            ("cell", np.int32, 1), ("slot", np.int32, 1), ("sides", np.int8, 2), ("V", np.int8, 1),
            ("loc", local_dtype(m), 1), ("xb", np.int32, 1), ("hi", np.int8, 1), ("lo", np.int8, 1),
            ("eq", bool, 1), ("ok", bool, 1), ("val", np.int8, 1), ("pow", np.int32, 1)]}
        for s in range(0, C, R):
            c = min(R, C - s)
            cm = c * m
            meter.need(_layer_bytes(m, n, N, C, G, A_n + c))
            V = np.take(F, rows[s:s + c], axis=0, out=buf["V"][:cm].reshape(c, m))  # (c, m) ranks per hypothesis
            cell = np.add(row_base[:c], np.take(local, tidx[s:s + c], axis=0, out=buf["loc"][:cm].reshape(c, m)),
                          out=buf["cell"][:cm].reshape(c, m))                   # one slot per row & cell
            slot = np.left_shift(cell, 1, out=buf["slot"][:cm].reshape(c, m))
            np.bitwise_or(slot, np.take(xbit, xs[s:s + c], axis=0, out=buf["xb"][:cm].reshape(c, m)),
                          out=slot)                                             # (c, m) slot of h's side of x
            sides = buf["sides"][:2 * cm]
            sides.fill(-1)
            sides[slot.ravel()] = V.ravel()
            s0, s1 = sides[0::2], sides[1::2]
            # comb per slot, -1 where empty: max(s0, s1) + 1[s0 = s1], or the one side when the other is empty
            hi = np.maximum(s0, s1, out=buf["hi"][:cm])
            both = np.greater_equal(np.minimum(s0, s1, out=buf["lo"][:cm]), 0, out=buf["ok"][:cm])
            tie = np.logical_and(np.equal(s0, s1, out=buf["eq"][:cm]), both, out=buf["eq"][:cm])
            val = np.add(hi, tie, out=buf["val"][:cm])
            cand = val[cell]                                                     # (c, m), a new array
            if need:
                weight = np.take(_POW2_32, val, out=buf["pow"][:cm])             # _POW2[-1] = 0: empty slot
                alive = np.flatnonzero(weight.reshape(c, m).sum(axis=1, dtype=np.int64) >= need)
                cand = cand[alive]
                kept.append(s + alive)
            parts.append(cand)
            sums.append(cand.sum(axis=1, dtype=np.int64))
            A_n += len(cand)
            if len(parts) % 64 == 0:
                p((k + s / C) / n, f"suffix sets of size {k + 1}")
        del F, local, tidx, buf, V, cell, slot, sides, s0, s1, hi, both, tie, val, cand, weight
        if need:
            if A_n == 0:
                p(1.0, "no order beats the heuristic one")
                return None, []
            alive = np.concatenate(kept)
            newT, rows, xs = newT[alive], rows[alive], xs[alive]
            del kept, alive
        # Sort by (T', −Σ ranks) and place the kept rows there, one chunk at a time.
        order_ = np.lexsort((-np.concatenate(sums), newT))
        del sums
        where = np.empty(A_n, dtype=np.int64)
        where[order_] = np.arange(A_n, dtype=np.int64)
        cand = np.empty((A_n, m), dtype=np.int8)
        at = 0
        for i in range(len(parts)):
            cand[where[at:at + len(parts[i])]] = parts[i]
            at += len(parts[i])
            parts[i] = None
        del parts, where
        newT, rows, xs = newT[order_], rows[order_], xs[order_]
        del order_
        # Pareto filter within each T'.
        keep = _pareto_by_group(cand, newT, meter)
        F, Tnew, prow, px = cand[keep], newT[keep], rows[keep], xs[keep]
        del cand, newT, rows, xs, keep
        T_masks, g = np.unique(Tnew, return_inverse=True)
        back.append((prow, px))
        meter.persistent += 16 * len(prow)
        p((k + 1) / n, f"suffix sets of size {k + 1}")
    # Layer n: T = X, one cell; the value is the max over the front.
    best = int(np.argmax(F[:, 0]))
    value = int(F[best, 0])
    order, r = [], best
    for prow, px in reversed(back):
        order.append(int(px[r]))
        r = int(prow[r])
    return value, order


def _pareto_by_group(cand: np.ndarray, grp: np.ndarray, meter: _Meter | None = None) -> np.ndarray:
    """Indices of rows that are Pareto-maximal within their group, keeping the first of equal rows.

    Rows must be sorted by group. Vectorised over all groups at once: every ordered pair (i, j) of rows
    of one group is compared; j is dropped if row i ≥ row j everywhere and (i ≠ j somewhere or i < j).
    Done in blocks of pairs and chunks of rows, in work arrays allocated once, so its temporaries stay
    bounded (``_TR_CHUNK_BYTES``); ``meter`` is charged for the pairs before they are compared."""
    N, m = cand.shape
    rows_per = max(1, _CHUNK_CELLS // max(m, 1))
    # 1. Drop exact duplicates cheaply: sort by (group, hash of the row) and drop a row equal to its
    #    predecessor (checked exactly, so a hash collision can only leave a duplicate in, never drop a row).
    coef = np.random.default_rng(12345).integers(1, 2**62, size=m, dtype=np.int64) | 1
    h = np.empty(N, dtype=np.int64)
    wide = np.empty((min(rows_per, N), m), dtype=np.int64)
    for s in range(0, N, rows_per):  # integer dot products wrap exactly: chunks give the same hashes
        e = min(N, s + rows_per)
        wide[:e - s] = cand[s:e]
        h[s:e] = wide[:e - s] @ coef
    del wide
    srt = np.lexsort((h, grp))
    del h
    gs = grp[srt]
    dup = np.zeros(N, dtype=bool)
    r = min(rows_per, N)
    a_buf, b_buf, eq_buf = np.empty((r, m), np.int8), np.empty((r, m), np.int8), np.empty((r, m), bool)
    for s in range(1, N, rows_per):
        e = min(N, s + rows_per)
        a = np.take(cand, srt[s:e], axis=0, out=a_buf[:e - s])
        b = np.take(cand, srt[s - 1:e - 1], axis=0, out=b_buf[:e - s])
        dup[s:e] = (gs[s:e] == gs[s - 1:e - 1]) & np.equal(a, b, out=eq_buf[:e - s]).all(axis=1)
    del a_buf, b_buf, eq_buf
    first = np.sort(srt[~dup])
    del gs, dup, srt
    grp = grp[first]  # row t of the filter below is cand[first[t]]
    N = len(first)
    starts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
    sizes = np.diff(np.r_[starts, N])
    size_of = np.repeat(sizes, sizes)
    start_of = np.repeat(starts, sizes)
    multi = np.flatnonzero(size_of > 1)
    dominated = np.zeros(N, dtype=bool)
    if len(multi):
        reps = size_of[multi]
        if meter is not None:
            meter.spend(_W_PAIR * float(reps.sum() - len(multi)) * m)
        ends = np.cumsum(reps)
        step = max(1, _PAIR_CELLS // max(m, 1))
        r = min(step, int(reps.sum()))
        bi_buf, bj_buf = np.empty((r, m), np.int8), np.empty((r, m), np.int8)
        ge_buf, ne_buf = np.empty((r, m), bool), np.empty((r, m), bool)
        b = 0
        while b < len(multi):  # a block of rows j whose pairs number about _PAIR_BLOCK (at least one row)
            e = max(b + 1, int(np.searchsorted(ends, ends[b] - reps[b] + _PAIR_BLOCK, side="right")))
            mj, rj = multi[b:e], reps[b:e]
            j_all = np.repeat(mj, rj)                                           # the row that may be dominated
            offs = np.arange(rj.sum()) - np.repeat(np.cumsum(rj) - rj, rj)
            i_all = np.repeat(start_of[mj], rj) + offs                          # every row of the same group
            ok = i_all != j_all
            i_all, j_all = i_all[ok], j_all[ok]
            del offs, ok
            for s in range(0, len(i_all), step):
                i, j = i_all[s:s + step], j_all[s:s + step]
                Bi = np.take(cand, first[i], axis=0, out=bi_buf[:len(i)])
                Bj = np.take(cand, first[j], axis=0, out=bj_buf[:len(i)])
                ge = np.greater_equal(Bi, Bj, out=ge_buf[:len(i)]).all(axis=1)
                ge &= (i < j) | np.not_equal(Bi, Bj, out=ne_buf[:len(i)]).any(axis=1)
                dominated[j[ge]] = True
            del i_all, j_all
            b = e
    return first[~dominated]
