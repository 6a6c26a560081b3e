"""The shared UI helpers, run headless with AppTest.from_function."""
import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ui.frozen import freeze


def _compute_app():
    import streamlit as st

    import ui
    from tests.test_store import toy_result

    res = ui.compute(toy_result, 6, seed=int(st.session_state.get("seed", 0)), label="Toy", run=True)
    st.metric("mean", f"{res['mean']:.6f}")
    ui.reproduce_panel([{"quantity": "mean", "ours": res["mean"], "paper": 0.0, "note": "toy"}],
                       verdict="The toy agrees.", reproduced=True)
    ui.download_csv(res["table"], "toy.csv")


def test_compute_runs_once_per_argument_and_panels_render():
    from tests import test_store

    test_store.CALLS.clear()
    at = AppTest.from_function(_compute_app, default_timeout=30).run()
    assert not at.exception, at.exception
    expected = test_store.toy_result(6, seed=0)["mean"]
    test_store.CALLS.clear()
    assert at.metric[0].value == f"{expected:.6f}"
    assert at.success[0].value == "The toy agrees."
    at.run()  # a rerun is served from memory
    assert test_store.CALLS == []
    at.session_state["seed"] = 1
    at.run()
    assert test_store.CALLS == [(6, 1)]
    assert at.metric[0].value == f"{test_store.toy_result(6, seed=1)['mean']:.6f}"


def _header_app():
    import ui

    ui.paper_header("transductive")


def test_header_comes_from_the_registry():
    from toymodels.registry import get_paper

    at = AppTest.from_function(_header_app, default_timeout=30).run()
    assert not at.exception, at.exception
    paper = get_paper("transductive")
    assert at.title[0].value == paper.short_title
    assert paper.tldr in " ".join(m.value for m in at.markdown)


def test_csv_downloads_are_formula_safe():
    import pandas as pd

    import ui

    df = pd.DataFrame({"text": ["=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "\tx", "plain", None],
                       "num": [-1.5, 2, 3, 4, 5, 6, 7]})
    safe = ui.csv_safe(df)
    assert safe["text"].tolist()[:6] == ["'=HYPERLINK(\"x\")", "'+1", "'-2", "'@SUM(A1)", "'\tx", "plain"]
    assert safe["num"].tolist() == df["num"].tolist()  # numbers stay numbers
    assert df["text"][0].startswith("=")  # the original is untouched
    assert ui.csv_safe(pd.DataFrame({"=bad": [1]})).columns.tolist() == ["'=bad"]


def test_cached_results_never_wait_for_a_compute_slot():
    """Two long runs hold every slot; a stored result is still served at once."""
    import threading
    import time

    import ui
    from tests.test_store import toy_result
    from toymodels import store
    from ui.compute import _HEAVY

    store.cached(toy_result, 11, seed=5)  # on disk now
    for _ in range(ui.SLOTS):
        _HEAVY.acquire()
    try:
        done = threading.Event()
        out = {}

        def visitor():
            out["res"] = ui.compute(toy_result, 11, seed=5, run=True)
            done.set()

        t = threading.Thread(target=visitor, daemon=True)
        start = time.perf_counter()
        t.start()
        assert done.wait(10), "a cached read waited for a compute slot"
        assert time.perf_counter() - start < 5 and out["res"]["mean"] == toy_result(11, seed=5)["mean"]
    finally:
        for _ in range(ui.SLOTS):
            _HEAVY.release()


def _waiting_app():
    import streamlit as st

    import ui
    from tests.test_store import toy_result

    ui.compute(toy_result, int(st.session_state.get("n", 12)), seed=9, label="Toy", run=True)
    st.write("done")


def test_a_visitor_who_waits_for_a_slot_is_told_so():
    import threading

    import streamlit as st

    import ui
    from ui.compute import _HEAVY

    for _ in range(ui.SLOTS):
        _HEAVY.acquire()
    released = threading.Timer(3.0, lambda: [_HEAVY.release() for _ in range(ui.SLOTS)])
    released.start()
    seen = []
    original = st.empty

    def spy_empty():
        slot = original()
        real_info = slot.info

        def info(body, *a, **k):
            seen.append(body)
            return real_info(body, *a, **k)

        slot.info = info
        return slot

    st.empty = spy_empty
    try:
        at = AppTest.from_function(_waiting_app, default_timeout=30).run()
    finally:
        st.empty = original
        released.join()
    assert not at.exception, at.exception
    assert any("Waiting for a free compute slot" in s for s in seen), seen


def _choice_app():
    import streamlit as st

    import ui

    v = ui.choice(st.selectbox, "Variant", {"g1": "G1 elementwise (best)", "base": "Baseline"}, key="variant")
    st.write(f"value={v}")


def test_choice_links_store_ids_and_unknown_ids_open_the_default_with_a_notice():
    at = AppTest.from_function(_choice_app, default_timeout=30)
    at.query_params["variant"] = "base"
    at.run()
    assert not at.exception and "value=base" in at.markdown[0].value and not at.warning
    at.selectbox(key="variant").set_value("g1").run()
    assert "value=g1" in at.markdown[0].value and "variant" not in at.query_params  # the default leaves the URL
    at.selectbox(key="variant").set_value("base").run()
    assert at.query_params["variant"] == ["base"] or at.query_params["variant"] == "base"  # an id, not the label
    bad = AppTest.from_function(_choice_app, default_timeout=30)
    bad.query_params["variant"] = "G1+elementwise+(best)"
    bad.run()
    assert not bad.exception and "value=g1" in bad.markdown[0].value
    assert "not one of the choices" in bad.warning[0].value


# --------------------------------------------------------------------------- the lecturer's kit


def _tour_app():
    import streamlit as st

    import ui

    steps = [ui.Step("One", "Look at the first number.", {"n": 3}, look_at="the metric"),
             ui.Step("Two", "Now it doubles.", {"n": 6}, hide=("extra",)),
             ui.Step("Three", "And again.", {"n": 12})]
    active = ui.tour(steps)
    n = st.slider("n", 1, 20, 1, key="n", bind="query-params")
    st.metric("n squared", n * n)
    if ui.shown("extra", active):
        st.write("extra section")


def test_a_tour_link_opens_its_step_and_sets_the_knobs():
    at = AppTest.from_function(_tour_app, default_timeout=30)
    at.query_params["tour"] = "2"
    at.run()
    assert not at.exception, at.exception
    assert any("Step 2 of 3" in c.value for c in at.caption)
    assert at.slider(key="n").value == 6 and at.metric[0].value == "36"
    assert not any("extra section" in m.value for m in at.markdown)  # step 2 hides it
    at.button(key="tour-next").click().run()
    assert any("Step 3 of 3" in c.value for c in at.caption) and at.slider(key="n").value == 12
    assert at.query_params["tour"] in ("3", ["3"]) and at.button(key="tour-next").disabled
    at.button(key="tour-back").click().run()
    assert any("Step 2 of 3" in c.value for c in at.caption)
    at.button(key="tour-end").click().run()
    assert "tour" not in at.query_params and not any("Step" in c.value for c in at.caption)
    assert any("extra section" in m.value for m in at.markdown)


def test_without_a_tour_link_one_button_starts_it_and_a_bad_step_is_said():
    at = AppTest.from_function(_tour_app, default_timeout=30).run()
    assert "Take the guided tour (3 steps)" in at.button(key="tour-start").label
    assert at.slider(key="n").value == 1  # nothing set before the tour starts
    at.button(key="tour-start").click().run()
    assert any("Step 1 of 3" in c.value for c in at.caption) and at.slider(key="n").value == 3
    bad = AppTest.from_function(_tour_app, default_timeout=30)
    bad.query_params["tour"] = "9"
    bad.run()
    assert not bad.exception and any("tour=9" in c.value for c in bad.code)


def _lesson_app():
    import streamlit as st

    import ui

    for section in ("sweep", "upload", "theory"):
        if ui.shown(section):
            st.write(f"section {section}")


def test_a_lesson_link_hides_the_sections_it_names():
    at = AppTest.from_function(_lesson_app, default_timeout=30)
    at.query_params["hide"] = "sweep,upload"
    at.run()
    assert [m.value for m in at.markdown] == ["section theory"]


def test_figures_for_slides_render_offline_as_svg_and_png():
    import altair as alt
    import pandas as pd

    from ui.charts import _export_spec

    fig = alt.Chart(pd.DataFrame({"x": [1, 2, 3], "y": [1, 4, 9]})).mark_line().encode(x="x", y="y")
    spec = _export_spec(fig)
    assert spec["background"] == "white"
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(spec)
    png = vlc.vegalite_to_png(spec, scale=2)
    assert svg.startswith("<svg") and png[:8] == b"\x89PNG\r\n\x1a\n"
    import struct

    width = struct.unpack(">I", png[16:20])[0]  # the PNG header's width: twice the 1x rendering
    assert width == 2 * struct.unpack(">I", vlc.vegalite_to_png(spec, scale=1)[16:20])[0]


def _chart_app():
    import altair as alt
    import pandas as pd

    import ui

    df = pd.DataFrame({"x": [1, 2, 3], "y": [1, 4, 9]})
    ui.chart(alt.Chart(df).mark_line().encode(x="x", y="y"), "squares", alt_text="y = x squared")


def test_a_chart_comes_with_svg_png_and_csv_downloads():
    at = AppTest.from_function(_chart_app, default_timeout=30).run()
    assert not at.exception, at.exception
    labels = sorted(b.label for b in at.get("download_button"))
    assert labels == ["CSV", "PNG (2x)", "SVG"]


def test_the_citation_names_the_paper_and_this_commit():
    import re

    import ui
    from toymodels.registry import PAPERS

    for paper in PAPERS:
        bib = ui.bibtex(paper)
        assert paper.title in bib and paper.arxiv in bib and str(paper.year) in bib
        assert bib.count("@") == 2 and bib.count("{") == bib.count("}")
    version, commit = ui.app_version()
    assert version and (commit is None or re.fullmatch(r"[0-9a-f]{12}", commit))


def test_the_code_for_a_view_rebuilds_the_same_call():
    import dataclasses

    import ui

    @dataclasses.dataclass(frozen=True)
    class Config:
        steps: int = 10
        lr: float = 0.1
        name: str = "a"

    snippet = ui.call_snippet("demo", "run", Config(steps=5, name="x'y"), seeds=[1, 2], quick=True)
    calls = []

    class M:  # stands in for the topic package
        pass

    M.Config = Config
    M.run = lambda *a, **k: calls.append((a, k)) or "done"
    namespace = {"M": M}
    body = snippet.replace("import toymodels.demo as M\n", "")  # M is the stand-in above
    exec(body, namespace)  # noqa: S102 - our own generated code, checked here
    assert namespace["result"] == "done"
    assert calls == [((Config(steps=5, lr=0.1, name="x'y"),), {"seeds": [1, 2], "quick": True})]
    assert "set_thread_policy(1)" in snippet and "import toymodels.demo as M\n" in snippet
    from toymodels.threads import _THREADS_SET

    assert _THREADS_SET == 1  # the snippet ran on one thread, as the page computes


def test_the_shared_memo_is_bounded_by_bytes_as_well_as_count():
    import numpy as np

    from ui.memory import _Memo, approx_bytes

    memo = _Memo(size=10, max_bytes=3_000_000)
    for i in range(5):
        memo.get(f"k{i}", lambda: {"a": np.zeros(100_000)})  # 800 kB each
    assert list(memo.items) == ["k2", "k3", "k4"] and sum(memo.sizes.values()) <= 3_000_000
    big = memo.get("big", lambda: np.zeros(1_000_000))  # 8 MB: served, not kept
    assert big.shape == (1_000_000,) and "big" not in memo.items
    assert approx_bytes({"t": __import__("pandas").DataFrame({"x": np.arange(1000)})}) >= 8000


# --------------------------------------------------------------------------- picture first (issue 44)


def test_an_export_is_as_wide_as_the_screen_whatever_its_axes_and_rows():
    """A categorical axis exported at its minimum step (20 px a band) put "4/20 solved" over "7/20 solved";
    a 14,762-row heatmap raised Altair's MaxRowsError instead of downloading."""
    import re

    import altair as alt
    import pandas as pd

    import ui

    def width(svg: str) -> float:
        return float(re.search(r'<svg[^>]*?\swidth="([\d.]+)', svg).group(1))

    df = pd.DataFrame({"depth": ["4", "8"], "solved": [4, 7]})
    bars = alt.Chart(df).mark_bar().encode(x="depth:N", y="solved:Q")
    labels = alt.Chart(df).mark_text(dy=-8).encode(x="depth:N", y="solved:Q", text="solved:Q")
    assert width(ui.export_svg(bars + labels, 620)) == 620
    assert width(ui.export_svg(bars)) == ui.SLIDE_WIDTH
    big = pd.DataFrame({"i": range(14_762), "v": range(14_762)})
    assert width(ui.export_svg(alt.Chart(big).mark_rect().encode(x="i:Q", y="v:Q"), 500)) == 500
    side = ui.export_svg(alt.hconcat(bars, bars), 800)  # concatenations share the width out
    assert 760 <= width(side) <= 900  # each view 392 px wide, plus its axes


def _charts_in_columns_app():
    import altair as alt
    import pandas as pd
    import streamlit as st

    import ui

    df = pd.DataFrame({"x": [1, 2], "y": [3, 4]})
    ui.chart(alt.Chart(df).mark_line().encode(x="x", y="y"), "full")
    left, _ = st.columns(2)
    with left:
        ui.chart(alt.Chart(df).mark_line().encode(x="x", y="y"), "half")
        ui.chart(alt.Chart(df).mark_line().encode(x="x", y="y"), "wide", span=0.7)


def test_a_chart_in_a_column_exports_at_its_share_of_the_slide():
    import ui

    at = AppTest.from_function(_charts_in_columns_app, default_timeout=30).run()
    assert not at.exception, at.exception
    helps = {b.proto.id.rsplit("-", 2)[-2] if False else b.label + str(i): b.help
             for i, b in enumerate(at.get("download_button")) if b.label == "SVG"}
    widths = [int(h.split(" px")[0].split()[-1]) for h in helps.values()]
    assert widths == [ui.SLIDE_WIDTH, ui.SLIDE_WIDTH // 2, round(0.7 * ui.SLIDE_WIDTH)]


def _tour_kinds_app():
    import streamlit as st

    import ui

    calls = st.session_state.setdefault("calls", [])
    steps = [ui.Step("Start", "The default.", {"mode": "b"}, target="chart-a"),
             ui.Step("Guess", "It is twelve.", {"n": 12, "mode": "c", "tabs": "Second"}, target="chart-b",
                     predict="Will n grow?", choices=("yes", "no")),
             ui.Step("Run it", "Computed for you.", {"n": 5}, compute=True)]
    active = ui.tour(steps)
    mode = ui.choice(st.radio, "mode", {"a": "A", "b": "B", "c": "C"}, key="mode", default="b")
    n = st.slider("n", 1, 20, 3, key="n", bind="query-params")
    first, second = st.tabs(["First", "Second"], key="tabs", on_change="rerun")
    st.markdown(f"mode={mode} n={n} open={'second' if second.open else 'first'} step={active and active.title}")
    result = ui.compute(lambda k: calls.append(k) or k * 2, n, label="Computing…", seconds=10.0)
    st.markdown(f"result={result}")


def test_a_tour_step_can_ask_first_open_a_tab_compute_and_end_where_it_began():
    at = AppTest.from_function(_tour_kinds_app, default_timeout=30)
    at.query_params["tour"] = "1"
    at.run()
    assert not at.exception, at.exception
    assert "mode=b n=3 open=first" in at.markdown[-2].value
    at.button(key="tour-next").click().run()
    assert "Predict first" in " ".join(m.value for m in at.markdown)
    assert "mode=b n=3 open=first" in at.markdown[-2].value  # nothing changes before the reveal
    assert at.button(key="tour-reveal").disabled  # an answer first
    at.radio(key="tour-guess-2").set_value("yes").run()
    at.button(key="tour-reveal").click().run()
    assert "mode=c n=12 open=second" in at.markdown[-2].value, at.markdown[-2].value
    assert "You predicted: *yes*" in " ".join(m.value for m in at.markdown)
    at.button(key="tour-next").click().run()
    assert "result=10" in at.markdown[-1].value  # 10 s: a button off the tour, computed on it
    assert not any(b.label.startswith("Compute (about 10 s)") for b in at.button)
    at.button(key="tour-end").click().run()
    assert "mode=b n=3 open=first" in at.markdown[-2].value, at.markdown[-2].value  # the defaults again
    assert "tour" not in at.query_params and "n" not in at.query_params
    assert any(b.label == "Compute (about 10 s)" for b in at.button)  # off the tour: a button again


def _tour_closed_tab_app():
    import streamlit as st

    import ui

    steps = [ui.Step("There", "A knob in the second tab.", {"mode": "c", "tabs": "Second"}),
             ui.Step("Back", "The first tab again.", {"tabs": "First"})]
    ui.tour(steps)
    first, second = st.tabs(["First", "Second"], key="tabs", on_change="rerun")
    with second:
        if second.open:   # drawn only when open: a closed tab cannot rewrite its knob's link
            ui.choice(st.radio, "mode", {"a": "A", "b": "B", "c": "C"}, key="mode", default="b")


def test_end_tour_gives_back_the_link_of_a_knob_in_a_closed_tab():
    """A step set a knob of a tab that is closed when the tour ends: End tour gives the link back as it was (the
    knob absent, or the value a shared link gave it), though the knob is not drawn to rewrite it."""
    for before in (None, "a"):
        at = AppTest.from_function(_tour_closed_tab_app, default_timeout=30)
        at.query_params["tour"] = "1"
        if before:
            at.query_params["mode"] = before
        at.run()
        assert not at.exception, at.exception
        assert at.query_params.get("mode") in ("c", ["c"])
        at.button(key="tour-next").click().run()
        at.button(key="tour-end").click().run()
        assert not at.exception, at.exception
        assert "tour" not in at.query_params
        assert at.query_params.get("mode") in ((None, []) if before is None else (before, [before])), before


def _ledger_app():
    import ui
    from toymodels.claims import Decision, Evidence, Judged, Verdict

    def row(i, kind, status):
        return Judged(f"c{i}", kind, f"Claim {i}.", "Fig. 1", "1.0", "a test", status, "0.9", 1, None, (), "", "",
                      {}, "exact", "why")

    v = Verdict(True, "2 of 3 claims reproduced (1 illustrated)", "0.9", "1.0",
                claims=(row(1, "headline", "reproduced"), row(2, "control", "reproduced"),
                        row(3, "mechanism", "illustrated")))
    assert Decision and Evidence
    ui.ledger_strip(v)
    ui.claims_table(v, heading="The ledger")


def test_the_ledger_strip_says_the_headline_status_counts_and_words_and_links_to_the_ledger():
    at = AppTest.from_function(_ledger_app, default_timeout=30).run()
    assert not at.exception, at.exception
    strip = at.markdown[0].value
    assert "**Headline claim:** :green[✔ reproduced]" in strip
    assert "2 :green[✔ reproduced]" in strip and "1 :orange[◐ illustrated]" in strip and "(#ledger)" in strip
    legend = at.caption[0].value
    for word in ("reproduced", "not reproduced", "illustrated", "not testable here"):
        assert f"{word}](#glossary " in legend  # each word, its definition on hover
    assert at.subheader[0].value == "The ledger" and at.subheader[0].proto.anchor == "ledger"


def test_a_term_links_to_its_definition_and_an_unknown_term_is_refused():
    import pytest

    import ui

    md = ui.term("F-Attn", "gated-attention")
    assert md.startswith("[F-Attn](#glossary \"The share of attention on the first token")
    assert ui.term("Clopper-Pearson").startswith("[Clopper-Pearson](#glossary ")
    with pytest.raises(KeyError):
        ui.term("flux capacitor", "gated-attention")


def test_each_topic_keeps_its_terms_in_its_prose_module_and_none_shadows_a_common_one():
    import importlib

    from toymodels import glossary as G
    from toymodels.registry import PAPERS

    for p in PAPERS:
        own = importlib.import_module(f"toymodels.{p.module}.prose").TERMS
        assert own and not set(own) & set(G.COMMON), p.topic   # a shared word would hide the topic's definition
        assert G.terms(p.topic) == {**own, **G.COMMON} and list(G.topic_terms(p.topic)) == list(own)
    assert G.terms("no-such-topic") == G.COMMON and G.terms() == G.COMMON


def test_the_bibtex_is_complete_and_protects_its_titles():
    import ui
    from toymodels.registry import get_paper

    bib = ui.bibtex(get_paper("gated-attention"))
    assert "title     = {{Gated Attention for Large Language Models" in bib
    software = bib.split("@software", 1)[1]
    assert "title   = {{NeurIPS 2025 Best Papers Explorer" in software
    assert "author  = {{" in software and "url     = {http" in software and "version =" in software


def test_code_for_a_view_prints_the_number_shown_and_names_its_key():
    import sys

    cite = sys.modules["ui.cite"]
    lines = cite.prints({"Δ/σ": ("result['summary']['ratio']", "0.23")})
    namespace = {"result": {"summary": {"ratio": 0.23}}}
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(lines, namespace)  # noqa: S102 - our own generated code
    assert out.getvalue().strip() == "Δ/σ: 0.23"
    assert "# the page shows 0.23; it is result['summary']['ratio']" in lines


def test_a_compute_button_says_what_it_will_do():
    import sys

    compute = sys.modules["ui.compute"]
    assert compute._imperative("Sweeping learning rates…") == "Sweep learning rates"
    assert compute._imperative("Running seeded SGD…") == "Run seeded SGD"
    assert compute._imperative("Solving the class exactly…") == "Solve the class exactly"
    assert compute._imperative("Run this sweep") == "Run this sweep"


def test_view_or_compute_reads_the_view_at_its_own_arguments_and_computes_otherwise(monkeypatch):
    import dataclasses
    import sys
    import types

    import ui  # noqa: F401 - loads ui.compute
    from toymodels.topic import BudgetError, View

    compute = sys.modules["ui.compute"]
    seen = []
    monkeypatch.setattr(compute, "view", lambda m, name: seen.append(("view", name)) or {"sink": "S", "n": 1})
    monkeypatch.setattr(compute, "compute", lambda fn, *a, **k: seen.append(("compute", fn.__name__, a, k["label"]))
                        or "ran")
    monkeypatch.setattr(compute, "report_error", lambda exc, what="": seen.append(("shown", type(exc).__name__)))

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        n: int = 2

        def normalised(self):
            return Cfg(max(self.n, 2))  # n = 1 runs as n = 2

    def run(cfg, lengths=(1, 2)):
        raise AssertionError("a shipped setting must not run")

    def other(cfg, arms):
        raise AssertionError("patched away")

    mod = types.SimpleNamespace(__name__="toy", other=other,
                                VIEWS={"default": View("default", run, dict(cfg=Cfg(), lengths=(1, 2)), label="Run…")})
    assert compute.view_or_compute(mod, "default", Cfg(), (1, 2)) == {"sink": "S", "n": 1}
    assert compute.view_or_compute(mod, "default", Cfg(1), lengths=(1, 2))["n"] == 1   # the same run, normalised
    assert seen == [("view", "default")] * 2
    seen.clear()
    assert compute.view_or_compute(mod, "default", Cfg(5), (1, 2)) == "ran"            # other knobs: a live run
    assert compute.view_or_compute(mod, "default", Cfg(), (1, 2, 3)) == "ran"
    assert compute.view_or_compute(mod, "default", Cfg(), ["a"], fn="other", same=False, label="Train") == "ran"
    assert seen == [("compute", "run", (Cfg(5), (1, 2)), "Run…"), ("compute", "run", (Cfg(), (1, 2, 3)), "Run…"),
                    ("compute", "other", (Cfg(), ["a"]), "Train")]
    seen.clear()
    assert compute.view_or_compute(mod, "default", Cfg(), ["a"], fn="other", same=True, part="sink") == "S"
    monkeypatch.setattr(compute, "compute", lambda *a, **k: (_ for _ in ()).throw(BudgetError("3x the budget")))
    assert compute.view_or_compute(mod, "default", Cfg(7), (1, 2)) is None             # refused: shown, no result
    assert seen == [("view", "default"), ("shown", "BudgetError")]


def _errors_app():
    import ui
    from toymodels.topic import BudgetError, InputError

    ui.report_error(BudgetError("that run is 3.0x the live budget: use fewer seeds"))
    ui.report_error(InputError("no column 'response' [link](http://x)"), "Cannot use this file")


def test_one_error_rule_a_budget_is_a_warning_and_bad_input_an_error():
    at = AppTest.from_function(_errors_app, default_timeout=30).run()
    assert [w.value for w in at.warning] == ["that run is 3\\.0x the live budget\\: use fewer seeds"]
    assert len(at.error) == 1 and at.error[0].value.startswith("Cannot use this file: no column")
    assert "](http" not in at.error[0].value                         # the input's text cannot form a link


def test_no_page_shows_an_exception_itself():
    """Pages hand errors to ui.report_error (one rule for budgets and bad input), never st.error/st.warning(exc)."""
    import re
    from pathlib import Path

    pages = sorted((Path(__file__).resolve().parent.parent / "pages").glob("*.py"))
    assert pages
    for page in pages:
        src = page.read_text()
        assert not re.search(r"st\.(error|warning)\([^)]*\bexc\b", src), f"{page.name} shows an exception itself"


def test_frozen_results_refuse_every_change_and_copies_are_free():
    table = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    arr = np.arange(3.0)
    res = freeze({"t": table, "arr": arr, "l": [1, {"k": 2}]})
    attempts = [lambda: res.__setitem__("x", 1), lambda: res.update(x=1), lambda: res.pop("t"),
                lambda: res["l"].append(3), lambda: res["l"][1].__setitem__("k", 3),
                lambda: res["t"].__setitem__("c", 1), lambda: res["t"].loc.__setitem__((0, "a"), 9),
                lambda: res["t"].iloc.__setitem__((0, 0), 9), lambda: res["t"].at.__setitem__((0, "a"), 9),
                lambda: res["arr"].__setitem__(0, 5.0)]
    for attempt in attempts:
        with pytest.raises((TypeError, ValueError)):
            attempt()
    assert table["a"].tolist() == [1, 2] and arr[0] == 0.0 and res["t"]["a"].tolist() == [1, 2]
    assert res["t"].dropna(subset=["a"]).shape == (2, 2) and res["t"].loc(axis=0)[0]["a"] == 1  # pandas internals
    changed = res["t"].assign(c=1)  # new frames are ordinary
    changed["d"] = 2
    assert type(changed) is pd.DataFrame and dict(res) == {k: res[k] for k in res}
    copied = dict(res)
    copied["new"] = 1
    assert "new" not in res
    assert isinstance(res, dict) and isinstance(res["l"], list)
