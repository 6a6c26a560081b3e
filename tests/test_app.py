"""AppTest: Home and every page the router registers run with default widgets and raise nothing."""
import pytest

from tests.apptest_helpers import open_home, open_page
from toymodels.registry import PAPERS

ROUTED = [p for p in PAPERS if p.has_page]


def test_home_renders_a_card_per_paper_without_error():
    at = open_home(60)
    assert not at.exception, at.exception
    assert at.title[0].value == "NeurIPS 2025 Best Papers Explorer"
    text = " ".join(m.value for m in at.markdown)
    for paper in PAPERS:
        assert paper.short_title in text and paper.arxiv in text
    assert text.count("Paper's number:") == len(PAPERS)


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_every_routed_page_runs_with_defaults_and_reads_no_source(paper, monkeypatch):
    """A page load (Home, then the page) raises nothing and parses no source: a shipped view's freshness is the
    build's to check (``precompute --check``), never the server's."""
    from toymodels import freshness, store

    parsed = []

    def parse(*args, **kwargs):
        parsed.append(args[:1])
        raise AssertionError("a page load parsed source")

    monkeypatch.setattr(freshness, "_parse", parse)
    monkeypatch.setattr(freshness, "definitions", parse)
    monkeypatch.setattr(store, "source_hash", parse)
    at = open_page(paper.topic, timeout=300)
    assert not at.exception, at.exception
    assert any(paper.short_title == t.value for t in at.title)
    assert parsed == []


def test_home_cards_show_our_number_beside_the_papers_from_the_verdict_index(tmp_path, monkeypatch):
    import json

    from toymodels import store

    (tmp_path / "verdicts.json").write_text(json.dumps({
        "rlvr": {"reproduced": True, "badge": "reproduced", "ours": "OURS-RLVR", "paper": "PAPER-RLVR",
                 "summary": "s", "fresh": True},
        "transductive": {"reproduced": False, "badge": "not reproduced", "ours": "OURS-TR", "paper": "P-TR",
                         "summary": "s", "fresh": True}}))
    monkeypatch.setattr(store, "RESULTS_DIR", tmp_path)
    at = open_home(60)
    assert not at.exception, at.exception
    shown = [m.value for m in at.markdown]
    labels = [c.value for c in at.caption]
    assert r"**OURS\-RLVR**" in shown and r"**PAPER\-RLVR**" in shown and r"**OURS\-TR**" in shown
    assert labels.count("Our toy") == 2 and labels.count("Paper") == 2  # topics missing from the index: no number


def _modules_after(script: str) -> set[str]:
    """The heavy libraries a fresh interpreter holds after running ``script`` (a cold server's first page)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    code = script + "\nimport json, sys\nprint(json.dumps(sorted(m for m in ('torch', 'pandas', 'numpy', 'altair', " \
                    "'scipy', 'scipy.stats', 'sklearn', 'transformers', 'sentence_transformers') if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parent.parent,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_home_imports_no_numerical_library_on_a_cold_server():
    # Home reads the verdict index only: numpy, pandas and torch would cost a cold first page 1-4 s.
    assert _modules_after("import streamlit\nfrom toymodels.registry import AWARD, PAPERS, RUNNER_UP, read_verdicts\n"
                          "assert read_verdicts()") == set()


def test_a_numpy_only_page_does_not_import_torch():
    # rlvr computes with numpy; its footer used to import torch just to name the device (2-4 s on a cold page).
    script = ("from streamlit.testing.v1 import AppTest\n"
              "at = AppTest.from_file('Home.py', default_timeout=120)\n"
              "at.switch_page('pages/rlvr.py')\nat.run()\nassert not at.exception, at.exception\n"
              "assert any('Computed by' in c.value for c in at.caption)\n")
    assert "torch" not in _modules_after(script)


@pytest.mark.parametrize("paper", ROUTED, ids=lambda p: p.topic)
def test_a_shipped_page_opens_without_importing_torch_or_scipy_stats(paper):
    # A cold shared link at the shipped settings reads shipped views: importing torch (1.5-3 s of CPU on a cold
    # server) only to name a live entry point (ui.compute(M.fn, ...)) or a table helper kept beside the training code
    # is a defect (diffusion's model_times_table, induction-heads' compare_depths did, issue 39).
    script = ("from streamlit.testing.v1 import AppTest\n"
              "at = AppTest.from_file('Home.py', default_timeout=120)\n"
              f"at.switch_page({paper.page!r})\nat.run()\nassert not at.exception, at.exception\n")
    heavy = _modules_after(script)
    assert not heavy & {"torch", "sklearn", "transformers", "sentence_transformers"}, heavy
    # scipy.stats costs a cold page about 0.6 s: a page reads its ledger from the verdict index (the build judged
    # it) and its intervals use scipy.special's quantiles (the same bits), deep-crl's Fisher test an exact
    # hypergeometric sum and superposition's fits numpy's least squares (each tested against scipy.stats).
    assert "scipy.stats" not in heavy



