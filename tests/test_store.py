import dataclasses
import json
import os

import numpy as np
import pandas as pd
import pytest

from tests.exact import verify_shipped
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
    assert store.call_key(toy_result, (), {"n": 1, "seed": 2}) == store.call_key(toy_result, (), {"seed": 2, "n": 1})


def test_shipped_results_are_found_by_key_and_verified(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path / "results")
    store.ship("demo", "default", toy_result, 8, seed=2)
    CALLS.clear()
    got = store.cached(toy_result, 8, seed=2)
    assert CALLS == []  # served from the shipped store, not recomputed
    verify_shipped("demo", "default", toy_result, 8, seed=2)
    with pytest.raises(AssertionError, match="other arguments"):
        verify_shipped("demo", "default", toy_result, 8, seed=5)
    # a drifted number is caught
    meta = json.loads((tmp_path / "results/demo/default/meta.json").read_text())
    meta["data"]["mean"] += 1.0
    (tmp_path / "results/demo/default/meta.json").write_text(json.dumps(meta))
    with pytest.raises(AssertionError, match="mean"):
        verify_shipped("demo", "default", toy_result, 8, seed=2)
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


# --------------------------------------------------------------------------- keys bind to the signature


def keyed(n: int, scale: float = 1.0, *, tag: str = "a", progress=None):
    return n * scale


@dataclasses.dataclass(frozen=True)
class _Cfg:
    steps: int = 100
    lr: float = 0.1
    name: str = "x"


def keyed_cfg(cfg: _Cfg = _Cfg(), seeds: int = 2):
    return cfg.steps


def test_the_same_call_gets_the_same_key_however_it_is_spelled():
    base = store.call_key(keyed, (150,))
    for args, kwargs in [((150.0,), {}), ((), {"n": 150}), ((150, 1.0), {}), ((150,), {"scale": 1}),
                         ((np.int64(150),), {"tag": "a"}), ((150,), {"progress": print})]:
        assert store.call_key(keyed, args, kwargs) == base, (args, kwargs)
    assert store.call_key(keyed, (151,)) != base
    assert store.call_key(keyed, (150,), {"scale": 1.5}) != base
    assert store.call_key(keyed, (150.5,)) != base  # not a whole number: stays a float, so a different key
    c = store.call_key(keyed_cfg)
    assert c == store.call_key(keyed_cfg, (_Cfg(steps=100.0, lr=0.1),), {"seeds": 2.0})
    assert c != store.call_key(keyed_cfg, (_Cfg(lr=0.2),))


def test_a_call_that_does_not_fit_the_signature_is_an_input_error():
    from toymodels.topic import InputError

    with pytest.raises(InputError, match="keyed"):
        store.call_key(keyed, (), {"nosuch": 1})


def test_cached_finds_its_own_result_whether_called_positionally_or_by_keyword():
    CALLS.clear()
    store.cached(toy_result, 7, 3)
    store.cached(toy_result, n=7.0, seed=3)
    assert CALLS == [(7, 3)]


# --------------------------------------------------------------------------- damaged entries are misses


def _only_entry():
    entries = [p for p in store.cache_dir().iterdir() if p.is_dir()]
    assert len(entries) == 1
    return entries[0]


@pytest.mark.parametrize("damage", ["truncated_npz", "meta_not_object", "meta_not_json", "csv_missing",
                                    "data_missing", "truncated_csv", "csv_swapped", "csv_is_a_link", "csv_is_a_fifo",
                                    "table_outside", "meta_is_a_fifo", "entry_is_a_link", "no_hashes"])
def test_a_damaged_cache_entry_is_a_miss_and_is_removed(damage):
    CALLS.clear()
    first = store.cached(toy_result, 9, seed=1)
    entry = _only_entry()
    if damage == "truncated_npz":
        raw = (entry / "arrays.npz").read_bytes()
        (entry / "arrays.npz").write_bytes(raw[: len(raw) // 2])
    elif damage == "meta_not_object":
        (entry / "meta.json").write_text("[1, 2, 3]")
    elif damage == "meta_not_json":
        (entry / "meta.json").write_text('{"meta": {')
    elif damage == "csv_missing":
        (entry / "table_0.csv").unlink()
    elif damage == "truncated_csv":  # still valid CSV, fewer rows: only the recorded hash catches it
        lines = (entry / "table_0.csv").read_text().splitlines()
        (entry / "table_0.csv").write_text("\n".join(lines[:2]) + "\n")
    elif damage == "csv_swapped":
        (entry / "table_0.csv").write_text("k,v\n1,2\n")
    elif damage == "csv_is_a_link":
        secret = entry.parent.parent / "secret.csv"
        secret.write_text((entry / "table_0.csv").read_text())
        (entry / "table_0.csv").unlink()
        (entry / "table_0.csv").symlink_to(secret)
    elif damage == "csv_is_a_fifo":  # reading it would block the lookup (and that key, for everyone)
        (entry / "table_0.csv").unlink()
        os.mkfifo(entry / "table_0.csv")
    elif damage == "table_outside":
        doc = json.loads((entry / "meta.json").read_text())
        doc["data"]["table"] = {"__table__": "../../secret.csv"}
        (entry.parent.parent / "secret.csv").write_text("a\n1\n")
        (entry / "meta.json").write_text(json.dumps(doc))
    elif damage == "meta_is_a_fifo":
        (entry / "meta.json").unlink()
        os.mkfifo(entry / "meta.json")
    elif damage == "entry_is_a_link":  # a link to an entry that reads as valid elsewhere
        elsewhere = entry.parent.parent / "elsewhere"
        entry.rename(elsewhere)
        entry.symlink_to(elsewhere, target_is_directory=True)
    elif damage == "no_hashes":
        doc = json.loads((entry / "meta.json").read_text())
        del doc["files"]
        (entry / "meta.json").write_text(json.dumps(doc))
    else:
        (entry / "meta.json").write_text('{"meta": {}}')
    again = store.cached(toy_result, 9, seed=1)
    assert CALLS == [(9, 1), (9, 1)]  # recomputed
    np.testing.assert_array_equal(again["x"], first["x"])
    assert store.read_bundle(_only_entry())[0]["mean"] == first["mean"]  # and rewritten whole


def test_a_link_to_dev_zero_in_the_cache_does_not_hang_a_lookup():
    CALLS.clear()
    store.cached(toy_result, 9, seed=1)
    entry = _only_entry()
    (entry / "arrays.npz").unlink()
    (entry / "arrays.npz").symlink_to("/dev/zero")
    start = __import__("time").perf_counter()
    store.cached(toy_result, 9, seed=1)
    assert __import__("time").perf_counter() - start < 10 and CALLS == [(9, 1), (9, 1)]


def test_pruning_removes_temp_folders_of_killed_writes_and_anything_not_a_folder(tmp_path):
    import time

    for i in range(3):
        store.write_bundle(tmp_path / f"entry{i}", {"i": i})
    orphan, fresh_tmp = tmp_path / ".entry9.abc", tmp_path / ".entry8.def"
    orphan.mkdir()
    (orphan / "arrays.npz").write_bytes(b"x" * 1000)
    fresh_tmp.mkdir()  # a write under way right now: kept
    old = time.time() - store.ORPHAN_SECONDS - 10
    os.utime(orphan, (old, old))
    os.mkfifo(tmp_path / "a-fifo")
    (tmp_path / "a-link").symlink_to("/dev/zero")
    store._prune(tmp_path, keep=2)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".entry8.def", "entry1", "entry2"]


def test_lookup_never_computes():
    CALLS.clear()
    assert store.lookup(toy_result, 4) == (False, None)
    assert CALLS == []


# --------------------------------------------------------------------------- freshness


def test_ship_records_the_source_and_staleness_names_what_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(store, "_INDEX", None)
    store.ship("demo", "default", toy_result, 8, seed=2)
    meta = store.shipped_meta("demo", "default")
    assert meta["source"] == store.source_hash(toy_result) and meta["key"] == store.call_key(toy_result, (8, 2))
    assert store.staleness("demo", "default", toy_result, n=8, seed=2) is None
    assert store.staleness("demo", "default", toy_result, n=8, seed=3) == "computed with other arguments"
    assert store.staleness("demo", "other", toy_result, n=8) == "missing"
    monkeypatch.setattr(store, "source_hash", lambda fn: "changed")
    assert "definitions changed" in store.staleness("demo", "default", toy_result, n=8, seed=2)


def test_a_shipped_bundle_is_served_without_reading_source(tmp_path, monkeypatch):
    """At run time the store serves what the build vouched for (``precompute --check``); it never parses."""
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(store, "_INDEX", None)
    monkeypatch.setenv("TOYMODELS_CACHE", "off")
    store.ship("demo", "default", toy_result, 8, seed=2)

    def parse(*args, **kwargs):
        raise AssertionError("source read at run time")

    monkeypatch.setattr(store.freshness, "definitions", parse)
    monkeypatch.setattr(store.freshness, "_parse", parse)
    CALLS.clear()
    assert store.lookup(toy_result, 8, seed=2)[0] and store.cached(toy_result, 8, seed=2)["mean"] is not None
    assert store.lookup_view("demo", "default", dict(n=8, seed=2))[0]
    assert not store.lookup_view("demo", "default", dict(n=8, seed=3))[0]  # other declared arguments: a miss
    assert CALLS == []


def test_the_live_cache_is_keyed_on_the_packages_source_bytes(tmp_path, monkeypatch):
    """A result computed live before an edit of any source file is not served after it (nor after an edit that
    keeps its size); an unchanged package keeps its key."""
    pkg = tmp_path / "pkg"
    (pkg / "topic").mkdir(parents=True)
    (pkg / "core.py").write_text("A = 1\n")
    (pkg / "topic" / "train.py").write_text("def f():\n    return 1\n")
    monkeypatch.setattr(store, "PACKAGE_DIR", pkg)
    monkeypatch.setattr(store, "_CODE", ((), ""))
    first = store.code_version()
    assert store.code_version() == first
    path = pkg / "topic" / "train.py"
    st = path.stat()
    path.write_text("def f():\n    return 2\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert store.code_version() != first
    path.write_text("def f():\n    return 1\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2))
    assert store.code_version() == first
    CALLS.clear()
    store.cached(toy_result, 5)
    (pkg / "core.py").write_text("A = 2\n")
    store.cached(toy_result, 5)
    assert CALLS == [(5, 0), (5, 0)]
