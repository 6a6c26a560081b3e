"""The online agent's environment and relabeling (the paper's JaxGCRL setup at toy scale, torch).

* ``PointMaze``: a point mass in a maze grid, s' = s + c·a with a ∈ [−1, 1]²; a move into a wall is rejected (per
  axis by default, so the agent slides along walls). Many environments, and the seeds of a batch, step as one tensor.
* Hindsight relabeling (the code's ``flatten_crl_fn``): the goal of (s_t, a_t) is s_{t+d}, d ≥ 1, from the same
  episode, with P(d) ∝ γ^(d−1) truncated at the episode's end (γ = 0.99).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from toymodels.device import get_device
from toymodels.topic import InputError

from .config import Maze

# --------------------------------------------------------------------------- environment


class PointMaze:
    """Vectorised point-mass maze: positions are a tensor (..., 2); every call steps all of them at once."""

    def __init__(self, maze: Maze, step_size: float, wall_mode: str = "axis", device=None):
        self.maze, self.step_size, self.wall_mode = maze, float(step_size), wall_mode
        self.device = get_device(device)
        self.free = torch.as_tensor(maze.free, device=self.device)
        self.centre = torch.as_tensor(maze.centre, dtype=torch.float32, device=self.device)

    def is_free(self, pos: torch.Tensor) -> torch.Tensor:
        idx = torch.round(pos / self.maze.cell).long()
        r = idx[..., 0].clamp(0, self.maze.shape[0] - 1)
        c = idx[..., 1].clamp(0, self.maze.shape[1] - 1)
        inside = (idx[..., 0] == r) & (idx[..., 1] == c)
        return self.free[r, c] & inside

    def step(self, pos: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """s' = s + c·clip(a, −1, 1); a move that would end inside a wall is rejected."""
        delta = self.step_size * action.clamp(-1.0, 1.0)
        if self.wall_mode == "axis":  # x (row) first, then y (column): the agent slides along walls
            for axis in (0, 1):
                new = pos.clone()
                new[..., axis] = new[..., axis] + delta[..., axis]
                pos = torch.where(self.is_free(new)[..., None], new, pos)
            return pos
        new = pos + delta
        dx = pos.clone()
        dx[..., 0] = new[..., 0]
        dy = pos.clone()
        dy[..., 1] = new[..., 1]
        ok = self.is_free(new) & self.is_free(dx) & self.is_free(dy)  # no cutting through a wall corner
        return torch.where(ok[..., None], new, pos)

    def sample_in_cells(self, cells: torch.Tensor, jitter: float, gen: torch.Generator) -> torch.Tensor:
        """Uniform positions within ±jitter cells of the given cell centres (cells: (..., 2) long)."""
        u = torch.rand(cells.shape, generator=gen, device=self.device) * 2 - 1
        return (cells.float() + jitter * u) * self.maze.cell

    def random_free_cells(self, shape: tuple, gen: torch.Generator) -> torch.Tensor:
        free_idx = torch.nonzero(self.free)                                   # (n_free, 2)
        pick = torch.randint(len(free_idx), shape, generator=gen, device=self.device)
        return free_idx[pick]

    def observe(self, pos: torch.Tensor) -> torch.Tensor:
        return (pos - self.centre) / self.maze.scale


def success_metrics(positions: np.ndarray | torch.Tensor, goals, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Per trajectory: success (within ``radius`` of the goal at any step) and time at goal (steps within it).

    positions: (..., T, 2); goals: (..., 2).
    """
    p = torch.as_tensor(positions, dtype=torch.float64)
    g = torch.as_tensor(goals, dtype=torch.float64)
    near = torch.linalg.vector_norm(p - g[..., None, :], dim=-1) < radius
    return near.any(-1).numpy(), near.sum(-1).numpy()


# --------------------------------------------------------------------------- relabeling


def sample_future_offsets(t: torch.Tensor, episode_len: int, gamma: float, gen: torch.Generator) -> torch.Tensor:
    """Offsets d ≥ 1 with P(d | t) ∝ γ^(d−1) for d ∈ {1, …, T−1−t} (strictly future, same episode).

    Inverse CDF of the truncated geometric law: P(d ≤ k) = (1 − γ^k)/(1 − γ^n), n = T−1−t.
    """
    if t.device.type != "cpu":
        # float64 stays on the CPU (Apple MPS has none, consumer CUDA cards are slow at it): on a device the
        # same inverse CDF in float32 (its rounding moves P(d) by ~1e-7), no host round trip
        n = (episode_len - 1 - t).to(torch.float32)
        u = torch.rand(t.shape, generator=gen, device=t.device)
        d = torch.ceil(torch.log1p(-u * (1 - torch.exp(n * math.log(gamma)))) / math.log(gamma))
        return torch.minimum(d.clamp(min=1), n).long()
    n = (episode_len - 1 - t).to(torch.float64)
    if bool((n < 1).any()):
        raise InputError("every sampled time step needs at least one future state")
    u = torch.rand(t.shape, generator=gen, device=t.device, dtype=torch.float64)
    lg = math.log(gamma)
    d = torch.ceil(torch.log1p(-u * (1 - torch.exp(n * lg))) / lg)
    return torch.minimum(d.clamp(min=1), n).long()


def relabel_indices(n_instances: int, filled: int, episode_len: int, batch: int, gamma: float,
                    gen: torch.Generator, device=None):
    """Hindsight relabeling: for each instance, ``batch`` (episode, t, d) triples; (s_t, a_t) of that episode
    gets the goal s_{t+d} of the *same* episode, d ≥ 1 drawn from the truncated geometric law."""
    ep = torch.randint(filled, (n_instances, batch), generator=gen, device=device)
    t = torch.randint(episode_len - 1, (n_instances, batch), generator=gen, device=device)
    d = sample_future_offsets(t, episode_len, gamma, gen)
    return ep, t, d


def future_offset_pmf(t: int, episode_len: int, gamma: float) -> np.ndarray:
    """The exact law of ``sample_future_offsets`` for one t: entry d−1 is P(d)."""
    n = episode_len - 1 - t
    w = gamma ** np.arange(n, dtype=float)
    return w / w.sum()
