"""What every topic package is made of: views, bounds, progress, read-only results.

A topic package (``toymodels.rlvr``, ``toymodels.superposition``, ...) declares in its ``__init__`` (CONTRIBUTING.md
"The contract"; ``tests/test_contract.py`` checks it for every topic):

``TOPIC``, ``PAPER``
    its registry name (``"rlvr"``); every number quoted from the paper (``claims.paper_numbers``).
``VIEWS``, ``HEADLINE``
    ``views(View(name, fn, kwargs), ...)``: every default view, declared once. That declaration is what the page
    shows (``ui.view``), what ``python -m toymodels precompute`` ships, what ``precompute --check`` checks and
    what the store keys on. ``HEADLINE`` names the view the topic leads with.
``CLAIMS``, ``metrics(views)``
    the paper's claims, each with its registered test (``claims.Claim``), judged on the views: the only place
    where "does the toy reproduce the paper" is decided; and the verdict's metrics.
``reproduce(quick, seed, device, out, progress) -> dict``
    the paper's headline experiment for the command line (``shipped.reproduce_record``).

The entry points (every function a page or the command line calls with values a visitor can set) are wrapped in
``@bounded(...)``, whose specs come from the topic's ``config.KNOBS`` (``toymodels.knobs``): every argument is
checked against its ``Range`` / ``OneOf`` / ``Each`` (and any cross-argument budget) before any work starts, and a
violation raises ``InputError`` (``BudgetError`` for a budget) with a message a page can show as it is. Nothing
is clamped silently, and nothing a view computes checks a bound again: a bound can change without staling a view.

Long work takes ``progress``: call ``p = as_progress(progress)``, then ``p(fraction, message)``, and hand
``p.sub(start, end, "prefix: ")`` to inner work: nested progress with no hand-written lambdas.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from toymodels.claims import Verdict  # noqa: F401 - part of the contract
from toymodels.errors import BudgetError, InputError, NotStored  # noqa: F401 - part of the contract

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
class AnyOf:
    """A value one of ``specs`` accepts (a swept knob's values: numbers for one knob, names for another)."""

    specs: tuple

    def __init__(self, *specs):
        object.__setattr__(self, "specs", tuple(specs))

    def check(self, name: str, value: Any) -> Any:
        errors = []
        for spec in self.specs:
            try:
                return spec.check(name, value)
            except InputError as exc:
                errors.append(str(exc))
        raise InputError(" or ".join(errors))


@dataclass(frozen=True)
class Maybe:
    """None (the function picks its own default), or a value ``spec`` accepts."""

    spec: Any

    def check(self, name: str, value: Any) -> Any:
        return value if value is None else self.spec.check(name, value)


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


#: Parameters no bound applies to: where a computation runs and how it reports.
FREE = ("device", "progress")


def check_budget(budget: Callable[..., None], arguments: Mapping[str, Any]) -> None:
    """Call a bounded function's budget; an ``InputError`` it raises is a ``BudgetError``."""
    try:
        budget(**arguments)
    except BudgetError:
        raise
    except InputError as exc:
        raise BudgetError(str(exc)) from None


def _bind_checked(fn: Callable, sig: inspect.Signature, specs: Mapping[str, Any], budget, args, kwargs):
    """``fn``'s arguments bound to ``sig`` (defaults applied) after its bounds, then its budget, accepted them."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise InputError(f"{fn.__name__}: {exc}") from None
    bound.apply_defaults()
    for name, spec in specs.items():
        spec.check(name, bound.arguments[name])
    if budget is not None:
        check_budget(budget, bound.arguments)
    return bound


def check_call(fn: Callable, *args, **kwargs) -> None:
    """Run a ``@bounded`` function's checks (bounds, then budget) on these arguments without calling it: raises
    ``InputError`` (``BudgetError`` for the budget), so a page can refuse before offering a run."""
    _bind_checked(fn, inspect.signature(inspect.unwrap(fn)), fn.bounds, getattr(fn, "budget", None), args, kwargs)


def bounded(_budget: Callable[..., None] | None = None, _free: Iterable[str] = (), **specs) -> Callable:
    """Declare a function's bounds once (from its topic's ``KNOBS``); every call checks them (after binding to the
    signature). The entry points of a topic are bounded; what they call is not (scikit-learn's ``transform`` /
    ``_transform``): a view's definitions never reach a bound, so changing one stales no view.

    ``specs`` map parameter names to Range / OneOf / Each / Fields. ``_budget``, when given, is called with
    the bound arguments (as keywords) after the per-argument checks, for limits that involve several
    arguments (a compute budget); an InputError it raises becomes a ``BudgetError``. ``_free`` names the
    parameters left unbounded on purpose (data checked by a parser, a callback) besides ``FREE``. The wrapper
    exposes ``.bounds`` (the specs), ``.budget`` and ``.free``.
    """

    def wrap(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        unknown = (set(specs) | set(_free)) - set(sig.parameters)
        if unknown:
            raise TypeError(f"bounds name unknown parameter(s) of {fn.__qualname__}: {sorted(unknown)}")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            bound = _bind_checked(fn, sig, specs, _budget, args, kwargs)
            return fn(*bound.args, **bound.kwargs)

        checked.bounds = types.MappingProxyType(dict(specs))
        checked.budget = _budget
        checked.free = tuple(FREE) + tuple(_free)
        return checked

    return wrap


# --------------------------------------------------------------------------- views


@dataclass(frozen=True)
class View:
    """A named default view: ``fn(**kwargs)``.

    ``fn``: the function, or a lazy reference to it, ``".train:train"`` (a module of the topic's package and a
    function in it) or ``"toymodels.x.train:train"``: a page that shows the shipped view then never imports
    that module (nor torch). ``kwargs``: the arguments by parameter name, or a zero-argument callable returning
    them (evaluated when the view is shown or shipped). ``label``: what a progress bar says while it is
    computed. ``seconds``: the expected compute time on a 2-core CPU (shown before a long run).

    ``pending``: a registered run not in this build, and why (``"not yet run (20 seeds, about 36 CPU-minutes)"``).
    A pending view is never read, by name or by key, not even an old bundle of it (its claims read "not testable
    here" with this reason); ``precompute`` and ``precompute --check`` pass it by. ``precompute TOPIC --view NAME``
    runs it; then delete ``pending=``.
    """

    name: str
    fn: Callable | str
    kwargs: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    label: str = "Computing…"
    seconds: float | None = None
    pending: str | None = None

    def arguments(self) -> dict:
        kw = self.kwargs() if callable(self.kwargs) else self.kwargs
        return dict(kw)

    def ref(self, package: str) -> Callable | str:
        """``fn`` as a callable or an absolute reference ``"toymodels.x.train:train"`` (``package``: the topic
        module's name, for relative references)."""
        if callable(self.fn):
            return self.fn
        module, _, name = self.fn.partition(":")
        if module.startswith("."):
            module = package + module if module != "." else package
        return f"{module}:{name}"

    def resolve(self, package: str) -> Callable:
        """The function itself (imports its module)."""
        ref = self.ref(package)
        if callable(ref):
            return ref
        import importlib

        module, _, name = ref.partition(":")
        fn = importlib.import_module(module)
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn


def lazy_exports(package: str, names: Mapping[str, str]):
    """``(__getattr__, __dir__)`` for a topic package's ``__init__``: ``names`` maps each public name to the module
    that defines it (``".experiments"``), imported on first use. So importing the package stays light (no torch)
    while ``toymodels.<topic>.train`` works as if it were defined there."""
    import importlib
    import sys

    def __getattr__(name: str):
        if name in names:
            value = getattr(importlib.import_module(names[name], package), name)
            setattr(sys.modules[package], name, value)  # the next access is a plain attribute
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__


def views(*items: View) -> Mapping[str, View]:
    """The module's ``VIEWS``: an ordered, read-only mapping name -> View (names must be unique)."""
    out: dict[str, View] = {}
    for v in items:
        if v.name in out:
            raise ValueError(f"two views named {v.name!r}")
        out[v.name] = v
    return types.MappingProxyType(out)
