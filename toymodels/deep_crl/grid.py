"""The offline critic's world: grid mazes where straight-line and corridor distance disagree, and the ground truth a
critic is scored against, computed without any network.

* ``rings_maze``, ``spiral_maze``: concentric rings with alternating gaps, a square spiral (True = free cell).
* ``geodesic``: the corridor (shortest-path) distance between every pair of cells, by breadth-first search.
* ``relabel_occupancy``: the exact law of the relabeled goal of (s, a) under a uniform random walk,
  p(g | s, a) = Σ_d c_d [P_a P^(d−1)]_{s g}, with the truncated geometric offset law of the paper's relabeling
  (c_d averages it over the uniform time step).

Pure NumPy (SciPy for Spearman's ρ): the page reads it without torch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toymodels.topic import InputError

# --------------------------------------------------------------------------- grid mazes


def rings_maze(n: int) -> np.ndarray:
    """Concentric square rings on an n×n grid (n = 3 mod 4): corridors at even Chebyshev radius from the centre,
    walls at odd radius, one gap per wall ring on alternating sides (top, bottom, top, ...). True = free."""
    if n % 4 != 3 or n < 7:
        raise InputError(f"a rings maze needs a size n = 3 mod 4 (7, 11, 15, 19, ...), got {n}")
    c = (n - 1) // 2
    i, j = np.mgrid[:n, :n]
    d = np.maximum(abs(i - c), abs(j - c))
    free = d % 2 == 0
    for k, radius in enumerate(range(1, c, 2)):          # wall rings inside the outer wall
        if k % 2 == 0:
            free[c - radius, c] = True                    # gap above the centre
        else:
            free[c + radius, c] = True                    # gap below
    free[d == c] = False                                  # outer wall
    return free


def spiral_maze(n: int) -> np.ndarray:
    """A square spiral corridor (width 1, walls of width 1) winding in from the outer wall to the centre."""
    if n % 2 == 0 or n < 5:
        raise InputError(f"a spiral maze needs an odd size >= 5, got {n}")
    free = np.zeros((n, n), bool)
    r, c = 1, 1
    free[r, c] = True
    dirs = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    k = 0
    stuck = 0
    while stuck < 4:
        dr, dc = dirs[k % 4]
        r2, c2 = r + 2 * dr, c + 2 * dc
        # carve two cells ahead if the target is inside the border and still wall with wall around it
        if 1 <= r2 <= n - 2 and 1 <= c2 <= n - 2 and not free[r2, c2]:
            free[r + dr, c + dc] = free[r2, c2] = True
            r, c = r2, c2
            stuck = 0
        else:
            k += 1
            stuck += 1
    return free


GRIDS = {"rings15": lambda: rings_maze(15), "rings19": lambda: rings_maze(19), "rings27": lambda: rings_maze(27),
         "spiral15": lambda: spiral_maze(15), "spiral19": lambda: spiral_maze(19)}
GRID_LABELS = {"rings15": "concentric rings 15×15", "rings19": "concentric rings 19×19",
               "rings27": "concentric rings 27×27", "spiral15": "spiral 15×15", "spiral19": "spiral 19×19"}
MOVES = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]])     # up, down, left, right (row, col)


@dataclass(frozen=True)
class Grid:
    name: str
    free: np.ndarray            # (H, W) bool
    cells: np.ndarray           # (n, 2) row, col of each free cell
    index: np.ndarray           # (H, W) cell id or -1
    step: np.ndarray            # (n, 4) next cell id under each move (blocked move: stay)


def make_grid(name: str) -> Grid:
    if name not in GRIDS:
        raise InputError(f"unknown maze {name!r}: choose one of {', '.join(GRIDS)}")
    free = GRIDS[name]()
    cells = np.argwhere(free)
    index = -np.ones(free.shape, int)
    index[tuple(cells.T)] = np.arange(len(cells))
    nxt = cells[:, None, :] + MOVES[None]                                   # (n, 4, 2)
    ok = free[nxt[..., 0].clip(0, free.shape[0] - 1), nxt[..., 1].clip(0, free.shape[1] - 1)]
    step = np.where(ok, index[nxt[..., 0].clip(0, free.shape[0] - 1), nxt[..., 1].clip(0, free.shape[1] - 1)],
                    np.arange(len(cells))[:, None])
    return Grid(name, free, cells, index, step)


def observe(grid: Grid, cells: np.ndarray) -> np.ndarray:
    """Cell (r, c) ↦ 2·(r, c)/(N − 1) − 1 + half a cell, N = max(H, W).

    The half-cell shift keeps every coordinate off zero: an input of exactly (0, 0) makes the first Dense
    (zero bias at init) output 0, every LayerNorm then sees zero variance, and at depth 32 the backward pass
    multiplies by 1/√eps ≈ 316 per layer and overflows (NaN).
    """
    n = max(grid.free.shape) - 1
    return (2 * cells / n - 1 + 0.5 / n).astype(np.float32)


def geodesic(grid: Grid) -> np.ndarray:
    """Shortest-path distance (in moves) between every pair of free cells, by breadth-first search."""
    n = len(grid.cells)
    out = np.full((n, n), np.inf)
    for s in range(n):
        out[s, s] = 0
        frontier, d = [s], 0
        while frontier:
            d += 1
            nxt = {int(v) for u in frontier for v in grid.step[u] if not np.isfinite(out[s, v])}
            for v in nxt:
                out[s, v] = d
            frontier = list(nxt)
    return out


def euclid(grid: Grid) -> np.ndarray:
    return np.linalg.norm(grid.cells[:, None, :] - grid.cells[None, :, :], axis=-1)


def transition_matrices(grid: Grid) -> np.ndarray:
    """P_a (4, n, n): the deterministic move a."""
    n = len(grid.cells)
    P = np.zeros((4, n, n))
    P[np.arange(4)[:, None], np.arange(n)[None, :], grid.step.T] = 1.0
    return P


def relabel_occupancy(grid: Grid, episode_len: int, gamma: float) -> np.ndarray:
    """p(g | s, a) (n, 4, n): the law of the relabeled goal of (s_t = s, a_t = a) under the uniform walk,
    exactly as ``crl.relabel_indices`` samples it (t uniform in 0..T−2, d truncated geometric)."""
    T = episode_len
    Pa = transition_matrices(grid)
    P = Pa.mean(0)
    c = np.zeros(T)                                       # c[d], d = 1..T−1
    for t in range(T - 1):
        n_t = T - 1 - t
        w = gamma ** np.arange(n_t)
        c[1:n_t + 1] += w / w.sum()
    c /= T - 1
    acc = np.zeros_like(P)
    Pk = np.eye(len(P))
    for d in range(1, T):
        acc += c[d] * Pk                                   # Σ_d c_d P^(d−1)
        Pk = Pk @ P
    return np.einsum("asm,mg->sag", Pa, acc)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)
