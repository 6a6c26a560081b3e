"""Benchmark of the deep-CRL toy: environment steps/s and SGD steps/s at depth 4 and 64.

    python bench/bench_crl.py [--device cpu|cuda] [--threads N]
"""
import argparse

import torch

from toymodels import crl

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sgd-steps", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(crl.benchmark((4, 64), sgd_steps=args.sgd_steps, device=args.device).to_string(index=False))
