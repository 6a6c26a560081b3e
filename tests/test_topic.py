"""The topic contract (toymodels/topic.py): bounds, errors, progress, verdicts, read-only results, and that every
topic module follows it."""
import dataclasses
import inspect

import numpy as np
import pytest

from toymodels import shipped, store
from toymodels.registry import PAPERS
from toymodels.topic import (
    Each,
    Fields,
    InputError,
    NotStored,
    OneOf,
    Progress,
    Range,
    Verdict,
    View,
    as_progress,
    bounded,
    views,
)


@dataclasses.dataclass(frozen=True)
class Cfg:
    steps: int = 100
    lr: float = 0.1


def _budget(cfg, seeds, progress=None):
    if cfg.steps * seeds > 1000:
        raise InputError(f"steps x seeds = {cfg.steps * seeds} is over the budget of 1000")


@bounded(_budget, cfg=Fields(steps=Range(1, 500, integer=True), lr=Range(1e-4, 1.0)),
         seeds=Range(1, 8, integer=True))
def train(cfg: Cfg = Cfg(), seeds: int = 2, progress=None):
    p = as_progress(progress)
    for i in range(seeds):
        p.part(i, seeds, f"seed {i}: ")(1.0, "done")
    return {"steps": cfg.steps, "seeds": seeds}


@pytest.mark.parametrize("call, message", [
    (lambda: train(seeds=9), "seeds must be between 1 and 8, got 9"),
    (lambda: train(seeds=2.5), "seeds must be a whole number"),
    (lambda: train(seeds=float("nan")), "finite"),
    (lambda: train(seeds="3"), "must be a number"),
    (lambda: train(seeds=True), "must be a number"),
    (lambda: train(Cfg(steps=0)), "steps must be between 1 and 500"),
    (lambda: train(Cfg(lr=2.0)), "lr must be between"),
    (lambda: train(Cfg(steps=400), seeds=3), "over the budget"),
    (lambda: train(nosuch=1), "unexpected keyword"),
])
def test_every_out_of_bounds_argument_raises_input_error_with_a_readable_message(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_in_bounds_calls_run_and_bounds_are_exposed_for_pages():
    assert train(Cfg(steps=500), seeds=2) == {"steps": 500, "seeds": 2}
    assert train.bounds["seeds"].hi == 8 and train.bounds["cfg"].specs["steps"].lo == 1
    assert issubclass(InputError, ValueError)
    assert list(inspect.signature(train).parameters) == ["cfg", "seeds", "progress"]  # wraps keeps the signature


def test_oneof_and_each():
    with pytest.raises(InputError, match="one of 'a', 'b'"):
        OneOf("a", "b").check("kind", "c")
    with pytest.raises(InputError, match="unhashable|one of"):
        OneOf("a").check("kind", ["a"])
    Each(Range(0, 1), max_len=3).check("ps", [0.1, 0.2])
    with pytest.raises(InputError, match=r"ps\[1\] must be between 0 and 1"):
        Each(Range(0, 1), max_len=3).check("ps", [0.1, 2])
    with pytest.raises(InputError, match="between 1 and 3 items"):
        Each(Range(0, 1), max_len=3).check("ps", [0.1] * 4)
    with pytest.raises(InputError, match="must be a list"):
        Each(Range(0, 1)).check("ps", "0.1")


def test_bounds_naming_an_unknown_parameter_are_refused_at_import():
    with pytest.raises(TypeError, match="unknown parameter"):
        bounded(nope=Range(0, 1))(lambda x: x)


def test_nested_progress_maps_fractions_and_prefixes():
    seen = []
    p = as_progress(lambda f, m: seen.append((round(f, 6), m)))
    p(0.5, "half")
    p.sub(0.5, 1.0, "b: ").part(1, 4, "q: ")(0.5, "x")
    p(7, "clamped")
    assert seen == [(0.5, "half"), (0.5 + 0.5 * (1 + 0.5) / 4, "b: q: x"), (1.0, "clamped")]
    as_progress(None)(0.3, "nothing happens")  # no callback: a no-op
    assert as_progress(p) is p and not Progress()


def test_progress_reaches_the_end_of_every_part():
    seen = []
    train(seeds=4, progress=lambda f, m: seen.append(f))
    assert seen == [0.25, 0.5, 0.75, 1.0]


def test_verdict_metrics_are_flat_and_checked():
    v = Verdict(True, "It does.", "1.02", "≈ 1", {"alpha": np.float64(1.02), "n": np.int64(3), "ok": np.bool_(1)})
    assert v.metrics == {"alpha": 1.02, "n": 3, "ok": True} and type(v.metrics["n"]) is int
    assert v.badge == "reproduced"
    listed = Verdict(True, "x", "a", "b", {"list": np.array([1.5, 2]), "rows": [{"steps": 100, "drop": 0.02}]})
    assert listed.metrics == {"list": [1.5, 2.0], "rows": [{"steps": 100, "drop": 0.02}]}  # JSON lists, not text
    for bad in ({"nested": [[1, 2]]}, {"deep": [{"a": [1]}]}, {"obj": object()}, {"long": "x" * 201}):
        with pytest.raises(TypeError):
            Verdict(True, "x", "a", "b", bad)
    with pytest.raises(TypeError):
        Verdict("yes", "x", "a", "b")


def test_views_are_unique_and_lazy():
    calls = []
    vs = views(View("a", train, dict(seeds=1)), View("b", train, lambda: calls.append(1) or dict(seeds=2)))
    assert list(vs) == ["a", "b"] and calls == []
    assert vs["b"].arguments() == {"seeds": 2} and calls == [1]
    with pytest.raises(ValueError, match="two views"):
        views(View("a", train), View("a", train))


# --------------------------------------------------------------------------- every topic follows the contract

TOPIC_MODULES = [p for p in PAPERS if p.load() is not None]


@pytest.mark.parametrize("paper", TOPIC_MODULES, ids=lambda p: p.topic)
def test_topic_module_follows_the_contract(paper):
    module = paper.load()
    assert module.TOPIC == paper.topic
    assert module.VIEWS and module.HEADLINE in module.VIEWS
    for name, view in module.VIEWS.items():
        assert view.name == name
        if not view.pending:  # a pending run's arguments may wait on a pilot (gated-attention's hsd_seeds)
            store.bind_arguments(view.resolve(module.__name__), (), view.arguments())  # the arguments fit
    for legacy in ("precompute", "DEFAULT_CALLS", "default_views", "shipped_views", "_shipped_views"):
        assert not hasattr(module, legacy), f"{paper.module}.{legacy} is left over: VIEWS replaces it"
    assert module.CLAIMS and callable(module.metrics) and callable(module.reproduce)  # judged claim by claim


@pytest.mark.parametrize("paper", TOPIC_MODULES, ids=lambda p: p.topic)
def test_shipped_views_are_fresh_and_the_verdict_reads_them(paper):
    module = paper.load()
    assert shipped.stale_views(module) == {}, "run `python -m toymodels precompute --stale-only`"
    verdict, fresh = shipped.shipped_verdict(module)
    assert fresh and isinstance(verdict, Verdict) and verdict.summary and verdict.ours and verdict.paper


def test_imports_flow_pages_to_ui_to_toymodels_and_never_back():
    """toymodels never imports streamlit or ui; ui never imports a page."""
    import ast
    from pathlib import Path

    root = Path(store.__file__).resolve().parent.parent

    def imported(path):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
        return names

    for path in (root / "toymodels").rglob("*.py"):
        bad = imported(path) & {"streamlit", "ui", "pages", "Home"}
        assert not bad, f"{path.relative_to(root)} imports {bad}"
    for path in (root / "ui").rglob("*.py"):
        assert not imported(path) & {"pages", "Home"}, path


def test_a_freshness_check_never_computes_a_missing_view(monkeypatch, tmp_path):
    """A view whose lazy arguments need another, unshipped view is reported stale; nothing is computed."""
    import types as _types

    calls = []

    def base(n: int = 3):
        calls.append(n)
        return {"n": n}

    def derived(x: dict):
        return x

    module = _types.SimpleNamespace(TOPIC="demo", HEADLINE="derived")
    module.VIEWS = views(View("base", base, dict(n=3)),
                         View("derived", derived, lambda: dict(x=shipped.load_view(module, "base"))))
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(store, "_INDEX", None)
    stale = shipped.stale_views(module)
    assert stale["base"] == "missing" and "not shipped" in stale["derived"] and calls == []
    assert shipped.load_view(module, "base") == {"n": 3} and calls == [3]  # outside a check it computes


def test_a_pending_view_is_never_read_and_a_bundle_no_view_declares_fails_the_check(monkeypatch, tmp_path):
    """``View(pending=why)``: a registered run not in this build. Nothing reads it, by name or by key (its claims
    see ``NotStored``; an old bundle of it stays unread), and ``precompute --check`` passes it by; a bundle that no
    view declares fails the check."""
    import sys
    import types as _types

    def base(n: int = 3):
        return {"n": n}

    module = _types.SimpleNamespace(TOPIC="demo", HEADLINE="base", CLAIMS=())
    module.VIEWS = views(View("base", base, dict(n=3)), View("later", base, dict(n=4), pending="not yet run"))
    monkeypatch.setitem(sys.modules, "toymodels.demo", module)
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(store, "_INDEX", None)
    monkeypatch.setenv("TOYMODELS_CACHE", "off")
    store.ship("demo", "base", base, n=3)
    assert shipped.stale_views(module) == {} and shipped.unshipped_views(module) == []
    assert shipped.shipped_verdict(module)[1]
    store.ship("demo", "later", base, n=4)  # an old bundle of a pending view: never read
    assert shipped.stored_view(module, "later") == (False, None) and store.lookup(base, n=4) == (False, None)
    assert store.lookup(base, n=3)[0]
    with pytest.raises(NotStored):
        shipped.ViewSet(module)["later"]
    assert shipped.stale_views(module) == {}
    store.ship("demo", "gone", base, n=5)   # a bundle no view declares
    assert set(shipped.stale_views(module)) == {"gone"} and "no view declares it" in shipped.stale_views(module)["gone"]
    (tmp_path / "demo" / "base" / "meta.json").unlink()
    assert shipped.unshipped_views(module) == ["base"] and not shipped.shipped_verdict(module)[1]


def test_a_page_reads_the_ledger_the_build_judged_and_the_check_compares_it(monkeypatch, tmp_path):
    """``indexed_verdict`` (the server's) returns the ledger ``precompute`` wrote to the verdict index without
    judging a claim; it judges on the spot when the index holds no ledger or a view is not shipped; and
    ``precompute --check``'s ``verdict_index_problem`` fails an index whose ledger differs from the judged one."""
    import json
    import sys
    import types as _types

    from toymodels.claims import Claim, Evidence, point

    judged = []

    def base(n: int = 3):
        return {"n": n}

    def decide(views):
        judged.append(1)
        n = views["base"]["n"]
        return Evidence(f"n = {n}", point(n == 3, "n is 3"), metrics={"n": np.int64(n), "half": np.float64(n / 2)})

    module = _types.SimpleNamespace(TOPIC="demo", HEADLINE="base", metrics=lambda v: {"n": v["base"]["n"]},
                                    CLAIMS=(Claim("n", "headline", "n is three", "Eq. 1", "3", "n == 3", decide),))
    module.VIEWS = views(View("base", base, dict(n=3)))
    monkeypatch.setitem(sys.modules, "toymodels.demo", module)
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(store, "_INDEX", None)
    monkeypatch.setenv("TOYMODELS_CACHE", "off")
    store.ship("demo", "base", base, n=3)
    monkeypatch.setattr("toymodels.registry._BY_TOPIC", {"demo": None})  # read_verdicts keeps known topics only
    shipped.write_verdicts([module])
    assert shipped.verdict_index_problem(module) is None
    judged.clear()
    verdict, fresh = shipped.indexed_verdict(module)
    want, _ = shipped.shipped_verdict(module)
    assert judged == [1] and fresh  # only shipped_verdict judged
    assert verdict == dataclasses.replace(want, claims=tuple(dataclasses.replace(
        j, metrics={"n": 3, "half": 1.5}) for j in want.claims))
    index = json.loads((tmp_path / "verdicts.json").read_text())
    index["demo"]["ledger"]["claims"][0]["ours"] = "n = 4"  # a ledger that the shipped views do not give
    (tmp_path / "verdicts.json").write_text(json.dumps(index))
    assert shipped.verdict_index_problem(module) == "the verdict index differs from the verdict of the shipped views"
    assert shipped.indexed_verdict(module)[0].claims[0].ours == "n = 4"  # the server trusts the build's check
    del index["demo"]["ledger"]
    (tmp_path / "verdicts.json").write_text(json.dumps(index))
    judged.clear()
    assert shipped.indexed_verdict(module)[0].claims[0].ours == "n = 3" and judged == [1]  # no ledger: judged
    (tmp_path / "demo" / "base" / "meta.json").unlink()
    judged.clear()
    verdict, fresh = shipped.indexed_verdict(module)
    assert not fresh and judged == [1] and verdict.claims[0].status == "not testable here"


def test_the_quantiles_pages_use_are_scipy_stats_bit_for_bit():
    """Page-facing intervals call scipy.special (light) instead of scipy.stats (about 1 s on a cold page): the
    same functions scipy.stats calls, so the same bits (issue 39)."""
    from scipy import stats

    from toymodels.claims import clopper_pearson
    from toymodels.gated_attention import summary as gated
    from toymodels.transductive import clopper_pearson as transductive_cp

    for n in (1, 2, 5, 20, 60, 137):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for level in (0.9, 0.95):
                a = (1 - level) / 2
                want = (0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1)),
                        1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k)))
                assert clopper_pearson(k, n, level) == want == transductive_cp(k, n, level)
                assert gated.clopper_pearson(k, n, level) == want
    x = np.random.default_rng(0).normal(size=7)
    for level in (0.9, 0.95):
        half = float(stats.t.ppf(0.5 + level / 2, 6) * x.std(ddof=1) / np.sqrt(7))
        assert gated.t_interval(x, level) == (float(x.mean()), float(x.mean()) - half, float(x.mean()) + half)
