"""The result store: shipped default views and an on-disk cache, with no pickle anywhere.

A result is a "bundle": a nested structure of dicts, lists, numbers, strings,
NumPy arrays and pandas DataFrames. It is written to a folder as

    meta.json    the structure, with arrays and tables replaced by references
    arrays.npz   every NumPy array (loaded with allow_pickle=False)
    table_N.csv  every DataFrame

so nothing is ever unpickled, and a hosted demo can ship its default views in git.

Two places hold bundles:

* ``toymodels/results/<topic>/<name>/``: the shipped default view of each page,
  written by ``python -m toymodels precompute`` and committed, so a fresh app
  opens instantly. Each records the hash of the definitions it was computed from
  (``toymodels.freshness``); ``precompute --check`` (``make test``, CI) compares it with
  today's source. Read at run time without looking at any source: what ships is what
  the build vouched for.
* the cache directory (``TOYMODELS_CACHE``, default ``~/.cache/toymodels``):
  anything a visitor computes live, keyed by the function, its arguments and a hash of
  the package's source files (``code_version``), so editing the code never serves stale results.

``cached(fn, *args, **kwargs)`` looks in the shipped store, then in the cache, and
only then runs ``fn``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from toymodels import freshness
from toymodels.errors import InputError

PACKAGE_DIR = Path(__file__).resolve().parent
RESULTS_DIR = PACKAGE_DIR / "results"
CACHE_ENV = "TOYMODELS_CACHE"
MAX_CACHE_ENTRIES = 512  # oldest bundles beyond this are pruned, so a hosted demo's disk stays bounded


# --------------------------------------------------------------------------- bundles


def _to_jsonable(obj: Any, arrays: dict[str, np.ndarray], tables: list[pd.DataFrame]) -> Any:
    if isinstance(obj, pd.DataFrame):
        tables.append(obj)
        return {"__table__": f"table_{len(tables) - 1}.csv"}
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {"__array__": key}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = dataclasses.asdict(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"bundle keys must be strings, got {k!r}")
            out[k] = _to_jsonable(v, arrays, tables)
        return out
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(v, arrays, tables) for v in obj]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj)
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"cannot store {type(obj).__name__} in a bundle (use dict, list, number, str, ndarray, DataFrame)")


def _from_jsonable(obj: Any, array: Callable[[str], np.ndarray], table: Callable[[str], pd.DataFrame]) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            return array(obj["__array__"])
        if set(obj) == {"__table__"}:
            return table(obj["__table__"])
        return {k: _from_jsonable(v, array, table) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_jsonable(v, array, table) for v in obj]
    return obj


def normalise(obj: Any) -> Any:
    """The value ``obj`` reads back as from a bundle (tuples become lists, dataclasses dicts,
    NumPy scalars Python numbers), without touching the disk."""
    arrays: dict[str, np.ndarray] = {}
    tables: list[pd.DataFrame] = []
    body = json.loads(json.dumps(_to_jsonable(obj, arrays, tables), allow_nan=True))
    return _from_jsonable(body, arrays.__getitem__, lambda name: tables[int(name[6:-4])])


def write_bundle(folder: str | Path, obj: Any, meta: dict | None = None) -> Path:
    """Write ``obj`` as a bundle folder (atomically: a reader never sees half a bundle). ``meta.json`` records
    a SHA-256 of every other file, so a truncated or swapped table or array reads as damaged."""
    folder = Path(folder)
    arrays: dict[str, np.ndarray] = {}
    tables: list[pd.DataFrame] = []
    body = _to_jsonable(obj, arrays, tables)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        if arrays:
            np.savez_compressed(tmp / "arrays.npz", **arrays)
        for i, df in enumerate(tables):
            df.to_csv(tmp / f"table_{i}.csv", index=False)
        files = {p.name: file_sha256(p) for p in sorted(tmp.iterdir())}
        doc = {"meta": meta or {}, "data": body, "files": files}
        (tmp / "meta.json").write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n")
        _remove(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


# A bundle folder holds only these names, each a regular file (no links, FIFOs or devices) of bounded size.
_BUNDLE_FILE = re.compile(r"(meta\.json|arrays\.npz|table_[0-9]{1,6}\.csv)")
MAX_BUNDLE_FILE_BYTES = 256 << 20


class DamagedBundle(ValueError):
    """A bundle folder that is not what ``write_bundle`` writes: a miss, never served."""


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks (a bundle's files; a model file of any size)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _is_regular(path: Path) -> bool:
    """A regular file (not followed through a link), of at most ``MAX_BUNDLE_FILE_BYTES``."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size <= MAX_BUNDLE_FILE_BYTES


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Remove a bundle folder or whatever sits at its name (a link, a FIFO, a file), never following links."""
    try:
        if _is_real_dir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:  # already gone, or not ours to remove
        pass


def _bundle_file(folder: Path, name: Any, files: dict | None) -> Path:
    """The file ``name`` of a bundle, checked: a bundle's own name, a regular file, its hash as recorded."""
    if not isinstance(name, str) or not _BUNDLE_FILE.fullmatch(name):
        raise DamagedBundle(f"{folder.name}: {name!r} is not a bundle file name")
    path = folder / name
    if not _is_regular(path):
        raise DamagedBundle(f"{folder.name}/{name} is missing, not a regular file, or too large")
    if files is not None and files.get(name) != file_sha256(path):
        raise DamagedBundle(f"{folder.name}/{name} does not match its recorded hash")
    return path


#: Read every float of a shipped CSV back to the double that was written (pandas writes the shortest round-trip
#: text). pandas 3.1 does by default and deprecates the option; pandas 3.0's default parser is off by an ulp on
#: some values (0.06680679321289062 read as 0.0668067932128906 on an H200 machine, issue #38), which fails every
#: bit-for-bit comparison with a shipped table there.
_EXACT_FLOATS = {"float_precision": "round_trip"} if tuple(
    int(p) for p in pd.__version__.split(".")[:2] if p.isdigit()) < (3, 1) else {}


def read_bundle(folder: str | Path) -> tuple[Any, dict]:
    """Read a bundle folder; returns ``(data, meta)``. Arrays load with ``allow_pickle=False``.

    Only regular files inside the folder are read (a link, FIFO or device is damage, never opened), and each
    file is checked against the hash ``meta.json`` records (a bundle without hashes is damaged too). Damage
    raises ``DamagedBundle``."""
    folder = Path(folder)
    if not _is_real_dir(folder):
        raise DamagedBundle(f"{folder} is not a bundle folder")
    doc = json.loads(_bundle_file(folder, "meta.json", None).read_text())
    if not isinstance(doc, dict) or "data" not in doc or not isinstance(doc.get("meta", {}), dict):
        raise DamagedBundle(f"{folder.name}/meta.json is not a bundle description")
    files = doc.get("files")
    if not (isinstance(files, dict) and all(isinstance(v, str) for v in files.values())):
        raise DamagedBundle(f"{folder.name}/meta.json records no valid file hashes")
    arrays = {}
    if "arrays.npz" in files:
        with np.load(_bundle_file(folder, "arrays.npz", files), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}

    def array(name):
        if name not in arrays:
            raise DamagedBundle(f"{folder.name}: array {name!r} is missing")
        return arrays[name]

    def table(name):
        return pd.read_csv(_bundle_file(folder, name, files), **_EXACT_FLOATS)

    return _from_jsonable(doc["data"], array, table), doc.get("meta", {})


# --------------------------------------------------------------------------- keys


def _coerce(value: Any, like: Any) -> Any:
    """``value`` normalised to the type of ``like`` (a default value): 150 and 150.0 key the same."""
    if isinstance(like, bool) or isinstance(value, bool):
        return value
    if isinstance(like, float) and isinstance(value, (int, np.integer)):
        return float(value)
    if isinstance(like, int) and isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(like, (list, tuple)) and isinstance(value, (list, tuple)) and len(like) > 0:
        return [_coerce(v, like[0]) for v in value]
    return value


def _like_from_annotation(annotation: Any) -> Any:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return {"int": 0, "float": 0.0}.get(str(text).strip(), None)


def _normalise_dataclass(obj: Any) -> Any:
    changes = {}
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        like = f.default if f.default is not dataclasses.MISSING else _like_from_annotation(f.type)
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            new = _normalise_dataclass(value)
        else:
            new = _coerce(value, like)
        if new is not value and (type(new) is not type(value) or new != value):
            changes[f.name] = new
    return dataclasses.replace(obj, **changes) if changes else obj


def bind_arguments(fn: Callable, args: tuple = (), kwargs: dict | None = None) -> dict:
    """``fn``'s arguments by name, defaults filled in, numbers normalised to each parameter's type.

    ``f(150)``, ``f(n=150)`` and ``f(n=150.0)`` (with ``n: int = 100``) all bind to ``{"n": 150}``; a
    dataclass argument has its fields normalised the same way. ``progress`` is never part of the key.
    """
    sig = inspect.signature(inspect.unwrap(fn))
    try:
        bound = sig.bind(*args, **(kwargs or {}))
    except TypeError as exc:
        raise InputError(f"{getattr(fn, '__name__', fn)}: {exc}") from None
    bound.apply_defaults()
    out = {}
    for name, value in bound.arguments.items():
        param = sig.parameters[name]
        if name == "progress":
            continue
        if param.kind == inspect.Parameter.VAR_KEYWORD:
            out.update({k: v for k, v in value.items() if k != "progress"})
            continue
        if param.kind == inspect.Parameter.VAR_POSITIONAL:
            out[name] = list(value)
            continue
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = _normalise_dataclass(value)
        else:
            like = param.default if param.default is not inspect.Parameter.empty else None
            if like is None:
                like = _like_from_annotation(param.annotation)
            value = _coerce(value, like)
        out[name] = value
    return out


def _canonical(obj: Any) -> Any:
    """A JSON-able, order-stable description of an argument, for hashing."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"__dataclass__": type(obj).__qualname__, **_canonical(dataclasses.asdict(obj))}
    if isinstance(obj, dict):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return {"__sha__": hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest(), "shape": obj.shape,
                "dtype": str(obj.dtype)}
    if isinstance(obj, pd.DataFrame):
        return {"__sha__": hashlib.sha256(obj.to_csv(index=False).encode()).hexdigest()}
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return repr(float(obj)) if not math.isfinite(obj) else float(obj)
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    if hasattr(obj, "type") and type(obj).__module__.startswith("torch"):  # a torch.device
        return str(obj)
    raise TypeError(f"cannot key on an argument of type {type(obj).__name__}")


def fn_name(fn: Callable) -> str:
    """What a key calls a function: its topic and its name (``superposition:scaling``), not its file, so a move
    inside a topic keeps every key."""
    fn = inspect.unwrap(fn)
    return f"{freshness.topic_key(fn.__module__)}:{fn.__qualname__}"


def call_key(fn: Callable, args: tuple = (), kwargs: dict | None = None, name: str | None = None) -> str:
    """A stable key for ``fn(*args, **kwargs)``: the function's name (``fn_name``, or ``name``) and its arguments
    bound to its signature.

    The same call always gives the same key, however it is spelled (positional or keyword, defaults given or
    not, 150 or 150.0 for an int parameter). The definition hash is recorded beside the key, not in it.
    """
    fn = inspect.unwrap(fn)
    spec = {"fn": name or fn_name(fn), "args": _canonical(bind_arguments(fn, args, kwargs))}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:24]


# --------------------------------------------------------------------------- freshness


def source_hash(fn: Callable) -> str:
    """A hash of the definitions a result of ``fn`` is computed from (``toymodels.freshness``): the function,
    what it calls and the classes and constants it uses, followed through the package's imports. Docstrings,
    comments and bounds do not count; a move inside a topic keeps it. Build time only (it parses source)."""
    return freshness.definition_hash(fn)


_CODE: tuple[tuple, str] = ((), "")


def code_version() -> str:
    """A hash of the bytes of the package's source files (never parsed): the live cache's folder suffix, so a
    result computed before an edit is never served after it. Hashed again only when a file's size or time
    changes."""
    global _CODE
    files = sorted([*PACKAGE_DIR.glob("*.py"), *PACKAGE_DIR.glob("*/*.py")])
    stamp = tuple((str(p), st.st_mtime_ns, st.st_size) for p in files for st in [p.stat()])
    if _CODE[0] != stamp:
        h = hashlib.sha256()
        for p in files:
            h.update(p.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
        _CODE = (stamp, h.hexdigest()[:16])
    return _CODE[1]


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "toymodels")


# --------------------------------------------------------------------------- the store


def shipped_path(topic: str, name: str) -> Path:
    return RESULTS_DIR / topic / name


def _read_entry(folder: Path) -> tuple[Any, dict] | None:
    """Read a bundle, or None when it is missing or damaged in any way (a damaged entry is a miss)."""
    try:
        return read_bundle(folder)
    except Exception:  # noqa: BLE001 - links, FIFOs, truncated npz, bad JSON, missing CSV, bad hash: all a miss
        return None


def _read_meta_doc(folder: Path) -> dict | None:
    """``meta.json`` of a bundle folder as a dict, read only if it is a regular file (never a FIFO or link)."""
    try:
        if not _is_real_dir(folder):
            return None
        doc = json.loads(_bundle_file(folder, "meta.json", None).read_text())
        return doc if isinstance(doc, dict) else None
    except (OSError, ValueError, DamagedBundle):
        return None


def load_shipped(topic: str, name: str) -> Any | None:
    """The shipped default view ``name`` of ``topic``, or None if there is none (or it is damaged)."""
    entry = _read_entry(shipped_path(topic, name))
    return None if entry is None else entry[0]


def shipped_meta(topic: str, name: str) -> dict | None:
    doc = _read_meta_doc(shipped_path(topic, name))
    meta = doc.get("meta") if doc is not None else None
    return meta if isinstance(meta, dict) else None


_INDEX: dict[str, Path] | None = None
_INDEX_DIR: Path | None = None  # the results folder the index was built from


def _shipped_index() -> dict[str, Path]:
    global _INDEX, _INDEX_DIR
    if _INDEX is None or _INDEX_DIR != RESULTS_DIR:
        index = {}
        if RESULTS_DIR.exists():
            for meta in RESULTS_DIR.glob("*/*/meta.json"):
                doc = _read_meta_doc(meta.parent)
                m = doc.get("meta") if doc is not None else None
                if isinstance(m, dict) and isinstance(m.get("key"), str):
                    index[m["key"]] = meta.parent
        _INDEX, _INDEX_DIR = index, RESULTS_DIR
    return _INDEX


def _find_shipped(key: str) -> Path | None:
    """The shipped bundle for ``key``, if there is one and its view is not declared pending (the topic package is
    imported already: the function asking for it belongs to it)."""
    folder = _shipped_index().get(key)
    topic = sys.modules.get(f"toymodels.{folder.parent.name.replace('-', '_')}") if folder is not None else None
    view = getattr(topic, "VIEWS", {}).get(folder.name) if topic is not None else None
    return None if view is not None and view.pending else folder


ORPHAN_SECONDS = 3600  # a write's temporary folder older than this was left by a killed process


def _prune(root: Path, keep: int | None = None, now: float | None = None) -> None:
    """Keep the newest ``keep`` entries of the cache folder ``root``; remove the rest, the temporary folders of
    writes killed mid-way (older than ``ORPHAN_SECONDS``), and anything that is not a folder (a link, a FIFO)."""
    import time

    keep = MAX_CACHE_ENTRIES if keep is None else keep
    now = time.time() if now is None else now
    entries = []
    for p in root.iterdir():
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            _remove(p)
        elif p.name.startswith("."):
            if now - st.st_mtime > ORPHAN_SECONDS:
                _remove(p)
        else:
            entries.append((st.st_mtime, p))
    entries.sort()
    for _, old in entries[: max(0, len(entries) - keep)]:
        _remove(old)


def _use_disk() -> bool:
    return os.environ.get(CACHE_ENV, "").lower() not in ("off", "0", "none")


def lookup(fn: Callable, *args, **kwargs) -> tuple[bool, Any]:
    """``(True, result)`` when ``fn(*args, **kwargs)`` is in the shipped store or the disk cache, else
    ``(False, None)``. Never computes; never reads source; never waits for anything but the disk."""
    kwargs.pop("progress", None)
    key = call_key(fn, args, kwargs)
    shipped = _find_shipped(key)
    if shipped is not None:
        entry = _read_entry(shipped)
        if entry is not None:
            return True, entry[0]
    if _use_disk():
        folder = cache_dir() / f"{key}-{code_version()}"
        if os.path.lexists(folder):
            entry = _read_entry(folder)
            if entry is not None and entry[1].get("key") == key:
                return True, entry[0]
            _remove(folder)  # a damaged entry (or a link, a FIFO) is removed and recomputed
    return False, None


def cached(fn: Callable, *args, **kwargs) -> Any:
    """Return ``fn(*args, **kwargs)``, from the shipped store or the disk cache when possible.

    ``fn`` must be deterministic in its arguments (every toymodels function is seeded).
    A keyword argument named ``progress`` is passed through to ``fn`` but not keyed on.
    Set ``TOYMODELS_CACHE=off`` to disable the disk cache (the shipped store is still read).
    """
    progress = kwargs.pop("progress", None)
    hit, value = lookup(fn, *args, **kwargs)
    if hit:
        return value
    return _compute_and_store(fn, args, kwargs, progress)


def _compute_and_store(fn: Callable, args: tuple, kwargs: dict, progress=None) -> Any:
    key = call_key(fn, args, kwargs)
    if progress is not None and "progress" in inspect.signature(fn).parameters:
        kwargs = {**kwargs, "progress": progress}
    result = fn(*args, **kwargs)
    if _use_disk():
        folder = cache_dir() / f"{key}-{code_version()}"
        try:
            write_bundle(folder, result, meta={"key": key, "fn": _fn_name(fn)})
            _prune(folder.parent)
        except OSError:
            pass  # a read-only or full disk must not break the page
    return normalise(result)  # the same types whether computed, cached or shipped


def _fn_name(fn: Callable) -> str:
    fn = inspect.unwrap(fn)
    return f"{fn.__module__}.{fn.__qualname__}"


def declared_key(kwargs: dict) -> str:
    """A hash of a view's arguments as declared (``View.kwargs``): how a shipped view is found and checked
    without importing its function (``lookup_view``)."""
    norm = {k: _normalise_dataclass(v) if dataclasses.is_dataclass(v) and not isinstance(v, type) else v
            for k, v in kwargs.items() if k != "progress"}
    return hashlib.sha256(json.dumps(_canonical(norm), sort_keys=True).encode()).hexdigest()[:24]


def shipped_stamp(fn: Callable, key: str, kwargs: dict) -> dict:
    """What a shipped bundle records of how it was made: its key, its declared arguments' hash, the function,
    the hash of the definitions it reached and each of them (so a stale bundle names what changed)."""
    defs = freshness.definitions(fn)
    return {"key": key, "declared": declared_key(kwargs), "fn": _fn_name(fn),
            "source": freshness.definition_hash(fn, defs), "definitions": defs}


def lookup_view(topic: str, name: str, kwargs: dict) -> tuple[bool, Any]:
    """``(True, result)`` when the shipped ``topic/name`` was computed with these declared arguments (its
    definitions are the build's to check: ``staleness``); read without importing the view's function."""
    meta = shipped_meta(topic, name)
    if meta is None or meta.get("declared") != declared_key(kwargs):
        return False, None
    entry = _read_entry(shipped_path(topic, name))
    return (True, entry[0]) if entry is not None else (False, None)


def ship(topic: str, name: str, fn: Callable, *args, **kwargs) -> Path:
    """Compute ``fn(*args, **kwargs)`` and write it to the shipped store as ``topic/name``, recording the
    call's key and the hash of the source that computed it (see ``source_hash``)."""
    global _INDEX
    progress = kwargs.pop("progress", None)
    key = call_key(fn, args, kwargs)
    if progress is not None and "progress" in inspect.signature(fn).parameters:
        kwargs["progress"] = progress
    result = fn(*args, **kwargs)
    from toymodels.device import environment  # the build that computed it (torch: only where a view is shipped)

    folder = write_bundle(shipped_path(topic, name), result,
                          meta={**shipped_stamp(fn, key, bind_arguments(fn, args, kwargs) if args else kwargs),
                                "env": environment(kwargs.get("device"))})
    _INDEX = None
    return folder


def staleness(topic: str, name: str, fn: Callable | str, **kwargs) -> str | None:
    """Why the shipped ``topic/name`` does not match ``fn(**kwargs)`` (``fn``: the function or its lazy reference)
    under today's source, or None when it is fresh: missing, damaged, computed with other arguments, or from other
    definitions."""
    folder = shipped_path(topic, name)
    if not (folder / "meta.json").exists():
        return "missing"
    meta = shipped_meta(topic, name)
    if meta is None or _read_entry(folder) is None:
        return "damaged"
    if meta.get("declared") != declared_key(kwargs):
        return "computed with other arguments"
    if meta.get("source") != source_hash(fn):
        recorded = meta.get("definitions")
        changed = freshness.changed(recorded if isinstance(recorded, dict) else {}, freshness.definitions(fn))
        shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
        return f"definitions changed since it was computed: {shown or 'the set reached'}"
    return None


def write_tables(out: str | Path, tables: dict[str, pd.DataFrame]) -> list[Path]:
    """Write ``reproduce``'s underlying tables as CSV files ``out/<name>.csv`` (creating ``out``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, df in tables.items():
        path = out / (name if name.endswith(".csv") else f"{name}.csv")
        df.to_csv(path, index=False)
        paths.append(path)
    return paths
