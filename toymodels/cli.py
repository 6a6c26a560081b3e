"""The command line: ``python -m toymodels list | reproduce TOPIC | verdict [TOPIC] | precompute [TOPIC ...] [--check]
| TOPIC SUBCOMMAND ...``.

``reproduce`` runs a paper's headline experiment through the same function that backs
the page's "Reproduce the paper" panel. It prints progress to standard error and, as
the last line of standard output, one JSON object of headline metrics; with ``--out``
the module writes the underlying table(s) as CSV (and a chart) into that folder.

Each topic package follows the contract (``toymodels.topic``): ``VIEWS``, ``HEADLINE``, ``CLAIMS``, ``metrics``,
``reproduce``, and optionally ``main(argv)`` for its own subcommands (``python -m toymodels hivemind collect``).
``precompute`` is one generic loop over every topic's ``VIEWS`` (pending ones only by ``--view``); it stamps each
bundle with the hash of the definitions it reached. ``precompute --check`` recomputes nothing and fails naming
every view that is missing, damaged, made with other arguments or from other definitions, and every bundle that
no view declares. ``verdict`` judges each topic's claims on its shipped views
without recomputing.

Every failure prints one line to standard error: exit 2 for bad usage or input, 1 for a failure while running.
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
        try:
            out.mkdir(parents=True, exist_ok=True)
            probe = out / ".toymodels-write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise CLIError(f"--out {args.out}: cannot write there ({exc.strerror or exc})") from None
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


def _topics(names: list[str] | None) -> list[str]:
    if not names:
        return [p.topic for p in PAPERS if p.load() is not None and hasattr(p.load(), "VIEWS")]
    for name in names:
        _module_for(name, "VIEWS")
    return list(names)


def cmd_precompute(args) -> int:
    from toymodels import store
    from toymodels.shipped import stale_views, verdict_index_problem, write_verdicts

    topics = _topics(args.topics)
    if args.check:
        bad = 0
        for topic in topics:
            module = _module_for(topic, "VIEWS")
            stale = stale_views(module)
            for name, why in stale.items():
                print(f"stale: {topic}/{name}: {why}", file=sys.stderr)
                bad += 1
            why = None if stale else verdict_index_problem(module, stale)
            if why:
                print(f"stale: {topic} verdict: {why}", file=sys.stderr)
                bad += 1
        if bad:
            print(f"error: {bad} shipped view(s) stale: run `python -m toymodels precompute TOPIC` "
                  f"(add --view NAME for one view)", file=sys.stderr)
            return 1
        print(f"all shipped views fresh ({', '.join(topics)})", file=sys.stderr)
        return 0
    for topic in topics:
        module = _module_for(topic, "VIEWS")
        names = args.view or [n for n, v in module.VIEWS.items() if not v.pending]
        unknown = [n for n in names if n not in module.VIEWS]
        if unknown:
            raise CLIError(f"{topic} has no view(s) {', '.join(unknown)}; views: {', '.join(module.VIEWS)}")
        if args.stale_only:
            stale = stale_views(module)
            names = [n for n in names if n in stale]
        for name in names:
            view = module.VIEWS[name]
            progress, bar = _progress_bar(f"precompute {topic}/{name}")
            start = time.perf_counter()
            try:
                store.ship(topic, name, view.resolve(module.__name__), **view.arguments(), progress=progress)
            finally:
                bar.close()
            print(f"{topic}/{name}: written in {time.perf_counter() - start:.1f} s" + (
                "; it is declared pending: delete pending= from its View" if view.pending else ""), file=sys.stderr)
        write_verdicts([module])
    return 0


def cmd_verdict(args) -> int:
    from toymodels.shipped import shipped_verdict

    topics = _topics([args.topic] if args.topic else None)
    for topic in topics:
        verdict, fresh = shipped_verdict(_module_for(topic, "VIEWS"))
        if args.json:
            print(json.dumps(_jsonable({"topic": topic, "reproduced": verdict.reproduced,
                                        "summary": verdict.summary, "metrics": dict(verdict.metrics),
                                        "claims": [j.as_dict() for j in verdict.claims], "fresh": fresh}),
                             allow_nan=False))
            continue
        print(f"{topic}: {verdict.badge}{'' if fresh else ' (STALE shipped views)'}\n"
              f"  ours: {verdict.ours}   paper: {verdict.paper}\n  {verdict.summary}")
        for j in verdict.claims:
            extra = f"; {j.seeds} seeds, {j.uncertainty}" if j.seeds > 1 else ""
            fitted = f"; fitted: {', '.join(j.fitted)}" if j.fitted else ""
            print(f"  [{j.label}] {j.kind} {j.id}: ours {j.ours} / paper {j.paper} ({j.source}{extra}{fitted})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m toymodels",
                                     description="Toy models of the NeurIPS 2025 best papers.")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads for this process (default: TOYMODELS_THREADS, else 1: the fastest "
                             "measured on a 2-core machine, see bench/)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="name the topics and whether each is implemented").set_defaults(func=cmd_list)
    rep = sub.add_parser("reproduce", help="run a paper's headline experiment; last stdout line is JSON")
    rep.add_argument("topic", help=f"one of: {', '.join(TOPICS)}")
    rep.add_argument("--quick", action="store_true", help="a smaller, faster run (about a minute on a laptop CPU)")
    rep.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    rep.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: TOYMODELS_DEVICE, else auto)")
    rep.add_argument("--out", default=None, help="folder for the CSV table(s) and chart")
    rep.set_defaults(func=cmd_reproduce)
    pre = sub.add_parser("precompute", help="recompute the pages' shipped default views (pending ones only by --view)")
    pre.add_argument("topics", nargs="*", help="topics to recompute (default: every implemented topic)")
    pre.add_argument("--view", action="append", help="only this view (repeatable)")
    pre.add_argument("--stale-only", action="store_true",
                     help="only the views that --check reports (and refresh the verdict index)")
    pre.add_argument("--check", action="store_true",
                     help="recompute nothing; exit 1 naming every missing or stale shipped view")
    pre.set_defaults(func=cmd_precompute)
    ver = sub.add_parser("verdict", help="each topic's verdict on its shipped default view (no recomputing)")
    ver.add_argument("topic", nargs="?", help="one topic (default: all)")
    ver.add_argument("--json", action="store_true", help="one JSON object per topic and line")
    ver.set_defaults(func=cmd_verdict)
    parser.epilog = "A topic's own tools: python -m toymodels TOPIC --help (e.g. hivemind collect)."
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad usage in one line (exit 2), not a usage block."""

    def error(self, message: str):  # noqa: D401
        print(f"error: {message} (see: {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def main(argv: list[str] | None = None) -> int:
    """Run the command line. Every failure is one line on standard error: exit 2 for bad usage or input,
    1 for a failure while running; no traceback (set TOYMODELS_DEBUG=1 to see one)."""
    import os

    from toymodels.topic import InputError

    argv = sys.argv[1:] if argv is None else list(argv)
    try:
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
        from toymodels.threads import set_thread_policy

        try:
            set_thread_policy(args.threads)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        return args.func(args)
    except (CLIError, InputError) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the promise is: one line, never a traceback
        if os.environ.get("TOYMODELS_DEBUG"):
            raise
        print(f"error: {type(exc).__name__}: {_one_line(exc)} (TOYMODELS_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1
