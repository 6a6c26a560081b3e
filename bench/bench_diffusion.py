"""Benchmark: the closed-form denoiser on all 1,797 digits for 1,000 queries, batched vs a loop over training points.

    python bench/bench_diffusion.py [--device cpu|cuda]

Prints the time of one batched denoising step (one matrix product for the logits, one for the weighted sum),
the time of a reference loop over training points (streaming log-sum-exp), their ratio, and the max difference.
"""
import argparse
import time

import torch

from toymodels.device import get_device
from toymodels.diffusion import core


def loop_denoiser(x, train, a, sigma):
    """Reference: one training point at a time, with a running (online) log-sum-exp."""
    m = torch.full((x.shape[0], 1), -float("inf"), dtype=x.dtype, device=x.device)
    num = torch.zeros_like(x)
    den = torch.zeros_like(m)
    for xm in train:
        logit = -((x - a * xm) ** 2).sum(1, keepdim=True) / (2 * sigma**2)
        new_m = torch.maximum(m, logit)
        scale = torch.exp(m - new_m)
        w = torch.exp(logit - new_m)
        num = num * scale + w * xm
        den = den * scale + w
        m = new_m
    return num / den


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    dev = get_device(args.device)
    X, _ = core.digits()
    train = torch.from_numpy(X).to(dev)
    q = torch.randn(1000, 64, generator=torch.Generator().manual_seed(0)).to(dev)
    a, s = 0.8, 0.6

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    core.empirical_denoiser(q, train, a, s)
    sync()
    t0 = time.perf_counter()
    for _ in range(args.repeats):
        out = core.empirical_denoiser(q, train, a, s)
    sync()
    batched = (time.perf_counter() - t0) / args.repeats
    t0 = time.perf_counter()
    ref = loop_denoiser(q, train, a, s)
    sync()
    loop = time.perf_counter() - t0
    print(f"device {dev}: batched {batched * 1e3:.2f} ms per step (target < 50 ms), loop over training points "
          f"{loop * 1e3:.0f} ms, ratio {loop / batched:.0f}x, max |diff| {float((out - ref).abs().max()):.2e}")


if __name__ == "__main__":
    main()
