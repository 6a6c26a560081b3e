"""Deep contrastive RL in a 2-D point-mass maze (Wang, Javali, Bortkiewicz, Trzciński, Eysenbach, NeurIPS 2025).

"1000 Layer Networks for Self-Supervised RL: Scaling Depth Can Enable New Goal-Reaching Capabilities"
(arXiv 2503.14858). The paper trains contrastive RL (CRL) with residual MLPs of depth 4 … 1024 on MuJoCo/Brax
tasks. This module is the same algorithm at toy scale, written from the paper's equations:

* Environment: a point mass in a JaxGCRL/D4RL maze grid (U-maze, U4-maze, big maze), s' = s + c·a with
  a ∈ [-1, 1]²; a move into a wall is rejected (per axis by default, so the agent slides along walls).
  Many environments are stepped at once as one tensor; seeds are a leading "instance" dimension.
* Critic: φ(s, a), ψ(g) with energy  f(s, a, g) = -‖φ(s, a) − ψ(g)‖₂  (negative, not squared), trained with
  forward InfoNCE plus a logsumexp penalty,
      𝓛 = −(1/B) Σ_i [L_ii − logsumexp_j L_ij] + 0.1·(1/B) Σ_i (logsumexp_j L_ij)²,   L_ij = f(s_i, a_i, g_j).
* Actor: tanh-Gaussian, log σ = −5 + 3.5·(tanh(raw) + 1) ∈ [−5, 2], loss E[α log π(a|s,g) − f(s, a, g)] with the
  tanh change-of-variables correction; α tuned automatically towards entropy −0.5·|A|.
* Hindsight relabeling: the goal of (s_t, a_t) is s_{t+d}, d ≥ 1, from the same episode, with
  P(d) ∝ γ^(d−1) truncated at the episode end (γ = 0.99).
* Networks: Dense(w) → LN → Swish, then depth/4 residual blocks h + [Dense → LN → Swish]×4 (h) (skip added after
  the fourth Swish), then a final Dense. "Depth" counts only the Dense layers inside blocks. Actor and both
  encoders share depth and width. Init U(±1/√fan_in), zero biases.

Three departures from the paper's code are on by default because the measured CPU configuration in the paper
notes needed them to reach the far goal at all within a few thousand SGD steps (each is a ``Config`` switch):
half of the actor batch uses another row's goal (``actor_random_goals=0.5``, as in the original contrastive-RL
code), α starts at 0.1 with a log-α learning rate of 3e-3, and walls stop each axis of a move separately.
"""
from __future__ import annotations

import importlib
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from toymodels.device import get_device
from toymodels.store import write_tables
from toymodels.topic import (Each, Fields, InputError, OneOf, Progress, Range, Verdict, View, as_progress, bounded,
                             views)

TOPIC = "deep-crl"

# --------------------------------------------------------------------------- mazes (JaxGCRL / D4RL layouts)
# 1 = wall, 0 = free, R = reset (start) cell, G = the far evaluation goal cell.
R, G = "R", "G"
MAZES: dict[str, list[list]] = {
    "u_maze": [[1, 1, 1, 1, 1],
               [1, R, 0, 0, 1],
               [1, 1, 1, 0, 1],
               [1, G, 0, 0, 1],
               [1, 1, 1, 1, 1]],
    "u4_maze": [[1, 1, 1, 1, 1],
                [1, 0, 0, 0, 1],
                [1, R, 1, 0, 1],
                [1, 1, 1, 0, 1],
                [1, G, 1, 0, 1],
                [1, 0, 0, 0, 1],
                [1, 1, 1, 1, 1]],
    # the big maze has goal cells everywhere in JaxGCRL; we evaluate on the free cell farthest (along the
    # corridors) from the start, which is (6, 6)
    "big_maze": [[1, 1, 1, 1, 1, 1, 1, 1],
                 [1, R, 0, 1, 1, 0, 0, 1],
                 [1, 0, 0, 1, 0, 0, 0, 1],
                 [1, 1, 0, 0, 0, 1, 1, 1],
                 [1, 0, 0, 1, 0, 0, 0, 1],
                 [1, 0, 1, 0, 0, 1, 0, 1],
                 [1, 0, 0, 0, 1, 0, G, 1],
                 [1, 1, 1, 1, 1, 1, 1, 1]],
}
MAZE_LABELS = {"u_maze": "U-maze (5×5)", "u4_maze": "U4-maze (7×5)", "big_maze": "Big maze (8×8)"}
ABLATIONS = ("none", "no_residual", "no_layernorm", "relu")
ABLATION_LABELS = {"none": "full (residual + LayerNorm + Swish)", "no_residual": "no residual connections",
                   "no_layernorm": "no LayerNorm", "relu": "ReLU instead of Swish"}
DEPTHS = (4, 8, 16, 32, 64)

# Paper numbers (Table 1 and fig1_main.json, quoted as references only): time at goal out of 1000 steps.
PAPER_TABLE1 = pd.DataFrame({
    "task": ["Ant U4-Maze", "Ant U5-Maze", "Ant Big Maze", "Ant Hardest Maze", "Humanoid", "Humanoid U-Maze",
             "Humanoid Big Maze", "Arm Push Easy", "Arm Push Hard", "Arm Binpick Hard"],
    "depth_4": [11.4, 0.97, 61, 215, 12.6, 3.2, 0.06, 308, 171, 38],
    "depth_64": [286, 61, 441, 387, 649, 159, 59, 762, 410, 219],
})
PAPER_CURVES = pd.DataFrame({  # means over the last 5 epochs, depths 4, 8, 16, 32, 64
    "task": ["Ant Big Maze"] * 5 + ["Humanoid"] * 5 + ["Ant U4-Maze"] * 5 + ["Humanoid U-Maze"] * 5,
    "depth": list(DEPTHS) * 4,
    "time_at_goal": [61, 320, 424, 439, 441, 13, 101, 522, 639, 650, 11, 107, 138, 238, 286, 3, 7, 7, 12, 159],
})


@dataclass(frozen=True)
class Maze:
    """A maze grid: ``free[r, c]`` is True for open cells; cell (r, c) is centred at (r·cell, c·cell)."""
    name: str
    free: np.ndarray
    start: tuple[int, int]
    goal: tuple[int, int]
    cell: float

    @property
    def shape(self) -> tuple[int, int]:
        return self.free.shape

    @property
    def centre(self) -> np.ndarray:
        return (np.array(self.free.shape, dtype=float) - 1) / 2 * self.cell

    @property
    def scale(self) -> float:
        """Observation scale: positions are mapped to (pos − centre)/scale, about [−1, 1]."""
        return max(self.free.shape) / 2 * self.cell


def make_maze(name: str, cell: float = 2.5) -> Maze:
    if name not in MAZES:
        raise InputError(f"unknown maze {name!r}: choose one of {', '.join(MAZES)}")
    grid = MAZES[name]
    free = np.array([[v != 1 for v in row] for row in grid])
    start = next((r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v == R)
    goal = next((r, c) for r, row in enumerate(grid) for c, v in enumerate(row) if v == G)
    return Maze(name, free, start, goal, float(cell))


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Config:
    """One CRL training run (defaults = the measured CPU configuration of the paper notes, scaled so that the
    success radius is the paper's 0.5: cell 2.5, step 0.75)."""
    maze: str = "u_maze"
    depth: int = 4                 # Dense layers inside residual blocks (multiple of 4), actor = critic
    width: int = 64
    repr_dim: int = 64
    batch_size: int = 256
    iterations: int = 20           # each: one episode in every env, then `sgd_steps` updates
    sgd_steps: int = 200
    n_envs: int = 512
    episode_len: int = 200
    n_eval: int = 128
    seeds: int = 3                 # trained together as instances of one batched model
    seed: int = 0
    gamma: float = 0.99
    lr: float = 3e-4
    logsumexp_coef: float = 0.1
    ablation: str = "none"         # none | no_residual | no_layernorm | relu
    obs_lift: int = 0              # 0: raw 2-D observation; else lift (x, y) through a fixed random map to this dim
    cell: float = 2.5
    step_size: float = 0.75
    success_radius: float = 0.5
    start_jitter: float = 0.25     # start and eval goal uniform within ±jitter cells of the cell centre
    wall_mode: str = "axis"        # axis: walls stop each axis separately (slide); full: reject the whole move
    actor_random_goals: float = 0.5  # departure (contrastive_rl): share of actor goals taken from another row
    alpha_init: float = 0.1          # departure: paper's code starts at 1.0
    alpha_lr: float = 3e-3           # departure: paper's code uses 3e-4
    buffer_episodes: int = 20        # replay buffer capacity, in episodes per environment (20 = the whole run)


def paper_exact(cfg: Config) -> Config:
    """The same run with the three departures switched back to the paper's code."""
    return replace(cfg, actor_random_goals=0.0, alpha_init=1.0, alpha_lr=cfg.lr, wall_mode="full")


LIMITS = {"depth": (4, 64), "width": (16, 256), "repr_dim": (4, 128), "batch_size": (16, 1024),
          "iterations": (1, 60), "sgd_steps": (1, 800), "n_envs": (8, 1024), "episode_len": (20, 400),
          "n_eval": (8, 512), "seeds": (1, 8), "obs_lift": (0, 512)}


CONFIG_BOUNDS = Fields(
    maze=OneOf(*MAZES), ablation=OneOf(*ABLATIONS), wall_mode=OneOf("axis", "full"),
    **{name: Range(lo, hi, integer=True) for name, (lo, hi) in LIMITS.items()},
    gamma=Range(0.5, 0.999), actor_random_goals=Range(0.0, 1.0), seed=Range(0, 2**31 - 1, integer=True),
    lr=Range(1e-5, 1e-2), alpha_init=Range(1e-4, 10.0), alpha_lr=Range(1e-5, 1e-1), buffer_episodes=Range(1, 60, integer=True))


def validate(cfg: Config) -> Config:
    """Raise InputError with a plain message if a setting is out of range (nothing is clamped)."""
    CONFIG_BOUNDS.check("cfg", cfg)
    if cfg.depth % 4:
        raise InputError(f"depth counts Dense layers in residual blocks of 4, so it must be a multiple of 4 "
                         f"(got {cfg.depth})")
    return cfg


def cost_units(cfg: Config) -> float:
    """A rough CPU cost of a run in 'seconds on one idle core' (calibrated on this machine's 2-core CPU)."""
    layers = cfg.depth + 2
    wide = max(1.0, (cfg.width / 64) ** 2)
    per_sgd = 1.2e-3 * layers * (cfg.batch_size / 256) * wide * cfg.seeds ** 0.93   # 7.2 ms at depth 4
    per_env = 7.4e-7 * layers * (cfg.n_envs + cfg.n_eval) * cfg.episode_len * wide * cfg.seeds ** 0.93
    return cfg.iterations * (cfg.sgd_steps * per_sgd + per_env)


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


# --------------------------------------------------------------------------- networks (instance-batched)


class BLinear(nn.Module):
    """A Dense layer for I independent instances: x (I, B, fan_in) → (I, B, fan_out).

    Init as the paper's variance_scaling(1/3, fan_in, uniform) = U(±1/√fan_in), zero bias. Instance k draws its
    weights from its own generator, so a seed's network does not depend on how many seeds train beside it.
    """

    def __init__(self, fan_in: int, fan_out: int, gens: list[torch.Generator]):
        super().__init__()
        bound = 1 / math.sqrt(fan_in)
        w = torch.stack([(torch.rand(fan_in, fan_out, generator=g) * 2 - 1) * bound for g in gens])
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(len(gens), 1, fan_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class BLayerNorm(nn.Module):
    def __init__(self, width: int, instances: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(instances, 1, width))
        self.bias = nn.Parameter(torch.zeros(instances, 1, width))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:]) * self.weight + self.bias


class ResMLP(nn.Module):
    """Dense → LN → act, then depth/4 blocks h + [Dense → LN → act]×4 (h), then a final Dense.

    ``depth`` counts only the Dense layers inside blocks (the paper's convention: depth 4 = one block, six Dense
    layers in all). Ablations: residual=False drops the skips, layernorm=False the LayerNorms, act='relu'.
    """

    def __init__(self, fan_in: int, fan_out: int, depth: int, width: int, gens: list[torch.Generator],
                 residual: bool = True, layernorm: bool = True, act: str = "swish"):
        super().__init__()
        if depth % 4 or depth < 4:
            raise InputError("depth must be a positive multiple of 4")
        n = len(gens)
        self.residual = residual
        self.act = F.silu if act == "swish" else F.relu
        norm = (lambda: BLayerNorm(width, n)) if layernorm else (lambda: nn.Identity())
        self.inp, self.inp_norm = BLinear(fan_in, width, gens), norm()
        self.blocks = nn.ModuleList(
            nn.ModuleList(nn.ModuleList([BLinear(width, width, gens), norm()]) for _ in range(4))
            for _ in range(depth // 4))
        self.out = BLinear(width, fan_out, gens)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.inp_norm(self.inp(x)))
        for block in self.blocks:
            z = h
            for dense, norm in block:
                z = self.act(norm(dense(z)))
            h = h + z if self.residual else z     # skip added after the 4th activation, no LN after the add
        return self.out(h)

    def n_dense(self) -> tuple[int, int]:
        """(Dense layers inside blocks, Dense layers in all)."""
        inside = sum(len(b) for b in self.blocks)
        return inside, inside + 2


def tanh_gaussian_sample(mean: torch.Tensor, log_std: torch.Tensor, gen: torch.Generator | None):
    """a = tanh(u), u ~ N(mean, σ²); returns (a, log π(a)) with the change-of-variables correction
    log π(a) = Σ_k [log N(u_k) − log(1 − tanh²(u_k))], the log-det in the stable form 2(log 2 − u − softplus(−2u))."""
    std = log_std.exp()
    eps = torch.randn(mean.shape, generator=gen, device=mean.device)
    u = mean + std * eps
    log_n = -0.5 * eps ** 2 - log_std - 0.5 * math.log(2 * math.pi)
    log_det = 2 * (math.log(2) - u - F.softplus(-2 * u))
    return torch.tanh(u), (log_n - log_det).sum(-1)


class Agent(nn.Module):
    """Actor π(a | s, g) and the two critic encoders φ(s, a), ψ(g), all with the same depth and width."""

    def __init__(self, obs_dim: int, act_dim: int, cfg: Config, instances: int, seed: int):
        super().__init__()
        gens = [torch.Generator().manual_seed(seed + k) for k in range(instances)]
        kw = dict(depth=cfg.depth, width=cfg.width, gens=gens, residual=cfg.ablation != "no_residual",
                  layernorm=cfg.ablation != "no_layernorm", act="relu" if cfg.ablation == "relu" else "swish")
        self.actor = ResMLP(2 * obs_dim, 2 * act_dim, **kw)       # mean and log-std heads (one Dense, 2|A| outputs)
        self.phi = ResMLP(obs_dim + act_dim, cfg.repr_dim, **kw)
        self.psi = ResMLP(obs_dim, cfg.repr_dim, **kw)
        self.log_alpha = nn.Parameter(torch.full((instances,), math.log(cfg.alpha_init)))
        self.act_dim = act_dim

    def policy(self, obs, goal):
        mean, raw = self.actor(torch.cat([obs, goal], -1)).chunk(2, -1)
        log_std = -5 + 3.5 * (torch.tanh(raw) + 1)            # ∈ [−5, 2]
        return mean, log_std

    def energy_matrix(self, obs, act, goal):
        """L[i, j] = f(s_i, a_i, g_j) = −‖φ(s_i, a_i) − ψ(g_j)‖₂, shape (I, B, B)."""
        sa = self.phi(torch.cat([obs, act], -1))
        g = self.psi(goal)
        return -pairwise_l2(sa, g)

    def energy(self, obs, act, goal, goal_grad: bool = True):
        """f(s_i, a_i, g_i) for matched rows, shape (I, B). goal_grad=False skips ψ's backward (actor loss)."""
        with torch.set_grad_enabled(goal_grad and torch.is_grad_enabled()):
            g = self.psi(goal)
        return -torch.linalg.vector_norm(self.phi(torch.cat([obs, act], -1)) - g, dim=-1)


def pairwise_l2(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """‖x_i − y_j‖₂ for (I, B, D) × (I, B', D) → (I, B, B'), via ‖x‖² + ‖y‖² − 2x·y (a B×B×D difference tensor
    and its backward pass would cost 10× more); clamped at 1e-12 before the square root."""
    d2 = (x * x).sum(-1)[..., :, None] + (y * y).sum(-1)[..., None, :] - 2 * torch.bmm(x, y.transpose(1, 2))
    return d2.clamp_min(1e-12).sqrt()


def infonce_loss(logits: torch.Tensor, logsumexp_coef: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Forward InfoNCE with the logsumexp penalty, per instance. logits: (I, B, B) → (loss (I,), accuracy (I,))."""
    lse = torch.logsumexp(logits, dim=-1)                                  # (I, B)
    diag = torch.diagonal(logits, dim1=-2, dim2=-1)
    loss = -(diag - lse).mean(-1) + logsumexp_coef * (lse ** 2).mean(-1)
    target = torch.arange(logits.shape[-1], device=logits.device)
    acc = (logits.argmax(-1) == target).float().mean(-1)
    return loss, acc


class Lift:
    """A fixed random map (x, y) ↦ 2·tanh(tanh(x W₁ + b₁) W₂) to a high-dimensional observation."""

    def __init__(self, dim: int, device):
        g = torch.Generator().manual_seed(12345)
        self.w1 = (torch.randn(2, 128, generator=g) * 2).to(device)
        self.b1 = torch.randn(128, generator=g).to(device)
        self.w2 = (torch.randn(128, dim, generator=g) / math.sqrt(128)).to(device)

    def __call__(self, x):
        return 2 * torch.tanh(torch.tanh(x @ self.w1 + self.b1) @ self.w2)


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
        rows.append(ids[fi[ok], fj[ok]]); cols.append(ids[ni[ok], nj[ok]])
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


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr
    ok = np.isfinite(a) & np.isfinite(b)
    return float(spearmanr(a[ok], b[ok]).statistic)


# --------------------------------------------------------------------------- training


def _train_budget(cfg: Config, **_) -> None:
    if cost_units(cfg) > BUDGET:
        raise InputError(f"this run would take about {cost_units(cfg):.0f} s on an idle 2-core CPU (limit "
                         f"{BUDGET:.0f} s): lower the depth, width, batch, iterations or seeds")


@bounded(cfg=CONFIG_BOUNDS, _budget=_train_budget)
def train(cfg: Config = Config(), device=None, progress: Progress = None) -> dict:
    """Train ``cfg.seeds`` CRL agents (instances of one batched model) online and evaluate them on the far goal.

    Returns a bundle: ``curves`` (one row per iteration and seed), ``final`` (one row per seed: success,
    time at goal and critic accuracy averaged over the last 5 evaluations), ``trajectories`` (seed, path, T+1, 2)
    of the final deterministic policy, ``qmap`` (seed, H·res, W·res) of f(s, π(s, g), g) for the far goal,
    and Spearman correlations of −f with Euclidean and corridor distance.
    """
    cfg = validate(cfg)
    prog = as_progress(progress)
    dev = get_device(device)
    maze = make_maze(cfg.maze, cfg.cell)
    env = PointMaze(maze, cfg.step_size, cfg.wall_mode, dev)
    I, N, T, B = cfg.seeds, cfg.n_envs, cfg.episode_len, cfg.batch_size
    gen = torch.Generator(device=dev).manual_seed(cfg.seed)
    lift = Lift(cfg.obs_lift, dev) if cfg.obs_lift else None
    obs_dim = cfg.obs_lift or 2

    def obs_of(pos):
        o = env.observe(pos)
        return lift(o) if lift is not None else o

    agent = Agent(obs_dim, 2, cfg, I, cfg.seed * 1009).to(dev)
    actor_params = list(agent.actor.parameters())
    critic_params = list(agent.phi.parameters()) + list(agent.psi.parameters())
    opt_actor = torch.optim.Adam(actor_params, lr=cfg.lr)
    opt_critic = torch.optim.Adam(critic_params, lr=cfg.lr)
    opt_alpha = torch.optim.Adam([agent.log_alpha], lr=cfg.alpha_lr)
    target_entropy = -0.5 * agent.act_dim

    cap = cfg.buffer_episodes
    buf_pos = torch.zeros(I, cap * N, T, 2, device=dev)   # normalised 2-D positions (obs before the lift)
    buf_act = torch.zeros(I, cap * N, T, 2, device=dev)
    filled = 0

    start_cells = torch.tensor(maze.start, device=dev)
    goal_cell = torch.tensor(maze.goal, device=dev)
    goal_xy = goal_cell.float() * maze.cell
    eval_gen = torch.Generator(device=dev).manual_seed(cfg.seed + 7919)
    ev_start = env.sample_in_cells(start_cells.expand(I, cfg.n_eval, 2), cfg.start_jitter, eval_gen)
    ev_goal = env.sample_in_cells(goal_cell.expand(I, cfg.n_eval, 2), cfg.start_jitter, eval_gen)

    @torch.no_grad()
    def rollout(start, goal, deterministic):
        pos, g_obs = start, obs_of(goal)
        path, acts = [pos], []
        for _ in range(T):
            mean, log_std = agent.policy(obs_of(pos), g_obs)
            a = torch.tanh(mean) if deterministic else tanh_gaussian_sample(mean, log_std, gen)[0]
            acts.append(a)
            pos = env.step(pos, a)
            path.append(pos)
        return torch.stack(path, -2), torch.stack(acts, -2)   # (I, n, T+1, 2), (I, n, T, 2)

    rows = []
    t0, env_steps, sgd_steps = time.perf_counter(), 0, 0
    idx_I = torch.arange(I, device=dev)[:, None]
    for it in range(cfg.iterations):
        # ---- collect one episode in every environment (commanded goals uniform over the free cells)
        start = env.sample_in_cells(start_cells.expand(I, N, 2), cfg.start_jitter, gen)
        cmd = env.sample_in_cells(env.random_free_cells((I, N), gen), 0.5, gen)
        path, acts = rollout(start, cmd, deterministic=False)
        slot = (it % cap) * N
        buf_pos[:, slot:slot + N] = env.observe(path[:, :, :T])
        buf_act[:, slot:slot + N] = acts
        filled = min(cap * N, filled + N)
        env_steps += N * T

        # ---- SGD: actor + α first, then the critic, on the same relabeled batch
        stats = np.zeros((4, I))
        for _ in range(cfg.sgd_steps):
            ep, t, d = relabel_indices(I, filled, T, B, cfg.gamma, gen, dev)
            s, a, g = buf_pos[idx_I, ep, t], buf_act[idx_I, ep, t], buf_pos[idx_I, ep, t + d]
            if lift is not None:
                s, g = lift(s), lift(g)
            # actor: E[α log π − f(s, a, g)], goal = the relabeled future state (half swapped with another row's)
            n_swap = int(round(cfg.actor_random_goals * B))
            g_act = torch.cat([g.roll(1, dims=1)[:, :n_swap], g[:, n_swap:]], 1) if n_swap else g
            mean, log_std = agent.policy(s, g_act)
            a_pi, log_pi = tanh_gaussian_sample(mean, log_std, gen)
            alpha = agent.log_alpha.exp()
            actor_loss = (alpha.detach()[:, None] * log_pi - agent.energy(s, a_pi, g_act, goal_grad=False)).mean(-1)
            grads = torch.autograd.grad(actor_loss.sum(), actor_params)
            for p, gr in zip(actor_params, grads):
                p.grad = gr
            opt_actor.step()
            alpha_loss = (alpha * (-log_pi.detach() - target_entropy).mean(-1)).sum()
            agent.log_alpha.grad = torch.autograd.grad(alpha_loss, agent.log_alpha)[0]
            opt_alpha.step()
            # critic: forward InfoNCE + 0.1·logsumexp², other rows' goals are the negatives
            c_loss, acc = infonce_loss(agent.energy_matrix(s, a, g), cfg.logsumexp_coef)
            grads = torch.autograd.grad(c_loss.sum(), critic_params)
            for p, gr in zip(critic_params, grads):
                p.grad = gr
            opt_critic.step()
            stats += torch.stack([c_loss.detach(), acc, actor_loss.detach(), -log_pi.detach().mean(-1)]).cpu().numpy()
            sgd_steps += 1
        stats /= cfg.sgd_steps

        # ---- evaluate: deterministic tanh(mean), far goal
        ev_path, _ = rollout(ev_start, ev_goal, deterministic=True)
        succ, tag = success_metrics(ev_path[..., 1:, :].cpu(), ev_goal.cpu(), cfg.success_radius)
        for k in range(I):
            rows.append({"iteration": it + 1, "seed": cfg.seed + k, "env_steps": env_steps, "sgd_steps": sgd_steps,
                         "critic_loss": stats[0, k], "critic_accuracy": stats[1, k], "actor_loss": stats[2, k],
                         "entropy": stats[3, k], "alpha": float(agent.log_alpha[k].detach().exp()),
                         "success": float(succ[k].mean()), "time_at_goal": float(tag[k].mean())})
        prog((it + 1) / cfg.iterations,
             f"depth {cfg.depth}: iteration {it + 1}/{cfg.iterations}, success {succ.mean():.2f}")

    curves = pd.DataFrame(rows)
    last = curves[curves.iteration > cfg.iterations - 5].groupby("seed", as_index=False)[
        ["success", "time_at_goal", "critic_accuracy", "critic_loss"]].mean()
    # held-out critic accuracy: relabeled triples from fresh episodes that never entered the buffer
    with torch.no_grad():
        start = env.sample_in_cells(start_cells.expand(I, N, 2), cfg.start_jitter, gen)
        cmd = env.sample_in_cells(env.random_free_cells((I, N), gen), 0.5, gen)
        path, acts = rollout(start, cmd, deterministic=False)
        new_pos = env.observe(path[:, :, :T])
        ep, t, d = relabel_indices(I, N, T, B, cfg.gamma, gen, dev)
        s, a, g = new_pos[idx_I, ep, t], acts[idx_I, ep, t], new_pos[idx_I, ep, t + d]
        if lift is not None:
            s, g = lift(s), lift(g)
        _, acc_new = infonce_loss(agent.energy_matrix(s, a, g))
        # value map for the far goal: f(s, π(s, g), g) on a fine grid of free points
        dm = distance_maps(maze)
        pts = torch.as_tensor(dm["grid_pos"][dm["grid_free"]], dtype=torch.float32, device=dev)
        o = obs_of(pts).expand(I, -1, -1)
        go = obs_of(goal_xy.expand(1, 1, 2)).expand(I, len(pts), -1)
        q = agent.energy(o, torch.tanh(agent.policy(o, go)[0]), go).cpu().numpy()     # (I, n_points)
    qmap = np.full((I,) + dm["grid_free"].shape, np.nan, dtype=np.float32)
    qmap[:, dm["grid_free"]] = q
    last["critic_accuracy_fresh"] = acc_new.cpu().numpy()
    last["spearman_euclid"] = [_spearman(-q[k], dm["euclid"][dm["grid_free"]]) for k in range(I)]
    last["spearman_corridor"] = [_spearman(-q[k], dm["geodesic"][dm["grid_free"]]) for k in range(I)]
    last.insert(0, "depth", cfg.depth)
    n_show = min(4, cfg.n_eval)
    return {"config": asdict(cfg), "device": str(dev), "wall_s": time.perf_counter() - t0,
            "env_steps": env_steps, "sgd_steps": sgd_steps, "chance_accuracy": 1.0 / B,
            "curves": curves, "final": last,
            "trajectories": ev_path[:, :n_show].cpu().numpy().astype(np.float32),
            "traj_goals": ev_goal[:, :n_show].cpu().numpy().astype(np.float32),
            "qmap": qmap}


@bounded(cfg=CONFIG_BOUNDS, depths=Each(OneOf(*DEPTHS), max_len=6))
def depth_sweep(cfg: Config = Config(), depths: list[int] = (4, 8, 16, 32), device=None,
                progress: Progress = None) -> dict:
    """Train at every depth (seeds batched inside each run). Returns per-depth bundles and a summary table."""
    p = as_progress(progress)
    depths = [int(d) for d in depths]
    runs, summary = {}, []
    weights = np.array([d + 2 for d in depths], float)
    done = np.concatenate([[0], np.cumsum(weights)]) / weights.sum()
    for i, d in enumerate(depths):
        res = train(replace(cfg, depth=d), device=device, progress=p.sub(done[i], done[i + 1]))
        runs[str(d)] = res
        summary.append(res["final"])
    return {"depths": depths, "runs": runs, "summary": pd.concat(summary, ignore_index=True)}


def summarise(summary: pd.DataFrame, by: str = "depth") -> pd.DataFrame:
    """Mean and standard error over seeds of each metric, per value of ``by``."""
    cols = ["success", "time_at_goal", "critic_accuracy", "critic_accuracy_fresh", "spearman_euclid",
            "spearman_corridor"]
    g = summary.groupby(by)[cols]
    mean, sem, n = g.mean(), g.sem(ddof=1).fillna(0.0), g.size()
    out = mean.add_suffix("_mean").join(sem.add_suffix("_sem"))
    out["n_seeds"] = n
    return out.reset_index()


SWEEP_VALUES = {"depth": list(DEPTHS), "width": [32, 64, 128, 256], "batch_size": [64, 128, 256, 512],
                "ablation": list(ABLATIONS)}


def _sweep_budget(cfg: Config, param: str, values: list, **_) -> None:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not 1 <= len(values) <= 6:
        raise InputError("give between 1 and 6 values to sweep")
    allowed = SWEEP_VALUES[param]
    bad = [v for v in values if v not in allowed]
    if bad:
        raise InputError(f"{param} values must be among {', '.join(map(str, allowed))}; got {bad}")
    total = sum(cost_units(replace(cfg, **{param: v})) for v in values)
    if total > BUDGET:
        raise InputError(f"this sweep would take about {total:.0f} s on an idle 2-core CPU (limit {BUDGET:.0f} s): "
                         "fewer values, fewer iterations or seeds, or a smaller base depth")


@bounded(cfg=CONFIG_BOUNDS, param=OneOf(*SWEEP_VALUES), _budget=_sweep_budget)
def sweep(cfg: Config, param: str, values: list, device=None, progress: Progress = None) -> dict:
    """Train once per value of ``param`` (depth, width, batch_size or ablation)."""
    p = as_progress(progress)
    tables, runs = [], {}
    for i, v in enumerate(values):
        res = train(replace(cfg, **{param: v}), device=device, progress=p.part(i, len(values), f"{param}={v}: "))
        fin = res["final"].copy()
        fin[param] = v
        tables.append(fin)
        runs[str(v)] = {"curves": res["curves"]}
    return {"param": param, "values": list(values), "summary": pd.concat(tables, ignore_index=True), "runs": runs}


# --------------------------------------------------------------------------- views, verdict, CLI

BUDGET = 400.0          # cost units (≈ seconds on an idle 2-core CPU) one run or sweep may take
DEFAULT = Config()
DEFAULT_DEPTHS = [4, 8, 16]
ABLATION_DEPTH = 8
LIFT_DIM = 128

# The offline critic experiment lives in toymodels.crl_critic (it imports this module). It is loaded by name,
# not by an import statement, so that the source hash of the online-agent views (an hour of CPU) covers only
# the code they run: an edit of the critic experiment does not make them stale.
_critic = importlib.import_module("toymodels.crl_critic")


def _stored(name: str):
    """A view's result if it is stored (shipped or cached), never computed here: checking the headline's
    freshness must not start the hour-long critic experiment."""
    from toymodels import store

    v = VIEWS[name]
    hit, value = store.lookup(v.fn, **v.arguments())
    if not hit:
        raise InputError(f"the view {name!r} is not computed yet: run `python -m toymodels precompute {TOPIC} "
                         f"--view {name}`")
    return value


def _headline_arguments() -> dict:
    critic = _stored("critic")
    return dict(finals={str(d): _stored(f"train_d{d}")["final"] for d in DEFAULT_DEPTHS},
                critic={k: critic[k] for k in ("depths", "summary", "wide", "euclid_geodesic_spearman",
                                                "euclid_retrieval", "random_retrieval", "config")})


def headline(finals: dict, critic: dict) -> dict:
    """The verdict's inputs in one bundle: the online agents' per-seed results per depth and the offline
    critic's summary (cheap: it only gathers the other views)."""
    per_seed = pd.concat([finals[k] for k in sorted(finals, key=int)], ignore_index=True)
    return {"per_seed": per_seed, "summary": summarise(per_seed), "chance_accuracy": 1.0 / DEFAULT.batch_size,
            "critic": critic}


VIEWS = views(
    View("maze_u", maze_view, dict(maze="u_maze"), label="Maze…", seconds=1),
    *(View(f"train_d{d}", train, dict(cfg=replace(DEFAULT, depth=d)), label=f"Training depth {d}…",
           seconds=cost_units(replace(DEFAULT, depth=d))) for d in DEFAULT_DEPTHS),
    *(View(f"ablation_{ab}", train, dict(cfg=replace(DEFAULT, depth=ABLATION_DEPTH, ablation=ab)),
           label=f"Ablation {ab}…", seconds=cost_units(replace(DEFAULT, depth=ABLATION_DEPTH)))
      for ab in ABLATIONS[1:]),
    View("critic", _critic.critic_experiment, dict(cfg=_critic.MAIN, depths=_critic.MAIN_DEPTHS, wide=True),
         label="Offline critic, depths 4–64…", seconds=900),
    View("critic_search", _critic.critic_search, dict(depths=[4, 16], seeds=2, steps=600, batch_size=128),
         label="Searching for a regime where depth matters…", seconds=500),
    View("summary", headline, _headline_arguments, label="Gathering the verdict…", seconds=1),
)
HEADLINE = "summary"


def depth_gain(mean_shallow: float, sem_shallow: float, mean_deep: float, sem_deep: float,
               floor: float = 0.0) -> tuple[float, float, bool]:
    """(gain, its standard error, beyond seed noise): a gain counts when it exceeds twice the combined
    standard error of the two means and ``floor``."""
    gain, se = mean_deep - mean_shallow, math.hypot(sem_shallow, sem_deep)
    return gain, se, bool(gain > max(2 * se, floor))


def _csv(values, fmt="{:.3f}") -> str:
    return ",".join(fmt.format(v) for v in values)


def verdict(result: dict) -> Verdict:
    """Does depth unlock goal reaching here? Online: success at the deepest vs depth 4 (a gain must exceed twice
    the combined seed error and 0.05). Offline: the critic's Spearman ρ with corridor distance at the deepest vs
    depth 4 (twice the seed error and 0.01), and against a wide depth-4 critic with as many parameters."""
    s = result["summary"]
    s4, sD = s.iloc[0], s.iloc[-1]
    gain, se, online = depth_gain(s4.success_mean, s4.success_sem, sD.success_mean, sD.success_sem, 0.05)
    c = result["critic"]
    cs = c["summary"]
    c4, cD = cs.iloc[0], cs.iloc[-1]
    cgain, cse, offline = depth_gain(c4.spearman_geodesic_mean, c4.spearman_geodesic_sem,
                                     cD.spearman_geodesic_mean, cD.spearman_geodesic_sem, 0.01)
    wide = c["wide"]
    wgain, wse, beats_wide = depth_gain(wide["spearman"], wide["spearman_sem"], cD.spearman_geodesic_mean,
                                        cD.spearman_geodesic_sem, 0.01)
    dD, cdD = int(sD.depth), int(cD.depth)
    if online:
        reproduced = True
        summary = (f"Depth {dD} reaches the far goal more often than depth 4 ({sD.success_mean:.2f} vs "
                   f"{s4.success_mean:.2f}, beyond twice the seed error), in a 2-D toy far from the paper's scale.")
    else:
        reproduced = None if (offline and beats_wide) else False
        summary = (f"No depth gain beyond seed noise: online success {s4.success_mean:.2f} (depth 4) vs "
                   f"{sD.success_mean:.2f} (depth {dD}); the offline critic's ρ with corridor distance "
                   f"{c4.spearman_geodesic_mean:.3f} (depth 4) vs {cD.spearman_geodesic_mean:.3f} (depth {cdD}), "
                   + ("a gain beyond seed noise that a wide depth-4 critic does not match."
                      if offline and beats_wide else
                      f"{'a gain a wide depth-4 critic matches' if offline else 'within seed noise'} "
                      f"(wide, same parameters: {wide['spearman']:.3f})."))
    metrics = {
        "depths": _csv(s.depth, "{:d}"), "success": _csv(s.success_mean, "{:.2f}"),
        "success_sem": _csv(s.success_sem, "{:.2f}"), "time_at_goal": _csv(s.time_at_goal_mean, "{:.0f}"),
        "critic_accuracy": _csv(s.critic_accuracy_mean), "chance_accuracy": result["chance_accuracy"],
        "online_depth_gain": gain, "online_depth_gain_sem": se, "online_deeper_is_better": online,
        "critic_depths": _csv(cs.depth, "{:d}"), "critic_spearman_geodesic": _csv(cs.spearman_geodesic_mean),
        "critic_spearman_sem": _csv(cs.spearman_geodesic_sem), "critic_retrieval_acc": _csv(cs.retrieval_mean),
        "critic_maze": c["config"]["maze"], "euclid_geodesic_spearman": c["euclid_geodesic_spearman"],
        "euclid_retrieval": c["euclid_retrieval"], "random_retrieval": c["random_retrieval"],
        "wide_control_params": wide["params"], "wide_control_width": wide["width"],
        "wide_control_spearman": wide["spearman"], "critic_depth_gain": cgain, "critic_depth_gain_sem": cse,
        "critic_deeper_is_better": offline, "critic_deep_beats_wide": beats_wide,
        "paper_u4_time_at_goal_d4": 11.4, "paper_u4_time_at_goal_d64": 286.0,
    }
    return Verdict(reproduced, summary,
                   ours=f"success {s4.success_mean:.2f} → {sD.success_mean:.2f}",
                   paper="time at goal 11 → 286", metrics=metrics)


def quick_config() -> Config:
    return replace(DEFAULT, seeds=2, iterations=10)


QUICK_DEPTHS = [4, 8]


def reproduce(quick: bool = False, seed: int = 0, device=None, out: Path | None = None,
              progress: Progress = None) -> dict:
    """Depth sweep on the U-maze (success and time at goal on the far goal, critic accuracy vs chance) and the
    offline critic on the rings maze (Spearman ρ with corridor distance, retrieval, a wide control).

    quick: online depths 4 and 8, 2 seeds, 10 iterations; offline critic depths 4 and 16, 2 seeds, 600 steps
    (about 3 minutes on one core). Full: the shipped views' settings (about an hour of CPU).
    """
    p = as_progress(progress)
    if quick:
        cfg, depths = replace(quick_config(), seed=seed), QUICK_DEPTHS
        ccfg, cdepths = replace(_critic.QUICK, seed=seed), _critic.QUICK_DEPTHS
    else:
        cfg, depths = replace(DEFAULT, seed=seed), DEFAULT_DEPTHS
        ccfg, cdepths = replace(_critic.MAIN, seed=seed), _critic.MAIN_DEPTHS
    res = depth_sweep(cfg, depths=depths, device=device, progress=p.sub(0, 0.6, "online: "))
    critic = _critic.critic_experiment(ccfg, depths=cdepths, wide=True, device=device,
                                       progress=p.sub(0.6, 1, "offline critic: "))
    head = headline({k: r["final"] for k, r in res["runs"].items()},
                    {k: critic[k] for k in ("depths", "summary", "wide", "euclid_geodesic_spearman",
                                            "euclid_retrieval", "random_retrieval", "config")})
    v = verdict(head)
    summ, cs = head["summary"], critic["summary"]
    curves = pd.concat([r["curves"].assign(depth=int(d)) for d, r in res["runs"].items()], ignore_index=True)
    if out is not None:
        write_tables(out, {"crl_per_seed": res["summary"], "crl_by_depth": summ, "crl_curves": curves,
                           "critic_per_seed": critic["per_seed"], "critic_by_depth": cs,
                           "critic_curves": critic["curves"]})
    return {
        "maze": cfg.maze, "depths": depths, "seeds": cfg.seeds,
        "success": summ["success_mean"].tolist(), "success_sem": summ["success_sem"].tolist(),
        "time_at_goal": summ["time_at_goal_mean"].tolist(), "episode_len": cfg.episode_len,
        "critic_accuracy": summ["critic_accuracy_mean"].tolist(),
        "batch_size": cfg.batch_size, "chance_accuracy": 1.0 / cfg.batch_size,
        "critic_learns": bool(min(summ["critic_accuracy_mean"]) > 10 / cfg.batch_size),
        "best_seed_success": float(res["summary"]["success"].max()),
        "reaches_far_goal": bool(res["summary"]["success"].max() >= 0.5),
        "deeper_is_better": v.metrics["online_deeper_is_better"],
        "critic_maze": ccfg.maze, "critic_seeds": ccfg.seeds, "critic_steps": ccfg.steps,
        "critic_depths": cdepths, "critic_spearman_geodesic": cs["spearman_geodesic_mean"].tolist(),
        "critic_spearman_sem": cs["spearman_geodesic_sem"].tolist(),
        "critic_retrieval_acc": cs["retrieval_mean"].tolist(),
        "euclid_geodesic_spearman": critic["euclid_geodesic_spearman"],
        "euclid_retrieval": critic["euclid_retrieval"], "random_retrieval": critic["random_retrieval"],
        "wide_control": {"params": critic["wide"]["params"], "width": critic["wide"]["width"],
                         "spearman": critic["wide"]["spearman"]},
        "critic_deeper_is_better": v.metrics["critic_deeper_is_better"],
        "reproduced": v.reproduced, "verdict": v.summary,
        "paper_u4_time_at_goal_d4_d64": [11.4, 286.0],
    }


def benchmark(depths: tuple = (4, 64), sgd_steps: int = 20, device=None) -> pd.DataFrame:
    """Environment steps per second (pure env, and with the actor in the loop) and SGD steps per second."""
    dev = get_device(device)
    maze = make_maze("u_maze")
    env = PointMaze(maze, 0.75, "axis", dev)
    gen = torch.Generator(device=dev).manual_seed(0)
    pos = env.sample_in_cells(env.random_free_cells((1, 4096), gen), 0.4, gen)
    t0 = time.perf_counter()
    for _ in range(200):
        pos = env.step(pos, torch.rand(pos.shape, generator=gen, device=dev) * 2 - 1)
    pure = 4096 * 200 / (time.perf_counter() - t0)
    rows = []
    for d in depths:
        base = Config(depth=d, seeds=1, iterations=1, n_eval=8)
        t0 = time.perf_counter()
        train(replace(base, sgd_steps=1), device=dev)
        t_one = time.perf_counter() - t0
        tiny = replace(base, n_envs=8, episode_len=20)      # rollouts negligible: the time is SGD
        t0 = time.perf_counter()
        train(replace(tiny, sgd_steps=1), device=dev)
        t_base = time.perf_counter() - t0
        t0 = time.perf_counter()
        train(replace(tiny, sgd_steps=1 + sgd_steps), device=dev)
        t_sgd = max(time.perf_counter() - t0 - t_base, 1e-9) / sgd_steps
        env_steps = 2 * base.n_envs * base.episode_len + base.n_eval * base.episode_len   # collect, held-out, eval
        rows.append({"depth": d, "env_steps_per_s_pure": pure, "env_steps_per_s_with_actor": env_steps / t_one,
                     "sgd_steps_per_s": 1 / t_sgd, "ms_per_sgd_step": 1e3 * t_sgd, "device": str(dev)})
    return pd.DataFrame(rows)
