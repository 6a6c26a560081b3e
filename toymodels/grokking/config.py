"""Configurations, bounds and the cost model of the grokking toy (light: no numpy beyond the standard library's
needs, read by the page for its widgets).

Every knob is declared once, in ``KNOBS`` (its bound, label, the values the page offers, its URL id), and applied
by ``experiments``' bounded entry points and drawn by the page's ``ui.form``; the cost model
``expected_seconds`` is a fit to timings of this implementation on one thread of a 2-core CPU (see the lab
notebook), and the budget refuses a configuration whose run would take over ``MAX_SECONDS`` or hold over
``MAX_BYTES`` of arrays.
"""
from __future__ import annotations

from dataclasses import dataclass

from toymodels.errors import InputError
from toymodels.knobs import Knob, knobs
from toymodels.topic import Each, OneOf, Range

# Primes a visitor may pick (the paper's tasks are mod a prime; 61 is the official default).
PRIMES = (5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61)
OPERATIONS = ("x+y", "x-y")
CONTROLS = ("rfm", "identity", "random_circulant")
CONTROL_LABELS = {"rfm": "RFM: learn M by iterating the AGOP",
                  "identity": "Control: M fixed at I (no feature learning)",
                  "random_circulant": "Control: a random circulant M (no learning)"}

# The values a sweep may take per parameter (the page offers these; ``sweep`` accepts any value inside the bound).
SWEEPS = {"train_frac": (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), "bandwidth": (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0),
          "power": (0.25, 0.5, 0.75, 1.0)}
SWEEP_LABELS = {"train_frac": "training fraction", "bandwidth": "bandwidth L", "power": "AGOP power s"}
_FRAC, _L, _S = Range(0.1, 0.9), Range(0.5, 20.0), Range(0.1, 1.0)

#: Every knob, once: ``run``'s config (the page's form), the seed study, and the sweep.
KNOBS = knobs(
    Knob("p", OneOf(*PRIMES), "p (a prime)", id="gk_p"),
    Knob("train_frac", _FRAC, "Training fraction", 0.05, id="gk_frac"),
    Knob("iters", Range(1, 60, integer=True), "RFM iterations", 1, id="gk_iters"),
    Knob("bandwidth", _L, "Bandwidth L", 0.5, id="gk_L"),
    Knob("power", _S, "AGOP power s", 0.05, id="gk_s"),
    Knob("seed", Range(0, 2**31 - 1, integer=True), "Seed (the split)", id="gk_seed"),
    Knob("op", OneOf(*OPERATIONS), "Operation", id="gk_op", labels={"x+y": "x + y (mod p)", "x-y": "x − y (mod p)"}),
    Knob("control", OneOf(*CONTROLS), "Metric M", id="gk_ctrl", labels=CONTROL_LABELS),
    Knob("ridge", Range(0.0, 1.0)),
    Knob("iteration", Range(0, 59, integer=True), "Iteration", 1, id="gk_iter", default=5,
         help="The metric after this RFM iteration (the heatmap and the two numbers beside it)"),
    Knob("n_seeds", Range(1, 20, integer=True), group="study"),
    Knob("first_seed", Range(0, 2**31 - 1 - 20, integer=True), group="study"),
    Knob("param", OneOf(*SWEEPS), "Knob", id="gk_sweep", labels=SWEEP_LABELS, group="sweep", default="train_frac"),
    Knob("values", Each(Range(0.1, 20.0), max_len=8), group="sweep"),
    *(Knob("values", Each(bound, max_len=8), "Values", SWEEPS[name], id=f"gk_sweep_{name}", group=f"sweep_{name}",
           default=SWEEPS[name][1:6:2] if len(SWEEPS[name]) > 5 else SWEEPS[name][:3])
      for name, bound in (("train_frac", _FRAC), ("bandwidth", _L), ("power", _S))),
    # the neural-network comparison (nn.py: NNConfig, and nn_seeds' own arguments)
    *(Knob(name, bound, group="nn") for name, bound in dict(
        p=Range(5, 97, integer=True), op=OneOf("x+y", "x-y"), train_frac=_FRAC, width=Range(8, 1024, integer=True),
        activation=OneOf("quadratic", "relu"), lr=Range(1e-5, 1e-1), weight_decay=Range(0.0, 10.0),
        max_steps=Range(1, 20000, integer=True), eval_every=Range(1, 1000, integer=True), stop_at=Range(0.0, 1.0),
        patience=Range(1, 20, integer=True), seed=Range(0, 2**31 - 1, integer=True)).items()),
    Knob("first_seed", Range(0, 2**31 - 1 - 20, integer=True), group="nn_study"),
    Knob("seeds", Range(1, 20, integer=True), group="nn_study"),
)

MAX_SECONDS = 90.0      # one run, on one thread of a 2-core CPU
MAX_BYTES = 800 << 20   # arrays held at once by one run


@dataclass(frozen=True)
class Config:
    """One RFM run (the official ``train_kernel.py`` defaults): ``p`` the modulus, ``train_frac`` the share of the
    p² pairs used for training, ``op`` the operation, ``iters`` RFM iterations, ``bandwidth`` L of the Gaussian
    kernel, ``power`` s in M = AGOP^s, ``ridge`` λ, ``control`` (``"rfm"``; ``"identity"``: M = I, no learning;
    ``"random_circulant"``: the paper's random circulant M, no learning), ``seed`` for the split (and the control's
    random column)."""

    p: int = 61
    train_frac: float = 0.5
    op: str = "x+y"
    iters: int = 40
    bandwidth: float = 2.5
    power: float = 0.5
    ridge: float = 0.0
    control: str = "rfm"
    seed: int = 0


@dataclass(frozen=True)
class SeedsConfig:
    """The same run over ``n_seeds`` splits (seeds ``first_seed``, ``first_seed + 1``, ...), with both controls on
    each split."""

    run: Config = Config()
    n_seeds: int = 20
    first_seed: int = 100


def sizes(cfg: Config) -> tuple[int, int, int, int]:
    """(n_train, n_test, d, c)."""
    n = int(cfg.train_frac * cfg.p * cfg.p)
    return n, cfg.p * cfg.p - n, 2 * cfg.p, cfg.p


# Seconds per multiply-add of each part of one iteration, fitted on this implementation (one thread; lab notebook):
# the LU solve (2/3 n³), the kernels (n² d + n_te n d), the digit-grouped gradients (2 n² c) and the AGOP
# accumulation (n c d²); plus a fixed cost per iteration.
_SEC_PER_FLOP = 3.5e-11
_SEC_FIXED = 0.005


def _iteration_flops(cfg: Config) -> float:
    n, n_te, d, c = sizes(cfg)
    return 2 / 3 * n ** 3 + (n * n + n_te * n) * d + 2 * n * n * c + n * c * d * d


def expected_seconds(cfg: Config = Config(), n_seeds: int = 1) -> float:
    """Expected wall time of ``run(cfg)`` (times ``n_seeds``, each with both controls) on one thread of a 2-core
    CPU."""
    per_iter = _SEC_FIXED + _SEC_PER_FLOP * 2 * _iteration_flops(cfg)
    iters = cfg.iters if cfg.control == "rfm" else 1
    return n_seeds * (iters + 2) * per_iter


def expected_bytes(cfg: Config) -> int:
    """Arrays one run holds at once: the train kernel and its LU copy and temporaries, the test kernel, one chunk of
    gradients (and its products), the metric snapshots."""
    n, n_te, d, _ = sizes(cfg)
    return 8 * (3 * n * n + 2 * n_te * n + 3 * (16 << 20) // 8 + (cfg.iters + 2) * d * d)


def check_budget(cfg: Config, n_seeds: int = 1) -> None:
    """Refuse a run that would take over ``MAX_SECONDS`` or hold over ``MAX_BYTES``: an ``InputError`` that names
    the cost and what to lower."""
    secs = expected_seconds(cfg, n_seeds)
    if secs > MAX_SECONDS:
        raise InputError(f"this run would take about {secs:.0f} s (limit {MAX_SECONDS:.0f} s): lower p, the training "
                         f"fraction, the iterations or the seeds")
    if expected_bytes(cfg) > MAX_BYTES:
        raise InputError(f"this run would hold about {expected_bytes(cfg) / 2**20:.0f} MB (limit "
                         f"{MAX_BYTES / 2**20:.0f} MB): lower p or the training fraction")


# --------------------------------------------------------------------------- the neural-network comparison (nn.py)

@dataclass(frozen=True)
class NNConfig:
    """One network: the task (p, op, train_frac, the split's ``seed``), the network (width, activation) and its
    training (full batch AdamW: lr, weight_decay; at most ``max_steps``, evaluated every ``eval_every``; it stops
    once test accuracy has stayed ≥ ``stop_at`` for ``patience`` evaluations)."""
    p: int = 61
    op: str = "x+y"
    train_frac: float = 0.5
    width: int = 512
    activation: str = "quadratic"
    lr: float = 1e-3
    weight_decay: float = 1.0
    max_steps: int = 4000
    eval_every: int = 100
    stop_at: float = 0.99
    patience: int = 3
    seed: int = 0



#: Issue 41's registered run (nn-features): 8 fresh splits, seeds 100-107, the configuration of the pilot (seeds 0-1,
#: lab notebook), which grokked by step 1,000 on both.
NN_STUDY = NNConfig()
NN_FIRST_SEED, NN_SEEDS = 100, 8
