"""Induction heads: the configurations, their bounds and their cost (light: no torch, no numpy).

``Config`` is one training run of an attention-only transformer (``model``) on repeated random tokens (``data``):
``n_layers`` 0, 1 or 2, a fixed or a variable period. ``StudyConfig`` is the registered many-seed study: every arm
(depth x period) trained on ``n_seeds`` fresh seeds at once (seeds are a leading instance dimension of every
weight). ``KNOBS`` declares every knob once (its bound; for the page's knobs their label, offered values and URL
id); ``expected_seconds`` is the cost model (one CPU thread of the
project's 2-core machine; see the lab notebook).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from toymodels.errors import InputError
from toymodels.knobs import Knob, knobs
from toymodels.topic import Each, OneOf, Range

PERIODS = ("variable", "fixed")
PERIOD_LABELS = {"variable": "variable period (4-16)", "fixed": "fixed period (16)"}


@dataclass(frozen=True)
class Config:
    """One run. ``n_layers`` attention-only layers of ``n_heads`` heads (width ``d_model``, head size
    ``d_model / n_heads``), no MLP, no LayerNorm, no biases; learned absolute positions. Data: ``n_ctx`` tokens per
    sequence, each a block of ``period`` random tokens (``period_mode`` "fixed": ``period_max`` every time;
    "variable": uniform in [``period_min``, ``period_max``]) repeated to fill the sequence; tokens drawn uniformly
    (with replacement) from ``vocab``. The loss is the mean cross-entropy of the next token on the positions after the
    first period. Weights: ``init`` (``model.init_params``). Adam (``lr``, betas 0.9/0.999), ``batch`` sequences
    per step, ``steps`` steps; the held-out set
    (``eval_batch`` sequences, its own seed) is measured every ``eval_every`` steps. ``seed`` seeds the
    initialisation and the training batches."""

    n_layers: int = 2
    period_mode: str = "variable"
    n_heads: int = 4
    d_model: int = 64
    vocab: int = 64
    n_ctx: int = 32
    period_min: int = 4
    period_max: int = 16
    lr: float = 1e-3
    batch: int = 64
    steps: int = 3000
    init: str = "torch"
    init_std: float = 0.02
    eval_every: int = 50
    eval_batch: int = 256
    seed: int = 0

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def n_periods(self) -> int:
        """How many periods the data can have (13 for 4-16; 1 for a fixed period)."""
        return self.period_max - self.period_min + 1 if self.period_mode == "variable" else 1


@dataclass(frozen=True)
class StudyConfig:
    """The registered study: every arm in ``arms`` (a ``(n_layers, period_mode)`` pair) trained on the seeds
    ``first_seed`` .. ``first_seed + n_seeds - 1`` (one batched model per arm), with the settings of ``run``
    otherwise; then the measurements of the claims (scores, circuits, knock-outs, the rotation test and the
    linear-interpolation barriers of ``lmc_pairs`` disjoint seed pairs of the 2-layer variable-period arm)."""

    run: Config = Config()
    arms: tuple = ((0, "variable"), (1, "variable"), (2, "variable"), (1, "fixed"), (2, "fixed"))
    n_seeds: int = 20
    first_seed: int = 100
    lmc_pairs: int = 10
    keep_weights: int = 2        # the first seeds whose trained weights the bundle keeps (the page draws them)


#: one live run (the page's button): at most this many seconds on one CPU thread
MAX_SECONDS = 90.0
#: the registered study (a precomputation, batched over seeds; never run from the page)
MAX_STUDY_SECONDS = 6 * 3600.0
#: memory of one live run (activations, attention maps and gradients): the project's budget per computation
MAX_MB = 350.0

# Seconds of one CPU thread (fitted on this implementation; lab notebook, "cost model"): a training step costs
# _SEC_PER_STEP plus _SEC_PER_MAC per multiply-add of its forward pass (the backward pass included in the constant);
# an evaluation costs about half a training step per sequence (forward only, plus the attention-map scores).
_SEC_PER_MAC = 2.2e-10
_SEC_PER_STEP = 1.5e-3


def check_structure(cfg: Config) -> None:
    """Cross-field rules the per-field bounds in ``KNOBS`` cannot state (checked by the budgets of the bounded entry
    points, never inside what a view computes)."""
    if cfg.d_model % cfg.n_heads:
        raise InputError(f"d_model ({cfg.d_model}) must be a multiple of n_heads ({cfg.n_heads})")
    if cfg.period_min > cfg.period_max:
        raise InputError(f"period_min ({cfg.period_min}) must be at most period_max ({cfg.period_max})")
    if 2 * cfg.period_max > cfg.n_ctx:
        raise InputError(f"the longest period ({cfg.period_max}) must repeat at least once in n_ctx = {cfg.n_ctx} "
                         f"tokens: n_ctx >= {2 * cfg.period_max}")
    if cfg.eval_every > cfg.steps:
        raise InputError(f"eval_every ({cfg.eval_every}) must be at most steps ({cfg.steps})")


def step_macs(cfg: Config) -> float:
    """Multiply-adds of one forward pass over one batch (embedding gathers not counted)."""
    T, d, V, B = cfg.n_ctx, cfg.d_model, cfg.vocab, cfg.batch
    per_layer = 4 * T * d * d + 2 * T * T * d        # Q, K, V, O projections; scores and mixing
    return B * (cfg.n_layers * per_layer + T * d * V)


def expected_seconds(cfg: Config = Config(), n_seeds: int = 1) -> float:
    """Expected CPU time of training ``cfg`` on ``n_seeds`` seeds batched, on one thread of an idle core
    (evaluations included). Wall time on a loaded shared machine is a few times longer."""
    evals = cfg.steps // cfg.eval_every + 1
    train = cfg.steps * (_SEC_PER_STEP + _SEC_PER_MAC * step_macs(cfg) * n_seeds)
    evaluate = evals * 0.5 * (cfg.eval_batch / cfg.batch) * (_SEC_PER_STEP + _SEC_PER_MAC * step_macs(cfg) * n_seeds)
    return train + evaluate


def expected_mb(cfg: Config, n_seeds: int = 1) -> float:
    """Memory a run holds at its peak, MB: activations kept for the backward pass (residual streams, q, k, v,
    attention maps, logits) of one training batch, and the evaluation pass's maps, float32, per seed."""
    T, d, V, H = cfg.n_ctx, cfg.d_model, cfg.vocab, cfg.n_heads
    train = cfg.batch * (cfg.n_layers * (6 * T * d + 3 * H * T * T) + 3 * T * V + T * d)
    evals = cfg.eval_batch * (cfg.n_layers * (4 * T * d + 2 * H * T * T) + 2 * T * V)
    params = 4 * (V * d * 2 + T * d + cfg.n_layers * 4 * d * d)       # weights, grads, two Adam moments
    return n_seeds * 4 * (train + evals + params) / 2**20 + 40.0


def check_budget(cfg: Config, n_seeds: int = 1, limit: float = MAX_SECONDS) -> None:
    """Refuse a run over ``limit`` seconds or ``MAX_MB``: an ``InputError`` naming the cost and what to lower."""
    check_structure(cfg)
    secs = expected_seconds(cfg, n_seeds)
    if secs > limit:
        raise InputError(f"this run would take about {secs:.0f} s (limit {limit:.0f} s): lower the steps, the batch, "
                         "the width or the layers")
    mb = expected_mb(cfg, n_seeds)
    if mb > MAX_MB * max(1, n_seeds / 4):
        raise InputError(f"this run would hold about {mb:.0f} MB (limit {MAX_MB:.0f} MB): lower the batch or the "
                         "context")


def log_periods(cfg: Config) -> float:
    """log(number of periods): the copy loss of a model that knows the period's distribution but not the period."""
    return math.log(cfg.n_periods)


def uniform_loss(cfg: Config) -> float:
    """log(vocab): the loss of a uniform guess."""
    return math.log(cfg.vocab)


# --------------------------------------------------------------------------- the page's live run

#: the live comparison behind the page's button: 1 and 2 layers on variable periods, one seed, shorter
LIVE = Config(steps=1000, batch=32, eval_every=25, eval_batch=128, seed=1)


@dataclass(frozen=True)
class LiveConfig:
    """The page's live run: the 1- and 2-layer models (and the 0-layer bigram model) on ``period_mode`` data, one
    ``seed``, ``steps`` steps."""

    period_mode: str = "variable"
    steps: int = LIVE.steps
    seed: int = LIVE.seed
    layers: tuple = (0, 1, 2)

    def config(self, n_layers: int) -> Config:
        from dataclasses import replace

        return replace(LIVE, n_layers=n_layers, period_mode=self.period_mode, steps=self.steps, seed=self.seed)


def live_seconds(live: LiveConfig) -> float:
    return sum(expected_seconds(live.config(n)) for n in live.layers)


# --------------------------------------------------------------------------- every knob, once

_SEED = Range(0, 2**31 - 1 - 64, integer=True)
#: the study's arms a configuration may name, and the seed pairs of Theus et al.'s comparison the page offers
ARMS = ((0, "variable"), (1, "variable"), (2, "variable"), (1, "fixed"), (2, "fixed"))
PAIRS = tuple(f"{StudyConfig.first_seed + 2 * k}-{StudyConfig.first_seed + 2 * k + 1}"
              for k in range(StudyConfig.lmc_pairs))

KNOBS = knobs(
    # one run (``Config``): the bounds of ``run`` and of the study's ``run`` field
    Knob("n_layers", OneOf(0, 1, 2)),
    Knob("period_mode", OneOf(*PERIODS)),
    Knob("n_heads", OneOf(1, 2, 4, 8)),
    Knob("d_model", OneOf(16, 32, 64, 128)),
    Knob("vocab", Range(8, 256, integer=True)),
    Knob("n_ctx", Range(8, 64, integer=True)),
    Knob("period_min", Range(2, 32, integer=True)),
    Knob("period_max", Range(2, 32, integer=True)),
    Knob("lr", Range(1e-4, 1e-2)),
    Knob("batch", Range(8, 128, integer=True)),
    Knob("steps", Range(50, 4000, integer=True)),
    Knob("init", OneOf("torch", "normal")),
    Knob("init_std", Range(0.001, 0.5)),
    Knob("eval_every", Range(10, 500, integer=True)),
    Knob("eval_batch", Range(16, 512, integer=True)),
    Knob("seed", _SEED),
    # the page's live comparison of depths (``LiveConfig``): the knobs of "One run up close"
    Knob("period_mode", OneOf(*PERIODS), "Period", id="ih_period", labels=PERIOD_LABELS, group="live",
         widget="segmented"),
    Knob("steps", Range(200, 2000, integer=True), "Steps", 100, id="ih_steps", group="live", widget="number",
         help="Adam steps per model (batch 32); the shipped run uses 1,000"),
    Knob("seed", _SEED, "Seed", id="ih_seed", group="live", widget="number"),
    Knob("layers", Each(OneOf(0, 1, 2), max_len=3), group="live"),
    # what the page shows of a trained run (page-only)
    Knob("sequence", OneOf(0, 1, 2, 3), "Sequence", id="ih_seq", default=0, widget="select_slider",
         help="One of the held-out sequences"),
    Knob("layer", OneOf(1, 2), "Layer", id="ih_layer", default=2, widget="radio"),
    Knob("head", OneOf(0, 1, 2, 3), "Head", id="ih_head", default=0, widget="radio",
         help="Opens on the layer's best head (induction in layer 2, previous-token in layer 1)"),
    Knob("pair", OneOf(*PAIRS), "Seed pair", id="ih_pair", default=PAIRS[0], widget="selectbox"),
    # the registered study (``StudyConfig``; a precomputation, never a page's knob)
    Knob("arms", Each(OneOf(*ARMS), max_len=len(ARMS)), group="study"),
    Knob("n_seeds", Range(1, 64, integer=True), group="study"),
    Knob("first_seed", _SEED, group="study"),
    Knob("lmc_pairs", Range(0, 32, integer=True), group="study"),
    Knob("keep_weights", Range(0, 8, integer=True), group="study"),
    # the real model's measurement (``experiments.real_model``)
    Knob("n_seq", Range(4, 64, integer=True), group="real"),
    Knob("block", Range(10, 100, integer=True), group="real"),
    Knob("seed", Range(0, 2**31 - 1, integer=True), group="real"),
)
#: the bounds of one run's fields, by name (read by the tests; the table above is the declaration)
BOUNDS = {r.name: r.bound for r in KNOBS.rows()}


#: the interpolation grid of linear mode connectivity and the names of its arms (``lmc``; here, so that a page
#: reading them does not import scipy.optimize with the alignment code)
LAMBDAS = tuple(round(0.1 * i, 1) for i in range(11))
ARM_LABELS_LMC = {"none": "no alignment (weights as trained)", "circuits": "heads as circuits, no alignment",
                  "permutation": "permutation alignment", "orthogonal": "orthogonal alignment (Procrustes)"}
