"""What a page reads without importing the solver: the size limits of a class, the exact solver's budgets of time
and memory, the presets' names, the sweep's caps, every knob (``KNOBS``) and the cost model ``expected_seconds``.
Light: no numpy."""
from __future__ import annotations

from toymodels.knobs import Knob, knobs
from toymodels.realmodels import Text
from toymodels.topic import Each, OneOf, Range

MAX_POINTS = 16          # columns
MAX_HYPOTHESES = 1024    # rows
#: The largest text a visitor may type as a class (16 points x 1024 rows with separators is about 17,400).
MAX_CLASS_TEXT = 40_000
#: The most rows a typed class may have before duplicates are removed (4 x MAX_HYPOTHESES).
MAX_CLASS_ROWS = 4 * MAX_HYPOTHESES
PRESETS = {
    "thresholds": "Thresholds on n points",
    "intervals": "Intervals on n points",
    "singletons": "Singletons on n points",
    "all": "All functions on k points",
    "minimal3": "Minimal tree class (3 points)",
    "minimal7": "Minimal tree class (7 points)",
    "G": "The class G (7 points, notes §7)",
    "GxG": "G × G on disjoint domains (14 points)",
    "tree": "Random depth-d tree class, off-path prob. p",
    "custom": "Your own class (0/1 rows)",
}
#: Presets whose size the point slider n sets, and the largest n each allows (all functions: 2^n ≤ 1024 rows).
SIZED_PRESETS = {"thresholds": MAX_POINTS, "intervals": MAX_POINTS, "singletons": MAX_POINTS, "all": 10}
#: Work units per CPU second of the backward pass. Fitted to per-layer CPU times (process time, 14 classes from
#: 16 x 64 to 12 x 512, 146 layers; the fit is within 15 % of each class's time) on the 2-core development
#: machine, then rounded up ~20 %: a candidate row costs m + 30 units (one per hypothesis, plus its index
#: bookkeeping), numbering the cells of a suffix set 7 per hypothesis (a sort), and a pair of rows compared by
#: the Pareto filter m/20 (byte comparisons run ~20x faster than the comb step).
TR_WORK_PER_SECOND = 1.0e8
#: The limits of one exact solve: about 20 s of CPU and 256 MB of arrays (a hosted server has 2.7 GB for all
#: its sessions and two compute slots), whatever the class.
MAX_TR_SECONDS = 20.0
MAX_TR_WORK = MAX_TR_SECONDS * TR_WORK_PER_SECOND
MAX_TR_BYTES = 256 * 2**20
#: What a page may spend on a class before asking for a click (a link alone never starts more).
LINK_TR_SECONDS = 2.5
LINK_TR_WORK = LINK_TR_SECONDS * TR_WORK_PER_SECOND
MAX_SWEEP_SAMPLES = 300
#: Most classes one sweep may solve, per depth (depth 3 = 15 points costs about 0.15 s of CPU per class).
MAX_SWEEP_CLASSES = {1: 3600, 2: 3600, 3: 180}
#: CPU seconds to solve one random tree class exactly (LD and M_tr), by depth (bench/bench_online.py, one core).
SWEEP_SECONDS_PER_CLASS = {1: 0.002, 2: 0.002, 3: 0.15}


def expected_seconds(depth: int, classes: int) -> float:
    """Expected CPU seconds of a gap sweep over ``classes`` random depth-``depth`` tree classes (one core)."""
    return SWEEP_SECONDS_PER_CLASS[int(depth)] * int(classes)


# --------------------------------------------------------------------------- the knobs (one declaration each)

#: The class G of the notes (§7), one hypothesis per 0/1 row.
G_ROWS = "0010100 0100110 0101001 0101111 0111110 1000001 1011000 1101101"
LEARNER_NAMES = ("SOA", "Halving", "Rank rule")      # players.LEARNERS, by name
_SEED = Range(0, 10_000, integer=True)
_DEPTH = Range(1, 3, integer=True)
_WORK = Range(0, MAX_TR_WORK)

#: Every knob, once: the class a visitor picks (``preset_class``'s arguments, the page's section 1), the typed
#: class, the game (section 3), the sweep (``gap_sweep``) and the other entry points' arguments.
KNOBS = knobs(
    Knob("name", OneOf(*PRESETS), "Class", id="cls", labels=PRESETS, default="G", widget="selectbox"),
    Knob("n", Range(1, MAX_POINTS, integer=True), "n (points)", 1, id="n", default=7,
         help=f"For 'all functions' at most {SIZED_PRESETS['all']} points ({2 ** SIZED_PRESETS['all']} hypotheses)."),
    Knob("depth", _DEPTH, "tree depth d", 1, id="depth", default=2,
         help="Levels 0..d: 2^(d+1)−1 points, 2^(d+1) functions, LD = d+1."),
    Knob("p", Range(0.0, 1.0), "off-path p", 0.05, id="p", default=0.5),
    Knob("seed", _SEED, "seed", 1, id="seed", default=0, widget="number"),
    Knob("rows", Text(MAX_CLASS_TEXT), "Your class: one hypothesis per line as 0/1 (one digit per point)", id="rows",
         group="page", default=G_ROWS.replace(" ", "\n"), widget="text",
         help=f"At most {MAX_POINTS} points and {MAX_HYPOTHESES} distinct hypotheses. The exact solve stops at "
              f"{MAX_TR_SECONDS:g} s of CPU or {MAX_TR_BYTES // 2**20} MB (what a class needs shows only as it is "
              "solved: dense random classes of 12 or more points and 400 or more rows are often refused); one that "
              f"needs more than {LINK_TR_SECONDS:g} s waits for a button."),
    Knob("mode", OneOf("learner", "adversary", "compare"), "Mode", id="mode", group="page", default="learner",
         labels={"learner": "learner: you predict, against the optimal adversary",
                 "adversary": "adversary: you label, against a learner",
                 "compare": "compare: two learners, same optimal adversary"}),
    Knob("game", OneOf("transductive", "standard"), "Game", id="game", group="page", default="transductive",
         labels={"transductive": "transductive: the sequence is announced first",
                 "standard": "standard: the adversary picks points as it goes"}),
    Knob("opponent", OneOf(*LEARNER_NAMES), "Learner you play against", id="opp", group="page",
         default=LEARNER_NAMES[2], widget="selectbox"),
    Knob("a", OneOf(*LEARNER_NAMES), "Learner A", id="la", group="page", default=LEARNER_NAMES[0], widget="selectbox"),
    Knob("b", OneOf(*LEARNER_NAMES), "Learner B", id="lb", group="page", default=LEARNER_NAMES[2], widget="selectbox"),
    Knob("name", OneOf(*(k for k in PRESETS if k != "custom")), group="preset_class"),
    # the sweep: gap_sweep's arguments, and the page's form for them
    Knob("depth", _DEPTH, group="sweep"),
    Knob("ps", Each(Range(0.0, 1.0), max_len=12), group="sweep"),
    Knob("samples", Range(1, MAX_SWEEP_SAMPLES, integer=True), group="sweep"),
    Knob("seed", _SEED, group="sweep"),
    Knob("depth", _DEPTH, "tree depth d", 1, id="sw_depth", group="sweep_form", default=2,
         help=f"depth 3 = 15 points, about 0.15 s per class: at most {MAX_SWEEP_CLASSES[3]} classes in all"),
    Knob("p_range", Each(Range(0.0, 1.0), min_len=2, max_len=2), "p range", 0.05, id="sw_p", group="sweep_form",
         default=(0.1, 0.9), widget="range"),
    Knob("steps", Range(2, 12, integer=True), "p values", 1, id="sw_steps", group="sweep_form", default=5),
    Knob("samples", Range(1, MAX_SWEEP_SAMPLES, integer=True), "classes per p", 10, id="sw_n", group="sweep_form",
         span=(10, MAX_SWEEP_SAMPLES), default=100),
    Knob("seed", _SEED, "seed", 1, id="sw_seed", group="sweep_form", default=0, widget="number"),
    # the other entry points
    Knob("max_work", _WORK, group="solve"),
    Knob("max_k", Range(1, 16, integer=True), group="scaling"),
    Knob("tree_samples", Range(1, 50, integer=True), group="scaling"),
    Knob("seed", _SEED, group="scaling"),
    Knob("max_points", Range(1, 3, integer=True), group="checks"),
    Knob("random_classes", Range(0, 400, integer=True), group="checks"),
    Knob("seed", _SEED, group="checks"),
)
