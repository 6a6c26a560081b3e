"""The grokking page through the router (AppTest): it opens on the shipped run and quotes its numbers, a live
p = 31 run replaces them, the controls show their accuracy, a long run waits for its button, an over-budget run is
refused with a warning, and a tour link sets the knobs."""
import pytest

import toymodels.grokking as M
from tests.apptest_helpers import open_page, open_tab, page_tabs
from toymodels import shipped, store


def _text(at) -> str:
    return " ".join(e.value for e in [*at.markdown, *at.caption, *at.info, *at.warning, *at.error])


@pytest.fixture(scope="module")
def page():
    at = open_page(M.TOPIC, 180)
    assert not at.exception, at.exception
    return at


def test_opens_on_the_shipped_run_with_its_numbers(page):
    s = M.summary(store.load_shipped(M.TOPIC, "default"))
    text = _text(page)
    assert "claims reproduced" in text
    assert f"first {s['quiet_iters']} iterations" in text and f"{s['final_test_acc']:.1%}" in text
    assert f"falls from {s['D_first']:.2f}" in text
    assert not page.error
    assert any(b.label.startswith("Take the guided tour") for b in page.button)


def test_quotes_the_deciding_study_and_its_ledger(page):
    study = store.load_shipped(M.TOPIC, "seeds")
    assert study is not None, "the deciding study (view seeds) is shipped"
    ss = M.study_summary(study)
    text = _text(page)
    assert f"{ss['grokked']} of {ss['n']} grok" in text and f"D has fallen to {ss['ratio']}" in text
    ledger = page.table[0].value
    verdict = shipped.verdict_of(M)
    assert list(ledger["Claim"]) == [j.statement for j in verdict.claims]
    assert sum("reproduced" == str(v).split(" ", 1)[-1] for v in ledger["Status"]) == sum(
        j.status == "reproduced" for j in verdict.claims)


def test_the_default_link_draws_the_story_not_the_lab_notebook(page):
    """Issue 39: the lab notebook's content runs only when its tab is open (a link opens it)."""
    key, labels = page_tabs(M.TOPIC)
    assert key == "gk_tabs" and labels == ("The story", "Lab notebook")
    notebook_heads = {"Every configuration tried", "Per iteration, this run", "Per split, the deciding study"}
    assert any(h.value == "Twenty splits, the same story" for h in page.subheader)   # the story is drawn
    assert not notebook_heads & {h.value for h in page.subheader}
    at = open_tab(M.TOPIC, "Lab notebook", timeout=180)
    assert not at.exception, at.exception
    assert notebook_heads <= {h.value for h in at.subheader}
    study = store.load_shipped(M.TOPIC, "seeds")
    assert any(d.value.equals(M.seed_table(study)) for d in at.dataframe)               # the per-split table
    assert any(len(t.value) == len(M.LAB_NOTEBOOK) for t in at.table)


def test_p31_runs_live_and_replaces_the_numbers(page):
    page.select_slider(key="gk_p").set_value(31).run(timeout=180)
    assert not page.exception, page.exception
    s = M.summary(M.run(M.Config(p=31)))
    text = _text(page)
    assert f"first {s['quiet_iters']} iterations" in text and f"{s['final_test_acc']:.1%}" in text
    assert "p = 31" in text


def test_a_sweep_at_p31_runs_from_its_button(page):
    page.select_slider(key="gk_p").set_value(31).run(timeout=180)
    button = next((b for b in page.button if b.label.startswith("Sweep")), None)
    if button is not None:   # the cost model may put it under the auto-run threshold
        button.click().run(timeout=300)
    assert not page.exception, page.exception
    want = M.sweep_table(M.sweep(M.Config(p=31), "train_frac", [0.3, 0.5, 0.7]))
    shown = [d.value for d in page.dataframe if "train_frac" in d.value.columns]
    assert shown and list(shown[0]["train_frac"]) == [0.3, 0.5, 0.7]
    assert list(shown[0]["final_test_acc"]) == list(want["final_test_acc"])


def test_the_random_circulant_control_reports_its_accuracy():
    at = open_page(M.TOPIC, 180)
    at.select_slider(key="gk_p").set_value(31).run(timeout=180)
    at.radio(key="gk_ctrl").set_value("random_circulant").run(timeout=180)
    assert not at.exception, at.exception
    acc = M.run(M.Config(p=31, control="random_circulant"))["test_acc"][0]
    assert any(m.label == "Test accuracy, this metric" and m.value == f"{acc:.1%}" for m in at.metric)


def test_a_long_run_waits_for_its_button_and_an_over_budget_one_is_refused():
    at = open_page(M.TOPIC, 180)
    at.number_input(key="gk_seed").set_value(1).run(timeout=180)    # p = 61, seed 1: not shipped, ~20 s
    assert not at.exception
    assert any(b.label.startswith("Iterate RFM (about") for b in at.button)
    assert "This is the shipped run" in _text(at) and "not your settings" in _text(at)
    at.slider(key="gk_frac").set_value(0.9).run(timeout=60)
    at.slider(key="gk_iters").set_value(60).run(timeout=60)
    assert not at.exception
    assert any("limit 90 s" in e.value for e in at.warning) and not at.error   # over budget: a warning


def test_a_tour_link_sets_the_knobs():
    from streamlit.testing.v1 import AppTest

    from toymodels.registry import REPO_ROOT, get_paper

    at = AppTest.from_file(str(REPO_ROOT / "Home.py"), default_timeout=180).run()
    at.query_params["tour"] = "5"
    at.switch_page(get_paper(M.TOPIC).page).run(timeout=180)
    assert not at.exception, at.exception
    assert at.select_slider(key="gk_p").value == 31
    assert any("Step 5 of 5" in c.value for c in at.caption)


def test_a_singular_kernel_matrix_is_explained_not_raised():
    """At p = 31, L = 0.5, s = 1 the kernel matrix turns singular at iteration 17 (ridge 0): the page says so and
    falls back to the shipped run, instead of failing (found by the widget fuzzer)."""
    import numpy as np

    with pytest.raises(np.linalg.LinAlgError):
        M.run(M.Config(p=31, bandwidth=0.5, power=1.0))
    at = open_page(M.TOPIC, 180)
    at.select_slider(key="gk_p").set_value(31).run(timeout=180)
    at.slider(key="gk_L").set_value(0.5).run(timeout=180)
    at.slider(key="gk_s").set_value(1.0).run(timeout=180)
    assert not at.exception, at.exception
    assert any("kernel matrix became singular" in e.value for e in at.warning) and not at.error
    s = M.summary(store.load_shipped(M.TOPIC, "default"))
    assert f"first {s['quiet_iters']} iterations" in _text(at)
