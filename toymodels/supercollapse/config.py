"""Configurations, knobs and the cost model of the supercollapse toy: light (the standard library and
``toymodels.topic`` only), so the page reads its ``KNOBS`` without importing the experiments.

The defaults are the model of the paper notes: a = b = 1.5, batch 16, peak η = 0.2, horizon t*(p) = t0 (p/p0)^γ
at p0 = 64 with γ* = a. The notes' t0 = 300 lies 2.8x below the compute-optimal frontier of constant-rate
training (its envelope puts the optimal horizon of p = 64 at 828-829 steps, ``frontier_view``), so t0 = 830: the
paper's procedure (``fit_optimal_horizon.ipynb``) takes the horizon's scale and exponent from that frontier.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from toymodels.errors import BudgetError, InputError
from toymodels.knobs import Knob, knobs
from toymodels.topic import Each, OneOf, Range

SCHEDULE_NAMES = {"constant": "constant", "linear": "linear decay", "cosine": "cosine"}
SIZES = tuple(2 ** k for k in range(5, 13))                       # 32 .. 4096: the sizes a config may name
#: The γ multipliers of the shipped expected-curve grid (γ / γ*), and of the shipped seeded grid.
GAMMA_GRID = tuple(round(0.6 + 0.05 * i, 2) for i in range(17))   # 0.6, 0.65, ..., 1.4
GAMMA_COARSE = tuple(round(0.6 + 0.1 * i, 1) for i in range(9))   # 0.6, 0.7, ..., 1.4
#: Normalised compute x = c / c_final at which curves are compared, and the window of the summaries.
X_STEP = 0.02
N_X = 50                                                          # x = 0.02, 0.04, ..., 1.00
SUMMARY_WINDOW = (0.2, 0.95)


@dataclass(frozen=True)
class CurveConfig:
    """Expected (exact) loss curves for every size, γ multiplier and schedule."""

    sizes: tuple = (64, 128, 256, 512, 1024, 2048)
    mults: tuple = GAMMA_GRID
    schedules: tuple = ("constant", "linear", "cosine")
    a: float = 1.5
    b: float = 1.5
    batch: int = 16
    peak_lr: float = 0.2
    t0: float = 830.0
    p0: int = 64


@dataclass(frozen=True)
class SimConfig:
    """Seeded SGD runs: ``seeds`` runs (seeds ``seed``, ``seed + 1``, ...) per size, γ multiplier and schedule."""

    sizes: tuple = (64, 128, 256, 512)
    mults: tuple = GAMMA_COARSE
    schedules: tuple = ("constant", "linear", "cosine")
    seeds: int = 20
    seed: int = 1000
    sampler: str = "fast"
    a: float = 1.5
    b: float = 1.5
    batch: int = 16
    peak_lr: float = 0.2
    t0: float = 830.0
    p0: int = 64


@dataclass(frozen=True)
class FrontierConfig:
    """Constant-LR curves for sizes p_min · 2^(k/per_octave) up to ``p_max``, each run to ``overtrain`` times its
    horizon at γ*: the compute-optimal frontier is their lower envelope."""

    p_min: int = 32
    p_max: int = 2048
    per_octave: int = 4
    overtrain: float = 4.0
    a: float = 1.5
    b: float = 1.5
    batch: int = 16
    peak_lr: float = 0.2
    t0: float = 830.0
    p0: int = 64


@dataclass(frozen=True)
class CheckConfig:
    """The exact recursion against seeded SGD at one size: ``seeds`` runs of ``steps`` steps per schedule."""

    p: int = 128
    steps: int = 3000
    seeds: int = 32
    seed: int = 0
    schedules: tuple = ("constant", "linear")
    sampler: str = "fast"
    a: float = 1.5
    b: float = 1.5
    batch: int = 16
    peak_lr: float = 0.2


DEFAULT_CURVES, DEFAULT_SIM = CurveConfig(), SimConfig()
DEFAULT_FRONTIER, DEFAULT_CHECK = FrontierConfig(), CheckConfig()
DEFAULT_SCHEDULES = CurveConfig(mults=(1.0,))   # the schedule model: every size at γ*

_PHYSICS = dict(a=Range(1.1, 2.5), b=Range(1.1, 2.5), batch=Range(4, 256, integer=True),
                peak_lr=Range(0.02, 0.4))
_HORIZON = dict(t0=Range(20, 2000), p0=OneOf(*SIZES[:4]))
_SEED = Range(0, 2 ** 31 - 1, integer=True)
_SCHEDULES = Each(OneOf(*SCHEDULE_NAMES), max_len=3)


def _rows(group: str, **bounds) -> list[Knob]:
    return [Knob(name, bound, group=group) for name, bound in bounds.items()]


#: Every knob, once: the four configurations (groups "curves", "sim", "frontier", "check": their entry points'
#: ``cfg``), and what the page offers (ids ``sc_*``; the seeds of "Your own seeds" are ``SimConfig``'s).
KNOBS = knobs(
    *_rows("curves", sizes=Each(OneOf(*SIZES), max_len=8), mults=Each(Range(0.5, 1.6), max_len=17),
           schedules=_SCHEDULES, **_PHYSICS, **_HORIZON),
    *_rows("sim", sizes=Each(OneOf(*SIZES[:6]), max_len=6), mults=Each(Range(0.5, 1.6), max_len=9),
           schedules=_SCHEDULES, sampler=OneOf("fast", "plain"), **_PHYSICS, **_HORIZON),
    Knob("seed", _SEED, "First seed", 1, id="sc_seed", group="sim", widget="number"),
    Knob("seeds", Range(2, 32, integer=True), "Seeds per size", 1, id="sc_seeds", group="sim"),
    *_rows("frontier", p_min=OneOf(*SIZES[:3]), p_max=OneOf(*SIZES[2:8]), per_octave=Range(1, 8, integer=True),
           overtrain=Range(1.5, 8), **_PHYSICS, **_HORIZON),
    *_rows("check", p=OneOf(*SIZES[:6]), steps=Range(10, 20000, integer=True), seeds=Range(4, 256, integer=True),
           seed=_SEED, schedules=_SCHEDULES, sampler=OneOf("fast", "plain"), **_PHYSICS),
    Knob("gamma_mult", OneOf(*GAMMA_COARSE), "Horizon exponent γ / γ*", id="sc_gamma", group="page", default=1.0),
    Knob("schedule", OneOf(*SCHEDULE_NAMES), "Learning-rate schedule", id="sc_schedule", group="page",
         labels=SCHEDULE_NAMES, default="linear"),
    Knob("l0", OneOf("true", "misfit"), "Irreducible loss L0", id="sc_l0", group="page",
         labels={"true": "true L0 = 0", "misfit": "misfit L0"}, default="true"),
    Knob("l0_frac", Range(-0.3, 0.3), "Misfit, as a fraction of the largest model's final loss", 0.01,
         id="sc_l0_frac", group="page", default=0.1),
    Knob("size", OneOf(*CurveConfig().sizes), "Model size", id="sc_model_size", group="page", default=512),
)

#: The most one call may cost (seconds on a 2-core CPU, one thread), and what a page computes by itself.
MAX_SECONDS = 600.0
PAGE_SECONDS = 60.0


def horizon_steps(p: int, gamma: float, t0: float, p0: int) -> int:
    """The training horizon t*(p) = t0 (p / p0)^γ in SGD steps, rounded to a whole step (at least 1). The
    continuum theory L = p^(1-b) F(t / p^a) makes γ* = a the compute-optimal exponent."""
    return max(1, int(round(t0 * (p / p0) ** gamma)))


# Measured on this machine, one thread (numpy): per recursion step 5 µs + 4 ns per mode and run; per SGD step
# 0.1 ms + 20 ns per (seed x coordinate) with the fast sampler, 16x the coordinates with the plain one.
_REC_STEP, _REC_ELEM = 5e-6, 4e-9
_SGD_STEP, _SGD_ELEM = 1.0e-4, 2.0e-8


def expected_seconds(cfg) -> float:
    """The expected wall time of one call with this configuration, on a 2-core CPU with one thread."""
    if isinstance(cfg, CurveConfig):
        total = 0.0
        for m in cfg.mults:
            for p in cfg.sizes:
                steps = horizon_steps(p, m * cfg.a, cfg.t0, cfg.p0)
                total += steps * (_REC_STEP + _REC_ELEM * p) * len(cfg.schedules)
        return total
    if isinstance(cfg, SimConfig):
        per = sum(p + 2 * cfg.batch for p in cfg.sizes) * (1 if cfg.sampler == "fast" else cfg.batch)
        total = 0.0
        for m in cfg.mults:
            steps = max(horizon_steps(p, m * cfg.a, cfg.t0, cfg.p0) for p in cfg.sizes)
            total += steps * (_SGD_STEP + _SGD_ELEM * cfg.seeds * per) * len(cfg.schedules)
        return total
    if isinstance(cfg, FrontierConfig):
        total = 0.0
        for p in frontier_sizes(cfg):
            steps = cfg.overtrain * horizon_steps(p, cfg.a, cfg.t0, cfg.p0)
            total += steps * (_REC_STEP + _REC_ELEM * p)
        return total
    if isinstance(cfg, CheckConfig):
        per = (cfg.p + 2 * cfg.batch) * (1 if cfg.sampler == "fast" else cfg.batch)
        sim = cfg.steps * (_SGD_STEP + _SGD_ELEM * cfg.seeds * per)
        return len(cfg.schedules) * (sim + cfg.steps * (_REC_STEP + _REC_ELEM * cfg.p))
    raise TypeError(f"no cost model for {type(cfg).__name__}")


def expected_bytes(cfg) -> int:
    """The largest array one call holds (bytes): a recursion keeps its whole loss curve, SGD its random block."""
    if isinstance(cfg, CurveConfig):
        longest = max(horizon_steps(p, m * cfg.a, cfg.t0, cfg.p0) for p in cfg.sizes for m in cfg.mults)
        return 8 * (longest + 1) * len(cfg.schedules) * 2
    if isinstance(cfg, SimConfig):
        per = sum(p + 2 * cfg.batch for p in cfg.sizes) * (1 if cfg.sampler == "fast" else cfg.batch)
        return 8 * 32 * cfg.seeds * per * 2
    if isinstance(cfg, FrontierConfig):
        return 8 * int(cfg.overtrain * horizon_steps(cfg.p_max, cfg.a, cfg.t0, cfg.p0) + 1) * 2
    if isinstance(cfg, CheckConfig):
        per = (cfg.p + 2 * cfg.batch) * (1 if cfg.sampler == "fast" else cfg.batch)
        return 8 * 32 * cfg.seeds * per * 2 + 8 * (cfg.steps + 1)
    raise TypeError(f"no memory model for {type(cfg).__name__}")


MAX_BYTES = 400 << 20


def frontier_sizes(cfg: FrontierConfig) -> list[int]:
    """p_min · 2^(k / per_octave), k = 0, 1, ... up to p_max (whole numbers, distinct)."""
    n = int(round(math.log2(cfg.p_max / cfg.p_min) * cfg.per_octave))
    return sorted({int(round(cfg.p_min * 2 ** (k / cfg.per_octave))) for k in range(n + 1)})


def stable(cfg) -> bool:
    """Whether the expected-loss recursion contracts at the peak rate for every size of ``cfg`` (the rank-one
    feedback of the noise term included): (η/B) Σ_j λ_j / (2 - η λ_j (1 + 1/B)) < 1 and η λ_1 (1 + 1/B) < 2."""
    eta, batch = cfg.peak_lr, cfg.batch
    if eta * (1 + 1 / batch) >= 2:
        return False
    p = max(cfg.sizes) if hasattr(cfg, "sizes") else cfg.p if hasattr(cfg, "p") else cfg.p_max
    total = sum(j ** -cfg.a / (2 - eta * j ** -cfg.a * (1 + 1 / batch)) for j in range(1, p + 1))
    return eta / batch * total < 1


def check_budget(cfg, limit: float = MAX_SECONDS) -> None:
    """Refuse a configuration over the time or memory budget, or one whose SGD would diverge (InputError)."""
    seconds = expected_seconds(cfg)
    if seconds > limit:
        raise BudgetError(f"this configuration would take about {seconds:,.0f} s on a 2-core CPU; the limit is "
                         f"{limit:,.0f} s: use fewer sizes, seeds or γ values, or smaller sizes")
    need = expected_bytes(cfg)
    if need > MAX_BYTES:
        raise BudgetError(f"this configuration would hold about {need / 2 ** 20:,.0f} MB; the limit is "
                         f"{MAX_BYTES / 2 ** 20:,.0f} MB")
    if not stable(cfg):
        raise InputError("at this learning rate and batch the SGD recursion diverges: lower the peak learning "
                         "rate or raise the batch")


__all__ = ["CurveConfig", "SimConfig", "FrontierConfig", "CheckConfig", "KNOBS", "GAMMA_GRID", "GAMMA_COARSE",
           "SCHEDULE_NAMES", "expected_seconds", "check_budget", "horizon_steps", "frontier_sizes"]
