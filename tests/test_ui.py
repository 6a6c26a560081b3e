"""The shared UI helpers, run headless with AppTest.from_function."""
from streamlit.testing.v1 import AppTest


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

    paper = ui.paper_header("transductive")
    ui.claim_box(paper)


def test_header_and_claim_come_from_the_registry():
    from toymodels.registry import get_paper

    at = AppTest.from_function(_header_app, default_timeout=30).run()
    assert not at.exception, at.exception
    paper = get_paper("transductive")
    assert at.title[0].value == paper.short_title
    assert paper.headline in at.info[0].value


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

    store.cached(toy_result, 11, seed=5)  # on disk now
    for _ in range(ui.SLOTS):
        ui._HEAVY.acquire()
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
            ui._HEAVY.release()


def _waiting_app():
    import streamlit as st

    import ui
    from tests.test_store import toy_result

    ui.compute(toy_result, int(st.session_state.get("n", 12)), seed=9, label="Toy", run=True)
    st.write("done")


def test_a_visitor_who_waits_for_a_slot_is_told_so():
    import threading
    import time

    import ui

    for _ in range(ui.SLOTS):
        ui._HEAVY.acquire()
    released = threading.Timer(3.0, lambda: [ui._HEAVY.release() for _ in range(ui.SLOTS)])
    released.start()
    seen = []
    original = ui.st.empty

    def spy_empty():
        slot = original()
        real_info = slot.info

        def info(body, *a, **k):
            seen.append(body)
            return real_info(body, *a, **k)

        slot.info = info
        return slot

    ui.st.empty = spy_empty
    try:
        at = AppTest.from_function(_waiting_app, default_timeout=30).run()
    finally:
        ui.st.empty = original
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
