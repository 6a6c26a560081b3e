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
  opens instantly. A test regenerates a cheap one and compares.
* the cache directory (``TOYMODELS_CACHE``, default ``~/.cache/toymodels``):
  anything a visitor computes live, keyed by the function, its arguments and a hash
  of the source file that defines it, so editing the code never serves stale results.

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
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

RESULTS_DIR = Path(__file__).resolve().parent / "results"
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


def _from_jsonable(obj: Any, arrays, table: Callable[[str], pd.DataFrame]) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            return arrays[obj["__array__"]]
        if set(obj) == {"__table__"}:
            return table(obj["__table__"])
        return {k: _from_jsonable(v, arrays, table) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_jsonable(v, arrays, table) for v in obj]
    return obj


def normalise(obj: Any) -> Any:
    """The value ``obj`` reads back as from a bundle (tuples become lists, dataclasses dicts,
    NumPy scalars Python numbers), without touching the disk."""
    arrays: dict[str, np.ndarray] = {}
    tables: list[pd.DataFrame] = []
    body = json.loads(json.dumps(_to_jsonable(obj, arrays, tables), allow_nan=True))
    return _from_jsonable(body, arrays, lambda name: tables[int(name[6:-4])])


def write_bundle(folder: str | Path, obj: Any, meta: dict | None = None) -> Path:
    """Write ``obj`` as a bundle folder (atomically: a reader never sees half a bundle)."""
    folder = Path(folder)
    arrays: dict[str, np.ndarray] = {}
    tables: list[pd.DataFrame] = []
    body = _to_jsonable(obj, arrays, tables)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        doc = {"meta": meta or {}, "data": body}
        (tmp / "meta.json").write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n")
        if arrays:
            np.savez_compressed(tmp / "arrays.npz", **arrays)
        for i, df in enumerate(tables):
            df.to_csv(tmp / f"table_{i}.csv", index=False)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def read_bundle(folder: str | Path) -> tuple[Any, dict]:
    """Read a bundle folder; returns ``(data, meta)``. Arrays load with ``allow_pickle=False``."""
    folder = Path(folder)
    doc = json.loads((folder / "meta.json").read_text())
    npz = folder / "arrays.npz"
    arrays = {}
    if npz.exists():
        with np.load(npz, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    return _from_jsonable(doc["data"], arrays, lambda name: pd.read_csv(folder / name)), doc.get("meta", {})


# --------------------------------------------------------------------------- keys


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
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return repr(float(obj)) if not math.isfinite(obj) else float(obj)
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    raise TypeError(f"cannot key on an argument of type {type(obj).__name__}")


def call_key(fn: Callable, args: tuple = (), kwargs: dict | None = None) -> str:
    """A stable key for ``fn(*args, **kwargs)``: the function's name and its arguments.

    The shipped store uses this key (so whitespace edits don't invalidate it; a test
    regenerates results to catch real drift). The live cache adds the source hash.
    """
    spec = {"fn": f"{fn.__module__}.{fn.__qualname__}", "args": _canonical(list(args)),
            "kwargs": _canonical(kwargs or {})}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:24]


def _source_hash(fn: Callable) -> str:
    try:
        path = inspect.getsourcefile(fn)
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12] if path else "nosrc"
    except (TypeError, OSError):
        return "nosrc"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "toymodels")


# --------------------------------------------------------------------------- the store


def shipped_path(topic: str, name: str) -> Path:
    return RESULTS_DIR / topic / name


def load_shipped(topic: str, name: str) -> Any | None:
    """The shipped default view ``name`` of ``topic``, or None if there is none."""
    folder = shipped_path(topic, name)
    if not (folder / "meta.json").exists():
        return None
    return read_bundle(folder)[0]


def _find_shipped(key: str) -> Path | None:
    if not RESULTS_DIR.exists():
        return None
    for meta in RESULTS_DIR.glob("*/*/meta.json"):
        try:
            if json.loads(meta.read_text()).get("meta", {}).get("key") == key:
                return meta.parent
        except (OSError, json.JSONDecodeError):
            continue
    return None


def _prune(root: Path, keep: int | None = None) -> None:
    keep = MAX_CACHE_ENTRIES if keep is None else keep
    entries = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime)
    for old in entries[: max(0, len(entries) - keep)]:
        shutil.rmtree(old, ignore_errors=True)


def cached(fn: Callable, *args, **kwargs) -> Any:
    """Return ``fn(*args, **kwargs)``, from the shipped store or the disk cache when possible.

    ``fn`` must be deterministic in its arguments (every toymodels function is seeded).
    A keyword argument named ``progress`` is passed through to ``fn`` but not keyed on.
    Set ``TOYMODELS_CACHE=off`` to disable the disk cache (the shipped store is still read).
    """
    progress = kwargs.pop("progress", None)
    key = call_key(fn, args, kwargs)
    shipped = _find_shipped(key)
    if shipped is not None:
        return read_bundle(shipped)[0]
    use_disk = os.environ.get(CACHE_ENV, "").lower() not in ("off", "0", "none")
    folder = cache_dir() / f"{key}-{_source_hash(fn)}"
    if use_disk and (folder / "meta.json").exists():
        try:
            return read_bundle(folder)[0]
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            shutil.rmtree(folder, ignore_errors=True)  # a damaged entry is recomputed
    if progress is not None and "progress" in inspect.signature(fn).parameters:
        kwargs["progress"] = progress
    result = fn(*args, **kwargs)
    if use_disk:
        try:
            write_bundle(folder, result, meta={"key": key, "fn": f"{fn.__module__}.{fn.__qualname__}"})
            _prune(folder.parent)
        except OSError:
            pass  # a read-only or full disk must not break the page
    return normalise(result)  # the same types whether computed, cached or shipped


def ship(topic: str, name: str, fn: Callable, *args, **kwargs) -> Path:
    """Compute ``fn(*args, **kwargs)`` and write it to the shipped store as ``topic/name``.

    Modules call this from their ``precompute()``; the page then gets the result
    instantly through ``cached`` with the same arguments.
    """
    progress = kwargs.pop("progress", None)
    key = call_key(fn, args, kwargs)
    if progress is not None and "progress" in inspect.signature(fn).parameters:
        kwargs["progress"] = progress
    result = fn(*args, **kwargs)
    return write_bundle(shipped_path(topic, name), result,
                        meta={"key": key, "fn": f"{fn.__module__}.{fn.__qualname__}"})


def assert_same(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9, path: str = "result") -> None:
    """Raise AssertionError naming the first place two bundles differ (floats to a tolerance)."""
    if isinstance(a, pd.DataFrame) or isinstance(b, pd.DataFrame):
        if not (isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame)):
            raise AssertionError(f"{path}: one is a table, the other is not")
        if list(a.columns) != list(b.columns) or a.shape != b.shape:
            raise AssertionError(f"{path}: table shapes/columns differ: {a.shape} {list(a.columns)} vs "
                                 f"{b.shape} {list(b.columns)}")
        for col in a.columns:
            assert_same(a[col].to_numpy(), b[col].to_numpy(), rtol, atol, f"{path}[{col!r}]")
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            raise AssertionError(f"{path}: keys differ: {sorted(set(a) ^ set(b))}")
        for k in a:
            assert_same(a[k], b[k], rtol, atol, f"{path}.{k}")
        return
    if isinstance(a, (list, np.ndarray)) or isinstance(b, (list, np.ndarray)):
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if a_arr.shape != b_arr.shape:
            raise AssertionError(f"{path}: shapes differ: {a_arr.shape} vs {b_arr.shape}")
        if a_arr.dtype.kind in "fc" or b_arr.dtype.kind in "fc":
            if not np.allclose(a_arr.astype(float), b_arr.astype(float), rtol=rtol, atol=atol, equal_nan=True):
                raise AssertionError(f"{path}: values differ beyond rtol={rtol}")
        elif a_arr.dtype.kind == "O" or b_arr.dtype.kind == "O":
            for i, (x, y) in enumerate(zip(list(a), list(b))):
                assert_same(x, y, rtol, atol, f"{path}[{i}]")
        elif not np.array_equal(a_arr, b_arr):
            raise AssertionError(f"{path}: values differ")
        return
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or not np.isclose(float(a), float(b), rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{path}: {a!r} != {b!r}")
        return
    if a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")


def verify_shipped(topic: str, name: str, fn: Callable, *args, rtol: float = 1e-6, **kwargs) -> None:
    """Recompute a shipped default view and check it still matches what is in the repo.

    Fails if the shipped bundle is missing, was made with other arguments (its key differs),
    or its numbers drifted: run ``python -m toymodels precompute TOPIC`` to refresh it.
    """
    folder = shipped_path(topic, name)
    if not (folder / "meta.json").exists():
        raise AssertionError(f"no shipped result {topic}/{name}: run `python -m toymodels precompute {topic}`")
    shipped, meta = read_bundle(folder)
    key = call_key(fn, args, kwargs)
    if meta.get("key") != key:
        raise AssertionError(f"shipped {topic}/{name} was computed with other arguments (key {meta.get('key')} "
                             f"!= {key}): run `python -m toymodels precompute {topic}`")
    assert_same(normalise(fn(*args, **kwargs)), shipped, rtol=rtol, path=f"{topic}/{name}")


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
