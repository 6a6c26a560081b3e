"""Benchmark: one batched model vs the same models trained one by one, and the cost of sampling.

    python bench/bench_superposition.py [--models 10] [--m 20] [--steps 300] [--device cpu]

Prints wall and process-CPU seconds for a γ sweep (``--models`` values of γ at one width) trained as one
batched model and as separate models with the same seeds, their ratio, and the share of a step spent drawing
data. CPU time is reported beside wall time because a shared machine inflates wall time.
"""
import argparse
import time

import numpy as np
import torch

from toymodels import superposition as M
from toymodels.device import get_device


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--m", type=int, default=20)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dev = get_device(args.device)
    gammas = list(np.linspace(-1, 1, args.models))
    p = M.feature_probs(args.n, 1.0, 1.0)
    kw = dict(steps=args.steps, batch=args.batch, device=dev, eval_samples=1024)
    M.train_batched(args.n, [args.m], [0.0], p[None], [0], steps=5, batch=args.batch, device=dev)  # warm up
    joint, wj, cj = timed(lambda: M.train_batched(args.n, [args.m] * args.models, gammas,
                                                  np.repeat(p[None], args.models, 0), [0] * args.models, **kw))
    sep, ws, cs = [], 0.0, 0.0
    for g in gammas:
        out, w, c = timed(lambda: M.train_batched(args.n, [args.m], [g], p[None], [0], **kw))
        sep.append(out["W"][0])
        ws, cs = ws + w, cs + c
    same = max(float(np.abs(joint["W"][k] - sep[k]).max()) for k in range(args.models))
    # sampling share of one batched step: draw + sparsify vs the whole step
    gen = torch.Generator(device=dev).manual_seed(0)
    p_t = torch.tensor(p[None], dtype=torch.float32, device=dev)[:, None]   # shared profile (γ sweep)
    W = torch.randn(args.models, args.n, args.m, device=dev) / args.m**0.5
    b = torch.zeros(args.models, args.n, device=dev)

    def sample():
        r = torch.rand(1, args.batch, args.n, generator=gen, device=dev)
        return r, (r < p_t).nonzero(as_tuple=True)

    reps = 50
    _, ws_, cs_ = timed(lambda: [sample() for _ in range(reps)])
    r = sample()[0]
    _, wg, cg = timed(lambda: [M.grads(W, b, r, p_t, with_loss=False) for _ in range(reps)])
    print(f"device {dev}; {args.models} models, n = {args.n}, m = {args.m}, {args.steps} steps of batch {args.batch}")
    print(f"batched:     wall {wj:7.2f} s   cpu {cj:7.2f} s")
    print(f"one by one:  wall {ws:7.2f} s   cpu {cs:7.2f} s")
    print(f"speed-up (one by one / batched): wall {ws / wj:.1f}x   cpu {cs / cj:.1f}x   "
          f"(max |W difference| {same:.1e})")
    print(f"sampling share of a step (cpu): {cs_ / (cs_ + cg):.0%}  (draw {1e3 * cs_ / reps:.2f} ms, "
          f"forward+backward {1e3 * cg / reps:.2f} ms per step)")


if __name__ == "__main__":
    main()
