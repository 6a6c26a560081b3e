"""Issue #25: what a hostile visitor's link or upload may not do to the hosted demo.

Each class of the hostile-visitor test has a test here: values from a link shown as text, never markup; link
values no widget can take dropped before the page runs; one error handler for pages and fragments; no long
computation started by a link alone, at most one computation per visitor; the verdict index validated on read.
(Damaged cache entries: tests/test_store.py.)
"""
import json
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import open_home
from toymodels.registry import PAPERS

HOSTILE = "[Login again](http://evil.example/login) ![x](http://evil.example/i.png) <img src=x> www.evil.example"


# --------------------------------------------------------------------------- markup


def _markdown_html(text: str) -> str:
    """CommonMark's rendering of ``text`` (markdown-it-py, an independent renderer), with GFM's autolinks."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["linkify"] if _has_linkify() else []).render(text)


def _has_linkify() -> bool:
    try:
        import linkify_it  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("text", [HOSTILE, "**bold** _em_ `code` # h1", ":red[x] :material/home: $x^2$",
                                  "<script>alert(1)</script>", "a\\b\\\\c", "[a]: http://evil.example\n\n[a]",
                                  "http://evil.example/x", "1. item\n- item\n> quote", "~~strike~~ | a | b |"])
def test_plain_text_renders_as_its_own_characters(text):
    import html
    import re

    import ui

    out = _markdown_html(ui.plain(text))
    assert "<a " not in out and "<img" not in out and "<em>" not in out and "<strong>" not in out
    assert "<script" not in out and "<code>" not in out and "<h1>" not in out and "<li>" not in out
    # The visible text is the input, character for character (whitespace aside).
    shown = html.unescape(re.sub(r"<[^>]+>", "", out))
    assert " ".join(shown.split()) == " ".join(text.split())
    # Streamlit's own directives (icons, colours, LaTeX) need ':' '[' '$' unescaped, GFM's autolinks ':' or '.'
    # (linkify is not installed to render them here): all are escaped.
    assert not re.search(r"(?<!\\)[:.\[\]$]", ui.plain(text))


def _notice_app():
    import ui
    from tests.test_reliability import HOSTILE

    ui.link_notice([("key", HOSTILE)])


def test_a_link_notice_shows_values_as_text_never_markup():
    at = AppTest.from_function(_notice_app, default_timeout=30).run()
    assert not at.exception, at.exception
    markup = " ".join(e.value for e in [*at.markdown, *at.warning, *at.error, *at.info, *at.caption])
    assert "http://evil" not in markup  # the value is only inside the code block
    assert any("http://evil.example/login" in c.value for c in at.code)


# --------------------------------------------------------------------------- link values no widget can take


@pytest.mark.parametrize("value", ["inf", "-inf", "1e309", "nan", "99999999999999999999"])
def test_link_values_no_widget_can_take_are_dropped(value):
    at = open_home(60)
    at.query_params["rl_seed"] = value
    at.switch_page("pages/rlvr.py").run()
    assert not at.exception, at.exception
    assert any(f"rl_seed={value}" in c.value for c in at.code)  # said, as text
    assert "rl_seed" not in at.query_params


def _bound_keys(at) -> list[str]:
    """Every widget key a page declared on its first run (the keys a link may set)."""
    keys = set()
    for kind in ("number_input", "slider", "select_slider", "selectbox", "multiselect", "radio", "toggle",
                 "checkbox", "text_input", "text_area", "segmented_control", "pills"):
        try:
            widgets = getattr(at, kind)
        except (AttributeError, KeyError):
            continue
        keys.update(w.key for w in widgets if w.key and not w.key.startswith("$$"))
    return sorted(keys)


BAD_VALUES = ["inf", "-1e309", "nan", "99999999999999999999", "abc", "", HOSTILE, "-0", "1e-400", "0x10"]


@pytest.mark.parametrize("paper", [p for p in PAPERS if p.has_page], ids=lambda p: p.topic)
def test_hostile_link_values_never_break_a_page(paper):
    """Every key a page declares gets a hostile value at once (a different one per key): the page runs."""
    at = open_home(60).switch_page(paper.page).run(timeout=300)
    assert not at.exception, at.exception
    # the widgets its default link draws, and every knob its link may set (a tab's, drawn only when open)
    keys = sorted(set(_bound_keys(at)) | {k.id for k in paper.load().KNOBS.on_page()})
    assert keys, "the page declared no widget keys"
    link = open_home(60)
    for i, key in enumerate(keys):
        link.query_params[key] = BAD_VALUES[i % len(BAD_VALUES)]
    link.switch_page(paper.page).run(timeout=300)
    assert not link.exception, link.exception
    shown = " ".join(e.value for e in [*link.markdown, *link.warning, *link.error, *link.info, *link.caption,
                                       *link.success])
    assert "](http://evil" not in shown and "http://evil" not in shown


@pytest.mark.parametrize("paper", [p for p in PAPERS if p.has_page], ids=lambda p: p.topic)
def test_a_bad_value_for_a_knob_in_a_closed_tab_gets_the_notice_on_opening(paper):
    """A link's value its knob cannot take is named in the page's one notice on the default view, also for the
    knobs the default view does not draw (a closed tab's): ``paper_header`` reads the whole table."""
    at = open_home(60).switch_page(paper.page).run(timeout=300)
    drawn = set(_bound_keys(at))
    knobs = paper.load().KNOBS.on_page()

    def refuses(knob) -> bool:
        try:
            knob.parse(["zzz"])
        except (ValueError, TypeError):
            return True
        return False

    hidden = [k.id for k in knobs if k.id not in drawn and refuses(k)][:10]
    if not hidden:
        pytest.skip("every knob this page's link may set is drawn on its default view, or takes any text")
    link = open_home(60)
    for key in hidden:
        link.query_params[key] = "zzz"
    link.switch_page(paper.page).run(timeout=300)
    assert not link.exception, link.exception
    assert any("were not used" in w.value for w in link.warning), [w.value for w in link.warning]
    named = " ".join(c.value for c in link.code)
    assert all(f"{key}=zzz" in named for key in hidden), (hidden, named)


# --------------------------------------------------------------------------- one error handler


def _fragment_error_app():
    import streamlit as st

    import ui
    import ui.errors

    ui.errors._show_errors = lambda: False  # as for a visitor (AppTest shows tracebacks to tests by default)

    @ui.fragment
    def section():
        if st.button("break", key="b"):
            raise RuntimeError("secret detail")
        st.write("fine")

    section()
    st.write("after")


def test_an_error_in_a_fragment_shows_one_line_not_the_traceback():
    at = AppTest.from_function(_fragment_error_app, default_timeout=30).run()
    assert not at.exception
    at.button(key="b").click().run()
    assert not at.exception, at.exception
    assert any("Something went wrong on this page (RuntimeError)" in e.value for e in at.error)
    assert "secret detail" not in " ".join(e.value for e in at.error)


# --------------------------------------------------------------------------- long computations need a button


CALLS = []


def slow_square(x: int) -> dict:
    CALLS.append(x)
    return {"y": x * x}


def _auto_app():
    import streamlit as st

    import ui
    from tests.test_reliability import slow_square

    seconds = float(st.session_state.get("seconds", 60))
    res = ui.compute(slow_square, int(st.session_state.get("x", 3)), label="Squaring…", seconds=seconds)
    st.write("result: none" if res is None else f"result: {res['y']}")


def test_a_long_computation_waits_for_a_button_that_states_its_cost():
    CALLS.clear()
    at = AppTest.from_function(_auto_app, default_timeout=30).run()
    assert not at.exception, at.exception
    assert CALLS == [] and "result: none" in at.markdown[-1].value
    (button,) = [b for b in at.button if "Squaring" in b.label]
    assert "about 60 s" in button.label
    button.click().run()
    assert CALLS == [3] and "result: 9" in at.markdown[-1].value
    at.run()  # stored now: shown without a press, not recomputed
    assert CALLS == [3] and "result: 9" in at.markdown[-1].value


def test_a_cheap_computation_runs_by_itself():
    CALLS.clear()
    at = AppTest.from_function(_auto_app, default_timeout=30)
    at.session_state["seconds"] = 1.0
    at.session_state["x"] = 5
    at.run()
    assert not at.exception, at.exception
    assert CALLS == [5] and "result: 25" in at.markdown[-1].value
    assert not [b for b in at.button if "Squaring" in b.label]


def test_one_visitor_runs_one_computation_at_a_time(monkeypatch):
    import importlib

    ui = importlib.import_module("ui.compute")  # the module (``ui.compute`` is the function)

    monkeypatch.setattr(ui, "_visitor", lambda: "visitor-a")

    class Slot:
        def __init__(self):
            self.told = []

        def info(self, text, **_):
            self.told.append(text)

        def empty(self):
            pass

    inside, order = threading.Event(), []
    first_slot, second_slot = Slot(), Slot()

    def first():
        with ui._one_per_visitor(first_slot):
            order.append("first in")
            inside.set()
            time.sleep(0.5)
            order.append("first out")

    def second():
        inside.wait(5)
        with ui._one_per_visitor(second_slot):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == ["first in", "first out", "second in"]
    assert second_slot.told and "other computation" in second_slot.told[0]
    assert ui._VISITORS == {}  # nothing left behind
    # A different visitor is not held back.
    monkeypatch.setattr(ui, "_visitor", lambda: "visitor-b")
    with ui._one_per_visitor(Slot()):
        pass


def _view_app():
    import types

    import streamlit as st

    import ui
    from tests.test_reliability import slow_square
    from toymodels import topic

    module = types.SimpleNamespace(TOPIC="no-such-topic", VIEWS=topic.views(
        topic.View("big", slow_square, dict(x=7), label="Squaring…", seconds=600)))
    res = ui.view(module, "big")
    st.write(f"result: {res['y']}")


def test_a_missing_shipped_view_offers_a_button_instead_of_training():
    CALLS.clear()
    at = AppTest.from_function(_view_app, default_timeout=30).run()
    assert not at.exception, at.exception
    assert CALLS == [] and not any("result" in m.value for m in at.markdown)
    assert any("not shipped" in w.value for w in at.warning)
    (button,) = [b for b in at.button if "Recompute" in b.label]
    assert "about 10 min" in button.label
    button.click().run()
    assert CALLS == [7] and any("result: 49" in m.value for m in at.markdown)


# --------------------------------------------------------------------------- the verdict index


@pytest.mark.parametrize("index", [
    [1, 2, 3],
    {"rlvr": [1, 2], "diffusion": {"reproduced": "yes", "badge": 1}, "superposition": None},
    {"rlvr": {"reproduced": True, "badge": "reproduced", "ours": {"x": 1}, "paper": "p", "summary": "s",
              "fresh": True}},
    {"no-such-topic": {"reproduced": True, "badge": "b", "ours": "o", "paper": "p", "summary": "s", "fresh": True}},
])
def test_a_verdict_index_of_the_wrong_shape_shows_no_badge(tmp_path, monkeypatch, index):
    from toymodels import store
    from toymodels.registry import read_verdicts

    (tmp_path / "verdicts.json").write_text(json.dumps(index))
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    assert read_verdicts() == {}
    at = open_home(60)
    assert not at.exception, at.exception
    assert not at.metric  # no invented number, no crash


def test_a_valid_record_beside_damaged_ones_is_kept(tmp_path, monkeypatch):
    from toymodels import store
    from toymodels.registry import read_verdicts

    good = {"reproduced": None, "badge": "b", "ours": "o", "paper": "p", "summary": "s", "fresh": False}
    (tmp_path / "verdicts.json").write_text(json.dumps({"rlvr": good, "diffusion": {"reproduced": 3}}))
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    assert read_verdicts() == {"rlvr": good}
