"""Benchmarks, one thread: (1) one step of the closed-form denoiser (Eq. 5) on all 1,797 digits for 1,000 queries;
(2) ``--ensemble``: a flow-matching training step of the CFM/EFM comparison's 24 networks as one stacked ensemble
(``training.train_flows``) against the same 24 networks as separate ``nn.Module``s stepped one after the other.

    python bench/bench_diffusion.py [--device cpu|cuda] [--threads 1] [--repeats 30] [--ensemble]

Compares ``core.empirical_denoiser`` (one fused matrix product with the ‖x_μ‖² term as its bias, one softmax,
one matrix product) with the baseline a competent user writes first, the **cdist + softmax one-liner**

    torch.softmax(-torch.cdist(x, a * train) ** 2 / (2 * sigma ** 2), -1) @ train

Both are timed interleaved (median of ``--repeats``, after a warm-up), against a float64 reference. The target
for one denoiser step is 50 ms on one thread of the 2-core demo machine. Prints one line per method and a ratio.
"""
import argparse
import time

import torch

from toymodels.device import get_device
from toymodels.diffusion import core, network
from toymodels.threads import set_thread_policy


def cdist_softmax_baseline(x, train, a, sigma):
    """The usual one-liner: squared distances by cdist, softmax, weighted sum."""
    return torch.softmax(-torch.cdist(x, a * train) ** 2 / (2 * sigma**2), -1) @ train


class SimpleTimeModel(torch.nn.Module):
    """The SM B network written the usual way (nn.Linear, nn.LayerNorm), for the baseline of ``--ensemble``."""

    def __init__(self, d: int, width: int):
        super().__init__()
        self.inp, self.out = torch.nn.Linear(d, width), torch.nn.Linear(width, d)
        self.l1 = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(3))
        self.l2 = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(3))
        self.ln = torch.nn.ModuleList(torch.nn.LayerNorm(width) for _ in range(3))
        self.width = width

    def forward(self, x, t):
        emb = network.flow_embedding(t, self.width)
        h = self.inp(x)
        for l1, l2, ln in zip(self.l1, self.l2, self.ln):
            z = h + emb
            h = ln(z + l2(torch.nn.functional.gelu(l1(z))))
        return self.out(h)


def ensemble(repeats: int, M: int = 24, d: int = 64, width: int = 128, batch: int = 128) -> None:
    """ms per model and step: the stacked ensemble against M separate modules (CFM targets, Adam, one thread)."""
    gen = torch.Generator().manual_seed(0)
    params = {k: v.requires_grad_(True) for k, v in network.init_params(M, d, width, list(range(M))).items()}
    opt = torch.optim.Adam(list(params.values()), lr=1e-3, foreach=True)
    mods = [SimpleTimeModel(d, width) for _ in range(M)]
    opts = [torch.optim.Adam(m.parameters(), lr=1e-3, foreach=True) for m in mods]
    x1 = torch.randn(M, batch, d, generator=gen)

    def stacked():
        x0, t = torch.randn(M, batch, d, generator=gen), torch.rand(M, batch, 1, generator=gen)
        xt = (1 - t) * x0 + t * x1
        loss = ((network.velocity(params, xt, t) - (x1 - x0)) ** 2).mean((-1, -2)).sum()
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()

    def separate():
        for m, (mod, o) in enumerate(zip(mods, opts)):
            x0, t = torch.randn(batch, d, generator=gen), torch.rand(batch, 1, generator=gen)
            xt = (1 - t) * x0 + t * x1[m]
            loss = ((mod(xt, t) - (x1[m] - x0)) ** 2).mean()
            o.zero_grad()
            loss.backward()
            o.step()

    cpu = {}
    for name, f in (("stacked ensemble (network.velocity)", stacked), ("separate nn.Modules, one by one", separate)):
        f()
        c0 = time.thread_time()
        for _ in range(repeats):
            f()
        cpu[name] = (time.thread_time() - c0) / repeats / M
        print(f"{name:38s} CPU {cpu[name] * 1e3:6.3f} ms per model and step ({M} models, width {width}, batch {batch})")
    a, b = cpu.values()
    print(f"{torch.get_num_threads()} thread(s): the stacked ensemble is {b / a:.2f}x faster per model-step")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--ensemble", action="store_true", help="the training-step benchmark instead")
    args = ap.parse_args()
    set_thread_policy(args.threads)
    if args.ensemble:
        ensemble(args.repeats)
        return
    dev = get_device(args.device)
    X, _ = core.digits()
    train = torch.from_numpy(X).to(dev)
    q = torch.randn(1000, 64, generator=torch.Generator().manual_seed(0)).to(dev)
    a, s = 0.8, 0.6
    ref = core.empirical_denoiser(q.cpu().double(), train.cpu().double(), a, s)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    methods = {"ours (core.empirical_denoiser)": core.empirical_denoiser,
               "baseline (cdist + softmax one-liner)": cdist_softmax_baseline}
    times = {k: [] for k in methods}
    cpu = {k: 0.0 for k in methods}
    for f in methods.values():
        f(q, train, a, s)
    sync()
    for _ in range(args.repeats):
        for name, f in methods.items():
            c0, t0 = time.thread_time(), time.perf_counter()
            f(q, train, a, s)
            sync()
            times[name].append(time.perf_counter() - t0)
            cpu[name] += time.thread_time() - c0
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    cpu = {k: v / args.repeats for k, v in cpu.items()}
    for name, f in methods.items():
        err = float((f(q, train, a, s).cpu().double() - ref).abs().max())
        print(f"{name:38s} wall {med[name] * 1e3:7.2f} ms (median of {args.repeats}), CPU {cpu[name] * 1e3:6.2f} ms "
              f"per step; max |error| vs float64 {err:.1e}")
    ours, base = "ours (core.empirical_denoiser)", "baseline (cdist + softmax one-liner)"
    print(f"device {dev}, {torch.get_num_threads()} thread(s): one step {med[ours] * 1e3:.1f} ms wall, "
          f"{cpu[ours] * 1e3:.1f} ms CPU (target < 50 ms: {'met' if med[ours] < 0.05 else 'MISSED on wall time'}"
          f"{'' if med[ours] < 0.05 else ', wall time inflated by other load' if cpu[ours] < 0.05 else ''}); "
          f"{med[base] / med[ours]:.2f}x (wall) and {cpu[base] / cpu[ours]:.2f}x (CPU) faster than the cdist + "
          "softmax baseline")


if __name__ == "__main__":
    main()
