"""Issue 41's registered deep-crl runs, one view per call, as ``precompute --view`` would ship them, pending ones
included (``View(pending=...)``): run by the lead's GPU script (/work/wt/gpu/ledger.sh) with
``TOYMODELS_DEVICE=cuda``. The device is not an argument of the view (GPU kernels reorder sums: a rerun on the CPU
draws other numbers from the same distribution); each bundle records it in ``environment``.

``--small DIR``: the same calls at toy size (a few steps, 1-2 seeds per arm), written to DIR instead of the shipped
store: a dry run that catches a typo before the GPU time is spent. A view is ``VIEW`` (deep-crl) or ``TOPIC/VIEW``
(the second script, ledger2.sh: deep-crl, gated-attention, diffusion and grokking).

    PYTHONPATH=$PWD python3 bench/ledger_gpu.py online60_d4 qmap_d16
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path


def _small(topic: str, kwargs: dict) -> dict:
    """The view's arguments at toy size (a dry run)."""
    cfg = kwargs.get("cfg")
    if topic == "deep-crl" and hasattr(cfg, "n_envs"):
        return dict(kwargs, cfg=replace(cfg, iterations=1, sgd_steps=2, n_envs=8, episode_len=20, n_eval=8,
                                        seeds=2), n_seeds=2)
    if topic == "deep-crl":
        return dict(kwargs, cfg=replace(cfg, steps=2, episodes=20, seeds=2, eval_every=1, n_queries=20))
    if topic == "gated-attention":
        return dict(kwargs, cfg=replace(cfg, steps=50, eval_every=25), seeds=list(kwargs["seeds"])[:1])
    if topic == "diffusion":
        return dict(kwargs, cfg=replace(cfg, ns=[64], seeds=1, steps=20, n_samples=20, euler_steps=5, n_test=20))
    if topic == "grokking":
        return dict(kwargs, cfg=replace(cfg, max_steps=2, eval_every=1), seeds=1)
    raise SystemExit(f"no toy size for {topic}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("views", nargs="+", help="VIEW (deep-crl) or TOPIC/VIEW")
    ap.add_argument("--small", metavar="DIR", default=None)
    args = ap.parse_args(argv)

    import importlib

    from toymodels import store

    for item in args.views:
        topic, _, name = item.rpartition("/")
        topic = topic or "deep-crl"
        M = importlib.import_module(f"toymodels.{topic.replace('-', '_')}")
        view = M.VIEWS[name]
        fn, kwargs = view.resolve(M.__name__), view.arguments()
        t0 = time.perf_counter()
        if args.small:
            res = getattr(fn, "__wrapped__", fn)(**_small(topic, kwargs))
            store.write_bundle(Path(args.small) / topic / name, res)
            env = res.get("environment", {}) if isinstance(res, dict) else {}
        else:
            store.ship(M.TOPIC, name, fn, **kwargs)
            env = (store.shipped_meta(M.TOPIC, name) or {}).get("env") or {}
        print(json.dumps({"view": f"{topic}/{name}", "seconds": round(time.perf_counter() - t0, 1), **env}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
