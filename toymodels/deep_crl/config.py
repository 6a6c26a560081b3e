"""What a deep-CRL run can be set to: the mazes, the online agent's and the offline critic's configurations, their
bounds (declared once: the functions check them, the page reads them for its widgets), the settings of the shipped
views and the one cost model, ``expected_seconds``.

Light on purpose (NumPy only): the page imports it without torch.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from toymodels.knobs import Knob, knobs
from toymodels.topic import AnyOf, Each, Fields, InputError, OneOf, Range

from .grid import GRID_LABELS, GRIDS  # noqa: F401 - the critic's mazes, named here for the page

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


# --------------------------------------------------------------------------- the online agent


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
          "n_eval": (8, 512), "seeds": (1, 64), "obs_lift": (0, 512)}


CONFIG_BOUNDS = Fields(
    maze=OneOf(*MAZES), ablation=OneOf(*ABLATIONS), wall_mode=OneOf("axis", "full"),
    **{name: Range(lo, hi, integer=True) for name, (lo, hi) in LIMITS.items()},
    gamma=Range(0.5, 0.999), actor_random_goals=Range(0.0, 1.0), seed=Range(0, 2**31 - 1, integer=True),
    lr=Range(1e-5, 1e-2), alpha_init=Range(1e-4, 10.0), alpha_lr=Range(1e-5, 1e-1),
    buffer_episodes=Range(1, 60, integer=True))


def validate(cfg: Config) -> Config:
    """Raise InputError with a plain message if a setting is out of range (nothing is clamped)."""
    CONFIG_BOUNDS.check("cfg", cfg)
    if cfg.depth % 4:
        raise InputError(f"depth counts Dense layers in residual blocks of 4, so it must be a multiple of 4 "
                         f"(got {cfg.depth})")
    return cfg




# --------------------------------------------------------------------------- the offline critic


@dataclass(frozen=True)
class CriticConfig:
    """One offline critic training (seeds are instances of one batched model)."""
    maze: str = "rings19"
    depth: int = 4
    width: int = 64
    repr_dim: int = 64
    batch_size: int = 256
    steps: int = 2000
    episodes: int = 2000         # random-walk episodes in the dataset (each seed draws its own)
    episode_len: int = 200
    gamma: float = 0.99
    lr: float = 3e-4
    seeds: int = 4
    seed: int = 0
    obs_lift: int = 0            # 0: (row, col); else lifted through nets.Lift to this dimension
    heldout: float = 0.2         # share of (state, goal) cell pairs never used as a training pair
    far_only: bool = False       # score only pairs farther apart (corridor) than twice the horizon 1/(1−γ)
    unseen_cells: int = 0        # cells whose observation never enters training (scored: pairs touching them)
    eval_every: int = 250
    n_queries: int = 2000        # retrieval queries (state + 16 candidate goals)



def n_params(fan_in: int, fan_out: int, depth: int, width: int) -> int:
    """Parameters of one ``nets.ResMLP`` (Dense weights and biases, LayerNorm gains and offsets)."""
    return ((fan_in * width + width) + 2 * width + depth * (width * width + width + 2 * width)
            + width * fan_out + fan_out)


def critic_params(cfg: CriticConfig) -> int:
    obs = cfg.obs_lift or 2
    return n_params(obs + 2, cfg.repr_dim, cfg.depth, cfg.width) + n_params(obs, cfg.repr_dim, cfg.depth, cfg.width)


def matched_width(cfg: CriticConfig, depth: int, params: int) -> int:
    """The width at ``depth`` whose critic has the parameter count closest to ``params``."""
    return min(range(8, 1025), key=lambda w: abs(critic_params(replace(cfg, depth=depth, width=w)) - params))


# --------------------------------------------------------------------------- cost


def expected_seconds(cfg) -> float:
    """Expected CPU seconds of one run on one idle core with one torch thread (calibrated on this project's 2-core
    CPU): ``train(cfg)`` for a ``Config`` (the instances of a batch share the work: seeds^0.93), ``train_critic(cfg)``
    for a ``CriticConfig`` (two encoders × (depth + 2) Dense layers: 6·B·w² FLOPs each per step, and a per-layer
    overhead)."""
    if isinstance(cfg, CriticConfig):
        flops = 6 * 2 * (cfg.depth + 2) * cfg.batch_size * cfg.width ** 2 * cfg.seeds * cfg.steps
        return 2.0 + flops / 2.5e10 + 2.5e-4 * (cfg.depth + 2) * cfg.seeds * cfg.steps
    layers = cfg.depth + 2
    wide = max(1.0, (cfg.width / 64) ** 2)
    per_sgd = 1.2e-3 * layers * (cfg.batch_size / 256) * wide * cfg.seeds ** 0.93   # 7.2 ms at depth 4
    per_env = 7.4e-7 * layers * (cfg.n_envs + cfg.n_eval) * cfg.episode_len * wide * cfg.seeds ** 0.93
    return cfg.iterations * (cfg.sgd_steps * per_sgd + per_env)


#: memory budget of one live run (MB of arrays; glibc's heap adds up to ~2x in resident memory): two runs at once
#: beside the server must fit a 2.7 GB host (issue 25)
MAX_MEMORY_MB = 350.0


def memory_mb(cfg: Config) -> float:
    """The memory model (MB) of ``training.train(cfg)``: the replay buffer (positions and actions,
    2 x (seeds, buffer_episodes·n_envs, episode_len, 2) float32, allocated whole at the start: 16 bytes per
    (seed, slot, t)), the parameters of the actor and the two critic encoders with their gradients and Adam's two
    moments (4 float32 copies), the autograd graph of one SGD step (two ResMLPs of depth + 2 Dense layers alive at
    once, ~5 (seeds, batch, width) float32 tensors saved per layer: Dense output, LayerNorm output, affine output,
    activation and the gradient being built) and the rollouts (the path and action lists of every environment and
    their stacked copies, for the last training rollout and the held-out one alive together: ~56 bytes per
    (seed, env, t)), plus ~100 MB (the evaluation's maps, torch's first use of autograd). Fitted with
    ``bench/bench_memory.py`` (one CPU thread, glibc's mmap threshold fixed at 128 KiB) on the calibration points
    ``crl.train#buf5``, ``#buf20`` (the buffer), ``#wide`` (the parameters), ``#deep`` (the graph's 5 tensors per
    layer) and, for the constant, 4 seeds x 1,024 environments x 400 steps at width 128 and batch 1,024, 256 or
    episodes of 200 steps or a buffer of 1 episode (456, 346, 366, 369 MB measured; the terms alone 347, 257,
    241, 247).
    """
    obs = cfg.obs_lift or 2
    I, N, T = cfg.seeds, cfg.n_envs, cfg.episode_len
    params = sum(n_params(fan_in, fan_out, cfg.depth, cfg.width)
                 for fan_in, fan_out in ((2 * obs, 4), (obs + 2, cfg.repr_dim), (obs, cfg.repr_dim)))
    buffer = 16 * I * cfg.buffer_episodes * N * T
    adam = 4 * I * params * 4
    graph = 2 * 5 * I * cfg.batch_size * cfg.width * (cfg.depth + 2) * 4
    rollout = 56 * I * max(N, cfg.n_eval) * T
    return 100 + (buffer + adam + graph + rollout) / 2 ** 20


def check_memory(cfg: Config, what: str = "this run") -> None:
    """Raise InputError when ``memory_mb(cfg)`` is over ``MAX_MEMORY_MB``, naming the estimate and the limit."""
    mb = memory_mb(cfg)
    if mb > MAX_MEMORY_MB:
        raise InputError(f"{what} would need about {mb:,.0f} MB of memory, over the {MAX_MEMORY_MB:.0f} MB limit of "
                         "one live run: fewer seeds, environments, buffer episodes or a shorter episode, or a smaller "
                         "depth, width or batch")


# --------------------------------------------------------------------------- the shipped views' settings

BUDGET = 400.0          # seconds (on an idle core) one run or sweep a visitor starts may take
DEFAULT = Config()
ABLATION_DEPTH = 8
LIFT_DIM = 128
SWEEP_VALUES = {"depth": list(DEPTHS), "width": [32, 64, 128, 256], "batch_size": [64, 128, 256, 512],
                "ablation": list(ABLATIONS)}

# The powered online test (issue 29): 20 fresh seeds (100-119) per depth, trained 5 at a time as instances of one
# batched model; every other setting is DEFAULT's.
ONLINE_DEPTHS = (4, 8)
ONLINE_SEEDS = 20
ONLINE = replace(DEFAULT, seed=100, seeds=5)

# The offline critic (issue 20) in its stitching regime: rings 19×19, 2000 random-walk episodes of only 50 steps,
# γ = 0.95, scored on far pairs (corridor distance > 2/(1 − γ) = 40 moves: no episode holds both ends, so the critic
# must compose short segments), batch 128, 3000 SGD steps. The pilot (seeds 0-3, depths 4-64) is in the lab
# notebook; the shipped view is the pre-registered test: 8 fresh seeds (100-107), depths 4, 16, 64 and a wide
# depth-4 critic with depth 64's parameters. The paper: batch 512, ~2.5M steps.
CRITIC_MAIN = CriticConfig(maze="rings19", episode_len=50, gamma=0.95, far_only=True, batch_size=128, steps=3000,
                           eval_every=150)
CRITIC_TEST = replace(CRITIC_MAIN, seeds=8, seed=100)
CRITIC_DEPTHS = [4, 16, 64]

# ``reproduce --quick``: online depths 4 and 8, 2 seeds, 10 iterations; offline critic depths 4 and 16, 2 seeds,
# 600 steps (a few minutes on one core).
QUICK = replace(DEFAULT, seeds=2, iterations=10)
QUICK_DEPTHS = [4, 8]
CRITIC_QUICK = replace(CRITIC_MAIN, steps=600, seeds=2, episodes=1000, eval_every=150)
CRITIC_QUICK_DEPTHS = [4, 16]

# The registered runs of issue 41 (written, with their tests in analysis.py and the claims, and committed before
# they ran): fresh seeds, each arm ONE batched model holding all its seeds (a GPU trains a batch of instances in
# about the time of one; on the CPU they cost what separate runs cost). ``LIMITS["seeds"]`` reaches 64 for them; a
# visitor's run is held to ``PAGE_MAX_SEEDS`` by the page and to the budget by ``train``.
ONLINE60 = replace(DEFAULT, seed=200, seeds=60)          # the powered test, depths 4 and 8: seeds 200-259
ONLINE60_DEPTHS = (4, 8)
QMAP16 = replace(DEFAULT, depth=16, seed=300, seeds=20)   # the value map at depth 16: seeds 300-319
ABLATION20 = replace(DEFAULT, depth=ABLATION_DEPTH, seed=400, seeds=20)   # every arm: seeds 400-419
CRITIC_FRESH = replace(CRITIC_MAIN, seeds=8, seed=108)    # offline, the paper's comparison: seeds 108-115
PAGE_MAX_SEEDS = 8


# --------------------------------------------------------------------------- the knobs (one declaration each)

#: The online agent's fields a visitor sets on the page: label, offered values (or a step), URL id.
_ON_PAGE = dict(maze=("Maze", None, "crl_maze"), depth=("Depth", DEPTHS, "crl_depth"),
                width=("Width", tuple(SWEEP_VALUES["width"]), "crl_width"),
                batch_size=("Batch", tuple(SWEEP_VALUES["batch_size"]), "crl_batch"),
                iterations=("Iterations (×200 SGD steps)", 1, "crl_iters"), seeds=("Seeds (batched)", 1, "crl_seeds"),
                seed=("First seed", 1, "crl_seed"), ablation=("Ablation", None, "crl_ablation"),
                obs_lift=("Observation dim (0 = raw x, y)", (0, LIFT_DIM), "crl_lift"))
#: ``Config``'s fields that ``CONFIG_BOUNDS`` leaves out (the environment's geometry and the loss's regulariser).
_MORE = dict(cell=Range(0.5, 10.0), step_size=Range(0.05, 2.0), success_radius=Range(0.05, 2.0),
             start_jitter=Range(0.0, 0.5), logsumexp_coef=Range(0.0, 1.0))
_CRITIC = dict(maze=OneOf(*GRIDS), depth=OneOf(4, 8, 16, 32, 64), width=Range(8, 512, integer=True),
               repr_dim=Range(2, 128, integer=True), batch_size=Range(16, 1024, integer=True),
               steps=Range(1, 20000, integer=True), episodes=Range(10, 5000, integer=True),
               episode_len=Range(10, 400, integer=True), gamma=Range(0.5, 0.999), lr=Range(1e-5, 1e-2),
               seeds=Range(1, 8, integer=True), seed=Range(0, 2**31 - 1, integer=True),
               obs_lift=Range(0, 256, integer=True), heldout=Range(0.0, 0.5), far_only=OneOf(True, False),
               unseen_cells=Range(0, 40, integer=True), eval_every=Range(1, 20000, integer=True),
               n_queries=Range(10, 20000, integer=True))

#: Every knob, once: the online agent (``Config``; its bounds are ``CONFIG_BOUNDS``, which ``train`` still checks in
#: its body until the shipped views it reaches are recomputed without it), the offline critic (``CriticConfig``,
#: group "critic"), the other arguments of the entry points, and what the page offers (ids ``crl_*``).
KNOBS = knobs(
    *(Knob(name, spec, *_ON_PAGE.get(name, ("", None, None)),
           labels=MAZE_LABELS if name == "maze" else ABLATION_LABELS if name == "ablation" else None,
           widget="selectbox" if name in ("maze", "depth", "width", "batch_size", "ablation", "obs_lift") else
           "number" if name in ("iterations", "seeds", "seed") else None,
           span=(1, PAGE_MAX_SEEDS) if name == "seeds" else (0, 10_000) if name == "seed" else None)
      for name, spec in CONFIG_BOUNDS.specs.items()),
    *(Knob(name, spec) for name, spec in _MORE.items()),
    Knob("exact", OneOf(True, False), "Paper-exact (no departures)", id="crl_exact", group="page", default=False),
    Knob("depths", Each(OneOf(*DEPTHS), max_len=6), group="depth_sweep"),
    Knob("param", OneOf(*SWEEP_VALUES), "Parameter", id="crl_sweep_param", group="sweep", default="depth",
         widget="selectbox"),
    Knob("values", Each(AnyOf(*(OneOf(*v) for v in SWEEP_VALUES.values())), max_len=6), group="sweep"),
    *(Knob("values", Each(OneOf(*v), max_len=6), "Values (other settings: the defaults)", tuple(v),
           id=f"crl_sweep_values_{name}", group=f"sweep_{name}", default=tuple(v[:2]),
           labels=ABLATION_LABELS if name == "ablation" else None) for name, v in SWEEP_VALUES.items()),
    Knob("n_seeds", Range(1, 40, integer=True), group="online_seeds"),
    *(Knob(name, spec, group="critic") for name, spec in _CRITIC.items()),
    Knob("depths", Each(OneOf(4, 8, 16, 32, 64), max_len=5), group="critic_experiment"),
    Knob("wide", OneOf(True, False), group="critic_experiment"),
    Knob("depths", Each(OneOf(4, 8, 16, 32, 64), max_len=3), group="critic_search"),
    Knob("seeds", Range(1, 8, integer=True), group="critic_search"),
    Knob("steps", Range(1, 5000, integer=True), group="critic_search"),
    Knob("batch_size", Range(16, 1024, integer=True), group="critic_search"),
)
