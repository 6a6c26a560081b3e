"""Configuration and bounds of the superposition toy: light (NumPy at most), read by the page and the contract.

Every knob a visitor can set is declared here, once, in ``KNOBS`` (its bound, label, the values the page offers, its
URL id): one model (``Config``), the geometry, the γ and width sweeps, and what the page shows; with the
cross-argument budgets that keep one call under about a minute on a 2-core CPU (``work_units`` / ``check_work``).
``expected_seconds`` is the cost model; the shipped views' settings (``SCALING``, ``NEFF``) and ``--quick``'s
(``QUICK``) are declared here too.
"""
from __future__ import annotations

from dataclasses import dataclass

from toymodels.knobs import Knob, knobs
from toymodels.topic import Each, InputError, Maybe, OneOf, Range

from .data import PROFILES, feature_probs

CONV_TOL = 0.02                    # the convergence criterion: |ΔL|/L < 2 % over the last 20 % of training
CONV_WINDOW = 0.2
MAX_WORK = 1.2e10   # steps × batch × n × Σ(1 + m/32) for one live call (≈ 1-2 min on 2 CPU cores)
MAX_MODELS = 64


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Config:
    """One toy model. Defaults are the notes' small-CPU setting in the strong regime."""
    n: int = 1000          # number of features
    m: int = 20            # width (hidden dimension)
    alpha: float = 1.0     # paper's α: p_i ∝ i^(-α) (the code's alpha is α − 1)
    gamma: float = -1.0    # Eq. 2 weight decay (> 0) or growth toward unit norm (< 0)
    E: float = 1.0         # activation density Σ p_i
    steps: int = 4000
    batch: int = 256
    lr: float = 1e-2       # peak Adam learning rate
    warmup: float = 0.1    # fraction of steps of linear warmup
    seed: int = 0
    profile: str = "power"  # power (i^-α), exponential (e^{-i/τ}), linear (n + 1 − i)


PRESETS = {
    "paper: strong": dict(gamma=-1.0, alpha=1.0),
    "paper: weak": dict(gamma=0.1, alpha=1.5),
}


def work_units(n: int, ms, steps: int, batch: int) -> float:
    """A cost model for one training call: the elementwise passes over (batch × n) dominate at small m."""
    return float(steps) * batch * n * sum(1.0 + m / 32.0 for m in ms)


MAX_MB = 350.0        # modelled memory of one live call (issue-25 memory report's proposal for every topic)


def memory_mb(n: int, ms, batch: int, E: float = 1.0) -> float:
    """Modelled peak memory (MB) of a training call: every width group keeps a (I_g, B, n) float32 work buffer
    for the whole run and W with its gradient and Adam's moments (16 bytes per (I, n, m) entry); the group being
    stepped adds ~10 bytes per (I_g, B, n) entry (the positive entries' mask and indices, and on the dense path
    res²) or its evaluation's (I_g, 1024, n) float32 block; the E·B active entries of each model are gathered as
    (active, m) rows ~2.5 times; ~90 MB of evaluation sets, data blocks and first allocations (the fitted model of
    bench/bench_memory.py's ``model_superposition``)."""
    groups: dict[int, int] = {}
    for m in ms:
        groups[int(m)] = groups.get(int(m), 0) + 1
    I_max, I_all, m_max = max(groups.values()), sum(groups.values()), max(groups)
    zbuf = 4 * batch * n * I_all + 16 * n * sum(m * k for m, k in groups.items())
    step = max(10 * I_max * batch * n, 4 * I_max * 1024 * n)
    active = 10 * E * max(batch, 1024) * I_max * m_max
    return 90 + (zbuf + step + active) / 2**20


def check_work(n: int, ms, steps: int, batch: int, what: str = "this run", E: float = 1.0) -> None:
    """Raise InputError when a live call would train too many models, do too much work (time) or hold too much
    memory (``memory_mb`` over ``MAX_MB``)."""
    if len(ms) > MAX_MODELS:
        raise InputError(f"{what} trains {len(ms)} models; the limit is {MAX_MODELS}")
    work = work_units(n, ms, steps, batch)
    if work > MAX_WORK:
        raise InputError(f"{what} is too large for a live demo (steps × batch × n × models ≈ {work:.2g} "
                         f"> {MAX_WORK:.2g}): lower steps, batch, n or the number of widths")
    mem = memory_mb(n, ms, batch, E)
    if mem > MAX_MB:
        raise InputError(f"{what} would hold about {mem:.0f} MB (the limit of a live demo is {MAX_MB:.0f} MB): "
                         "lower the batch, n or the number of models")


def _config_budget(cfg: Config, **_) -> None:
    if cfg.m > cfg.n:
        raise InputError(f"width m = {cfg.m} must not exceed the number of features n = {cfg.n}")
    feature_probs(cfg.n, cfg.alpha, cfg.E, cfg.profile)     # raises if some p_i > 1
    check_work(cfg.n, [cfg.m], cfg.steps, cfg.batch, E=cfg.E)


# --------------------------------------------------------------------------- the live calls' bounds


GEOMETRY_GAMMAS = (-1.0, -0.5, -0.25, 0.0, 0.25, 0.5)
GEOMETRY_SECONDS = 4


def _gamma_budget(n, m, gammas, steps, batch, E=1.0, **_):
    if m > n:
        raise InputError(f"width m = {m} must not exceed the number of features n = {n}")
    check_work(n, [m] * len(list(gammas or range(10))), steps, batch, "this γ sweep", E=E)



HEADLINE_REGIMES = [dict(name="strong", gamma=-1.0, alpha=1.0, profile="power"),
                    dict(name="weak", gamma=0.1, alpha=1.5, profile="power")]
REGIME_NAMES = tuple(rg["name"] for rg in HEADLINE_REGIMES)


def _sweep_budget(n, ms, regimes, steps, batch, seeds, **_):
    ms = [int(m) for m in ms]
    if len(set(ms)) != len(ms) or len(ms) < 2:
        raise InputError("give at least two distinct widths")
    if max(ms) > n:
        raise InputError(f"the widest model (m = {max(ms)}) must not exceed the number of features n = {n}")
    check_work(n, [m for m in ms for _ in regimes for _ in seeds], steps, batch, "this width sweep")


STEP_SECONDS = 1.4e-3         # CPU seconds per step of a live call, whatever its size (data, Adam, checkpoints) …
SECONDS_PER_UNIT = 3e-9       # … plus this per work unit (one thread; fitted on runs of m = 20 and 100 and a sweep)
SWEEP_SECONDS_PER_UNIT = 2.7e-9  # a long converged sweep (the shipped scaling view: 178 CPU-s for 6.7e10 units)
CONTINUATION = 1.3             # converged sweeps run on past their schedule (steps_run up to 1.4 × steps)


def expected_seconds(n: int, ms, steps: int, batch: int, sweep: bool = False) -> float:
    """Expected CPU seconds of a training call on one thread: a live call of exactly ``steps`` steps, or (with
    ``sweep``) a sweep trained to convergence (``CONTINUATION`` × its scheduled steps on average)."""
    if sweep:
        return work_units(n, ms, steps, batch) * SWEEP_SECONDS_PER_UNIT * CONTINUATION
    return steps * STEP_SECONDS + work_units(n, ms, steps, batch) * SECONDS_PER_UNIT


# --------------------------------------------------------------------------- the shipped views' settings


NEFF_RATIOS = (0.5, 1.0, 2.0, 4.0)
#: The headline view: widths 10…160 (the fits over m ≥ 20 span three octaves), five seeds not used before (seed 0
#: was the earlier, one-seed run), the three profiles at N_eff = 5 × 160.
SCALING = dict(n=1000, ms=[10, 20, 40, 80, 160], steps=12000, batch=128, max_steps=24000, seeds=[1, 2, 3, 4, 5])
NEFF = dict(n=1000, ms=[10, 20, 40, 80], steps=12000, batch=128, max_steps=24000)
# --quick: a smaller problem (n = 500, m = 10…80) trained to the same criterion, a few minutes on one core
QUICK = dict(n=500, ms=[10, 20, 40, 80], steps=6000, batch=128, max_steps=12000)
#: The strong regime at m = 10 under the paper's two recipes: its large-model rates (exp-17: lr_W = 0.02·(8/m)^¼,
#: lr_b = 2/m, 5 % warmup) for 2000 steps and to convergence, and its small-model rates (exp-10: lr 1e-2 on W and
#: b, 10 % warmup; here batch 256 rather than 2048) to convergence.
M10_RECIPES = (
    dict(name="large-model rates, 2000 steps", lr_recipe="paper-large", steps=2000, batch=128, warmup=0.05,
         max_steps=None),
    dict(name="large-model rates, converged", lr_recipe="paper-large", steps=12000, batch=128, warmup=0.05,
         max_steps=24000),
    dict(name="small-model rates, converged", lr_recipe="constant", steps=8000, batch=256, warmup=0.1,
         max_steps=16000),
)
M10 = dict(n=1000, m=10, seeds=[1, 2, 3, 4, 5])
SMALL_MODELS = dict(n=1000, ms=[10, 15, 25, 39, 63, 100], steps=20000, batch=2048, max_steps=40000)   # App. B.2


# --------------------------------------------------------------------------- the knobs (one declaration each)

_SEED = Range(0, 2**31 - 1, integer=True)
_STEPS = Range(10, 8000, integer=True)
_BATCH = Range(8, 1024, integer=True)
_G = Range(-2.0, 2.0)


def _rows(group: str, **bounds) -> list[Knob]:
    return [Knob(name, bound, group=group) for name, bound in bounds.items()]


#: key -> (model name, what the rows are, width m)
EMBEDDINGS = {"smollm2": ("SmolLM2-135M-Instruct", "tied input embedding = LM head", 576),
              "minilm": ("all-MiniLM-L6-v2", "word embeddings (BERT's MLM head was tied to them)", 384),
              "gemma3": ("Gemma-3-270M", "tied input embedding = LM head", 640)}


#: Every knob, once: one model (``Config``, the page's "Train one model"), the geometry (group "geometry"), the γ
#: and width sweeps (their entry points' arguments, and the page's sweep form, group "sweep"), and what the page
#: shows (group "page").
KNOBS = knobs(
    Knob("preset", OneOf(*PRESETS, "custom"), "Preset", id="preset", group="page", default="paper: strong",
         widget="selectbox"),
    Knob("n", Range(2, 2000, integer=True), "features n", 10, id="n", span=(10, 2000), widget="number"),
    Knob("m", Range(1, 128, integer=True), "width m", 1, id="m", span=(2, 128), widget="number"),
    Knob("alpha", Range(0.0, 3.0), "α", 0.125, id="alpha", span=(0.0, 2.5)),
    Knob("gamma", _G, "γ", 0.05, id="gamma", span=(-1.5, 1.0)),
    Knob("E", Range(0.01, 20.0), "density E", 0.1, id="E", span=(0.1, 5.0)),
    Knob("steps", _STEPS, "steps", 100, id="steps", span=(100, 8000), widget="number"),
    Knob("batch", _BATCH, "batch", (32, 64, 128, 256, 512), id="batch"),
    Knob("lr", Range(1e-5, 0.1), "peak lr", (1e-3, 3e-3, 1e-2, 3e-2), id="lr"),
    Knob("seed", _SEED, "seed", 1, id="seed", span=(0, 10_000), widget="number"),
    Knob("profile", OneOf(*PROFILES), "profile", id="profile", widget="selectbox"),
    Knob("warmup", Range(0.0, 0.99)),
    # the geometry: a handful of features in two or three dimensions
    Knob("n", Range(3, 20, integer=True), "features n", 1, id="geo_n", group="geometry", span=(3, 12), default=5),
    Knob("m", OneOf(2, 3), "dimensions m", id="geo_m", group="geometry", default=2, widget="segmented"),
    Knob("alpha", Range(0.0, 3.0), "frequency exponent α", 0.25, id="geo_alpha", group="geometry", span=(0.0, 2.0),
         default=0.0),
    Knob("E", Range(0.01, 1.0), "density E (Σp_i)", (0.05, 0.1, 0.2, 0.5, 1.0), id="geo_E", group="geometry",
         default=0.1),
    *_rows("geometry", gammas=Each(_G, max_len=8), steps=Range(100, 6000, integer=True), batch=_BATCH,
           lr=Range(1e-4, 0.1), seed=_SEED),
    Knob("gamma", OneOf(*GEOMETRY_GAMMAS), "γ (signed weight decay): from strong (−1) to weak (+0.5)", id="geo_gamma",
         group="page", labels={g: f"{g:+.2f}" for g in GEOMETRY_GAMMAS}, default=GEOMETRY_GAMMAS[0]),
    Knob("ratio", OneOf(*NEFF_RATIOS), "N_eff as a multiple of the largest width (exponential profile, strong regime)",
         id="neff_ratio", group="page", labels={r: f"{r:g}×" for r in NEFF_RATIOS}, default=NEFF_RATIOS[-1]),
    # the live sweeps' entry points
    *_rows("gamma_sweep", n=Range(10, 2000, integer=True), m=Range(2, 128, integer=True), alpha=Range(0.0, 3.0),
           E=Range(0.01, 20.0), gammas=Maybe(Each(_G, max_len=32)), steps=_STEPS, batch=_BATCH, lr=Range(1e-5, 0.1),
           seed=_SEED),
    *_rows("width_sweep", n=Range(10, 2000, integer=True), ms=Each(Range(2, 128, integer=True), max_len=12),
           regimes=Each(OneOf(*REGIME_NAMES), max_len=2), steps=_STEPS, batch=_BATCH, seeds=Each(_SEED, max_len=4),
           lr_recipe=OneOf("constant", "paper-large"), warmup=Range(0.0, 0.5)),
    # the page's sweep form
    Knob("kind", OneOf("width", "gamma"), "Sweep over", id="sw_kind", group="sweep", default="width",
         labels={"width": "width m", "gamma": "weight decay γ"}),
    Knob("steps", _STEPS, "steps", 100, id="sw_steps", group="sweep", span=(100, 6000), default=1000,
         widget="number"),
    Knob("batch", _BATCH, "batch", (32, 64, 128, 256), id="sw_batch", group="sweep", default=128),
    Knob("n", Range(10, 2000, integer=True), "features n", 50, id="sw_n", group="sweep", span=(50, 2000),
         default=1000, widget="number"),
    Knob("seed", _SEED, "seed", 1, id="sw_seed", group="sweep", span=(0, 10_000), default=0, widget="number"),
    Knob("ms", Each(Range(2, 128, integer=True), max_len=12), "widths m", (5, 8, 10, 16, 20, 32, 40, 64, 80, 100, 128),
         id="sw_ms", group="sweep", default=(10, 20, 40, 80)),
    Knob("regimes", Each(OneOf(*REGIME_NAMES), max_len=2), "regimes", id="sw_reg", group="sweep",
         default=REGIME_NAMES),
    Knob("grange", Each(_G, min_len=2, max_len=2), "γ range", 0.05, id="sw_grange", group="sweep",
         span=(-1.5, 1.0), default=(-1.0, 1.0), widget="range"),
    Knob("gcount", Range(2, 16, integer=True), "number of γ values", 1, id="sw_gcount", group="sweep", default=10),
    Knob("m", Range(2, 128, integer=True), "width m", 1, id="sw_gm", group="sweep", default=20, widget="number"),
    Knob("models", Each(OneOf(*EMBEDDINGS), max_len=len(EMBEDDINGS)), group="llm"),
)
