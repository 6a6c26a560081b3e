"""Bit-for-bit checks of shipped views, for the tests (the library never needs them).

* ``verify_shipped`` recomputes a shipped view and compares it with the bundle in the repository, but first
  compares the build (torch, numpy, pandas, scipy, scikit-learn, the device, the machine) with the one recorded in
  the view's meta (``env``; a bundle without it was made by ``REFERENCE_ENV``) and skips the test with a one-line
  reason when they differ, before computing anything. Where they match it is the real check. (The number-level
  comparisons hold only on the build that made the numbers; their logic is still tested elsewhere, at tolerance.)
* ``assert_same`` names the first place two results differ (floats to a tolerance).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

from toymodels import device as D
from toymodels import store

#: The build every shipped view recorded before views recorded their own (issue #38, 27 Nov 2026): this project's
#: machines (Debian, x86-64, Python 3.11), on the CPU. A bundle whose meta has no ``env`` was computed by it: the
#: shared environment was not upgraded while those views were computed, so exactness tests against such a bundle
#: run where the build matches this one and are skipped elsewhere.
REFERENCE_ENV = {"python": "3.11", "torch": "2.13.0+cpu", "numpy": "2.4.6", "pandas": "3.1.1", "scipy": "1.17.1",
                 "scikit-learn": "1.9.1", "device": "cpu", "machine": "x86_64"}


def environment_difference(recorded: dict | None, current: dict | None = None) -> str | None:
    """Why numbers recorded under ``recorded`` (``None``: ``REFERENCE_ENV``, a bundle made before views recorded
    their build) cannot be expected bit for bit here, in one line, or None when the builds match. Compares the
    libraries of ``D.EXACT_LIBRARIES``, the device type and the machine (Python's version does not change a
    number)."""
    recorded = REFERENCE_ENV if not isinstance(recorded, dict) else recorded
    current = D.environment("cpu") if current is None else current
    diffs = [f"{key} {recorded.get(key)} there, {current.get(key)} here"
             for key in (*D.EXACT_LIBRARIES, "device", "machine") if recorded.get(key) != current.get(key)]
    return "; ".join(diffs) or None


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

    Fails if the shipped bundle is missing, was made with other arguments (its key differs), or its numbers
    drifted: run ``python -m toymodels precompute TOPIC`` to refresh it. Skipped in one line, before computing
    anything, when this build is not the one that made it (``environment_difference``).
    """
    folder = store.shipped_path(topic, name)
    if not (folder / "meta.json").exists():
        raise AssertionError(f"no shipped result {topic}/{name}: run `python -m toymodels precompute {topic}`")
    shipped, meta = store.read_bundle(folder)
    why = environment_difference(meta.get("env"))
    if why:
        pytest.skip(f"bit-for-bit check of {topic}/{name} needs the build that made it: {why}")
    key = store.call_key(fn, args, kwargs)
    if meta.get("key") != key:
        raise AssertionError(f"shipped {topic}/{name} was computed with other arguments (key {meta.get('key')} "
                             f"!= {key}): run `python -m toymodels precompute {topic}`")
    assert_same(store.normalise(fn(*args, **kwargs)), shipped, rtol=rtol, path=f"{topic}/{name}")
