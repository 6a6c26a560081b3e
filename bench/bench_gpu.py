"""When a GPU pays: the three batched workloads of issue #38, on CUDA and on one CPU thread of the same host, with
the same settings, written as one JSON object.

    python bench/bench_gpu.py --out gpu.json            # CUDA in this process, each CPU case in its own process
    python bench/bench_gpu.py --tiny --device cpu       # a dry run of every code path at a tiny size (no GPU)

Cases (each timed once after a small warm-up run on the device, so that CUDA's start-up is not counted):

* ``deep_crl_d16_8seeds``: contrastive RL, depth 16, 8 seeds as instances of one batched model (``train``, the
  online configuration ``ONLINE`` at depth 16), one iteration (512 episodes of 200 steps, 200 SGD steps, the
  evaluation); and ``deep_crl_d16_1seed``: the same with one seed.
* ``superposition_m160_40models``: the scaling sweep at width m = 160 (n = 1000, the shipped view's regimes with
  the weak profiles too, and its 5 seeds: 40 models in one batched model; 27 Nov 2026's run had 25, without the
  weak profiles), batch 128: a 100-step run less a 2-step run (set-up and evaluation),
  per 100 steps.
* ``gated_attention_T_8inst``: the massive-activation configuration T (4 layers, d 64, T 64, batch 32), 8
  instances (learning rates) side by side, 50 steps.

The CPU cases run in parallel child processes, one thread each (``torch.set_num_threads(1)``), beside the CUDA
cases; a case that does not finish within ``--cpu-timeout`` seconds is reported as null. Prints one line per case
and, last, the JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = ("deep_crl_d16_8seeds", "deep_crl_d16_1seed", "superposition_m160_40models", "gated_attention_T_8inst")


def _sync(dev) -> None:
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _timed(fn, dev) -> float:
    _sync(dev)
    t = time.perf_counter()
    fn()
    _sync(dev)
    return time.perf_counter() - t


def run_case(name: str, device: str, tiny: bool) -> dict:
    """Time one case on ``device``; returns its settings, the seconds, and the unit they are per."""
    import torch

    from toymodels.device import get_device

    dev = get_device(device)
    if name.startswith("deep_crl"):
        from toymodels.deep_crl import config as K
        from toymodels.deep_crl.training import train

        seeds = 8 if name.endswith("8seeds") else 1
        cfg = replace(K.ONLINE, depth=16, seeds=seeds, iterations=1)
        if tiny:
            cfg = replace(cfg, depth=4, n_envs=8, episode_len=20, sgd_steps=2, n_eval=8, batch_size=16)
        warm = replace(cfg, depth=4, n_envs=8, episode_len=20, sgd_steps=2, n_eval=8, batch_size=16)
        train.__wrapped__(warm, device=dev)
        seconds = _timed(lambda: train.__wrapped__(cfg, device=dev), dev)
        settings = {k: getattr(cfg, k) for k in ("depth", "width", "seeds", "n_envs", "episode_len", "sgd_steps",
                                                 "batch_size", "n_eval", "iterations")}
        return {"case": name, "settings": settings, "seconds": seconds, "per": "iteration"}
    if name.startswith("superposition"):
        import toymodels.superposition as M
        from toymodels.superposition import sweeps as C

        n, m, steps, seeds = M.SCALING["n"], 160, 100, tuple(M.SCALING["seeds"])
        if tiny:
            n, m, steps, seeds = 100, 10, 10, (1, 2)
        regimes = M.HEADLINE_REGIMES + C.profile_regimes(n, m, weak=True)  # 8 regimes x 5 seeds: 40 models
        kw = dict(n=n, ms=[m], regimes=regimes, batch=M.SCALING["batch"], seeds=seeds, lr_recipe="paper-large",
                  warmup=0.05, device=dev)
        C.sweep(**{**kw, "steps": 2, "seeds": seeds[:1]})  # warm-up
        fixed = _timed(lambda: C.sweep(**kw, steps=2), dev)  # set-up and evaluation: what a longer run adds to
        total = _timed(lambda: C.sweep(**kw, steps=steps), dev)
        return {"case": name, "settings": {"n": n, "m": m, "models": len(regimes) * len(seeds), "steps": steps,
                                           "batch": kw["batch"]}, "per": "100 steps",
                "seconds": max(total - fixed, 1e-9) * 100 / (steps - 2), "run_s": total, "two_step_run_s": fixed}
    if name.startswith("gated_attention"):
        from toymodels.gated_attention import config as G
        from toymodels.gated_attention.training import train

        cfg = replace(G.MACT_CFG, steps=50, eval_every=50, warmup=5)
        if tiny:
            cfg = replace(cfg, n_layers=1, d_model=16, seq_len=32, batch_size=4, eval_batch=4)
        lrs = [float(x) for x in torch.logspace(-3, -1.53, 8)]
        train(replace(cfg, n_layers=1, d_model=16, seq_len=32, batch_size=4, eval_batch=4), lrs=lrs[:2], device=dev)
        seconds = _timed(lambda: train(cfg, lrs=lrs, device=dev), dev)
        return {"case": name, "settings": {k: getattr(cfg, k) for k in ("n_layers", "d_model", "seq_len", "batch_size",
                                                                        "steps", "variant")} | {"instances": 8},
                "seconds": seconds, "per": "50 steps"}
    raise SystemExit(f"unknown case {name!r}; one of {', '.join(CASES)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="the accelerator (default cuda; cpu for a dry run)")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON here too")
    ap.add_argument("--tiny", action="store_true", help="every case at a tiny size (a dry run of the code)")
    ap.add_argument("--cpu-timeout", type=float, default=170.0)
    ap.add_argument("--one", choices=CASES, help=argparse.SUPPRESS)  # a child: one case, one JSON line
    args = ap.parse_args(argv)
    import torch

    if args.one:
        torch.set_num_threads(1)
        print(json.dumps(run_case(args.one, args.device, args.tiny)), flush=True)
        return 0
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOYMODELS_THREADS="1")
    children = {name: subprocess.Popen([sys.executable, __file__, "--one", name, "--device", "cpu"]
                                       + (["--tiny"] if args.tiny else []), cwd=ROOT, env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for name in CASES}
    started = time.perf_counter()
    from toymodels.device import get_device

    dev = get_device(args.device)
    card = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"CPU ({dev.type}, dry run)"
    accel = {}
    for name in CASES:
        accel[name] = run_case(name, args.device, args.tiny)
        print(f"{name}: {dev.type} {accel[name]['seconds']:.2f} s per {accel[name]['per']}", flush=True)
    cpu = {}
    for name, child in children.items():
        try:
            out, err = child.communicate(timeout=max(1.0, args.cpu_timeout - (time.perf_counter() - started)))
            cpu[name] = json.loads(out.strip().splitlines()[-1]) if child.returncode == 0 else {"error": err[-300:]}
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            cpu[name] = {"error": f"not finished within {args.cpu_timeout:.0f} s"}
        except (ValueError, IndexError):
            cpu[name] = {"error": "no result"}
    rows = []
    for name in CASES:
        a, c = accel[name], cpu[name]
        c_s = c.get("seconds")
        rows.append({"case": name, "settings": a["settings"], "per": a["per"], "accelerator_s": round(a["seconds"], 3),
                     "cpu_1thread_s": round(c_s, 3) if c_s is not None else None,
                     "speedup": round(c_s / a["seconds"], 2) if c_s is not None else None,
                     **({"cpu_error": c["error"]} if "error" in c else {})})
        print(f"{name}: CPU (1 thread) {c_s if c_s is None else round(c_s, 2)} s, speed-up "
              f"{rows[-1]['speedup']}x", flush=True)
    result = {"card": card, "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
              "cuda": torch.version.cuda, "python": sys.version.split()[0], "cpu_threads": 1,
              "host_cpus": os.cpu_count(), "tiny": args.tiny, "cases": rows}
    text = json.dumps(result)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
