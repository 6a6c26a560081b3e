"""AppTest: Home and every page the router registers run with default widgets and raise nothing."""
import pytest
from streamlit.testing.v1 import AppTest

from toymodels.registry import PAPERS, REPO_ROOT as ROOT

ROUTED = [p for p in PAPERS if p.has_page]


def _home() -> AppTest:
    at = AppTest.from_file(str(ROOT / "Home.py"), default_timeout=60)
    return at.run()


def test_home_renders_seven_cards_without_error():
    at = _home()
    assert not at.exception, at.exception
    assert at.title[0].value == "NeurIPS 2025 Best Papers Explorer"
    text = " ".join(m.value for m in at.markdown)
    for paper in PAPERS:
        assert paper.short_title in text and paper.arxiv in text
    assert text.count("Paper's number:") == 7


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_every_routed_page_runs_with_defaults(paper):
    at = _home()
    at.switch_page(paper.page).run(timeout=300)
    assert not at.exception, at.exception
    assert any(paper.short_title == t.value for t in at.title)
