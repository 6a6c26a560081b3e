"""Configurations, bounds and cost models of the diffusion topic: light (no torch), so the page reads them.

Every knob is declared once here, in ``KNOBS`` (its bound, label, the values the page offers, its URL id), with the
budgets; the ``@bounded`` declarations of the functions that take them (``experiments``, ``explore``, ``flows``)
and the page's ``ui.form`` read it.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from toymodels.knobs import Knob, knobs
from toymodels.topic import Each, InputError, Maybe, OneOf, Range

#: Dimension of the paper's GMM check (SM B).
GMM_D = 8
SEED = Range(0, 2**31 - 1, integer=True)
#: The visualiser's 2-D training sets: stable ids (links store these) and their labels.
DATASETS_2D = {"moons": "2-D: two moons", "ring": "2-D: ring of 8 Gaussians", "gmm2": "2-D: the SM B mixture (d = 2)"}


def ddpm_coeffs(u: float, T: int = 1000, beta_min: float = 1e-4, beta_max: float = 2e-2) -> tuple[float, float]:
    """(a, σ) of the DDPM forward process at u ∈ [0, 1] (u = t′/(T − 1)): a = √ᾱ, σ = √(1 − ᾱ), ᾱ = ∏(1 − β), with
    ᾱ interpolated between integer t′ (as ``core.Schedule("ddpm").coeffs``; light: for the page's captions)."""
    import numpy as np

    if not 0.0 <= float(u) <= 1.0:
        raise InputError(f"diffusion time u must lie in [0, 1], got {u!r}")
    ab = np.cumprod(1.0 - np.linspace(beta_min, beta_max, T))
    a2 = float(np.interp(float(u) * (T - 1), np.arange(T), ab))
    return a2 ** 0.5, (1.0 - a2) ** 0.5


@dataclass
class WindowConfig:
    """The generalisation-window experiment (SM B's GMM, CPU-sized; defaults are the page's)."""

    ns: list = field(default_factory=lambda: [16, 32, 64, 128])
    seeds: int = 1
    width: int = 64
    d: int = GMM_D
    mu: float = 1.0
    steps_per_n: float = 150.0     # S = steps_per_n · n (full batch; the notes: 200 n)
    lr: float = 6e-4               # Adam (the repo's GMM setting)
    n_samples: int = 500           # DDIM samples per checkpoint (same starting noise at every checkpoint)
    ddim_steps: int = 50           # (the notes: 1,000 samples and 100 steps; halved for a 2-core CPU)
    ckpt_per_decade: int = 6       # checkpoints at 50·10^(k/6) steps
    k: float = 1 / 3               # memorisation threshold
    seed: int = 0

    def normalised(self) -> "WindowConfig":
        """A copy with the n sorted and de-duplicated (bounds are checked by ``train_window``'s declaration)."""
        return WindowConfig(**{**asdict(self), "ns": sorted({int(n) for n in self.ns})})


#: Live compute budget of one ``train_window`` call, in row-steps of the padded ensemble: models × n_max × S_max
#: × (W/64)², S_max = (S/n)·n_max. The page's default (≈ 10⁷) trains in about a minute on 2 idle cores; the
#: command line's larger reproduction calls ``train_window.__wrapped__`` (no live budget).
WINDOW_BUDGET = 1e7


def window_cost(cfg: "WindowConfig") -> float:
    """Row-steps of ``train_window(cfg)`` (the unit of ``WINDOW_BUDGET``)."""
    ns = {int(n) for n in cfg.ns}
    return len(ns) * cfg.seeds * max(ns) ** 2 * cfg.steps_per_n * (cfg.width / 64) ** 2


#: memory budget of one live call (MB of arrays; glibc's heap adds up to ~2x in resident memory): two calls at
#: once beside the server must fit a 2.7 GB host (issue 25)
MAX_MEMORY_MB = 350.0


def window_memory_mb(cfg: "WindowConfig") -> float:
    """The memory model (MB) of ``train_window(cfg)``'s evaluation (at every checkpoint): ``mmd2`` keeps the kernel
    matrices k(x, x) (M, S, S) and k(y, y) (M, 1000, 1000) float32 while it builds k(x, y) (M, S, 1000) through
    cdist, pow, divide and exp (~3 alive); the memorisation test's cdist + masked_fill are (M, S, n_max) each.
    M = len(ns)·seeds models, S = n_samples; y is 1000 fresh GMM samples. Checked with ``bench/bench_memory.py``
    (one CPU thread, glibc's mmap threshold fixed at 128 KiB) on ``window#S1000``, ``#S2000`` and ``#M32``.
    """
    M = len({int(v) for v in cfg.ns}) * cfg.seeds
    S, n = cfg.n_samples, max(int(v) for v in cfg.ns)
    mmd = M * (S * S + 1000 * 1000 + 3 * S * 1000) * 4
    mem = 2 * M * S * n * 4
    return max(mmd, mem) / 2 ** 20


def _window_budget(cfg, **_):
    cost = window_cost(cfg)
    if cost > WINDOW_BUDGET:
        raise InputError(f"that run is {cost / WINDOW_BUDGET:.1f}× this demo's live budget (about a minute of "
                         "CPU): use fewer or smaller n, fewer seeds, a smaller width or fewer steps")
    mb = window_memory_mb(cfg)
    if mb > MAX_MEMORY_MB:
        raise InputError(f"that run would need about {mb:,.0f} MB of memory, over the {MAX_MEMORY_MB:.0f} MB limit "
                         "of one live run: fewer samples, fewer or smaller n, or fewer seeds")


def study_cost(cfg: "WindowConfig") -> float:
    """Row-steps of ``window_study(cfg)``, where each n trains alone (no padding): Σ_n seeds · n · S_n · (W/64)²."""
    return cfg.seeds * cfg.steps_per_n * sum(int(n) ** 2 for n in set(cfg.ns)) * (cfg.width / 64) ** 2


#: The shipped window study's budget (about 20 minutes of CPU; never run live).
STUDY_BUDGET = 2.5e8


def _study_budget(cfg, **_):
    cost = study_cost(cfg)
    if cost > STUDY_BUDGET:
        raise InputError(f"that study is {cost / STUDY_BUDGET:.1f}× its budget: use fewer or smaller n, fewer seeds, "
                         "a smaller width or fewer steps")


#: The shipped window study (issue #32): n ∈ {32, …, 256}, 5 seeds each (fresh: base seed 1), runs of 300 n steps,
#: 1,000 DDIM samples of 100 steps at 12 checkpoints per decade (plus 100 n, 200 n, 300 n).
STUDY_WINDOW = WindowConfig(ns=[32, 64, 128, 256], seeds=5, steps_per_n=300, n_samples=1000, ddim_steps=100,
                            ckpt_per_decade=12, seed=1)


@dataclass
class RFConfig:
    """§3 numerics, CPU-sized (the paper: d = 100, ψ_p = 64, ψ_n ∈ {4, 8, 16, 32}, t = 0.1)."""

    d: int = 20
    psi_p: float = 64.0
    psi_ns: list = field(default_factory=lambda: [4, 8, 16, 32])
    t: float = 0.1
    samples: int = 40_000       # n · N noise draws for U, V
    n_test: int = 2000          # fresh points for the population Ũ, Ṽ
    test_draws: int = 20
    seed: int = 0

    def normalised(self) -> "RFConfig":
        """A copy with ψ_n sorted and de-duplicated (bounds are checked by ``run_rf``'s declaration)."""
        return RFConfig(**{**asdict(self), "psi_ns": sorted({float(v) for v in self.psi_ns})})


#: Live compute budget of one ``run_rf`` call, in multiply-adds: the moments (n·draws rows of p features, each
#: an outer product p²) for every ψ_n and the population, plus three p³ eigen-products per ψ_n. The limit keeps
#: one run under about a minute on one core of the 2-core demo machine (the default, d = 20 and p = 1,280, is
#: 3.6 × 10¹¹ and took 14 s of CPU; see ``rf_cost``).
RF_BUDGET = 1.2e12


def rf_cost(cfg: "RFConfig") -> float:
    """The multiply-adds of ``run_rf(cfg)`` (the model behind ``RF_BUDGET``)."""
    p = float(round(cfg.psi_p * cfg.d))
    psi_ns = sorted({float(v) for v in cfg.psi_ns})
    rows = cfg.n_test * cfg.test_draws
    for psi_n in psi_ns:
        n = max(2, int(round(psi_n * cfg.d)))
        rows += n * max(4, cfg.samples // n)
    return rows * p * (p + cfg.d) + 3 * len(psi_ns) * p ** 3


def rf_memory_mb(cfg: "RFConfig") -> float:
    """The memory model (MB) of ``run_rf(cfg)``, p = ψ_p·d features: the larger of the moments phase (Ũ and one
    chunk's (8192, p) float32 features, pre-activation and product: 8p² + 12·8192·p bytes) and the exact-dynamics
    phase in ``rf_losses`` (U, Ũ, Q, QᵀŨ, G, H, G∘H: 7 p x p float64 matrices, 56p² bytes), plus ~60 MB (first use
    of LAPACK and SciPy). Fitted with ``bench/bench_memory.py`` (one CPU thread) on ``rf#p1024`` and ``rf#p2048``;
    ``MAX_MEMORY_MB`` allows p up to about 2,330 (4,096 added 835 MB resident, 3,072 over 800 MB).
    """
    p = int(round(cfg.psi_p * cfg.d))
    return 60 + max(8 * p * p + 12 * 8192 * p, 56 * p * p) / 2 ** 20


def _rf_budget(cfg, **_):
    p = int(round(cfg.psi_p * cfg.d))
    if p > 4096:
        raise InputError(f"p = ψ_p·d = {p:,} features is more than this demo's 4,096: lower ψ_p or d")
    cost = rf_cost(cfg)
    if cost > RF_BUDGET:
        raise InputError(f"that run is {cost / RF_BUDGET:.1f}× this demo's live budget (about a minute of CPU): "
                         "lower ψ_p or d, or pick fewer or smaller ψ_n")
    mb = rf_memory_mb(cfg)
    if mb > MAX_MEMORY_MB:
        raise InputError(f"p = ψ_p·d = {p:,} features would need about {mb:,.0f} MB of memory, over the "
                         f"{MAX_MEMORY_MB:.0f} MB limit of one live run: lower ψ_p or d")


#: The shipped random-features study: the notes' setting d = 40 (p = 2,560), ψ_p = 64, ψ_n ∈ {4, 8, 16, 32},
#: t = 0.1, seeds 1, 2, 3 (fresh: the page's ``rf`` view is seed 0 at d = 20).
RF_STUDY = RFConfig(d=40, samples=80_000, n_test=4000, test_draws=20, seed=1)
#: Its budget: three seeds of the notes' setting (about 6 minutes of CPU; never run live).
RF_STUDY_BUDGET = 1e13


def _rf_study_budget(cfg, seeds=3, **_):
    cost = seeds * rf_cost(cfg)
    if cost > RF_STUDY_BUDGET:
        raise InputError(f"that study is {cost / RF_STUDY_BUDGET:.1f}× its budget: fewer seeds, a smaller d or ψ_p")


@dataclass
class FlowConfig:
    """Bertrand et al.'s test of target stochasticity on digits (d = 64): the SM B network (width W) trained by flow
    matching on the conditional target (CFM) and on the closed-form one (EFM), paired (same training set, same
    initialisation, same draws of x₀, t and batch positions), for each training-set size n and seed."""

    ns: list = field(default_factory=lambda: [64, 128])
    seeds: int = 6
    arms: list = field(default_factory=lambda: ["cfm", "efm"])
    width: int = 128
    steps: int = 10_000
    batch: int = 128               # Bertrand et al.'s 2-D toy: batch 128, Adam 1e-3
    lr: float = 1e-3
    n_samples: int = 500           # Euler samples per checkpoint (the same starting noise every time)
    euler_steps: int = 100
    n_test: int = 500              # held-out digits (never in a training set)
    ckpt_per_decade: int = 4
    k: float = 1 / 3               # memorisation threshold (Eq. 6)
    seed: int = 0

    def normalised(self) -> "FlowConfig":
        """A copy with the n sorted and de-duplicated and the arms in a fixed order."""
        arms = [a for a in ("cfm", "efm") if a in set(self.arms)]
        return FlowConfig(**{**asdict(self), "ns": sorted({int(n) for n in self.ns}), "arms": arms})


#: Digits available: 1,797; the held-out set and a reference set of fresh digits come first, training sets from
#: the rest.
N_DIGITS, N_FRESH = 1797, 200


def flow_cost(cfg: "FlowConfig") -> float:
    """Model-steps of ``cfm_vs_efm(cfg)`` scaled to width 128 (about 2 ms each on one thread), plus the sampling
    at checkpoints (n_samples × euler_steps rows per model and checkpoint, in the same unit)."""
    models = len(set(cfg.ns)) * cfg.seeds * len(set(cfg.arms))
    ckpts = 1 + cfg.ckpt_per_decade * max(1.0, math.log10(max(cfg.steps, 10) / 100)) + 2
    w = (cfg.width / 128) ** 2
    return models * w * (cfg.steps * cfg.batch / 128 + ckpts * cfg.n_samples * cfg.euler_steps / (3 * 128))


#: Live budget of ``cfm_vs_efm``: about a minute of CPU (30,000 model-steps of width 128).
FLOW_BUDGET = 3e4
#: The shipped comparison's budget (about half an hour of CPU; never run live).
FLOW_STUDY_BUDGET = 1e6


def _flow_budget(cfg, limit=FLOW_BUDGET, **_):
    if max(cfg.ns) + cfg.n_test + N_FRESH > N_DIGITS:
        raise InputError(f"n = {max(cfg.ns)} training digits leave too few of the {N_DIGITS:,} for the "
                         f"{cfg.n_test} held-out and {N_FRESH} reference digits")
    cost = flow_cost(cfg)
    if cost > limit:
        raise InputError(f"that run is {cost / limit:.1f}× this demo's budget: use fewer seeds, sizes or steps, "
                         "or a smaller width")


#: The shipped comparison (issue #32): n ∈ {64, 128} training digits, 6 paired seeds, width 128, 10,000 steps (sizes and
#: budget from a CFM-only pilot on other seeds, lab notebook P1: there CFM's f_mem at 10⁴ steps was 0.36 for n = 64
#: and 0 for n = 256).
FLOW_STUDY = FlowConfig()
#: Issue 41: CFM against EFM under the equivalence rule, on fresh seeds (their training sets, test split,
#: initialisations and draws all derive from seed 100), registered before the run.
FLOW_FRESH = FlowConfig(seed=100)


def expected_seconds(cfg, kind: str | None = None) -> float:
    """Expected CPU seconds (one thread of a 2-core machine) of a run with ``cfg``: ``train_window`` for a
    ``WindowConfig`` (``kind="study"``: ``window_study``), ``run_rf`` for an ``RFConfig``, ``cfm_vs_efm`` for a
    ``FlowConfig``. Calibrated on the shipped runs (their CPU times are in the page's lab notebook)."""
    if isinstance(cfg, WindowConfig):
        if kind == "study":   # per n: S_n steps of a fixed cost plus a cost per row, and the checkpoints
            ns = sorted({int(n) for n in cfg.ns})
            steps = sum(cfg.steps_per_n * n for n in ns)
            evals = len(ns) * 12 * cfg.ckpt_per_decade / 4 * cfg.seeds * cfg.n_samples * cfg.ddim_steps / 1e5
            return 1.7e-3 * steps + 4.4e-6 * study_cost(cfg) + 0.06 * evals
        return 7.8e-6 * window_cost(cfg)
    if isinstance(cfg, RFConfig):
        return 3.9e-11 * rf_cost(cfg)
    if isinstance(cfg, FlowConfig):
        return 2.1e-3 * flow_cost(cfg)
    raise TypeError(f"no cost model for {type(cfg).__name__}")


# --------------------------------------------------------------------------- the knobs (one declaration each)


def _rows(group: str, **bounds) -> list[Knob]:
    return [Knob(name, bound, group=group) for name, bound in bounds.items()]


_WINDOW = dict(ns=Each(Range(4, 1024, integer=True), max_len=8, min_len=2), seeds=Range(1, 8, integer=True),
               width=Range(8, 256, integer=True), d=Range(1, 64, integer=True), mu=Range(0.0, 10.0),
               steps_per_n=Range(10, 1000), lr=Range(1e-5, 1e-2), n_samples=Range(100, 4000, integer=True),
               ddim_steps=Range(10, 200, integer=True), ckpt_per_decade=Range(1, 20, integer=True),
               k=Range(0.01, 1.0), seed=SEED)
_RF = dict(d=Range(4, 64, integer=True), psi_p=Range(2, 128), t=Range(0.01, 2.0),
           psi_ns=Each(Range(0.5, 64), max_len=8, min_len=2), samples=Range(5_000, 200_000, integer=True),
           n_test=Range(100, 20_000, integer=True), test_draws=Range(1, 100, integer=True), seed=SEED)
_ON_PAGE = {  # (group, field) -> label, offered values, URL id
    ("window", "ns"): ("Training-set sizes n", (16, 32, 64, 128, 256, 512), "win_ns"),
    ("window", "seeds"): ("Seeds per n", 1, "win_seeds"),
    ("window", "width"): ("Width W", (32, 64, 128), "win_width"),
    ("window", "steps_per_n"): ("Steps per point (S/n)", (50.0, 100.0, 150.0, 200.0, 300.0), "win_spn"),
    ("rf", "psi_p"): ("ψ_p = p/d", (16.0, 32.0, 64.0, 128.0), "rf_psi_p"),
    ("rf", "t"): ("Diffusion time t", (0.05, 0.1, 0.2, 0.5, 1.0), "rf_t"),
    ("rf", "d"): ("Dimension d", (10, 16, 20, 32), "rf_d"),
    ("rf", "psi_ns"): ("ψ_n = n/d", (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0), "rf_psi_n"),
}


def _config_rows(group: str, bounds: dict, **spans) -> list[Knob]:
    return [Knob(name, bound, *_ON_PAGE.get((group, name), ("", None, None)), group=group, span=spans.get(name),
                 widget="number" if (group, name) == ("window", "seeds") else None) for name, bound in bounds.items()]


#: Every knob, once: the generalisation window (``WindowConfig``: the page's form, group "window"; the shipped
#: study, group "window_study"), the random-features dynamics (``RFConfig``: "rf", "rf_study"), flow matching
#: (``FlowConfig``: "flow"), the explorations' arguments, and what the page shows (group "page").
KNOBS = knobs(
    *_config_rows("window", _WINDOW, seeds=(1, 4)),
    *_rows("window_study", **{**_WINDOW, "seeds": Range(2, 12, integer=True)}),
    *_config_rows("rf", _RF),
    *_rows("rf_study", **_RF),
    Knob("seeds", Range(2, 8, integer=True), group="rf_study_seeds"),
    *_rows("flow", ns=Each(Range(8, 1097, integer=True), max_len=4), seeds=Range(1, 12, integer=True),
           arms=Each(OneOf("cfm", "efm"), max_len=2), width=Range(16, 256, integer=True),
           steps=Range(100, 50_000, integer=True), batch=Range(16, 512, integer=True), lr=Range(1e-5, 1e-2),
           n_samples=Range(50, 2000, integer=True), euler_steps=Range(10, 200, integer=True),
           n_test=Range(100, 1000, integer=True), ckpt_per_decade=Range(1, 10, integer=True), k=Range(0.01, 1.0),
           seed=SEED),
    *_rows("process_2d", dataset=OneOf(*DATASETS_2D), n=Range(4, 512, integer=True),
           train_steps=Range(0, 20_000, integer=True), width=Range(8, 256, integer=True),
           n_samples=Range(50, 2000, integer=True), sampler_steps=Range(10, 200, integer=True), seed=SEED),
    *_rows("process_digits", n=Range(2, 1797, integer=True), n_samples=Range(1, 64, integer=True),
           sampler_steps=Range(10, 200, integer=True), seed=SEED),
    *_rows("els_digits", n=Range(2, 500, integer=True), P=OneOf(3, 5, 7), n_samples=Range(1, 16, integer=True),
           sampler_steps=Range(10, 200, integer=True), seed=SEED),
    *_rows("flow_alignment", n=Range(10, 2000, integer=True), ts=Maybe(Each(Range(0.0, 1.0), max_len=64)),
           draws=Range(50, 2000, integer=True), seed=SEED),
    *_rows("hybrid_sampling", n=Range(8, 512, integer=True), train_steps=Range(100, 20_000, integer=True),
           width=Range(8, 256, integer=True), taus=Maybe(Each(Range(0.0, 1.0), max_len=21)),
           n_samples=Range(100, 2000, integer=True), steps=Range(10, 500, integer=True), seed=SEED),
    # what the page shows
    Knob("data", OneOf(*DATASETS_2D, "digits"), "Data", id="viz_data", group="page", default=next(iter(DATASETS_2D)),
         labels={**DATASETS_2D, "digits": "8×8 digits (d = 64)"}, widget="selectbox"),
    Knob("u", OneOf(*(round(0.1 * k, 1) for k in range(11))), "Diffusion time u (0 = clean, 1 = pure noise)",
         id="viz_u", group="page", default=0.5),
    Knob("P", OneOf(3, 5, 7), "Patch size P", id="els_P", group="page", default=3, widget="select_slider"),
)
