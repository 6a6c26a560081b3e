"""The superposition page, run as a visitor would (AppTest): defaults from shipped results, presets, a small
training, uploads, the sweeps."""
import io

import numpy as np
import pytest

from tests.apptest_helpers import open_page, open_tab, page_tabs


def _npy(arr, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("superposition")


def _tab(label: str):
    """The page opened on one of its tabs (only the open tab's content runs)."""
    return open_tab("superposition", label)


def test_the_default_link_draws_only_the_first_tab():
    """Issue 39: a closed tab's content does not run, so a cold link draws only the story."""
    key, labels = page_tabs("superposition")
    assert key == "sp_tabs" and labels[0] == "The paper, step by step"
    at = _page()
    assert not at.exception, at.exception
    assert [s for s in at.select_slider if s.key == "geo_gamma"]               # the story is drawn
    assert not [b for b in at.button if b.key in ("train_btn", "sweep_btn")]
    assert not [u for u in at.get("file_uploader") if u.key == "sp_upload"]
    assert not any(h.value == "Configurations tried" for h in at.subheader)
    tried = _tab("Train and sweep")
    assert not tried.exception, tried.exception
    assert [b for b in tried.button if b.key == "train_btn"]
    assert not [s for s in tried.select_slider if s.key == "geo_gamma"]        # the story is closed there
    assert [u for u in _tab("Real models").get("file_uploader") if u.key == "sp_upload"]
    notebook = _tab("Lab notebook")
    assert not notebook.exception, notebook.exception
    assert any(h.value == "Configurations tried" for h in notebook.subheader)
    assert any("m = 10 under the paper's two recipes" in md.value for md in notebook.markdown)


def test_page_defaults_render_from_shipped_results():
    """The page opens on the headline figure and our number (what to notice), then the ledger (issue 44), from
    shipped views (no warning that one is missing)."""
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "Superposition & scaling"
    assert not at.error and not at.warning
    texts = [str(t.value) for t in at.markdown]
    notice = next(i for i, t in enumerate(texts) if "What to notice" in t)
    ledger = next(i for i, t in enumerate(texts) if "claims reproduced" in t)
    assert notice < ledger and len(at.dataframe) >= 1


def test_geometry_says_when_its_figures_are_not_the_settings_and_trains_them():
    """Issue 44: 'features n' 5 -> 6 redrew nothing and said nothing. Now the figures say beside themselves that
    they are the shipped n = 5 until the button trains n = 6 (about 4 s)."""
    at = _page()
    stale = "not the settings above"
    assert not any(stale in i.value for i in at.info)
    at.slider(key="geo_n").set_value(6).run()
    assert not at.exception, at.exception
    assert any(stale in i.value and "n = 5" in i.value for i in at.info)
    at.button(key="geo_train").click().run(timeout=120)
    assert not at.exception, at.exception
    assert not any(stale in i.value for i in at.info)
    assert any(c.value.startswith("n = 6,") and "of 6 features" in c.value for c in at.caption)


def test_page_tour_steps_set_their_knobs():
    """A step sets its knobs; a step that asks for a prediction sets them only once the reader reveals."""
    at = _page()
    at.query_params["tour"] = "5"
    at.run()
    assert not at.exception, at.exception
    assert at.select_slider(key="neff_ratio").value != 1.0           # a prediction first
    at.radio(key="tour-guess-5").set_value(at.radio(key="tour-guess-5").options[1]).run()
    at.button(key="tour-reveal").click().run()
    assert at.select_slider(key="neff_ratio").value == 1.0
    at.query_params["tour"] = "3"
    at.run()
    assert at.select_slider(key="geo_gamma").value == -1.0


def test_page_other_preset_and_training_a_small_model():
    at = _tab("Train and sweep")
    at.selectbox(key="preset").set_value("paper: weak").run()
    assert not at.exception, at.exception
    assert at.slider(key="gamma").value == pytest.approx(0.1) and at.slider(key="alpha").value == pytest.approx(1.5)
    at.number_input(key="n").set_value(200).run()
    at.number_input(key="steps").set_value(200).run()
    at.button(key="train_btn").click().run()
    assert not at.exception, at.exception
    assert not at.error
    assert any("γ = 0.1" in c.value and "n = 200" in c.value for c in at.caption)


@pytest.mark.parametrize("name,data,match", [
    ("evil.npy", _npy(np.array([{"x": 1}], dtype=object), allow_pickle=True), "pickle"),
    ("zero.npy", _npy(np.zeros((20, 8), np.float32)), "non-zero"),
])
def test_page_bad_upload_shows_a_message_not_a_traceback(name, data, match):
    at = _tab("Real models")
    at.file_uploader(key="sp_upload").set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, at.exception
    assert any("Cannot use this file" in e.value and match in e.value.replace("\\", "") for e in at.error)


def test_page_geometry_gamma_slider_and_neff_slider_are_cheap():
    at = _page()
    at.select_slider(key="geo_gamma").set_value(0.5).run()
    assert not at.exception, at.exception
    assert any("γ = +0.50" in c.value for c in at.caption)
    at.select_slider(key="neff_ratio").set_value(1.0).run()
    assert not at.exception, at.exception


def test_page_sweep_runs_small_and_offers_csv():
    at = _tab("Train and sweep")
    at.number_input(key="sw_steps").set_value(100)
    at.number_input(key="sw_n").set_value(100)
    at.multiselect(key="sw_ms").set_value([5, 10])
    at.run()
    before = len(at.get("download_button"))
    at.button(key="sweep_btn").click().run()
    assert not at.exception, at.exception
    assert not at.error
    assert len(at.get("download_button")) == before + 3         # the sweep's chart: SVG, PNG and CSV


def test_page_geometry_form_rejects_nothing_silently():
    at = _page()
    at.slider(key="geo_n").set_value(3)
    at.slider(key="geo_alpha").set_value(2.0)
    at.select_slider(key="geo_E").set_value(1.0).run()
    at.button(key="geo_train").click().run()
    assert not at.exception, at.exception
    assert any("of 3 features" in c.value for c in at.caption) or any("E =" in e.value for e in at.error)


def test_ending_the_tour_on_another_tab_leaves_no_knob_in_the_link():
    """The last step opens 'Train and sweep' with the weak preset; End tour goes back to the story, where that tab's
    knobs are not drawn: they still leave the link (as ui.form leaves out a knob at its default)."""
    at = _page()
    at.query_params["tour"] = "6"
    at.run()
    assert not at.exception, at.exception
    assert at.slider(key="gamma").value == pytest.approx(0.1)                     # the step's tab is open
    assert {"preset", "gamma", "alpha"} <= set(at.query_params)
    at.button(key="tour-end").click().run()
    assert not at.exception, at.exception
    assert not [b for b in at.button if b.key == "train_btn"]                      # back on the story
    assert not {"tour", "preset", "gamma", "alpha"} & set(at.query_params), dict(at.query_params)
