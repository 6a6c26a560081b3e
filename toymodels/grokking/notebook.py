"""The lab notebook: every configuration tried while building this toy, failures included (the page's last tab).

Each entry: ``when`` (the step of the work), ``what`` (the configuration), ``outcome`` (what it showed, in numbers),
``cpu`` (CPU time on one thread, when measured). Entries are added, never edited away.
"""
from __future__ import annotations

LAB_NOTEBOOK: tuple[dict, ...] = (
    {"when": "pilot", "what": "p = 61, x + y, official defaults (f = 0.5, L = 2.5, s = 1/2, λ = 0), seed 0, 26 "
     "iterations; AGOP by digit groups in 16 MB chunks",
     "outcome": "test accuracy 0.000 through iteration 9, 0.075 (11), 0.309 (12), 0.583 (13), 0.785 (14), 0.947 (16), "
     "0.991 (18), 1.000 (25); train accuracy 1.000 throughout; test MSE 0.0178 for iterations 0-6; D 0.855 (0), "
     "0.497 (5), 0.275 (10): the issue's independent numbers for seed 0, digit for digit",
     "cpu": "0.40 s per iteration"},
    {"when": "pilot", "what": "p = 31, x + y, official defaults otherwise, seed 0, 30 iterations",
     "outcome": "test accuracy 0.000 through iteration 10, 0.135 (13), 0.301 (15), 0.617 (20), 0.834 (29); test MSE "
     "0.0381-0.0386 for iterations 0-5; D 0.884 (0) -> 0.212 (29)", "cpu": "0.02 s per iteration"},
    {"when": "pilot", "what": "which structure: D against wrapped diagonals (j - i mod p, circulant) and against "
     "wrapped anti-diagonals (i + j mod p, Hankel), x + y, p = 31 and 61, seed 0",
     "outcome": "circulant D falls (0.855 -> 0.136 at p = 61); Hankel D stays at 0.996-1.000: for x + y the "
     "off-diagonal block turns circulant, as the official control (scipy.linalg.circulant) assumes", "cpu": ""},
)
