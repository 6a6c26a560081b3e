"""Benchmark of the deep-CRL toy: environment steps/s and SGD steps/s of the online agent at depth 4 and 64, and
the offline critic's time per SGD step (the shipped critic view's seeds batched, batch 128).

    python bench/bench_crl.py [--device cpu|cuda] [--threads N]
"""
import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from toymodels.deep_crl import config, critic, experiments  # noqa: E402

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sgd-steps", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)       # a script sets its own process's policy
    print(experiments.benchmark((4, 64), sgd_steps=args.sgd_steps, device=args.device).to_string(index=False))
    truth = critic.Truth(config.CRITIC_TEST)
    for depth in (4, 64):
        cfg = replace(config.CRITIC_TEST, depth=depth, steps=args.sgd_steps, eval_every=args.sgd_steps)
        t0 = time.process_time()
        critic.train_critic(cfg, device=args.device, _truth=truth)
        ms = 1e3 * (time.process_time() - t0) / args.sgd_steps
        print(f"offline critic depth {depth}: {ms:.1f} ms CPU per SGD step ({cfg.seeds} seeds, batch {cfg.batch_size})")
