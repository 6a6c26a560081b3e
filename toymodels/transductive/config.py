"""What a page reads without importing the solver: the size limits of a class, the exact solver's budgets of time
and memory, the presets' names, the sweep's caps and the cost model ``expected_seconds``. Light: no numpy."""
from __future__ import annotations

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
