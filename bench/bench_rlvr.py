"""Time pass@k over 10,000 problems x every k <= 1024 against the straightforward math.comb loop.

Run: python bench/bench_rlvr.py   (prints both timings and their ratio)
The loop is timed on a subset of k and scaled up (the full loop takes minutes); both results are checked equal
on that subset.
"""
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from toymodels.rlvr import pass_at_k, pass_at_k_curve  # noqa: E402


def comb_loop(n, c, k):
    return [1.0 if n - ci < k else 1.0 - math.comb(n - ci, k) / math.comb(n, k) for ci in c]


def main(problems=10_000, n=1024, loop_ks=(1, 16, 256, 1024)):
    rng = np.random.default_rng(0)
    c = rng.integers(0, n + 1, problems)
    ks = np.arange(1, n + 1)
    t_grid = t_curve = float("inf")
    for _ in range(3):  # best of three: the first call also pays for page-faulting fresh memory
        t = time.perf_counter()
        grid = pass_at_k(n, c[:, None], ks[None, :])      # (problems, k): every problem at every k
        t_grid = min(t_grid, time.perf_counter() - t)
        t = time.perf_counter()
        curve = pass_at_k_curve(n, c, ks)                 # mean over problems at every k
        t_curve = min(t_curve, time.perf_counter() - t)
    t = time.perf_counter()
    ref = {k: comb_loop(n, c, k) for k in loop_ks}
    t_loop = (time.perf_counter() - t) / len(loop_ks) * len(ks)   # extrapolated to every k
    for k in loop_ks:
        assert np.allclose(grid[:, k - 1], ref[k], rtol=1e-10, atol=1e-12), k
        assert abs(curve[k - 1] - np.mean(ref[k])) < 1e-10, k
    print(f"pass_at_k, {problems:,} problems x all k <= {n}: {t_grid:.3f} s (full grid), {t_curve:.3f} s "
          "(pass_at_k_curve, mean over problems); best of 3")
    print(f"math.comb loop (measured on k in {list(loop_ks)}, scaled to all {n} k): {t_loop:.1f} s")
    print(f"speed-up: {t_loop / t_grid:.0f}x (grid), {t_loop / t_curve:.0f}x (curve)")
    return t_grid, t_curve, t_loop


if __name__ == "__main__":
    main()
