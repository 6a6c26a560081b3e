"""Gated attention's page, as a visitor drives it (AppTest)."""
import pytest

import toymodels.gated_attention as M
from tests.apptest_helpers import open_page, open_tab, page_tabs


def _page():
    return open_page("gated-attention")


def _real():
    """The page opened on its Real models tab (sections 4-6: MiniLM, SmolLM2, Layer by Layer)."""
    return open_tab("gated-attention", "Real models")


def _explore(params: dict | None = None):
    """The page opened on its Explore tab (only the open tab is drawn)."""
    return open_tab("gated-attention", "Explore", params)


def test_page_defaults_and_changed_variant():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "Gated attention"
    assert "claims reproduced" in at.markdown[0].value or any("claims reproduced" in m.value for m in at.markdown)
    assert not any("Train" in b.label for b in at.button)          # everything on the default page is shipped
    at = _explore()
    assert not at.exception, at.exception
    assert not any("Train" in b.label for b in at.button)          # the Explore tab's defaults are shipped too
    at.selectbox(key="ga_variant").set_value("g2_elementwise").run()
    assert not at.exception, at.exception
    at.selectbox(key="ga_layer").set_value(2).run()
    at.selectbox(key="ga_head").set_value(2).run()
    assert not at.exception, at.exception
    assert any("G2" in m.label for m in at.metric)
    assert at.query_params["ga_variant"] in ("g2_elementwise", ["g2_elementwise"])   # the id, never the label


def test_preset_does_not_train():
    """Issue 17: the preset only fills the form; an unshipped preset offers a Train button with its time."""
    at = _explore()
    at.selectbox(key="ga_preset").set_value("rope_qknorm").run()
    assert not at.exception, at.exception
    assert at.select_slider(key="ga_lr").value == 2e-2 and at.radio(key="ga_pos").value == "rope"
    assert any("Train baseline" in b.label and "(about " in b.label for b in at.button)
    at.selectbox(key="ga_preset").set_value("massive").run()
    assert not at.exception, at.exception
    assert at.select_slider(key="ga_n_heads").value == 4
    assert not any("Train baseline" in b.label for b in at.button)        # shipped: shown at once


def test_page_bad_combination_is_a_message():
    """A run over the compute budget is answered with a message and the page shows the shipped default."""
    at = _explore()
    at.select_slider(key="ga_n_layers").set_value(4)
    at.select_slider(key="ga_d_model").set_value(128)
    at.select_slider(key="ga_seq_len").set_value(256)
    at.select_slider(key="ga_steps").set_value(1500)
    next(b for b in at.button if "Apply" in b.label).click()
    at.run()
    assert not at.exception, at.exception
    assert any("compute budget" in w.value for w in at.warning) and not at.error   # over budget: a warning


@pytest.mark.parametrize("params", [
    {"ga_variant": "G1 headwise (one scalar per head)"},            # an old link that stored the label
    {"ga_preset": "nonsense", "ga_lr": "7"},
    {"ga_n_heads": "3", "ga_steps": "1e9", "ga_seed": "-4"},
    {"ga_layer": "9", "ga_qk_norm": "maybe", "ga_shown": "x"},
])
def test_link_with_unknown_values_opens_the_default_with_a_notice(params):
    """Issue 14 finding 10: a link with an unknown value opens the default view with a notice, never crashes."""
    story = open_tab("gated-attention", "The story", params)      # the default tab names them too
    assert not story.exception and any("were not used" in w.value for w in story.warning), story.exception
    at = _explore(params)
    assert not at.exception, at.exception
    assert any("were not used" in w.value for w in at.warning)
    assert at.selectbox(key="ga_variant").value == "g1_elementwise"
    assert at.select_slider(key="ga_lr").value == M.DEFAULT.lr


def test_link_with_ids_opens_that_view():
    at = _explore({"ga_variant": "g1_headwise", "ga_preset": "massive"})
    assert not at.exception, at.exception
    assert at.selectbox(key="ga_variant").value == "g1_headwise"
    assert at.select_slider(key="ga_n_layers").value == 4


def test_the_head_specific_preset():
    """Shipped: shown at once for every variant. Registered but not run (``pending=``): the preset opens the second
    pilot's first candidate with a Train button and its time, and the story says why the run is not there."""
    at = _page()
    pending = M.VIEWS["hsd_seeds"].pending
    if pending:
        assert any(i.value.startswith(pending[0].upper() + pending[1:]) for i in at.info)
    at = _explore()
    at.selectbox(key="ga_preset").set_value("hsd").run()
    assert not at.exception, at.exception
    assert at.select_slider(key="ga_n_heads").value == 4 and at.select_slider(key="ga_d_model").value == 32
    assert any("Train baseline" in b.label and "(about " in b.label for b in at.button) == bool(pending)
    at.selectbox(key="ga_variant").set_value("g1_headshared").run()
    assert not at.exception, at.exception
    assert any("Train baseline" in b.label for b in at.button) == bool(pending)   # shipped: all seven variants


def test_the_default_link_draws_only_the_open_tab():
    """A cold link draws the story only (issue 39: the browser drew every tab); Explore's knobs and the Lab
    notebook's tables exist once their tab is open."""
    at = _page()
    assert not at.exception, at.exception
    key, labels = page_tabs("gated-attention")
    assert key == "ga_tabs" and labels[0] == "The story"
    assert [w.key for w in at.selectbox if w.key in ("ga_preset", "ga_variant")] == []
    assert not any("Every configuration of this session" in m.value for m in at.markdown)    # the Lab notebook
    assert any("1 · The sink" in h.value for h in at.subheader)                              # the story itself
    assert not any(h.value.startswith("4 ·") for h in at.subheader)      # the real models: their own tab
    real = _real()
    assert not real.exception, real.exception
    assert [h.value[:3] for h in real.subheader if h.value[:1].isdigit()] == ["4 ·", "5 ·", "6 ·"]
    ex = _explore()
    assert not ex.exception and ex.selectbox(key="ga_variant").value == "g1_elementwise"
    assert not any("1 · The sink" in h.value for h in ex.subheader)
    lab = open_tab("gated-attention", "Lab notebook")
    assert not lab.exception and any("Every configuration of this session" in m.value for m in lab.markdown)


def test_pending_massive_run_shows_the_seen_seeds_as_such():
    at = _page()
    assert not at.exception, at.exception
    if M.VIEWS["mact_seeds"].pending:
        assert any("cannot decide it" in i.value for i in at.info)
        assert any("seen seeds meet it" in m.value for m in at.markdown)


def test_a_visitors_sentence_waits_for_a_button_then_runs():
    at = _real()
    at.text_area(key="ga_text").set_value("The old dog slept by the warm fire all afternoon.").run()
    assert not at.exception, at.exception
    button = next(b for b in at.button if "MiniLM" in b.label)
    assert "(about " in button.label
    button.click().run()
    assert not at.exception, at.exception
    assert any("first_token_attention" in df.value.columns for df in at.dataframe)


def test_real_model_sections_read_shipped_views_without_loading_smollm2():
    from toymodels import realmodels as R

    loaded_before = R.is_loaded("smollm2")
    at = _real()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "real-massive-smollm2" in text and "lbl-valley-is-sink-smollm2" in text and "ablation-zero-sink" in text
    assert not any("SmolLM2" in b.label for b in at.button)         # no live run without a prompt
    assert R.is_loaded("smollm2") == loaded_before


def test_a_visitors_prompt_loads_smollm2_once_per_server_process(monkeypatch):
    """Two visitors (two sessions of one server process) read their prompts: the model is loaded once."""
    from toymodels import realmodels as R

    calls = []
    real_loader = R._LOADERS["smollm2"]
    monkeypatch.setitem(R._LOADERS, "smollm2", lambda: calls.append(1) or real_loader())
    monkeypatch.setattr(R, "_LOADED", {})
    for prompt in ("Rivers carry sand to the sea, grain by grain.", "The choir sang until the candles burned out."):
        at = _real()
        at.text_area(key="ga_real_text").set_value(prompt).run(timeout=300)
        assert not at.exception, at.exception
        button = [b for b in at.button if "SmolLM2" in b.label]
        if button:                                                 # the first visitor pays the load: a button
            assert "(about " in button[0].label
            button[0].click().run(timeout=600)         # loading SmolLM2: 20 CPU-s, minutes on a busy machine
        assert not at.exception, at.exception
        assert any("Token 0's largest |h| peaks at block" in c.value for c in at.caption)
    assert len(calls) == 1 and R.is_loaded("smollm2")
