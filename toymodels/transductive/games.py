"""The mistake game's exact values by recursion over version spaces (notes §2–§3).

Inside, a *version space* is a Python int used as a bitmask over the rows of ``H`` (bit i set <=> hypothesis i is
still consistent), so "V restricted to h(x) = 1" is one ``&``.

* Littlestone dimension, LD(∅) = −1 and LD(V) = max(0, max_{x splits V} 1 + min(LD(V_{x,0}), LD(V_{x,1}))), which
  is also the value of the standard game (M_std = LD);
* the combination rule comb(a, b) = max(a, b) + 1[a = b] (comb(a, ∅) = a): the value of one round when the two
  continuations are worth a and b, i.e. min_ŷ max(value if right, 1 + value if wrong);
* for a fixed order π the transductive game is worth W(H, 1), with W(V, n+1) = 0 and
  W(V, t) = comb(W(V_{x_t,0}, t+1), W(V_{x_t,1}, t+1)) (the Horton–Strahler rank of the labelling trie along π;
  Ben-David, Kushilevitz, Mansour 1997).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from toymodels.topic import InputError

from .classes import as_class


def _masks(H: np.ndarray) -> tuple[int, ...]:
    """For each point x, the bitmask of hypotheses with h(x) = 1."""
    return tuple(sum(1 << i for i in np.flatnonzero(H[:, x]).tolist()) for x in range(H.shape[1]))


def full_mask(H) -> int:
    return (1 << len(H)) - 1


def members(V: int) -> list[int]:
    """Indices of the hypotheses in version space V."""
    out, i = [], 0
    while V:
        if V & 1:
            out.append(i)
        V >>= 1
        i += 1
    return out


def restrict(masks, V: int, x: int, y: int) -> int:
    """V_{x,y}: the hypotheses of V that label x with y."""
    return V & masks[x] if y else V & ~masks[x]


def comb(a: int | None, b: int | None) -> int:
    """The combination rule: comb(a, b) = max(a, b) + 1[a = b]; comb(a, ∅) = a (∅ is None)."""
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b) + (a == b)


class _Solver:
    """Memoised game values over version spaces (bitmasks) of one class."""

    def __init__(self, H: np.ndarray):
        self.H = H
        self.n = H.shape[1]
        self.masks = _masks(H)
        self.full = full_mask(H)
        self._ld: dict[int, int] = {0: -1}
        self._w: dict[tuple, int] = {}

    # Littlestone dimension, with branch and bound: LD(V) ≤ ⌊log2|V|⌋, so a point whose smaller side
    # is too small to beat the best found so far is skipped (this never changes the exact value).
    def ld(self, V: int) -> int:
        memo = self._ld
        got = memo.get(V)
        if got is not None:
            return got
        c = V.bit_count()
        if c <= 1:
            memo[V] = c - 1
            return c - 1
        cands = []
        for m1 in self.masks:
            a = V & m1
            if a and a != V:
                b = V ^ a
                ca, cb = a.bit_count(), b.bit_count()
                cands.append((ca, a, b) if ca <= cb else (cb, b, a))
        ub = min(c.bit_length() - 1, len(cands))
        best = 0
        cands.sort(key=lambda t: -t[0])
        for small_size, small, big in cands:
            if small_size.bit_length() <= best:  # 1 + ⌊log2 small_size⌋ ≤ best: cannot improve
                break
            ls = self.ld(small)
            if ls + 1 <= best:
                continue
            v = 1 + min(ls, self.ld(big))
            if v > best:
                best = v
                if best >= ub:
                    break
        memo[V] = best
        return best

    # W(V, suffix): the transductive game along a fixed order (notes §3).
    def w(self, V: int, order: tuple, t: int = 0) -> int:
        key = (V, order, t)
        got = self._w.get(key)
        if got is not None:
            return got
        if t >= len(order) or V.bit_count() <= 1:
            val = 0
        else:
            x = order[t]
            a = V & self.masks[x]
            b = V ^ a
            if not a or not b:
                val = self.w(V, order, t + 1)
            else:
                val = comb(self.w(b, order, t + 1), self.w(a, order, t + 1))
        self._w[key] = val
        return val


@lru_cache(maxsize=16)  # a server keeps these memo tables (up to ~3.5 MB each measured at 16 x 1024): a few
def _solver_for(shape: tuple, data: bytes) -> _Solver:
    return _Solver(np.frombuffer(data, np.uint8).reshape(shape))


def solver(H) -> _Solver:
    """A (cached) solver for class H; solvers keep their memo tables between calls."""
    H = as_class(H)
    return _solver_for(H.shape, H.tobytes())


def littlestone_dimension(H) -> int:
    """LD(H), the depth of the deepest mistake tree H shatters; equals the standard game's value (notes §2)."""
    s = solver(H)
    return s.ld(s.full)


def halving_bound(H) -> int:
    """⌊log2 |H|⌋: the Halving algorithm's mistake bound, and an upper bound on LD."""
    return int(len(as_class(H))).bit_length() - 1


def order_value(H, order) -> int:
    """W(H, 1) for a fixed order of (some of) the points: the transductive game's value on that sequence."""
    s = solver(H)
    order = tuple(int(x) for x in order)
    if any(not 0 <= x < s.n for x in order):
        raise InputError(f"an order lists points 0..{s.n - 1}")
    return s.w(s.full, order)
