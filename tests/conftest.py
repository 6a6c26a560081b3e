import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for `import ui` in page tests


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own empty live cache, so no test passes on another's leftovers."""
    monkeypatch.setenv("TOYMODELS_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("TOYMODELS_DEVICE", raising=False)
    yield


@pytest.fixture
def repo_root() -> Path:
    return ROOT
