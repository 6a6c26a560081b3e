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
    {"when": "pilot", "what": "x - y, seed 0: p = 31 (40 iterations) and p = 61 (30 iterations); D against wrapped "
     "anti-diagonals (the Hankel block of the official x - y control)",
     "outcome": "p = 31: onset (test accuracy >= 0.1) at 13, 0.886 at 39, D 0.920 -> 0.180; p = 61: onset 12, >= 0.9 "
     "at 15, 1.000 at 29, D 0.877 -> 0.120; random circulant (Hankel) control 0.956 (p = 31), 1.000 (p = 61)",
     "cpu": "1.1 s and 12.3 s"},
    {"when": "pilot", "what": "the official random-circulant construction, "
     "real(sqrtm([[I - 11ᵀ/p, C], [Cᵀ, I - 11ᵀ/p]])), seed 7, p = 13, 31, 61",
     "outcome": "x + y: symmetric to 1e-10, PSD, D < 1e-14. x - y: the block matrix has repeated negative eigenvalues, "
     "so no principal square root exists; scipy's answer at p = 13 and 31 is non-symmetric (|M - Mᵀ| up to 0.06), "
     "indefinite, D 0.09-0.10; at p = 61 it is symmetric and circulant. Kept as the official code does it (the "
     "kernel only sees M's symmetric part)", "cpu": ""},
    {"when": "timing", "what": "one AGOP at p = 61 (n = 1860, c = 61, d = 122), one thread: the official code's "
     "structure in numpy (the 110 MB n × c × d gradient tensor via K @ (A ⊗ XM)) against rfm.agop",
     "outcome": "official structure 2.4 s; rfm.agop with digit groups and 16 MB chunks 0.19 s (12×), same AGOP to "
     "2e-13 relative; rfm.agop's dense fallback (non-one-hot inputs) 23 s as a single einsum, 1.5 s after rewriting "
     "it as one matrix product per class. Kernel + LU solve: 0.16 s. A full iteration: 0.35-0.40 s (the issue's "
     "independent implementation: 2.3 s)", "cpu": "see outcome"},
    {"when": "tests", "what": "the shipped p31 view recomputed in pytest with numpy's default BLAS threads",
     "outcome": "float64 curves equal to 1e-9, but float32 metric snapshots differ in last bits (BLAS sums in "
     "another order); under one BLAS thread (the app's and precompute's policy) the recomputation is bit for bit",
     "cpu": ""},
    {"when": "cost model", "what": "wall time per iteration (+2 control solves), one thread: p = 11, 31, 47, 61 at "
     "f = 0.5; p = 31 at 0.9; p = 61 at 0.3 and 0.9",
     "outcome": "0.0007, 0.017, 0.095, 0.35 s; 0.038 s; 0.15 and 2.2 s: fitted as 0.005 s + 3.5e-11 s per flop of "
     "(2/3 n³ + (n² + n_te n) d + 2 n² c + n c d²) multiply-adds, conservative at p = 61, f = 0.5 (0.51 s predicted)",
     "cpu": "15 s"},
    {"when": "deciding run", "what": "the registered study (rules and thresholds committed in 0bc0562): 20 splits, "
     "seeds 100-119, p = 61, x + y, official defaults, 40 iterations, with both controls on each split (view seeds)",
     "outcome": "20/20 grok (onset 11-12, test accuracy >= 0.9 at 14-16, >= 0.9994 at iteration 39); early test MSE "
     "within 0.31 % of iteration 0's over iterations 0-4 on every split, last / first 0.486-0.500; D(onset - 1) / "
     "D(0) 0.266-0.300 (D0 0.827-0.915); random circulant M 0.992-1.000 on 19 splits, 0.781 on seed 101 (19/20 >= "
     "0.95); M = I 0.000 on all 20. 5 of 6 claims reproduced, the neural-network claim not testable here",
     "cpu": "344.8 + 17.4 s (674 s wall, shared machine)"},
    {"when": "fuzzer", "what": "the generic widget fuzzer: p = 61, f = 0.11, L = 0.5, s = 1; then p = 31, L = 0.5, "
     "s = 1 by hand",
     "outcome": "the kernel matrix turns singular mid-run (iteration 29 and 17: np.linalg.solve fails; ridge 0 as "
     "in the official code, which would fail the same way); p = 31 at s = 1 with L = 2.5 runs (test accuracy 0.12 "
     "at iteration 39). The page explains it and shows the shipped run; the package still raises LinAlgError "
     "(an InputError from rfm.solve would change the shipped views' definitions)", "cpu": ""},
    {"when": "issue 41 pilot", "what": "a two-layer network f = W2 (W1 x)^2 on p = 61, x + y, half the pairs (seeds 0 "
     "and 1): width 512, full-batch AdamW lr 1e-3, weight decay 1.0, evaluated every 100 steps, stop after 3 "
     "evaluations at test accuracy >= 0.99",
     "outcome": "both grok: train accuracy 0.95-0.96 at step 100, test accuracy 0.70-0.73 at 600, 1.00 at 1,000 "
     "(stopped at 1,200). W1^T W1's circulant deviation D 0.99 -> 0.88-0.90: not circulant by that measure. The "
     "registered run (issue 41) measures the network's AGOP (what RFM iterates), which the pilot did not look at, "
     "on fresh splits 100-107; W1^T W1 is reported beside it", "cpu": "416 s wall (2 seeds, shared machine)"},
    {"when": "issue 41", "what": "the identity control against iteration 0", "outcome": "M = I is RFM's M_0: the "
     "control's test accuracy equals iteration 0's on all 20 splits (checked exactly); the identity claim reads "
     "illustrated, not a second test", "cpu": ""},
    {"when": "issue 41", "what": "the registered network run (nn_seeds; rule, thresholds and splits 100-107 "
     "committed in 5cf7fc8 before it ran): 8 two-layer networks, width 512, AdamW lr 1e-3, weight decay 1.0, "
     "stopped 3 evaluations after test accuracy >= 0.99",
     "outcome": "8/8 grok (test accuracy >= 0.99 at step 900-1,000, stopped at 1,100-1,200; precondition met). The "
     "AGOP's circulant deviation D 0.99 -> 0.79-0.87: D_end / D_init x0.84, 90% t interval x0.82 to x0.86 (geometric "
     "mean), which excludes the paper's x0.25: nn-features not reproduced (RFM's own M: x0.27-0.30 before its "
     "onset). W1^T W1: D 0.99 -> 0.86-0.93. Not tested: whether longer training past grokking (weight decay keeps "
     "acting) makes the features more circulant; that needs a new registration on fresh splits",
     "cpu": "95 s user + 6 s sys, one thread, nice 10 (7 min wall, shared machine; peak RSS 0.67 GB)"},
)
