"""The command line: ``python -m toymodels list | reproduce TOPIC | precompute [TOPIC ...] | TOPIC SUBCOMMAND ...``.

``reproduce`` runs a paper's headline experiment through the same function that backs
the page's "Reproduce the paper" panel. It prints progress to standard error and, as
the last line of standard output, one JSON object of headline metrics; with ``--out``
the module writes the underlying table(s) as CSV (and a chart) into that folder.

Each paper module provides::

    reproduce(quick=False, seed=0, device=None, out=None, progress=None) -> dict
    precompute(progress=None) -> None     # optional: writes the page's default views
    main(argv) -> int                     # optional: the topic's own subcommands, reached as
                                          # ``python -m toymodels TOPIC ...`` (e.g. ``hivemind collect``)

and only the arguments its signature names are passed.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from toymodels.registry import PAPERS, TOPICS, get_paper


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None  # strict JSON: NaN/inf become null
    return obj


def _progress_bar(label: str):
    """A tqdm bar on stderr driven by ``progress(fraction, message)``."""
    from tqdm import tqdm

    bar = tqdm(total=1000, desc=label, file=sys.stderr, leave=False,
               bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed} {postfix}")

    def progress(fraction: float, message: str = "") -> None:
        bar.n = int(round(1000 * min(1.0, max(0.0, fraction))))
        bar.set_postfix_str(message[:60], refresh=False)
        bar.refresh()

    return progress, bar


def _call(fn, **kwargs):
    params = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in kwargs.items() if k in params})


def _module_for(topic: str, function: str):
    try:
        paper = get_paper(topic)
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None
    module = paper.load()
    if module is None or not hasattr(module, function):
        raise CLIError(f"topic {topic!r} is not implemented yet (toymodels.{paper.module}.{function} is missing)")
    return module


def cmd_list(args) -> int:
    width = max(map(len, TOPICS))
    for paper in PAPERS:
        status = "implemented" if paper.implemented else "not built yet"
        print(f"{paper.topic:<{width}}  {status:<13}  {paper.award:<10}  {paper.short_title}")
    return 0


def cmd_reproduce(args) -> int:
    module = _module_for(args.topic, "reproduce")
    from toymodels.device import get_device

    try:
        device = get_device(args.device)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    progress, bar = _progress_bar(f"{args.topic}{' (quick)' if args.quick else ''}")
    start = time.perf_counter()
    try:
        metrics = _call(module.reproduce, quick=args.quick, seed=args.seed, device=device, out=out,
                        progress=progress)
    finally:
        bar.close()
    elapsed = time.perf_counter() - start
    print(f"{args.topic}: done in {elapsed:.1f} s on {device}" + (f"; tables in {out}/" if out else ""),
          file=sys.stderr)
    print(json.dumps(_jsonable(metrics), allow_nan=False))
    return 0


def cmd_precompute(args) -> int:
    topics = args.topics or [p.topic for p in PAPERS if p.load() is not None]
    for topic in topics:
        module = _module_for(topic, "precompute")
        progress, bar = _progress_bar(f"precompute {topic}")
        start = time.perf_counter()
        try:
            _call(module.precompute, progress=progress)
        finally:
            bar.close()
        print(f"{topic}: default views written in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m toymodels",
                                     description="Toy models of the NeurIPS 2025 best papers.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="name the topics and whether each is implemented").set_defaults(func=cmd_list)
    rep = sub.add_parser("reproduce", help="run a paper's headline experiment; last stdout line is JSON")
    rep.add_argument("topic", help=f"one of: {', '.join(TOPICS)}")
    rep.add_argument("--quick", action="store_true", help="a smaller, faster run (about a minute on a laptop CPU)")
    rep.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    rep.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: TOYMODELS_DEVICE, else auto)")
    rep.add_argument("--out", default=None, help="folder for the CSV table(s) and chart")
    rep.set_defaults(func=cmd_reproduce)
    pre = sub.add_parser("precompute", help="recompute the pages' shipped default views")
    pre.add_argument("topics", nargs="*", help="topics to recompute (default: every implemented topic)")
    pre.set_defaults(func=cmd_precompute)
    parser.epilog = "A topic's own tools: python -m toymodels TOPIC --help (e.g. hivemind collect)."
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in TOPICS:  # a topic's own tools: python -m toymodels hivemind collect ...
        try:
            module = _module_for(argv[0], "main")
        except CLIError as exc:
            print(f"error: {exc} (topic {argv[0]!r} has no subcommands of its own)", file=sys.stderr)
            return 2
        return int(module.main(argv[1:]) or 0)
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "seed", 0) is not None and not 0 <= getattr(args, "seed", 0) < 2**32:
        print(f"error: --seed must be in [0, 2**32), got {args.seed}", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
