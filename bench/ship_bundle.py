"""Ship a view computed on another machine (the GPU protocol): check that the bundle was computed by the
definitions this checkout has, then write it to the shipped store with this checkout's stamp.

    python bench/ship_bundle.py TOPIC VIEW FOLDER --at COMMIT

FOLDER: the bundle the other machine wrote (``store.write_bundle`` or ``store.ship``). COMMIT: the commit whose tree
it ran. For a bundle whose own stamp is fresh here, copying the folder is enough (``precompute --check`` says so);
this script is for one stamped by other code (a later commit touched a file the view does not reach, or the
bundle was written without a stamp). It re-stamps the bundle, and only after checking that nothing it reached has
changed:

1. the result records the sha256 of every source file of the topic's package (``result["meta"]["sources"]``, first
   16 hex digits): each must equal the file at COMMIT;
2. the definitions the view's function reaches, computed here at COMMIT (a temporary git worktree) and today, are
   equal (so a change made after the run refuses the bundle);
3. the view's declared arguments equal the result's ``config`` (when it records one).

Then it writes the bundle to ``toymodels/results/TOPIC/VIEW`` and refreshes ``results/verdicts.json``.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_DEFS = """
import json, sys
from toymodels import freshness, shipped
m = shipped.module_for(sys.argv[1])
fn = m.VIEWS[sys.argv[2]].resolve(m.__name__)
print(json.dumps(freshness.definitions(fn), sort_keys=True))
"""


def definitions_at(commit: str | None, topic: str, view: str) -> dict:
    """The definitions ``view``'s function reaches, in this checkout (``commit`` None) or at ``commit``."""
    if commit is None:
        out = subprocess.run([sys.executable, "-c", _DEFS, topic, view], cwd=ROOT, capture_output=True, text=True,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True)
        return json.loads(out.stdout)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(where), commit], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            out = subprocess.run([sys.executable, "-c", _DEFS, topic, view], cwd=where, capture_output=True,
                                 text=True, env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin"}, check=True)
            return json.loads(out.stdout)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, capture_output=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("topic")
    ap.add_argument("view")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--at", required=True, help="the commit whose tree computed the bundle")
    args = ap.parse_args(argv)

    from toymodels import shipped, store

    module = shipped.module_for(args.topic)
    view = module.VIEWS[args.view]
    fn = view.resolve(module.__name__)
    kwargs = view.arguments()
    result, _ = store.read_bundle(args.folder)

    package = f"toymodels/{module.__name__.split('.')[-1]}"
    recorded = result.get("meta", {}).get("sources", {})
    if not recorded:
        print("refused: the result records no source hashes (meta.sources)", file=sys.stderr)
        return 1
    for name, sha in recorded.items():
        text = subprocess.run(["git", "show", f"{args.at}:{package}/{name}"], cwd=ROOT, capture_output=True,
                              check=True).stdout
        if hashlib.sha256(text).hexdigest()[:16] != sha:
            print(f"refused: {package}/{name} at {args.at} is not the file the bundle was computed with",
                  file=sys.stderr)
            return 1
    then, now = definitions_at(args.at, args.topic, args.view), definitions_at(None, args.topic, args.view)
    if then != now:
        changed = sorted(k for k in set(then) | set(now) if then.get(k) != now.get(k))
        print(f"refused: definitions changed since {args.at}: {', '.join(changed[:8])}", file=sys.stderr)
        return 1
    cfg = kwargs.get("cfg")
    if "config" in result and cfg is not None and dataclasses.is_dataclass(cfg):
        want = json.loads(json.dumps(dataclasses.asdict(cfg)))
        if json.loads(json.dumps(result["config"])) != want:
            print("refused: the bundle's config is not the view's declared configuration", file=sys.stderr)
            return 1
    folder = store.write_bundle(store.shipped_path(args.topic, args.view), result,
                                meta=store.shipped_stamp(fn, store.call_key(fn, (), kwargs), kwargs))
    print(f"shipped {folder} (stamped here; {len(now)} definitions unchanged since {args.at})", file=sys.stderr)
    if view.pending:
        print(f"note: {args.view} is still declared pending: delete its pending=, then refresh the verdicts "
              "(shipped.write_verdicts)", file=sys.stderr)
    else:
        shipped.write_verdicts([module])
    return 0


if __name__ == "__main__":
    sys.exit(main())
