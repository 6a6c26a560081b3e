import json

import numpy as np
import pandas as pd
import pytest

from toymodels import store

CALLS = []


def toy_result(n: int, seed: int = 0):
    """A deterministic stand-in for a paper's computation, counting its calls."""
    CALLS.append((n, seed))
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return {"mean": float(x.mean()), "x": x, "table": pd.DataFrame({"i": np.arange(n), "x": x}),
            "nested": {"label": "ok", "flags": [True, False], "nan": float("nan")}}


def test_bundle_roundtrip_is_exact_and_pickle_free(tmp_path):
    obj = toy_result(5, seed=1)
    folder = store.write_bundle(tmp_path / "b", obj)
    assert sorted(p.name for p in folder.iterdir()) == ["arrays.npz", "meta.json", "table_0.csv"]
    back, _ = store.read_bundle(folder)
    np.testing.assert_array_equal(back["x"], obj["x"])  # bit-exact floats through npz
    np.testing.assert_array_equal(back["table"]["x"].to_numpy(), obj["x"])  # and through CSV
    assert back["nested"]["flags"] == [True, False] and np.isnan(back["nested"]["nan"])
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:  # would raise on object arrays
        assert z["a0"].dtype == np.float64


def test_unstorable_objects_are_refused(tmp_path):
    with pytest.raises(TypeError):
        store.write_bundle(tmp_path / "b", {"f": lambda: 1})


def test_cached_computes_once_then_reads_the_disk(tmp_path, monkeypatch):
    CALLS.clear()
    a = store.cached(toy_result, 10, seed=3)
    b = store.cached(toy_result, 10, seed=3)
    assert CALLS == [(10, 3)]
    np.testing.assert_array_equal(a["x"], b["x"])
    store.cached(toy_result, 10, seed=4)
    assert CALLS == [(10, 3), (10, 4)]


def test_cache_off_recomputes(monkeypatch):
    monkeypatch.setenv("TOYMODELS_CACHE", "off")
    CALLS.clear()
    store.cached(toy_result, 3)
    store.cached(toy_result, 3)
    assert len(CALLS) == 2


def test_keys_distinguish_arguments_and_ignore_kwarg_order():
    k = store.call_key(toy_result, (10,), {"seed": 1})
    assert k == store.call_key(toy_result, (10,), {"seed": 1})
    assert k != store.call_key(toy_result, (10,), {"seed": 2})
    assert store.call_key(dict, (), {"a": 1, "b": 2}) == store.call_key(dict, (), {"b": 2, "a": 1})


def test_shipped_results_are_found_by_key_and_verified(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path / "results")
    store.ship("demo", "default", toy_result, 8, seed=2)
    CALLS.clear()
    got = store.cached(toy_result, 8, seed=2)
    assert CALLS == []  # served from the shipped store, not recomputed
    store.verify_shipped("demo", "default", toy_result, 8, seed=2)
    with pytest.raises(AssertionError, match="other arguments"):
        store.verify_shipped("demo", "default", toy_result, 8, seed=5)
    # a drifted number is caught
    meta = json.loads((tmp_path / "results/demo/default/meta.json").read_text())
    meta["data"]["mean"] += 1.0
    (tmp_path / "results/demo/default/meta.json").write_text(json.dumps(meta))
    with pytest.raises(AssertionError, match="mean"):
        store.verify_shipped("demo", "default", toy_result, 8, seed=2)
    assert got["mean"] == pytest.approx(toy_result(8, seed=2)["mean"])


def test_damaged_cache_entry_is_recomputed(monkeypatch):
    CALLS.clear()
    store.cached(toy_result, 4)
    entry = next(store.cache_dir().iterdir())
    (entry / "meta.json").write_text("{not json")
    store.cached(toy_result, 4)
    assert len(CALLS) == 2


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(store, "MAX_CACHE_ENTRIES", 3)
    for n in range(1, 7):
        store.cached(toy_result, n)
    assert len([p for p in store.cache_dir().iterdir() if p.is_dir()]) <= 3


def test_every_shipped_result_loads_without_pickle_and_is_small():
    folders = sorted(p.parent for p in store.RESULTS_DIR.glob("*/*/meta.json"))
    total = 0
    for folder in folders:
        data, meta = store.read_bundle(folder)  # np.load(allow_pickle=False) inside
        assert meta.get("key") and meta.get("fn", "").startswith("toymodels."), folder
        assert folder.parent.name in {p.topic for p in __import__("toymodels.registry").registry.PAPERS}, folder
        total += sum(f.stat().st_size for f in folder.iterdir())
    assert total < 25 * 2**20, f"shipped results are {total / 2**20:.1f} MB; keep the repo small"
