"""The one contract every topic module follows: views, bounds, verdicts, progress, read-only results.

A topic module (``toymodels.rlvr``, ``toymodels.superposition``, ...) declares:

``TOPIC``
    its registry name (``"rlvr"``).
``VIEWS``
    ``topic.views(View(name, fn, kwargs), ...)``: every default view the page opens on, declared once. That
    declaration is what the page shows (``ui.view``), what ``python -m toymodels precompute`` ships (one
    generic loop), what ``precompute --check`` checks and what the store keys on. ``kwargs`` are the
    arguments by parameter name; they may be a zero-argument callable when they are costly to build or
    depend on another view (``lambda: dict(emb=load_view(TOPIC, "embeddings"))``).
``HEADLINE``
    the name of the view whose result ``verdict`` judges.
``verdict(result) -> Verdict``
    the only place where "does the toy reproduce the paper" is decided. Pages and the home page display it;
    ``python -m toymodels verdict`` prints it.
``reproduce(quick, seed, device, out, progress) -> dict``
    the paper's headline experiment for the command line.

Functions whose arguments a visitor can set are wrapped in ``@bounded(...)``: every argument is checked
against its declared ``Range`` / ``OneOf`` (and any cross-argument budget) before any work starts, and a
violation raises ``InputError`` with a message a page can show as it is. Nothing is clamped silently.

Long work takes ``progress``: call ``p = as_progress(progress)``, then ``p(fraction, message)``, and hand
``p.sub(start, end, "prefix: ")`` to inner work: nested progress with no hand-written lambdas.
"""
from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
import math
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd


# --------------------------------------------------------------------------- errors


class InputError(ValueError):
    """An argument out of bounds or malformed. The message is written for a person: a page shows it as is."""


# --------------------------------------------------------------------------- progress


class Progress:
    """``progress(fraction, message)`` with nesting: ``sub(a, b, prefix)`` maps [0, 1] onto [a, b].

    Wraps a plain callback (or None). Fractions are clamped to [0, 1]; messages carry the prefixes of every
    enclosing ``sub``.
    """

    __slots__ = ("_cb", "_a", "_b", "_prefix")

    def __init__(self, callback: Callable[[float, str], None] | None = None, a: float = 0.0, b: float = 1.0,
                 prefix: str = ""):
        self._cb, self._a, self._b, self._prefix = callback, a, b, prefix

    def __call__(self, fraction: float, message: str = "") -> None:
        if self._cb is None:
            return
        f = min(1.0, max(0.0, float(fraction)))
        self._cb(self._a + (self._b - self._a) * f, f"{self._prefix}{message}")

    def sub(self, start: float, end: float, prefix: str = "") -> "Progress":
        """Progress for a part of the work that covers [start, end] of this one."""
        start, end = min(1.0, max(0.0, start)), min(1.0, max(0.0, end))
        span = self._b - self._a
        return Progress(self._cb, self._a + span * start, self._a + span * end, self._prefix + prefix)

    def part(self, i: int, n: int, prefix: str = "") -> "Progress":
        """Progress for the i-th of n equal parts."""
        return self.sub(i / n, (i + 1) / n, prefix)

    def __bool__(self) -> bool:
        return self._cb is not None


def as_progress(progress: Callable[[float, str], None] | Progress | None) -> Progress:
    """Any progress argument (None, a callback, a Progress) as a Progress."""
    return progress if isinstance(progress, Progress) else Progress(progress)


# --------------------------------------------------------------------------- bounds


@dataclass(frozen=True)
class Range:
    """A number in [lo, hi]; ``integer=True`` also requires a whole number. ``unit`` names it in messages."""

    lo: float
    hi: float
    integer: bool = False
    unit: str = ""

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise InputError(f"{name} must be a number, got {_show(value)}")
        v = float(value)
        if not math.isfinite(v):
            raise InputError(f"{name} must be a finite number, got {_show(value)}")
        if self.integer and v != int(v):
            raise InputError(f"{name} must be a whole number, got {_show(value)}")
        if not self.lo <= v <= self.hi:
            unit = f" {self.unit}" if self.unit else ""
            raise InputError(f"{name} must be between {_num(self.lo)} and {_num(self.hi)}{unit}, got {_show(value)}")
        return int(v) if self.integer else value


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values."""

    values: tuple

    def __init__(self, *values):
        object.__setattr__(self, "values", tuple(values))

    def check(self, name: str, value: Any) -> Any:
        try:
            ok = value in self.values
        except TypeError:
            ok = False
        if not ok:
            raise InputError(f"{name} must be one of {', '.join(map(repr, self.values))}; got {_show(value)}")
        return value


@dataclass(frozen=True)
class Each:
    """A list of 1..max_len items, each checked by ``item``."""

    item: Any
    max_len: int = 16
    min_len: int = 1

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InputError(f"{name} must be a list, got {_show(value)}")
        items = list(value)
        if not self.min_len <= len(items) <= self.max_len:
            raise InputError(f"{name} must have between {self.min_len} and {self.max_len} items, got {len(items)}")
        for i, v in enumerate(items):
            self.item.check(f"{name}[{i}]", v)
        return value


@dataclass(frozen=True)
class Fields:
    """Bounds on the fields of a dataclass argument (a config): ``Fields(steps=Range(1, 2000, True))``."""

    specs: Mapping[str, Any]

    def __init__(self, **specs):
        object.__setattr__(self, "specs", types.MappingProxyType(dict(specs)))

    def check(self, name: str, value: Any) -> Any:
        if not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            raise InputError(f"{name} must be a configuration, got {_show(value)}")
        for field_name, spec in self.specs.items():
            spec.check(field_name, getattr(value, field_name))
        return value


def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(name: str, value: Any, spec: Any) -> Any:
    """Check one value against a spec (Range, OneOf, Each, Fields); raise InputError when it is out of bounds."""
    return spec.check(name, value)


def bounded(_budget: Callable[..., None] | None = None, **specs) -> Callable:
    """Declare a function's bounds once; every call checks them (after binding to the signature).

    ``specs`` map parameter names to Range / OneOf / Each / Fields. ``_budget``, when given, is called with
    the bound arguments (as keywords) after the per-argument checks, for limits that involve several
    arguments (a compute budget); it raises InputError. The wrapper exposes ``.bounds`` (the specs) so a
    page can take a slider's limits from the same declaration.
    """

    def wrap(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        unknown = set(specs) - set(sig.parameters)
        if unknown:
            raise TypeError(f"bounds name unknown parameter(s) of {fn.__qualname__}: {sorted(unknown)}")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise InputError(f"{fn.__name__}: {exc}") from None
            bound.apply_defaults()
            for name, spec in specs.items():
                spec.check(name, bound.arguments[name])
            if _budget is not None:
                _budget(**bound.arguments)
            return fn(*bound.args, **bound.kwargs)

        checked.bounds = types.MappingProxyType(dict(specs))
        checked.budget = _budget
        return checked

    return wrap


# --------------------------------------------------------------------------- views


@dataclass(frozen=True)
class View:
    """A named default view: ``fn(**kwargs)``.

    ``kwargs``: the arguments by parameter name, or a zero-argument callable returning them (evaluated when
    the view is shown or shipped). ``label``: what a progress bar says while it is computed.
    ``seconds``: the expected compute time on a 2-core CPU (shown before a long run).
    """

    name: str
    fn: Callable
    kwargs: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    label: str = "Computing…"
    seconds: float | None = None

    def arguments(self) -> dict:
        kw = self.kwargs() if callable(self.kwargs) else self.kwargs
        return dict(kw)


def views(*items: View) -> Mapping[str, View]:
    """The module's ``VIEWS``: an ordered, read-only mapping name -> View (names must be unique)."""
    out: dict[str, View] = {}
    for v in items:
        if v.name in out:
            raise ValueError(f"two views named {v.name!r}")
        out[v.name] = v
    return types.MappingProxyType(out)


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """Does the toy reproduce the paper's headline? Decided in the topic module, shown everywhere else.

    ``reproduced``: True (it does), False (it does not), None (the toy does not test this / mixed).
    ``summary``: one sentence for a person. ``ours`` and ``paper``: the headline number, ours and the paper's,
    as short strings for a result strip (``"α_m = 1.02"``, ``"α_m ≈ 1"``). ``metrics``: a flat dict of
    numbers, booleans and short strings (our numbers and the paper's references, the latter named
    ``paper_*``).
    """

    reproduced: bool | None
    summary: str
    ours: str
    paper: str
    metrics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.reproduced not in (True, False, None):
            raise TypeError("Verdict.reproduced must be True, False or None")
        flat = {}
        for k, v in dict(self.metrics).items():
            if isinstance(v, (np.bool_, bool)):
                v = bool(v)
            elif isinstance(v, np.integer):
                v = int(v)
            elif isinstance(v, np.floating):
                v = float(v)
            if not (v is None or isinstance(v, (bool, int, float, str))):
                raise TypeError(f"verdict metric {k!r} must be a number, bool, None or short string, "
                                f"got {type(v).__name__}")
            if isinstance(v, str) and len(v) > 120:
                raise TypeError(f"verdict metric {k!r} is a long string; metrics are short")
            flat[str(k)] = v
        object.__setattr__(self, "metrics", types.MappingProxyType(flat))

    @property
    def badge(self) -> str:
        return {True: "reproduced", False: "not reproduced", None: "partly / not tested"}[self.reproduced]


# --------------------------------------------------------------------------- read-only results


class FrozenDict(dict):
    """A dict that refuses changes (still a dict for isinstance and JSON)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("this result is shared by every visitor and read-only: copy it before changing it")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore

    def __copy__(self):
        return dict(self)

    def __deepcopy__(self, memo):
        import copy

        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self):
        return (dict, (dict(self),))


class FrozenList(list):
    """A list that refuses changes (still a list)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("this result is shared by every visitor and read-only: copy it before changing it")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore
    __iadd__ = __imul__ = _refuse  # type: ignore

    def __copy__(self):
        return list(self)

    def __deepcopy__(self, memo):
        import copy

        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self):
        return (list, (list(self),))


class FrozenFrame(pd.DataFrame):
    """A DataFrame whose in-place changes raise (``df[c] = ...``, ``df.loc[...] = ...``); methods that return
    new frames (``assign``, ``copy``, arithmetic, ``melt`` ...) return ordinary DataFrames."""

    @property
    def _constructor(self):
        return pd.DataFrame

    def _refuse(self, *args, **kwargs):
        raise TypeError("this table is shared by every visitor and read-only: use .copy() or .assign()")

    __setitem__ = __delitem__ = insert = pop = _refuse  # type: ignore

    def _set_item(self, *args, **kwargs):  # used by df[c] = ..., df.loc[:, c] = ...
        self._refuse()

    @property
    def loc(self):
        return _ReadOnlyIndexer(super().loc)

    @property
    def iloc(self):
        return _ReadOnlyIndexer(super().iloc)

    @property
    def at(self):
        return _ReadOnlyIndexer(super().at)

    @property
    def iat(self):
        return _ReadOnlyIndexer(super().iat)


class _ReadOnlyIndexer:
    """``frozen.loc[...]`` reads as usual; ``frozen.loc[...] = v`` raises."""

    __slots__ = ("_indexer",)

    def __init__(self, indexer):
        self._indexer = indexer

    def __getitem__(self, key):
        return self._indexer[key]

    def __call__(self, *args, **kwargs):  # pandas calls df.loc(axis=...) internally
        return _ReadOnlyIndexer(self._indexer(*args, **kwargs))

    def __setitem__(self, key, value):
        raise TypeError("this table is shared by every visitor and read-only: use .copy() or .assign()")


def freeze(obj: Any) -> Any:
    """A read-only version of a result: dicts and lists refuse changes, arrays have ``writeable=False``,
    tables refuse in-place assignment. Arrays are shared, not copied."""
    if isinstance(obj, FrozenDict | FrozenList | FrozenFrame):
        return obj
    if isinstance(obj, dict):
        return FrozenDict({k: freeze(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return FrozenList(freeze(v) for v in obj)
    if isinstance(obj, np.ndarray):
        view = obj.view()
        view.flags.writeable = False
        return view
    if isinstance(obj, pd.DataFrame):
        frame = FrozenFrame(obj.copy(deep=False))
        for arr in (frame[c].to_numpy() for c in frame.columns):
            try:
                arr.flags.writeable = False
            except (ValueError, AttributeError):
                pass
        return frame
    return obj


# --------------------------------------------------------------------------- using a topic's views


def module_for(topic: str):
    """The topic module behind a registry topic (``"rlvr"`` -> ``toymodels.rlvr``)."""
    from toymodels.registry import get_paper

    paper = get_paper(topic)
    module = paper.load()
    if module is None:
        raise KeyError(f"topic {topic!r} has no module yet")
    return module


def _views_of(module) -> Mapping[str, View]:
    found = getattr(module, "VIEWS", None)
    if found is None:
        raise AttributeError(f"{module.__name__} declares no VIEWS")
    return found


def view_call(module, name: str) -> tuple[Callable, dict]:
    """``(fn, kwargs)`` of a declared view."""
    views_ = _views_of(module)
    if name not in views_:
        raise KeyError(f"{module.__name__} has no view {name!r}; views: {', '.join(views_)}")
    v = views_[name]
    return v.fn, v.arguments()


class NotStored(LookupError):
    """A view needed while only stored results may be read (a freshness check, a verdict) is not stored."""


_STORED_ONLY = contextvars.ContextVar("toymodels_stored_only", default=False)


def load_view(topic_or_module, name: str, progress=None) -> Any:
    """A declared view's result: from the shipped store when fresh, else the disk cache, else computed.
    Inside a freshness check or a verdict (``stored_only``) it never computes: it raises ``NotStored``.
    (Read-write plain objects: for the library. Pages use ``ui.view``, which hands out frozen copies.)"""
    from toymodels import store

    module = module_for(topic_or_module) if isinstance(topic_or_module, str) else topic_or_module
    fn, kwargs = view_call(module, name)
    if _STORED_ONLY.get():
        hit, value = store.lookup(fn, **kwargs)
        if not hit:
            raise NotStored(f"{module.TOPIC}/{name} is not stored")
        return value
    return store.cached(fn, **kwargs, progress=progress)


def stale_views(module) -> dict[str, str]:
    """name -> why, for every declared view of ``module`` whose shipped bundle is not fresh. Reads stored
    results only: a check never starts a computation (lazy arguments that need a missing view count as stale)."""
    from toymodels import store

    out = {}
    token = _STORED_ONLY.set(True)
    try:
        for name, v in _views_of(module).items():
            try:
                args = v.arguments()
            except NotStored as exc:
                out[name] = f"needs a view that is not shipped or stale ({exc})"
                continue
            except Exception as exc:  # noqa: BLE001 - e.g. a topic's own "not computed yet": stale, not a crash
                out[name] = f"its arguments cannot be built from stored results ({exc})"
                continue
            why = store.staleness(module.TOPIC, name, v.fn, **args)
            if why:
                out[name] = why
    finally:
        _STORED_ONLY.reset(token)
    return out


def shipped_verdict(module, stale: Mapping[str, str] | None = None) -> tuple[Verdict, bool]:
    """The topic's verdict on its shipped headline view, without recomputing, and whether every shipped
    view of the topic is fresh (``stale``: ``stale_views(module)`` when the caller has it already).
    A missing headline view gives a verdict that says so."""
    from toymodels import store

    stale = stale_views(module) if stale is None else stale
    result = store.load_shipped(module.TOPIC, module.HEADLINE)
    if result is None:
        return Verdict(None, f"the headline view {module.HEADLINE!r} is not shipped: run "
                             f"`python -m toymodels precompute {module.TOPIC}`", "n/a", "n/a"), False
    try:
        return module.verdict(result), not stale
    except Exception as exc:  # noqa: BLE001 - an old-format bundle must not break the page, Home or the CLI
        return Verdict(None, f"the shipped headline view could not be judged ({type(exc).__name__}: {exc}); "
                             f"re-ship it with `python -m toymodels precompute {module.TOPIC}`", "n/a", "n/a"), False


# --------------------------------------------------------------------------- the verdict index (for Home)


def verdicts_path():
    from toymodels import store

    return store.RESULTS_DIR / "verdicts.json"


def verdict_record(module, stale: Mapping[str, str] | None = None) -> dict:
    """The JSON record of a topic's shipped verdict: what Home shows without importing the topic (and torch)."""
    verdict, fresh = shipped_verdict(module, stale)
    return {"reproduced": verdict.reproduced, "badge": verdict.badge, "ours": verdict.ours, "paper": verdict.paper,
            "summary": verdict.summary, "fresh": fresh}


def write_verdicts(modules: Iterable) -> None:
    """Refresh the verdict index for these topic modules (``precompute`` calls it after shipping)."""
    import json

    path = verdicts_path()
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


def read_verdicts() -> dict:
    """topic -> verdict record, as last written by ``precompute`` ({} when there is none or it is damaged)."""
    from toymodels.registry import read_verdicts as read

    return read()


def verdict_index_problem(module, stale: Mapping[str, str] | None = None) -> str | None:
    """Why the verdict index's record of ``module`` differs from its verdict recomputed from the shipped view."""
    import json

    want = json.loads(json.dumps(verdict_record(module, stale), ensure_ascii=False))
    have = read_verdicts().get(module.TOPIC)
    if have is None:
        return "missing from the verdict index"
    if have != want:
        return "the verdict index differs from the verdict of the shipped view"
    return None
