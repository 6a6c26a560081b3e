"""``python -m toymodels precompute --restamp``: move shipped bundles from file hashes to definition hashes.

Until this project's issue #26 a shipped bundle recorded a hash of its function's whole module file and the
``toymodels`` modules it imported, and its key named the module path. Both made every move or rewording of code
cost a recomputation. ``restamp`` rewrites the metadata of every bundle that the old scheme still proves fresh
(same key under the old naming, same file hashes) with its new key and definition hash, and records a hash of
each file: nothing is recomputed. A bundle the old scheme finds stale is left alone and reported.

The old scheme lives here, used by nothing else.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Callable

from toymodels import store
from toymodels.errors import NotStored
from toymodels.shipped import stored_only

PACKAGE_DIR = Path(__file__).resolve().parent
# Modules that cannot change a result's numbers (storage, contracts, metadata, command line, thread policy).
# Leaving them out of the source hash lets the store and the CLI evolve without invalidating every shipped bundle.
INERT_MODULES = frozenset({"toymodels", "toymodels.store", "toymodels.topic", "toymodels.registry",
                           "toymodels.cli", "toymodels.__main__", "toymodels.threads"})


def _module_file(name: str) -> Path | None:
    parts = name.split(".")
    if parts[0] != "toymodels":
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


_AST_LOCK = threading.Lock()
_IMPORTS: dict[tuple, frozenset] = {}


def _imports_of(name: str, path: Path) -> frozenset[str]:
    """The toymodels modules that the file ``path`` (module ``name``) imports explicitly (memoised per file
    version; parsed under a lock, since a server's sessions ask at once)."""
    st = path.stat()
    memo_key = (name, str(path), st.st_mtime_ns, st.st_size)
    with _AST_LOCK:
        if memo_key not in _IMPORTS:
            _IMPORTS[memo_key] = frozenset(_parse_imports(name, path))
        return _IMPORTS[memo_key]


def _parse_imports(name: str, path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "toymodels")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "toymodels":
                continue
            found.add(mod)
            for a in node.names:  # `from toymodels.diffusion import core` imports a module
                if _module_file(f"{mod}.{a.name}") is not None:
                    found.add(f"{mod}.{a.name}")
    return found


def source_modules(module_name: str) -> list[str]:
    """``module_name`` and every toymodels module it imports, transitively, less the inert ones."""
    seen: set[str] = set()
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen.add(name)
        if name in INERT_MODULES and name != module_name:
            continue  # inert modules are not hashed, nor is what only they import (nothing, today): no parse
        todo.extend(_imports_of(name, path))
    return sorted(n for n in seen if n not in INERT_MODULES or n == module_name)


def source_hash(fn: Callable) -> str:
    """A hash of the source a result of ``fn`` is computed from: its module and the toymodels modules that
    module imports (transitively), each file's bytes. Any edit to them changes the hash."""
    return _module_source_hash(store._unwrap(fn).__module__)


def module_hashes(module_name: str) -> dict[str, str]:
    """name -> hash of each file in the source closure of ``module_name`` (recorded beside a shipped bundle,
    so a stale bundle can name the module that changed)."""
    return {name: hashlib.sha256(_module_file(name).read_bytes()).hexdigest()[:16]
            for name in source_modules(module_name)}


def _module_source_hash(module_name: str) -> str:
    h = hashlib.sha256()
    for name in source_modules(module_name):
        h.update(name.encode() + b"\0" + _module_file(name).read_bytes() + b"\0")
    return h.hexdigest()[:16]


def legacy_key(fn: Callable, kwargs: dict) -> str:
    """The key the old scheme gave ``fn(**kwargs)`` (named by module path)."""
    f = store._unwrap(fn)
    return store.call_key(fn, (), kwargs, name=f"{f.__module__}.{f.__qualname__}")


def restamp_view(topic: str, name: str, fn: Callable, kwargs: dict) -> str:
    """Restamp one shipped bundle; returns what happened ("restamped", "already new", or why not)."""
    folder = store.shipped_path(topic, name)
    doc = store._read_meta_doc(folder)
    if doc is None or not isinstance(doc.get("meta"), dict):
        return "missing or damaged: not restamped"
    meta = doc["meta"]
    key = store.call_key(fn, (), kwargs)
    if meta.get("key") == key and meta.get("source") != store.source_hash(fn) and meta.get("definitions"):
        return _upgrade_rules(folder, doc, fn, kwargs)
    if meta.get("key") == key and meta.get("source") == store.source_hash(fn):
        if meta.get("declared") == store.declared_key(kwargs):
            return "already new"
        if store.staleness(topic, name, fn, **kwargs) is not None:
            return "stale: not restamped"
        doc["meta"] = {**meta, "declared": store.declared_key(kwargs)}
        _write_meta(folder, doc)
        return "restamped (declared arguments added)"
    if meta.get("key") != legacy_key(fn, kwargs):
        return "made with other arguments under the old scheme: not restamped"
    if meta.get("source") != source_hash(fn):
        return "stale under the old scheme: not restamped"
    doc["meta"] = store.shipped_stamp(fn, key, kwargs)
    doc["files"] = {p.name: store._file_sha(p) for p in sorted(folder.iterdir()) if p.name != "meta.json"}
    _write_meta(folder, doc)
    return "restamped"


def _upgrade_rules(folder: Path, doc: dict, fn: Callable, kwargs: dict) -> str:
    """A bundle stamped under reading rules 1 (``freshness.legacy_rules``): restamped under today's rules only if
    rules 1 still find every definition it recorded unchanged (and its declared arguments the same)."""
    from toymodels import freshness as F

    meta = doc["meta"]
    with F.legacy_rules():
        then = F.definitions(fn)
    if meta.get("declared") != store.declared_key(kwargs) or meta.get("definitions") != then \
            or meta.get("source") != F.definition_hash(fn, then):
        return "stale (a definition it reached changed): not restamped"
    now = F.definitions(fn)
    doc["meta"] = {**meta, "source": F.definition_hash(fn, now), "definitions": now}
    _write_meta(folder, doc)
    return f"restamped (reading rules 1 -> 2: {len(then)} -> {len(now)} definitions)"


def _write_meta(folder: Path, doc: dict) -> None:
    tmp = Path(tempfile.mkstemp(dir=folder, prefix=".meta.")[1])
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n")
    os.replace(tmp, folder / "meta.json")


def restamp(modules) -> list[tuple[str, str, str]]:
    """Restamp every declared view of these topic modules; ``(topic, view, what happened)`` for each. A view whose
    arguments are built from another view waits until that one is restamped (a few passes)."""
    out: dict[tuple[str, str], str] = {}
    pending = [(m, n) for m in modules for n in m.VIEWS]
    for _ in range(len(pending) + 1):
        waiting = []
        for module, name in pending:
            view = module.VIEWS[name]
            try:
                with stored_only():
                    kwargs = view.arguments()
            except NotStored:
                waiting.append((module, name))
                continue
            out[(module.TOPIC, name)] = restamp_view(module.TOPIC, name, view.resolve(module.__name__), kwargs)
        store._INDEX = None
        if not waiting or len(waiting) == len(pending):
            for module, name in waiting:
                out[(module.TOPIC, name)] = "its arguments need a view that is not restamped: not restamped"
            break
        pending = waiting
    return [(t, n, what) for (t, n), what in out.items()]
