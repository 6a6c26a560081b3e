"""The lecturer's kit on every page (issue 35): a tour link opens step 1 of 3-6 steps, the page opens on its claims
table, a Cite block carries the paper's BibTeX (from the registry) and the app's, "Code for this view" rebuilds the
view from ``toymodels``, and every chart has its SVG / PNG / CSV downloads."""
import re

import pytest

from tests.apptest_helpers import open_home
from toymodels.registry import PAPERS

ROUTED = [p for p in PAPERS if p.has_page]


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_the_kit_is_on_every_page(paper):
    home = open_home(120)
    home.query_params["tour"] = "1"
    at = home.switch_page(paper.page).run(timeout=240)
    assert not at.exception, at.exception

    steps = [m for c in at.caption if (m := re.search(r"Step 1 of (\d+)", c.value))]
    assert steps, "?tour=1 does not open step 1"
    assert 3 <= int(steps[0].group(1)) <= 6, "a tour has 3 to 6 steps"
    assert at.button(key="tour-next") is not None and at.button(key="tour-back").disabled

    ledger = [t for t in at.table if {"Status", "Claim", "Paper", "Ours"} <= set(t.value.columns)]
    assert ledger, "no claims table"  # anywhere on the page: picture first, the full ledger below (issue 44)

    codes = {c.language: c.value for c in at.code}
    bib = codes.get("bibtex", "")
    assert "@inproceedings" in bib and paper.arxiv in bib and str(paper.year) in bib, "no paper BibTeX"
    assert "@software{toymodels_explorer" in bib, "no BibTeX for the app"
    python = [c.value for c in at.code if c.language == "python"]
    assert any(f"toymodels.{paper.module}" in v for v in python), "no 'Code for this view' for this topic"
    compile(next(v for v in python if f"toymodels.{paper.module}" in v), "<code for this view>", "exec")

    labels = [b.label for b in at.get("download_button")]
    assert labels.count("SVG") >= 1 and labels.count("SVG") == labels.count("PNG (2x)"), labels


@pytest.mark.parametrize("paper", PAPERS, ids=lambda p: p.topic)
def test_every_lab_notebook_table_converts_to_arrow(paper):
    """A lab-notebook table mixing numbers and text in one column (seeds 3 and "3 / 2") makes Streamlit's Arrow
    conversion fail: the page falls back, but the server logs a traceback for every visitor (found by the
    hosted-demo rehearsal)."""
    import pandas as pd
    import pyarrow as pa

    module = paper.load()
    tables = [n for n in ("NOTEBOOK", "LAB_NOTEBOOK", "TRIED", "HSD_PILOT", "MACT_SEARCH") if hasattr(module, n)]
    assert tables, "no lab notebook"
    for name in tables:
        pa.Table.from_pandas(pd.DataFrame(list(getattr(module, name))))


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_the_full_ledger_ends_the_page_whichever_tab_is_open(paper):
    """The ledger strip links to the full ledger at the page's end; on induction heads it sat inside the story tab,
    so with another tab open the link led nowhere (and on grokking and supercollapse it sat in a hidden tab)."""
    from tests.apptest_helpers import open_page, open_tab, page_tabs

    found = page_tabs(paper.topic)  # the last tab; a page without tabs (transductive) as it opens
    at = open_tab(paper.topic, found[1][-1], timeout=240) if found else open_page(paper.topic, 240)
    assert not at.exception, at.exception
    heads = [h.value for h in at.main.get("subheader")]
    assert "The ledger, claim by claim" in heads, heads
    in_tabs = [h.value for tab in at.tabs for h in tab.get("subheader")]
    assert "The ledger, claim by claim" not in in_tabs, "the full ledger sits inside a tab"
