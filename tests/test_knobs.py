"""The knob checks every topic passes, one test id per topic and check (in the spirit of scikit-learn's
``parametrize_with_checks``): a topic declares each knob once, in ``config.KNOBS``; its bounded entry points declare
every parameter (or name it free); every value a page offers lies inside its bound; no view reaches a bound, so a
bound can change without staling a view; a page types no range and parses no URL."""
import ast
import inspect
import re
import shutil
import subprocess
import sys
from dataclasses import fields, is_dataclass

import pytest

from toymodels import freshness
from toymodels.knobs import Knob, Knobs
from toymodels.registry import PAPERS, REPO_ROOT
from toymodels.topic import Each, Fields, OneOf, Range

PKG = REPO_ROOT / "toymodels"
PACKAGES = [p for p in PAPERS if (PKG / p.module / "__init__.py").is_file()]
BOUNDISH = (Knob, Knobs, Range, OneOf, Each, Fields)
WIDGETS = ("slider", "number_input", "select_slider", "multiselect", "selectbox", "radio", "segmented_control", "pills")
NOT_KNOBS = ("tabs", "selection_point", "selection_interval")   # a tab's or a chart legend's binding: no knob
RANGE_ARGS = ("min_value", "max_value", "options", "value", "step")
#: a table of bounds, by its name
TABLE_NAME = re.compile(r"(^|_)(LIMITS|BOUNDS|KNOBS|CHOICES)$")
#: a validation call, by its name: a config's validate / check_structure (cross-field rules), a budget
CHECK_NAME = re.compile(r"^validate$|^check_structure$|^check_budget$|^check_compare$|_budget$")


def bounded_functions(module) -> dict:
    """The topic's public bounded functions (lazy names imported)."""
    out = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(module, name)
        except Exception:  # noqa: BLE001 - a lazy name that fails to import is its own test's failure
            continue
        if callable(obj) and hasattr(getattr(obj, "bounds", None), "items") and hasattr(obj, "__wrapped__"):
            out[name] = obj
    return out


# --------------------------------------------------------------------------- the checks


def check_knobs_are_declared(m):
    """``KNOBS`` is the topic's one table, and every URL id is unique across it."""
    assert isinstance(getattr(m, "KNOBS", None), Knobs), f"{m.TOPIC}: no KNOBS table in config.py"
    ids = [r.id for r in m.KNOBS.values() if r.id]
    assert len(ids) == len(set(ids))


def _config_type(fn, param):
    """The dataclass a config parameter takes: its default's type, else its annotation's."""
    import typing

    if is_dataclass(param.default):
        return type(param.default)
    try:
        hint = typing.get_type_hints(inspect.unwrap(fn)).get(param.name)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: no field check
        return None
    return hint if isinstance(hint, type) and is_dataclass(hint) else None


def check_every_bounded_parameter_is_declared(m):
    """Every parameter of a bounded entry point has a bound or is named free (``_free=``); a config argument's
    bound names every field a caller may set."""
    missing = []
    for name, fn in bounded_functions(m).items():
        sig = inspect.signature(inspect.unwrap(fn))
        for param in sig.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            spec = fn.bounds.get(param.name)
            if spec is None and param.name not in fn.free:
                missing.append(f"{name}({param.name})")
            elif isinstance(spec, Fields):
                config = _config_type(fn, param)
                missing += [f"{name}({param.name}.{f.name})" for f in fields(config or ())
                            if f.init and f.name not in spec.specs]
    assert not missing, f"{m.TOPIC}: unbounded parameters: {missing}"


def check_offered_values_lie_inside_their_bounds(m):
    """Every value a page offers, and every knob's default, passes the knob's bound."""
    bad = []
    for row in m.KNOBS.values():
        choices = row.choices()
        for v in choices or ():
            try:
                row.item.check(row.name, v)
            except Exception as exc:  # noqa: BLE001
                bad.append(f"{row.key}={v!r}: {exc}")
        if row.default is not None and not row.offered(list(row.default) if isinstance(row.default, tuple)
                                                       and isinstance(row.bound, Each) else row.default):
            bad.append(f"{row.key}: default {row.default!r} not offered")
        if isinstance(row.item, Range) and row.step() is not None:
            assert row.step() > 0 and row.step() <= row.item.hi - row.item.lo, row.key
        if row.span is not None:
            for v in row.span:
                try:
                    row.item.check(row.name, v)
                except Exception as exc:  # noqa: BLE001
                    bad.append(f"{row.key}: span end {v!r}: {exc}")
        if row.id and not row.label:
            bad.append(f"{row.key}: on a page, but no label")
    assert not bad, bad


def _resolve(canonical: str):
    """The object a canonical definition name (``topic:NAME``) stands for, where a topic module defines it."""
    topic, _, name = canonical.partition(":")
    import importlib
    import pkgutil

    try:
        pkg = importlib.import_module(f"toymodels.{topic}")
    except ImportError:
        return None
    for info in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
        mod = importlib.import_module(f"toymodels.{topic}.{info.name}")
        if name in vars(mod):
            return vars(mod)[name]
    return vars(pkg).get(name)


def _holds_bound(obj, depth: int = 0) -> bool:
    if isinstance(obj, BOUNDISH):
        return True
    if depth < 2 and isinstance(obj, dict):
        return any(_holds_bound(v, depth + 1) for v in obj.values())
    if depth < 2 and isinstance(obj, (list, tuple)):
        return any(_holds_bound(v, depth + 1) for v in obj)
    return False


def _is_bound(canonical: str) -> bool:
    """A bound or a table of them (by its name or its value)."""
    obj = _resolve(canonical)
    return bool(TABLE_NAME.search(canonical.partition(":")[2])) and not callable(obj) or _holds_bound(obj)


def _is_check(canonical: str) -> bool:
    """A config module's validation or budget (an upload parser's checks are data, not knobs)."""
    obj = _resolve(canonical)
    return bool(CHECK_NAME.search(canonical.partition(":")[2])) and callable(obj) and (
        getattr(obj, "__module__", "").endswith(".config"))


def _reached(m, test) -> dict:
    bad = {}
    for name, v in m.VIEWS.items():
        hits = [d for d in freshness.definitions(v.ref(m.__name__)) if test(d)]
        if hits:
            bad[name] = hits
    return bad


def check_no_view_reaches_a_bound(m):
    """No definition a shipped view reaches is a bound or a knob table: a bound changes, nothing is recomputed."""
    bad = _reached(m, _is_bound)
    assert not bad, f"{m.TOPIC}: views reach bounds: {bad}"


def check_no_view_reaches_a_validation_call(m):
    """No definition a shipped view reaches calls a config's validation (``validate``, ``check_structure``, a
    budget): validation happens at the bounded entry points only (their ``@bounded`` declarations are not part of
    a view's definitions), never in what a view computes (a training loop, a model's constructor)."""
    bad = _reached(m, _is_check)
    assert not bad, f"{m.TOPIC}: views reach validation: {bad}"


def check_the_page_types_no_range_and_parses_no_url(m):
    """A page draws its knobs with ``ui.form`` / ``ui.knob``: no ``query_params``, no ``bind=``, no widget whose
    range is typed as numbers in the page."""
    paper = next(p for p in PAPERS if p.topic == m.TOPIC)
    if not paper.has_page:
        pytest.skip("no page")
    tree = ast.parse((REPO_ROOT / paper.page).read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("query_params", "_read_link", "_write_link"):
            bad.append(f"line {node.lineno}: {node.attr}")
        if isinstance(node, ast.Call):
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if any(k.arg == "bind" for k in node.keywords) and fn not in NOT_KNOBS:
                bad.append(f"line {node.lineno}: {fn}(bind=...)")
            typed = [a for a in [*node.args[1:], *(k.value for k in node.keywords if k.arg in RANGE_ARGS)]
                     if isinstance(a, (ast.List, ast.Tuple)) or isinstance(a, ast.Constant)
                     and isinstance(a.value, (int, float)) and not isinstance(a.value, bool)]
            if fn in WIDGETS and typed:
                bad.append(f"line {node.lineno}: {fn} with a typed range")
    assert not bad, f"{paper.page}: {bad}"


CHECKS = [check_knobs_are_declared, check_every_bounded_parameter_is_declared,
          check_offered_values_lie_inside_their_bounds, check_no_view_reaches_a_bound,
          check_no_view_reaches_a_validation_call,
          check_the_page_types_no_range_and_parses_no_url]


@pytest.mark.parametrize("paper, check", [(p, c) for p in PACKAGES for c in CHECKS],
                         ids=[f"{p.topic}-{c.__name__}" for p in PACKAGES for c in CHECKS])
def test_topic(paper, check):
    check(paper.load())  # every topic declares KNOBS (check_knobs_are_declared)


# --------------------------------------------------------------------------- a bound's change stales no view

_RANGE = re.compile(r"(Range\(\s*[^,()]+,\s*)([0-9_.]+(?:e[+-]?[0-9]+)?)")     # Range(lo, hi ...: hi
_PAIR = re.compile(r'("\w+":\s*\(\s*[^,()]+,\s*)([0-9_.]+(?:e[+-]?[0-9]+)?)(\s*\))')  # "name": (lo, hi)


@pytest.fixture(scope="module")
def widened(tmp_path_factory):
    """A copy of the package with every live limit of every topic's config widened (the upper end of every
    ``Range`` and every ``"name": (lo, hi)`` pair doubled), and ``precompute --check``'s output on it."""
    copy = tmp_path_factory.mktemp("widened") / "repo"
    shutil.copytree(PKG, copy / "toymodels", ignore=shutil.ignore_patterns("__pycache__"))
    count = 0
    for paper in PACKAGES:
        path = copy / "toymodels" / paper.module / "config.py"
        text, n = _RANGE.subn(lambda mt: f"{mt[1]}2 * {mt[2]}", path.read_text())
        text, k = _PAIR.subn(lambda mt: f"{mt[1]}2 * {mt[2]}{mt[3]}", text)
        path.write_text(text)
        count += n + k
    assert count, "no limit found to widen"
    out = subprocess.run([sys.executable, "-m", "toymodels", "precompute", "--check"], cwd=copy,
                         capture_output=True, text=True, timeout=600)
    return out.stdout + out.stderr


@pytest.mark.parametrize("paper", PACKAGES, ids=lambda p: p.topic)
def test_widening_every_live_limit_stales_no_view(paper, widened):
    """Every bound of the topic widened in a copy: ``precompute --check`` finds none of its views stale."""
    stale = [line for line in widened.splitlines() if line.startswith(f"stale: {paper.topic}/")]
    assert not stale, stale
