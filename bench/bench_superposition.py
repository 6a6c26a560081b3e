"""Benchmark: the width sweep (one batched model per width, all widths in one step loop sharing each step's
data) against the honest loop a user would write (every (width, regime, seed) model trained alone, each drawing
its own data), with equal results checked.

    python bench/bench_superposition.py [--n 1000] [--steps 300] [--seeds 1] [--quick]

Prints process-CPU seconds beside wall seconds (wall time is inflated on a shared machine), the speed-up in CPU
time, and the largest relative difference of the losses (the two must agree to float rounding). The regimes are
the shipped headline sweep's: strong and weak (power law) and the strong regime for three profiles.
"""
import argparse
import time

import numpy as np
import torch

from toymodels import superposition_core as C


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--ms", type=int, nargs="+", default=[10, 20, 40, 80])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="a small problem, for CI")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)  # a script's own process policy (library code never sets it)
    if a.quick:
        a.n, a.ms, a.steps = 300, [5, 10, 20], 100
    regimes = C.HEADLINE_REGIMES + C.profile_regimes(a.n, max(a.ms), weak=False)
    kw = dict(n=a.n, ms=a.ms, regimes=regimes, steps=a.steps, batch=a.batch, seeds=tuple(range(a.seeds)))
    fast, fw, fc = timed(lambda: C.sweep(**kw))
    slow, sw, sc = timed(lambda: C.sweep(**kw, one_by_one=True))
    diff = float(np.max(np.abs(fast["loss"].to_numpy() - slow["loss"].to_numpy()) / slow["loss"].to_numpy()))
    models = len(fast)
    print(f"width sweep: n = {a.n}, m = {a.ms}, {len(regimes)} regimes x {a.seeds} seed(s) = {models} models, "
          f"{a.steps} steps x batch {a.batch}, {a.threads} thread(s)")
    print(f"  batched per width, data shared : wall {fw:7.2f} s   CPU {fc:7.2f} s")
    print(f"  honest loop, one model at a time: wall {sw:7.2f} s   CPU {sc:7.2f} s")
    print(f"  speed-up (CPU) {sc / fc:.2f}x   (wall {sw / fw:.2f}x)   max relative loss difference {diff:.2e}")


if __name__ == "__main__":
    main()
