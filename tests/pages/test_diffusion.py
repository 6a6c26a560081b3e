"""The diffusion page (AppTest): defaults, knobs, links."""
import pytest

import toymodels.diffusion as D
from tests.apptest_helpers import open_page, open_tab, page_tabs
from toymodels.registry import REPO_ROOT as ROOT

needs_page = pytest.mark.skipif(not (ROOT / "pages" / "diffusion.py").exists(), reason="page not built yet")


def _page():
    return open_page("diffusion")


@needs_page
def test_page_opens_on_the_picture_and_the_shipped_studies():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "Diffusion memorization"
    shown = " ".join(m.value for m in at.markdown)
    assert "claims reproduced" in shown                         # the full ledger, below the story
    assert "What to notice" in shown
    from toymodels import shipped

    study = shipped.load_view(D, "study")
    assert f"slope {study['tau_mem_slope']:.2f}" in shown       # the headline slope beside the figure
    assert len(at.table) >= 1                                   # the claims ledger (ui.claims_table: st.table)
    assert len(at.dataframe) >= 1                               # per-seed τ (the window tab)
    assert not at.error
    for label, frames in (("CFM vs EFM", 1), ("Theory: random features", 2), ("Lab notebook", 1)):
        tab = open_tab("diffusion", label)                      # CFM/EFM pairs; RF slopes and edges; per-size summary
        assert not tab.exception and not tab.error, (label, tab.exception)
        assert len(tab.dataframe) >= frames, label


@needs_page
def test_the_default_link_draws_only_the_open_tab():
    """A cold link draws the window tab only (issue 39: the browser drew every tab's charts); a tab's widgets and
    tables exist once its tab is open."""
    at = _page()
    assert not at.exception, at.exception
    key, labels = page_tabs("diffusion")
    assert key == "diff_tab" and labels[0] == "The window"
    assert [w.key for w in at.selectbox if w.key == "viz_data"] == []          # "Watch it denoise"
    assert [w.key for w in at.select_slider if w.key in ("rf_psi_p", "els_P")] == []
    assert not any("Bertrand et al., Finding 1" in m.value for m in at.markdown)    # "Flow matching & ELS"
    assert at.select_slider(key="win_spn") is not None                         # the open tab's own sweep
    viz = open_tab("diffusion", "Watch it denoise")
    assert not viz.exception and viz.selectbox(key="viz_data").value == "moons"
    assert [w.key for w in viz.multiselect if w.key == "win_ns"] == []           # the window tab is closed there
    more = open_tab("diffusion", "Flow matching & ELS")
    assert not more.exception and any("Bertrand et al., Finding 1" in m.value for m in more.markdown)
    assert more.select_slider(key="els_P").value == 3


@needs_page
def test_page_runs_after_changing_the_dataset():
    at = open_tab("diffusion", "Watch it denoise")
    at.selectbox(key="viz_data").set_value("digits").run()
    assert not at.exception, at.exception
    at.selectbox(key="viz_data").set_value("ring").run()
    assert not at.exception, at.exception


@pytest.mark.slow
def test_quick_reproduction_keeps_todays_keys_and_judges_the_claims():
    r = D.reproduce(quick=True)
    for key in ("ns", "tau_gen", "tau_mem", "tau_mem_slope", "tau_gen_slope", "tau_mem_half_slope", "tau_gap_slope",
                "f_mem_final", "closed_form_fmem", "rf_psi_n", "rf_tau_mem", "rf_tau_mem_slope", "rf_tau_gen_slope",
                "rf_loss_train_tau10", "claims", "reproduced", "topic"):
        assert key in r, key
    assert r["quick"] is True and r["ns"] == [32, 64, 128] and r["closed_form_fmem"] >= 0.95
    assert {c["id"] for c in r["claims"]} == {c.id for c in D.CLAIMS}


@needs_page
def test_page_knobs_live_rf_run_and_oversized_window_is_refused():
    at = open_tab("diffusion", "Theory: random features")
    at.select_slider(key="rf_psi_p").set_value(16)
    at.select_slider(key="rf_d").set_value(10)
    at.multiselect(key="rf_psi_n").set_value([1, 2])
    at.button(key="rf_form-submit").click().run()              # the RF form's Run (computes a small live case)
    assert not at.exception, at.exception
    assert any("p = 160" in c.value for c in at.caption)     # d = 10, ψ_p = 16 was really computed
    at = _page()                                               # the window tab (the default)
    at.multiselect(key="win_ns").set_value([256, 512])
    at.select_slider(key="win_spn").set_value(300)
    at.button(key="window_form-submit").click().run()             # far over the live budget: refused with a warning
    assert not at.exception, at.exception                      # that says what to change (a budget is no error)
    assert any("live budget" in w.value and "fewer" in w.value for w in at.warning) and not at.error


@needs_page
def test_a_small_live_window_run_shows_its_own_slopes():
    at = _page()
    at.multiselect(key="win_ns").set_value([16, 32])
    at.select_slider(key="win_spn").set_value(50)
    at.select_slider(key="win_width").set_value(32)
    at.button(key="window_form-submit").click().run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Your run: τ_mem ∝") for c in at.caption)


@needs_page
def test_a_prediction_step_opens_its_tab_only_after_the_reveal():
    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["tour"] = "3"
    at.switch_page(get_paper("diffusion").page).run()
    assert not at.exception, at.exception
    assert at.query_params.get("diff_tab") in (None, [], "The window", ["The window"])  # asked first: not opened
    at.radio(key="tour-guess-3").set_value("about the same").run()
    at.button(key="tour-reveal").click().run()
    assert not at.exception, at.exception
    assert any("Step 3 of 5" in c.value for c in at.caption)
    assert any("EFM" in m.value for m in at.markdown)


# --------------------------------------------------------------------------- the page: links and fuzz


def test_link_with_a_display_label_opens_the_default_with_a_notice():
    """Issue 14 #10: `?viz_data=2-D%3A+ring+of+8+Gaussians` stored a label; ids now, and an unknown one is named."""
    bad = {"viz_data": "2-D: ring of 8 Gaussians", "els_P": "4"}
    for label, ok in (("Flow matching & ELS", lambda t: t.select_slider(key="els_P").value == 3),
                      ("The window", lambda t: True)):          # a closed tab's bad value is named all the same
        other = open_tab("diffusion", label, bad, timeout=300)
        assert not other.exception and ok(other), (label, other.exception)
        notice = " ".join(w.value for w in [*other.warning, *other.code])
        assert "viz_data=2-D: ring of 8 Gaussians" in notice and "els_P=4" in notice, label
    at = open_tab("diffusion", "Watch it denoise", bad, timeout=300)
    assert not at.exception, at.exception
    assert at.selectbox(key="viz_data").value == "moons"
    notice = " ".join(w.value for w in [*at.warning, *at.code])    # the values are shown as text (a code block)
    assert "viz_data=2-D: ring of 8 Gaussians" in notice and "els_P=4" in notice
    at.selectbox(key="viz_data").set_value("ring").run()
    assert not at.exception and at.query_params.get("viz_data") in ("ring", ["ring"])
    again = open_tab("diffusion", "Watch it denoise", {"viz_data": "ring"}, timeout=300)  # an id link: that set
    assert again.selectbox(key="viz_data").value == "ring" and not again.warning
