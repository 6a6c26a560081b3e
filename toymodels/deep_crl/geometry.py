"""Distances in the online agent's maze, for the critic's value map (the paper's Fig. 9): straight-line and corridor
(geodesic) distance of every point of a fine grid to the far goal. NumPy and SciPy only."""
from __future__ import annotations

import math

import numpy as np

from .config import Maze, make_maze

# --------------------------------------------------------------------------- geometry for the value map


def distance_maps(maze: Maze, res: int = 8) -> dict:
    """A fine grid over the free cells; Euclidean and corridor (geodesic) distance of every point to the goal."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import dijkstra

    H, W = maze.shape
    n_r, n_c = H * res, W * res
    rr, cc = np.meshgrid(np.arange(n_r), np.arange(n_c), indexing="ij")
    # fine-grid point (i, j) sits at ((i + 0.5)/res − 0.5)·cell
    pos = np.stack([((rr + 0.5) / res - 0.5) * maze.cell, ((cc + 0.5) / res - 0.5) * maze.cell], -1)
    free = maze.free[rr // res, cc // res]
    ids = -np.ones((n_r, n_c), dtype=int)
    ids[free] = np.arange(free.sum())
    fi, fj = np.nonzero(free)
    rows, cols, w = [], [], []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        ni, nj = fi + dr, fj + dc
        ok = (ni >= 0) & (ni < n_r) & (nj >= 0) & (nj < n_c)
        ok[ok] = free[ni[ok], nj[ok]]
        if dr and dc:  # a diagonal step must not cut a wall corner
            ok[ok] = free[fi[ok] + dr, fj[ok]] & free[fi[ok], nj[ok]]
        rows.append(ids[fi[ok], fj[ok]])
        cols.append(ids[ni[ok], nj[ok]])
        w.append(np.full(ok.sum(), math.hypot(dr, dc) * maze.cell / res))
    rows, cols, w = map(np.concatenate, (rows, cols, w))
    n = int(free.sum())
    graph = coo_matrix((np.r_[w, w], (np.r_[rows, cols], np.r_[cols, rows])), shape=(n, n)).tocsr()
    goal = np.array(maze.goal, dtype=float) * maze.cell
    g_idx = ids[maze.goal[0] * res + res // 2, maze.goal[1] * res + res // 2]
    geo_from = dijkstra(graph, indices=g_idx)
    geo = np.full((n_r, n_c), np.nan)
    geo[free] = geo_from + np.linalg.norm(pos[free][g_idx] - goal)
    euc = np.where(free, np.linalg.norm(pos - goal, axis=-1), np.nan)
    return {"maze": maze.name, "free": maze.free.astype(np.int8), "cell": maze.cell, "res": res,
            "start": list(maze.start), "goal": list(maze.goal), "grid_pos": pos.astype(np.float32),
            "grid_free": free, "euclid": euc, "geodesic": geo}


def maze_view(maze: str = "u_maze") -> dict:
    """The page's maze picture data (cheap, pure NumPy/SciPy): layout and distance-to-goal fields."""
    return distance_maps(make_maze(maze))
