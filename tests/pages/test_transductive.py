"""The transductive page in AppTest: defaults, playing rounds, custom classes, links that would start a long
solve, text from a link shown as plain characters."""
import time

import pytest

import toymodels.transductive as M
from tests.apptest_helpers import open_page


def _page():
    return open_page("transductive")


def _click(at, label):
    buttons = [b for b in at.button if b.label == label and not b.disabled]
    if buttons:
        buttons[0].click().run()
    return bool(buttons)


def test_page_defaults_ledger_and_playing_rounds():
    at = _page()
    assert not at.exception, at.exception
    assert any(t.value == "Transductive online learning" for t in at.title)
    ledger = at.table[0].value  # the claims table comes first
    assert "Claim" in ledger.columns and len(ledger) == len(M.CLAIMS)
    assert any(m.label == "M_tr (transductive)" and str(m.value) == "2" for m in at.metric)
    for _ in range(8):  # play as the learner against the optimal transductive adversary until the end
        if not _click(at, "Predict 1"):
            break
        assert not at.exception, at.exception
    moves = at.session_state["tr_game"]["moves"]
    assert 1 <= len(moves) <= 7 and set(moves) == {1}
    # the page's transcript is online.play's, replayed from the same clicks
    G = M.class_G()
    ref, state = M.play(G, M.HumanLearner(G, moves), M.make_adversary("transductive", G, M.class_summary(G)["order"]),
                        with_state=True)
    assert state["over"] and state["mistakes"] >= 2  # M_tr(G) = 2 is forced on any learner
    assert any(m.label == "Mistakes so far" and str(m.value) == str(state["mistakes"]) for m in at.metric)


def test_page_custom_class_errors_and_other_modes():
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    at.text_area(key="rows").set_value("0101\n011\n1x10").run()
    assert not at.exception
    assert any("different lengths" in e.value or "only the characters" in e.value for e in at.error)
    at.text_area(key="rows").set_value("011\n011\n100\n110").run()
    assert not at.exception and any("duplicate" in w.value for w in at.warning)
    at.radio(key="mode").set_value("compare").run()
    assert not at.exception
    at.radio(key="mode").set_value("adversary")
    at.radio(key="game").set_value("standard").run()
    assert not at.exception
    ask = [b for b in at.button if b.label.startswith("x")]
    assert ask
    ask[0].click().run()
    labels = [b for b in at.button if b.label.startswith("Label") and not b.disabled]
    labels[0].click().run()
    assert not at.exception and len(at.session_state["tr_game"]["moves"]) == 2
    assert any("1 × 1" not in m.value for m in at.metric)


#: A class whose exact solve needs more than a link's budget but only a few seconds (random 12 x 448: ~3.5 s).
SLOW_CLASS = (12, 448, 0)


def test_page_link_to_a_long_class_waits_for_a_button_that_states_the_cost():
    """A link whose class needs more than LINK_TR_SECONDS shows a button stating the cost instead of solving it;
    the link's load spends at most that budget (the meter stops it); pressing the button solves it."""
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    H = M.random_class(*SLOW_CLASS)
    at.text_area(key="rows").set_value(M.format_class(H))
    t = time.process_time()
    at.run()
    assert time.process_time() - t < M.LINK_TR_SECONDS + 3  # the budget, plus the page itself
    assert not at.exception, at.exception
    assert not any(m.label == "M_tr (transductive)" for m in at.metric)
    button = [b for b in at.button if b.label.startswith("Solve it exactly")]
    assert button and "more than" in button[0].label
    assert float(button[0].label.split("more than ")[1].split(" s")[0]) >= M.LINK_TR_SECONDS
    assert f"{M.MAX_TR_SECONDS:g} s" in button[0].label and f"{M.MAX_TR_BYTES // 2**20} MB" in button[0].label
    button[0].click().run()
    assert not at.exception, at.exception
    assert any(m.label == "M_tr (transductive)" and str(m.value) == str(M.transductive_value(H)[0]) for m in at.metric)


def test_page_refuses_the_killing_link_with_a_message():
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    at.text_area(key="rows").set_value(M.format_class(M.random_class(16, 1024, 0))).run()
    assert not at.exception, at.exception
    assert not any(m.label == "M_tr (transductive)" for m in at.metric)
    assert any("too large for the exact transductive value" in e.value for e in at.error) or any(
        b.label.startswith("Solve it exactly") for b in at.button)


@pytest.mark.parametrize("text", [
    "[x](https://example.com/x)\n0101",
    "![img](https://example.com/a.png)\n0101",
    "https://example.com/auto\n01",
    "**bold**\n01",
    ":red[red]\n01",
    "$x^2$\n01",
])
def test_page_shows_link_text_as_plain_characters(text):
    """A crafted class text is quoted in the error as characters (every markdown mark escaped): no link, image,
    autolink, emphasis, colour or LaTeX can form."""
    at = _page()
    at.selectbox(key="cls").set_value("custom").run()
    at.text_area(key="rows").set_value(text).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error if "cannot be used" in e.value]
    assert errors
    shown = errors[0].split("cannot be used: ", 1)[1]  # what follows is the error, quoting the visitor's text
    payload = text.split()[0][:20]
    marks = "[]()!*_`$:.<>~|#"  # what can start markup (ui.plain escapes them; commas and slashes are harmless)
    assert all("\\" + c in shown for c in set(payload) if c in marks), shown  # quoted, every mark escaped
    bare = [c for i, c in enumerate(shown) if c in marks and shown[i - 1:i] != "\\"]
    assert not bare, (bare, shown)  # no markdown character is left unescaped


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5])
def test_each_tour_step_opens_from_its_link_and_sets_its_knobs(step):
    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["tour"] = str(step)
    at.switch_page(get_paper("transductive").page).run()
    assert not at.exception, at.exception
    assert any(f"Step {step} of 5" in c.value for c in at.caption)
    if step in (3, 4):  # a prediction first: the class is still G until the reveal
        assert at.selectbox(key="cls").value == "G"
        at.radio(key=f"tour-guess-{step}").set_value(at.radio(key=f"tour-guess-{step}").options[0]).run()
        at.button(key="tour-reveal").click().run()
        assert not at.exception, at.exception
    want = {1: ("G", 2, 3), 2: ("G", 2, 3), 3: ("GxG", 4, 6), 4: ("thresholds", 3, 3), 5: ("G", 2, 3)}[step]
    assert at.selectbox(key="cls").value == want[0]
    metrics = {m.label: str(m.value) for m in at.metric}
    assert metrics["M_tr (transductive)"] == str(want[1]) and metrics["LD (standard game)"] == str(want[2])
