"""AppTest: the supercollapse page opens on its shipped views (nothing long computed on a load), its knobs and
tour steps change what it shows, and a visitor's own seeded run goes through its button."""
import pytest

import toymodels.supercollapse as M
import ui
from tests.apptest_helpers import open_home, open_page, open_tab, page_tabs
from toymodels import store

TOPIC = "supercollapse"


def _text(at) -> str:
    return " ".join(e.value for e in [*at.markdown, *at.caption, *at.subheader, *at.info, *at.warning])


@pytest.fixture(scope="module")
def page():
    return open_page(TOPIC, timeout=120)


def test_the_page_opens_on_its_shipped_views(page):
    assert not page.exception, page.exception
    assert page.title[0].value == "Supercollapse"
    text = _text(page)
    assert "claims reproduced" in text and "What to notice" in text
    assert "not shipped" not in text and "Recompute it" not in " ".join(b.label for b in page.button)
    assert not page.error


def test_the_default_link_draws_the_story_not_the_lab_notebook(page):
    """Issue 39: the lab notebook's content runs only when its tab is open (a link opens it)."""
    key, labels = page_tabs(TOPIC)
    assert key == "sc_tabs" and labels == ("The paper, in its own toy model", "Lab notebook")
    recursion = "The exact recursion against seeded SGD"
    assert any(h.value.startswith("5 · Your own seeds") for h in page.subheader)     # the story is drawn
    assert not any(recursion in m.value for m in page.markdown)
    at = open_tab(TOPIC, "Lab notebook", timeout=120)
    assert not at.exception, at.exception
    check = store.load_shipped(TOPIC, "check")
    assert any(recursion in m.value and f"**{check['max_abs_z']:.2f}**" in m.value for m in at.markdown)
    assert any(len(d.value) == len(M.NOTEBOOK) for d in at.dataframe)


def test_the_knobs_break_the_collapse():
    at = open_page(TOPIC, timeout=120)
    base = [m.value for m in at.caption if m.value.startswith("Spread across sizes")][0]
    at.select_slider(key="sc_gamma").set_value(1.2).run()
    assert not at.exception, at.exception
    off = [m.value for m in at.caption if m.value.startswith("Spread across sizes")][0]
    assert off != base
    at.radio(key="sc_l0").set_value("misfit").run()
    assert not at.exception, at.exception
    assert not at.slider(key="sc_l0_frac").disabled
    at.radio(key="sc_schedule").set_value("constant").run()
    assert not at.exception, at.exception
    assert "constant" in _text(at)


def test_a_tour_step_sets_its_knobs_from_the_link():
    at = open_home(60)
    at.query_params["tour"] = "4"
    at.switch_page("pages/supercollapse.py").run(timeout=120)
    assert not at.exception, at.exception
    assert at.radio(key="sc_l0").value == "true"           # a prediction first: nothing changes before the reveal
    at.radio(key="tour-guess-4").set_value("it survives").run()
    at.button(key="tour-reveal").click().run(timeout=120)
    assert not at.exception, at.exception
    assert at.radio(key="sc_l0").value == "misfit"
    assert "Step 4 of 5" in " ".join(c.value for c in at.caption)
    assert not any("default value but also had its value set" in w.value for w in at.warning)


def test_your_own_seeds_run_only_after_the_button():
    cfg = M.SimConfig(mults=(1.0,), schedules=("linear",), seed=2000, seeds=4)
    assert M.expected_seconds(cfg) > ui.AUTO_SECONDS                   # so the page must not start it by itself
    at = open_page(TOPIC, timeout=120)
    at.slider(key="sc_seeds").set_value(4).run()
    assert not at.exception, at.exception
    run = [b for b in at.button if b.label.startswith("Run seeded SGD")]
    assert run, [b.label for b in at.button]                           # over 3 s: a button states the cost
    run[0].click().run(timeout=120)
    assert not at.exception, at.exception
    assert any("Your seeds" in str(c) for c in at.get("arrow_vega_lite_chart")) or \
        any("σ =" in m.value for m in at.markdown)
