"""RLVR's page through the router: the ledger first, the shipped views read by its sliders, training with your own
settings, the upload (valid, invalid, hostile)."""
import numpy as np
import pytest

from tests.apptest_helpers import open_page, open_tab, page_tabs
from toymodels import rlvr as M
from toymodels import store
from toymodels.claims import judge


def _page():
    return open_page("rlvr")


def _tab(label: str):
    """The page opened on one of its tabs (only the open tab's content runs)."""
    return open_tab("rlvr", label)


def _metrics(at) -> dict:
    out = {}
    for x in at.metric:
        out.setdefault(x.label, (x.value, x.delta))
    return out


def test_page_defaults_open_on_the_picture_and_the_ledger_below():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "RLVR & reasoning"
    assert not at.error
    tables = [t.value for t in at.table]
    ledger = next(t for t in tables if "Claim" in t.columns)  # the full ledger, once, below the story
    assert len(ledger) == len(M.CLAIMS)
    views = _views() | {"rho_sweep": store.load_shipped("rlvr", "rho_sweep")}
    for shown, claim in zip(ledger["Status"], M.CLAIMS):   # each row's status is the one its test gives today
        assert str(shown).split(" ", 1)[1] == judge(claim, views).status, (claim.id, shown)
    text = " ".join(md.value for md in at.markdown)
    assert "claims reproduced" in text and "What to notice" in text
    m = M.metrics(_views())
    assert f"×{m['pass1_gain_train']:.1f}" in text and f"×{m['pass1_gain_heldout']:.1f}" in text


def test_the_lab_notebook_tab_lists_every_configuration_tried():
    at = _tab("Lab notebook")
    assert not at.exception, at.exception
    assert not at.error
    tables = [t.value for t in at.table]
    notebook = next(t for t in tables if "Claim" not in t.columns)  # the lab notebook wraps (st.table)
    assert len(notebook) == len(M.LAB_NOTEBOOK)


def test_the_default_link_draws_only_the_first_tab():
    """Issue 39: a closed tab's content does not run, so a cold link draws only the open tab."""
    key, labels = page_tabs("rlvr")
    assert key == "rl_tabs" and labels[0] == "Contrast: the ρ toy"
    at = _page()
    assert not at.exception, at.exception
    assert [s for s in at.select_slider if s.key == "rl_rho"]                   # the first tab is drawn
    assert not [w for w in at.get("file_uploader") if w.key == "rl_upload"]
    assert not [b for b in at.button if b.key == "rl_form-submit"]
    assert not [t for t in at.table if "Claim" not in t.value.columns]          # no lab notebook table
    up = _tab("Analyse your evaluations")
    assert not up.exception, up.exception
    assert [w for w in up.get("file_uploader") if w.key == "rl_upload"]
    assert not [s for s in up.select_slider if s.key == "rl_rho"]               # and the first tab is closed there
    run = _tab("Run it yourself")
    assert [b for b in run.button if b.key == "rl_form-submit"]


def _views():
    return {"typed_seeds": store.load_shipped("rlvr", "typed_seeds")}


def test_the_atypical_slider_reads_the_shipped_sweep():
    at = _page()
    at.select_slider(key="rl_a").set_value(0.0).run()
    assert not at.exception, at.exception
    t = store.load_shipped("rlvr", "atypical_sweep")["table"]
    row = t[(t.steps == M.HEADLINE_LENGTH) & np.isclose(t.atypical, 0.0) & (t.split == "train")].iloc[0]
    got = _metrics(at)
    assert got["pass@256 change, train"][0] == f"{-100 * row.pass256_drop:+.1f} pts"
    assert got["pass@1 gain, train"][0] == f"×{row.pass1_gain:.2f}"


def test_the_rho_contrast_slider_reads_its_grid():
    at = _page()
    at.select_slider(key="rl_rho").set_value(0.2).run()
    assert not at.exception, at.exception
    t = store.load_shipped("rlvr", "rho_sweep")["table"]
    row = t[(t.steps == 400) & np.isclose(t.rho, 0.2)].iloc[0]
    assert _metrics(at)["pass@256 change"][0] == f"{-100 * row.pass256_drop:+.1f} pts"


def test_training_with_your_own_settings():
    at = _tab("Run it yourself")
    at.slider(key="rl_a_run").set_value(0.5)
    at.select_slider(key="rl_K").set_value(4)
    at.select_slider(key="rl_n").set_value(128)
    at.button(key="rl_form-submit").click().run()
    assert not at.exception, at.exception
    assert not at.error
    assert any(df.value.shape[0] == 2 * len(M.TYPED_LENGTHS) for df in at.dataframe)   # both splits, every length


def test_page_upload_valid_and_invalid_csv():
    at = _tab("Analyse your evaluations")
    at.file_uploader(key="rl_upload").set_value(("mine.csv", M.TEMPLATE_COUNTS.encode(), "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    at.file_uploader(key="rl_upload").set_value(("bad.csv", b"model,problem,n,c\nm,p,3,9\n", "text/csv"))
    at.run()
    assert not at.exception, at.exception
    assert any("c > n in data row 1" in e.value.replace("\\", "") for e in at.error)  # ui.plain escapes


@pytest.mark.parametrize("payload", [b"model,problem,n,c\nm,p,5,1e300\n",
                                     b"model,problem,n,c\nm,p,5," + b"7" * 100_000 + b"x\n",
                                     b"model,problem,n," + b"c" * 100_000 + b"\nm,p,5,1\n"])
def test_page_upload_errors_are_short_and_never_crash(payload):
    """Issue 14, findings 1 and 9: no traceback, and no 100,000-character echo of the upload."""
    at = _tab("Analyse your evaluations")
    at.file_uploader(key="rl_upload").set_value(("x" * 300 + ".csv", payload, "text/csv")).run()
    assert not at.exception, at.exception
    assert at.error and all(len(e.value) < 600 for e in at.error), [len(e.value) for e in at.error]


def test_a_link_value_the_page_does_not_offer_opens_the_default_with_a_notice():
    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["rl_a"] = "0.33"
    at.switch_page(get_paper("rlvr").page).run()
    assert not at.exception, at.exception
    assert any("were not used" in w.value for w in at.warning)          # one notice for the link
    assert at.select_slider(key="rl_a").value == 0.2                     # the default shown


def test_a_prediction_step_sets_its_knob_only_after_the_reveal():
    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["tour"] = "4"
    at.switch_page(get_paper("rlvr").page).run()
    assert not at.exception, at.exception
    assert at.select_slider(key="rl_a").value == 0.2                     # asked first: nothing changed yet
    at.radio(key="tour-guess-4").set_value(at.radio(key="tour-guess-4").options[1]).run()
    at.button(key="tour-reveal").click().run()
    assert not at.exception, at.exception
    assert at.select_slider(key="rl_a").value == 0.0
    t = store.load_shipped("rlvr", "atypical_sweep")["table"]
    row = t[(t.steps == M.HEADLINE_LENGTH) & np.isclose(t.atypical, 0.0) & (t.split == "train")].iloc[0]
    assert _metrics(at)["pass@256 change, train"][0] == f"{-100 * row.pass256_drop:+.1f} pts"
