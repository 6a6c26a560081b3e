"""Shared test set-up: an empty live cache per test, the device pinned to the CPU, exactness checks that know the
build they run under, and the ``gpu`` marker.

* **The CPU, whatever the machine has.** ``TOYMODELS_DEVICE=cpu`` for every test (set here before any test module
  is imported, and again around each test): ``get_device()`` would pick CUDA on a GPU machine, and results are
  bit-for-bit reproducible on the CPU only. A test that needs another device names it (``device="cuda"`` beats
  the variable): the ``gpu`` tests (tests/test_gpu.py), skipped where CUDA is not available.
* **Exactness under the build that shipped the view:** ``tests/exact.py`` (``verify_shipped``).

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


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own empty live cache, so no test passes on another's leftovers; the device is the CPU."""
    monkeypatch.setenv("TOYMODELS_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("TOYMODELS_DEVICE", PINNED_DEVICE)
    yield


@pytest.fixture
def repo_root() -> Path:
    return ROOT
