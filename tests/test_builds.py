"""Issue #38 (4): the test suite is not tied to one torch build.

The device is pinned to the CPU for every test, whatever the machine has; a shipped view records the build that
computed it (torch, numpy, pandas, scipy, scikit-learn, the device, the machine), and its bit-for-bit check is
skipped with a one-line reason, before computing anything, under another build. No Streamlit here.
"""
import json

import numpy as np
import pytest
import torch

from tests.exact import REFERENCE_ENV, environment_difference, verify_shipped
from toymodels import device as D
from toymodels import store

CALLS = []


def toy(n: int, seed: int = 0):
    CALLS.append((n, seed))
    return {"x": np.random.default_rng(seed).normal(size=n)}


def test_the_device_is_the_cpu_even_where_cuda_is_available(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert D.get_device() == torch.device("cpu")
    assert D.get_device("auto") == torch.device("cpu")
    assert D.environment()["device"] == "cpu"


def test_a_shipped_view_records_the_build_that_computed_it(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    store.ship("demo", "v", toy, 4, seed=1)
    env = store.shipped_meta("demo", "v")["env"]
    assert env == D.environment("cpu")
    assert env["torch"] == torch.__version__ and env["numpy"] == np.__version__ and env["device"] == "cpu"
    assert set(D.EXACT_LIBRARIES) <= set(env) and env["machine"]


def _ship_as(tmp_path, monkeypatch, env):
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    store.ship("demo", "v", toy, 4, seed=1)
    path = tmp_path / "demo" / "v" / "meta.json"
    doc = json.loads(path.read_text())
    if env is None:
        doc["meta"].pop("env")
    else:
        doc["meta"]["env"] = env
    path.write_text(json.dumps(doc))
    CALLS.clear()


@pytest.mark.parametrize("key", ["torch", "numpy", "pandas", "device", "machine"])
def test_a_view_made_by_another_build_is_skipped_in_one_line_without_computing(tmp_path, monkeypatch, key):
    change = {key: "other-than-" + D.environment("cpu")[key]}  # another build whatever this machine's is
    _ship_as(tmp_path, monkeypatch, {**D.environment("cpu"), **change})
    with pytest.raises(pytest.skip.Exception) as skip:
        verify_shipped("demo", "v", toy, 4, seed=1)
    msg = str(skip.value)
    (key, there), = change.items()
    assert msg.startswith("bit-for-bit check of demo/v needs the build that made it: ") and "\n" not in msg
    assert f"{key} {there} there, {D.environment('cpu')[key]} here" in msg
    assert CALLS == []  # nothing recomputed


def test_under_the_same_build_the_check_is_real(tmp_path, monkeypatch):
    _ship_as(tmp_path, monkeypatch, D.environment("cpu"))
    verify_shipped("demo", "v", toy, 4, seed=1)
    assert CALLS == [(4, 1)]
    doc = json.loads((tmp_path / "demo/v/meta.json").read_text())
    doc["data"]["x"] = "damaged"
    (tmp_path / "demo/v/meta.json").write_text(json.dumps(doc))
    with pytest.raises(AssertionError):  # a drifted result still fails where the builds match
        verify_shipped("demo", "v", toy, 4, seed=1)


def test_a_view_without_a_recorded_build_was_made_by_the_reference_build(tmp_path, monkeypatch):
    _ship_as(tmp_path, monkeypatch, None)
    here = D.environment("cpu")
    why = environment_difference(None, here)
    if why is None:  # this machine is the reference build: the bit-for-bit check runs
        verify_shipped("demo", "v", toy, 4, seed=1)
        assert CALLS == [(4, 1)]
    else:
        with pytest.raises(pytest.skip.Exception, match="needs the build that made it"):
            verify_shipped("demo", "v", toy, 4, seed=1)
    other = {**REFERENCE_ENV, "torch": "2.11.0+cu130", "numpy": "2.5.0", "pandas": "3.0.0"}
    assert environment_difference(None, other) == ("torch 2.13.0+cpu there, 2.11.0+cu130 here; numpy 2.4.6 there, "
                                                   "2.5.0 here; pandas 3.1.1 there, 3.0.0 here")
    assert environment_difference(None, {**REFERENCE_ENV, "python": "3.12"}) is None  # Python changes no number


def test_a_definition_hashes_the_same_under_every_python():
    """freshness hashes a definition's syntax tree as Python 3.11's ``ast.dump`` writes it, whatever Python runs:
    3.12's ``ast.dump`` adds ``type_params=[]`` to every function and class (so every shipped view looked stale on
    a machine with Python 3.12), 3.13's omits empty fields."""
    import ast
    import sys

    from toymodels import freshness

    tree = ast.parse("def f(x, *a, y=1, **k) -> int:\n    return x\nclass C(B):\n    z: int = None\n")
    assert freshness._dump(tree) == (
        "Module([FunctionDef('f', arguments([], [arg('x')], arg('a'), [arg('y')], [Constant(1)], arg('k'), []), "
        "[Return(Name('x', Load()))], [], Name('int', Load())), ClassDef('C', [Name('B', Load())], [], "
        "[AnnAssign(Name('z', Store()), Name('int', Load()), Constant(None), 1)], [])], [])")
    if sys.version_info[:2] == (3, 11):  # byte for byte ast.dump's, on every statement of the package
        for path in sorted(freshness.PACKAGE_DIR.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_bytes())):
                if isinstance(node, ast.stmt):
                    assert freshness._dump(node) == ast.dump(node, annotate_fields=False), (path, node.lineno)


@pytest.mark.parametrize("device, per_run", [("cuda", 8), ("cpu", 5)])
def test_reproduce_on_cuda_batches_eight_seeds(monkeypatch, device, per_run):
    """``reproduce --device cuda`` (deep-crl, the topic whose seeds are instances of one batched model) trains the
    online seeds 8 to a run, the most the bounds allow; on the CPU, the shipped view's 5."""
    import toymodels.deep_crl as M
    from toymodels import device as dev_module
    from toymodels.deep_crl import experiments

    class Stop(Exception):
        pass

    def fake(cfg, n, device=None, progress=None):
        raise Stop(cfg.seeds, n)

    monkeypatch.setattr(experiments, "online_seeds", type("F", (), {"__wrapped__": staticmethod(fake)}))
    monkeypatch.setattr(dev_module, "get_device", lambda d=None: torch.device(d or "cpu"))
    with pytest.raises(Stop) as stop:
        M.reproduce(quick=False, device=device)
    assert stop.value.args == (per_run, M.ONLINE_SEEDS)
