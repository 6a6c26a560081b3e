"""A topic's stored results: its declared views, their freshness, its ledger of claims, and Home's index.

``stored_view(module, name)`` is the one way to ask whether a view is stored. It reads the shipped store without
importing the view's function when the view declares it lazily (``View(".train:train")``), so a page that shows
shipped results never imports torch, and it reads no source: a shipped bundle made with the view's declared
arguments is served, because ``stale_views`` (what ``precompute --check`` reports, in ``make test`` and CI) has
checked its definitions at build time. ``load_view`` computes what is not stored (outside ``stored_only``);
``verdict_of`` judges a topic's claims on its views.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Mapping
from typing import Any, Callable, Iterable

from toymodels import store
from toymodels.claims import Verdict, count_text, judge, topic_reproduced
from toymodels.errors import NotStored
from toymodels.topic import View


def module_for(topic: str):
    """The topic package behind a registry topic (``"deep-crl"`` -> ``toymodels.deep_crl``)."""
    from toymodels.registry import get_paper

    module = get_paper(topic).load()
    if module is None:
        raise KeyError(f"topic {topic!r} has no module yet")
    return module


def _pkg(module) -> str:
    """The module's name, for a view's relative lazy reference (a test's stand-in module may have none)."""
    return getattr(module, "__name__", "")


def _views_of(module) -> Mapping[str, View]:
    found = getattr(module, "VIEWS", None)
    if found is None:
        raise AttributeError(f"{module.__name__} declares no VIEWS")
    return found


def _view(module, name: str) -> View:
    views_ = _views_of(module)
    if name not in views_:
        raise KeyError(f"{module.__name__} has no view {name!r}; views: {', '.join(views_)}")
    return views_[name]


def view_call(module, name: str) -> tuple[Callable, dict]:
    """``(fn, kwargs)`` of a declared view (imports the function's module)."""
    v = _view(module, name)
    return v.resolve(_pkg(module)), v.arguments()


_STORED_ONLY = contextvars.ContextVar("toymodels_stored_only", default=False)


@contextlib.contextmanager
def stored_only():
    """Inside: ``load_view`` never computes (it raises ``NotStored``), nor do lazy view arguments."""
    token = _STORED_ONLY.set(True)
    try:
        yield
    finally:
        _STORED_ONLY.reset(token)


def view_arguments(module, name: str) -> dict:
    """A view's arguments, built from stored results only (``NotStored`` when one they need is missing)."""
    with stored_only():
        return _view(module, name).arguments()


def stored_view(module, name: str, resolve: bool = True) -> tuple[bool, Any]:
    """``(True, result)`` when the declared view ``name`` is stored: its shipped bundle (read without importing a
    lazily declared function) or, with ``resolve``, the disk cache. ``(False, None)`` otherwise, and always for a
    pending view. Never computes."""
    v = _view(module, name)
    if v.pending:
        return False, None
    try:
        kwargs = view_arguments(module, name)
    except NotStored:
        return False, None
    hit, value = store.lookup_view(module.TOPIC, name, kwargs)
    if hit or not (resolve or callable(v.fn)):
        return hit, value
    return store.lookup(v.resolve(_pkg(module)), **kwargs)


def load_view(topic_or_module, name: str, progress=None) -> Any:
    """A declared view's result: stored (``stored_view``), else computed. Inside ``stored_only`` it never
    computes: it raises ``NotStored``. (Read-write plain objects, for the library; pages use ``ui.view``.)"""
    module = module_for(topic_or_module) if isinstance(topic_or_module, str) else topic_or_module
    hit, value = stored_view(module, name, resolve=True)
    if hit:
        return value
    if _STORED_ONLY.get():
        raise NotStored(f"{module.TOPIC}/{name} is not stored")
    fn, kwargs = view_call(module, name)
    return store.cached(fn, **kwargs, progress=progress)


def stale_views(module) -> dict[str, str]:
    """name -> why, for every view of ``module``, pending ones aside, whose shipped bundle is not fresh by
    definition (build time: it parses source), and every bundle under ``results/<topic>/`` that no view declares.
    Reads stored results only: a check never starts a computation (lazy arguments that need a missing view count
    as stale)."""
    declared, out = _views_of(module), {}
    folder = store.RESULTS_DIR / module.TOPIC
    for p in sorted(folder.iterdir()) if folder.is_dir() else []:
        if p.name not in declared and not p.name.startswith("."):
            out[p.name] = f"shipped, but no view declares it: delete {folder.name}/{p.name}"
    for name in (n for n, v in declared.items() if not v.pending):
        try:
            args = view_arguments(module, name)
        except NotStored as exc:
            out[name] = f"needs a view that is not shipped or stale ({exc})"
            continue
        except Exception as exc:  # noqa: BLE001 - e.g. a topic's own "not computed yet": stale, not a crash
            out[name] = f"its arguments cannot be built from stored results ({exc})"
            continue
        why = store.staleness(module.TOPIC, name, _view(module, name).ref(_pkg(module)), **args)
        if why:
            out[name] = why
    return out


# --------------------------------------------------------------------------- claims and verdicts


class ViewSet(Mapping):
    """A topic's results by view name, for its claims: ``overrides`` first (a visitor's own run, a quick
    reproduction), then stored views; with ``compute`` a missing view is computed, else ``NotStored``."""

    def __init__(self, module, overrides: Mapping[str, Any] | None = None, compute: bool = False):
        self.module, self.overrides, self.compute, self._got = module, dict(overrides or {}), compute, {}

    def __getitem__(self, name: str) -> Any:
        if name in self.overrides:
            return self.overrides[name]
        if name not in self._got:
            if self.compute:
                self._got[name] = load_view(self.module, name)
            else:
                with stored_only():
                    self._got[name] = load_view(self.module, name)
        return self._got[name]

    def __iter__(self):
        return iter(dict.fromkeys([*self.overrides, *_views_of(self.module)]))

    def __len__(self) -> int:
        return len(list(iter(self)))


def verdict_of(module, overrides: Mapping[str, Any] | None = None, compute: bool = False) -> Verdict:
    """Judge every claim of ``module.CLAIMS`` on its views (see ``ViewSet``) and derive the verdict: reproduced
    when every headline claim is, not reproduced when one is not; metrics from ``module.metrics(views)``."""
    views = ViewSet(module, overrides, compute)
    ledger = tuple(judge(c, views) for c in module.CLAIMS)
    head = next((j for j in ledger if j.kind == "headline"), ledger[0] if ledger else None)
    try:
        metrics = dict(module.metrics(views)) if hasattr(module, "metrics") else {}
    except (NotStored, KeyError):
        metrics = {}
    return Verdict(topic_reproduced(ledger), count_text(ledger), head.ours if head else "n/a",
                   head.paper if head else "n/a", metrics, ledger)


def reproduce_record(module, computed: Mapping[str, Any], quick: bool, seed: int, **extra) -> dict:
    """What every topic's ``reproduce`` returns (the command line prints it as its last line): the same keys in
    every topic, ``topic``, ``quick``, ``seed``, ``reproduced`` and ``claims`` (the ledger judged on this run's
    ``computed`` views, stored views for the rest), then the topic's metrics and any ``extra``."""
    verdict = verdict_of(module, overrides=computed)
    return {"topic": module.TOPIC, "quick": bool(quick), "seed": int(seed), "reproduced": verdict.reproduced,
            **dict(verdict.metrics), **extra, "claims": [j.as_dict() for j in verdict.claims]}


def unshipped_views(module) -> list[str]:
    """The views of ``module``, pending ones aside, with no shipped bundle made with their declared arguments: the
    server's check, which reads no source (their definitions are the build's to check: ``stale_views``)."""
    out = []
    for name in (n for n, v in _views_of(module).items() if not v.pending):
        meta = store.shipped_meta(module.TOPIC, name) or {}
        try:
            shipped = meta.get("declared") == store.declared_key(view_arguments(module, name))
        except Exception:  # noqa: BLE001 - arguments that need a missing view, or a topic's "not computed yet"
            shipped = False
        if not shipped:
            out.append(name)
    return out


def shipped_verdict(module, stale: Mapping[str, str] | None = None) -> tuple[Verdict, bool]:
    """The topic's verdict on its shipped views, without recomputing, and whether every view is shipped
    (``stale``: ``stale_views(module)`` when the caller has it, else the server's cheap ``unshipped_views``)."""
    stale = unshipped_views(module) if stale is None else stale
    try:
        return verdict_of(module), not stale
    except Exception as exc:  # noqa: BLE001 - an old-format bundle must not break the page, Home or the CLI
        return Verdict(None, f"the shipped views could not be judged ({type(exc).__name__}: {exc}); re-ship "
                             f"them with `python -m toymodels precompute {module.TOPIC}`", "n/a", "n/a"), False


# --------------------------------------------------------------------------- the verdict index (for Home)


def verdict_record(module, stale: Mapping[str, str] | None = None) -> dict:
    """The JSON record of a topic's shipped verdict: what Home shows without importing the topic (and torch),
    and, under ``ledger``, the whole judged ledger that a page shows (``indexed_verdict``), when it is JSON."""
    verdict, fresh = shipped_verdict(module, stale)
    record = {"reproduced": verdict.reproduced, "badge": verdict.badge, "ours": verdict.ours,
              "paper": verdict.paper, "summary": verdict.summary, "fresh": fresh}
    if verdict.claims:
        record["claims"] = [{"id": j.id, "kind": j.kind, "status": j.status, "rule": j.rule, "ours": j.ours,
                             "paper": j.paper}
                            for j in verdict.claims]
    if fresh:
        ledger = {"metrics": dict(verdict.metrics), "claims": [j.as_dict() for j in verdict.claims]}
        with contextlib.suppress(TypeError, ValueError):  # not JSON (a claim's numpy metric): pages judge it live
            record["ledger"] = json.loads(json.dumps(ledger, ensure_ascii=False, default=_json_scalar))
    return record


def _json_scalar(obj: Any) -> Any:
    """A numpy number as the Python number it holds (``json.dumps``'s ``default``); anything else is not JSON."""
    item = getattr(obj, "item", None)
    if item is not None and getattr(obj, "shape", None) == ():
        return item()
    raise TypeError(f"{type(obj).__name__} is not JSON")


def indexed_verdict(module) -> tuple[Verdict, bool]:
    """``shipped_verdict`` for the web server, without judging a claim: the ledger as ``precompute`` wrote it to
    the verdict index (``precompute --check``, in ``make test`` and CI, checks it equals the ledger judged on the
    shipped views), so a page load imports no statistics library. Judged on the spot, as ``shipped_verdict``,
    when a view is not shipped or the index holds no usable ledger for the topic."""
    from toymodels.registry import read_verdicts

    stale = unshipped_views(module)
    if not stale:
        verdict = _ledger_of(read_verdicts().get(module.TOPIC))
        if verdict is not None:
            return verdict, True
    return shipped_verdict(module, stale)


def _ledger_of(record: Mapping[str, Any] | None) -> Verdict | None:
    """The Verdict a record of the verdict index holds under ``ledger`` (None: no ledger, or a damaged one)."""
    from toymodels.claims import Judged

    try:
        ledger = record["ledger"]
        claims = tuple(Judged(**{**j, "fitted": tuple(j["fitted"]), "metrics": dict(j["metrics"])})
                       for j in ledger["claims"])
        return Verdict(record["reproduced"], record["summary"], record["ours"], record["paper"],
                       dict(ledger["metrics"]), claims)
    except (TypeError, KeyError, ValueError):
        return None


def write_verdicts(modules: Iterable) -> None:
    """Refresh the verdict index for these topic modules (``precompute`` calls it after shipping)."""
    path = store.RESULTS_DIR / "verdicts.json"
    try:
        index = json.loads(path.read_text())
        if not isinstance(index, dict):
            index = {}
    except (OSError, ValueError):
        index = {}
    for module in modules:
        index[module.TOPIC] = verdict_record(module)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(index.items())), indent=1, ensure_ascii=False) + "\n")


def verdict_index_problem(module, stale: Mapping[str, str] | None = None) -> str | None:
    """Why the verdict index's record of ``module`` differs from its verdict recomputed from the shipped views."""
    from toymodels.registry import read_verdicts

    want = verdict_record(module, stale)
    have = read_verdicts().get(module.TOPIC)
    if have is None:
        return "missing from the verdict index"
    if json.dumps(have, sort_keys=True) != json.dumps(want, sort_keys=True):  # as text: NaN == NaN
        return "the verdict index differs from the verdict of the shipped views"
    return None
