"""Issue 41's registered deep-crl runs, one view per call, as ``precompute --view`` would ship them, pending ones
included (``View(pending=...)``): run by the lead's GPU script (/work/wt/gpu/ledger.sh) with
``TOYMODELS_DEVICE=cuda``. The device is not an argument of the view (GPU kernels reorder sums: a rerun on the CPU
draws other numbers from the same distribution); each bundle records it in ``environment``.

``--small DIR``: the same calls at toy size (1 iteration, 2 SGD steps, 8 environments, 2 seeds per arm), written
to DIR instead of the shipped store: a dry run that catches a typo before the GPU time is spent.

    PYTHONPATH=$PWD python3 bench/ledger_gpu.py online60_d4 qmap_d16
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("views", nargs="+")
    ap.add_argument("--small", metavar="DIR", default=None)
    args = ap.parse_args(argv)

    import toymodels.deep_crl as M
    from toymodels import store

    for name in args.views:
        view = M.VIEWS[name]
        fn, kwargs = view.resolve(M.__name__), view.arguments()
        t0 = time.perf_counter()
        if args.small:
            cfg = kwargs["cfg"]
            if hasattr(cfg, "n_envs"):
                kwargs = dict(kwargs, cfg=replace(cfg, iterations=1, sgd_steps=2, n_envs=8, episode_len=20,
                                                  n_eval=8, seeds=2), n_seeds=2)
            else:
                kwargs = dict(kwargs, cfg=replace(cfg, steps=2, episodes=20, seeds=2, eval_every=1, n_queries=20))
            res = getattr(fn, "__wrapped__", fn)(**kwargs)
            store.write_bundle(Path(args.small) / name, res)
        else:
            store.ship(M.TOPIC, name, fn, **kwargs)
            res = store.load_shipped(M.TOPIC, name)
        env = res.get("environment", {"device": res.get("device", "?")})
        print(json.dumps({"view": name, "seconds": round(time.perf_counter() - t0, 1), **env}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
