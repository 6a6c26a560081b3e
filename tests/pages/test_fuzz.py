"""One generic page fuzzer: every page's widgets, moved to values inside their own declared bounds.

For each routed page, the fuzzer opens it, reads the widgets it declares (a slider's and a number input's min and
max, a select box's, radio's and multiselect's options, a toggle), then moves randomly chosen widgets to their
extremes and to random values inside the bounds, one at a time, and checks the page still runs without an
exception. Buttons are left alone (a press can start a run; each topic's page tests press them). A seeded run, so a
failure names the widget and the value and reproduces.
"""
import numpy as np
import pytest

from tests.apptest_helpers import open_page
from toymodels.registry import PAPERS

ROUTED = [p for p in PAPERS if p.has_page]
KINDS = ("slider", "number_input", "selectbox", "radio", "multiselect", "toggle", "checkbox")


def _widgets(at):
    out = []
    for kind in KINDS:
        try:
            found = getattr(at, kind)
        except (AttributeError, KeyError):
            continue
        out += [(kind, w.key) for w in found if w.key and not w.key.startswith("$$") and not w.disabled]
    return out


def _value(kind, w, rng):
    """A value inside the widget's declared bounds: an extreme or a random one."""
    if kind in ("toggle", "checkbox"):
        return None, bool(rng.integers(2))
    if kind in ("selectbox", "radio", "multiselect") and not _plain_options(w):
        return None, None  # options shown through a format_func: AppTest cannot map labels back to values
    if kind in ("selectbox", "radio"):
        n = len(w.options)
        return ("index", int(rng.integers(n))) if n else (None, None)
    if kind == "multiselect":
        n = len(w.options)
        if not n:
            return None, None
        k = int(rng.integers(1, min(n, 4) + 1))
        return "indices", sorted(rng.choice(n, size=k, replace=False).tolist())
    lo, hi = w.min, w.max
    if lo is None or hi is None:
        return None, None
    pick = rng.choice(["lo", "hi", "mid"])
    x = lo if pick == "lo" else hi if pick == "hi" else lo + (hi - lo) * float(rng.random())
    integer = isinstance(w.value, (int, np.integer)) and not isinstance(w.value, bool)
    if kind == "slider" and isinstance(w.value, (list, tuple)):  # a range slider
        return None, (lo, hi) if pick != "mid" else (lo, x)
    return None, (int(round(x)) if integer else float(x))


def _plain_options(w) -> bool:
    """True when the widget shows its values as they are (so AppTest's labels are its values)."""
    values = w.value if isinstance(w.value, (list, tuple)) else [w.value]
    return all(v is None or str(v) in w.options for v in values)


def _set(at, kind, key, how, value):
    w = getattr(at, kind)(key=key)
    if how == "index":
        w.set_value(_raw(w, w.options[value]))
    elif how == "indices":
        _multiselect(w, value)
    else:
        w.set_value(value)


def _raw(w, label: str):
    """A plain option's value from its label (a number where the widget holds numbers)."""
    current = w.value[0] if isinstance(w.value, (list, tuple)) and w.value else w.value
    if isinstance(current, bool):
        return label == "True"
    if isinstance(current, (int, np.integer)):
        return int(float(label))
    if isinstance(current, (float, np.floating)):
        return float(label)
    return label


def _multiselect(w, indices):
    w.set_value([_raw(w, w.options[i]) for i in indices])


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_every_widget_inside_its_bounds_keeps_the_page_running(paper):
    rng = np.random.default_rng(sum(map(ord, paper.topic)))
    at = open_page(paper.topic, timeout=300)
    assert not at.exception, at.exception
    widgets = _widgets(at)
    assert widgets, f"{paper.topic}: no widget found"
    moves = 0
    for _ in range(12):
        kind, key = widgets[int(rng.integers(len(widgets)))]
        try:
            w = getattr(at, kind)(key=key)
        except (KeyError, IndexError):  # a widget the last move removed (a section that changed)
            widgets = _widgets(at)
            continue
        how, value = _value(kind, w, rng)
        if value is None and how is None:
            continue
        try:
            _set(at, kind, key, how, value)
        except (ValueError, KeyError, IndexError, TypeError):  # AppTest refused a value the widget cannot hold
            continue
        at.run(timeout=300)
        moves += 1
        assert not at.exception, (paper.topic, kind, key, value, at.exception)
        widgets = _widgets(at)
    assert moves >= 6, f"{paper.topic}: only {moves} widget moves were possible"
