"""Gated attention: the configurations, their bounds and their cost (light: no torch).

``Config`` is one training run of the toy (the gated layer of paper Eq. 5 and its controls, see ``model``).
``KNOBS`` declares every knob once (its bound, label, the values the page offers, its URL id): the ``@bounded``
entry points and the page's ``ui.form`` read it. ``expected_seconds`` is the cost model (one CPU thread). The
shipped configurations live here too: the sink default ``SINK_CFG``, the massive-activation search
``SEARCH_CONFIGS`` and its pick ``MACT_CFG``, and the page's ``PRESETS``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from toymodels.knobs import Knob, knobs
from toymodels.realmodels import MAX_CHARS as REAL_MAX_CHARS
from toymodels.realmodels import MODELS as REAL_MODELS
from toymodels.realmodels import Text
from toymodels.topic import Each, InputError, OneOf, Range

VARIANTS: dict[str, str] = {
    "baseline": "Baseline (no gate)",
    "g1_elementwise": "G1 elementwise (SDPA output, head-specific)",
    "g1_headwise": "G1 headwise (one scalar per head)",
    "g1_headshared": "G1 elementwise, head-shared",
    "g2_elementwise": "G2 elementwise (value projection)",
    "g1_input_independent": "G1 input-independent σ(θ)",
    "g1_ns_sigmoid": "G1 NS-sigmoid 0.5 + 0.5σ",
}


#: the tasks (``data``): Bigram-Backcopy (Guo et al. 2024) and head-specific dormancy (this project's task for the
#: paper's head-shared control: two heads, each needed on its own half of the queries)
TASKS = {"bigram_backcopy": "Bigram-Backcopy", "head_specific": "Head-specific dormancy"}
COPY_RULES = ("back", "induction")   # what follows a trigger (see BigramBackcopy)
AFTER_DELIMITER = ("restart", "bigram")   # what follows a delimiter (see BigramBackcopy)
SINK_EPS = 0.3          # Gu et al.'s threshold ε
HIST_BINS = 20          # gate-score histogram bins on [0, 1]

#: budget on steps × batch × T × (d/64)² × layers (the knobs that set the cost of one training run):
#: 4× the default run, about a minute per model on 2 idle CPU cores
MAX_WORK = 4 * 400 * 32 * 128 * 2
#: budget of a seed sweep (a precomputed view, never a live run): about half an hour on one thread
SEED_SWEEP_WORK = 16 * MAX_WORK


ConfigError = InputError   # the old name (one error class for the package: toymodels.topic.InputError)


@dataclass(frozen=True)
class Config:
    """One training run. Defaults are the page's default view (2 layers, 2 heads, T = 128; notes §6)."""
    variant: str = "g1_elementwise"
    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 64
    seq_len: int = 128
    steps: int = 400
    batch_size: int = 32
    lr: float = 2e-2
    weight_decay: float = 0.1
    warmup: int = 50
    qk_norm: bool = True        # per-head RMSNorm on q and k, as Qwen3 (the paper's base model)
    pos: str = "learned"        # "rope" (rotary, as Qwen) or "learned" (absolute position embeddings, GPT-2)
    ffn_mult: int = 2        # SwiGLU hidden width = ffn_mult · d; 0 = attention-only blocks
    vocab: int = 64          # bigram tokens; <s> is token id `vocab`
    n_triggers: int = 3
    dirichlet: float = 0.1   # concentration of each bigram row
    seed: int = 0            # model init and batch sampling
    data_seed: int = 0       # the bigram chain itself
    eval_every: int = 50
    eval_batch: int = 32
    delimiter: float = 0.0   # probability of a delimiter token after a non-trigger (0 = plain Bigram-Backcopy)
    decay_embeddings: bool = True   # weight decay also on the token embedding (False: on the other matrices only)
    copy_rule: str = "back"  # after a trigger: "back" copies x_{t-2}; "induction" repeats what followed it before
    after_delimiter: str = "restart"   # the token after a delimiter: "restart" (uniform) or "bigram" (of x_{t-2})
    task: str = "bigram_backcopy"      # one of TASKS (the Bigram-Backcopy knobs above are ignored by the others)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def _work(cfg: Config) -> float:
    return cfg.steps * cfg.batch_size * cfg.seq_len * (cfg.d_model / 64) ** 2 * cfg.n_layers


def check_structure(cfg: Config) -> Config:
    """What no single bound says (each field's bound is in ``KNOBS``): the heads split the width into even head
    dimensions, and the triggers leave most of the vocabulary. Raises ConfigError with a plain message."""
    if cfg.d_model % cfg.n_heads:
        raise ConfigError(f"width {cfg.d_model} is not divisible by {cfg.n_heads} heads")
    if cfg.head_dim % 2:
        raise ConfigError(f"head dimension {cfg.head_dim} must be even (RoPE rotates pairs of dimensions)")
    if cfg.n_triggers >= cfg.vocab // 2:
        raise ConfigError("n_triggers must be below half the vocabulary")
    return cfg


#: memory budget of one live run (MB of arrays; glibc's heap adds up to ~2x in resident memory): two runs at once
#: beside the server must fit a 2.7 GB host (issue 25)
MAX_MEMORY_MB = 350.0


def memory_mb(cfg: Config, instances: int = 1) -> float:
    """The memory model (MB) of ``training.train`` with ``instances`` batched models (``lr_sweep``: one per
    learning rate), two phases.

    The measurement pass (``measure``, explicit attention) returns every layer's attention weights
    P = (instances, eval_batch, H, T, T) float32, and ``train`` holds the previous evaluation's result while it
    computes the next one, so an evaluation peaks at 2L maps plus two temporaries (scores, masked scores) of the
    layer being computed: (2L + 2)·P. At the end the final pass runs while the last evaluation is alive, and with
    RoPE the pass at twice the length (eval_batch/2 sequences of 2T: 2P per layer) while both are:
    (4L + 4)·P. A training step (SDPA: no T x T) keeps the autograd graph, ~110 bytes per (instances, B, T, d)
    entry and layer (q, k, v and gate projections, QK-norm, RoPE, the head transposes, the SwiGLU FFN at 4d).
    The 110 was fitted with ``bench/bench_memory.py`` (one CPU thread, glibc's mmap threshold fixed at 128 KiB)
    on ``attention.compare@page@350`` and ``attention.lr_sweep@page@350``: 500 and 618 MB measured; the map
    term was checked on ``attention#T128``, ``#T256``, ``#rope`` and ``#E3``. The two phases' arrays do not
    coexist, but glibc keeps the training graph's freed heap while the maps come on top, so in resident memory
    they add up: the model is their sum.
    """
    b, H, T, L = cfg.eval_batch, cfg.n_heads, cfg.seq_len, cfg.n_layers
    P = instances * b * H * T * T * 4
    maps = (4 * L + 4 if cfg.pos == "rope" else 2 * L + 2) * P
    train = 110 * instances * cfg.batch_size * T * cfg.d_model * L
    return (maps + train) / 2 ** 20


def check_budget(cfg: Config, factor: float = 1.0, instances: int = 1) -> None:
    """Raise InputError when ``factor`` trainings of ``cfg`` exceed the compute budget of one live run, or one
    training of ``instances`` batched models exceeds its memory budget (``memory_mb`` > ``MAX_MEMORY_MB``)."""
    work = _work(cfg) * factor
    if work > MAX_WORK:
        raise ConfigError(f"this run is {work / MAX_WORK:.1f}× over the compute budget of one live run: "
                          "lower steps, batch, sequence length, width or layers")
    mb = memory_mb(cfg, instances)
    if mb > MAX_MEMORY_MB:
        what = f"{instances} learning rates at once" if instances > 1 else "this run"
        raise ConfigError(f"{what} would need about {mb:,.0f} MB of memory, over the {MAX_MEMORY_MB:.0f} MB limit "
                          "of one live run: lower the sequence length, heads, layers or batch"
                          + (", or try fewer learning rates" if instances > 1 else ""))


#: expected CPU seconds of one training step per unit of ``_work / steps`` (measured: 4 layers, d 64, T 64,
#: batch 32 takes about 75 ms a step on one thread of this 2-core machine)
SECONDS_PER_WORK = 0.075 / (32 * 64 * 4)


#: reading texts with all-MiniLM-L6-v2 (``minilm``): loading it once per process, then per text (one thread)
MINILM_LOAD_SECONDS, MINILM_SECONDS_PER_TEXT = 6.0, 0.05


def expected_seconds(what: Config | list[str], n: int = 1) -> float:
    """The cost model: about how long ``n`` trainings of a config take on one CPU thread, or reading a list of
    texts with MiniLM (loading it included); for the buttons that state a run's cost."""
    if isinstance(what, Config):
        return float(SECONDS_PER_WORK * _work(what) * n)
    return MINILM_LOAD_SECONDS + MINILM_SECONDS_PER_TEXT * len(what) * n


def _live_budget(cfg, variants=("baseline",), **_) -> None:
    check_structure(cfg)
    check_budget(cfg)



# --------------------------------------------------------------------------- the shipped configurations

#: Every search configuration shares these (the directions issue 19 lists: 4 layers, 4 heads, RoPE, a fixed
#: <s>, no QK-norm, 2000 steps at 64 tokens, weight decay on matrices but not on the token embedding).
SEARCH_BASE = dict(n_layers=4, n_heads=4, d_model=64, seq_len=64, batch_size=32, pos="rope", qk_norm=False,
                   lr=1e-2, steps=2000, warmup=100, eval_every=100, decay_embeddings=False, weight_decay=0.1)
#: name -> (what differs from SEARCH_BASE, why it was tried)
SEARCH_CONFIGS = {
    "A": (dict(), "Bigram-Backcopy, lr 1e-2"),
    "B": (dict(delimiter=0.1), "a delimiter after 10% of non-triggers (Sun et al.: massive on '.' and '\\n')"),
    "C": (dict(delimiter=0.1, lr=3e-2), "B at a larger learning rate"),
    "D": (dict(delimiter=0.1, qk_norm=True, lr=2e-2), "B with per-head QK-norm (Qwen3), lr 2e-2"),
    "E": (dict(lr=3e-2), "A at a larger learning rate"),
    "F": (dict(delimiter=0.1, seq_len=128, batch_size=16), "B at T = 128 (sinks grow with context)"),
    "G": (dict(delimiter=0.1, decay_embeddings=True), "B with weight decay on the embedding too"),
    "H": (dict(delimiter=0.1, seed=1), "B, second seed"),
    "I": (dict(delimiter=0.1, lr=3e-2, copy_rule="induction"),
          "C with an induction copy (a trigger repeats what followed its first occurrence): the copy needs a "
          "head in layer 2 or later, so the sink must form after layer 1"),
    "W": (dict(delimiter=0.1, lr=3e-2, d_model=128), "C at width 128 (one dimension can dominate more easily)"),
    "L": (dict(delimiter=0.1, lr=3e-2, after_delimiter="bigram", steps=3000), "T at 3000 steps"),
    "C2": (dict(delimiter=0.1, lr=3e-2, seed=2), "C, seed 2"),
    "T": (dict(delimiter=0.1, lr=3e-2, after_delimiter="bigram"),
          "C with transparent delimiters (the token after one is a bigram draw from the token before it), so no "
          "token but <s> has a fixed next-token law: no output-side reason for a large fixed value"),
    "T1": (dict(delimiter=0.1, lr=3e-2, after_delimiter="bigram", seed=1), "T, seed 1"),
    "T2": (dict(delimiter=0.1, lr=3e-2, after_delimiter="bigram", seed=2), "T, seed 2"),
    "B400": (dict(delimiter=0.1, steps=400, warmup=50, eval_every=50),
             "B at 400 steps (what fitted an earlier session's CPU budget)"),
}


def search_config(name: str) -> Config:
    """The configuration of one row of the search (variant: baseline; pass it to ``replace`` for others)."""
    if name not in SEARCH_CONFIGS:
        raise InputError(f"unknown search configuration {name!r}; choose one of {', '.join(SEARCH_CONFIGS)}")
    return Config(**{**SEARCH_BASE, **SEARCH_CONFIGS[name][0], "variant": "baseline"})


#: The sink experiment (the page's default comparison and the quick reproduction).
SINK_CFG = Config()
DEFAULT = SINK_CFG
DEFAULT_VARIANTS = ["baseline", "g1_elementwise", "g1_headwise"]
ALL_VARIANTS = list(VARIANTS)
DEFAULT_LRS = [3e-3, 1e-2, 3e-2]
#: The massive-activation experiment: the search configuration shipped beside the sink (see MACT_SEARCH).
MACT_NAME = "T"
MACT_CFG = search_config(MACT_NAME)
MACT_VARIANTS = ["baseline", "g1_elementwise", "g1_headshared"]

#: Fresh seeds for the claims (the model's init and batches; the task is the same): each was first run after the
#: claims' tests were committed. The shipped sink default uses seed 0 and search rows T, T1, T2 seeds 0-2, all
#: seen before; the HSD pilot used HSD_PILOT_SEED.
SINK_SEEDS = (1, 2, 3, 4, 5)
MACT_SEEDS = (3, 4, 5, 6, 7)
#: Issue 41: fresh seeds for the input-independent gate on Bigram-Backcopy (registered before the run; its first 5
#: seeds gave an interval straddling one half).
II_SEEDS = tuple(range(200, 215))
HSD_SEEDS = (5, 6, 7, 8, 9)      # 0-4 went to the first pick, P4, whose baseline learned the task in 1 seed of 5

#: The head-specific-dormancy task (``data.HeadSpecificDormancy``): head dimension 8, so that two heads cannot
#: split a shared gate's dimensions between them; vocabulary 32 (16 tokens a head); the rest as the sink default.
#: The candidates, tried on the baseline only (``HSD_PILOT_SEED``), in this order; ``notebook.HSD_RULE`` picks one.
HSD_BASE = dict(task="head_specific", vocab=32)
HSD_PILOTS = {
    "P1": (dict(n_layers=1, n_heads=2, d_model=16), "1 layer, 2 heads of d_h 8: one head for each half"),
    "P2": (dict(n_layers=1, n_heads=4, d_model=32), "1 layer, 4 heads of d_h 8 (width 32)"),
    "P3": (dict(n_layers=2, n_heads=2, d_model=16), "2 layers, 2 heads of d_h 8 (the sink default's depth)"),
    "P4": (dict(n_layers=2, n_heads=4, d_model=32), "2 layers, 4 heads of d_h 8 (width 32)"),
    "P5": (dict(n_layers=1, n_heads=2, d_model=16, steps=800), "P1 at 800 steps"),
    "P6": (dict(n_layers=2, n_heads=4, d_model=32, steps=800), "P4 at 800 steps"),
    "P7": (dict(n_layers=2, n_heads=4, d_model=32, steps=1600), "P4 at 1600 steps"),
}
HSD_PILOT_SEED = 100
#: The second pilot (after P4, picked on one pilot seed, learned the task in 1 of the 5 claim seeds 0-4): candidates
#: P6 and P7, each baseline on three pilot seeds; notebook.HSD_RULE2 picks one.
HSD_PILOT2 = ("P6", "P7")
HSD_PILOT2_SEEDS = (101, 102, 103)


def hsd_config(name: str) -> Config:
    """The head-specific-dormancy configuration ``name`` of ``HSD_PILOTS`` (variant: baseline)."""
    if name not in HSD_PILOTS:
        raise InputError(f"unknown head-specific-dormancy configuration {name!r}; choose one of "
                         f"{', '.join(HSD_PILOTS)}")
    return Config(**{**HSD_BASE, **HSD_PILOTS[name][0], "variant": "baseline"})

#: The candidate notebook.HSD_RULE picked from the pilot's baseline runs (notebook.HSD_PILOT, 2026-11-25): P1 and
#: P3 did not learn the task, P2 learned it with too weak a sink (F-Attn 0.068 against 2 x 0.035), P4 did both.
HSD_NAME = None      # the second pilot's pick (notebook.HSD_RULE2); the first rule picked P4
HSD_CFG = hsd_config(HSD_NAME) if HSD_NAME else None


#: The page's presets: id -> (label, configuration). The shipped ones show at once; the others need a training.
PRESETS = {
    "default": ("Sink default: Bigram-Backcopy, 2 layers × 2 heads, T = 128, QK-norm, lr 2e-2 (shipped)", SINK_CFG),
    "hsd": (f"Head-specific dormancy (shipped, seed {HSD_SEEDS[0]})",
            replace(HSD_CFG, variant="g1_elementwise", seed=HSD_SEEDS[0])) if HSD_CFG else
           (f"Head-specific dormancy ({HSD_PILOT2[0]}, the second pilot's first candidate; a live run)",
            replace(hsd_config(HSD_PILOT2[0]), variant="g1_elementwise", seed=HSD_SEEDS[0])),
    "massive": (f"Massive-activation configuration ({MACT_NAME}, shipped)", MACT_CFG),
    "no_qknorm": ("Without QK-norm, lr 1e-2", replace(SINK_CFG, qk_norm=False, lr=1e-2)),
    "rope_notes": ("Notes' CPU setup: RoPE, no QK-norm, lr 3e-3",
                   replace(SINK_CFG, pos="rope", lr=3e-3, qk_norm=False)),
    "rope_qknorm": ("Paper-like: RoPE + QK-norm (as Qwen3)", replace(SINK_CFG, pos="rope", qk_norm=True)),
    "deeper": ("Deeper: 3 layers, 4 heads, 300 steps", replace(SINK_CFG, n_layers=3, n_heads=4, steps=300)),
}


# --------------------------------------------------------------------------- the knobs (one declaration each)

MAX_TEXTS = 8          # texts per MiniLM call
MAX_PROMPTS = 48        # prompts per call (the registered set has 32)
VISITOR_CHARS = 1000    # a visitor's prompt: at most this many characters (and MAX_TOKENS tokens)
MAX_TOKENS = 256        # tokens per traced text (SmolLM2: 30 x 9 x 256^2 float32 maps = 71 MB)
MAX_CHARS = 400        # characters per text MiniLM reads (at most 256 tokens)
_SEED = Range(0, 2**31 - 1, integer=True)
_LR = Range(1e-4, 3e-2)
_STEPS = Range(50, 3000, integer=True)

#: Every knob, once: ``Config``'s fields (the entry points' ``cfg``), the other arguments of the entry points, and
#: what the page's Explore tab offers (group "page"), each with its URL id.
KNOBS = knobs(
    Knob("n_layers", Range(1, 4, integer=True), "Layers", (1, 2, 3, 4), id="ga_n_layers"),
    Knob("n_heads", Range(1, 8, integer=True), "Heads", (1, 2, 4, 8), id="ga_n_heads"),
    Knob("d_model", Range(16, 128, integer=True), "Width d", (16, 32, 64, 96, 128), id="ga_d_model"),
    Knob("seq_len", Range(32, 256, integer=True), "Sequence length T", (64, 96, 128, 192, 256), id="ga_seq_len"),
    Knob("steps", _STEPS, "Steps", tuple(range(50, 3001, 50)), id="ga_steps"),
    Knob("lr", _LR, "Learning rate", (1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 3e-2), id="ga_lr"),
    Knob("seed", _SEED, "Seed", id="ga_seed", help="The model's initialisation and its batches"),
    Knob("pos", OneOf("learned", "rope"), "Positions", id="ga_pos", labels={"learned": "learned", "rope": "RoPE"}),
    Knob("qk_norm", OneOf(True, False), "Per-head QK-norm", id="ga_qk_norm"),
    Knob("variant", OneOf(*VARIANTS)),
    Knob("batch_size", Range(4, 64, integer=True)),
    Knob("ffn_mult", Range(0, 4, integer=True)),
    Knob("weight_decay", Range(0.0, 0.5)),
    Knob("warmup", Range(0, 3000, integer=True)),
    Knob("vocab", Range(8, 128, integer=True)),
    Knob("n_triggers", Range(1, 8, integer=True)),
    Knob("dirichlet", Range(0.01, 10.0)),
    Knob("data_seed", _SEED),
    Knob("eval_every", Range(1, 3000, integer=True)),
    Knob("eval_batch", Range(1, 64, integer=True)),
    Knob("delimiter", Range(0.0, 0.25)),
    Knob("decay_embeddings", OneOf(True, False)),
    Knob("copy_rule", OneOf(*COPY_RULES)),
    Knob("after_delimiter", OneOf(*AFTER_DELIMITER)),
    Knob("task", OneOf(*TASKS)),
    # the other arguments of the entry points
    Knob("variants", Each(OneOf(*VARIANTS), max_len=len(VARIANTS)), group="run"),
    Knob("switch", Range(1, _STEPS.hi - 1, integer=True), group="run"),
    Knob("seeds", Each(_SEED, max_len=16), group="run"),
    Knob("lrs", Each(_LR, max_len=8), "Learning rates", (1e-3, 3e-3, 1e-2, 2e-2, 3e-2), id="ga_lrs", group="run",
         default=(3e-3, 1e-2, 3e-2)),
    # what the page shows
    Knob("preset", OneOf(*PRESETS), "Preset", id="ga_preset", labels={k: v[0] for k, v in PRESETS.items()},
         group="page", default="default", widget="selectbox",
         help="Fills the settings below. Shipped presets show at once; the others need Train."),
    Knob("variant", OneOf(*VARIANTS), "Gated variant to compare with the baseline", tuple(VARIANTS)[1:],
         id="ga_variant", labels=VARIANTS, group="page", default="g1_elementwise", widget="selectbox"),
    Knob("layer", Range(1, 4, integer=True), "Layer", (1, 2, 3, 4), id="ga_layer", group="page", default=1,
         widget="selectbox"),
    Knob("head", Range(1, 8, integer=True), "Head", tuple(range(1, 9)), id="ga_head", group="page", default=1,
         widget="selectbox"),
    Knob("shown", Range(32, 64, integer=True), "Positions shown", (32, 48, 64), id="ga_shown", group="page",
         default=48),
    Knob("hsd_layer", Range(1, 4, integer=True), "Layer", (1, 2, 3, 4), id="ga_hsd_layer", group="page",
         labels={i: f"layer {i}" for i in range(1, 5)}, default=1, widget="segmented"),
    Knob("texts", Each(Text(MAX_CHARS), max_len=MAX_TEXTS), group="run"),
    Knob("key", OneOf(*REAL_MODELS), group="trace"),
    Knob("text", Text(REAL_MAX_CHARS), group="trace"),
    Knob("attentions", OneOf(True, False), group="trace"),
    Knob("hidden", OneOf(True, False), group="trace"),
    Knob("max_tokens", Range(2, MAX_TOKENS, integer=True), group="trace"),
    Knob("nll", OneOf(True, False), group="trace"),
    Knob("key", OneOf(*REAL_MODELS), group="real_model"),
    Knob("texts", Each(Text(REAL_MAX_CHARS), max_len=MAX_PROMPTS), group="real_model"),
    Knob("ablation", OneOf(True, False), group="real_model"),
    Knob("key", OneOf(*REAL_MODELS), group="real_prompt"),
    Knob("text", Text(VISITOR_CHARS), "Your own prompt for SmolLM2", id="ga_real_text", group="real_prompt",
         default="", widget="text", help="A sentence or a paragraph (at most 256 tokens)"),
    Knob("text", Text(MAX_CHARS), "Your own sentence", id="ga_text", group="page", default="", widget="text",
         help="Type a sentence and press the button to read MiniLM's attention on it"),
)

