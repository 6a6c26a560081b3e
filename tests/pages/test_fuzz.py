"""One generic page fuzzer: every page's knobs, moved to values their topic's ``KNOBS`` offers.

For each routed page, the fuzzer opens it (as a link opens it, then on each other tab: a tab draws only when open),
then moves randomly chosen knobs (the rows of ``M.KNOBS`` with a URL id
whose widget is on the page) to the extremes and to random values of what the row offers, one at a time, and
checks that the page still runs without an exception and without an error box: a widget must never offer a value
its bound refuses (a combination over a budget is a warning, not an error). Buttons are left alone (a press can
start a run; each topic's page tests press them). A seeded run, so a failure names the knob and the value and
reproduces.
"""
import numpy as np
import pytest

from tests.apptest_helpers import open_page, open_tab, page_tabs
from toymodels.knobs import Knobs
from toymodels.registry import PAPERS
from toymodels.topic import Each

ROUTED = [p for p in PAPERS if p.has_page]
KINDS = ("slider", "number_input", "select_slider", "selectbox", "radio", "multiselect", "toggle", "checkbox",
         "segmented_control")


def _on_page(at) -> dict:
    """The page's enabled widgets by key."""
    out = {}
    for kind in KINDS:
        try:
            found = getattr(at, kind)
        except (AttributeError, KeyError):
            continue
        out.update({w.key: w for w in found if w.key and not w.key.startswith("$$") and not w.disabled})
    return out


def draw(row, rng, widget=None):
    """A value the row offers (and, where the data narrow it, the widget on the page shows): an extreme or a
    random one."""
    if row.widget == "text":
        return ["", "A short sentence about a cat.", "x" * row.bound.max_chars][int(rng.integers(3))]
    choices = row.choices()
    shown = getattr(widget, "options", None)
    if choices is not None and shown:
        choices = tuple(c for c in choices if row.show(c) in shown) or choices
    pick = rng.choice(["lo", "hi", "mid"])
    if isinstance(row.bound, Each) and row.widget != "range":
        n = len(choices)
        k = int(rng.integers(row.bound.min_len, max(row.bound.min_len, min(n, row.bound.max_len, 4)) + 1))
        return [choices[i] for i in sorted(rng.choice(n, size=k, replace=False))]
    if choices is not None:
        return choices[0] if pick == "lo" else choices[-1] if pick == "hi" else choices[int(rng.integers(len(choices)))]
    item = row.item
    lo, hi = row.limits()
    hi = min(hi, getattr(widget, "max", None) or hi)
    item = type(item)(lo, hi, item.integer)
    step = row.step() or 1.0
    n = int(round((item.hi - item.lo) / step))
    x = item.lo if pick == "lo" else item.lo + step * (n if pick == "hi" else int(rng.integers(n + 1)))
    x = min(x, item.hi)
    if row.widget == "range":
        return (item.lo, x) if x > item.lo else (item.lo, item.hi)
    return int(round(x)) if item.integer else float(x)


def _fuzz(at, topic: str, rows, rng, n_moves: int) -> int:
    """Move ``n_moves`` randomly chosen knobs of ``rows`` that are on the page; check the page after each; return
    how many moves were made (none where the open tab holds no knob)."""
    assert not at.exception, (topic, at.exception)
    assert not at.error, (topic, [e.value for e in at.error])
    moves = 0
    for _ in range(n_moves):
        widgets = _on_page(at)
        present = [r for r in rows if r.id in widgets]
        if not present:
            break
        row = present[int(rng.integers(len(present)))]
        value = draw(row, rng, widgets[row.id])
        assert row.offered(value), (row.key, value)
        at.session_state[row.id] = value
        at.run(timeout=300)
        moves += 1
        assert not at.exception, (topic, row.id, value, at.exception)
        assert not at.error, (topic, row.id, value, [e.value for e in at.error])
    return moves


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_every_knob_a_page_offers_keeps_the_page_running_without_an_error(paper):
    """The page as a link opens it, then each other tab of its query-bound tabs (a tab draws only when open, so
    each is opened by its link): 12 moves on the first of these that holds a knob, 3 on each later one; a tab
    without knobs must still open without an error."""
    m = paper.load()
    if not isinstance(getattr(m, "KNOBS", None), Knobs):
        pytest.xfail(f"{paper.topic}: not yet converted to KNOBS")
    rng = np.random.default_rng(sum(map(ord, paper.topic)))
    rows = [r for r in m.KNOBS.on_page()]
    tabs = page_tabs(paper.topic)
    moves = 0
    for label in (None, *(tabs[1][1:] if tabs else ())):
        at = open_page(paper.topic, timeout=300) if label is None else open_tab(paper.topic, label, timeout=300)
        moves += _fuzz(at, paper.topic if label is None else f"{paper.topic} ({label})", rows, rng,
                       12 if moves == 0 else 3)
    assert moves >= 6, f"{paper.topic}: only {moves} knobs of KNOBS moved, over every tab"
