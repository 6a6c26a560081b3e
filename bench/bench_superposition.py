"""Benchmark: the batched width sweep against the honest loop, with equal results checked, in one run.

    python bench/bench_superposition.py [--steps 1200] [--full] [--seeds 1] [--engine-alone] [--quick]

Batched: ``superposition.sweeps.sweep`` — the models of one width are one batched model (no padding), all widths
train in one step loop and share each step's data, gradients exploit the sparsity of x, Adam is fused, and the
fixed evaluation sample is kept as active entries. Honest loop: ``sweep(one_by_one=True)``, every (width, regime,
seed) model trained alone by ``train_alone``, plain PyTorch as a user would write it (dense x, autograd, torch's
fused Adam, float32, one thread), the same recipe, data streams, checkpoints and stopping rule. ``--engine-alone``
also times the batched engine fed one model at a time (what batching and data sharing add on top of sparsity).

The default configuration is the shipped ``scaling`` view's (n = 1000, m = 10…160, the 5 strong/weak
regimes, batch 128, the paper-large lr recipe, warmup 5 %) for ``--steps`` of its schedule; ``--full`` runs its
whole schedule (12000 steps, convergence continuation to the 24000 cap; about an hour of CPU for both). Prints
process-CPU seconds beside wall seconds (wall time is inflated on a shared machine), the speed-up in CPU time, the
largest relative difference of the losses and whether every model stopped at the same step.
"""
import argparse
import time

import numpy as np
import torch

import toymodels.superposition as M
from toymodels.superposition import sweeps as C


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def engine_alone(kw):
    """The batched engine, one model per call (each model alone, sparse gradients, no batching or sharing)."""
    import pandas as pd
    regs, seeds = kw["regimes"], kw["seeds"]
    parts = [C.sweep(**{**kw, "ms": [m], "regimes": [rg], "seeds": (s,)}) for m in kw["ms"] for rg in regs
             for s in seeds]
    df = pd.concat(parts, ignore_index=True)
    order = {(rg["name"], s, m): i for i, (m, rg, s) in enumerate((m, rg, s) for m in kw["ms"] for rg in regs
                                                                  for s in seeds)}
    return df.iloc[np.argsort([order[(r.regime, r.seed, r.m)] for r in df.itertuples()])].reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    cfg = M.SCALING
    ap.add_argument("--n", type=int, default=cfg["n"])
    ap.add_argument("--ms", type=int, nargs="+", default=cfg["ms"])
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--max-steps", type=int, default=None)
    ap.add_argument("--full", action="store_true", help="the shipped schedule: 12000 steps, cap 24000")
    ap.add_argument("--batch", type=int, default=cfg["batch"])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--engine-alone", action="store_true", help="also time the engine one model at a time")
    ap.add_argument("--quick", action="store_true", help="a small problem, for CI")
    ap.add_argument("--csv", default=None, help="write the per-model losses and stopping steps of both runs here")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)  # a script's own process policy (library code never sets it)
    if a.full:
        a.steps, a.max_steps = cfg["steps"], cfg["max_steps"]
    if a.quick:
        a.n, a.ms, a.steps = 300, [5, 10, 20], 100
    regimes = M.HEADLINE_REGIMES + C.profile_regimes(a.n, max(a.ms), weak=cfg.get("weak_profiles", False))
    kw = dict(n=a.n, ms=a.ms, regimes=regimes, steps=a.steps, batch=a.batch, seeds=tuple(range(a.seeds)),
              max_steps=a.max_steps, lr_recipe="paper-large", warmup=0.05)
    fast, fw, fc = timed(lambda: C.sweep(**kw))
    slow, sw, sc = timed(lambda: C.sweep(**kw, one_by_one=True))
    rel = np.abs(fast["loss"].to_numpy() - slow["loss"].to_numpy()) / slow["loss"].to_numpy()
    diff = float(rel.max())
    same_steps = bool((fast["steps_run"] == slow["steps_run"]).all())
    if a.csv:
        both = fast[["regime", "m", "seed", "loss", "steps_run"]].assign(
            loss_alone=slow["loss"], steps_alone=slow["steps_run"], rel_diff=rel)
        both.to_csv(a.csv, index=False)
    models = len(fast)
    print(f"width sweep: n = {a.n}, m = {a.ms}, {len(regimes)} regimes x {a.seeds} seed(s) = {models} models, "
          f"{a.steps} steps (cap {a.max_steps or a.steps}) x batch {a.batch}, paper-large lr, {a.threads} thread(s); "
          f"steps run {int(fast['steps_run'].min())}-{int(fast['steps_run'].max())}")
    print(f"  batched per width, data shared      : wall {fw:8.2f} s   CPU {fc:8.2f} s")
    print(f"  honest loop, plain PyTorch per model: wall {sw:8.2f} s   CPU {sc:8.2f} s")
    if a.engine_alone:
        one, ew, ec = timed(lambda: engine_alone(kw))
        d1 = float(np.max(np.abs(fast["loss"].to_numpy() - one["loss"].to_numpy()) / one["loss"].to_numpy()))
        print(f"  batched engine fed one model a time : wall {ew:8.2f} s   CPU {ec:8.2f} s   "
              f"(batching and sharing alone: {ec / fc:.2f}x; max relative loss difference {d1:.1e})")
    print(f"  speed-up (CPU) {sc / fc:.2f}x   (wall {sw / fw:.2f}x)   max relative loss difference {diff:.2e}   "
          f"same stopping step for every model: {same_steps}")
    print(f"  relative loss difference per model: median {np.median(rel):.1e}, {int((rel < 1e-3).sum())} of {models} "
          f"below 1e-3; stopping step differs for {int((fast['steps_run'] != slow['steps_run']).sum())} model(s) "
          "(long runs amplify float rounding: see --csv for the per-model table)")


if __name__ == "__main__":
    main()
