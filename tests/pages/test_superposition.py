"""The superposition page, run as a visitor would (AppTest): defaults from shipped results, presets, a small
training, uploads, the sweeps."""
import io

import numpy as np
import pytest

from tests.apptest_helpers import open_page


def _npy(arr, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


# --------------------------------------------------------------------------- the page


def _page():
    return open_page("superposition")


def test_page_defaults_render_from_shipped_results():
    """The page opens on the claims table and the headline from shipped views (no warning that one is missing)."""
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "Superposition & scaling"
    assert not at.error and not at.warning
    assert any("What to notice" in str(t.value) for t in at.markdown)
    assert len(at.dataframe) >= 1 and "claims reproduced" in at.markdown[0].value + "".join(
        str(t.value) for t in at.markdown[:5])


def test_page_tour_steps_set_their_knobs():
    at = _page()
    at.query_params["tour"] = "5"
    at.run()
    assert not at.exception, at.exception
    assert at.select_slider(key="neff_ratio").value == 1.0
    at.query_params["tour"] = "4"
    at.run()
    assert at.select_slider(key="geo_gamma").value == 0.5


def test_page_other_preset_and_training_a_small_model():
    at = _page()
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
    at = _page()
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
    at = _page()
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
    at.select_slider(key="geo_E").set_value(1.0)
    at.button(key="geo_form-submit").click().run()
    assert not at.exception, at.exception
    assert any("of 3 features" in c.value for c in at.caption) or any("E =" in e.value for e in at.error)
