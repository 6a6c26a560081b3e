"""The shared UI helpers, run headless with AppTest.from_function."""
from streamlit.testing.v1 import AppTest


def _compute_app():
    import streamlit as st

    import ui
    from tests.test_store import toy_result

    res = ui.compute(toy_result, 6, seed=int(st.session_state.get("seed", 0)), label="Toy")
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
