"""Step time of the gated attention LM vs the baseline (issue: gate overhead ≤ 15%).

    python bench/bench_attention.py [--threads N] [--steps N] [--device cpu|cuda]

Times forward + backward + AdamW on the default configuration, interleaving the variants so that
load from other processes hits both alike, and prints the median step time per variant and the ratio.
"""
import argparse
import statistics
import time
from dataclasses import replace

import numpy as np
import torch

import toymodels.gated_attention as M
from toymodels.device import get_device


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dev = get_device(args.device)
    variants = ["baseline", "g1_elementwise", "g1_headwise"]
    models = {v: M.GatedLM(replace(M.DEFAULT, variant=v), 1, dev) for v in variants}
    states = {v: {} for v in variants}
    data = M.BigramBackcopy()
    batch = torch.as_tensor(data.sample(M.DEFAULT.batch_size, M.DEFAULT.seq_len + 1, np.random.default_rng(0)),
                            device=dev)
    lr = torch.tensor([M.DEFAULT.lr], device=dev)
    times = {v: [] for v in variants}
    for i in range(args.steps + 3):
        for v in variants:
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
            models[v].loss(batch).sum().backward()
            M._adamw_step(models[v].params, states[v], lr, i + 1, 0.1)
            if dev.type == "cuda":
                torch.cuda.synchronize()
            if i >= 3:
                times[v].append(time.perf_counter() - t)
    base = statistics.median(times["baseline"])
    for v in variants:
        med = statistics.median(times[v])
        print(f"{v:16s} median step {1000 * med:7.1f} ms   ratio to baseline {med / base:.3f}")


if __name__ == "__main__":
    main()
