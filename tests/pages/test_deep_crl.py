"""The deep-CRL page through the router: defaults, the tour, a refused over-budget run, and a real training run."""
import pytest

from tests.apptest_helpers import open_home, open_page, open_tab, page_tabs


def _page():
    return open_page("deep-crl", timeout=180)


def test_page_opens_on_its_picture_then_the_ledger():
    at = _page()
    assert not at.exception, at.exception
    assert at.title[0].value == "1000-layer RL"
    texts = [m.value for m in at.markdown]
    notice = next(i for i, t in enumerate(texts) if t.startswith("**What to notice.**"))
    ledger = next(i for i, t in enumerate(texts) if "claims reproduced" in t)
    assert notice < ledger                                       # the picture and our number first (issue 44)
    import toymodels.deep_crl as M
    from toymodels import store
    from toymodels.deep_crl import analysis as A

    t = A.online_rule_test(A.online_table({d: store.load_shipped(M.TOPIC, f"online60_d{d}") for d in (4, 8)}))
    assert f"{t['solved_deep']} of 60 seeds" in texts[notice] and f"{t['solved_shallow']} of 60" in texts[notice]
    assert "§4.6" in " ".join(texts)                             # the paper's offline result, in plain words


def test_code_for_this_view_prints_the_numbers_the_page_shows(capsys):
    """Run the page's "Code for this view" as a reader would paste it: each print gives the number the page says
    it shows (the comment on its line)."""
    import re

    at = _page()
    code = next(c.value for c in at.code if "online_rule_test" in c.value)
    exec(compile(code, "code-for-this-view", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    claimed = re.findall(r"# the page shows (\S+);", code)
    assert len(claimed) == 3 and len(printed) == 3
    for line, value in zip(printed, claimed):
        assert line.rsplit(" ", 1)[1] == value or f"{float(line.rsplit(' ', 1)[1]):.3g}" == value, (line, value)


def test_every_tour_step_opens_from_its_link():
    for step in range(1, 6):
        home = open_home(120)
        home.query_params["tour"] = str(step)
        at = home.switch_page("pages/deep-crl.py").run(timeout=180)
        assert not at.exception, (step, at.exception)
        assert any(f"Step {step} of 5" in c.value for c in at.caption), step


def test_the_default_link_draws_only_the_open_tab():
    """A cold link draws "Train your own" only (issue 39: the browser drew every tab); the offline critic's seed
    picker, the paper's numbers and the lab notebook exist once their tab is open."""
    at = _page()
    assert not at.exception, at.exception
    key, labels = page_tabs("deep-crl")
    assert key == "crl_tabs" and labels[0] == "Train your own"
    assert at.button(key="crl_train") is not None                               # the open tab
    assert [w.key for w in at.selectbox if w.key == "crl_critic_seed"] == []    # "Offline critic in detail"
    assert not any("quoted as references" in c.value for c in at.caption)       # "Paper's numbers"
    critic = open_tab("deep-crl", "Offline critic in detail", timeout=180)
    assert not critic.exception and critic.selectbox(key="crl_critic_seed") is not None
    assert [b.key for b in critic.button if b.key == "crl_train"] == []          # the train tab is closed there
    paper = open_tab("deep-crl", "Paper's numbers", timeout=180)
    assert not paper.exception and any("quoted as references" in c.value for c in paper.caption)


def test_page_refuses_an_over_budget_run_with_a_warning():
    at = _page()
    at.selectbox(key="crl_depth").set_value(64).run()
    at.number_input(key="crl_iters").set_value(60).run()
    at.button(key="crl_train").click().run()
    assert not at.exception, at.exception
    assert any("limit" in w.value for w in at.warning), "an over-budget run must be refused with a warning"


def test_a_small_run_trains_and_reports_its_seeds():
    at = _page()
    for kind, key, value in (("selectbox", "crl_depth", 4), ("selectbox", "crl_width", 32),
                             ("selectbox", "crl_batch", 64), ("number_input", "crl_iters", 1),
                             ("number_input", "crl_seeds", 1), ("number_input", "crl_seed", 4321)):
        getattr(at, kind)(key=key).set_value(value).run()
    at.button(key="crl_train").click().run()
    assert not at.exception, at.exception
    assert any("Your run" in m.value and "seeds solved" in m.value for m in at.markdown)


@pytest.mark.parametrize("keep", [(), ("online_d4",), ("online_d4", "online_d8"), ("critic", "maze_u")])
def test_the_page_survives_any_subset_of_shipped_views(monkeypatch, keep):
    """A build may ship some views and not others (a precompute under way): the page says what is missing, on
    every tab (only the open one is drawn)."""
    import toymodels.deep_crl as M

    real = M.stored
    monkeypatch.setattr(M, "stored", lambda name: real(name) if name in keep else None)
    for label in page_tabs("deep-crl")[1]:
        at = open_tab("deep-crl", label, timeout=180)
        assert not at.exception, (label, at.exception)
        assert not at.error, (label, [e.value for e in at.error])
