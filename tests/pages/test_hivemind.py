"""The hivemind page in AppTest: defaults, inputs, errors as text, links, caps."""
import numpy as np
import pytest

from tests.apptest_helpers import open_page, open_tab, page_tabs
from toymodels.hivemind import config as K
from toymodels.hivemind import memo as Mm
from toymodels.hivemind import uploads as U

RNG = np.random.default_rng(0)
EVIL_LINK, EVIL_IMG = "[Login again](http://evil)", "![x](http://evil/img.png)"


def _csv(rows) -> bytes:
    return ("model,prompt,response\n" + "".join(rows)).encode()


@pytest.fixture(autouse=True)
def _fresh_parse_memo(monkeypatch):
    """Each test parses afresh: the memo of parsed inputs (keyed by the input) would otherwise hand one test
    the result another test computed with a monkeypatched parser."""
    monkeypatch.setattr(U, "_PARSED", Mm._ByteLRU(K.PARSE_MEMO_BYTES, 32))


def _page():
    return open_page("hivemind")


def _embed_if_asked(at):
    """Press the embedding button when the page asks for it (MiniLM not loaded yet, or many new texts)."""
    for b in at.button:
        if b.key == "hm_embed_go":
            b.click().run()
            return True
    return False


def test_page_default_example_and_changed_widgets():
    at = _page()
    assert not at.exception, at.exception
    assert any(t.value == "Artificial hivemind" for t in at.title)
    at.slider(key="hm_threshold").set_value(0.6).run()
    assert not at.exception, at.exception
    at.number_input(key="hm_k").set_value(3).run()
    assert not at.exception, at.exception


def test_page_pasted_text():
    at = _page()
    at.radio(key="hm_source").set_value("paste").run()
    at.text_area(key="hm_paste").input("model: a\nTime is a river.\n---\nTime flows like a river.\n---\n"
                                       "model: b\nBake some bread.").run()
    _embed_if_asked(at)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("3 responses" in c.value for c in at.caption)
    # what the user typed survives switching to another input and back
    at.radio(key="hm_source").set_value("example").run()
    at.radio(key="hm_source").set_value("paste").run()
    assert at.text_area(key="hm_paste").value.startswith("model: a")


def test_page_pasted_single_response_gives_message_not_traceback():
    at = _page()
    at.radio(key="hm_source").set_value("paste").run()
    at.text_area(key="hm_paste").input("just one response").run()
    assert not at.exception, at.exception
    assert any("two" in e.value for e in list(at.error) + list(at.warning))


def test_page_malformed_upload_gives_clear_error():
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    at.file_uploader(key="hm_upload").upload("bad.csv", b"name,text\nx,y\n", "text/csv").run()
    assert not at.exception, at.exception
    assert any("missing column" in e.value for e in at.error)
    good = b"model,prompt,response\na,p,Time is a river.\nb,p,Time flows like a river.\nb,p,Bake bread.\n"
    at.file_uploader(key="hm_upload").set_value(("good.csv", good, "text/csv")).run()
    _embed_if_asked(at)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("3 responses" in c.value for c in at.caption)


def test_page_bad_link_value_opens_default_with_notice():
    from streamlit.testing.v1 import AppTest

    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["hm_source"] = "Example set (illustrative)"  # an old display label
    at.query_params["hm_k"] = "999"
    at.switch_page(get_paper("hivemind").page).run()
    assert not at.exception, at.exception
    assert any("link" in w.value for w in at.warning)
    assert isinstance(at, AppTest)


# element types that show their strings as text (no Markdown): text, code blocks, table cells, Vega chart data,
# selectbox options (st.selectbox documents Markdown for its label only; the label here is the page's own)
TEXT_ONLY = {"text", "code", "dataframe", "vega_lite_chart", "selectbox"}


def _types_holding(at, needle: bytes) -> list[str]:
    """The element type of every element in the page whose message holds ``needle``."""
    found = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "SerializeToString") and needle in proto.SerializeToString():
            found.append(node.type)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def _upload_evil(label: str):
    """The page opened on tab ``label`` (only the open tab is drawn), with the evil upload analysed."""
    rows = ["model,prompt,response"] + [f'"{EVIL_LINK} m{i % 2}","{EVIL_IMG} prompt","{EVIL_LINK} {EVIL_IMG} time is '
                                        f'a river {i}"' for i in range(4)]
    at = open_tab("hivemind", label)
    at.radio(key="hm_source").set_value("upload").run()     # "Your responses" is drawn on every tab
    at.file_uploader(key="hm_upload").upload(f"{EVIL_LINK}.csv", ("\n".join(rows) + "\n").encode(), "text/csv").run()
    _embed_if_asked(at)
    assert not at.exception, (label, at.exception)
    assert not at.error, (label, [e.value for e in at.error])
    holders = _types_holding(at, b"http://evil")
    assert holders and set(holders) <= TEXT_ONLY, (label, holders)
    return at


@pytest.mark.parametrize("label", ["The story", "Numbers", "Sweeps"])
def test_every_tab_shows_uploaded_values_as_text_never_as_markup(label):
    """The tabs that draw the visitor's data (the strip of "What 0.8 looks like": the test below)."""
    _upload_evil(label)


def test_page_uploaded_values_are_shown_as_text_never_as_markup():
    at = _upload_evil("What 0.8 looks like")
    # the "what 0.8 looks like" strip shows the pair's texts, as text
    assert any(EVIL_LINK in t.value and EVIL_IMG in t.value for t in at.text)
    assert any(t.value == f"Prompt: {EVIL_IMG} prompt" for t in at.text)
    # back to the upload later: the page names the earlier file, as text too
    at.radio(key="hm_source").set_value("example").run()
    at.radio(key="hm_source").set_value("upload").run()
    assert not at.exception, at.exception
    assert any(EVIL_LINK in t.value and "uploaded earlier" in t.value for t in at.text)
    holders = _types_holding(at, b"http://evil")
    assert holders and set(holders) <= TEXT_ONLY, holders


def test_page_error_about_an_upload_quotes_no_markup():
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    own_links = _types_holding(at, b"](")  # the page's own markdown links (the ledger strip's legend), before
    at.file_uploader(key="hm_upload").upload("x.csv", f'"{EVIL_LINK}","{EVIL_IMG}",response\na,b,c\n'.encode(),
                                             "text/csv").run()
    assert not at.exception, at.exception
    assert any("missing column" in e.value for e in at.error)
    assert not any("](" in e.value for e in at.error)
    # the bad upload adds no markdown link anywhere: the page holds the same link-bearing elements as before it
    assert not _types_holding(at, b"http://evil") and _types_holding(at, b"](") == own_links


def test_page_refuses_too_many_models_with_a_message():
    at = _page()
    at.radio(key="hm_source").set_value("upload").run()
    rows = _csv(f"model {i},p,response {i}\n" for i in range(K.MAX_MODELS + 1))
    at.file_uploader(key="hm_upload").upload("many.csv", rows, "text/csv").run()
    assert not at.exception, at.exception
    assert any("101 models is more than the cap" in e.value for e in at.error)
    at.file_uploader(key="hm_upload").set_value(("long.csv", _csv(["m" * 4_000_000 + ",p,r\n", "b,p,s\n"]),
                                                 "text/csv")).run()
    assert not at.exception, at.exception
    assert any("4,000,000 characters; the limit is 100" in e.value for e in at.error)


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5, 6])
def test_each_tour_step_opens_from_its_link_and_sets_its_knobs(step):
    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["tour"] = str(step)
    at.switch_page(get_paper("hivemind").page).run()
    assert not at.exception, at.exception
    assert any(f"Step {step} of 6" in c.value for c in at.caption)
    if step == 4:
        assert at.slider(key="hm_threshold").value == 0.5
    if step == 6:
        assert at.radio(key="hm_source").value == "paste"


def test_the_picture_comes_first_then_the_ledger_and_the_lab_notebook_lists_what_was_tried():
    """Issue 44: our number beside the paper's and what to notice open the page; the full ledger is below."""
    import toymodels.hivemind as H

    at = _page()
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    notice = next(i for i, t in enumerate(texts) if t.startswith("**What to notice.**"))
    ledger = next(i for i, t in enumerate(texts) if "claims reproduced" in t)
    assert notice < ledger
    if "lm_metrics" in H.VIEWS:
        assert "pools reach 0.8" in texts[notice]
    claims = at.table[0].value  # the ledger: one row per claim
    assert "Claim" in claims.columns and len(claims) == len(H.CLAIMS)
    lab = open_tab("hivemind", "Lab notebook")
    assert not lab.exception, lab.exception
    tables = [d.value for d in lab.dataframe]
    assert any(len(t) == len(H.NOTEBOOK) and "outcome" in t.columns for t in tables)


def test_the_default_link_draws_only_the_open_tab():
    """A cold link draws the story, and the input and settings of "Your responses" (they feed the analyser's figure
    above the tabs); the Numbers tab's downloads, the sweeps' knobs and the lab notebook exist once their tab is open
    (issue 39: the browser drew every tab)."""
    import toymodels.hivemind as H

    at = _page()
    assert not at.exception, at.exception
    key, labels = page_tabs("hivemind")
    assert key == "hm_tabs" and labels[:2] == ("The story", "Your responses")
    assert at.selectbox(key="hm_prompt") is not None and at.slider(key="hm_threshold") is not None
    assert [b.key for b in at.get("download_button") if b.key in ("hm_dl_prompt", "hm_dl_pairs")] == []
    assert [w.key for w in at.slider if w.key == "hm_sweep_n"] == []
    assert not any(len(d.value) == len(H.NOTEBOOK) and "outcome" in d.value.columns for d in at.dataframe)
    numbers = open_tab("hivemind", "Numbers")
    assert not numbers.exception, numbers.exception
    assert {"hm_dl_prompt", "hm_dl_pairs"} <= {b.key for b in numbers.get("download_button")}
    assert [w.key for w in numbers.selectbox if w.key == "hm_prompt"] == []       # the story is closed there
    sweeps = open_tab("hivemind", "Sweeps")
    assert not sweeps.exception and sweeps.slider(key="hm_sweep_n") is not None


def test_the_page_opens_on_a_real_models_answers_shown_as_text():
    """With the real samples shipped, the page opens on SmolLM2's answers to one prompt (a table of text, never
    markup), and the prompt and decoding selectors redraw it; while the run is pending it says so."""
    import toymodels.hivemind as H

    at = _page()
    assert not at.exception, at.exception
    if "lm_metrics" not in H.VIEWS:
        assert any("registered and not yet shipped" in i.value for i in at.info)
        return
    assert "answers the same question" in at.subheader[0].value
    answers = at.dataframe[0].value  # the first table after the ledger: the answers
    assert list(answers.columns[:2]) == ["sample", "response"] and len(answers) == H.N_PER_POOL
    at.selectbox(key="hm_real_prompt").set_value("k01").run()
    assert not at.exception, at.exception
    if "min-p" in set(at.radio(key="hm_real_decoding").options):
        at.radio(key="hm_real_decoding").set_value("min-p").run()  # k01 (closed) is drawn under top-p only
        assert not at.exception, at.exception
        assert any("top-p only" in i.value for i in at.info)


@pytest.mark.parametrize("link, shown, notice", [("2", "2", False), ("999", "0", True)])
def test_the_prompt_up_close_is_kept_in_the_link(link, shown, notice):
    """The prompt picked for the heat map travels with a shared link (by its index); an index the data does not
    have opens the first prompt with the link notice."""
    from tests.apptest_helpers import open_home
    from toymodels.registry import get_paper

    at = open_home()
    at.query_params["hm_prompt"] = link
    at.switch_page(get_paper("hivemind").page).run()
    _embed_if_asked(at)
    assert not at.exception, at.exception
    assert at.selectbox(key="hm_prompt").value == shown
    assert any("link" in w.value for w in at.warning) == notice
