"""Shared test set-up: an empty live cache per test, the device pinned to the CPU, exactness checks that know the
build they run under, and the ``gpu`` marker.

* **The CPU, whatever the machine has.** ``TOYMODELS_DEVICE=cpu`` for every test (set here before any test module
  is imported, and again around each test): ``get_device()`` would pick CUDA on a GPU machine, and results are
  bit-for-bit reproducible on the CPU only. A test that needs another device names it (``device="cuda"`` beats
  the variable): the ``gpu`` tests (tests/test_gpu.py), skipped where CUDA is not available.
* **Exactness under the build that shipped the view.** ``store.verify_shipped`` recomputes a shipped view and
  compares it bit for bit; here it first compares the build (torch, numpy, pandas, scipy, scikit-learn, the
  device, the machine) with the one recorded in the view's meta (``env``; a bundle without it was made by
  ``device.REFERENCE_ENV``) and skips the test with a one-line reason when they differ, before computing
  anything. Where they match it is the real check. (The number-level comparisons of such tests hold only on
  the build that made the numbers; their logic is still tested elsewhere, at tolerance.)

Nothing here imports Streamlit, altair or hypothesis: tests/test_gpu.py runs on machines that lack them.
"""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for `import ui` in page tests
PINNED_DEVICE = "cpu"
os.environ["TOYMODELS_DEVICE"] = PINNED_DEVICE  # before any test module (or what it imports) asks for a device


def pytest_configure(config):  # also declared in pyproject.toml (for `pytest --markers` without this file)
    config.addinivalue_line("markers", "gpu: runs a torch topic's training step on CUDA and compares it with the CPU "
                                       "(tests/test_gpu.py); skipped without CUDA")


def _exact_guard(verify):
    """``store.verify_shipped``, skipped (one line) when this build differs from the one that made the view."""
    def verify_shipped(topic, name, *args, **kwargs):
        from toymodels import store
        from toymodels.device import environment_difference

        meta = store.shipped_meta(topic, name)
        why = environment_difference((meta or {}).get("env"))
        if meta is not None and why:
            pytest.skip(f"bit-for-bit check of {topic}/{name} needs the build that made it: {why}")
        return verify(topic, name, *args, **kwargs)

    verify_shipped.__wrapped__ = verify
    return verify_shipped


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own empty live cache, so no test passes on another's leftovers; the device is the CPU
    and shipped views are compared bit for bit only under the build that made them (see the module's docstring)."""
    monkeypatch.setenv("TOYMODELS_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("TOYMODELS_DEVICE", PINNED_DEVICE)
    from toymodels import store  # light: numpy, pandas, no torch

    if not hasattr(store.verify_shipped, "__wrapped__"):
        monkeypatch.setattr(store, "verify_shipped", _exact_guard(store.verify_shipped))
    yield


@pytest.fixture
def repo_root() -> Path:
    return ROOT
