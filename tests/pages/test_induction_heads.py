"""The induction-heads page through the router (AppTest): it opens on the shipped runs and quotes their numbers, a
live run with other knobs waits for its button and then replaces the numbers, the attention-map knobs redraw, a
tour link sets the knobs, and the study's sections say they are pending until it ships."""
import pytest

import toymodels.induction_heads as M
from tests.apptest_helpers import open_page, open_tab, page_tabs
from toymodels import shipped, store


def _text(at) -> str:
    return " ".join(e.value for e in [*at.markdown, *at.caption, *at.info, *at.warning, *at.error])


@pytest.fixture(scope="module")
def page():
    at = open_page(M.TOPIC, 240)
    assert not at.exception, at.exception
    return at


RUN_TAB = "One run up close"


@pytest.fixture(scope="module")
def run_page():
    """The page opened on 'One run up close' (only the open tab's content runs)."""
    at = open_tab(M.TOPIC, RUN_TAB, timeout=240)
    assert not at.exception, at.exception
    return at


def test_the_default_link_draws_only_the_story(page):
    """Issue 39: a closed tab's content does not run, so a cold link draws only the story."""
    key, labels = page_tabs(M.TOPIC)
    assert key == "ih_tabs" and labels == ("The story", RUN_TAB, "Lab notebook")
    assert any(s.value.startswith("Twenty seeds") for s in page.subheader)          # the story is drawn
    assert not any(s.value in (RUN_TAB, "Every configuration tried") for s in page.subheader)
    assert not [w for w in page.number_input if w.key == "ih_steps"]
    assert not [w for w in page.radio if w.key == "ih_layer"]
    run = open_tab(M.TOPIC, RUN_TAB, timeout=240)
    assert not run.exception, run.exception
    assert any(s.value == RUN_TAB for s in run.subheader) and run.number_input(key="ih_steps")
    assert not any(s.value.startswith("Twenty seeds") for s in run.subheader)       # the story is closed there
    notebook = open_tab(M.TOPIC, "Lab notebook", timeout=240)
    assert not notebook.exception, notebook.exception
    assert not any(s.value == RUN_TAB for s in notebook.subheader)
    assert any(s.value == "Every configuration tried" for s in notebook.subheader)
    assert any(len(t.value) == len(M.LAB_NOTEBOOK) for t in notebook.table)         # the lab notebook's table


def test_opens_on_the_shipped_run_with_its_numbers(page):
    live = store.load_shipped(M.TOPIC, "live")
    text = _text(page)
    for n in ("2", "1", "0"):
        assert f"**{live['runs'][n]['eval_loss'][-1]:.2f}**" in text
    assert "claims reproduced" in text and not page.error
    assert any(b.label.startswith("Take the guided tour") for b in page.button)
    ledger = page.table[0].value
    assert list(ledger["Claim"]) == [j.statement for j in shipped.verdict_of(M).claims]


def test_the_heads_of_the_shipped_run_are_shown_with_their_scores(run_page):
    r2 = store.load_shipped(M.TOPIC, "live")["runs"]["2"]
    hb = M.best_heads(r2)
    assert f"best induction head scores {hb['induction']:.2f}" in _text(run_page)
    metric = next(m for m in run_page.metric if m.label == "Induction (prefix-matching) score")
    assert metric.value == f"{hb['induction']:.2f}"


def test_the_real_model_section_quotes_its_heads(page):
    if M.VIEWS["smollm2"].pending:
        assert "Pending" in _text(page)
        return
    rf = M.real_frame(store.load_shipped(M.TOPIC, "smollm2"))
    assert f"{int(rf['induction_head'].sum())} of {len(rf)} heads prefix-match" in _text(page)


def test_other_knobs_wait_for_the_button_and_then_train():
    at = open_tab(M.TOPIC, RUN_TAB, timeout=240)
    at.number_input(key="ih_steps").set_value(200).run(timeout=240)
    assert not at.exception, at.exception
    button = next((b for b in at.button if (b.key or "").startswith("run-")), None)
    if button is not None:                       # the cost model may put it under the auto-run threshold
        assert "shipped run" in _text(at)
        button.click().run(timeout=600)
    assert not at.exception, at.exception
    want = M.compare_depths(M.LiveConfig(steps=200))
    assert f"final copy loss {want['runs']['2']['eval_loss'][-1]:.3f} (2 layers)" in _text(at)


def test_the_attention_map_knobs_redraw(run_page):
    page = run_page
    page.radio(key="ih_layer").set_value(1).run(timeout=120)
    assert not page.exception, page.exception
    r2 = store.load_shipped(M.TOPIC, "live")["runs"]["2"]
    page.radio(key="ih_head").set_value(M.best_heads(r2)["prev_head"]).run(timeout=120)
    assert not page.exception, page.exception
    row = next(h for h in r2["heads"] if h["layer"] == 1 and h["head"] == M.best_heads(r2)["prev_head"])
    metric = next(m for m in page.metric if m.label == "Previous-token score")
    assert metric.value == f"{row['prev_token']:.2f}" and float(metric.value) >= 0.3


def test_a_tour_link_opens_its_step():
    from streamlit.testing.v1 import AppTest

    from toymodels.registry import REPO_ROOT, get_paper

    at = AppTest.from_file(str(REPO_ROOT / "Home.py"), default_timeout=240).run()
    at.query_params["tour"] = "2"
    at.switch_page(get_paper(M.TOPIC).page).run(timeout=240)
    assert not at.exception, at.exception
    assert any("Step 2 of 6" in c.value for c in at.caption)
    assert at.session_state["ih_tabs"] == "The story"                    # the step's tab, with its target
    assert "ih_seq" not in at.session_state  # a step sets no knob of a closed tab (step 2 set it, unseen)


def test_pending_sections_say_so():
    at = open_page(M.TOPIC, 240)
    if M.VIEWS["study"].pending:
        assert sum("Pending" in i.value for i in at.info) >= 2
    else:
        assert "fresh seeds" in _text(at)
