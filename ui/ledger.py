"""The page's head and its ledger: ``paper_header``, ``shipped_verdict``, ``claims_table``, ``reproduce_panel``
and the device footer."""
from __future__ import annotations

import re
import threading
from typing import Any, Iterable

import pandas as pd
import streamlit as st

from toymodels import shipped
from toymodels.registry import AWARD, RUNNER_UP, Paper, get_paper
from toymodels.topic import Verdict

from .errors import plain
from .form import keep_knobs, read_link
from .links import _hand_over_to_router, drop_unusable_link_values, dropped_link_notice
from .memory import _MEMO

_HEADER = threading.local()  # this script run's header row (each run has its own thread)


def header_row():
    """The row under the title that holds the award, the links (and the tour's start button), or None; once
    per run (``paper_header`` sets it again)."""
    row, _HEADER.row = getattr(_HEADER, "row", None), None
    return row


def paper_header(topic: str) -> Paper:
    """Title; a row with the award badge, the paper and code links (and the tour's button, ``ui.tour``); the
    paper's title and authors in small type; the TL;DR; then the link's knobs (``read_link`` on the topic's
    ``KNOBS``), so a bad value gets its notice whichever tab opens. Returns the paper's metadata."""
    drop_unusable_link_values()  # before any widget of the page seeds itself from the link
    keep_knobs()                 # a knob in a closed tab keeps its value (and its link)
    _hand_over_to_router()
    st.session_state["_tour_compute"] = False  # until this page's tour says otherwise
    paper = get_paper(topic)
    st.title(paper.short_title)
    venue = re.search(r"\(([^()]+)\)\s*$", paper.venue)  # "... (ICML 2025)" -> "ICML 2025": a badge that fits
    label = {AWARD: "NeurIPS 2025 Best Paper", RUNNER_UP: "NeurIPS 2025 Runner-up"}.get(
        paper.award, f"{paper.award} · {venue.group(1) if venue else paper.venue}")
    if paper.track != "Main track":
        label += f" · {paper.track}"
    row = st.container(horizontal=True, vertical_alignment="center", gap="small", key="header-row")
    with row:  # wraps on a narrow screen
        st.badge(label, icon=":material/emoji_events:", color="orange" if paper.award == AWARD else "gray")
        st.link_button("arXiv", paper.arxiv_url, icon=":material/description:", width="content",
                       help=f"arXiv {paper.arxiv}")
        if paper.code_url:
            st.link_button("Code", paper.code_url, icon=":material/code:", width="content", help=paper.code)
        else:
            st.caption("No official code released")
    _HEADER.row = row
    st.caption(f"*{plain(paper.title)}* · {plain(paper.authors)}")
    st.markdown(f"**TL;DR.** {paper.tldr}")
    dropped_link_notice()
    module = paper.load()  # imported already: the page reads its KNOBS
    if getattr(module, "KNOBS", None) is not None:
        read_link(module.KNOBS)  # every knob of the link, and one notice for the values it cannot use, whatever tab
    return paper


def headline_claim(verdict: Verdict, notice: str = "", claim: str | None = None, ours_label: str = "Our toy") -> None:
    """``headline`` for one claim of the ledger (``claim``: its id; default the first headline claim): our number
    with its uncertainty and status, the paper's with its source."""
    rows = [j for j in verdict.claims if (j.id == claim if claim else j.kind == "headline")] or list(verdict.claims)
    if not rows:
        return
    j = rows[0]
    ours = j.ours + (f" ({j.uncertainty})" if j.uncertainty and len(j.uncertainty) < 40 else "")
    headline(ours, j.paper, j.source, notice, ours_label=f"{ours_label} · {status_word(j.status)}")


def headline(ours: str, paper: str, source: str = "", notice: str = "", ours_label: str = "Our toy",
             paper_label: str = "Paper", key: str = "headline-number") -> None:
    """Our headline number beside the paper's, and one line of what to notice: for the column beside the
    headline figure (keyed ``headline-number``: the browser test checks it is visible on opening)."""
    def big(text: str) -> str:  # a short number as a heading; a sentence as bold text
        return f"#### {text}" if len(text) <= 26 else f"**{text}**"

    with st.container(key=key, gap="small"):
        left, right = st.columns(2, gap="small")
        left.caption(ours_label)
        left.markdown(big(ours))
        right.caption(paper_label + (f" · {source}" if source else ""))
        right.markdown(big(paper))
        if notice:
            st.markdown(f"**What to notice.** {notice}")


def reproduce_panel(rows: Iterable[dict], verdict: Verdict | str | None = None,
                    reproduced: bool | None = None) -> None:
    """Our number beside the paper's.

    ``rows``: dicts with keys ``quantity``, ``ours``, ``paper`` and optional ``note``.
    ``verdict``: the library's ``Verdict`` (its summary is shown green when reproduced, amber when not).
    """
    if isinstance(verdict, Verdict):
        verdict, reproduced = verdict.summary, verdict.reproduced
    df = pd.DataFrame(list(rows))
    for col in ("quantity", "ours", "paper"):
        if col not in df:
            raise ValueError(f"reproduce_panel rows need a {col!r} key")
    df = df.rename(columns={"quantity": "Quantity", "ours": "Our toy", "paper": "Paper (reference)",
                            "note": "Note"})
    df["Our toy"] = df["Our toy"].map(_fmt)
    df["Paper (reference)"] = df["Paper (reference)"].map(_fmt)
    st.dataframe(df, hide_index=True, width="stretch")
    if verdict:
        if reproduced is True:
            st.success(verdict, icon=":material/check_circle:")
        elif reproduced is False:
            st.warning(verdict, icon=":material/warning:")
        else:
            st.caption(verdict)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        if x != x:
            return "n/a"
        return f"{x:.3g}" if abs(x) < 1e4 else f"{x:,.0f}"
    return "—" if x is None else str(x)


def shipped_verdict(topic_name: str) -> tuple[Verdict, bool]:
    """The topic's verdict on its shipped views, as the build judged it (``shipped.indexed_verdict``: no claim is
    judged on a page load; memoised for the server)."""
    module = shipped.module_for(topic_name)
    return _MEMO.get(f"verdict:{topic_name}", lambda: shipped.indexed_verdict(module))


_STATUS = {"reproduced": "✔ reproduced", "not reproduced": "✘ not reproduced", "illustrated": "◐ illustrated",
           "not testable here": "○ not testable here"}
_COLOR = {"reproduced": "green", "not reproduced": "red", "illustrated": "orange", "not testable here": "gray"}
#: the four status words, each in a few words (the ledger strip's legend; ``toymodels.glossary.STATUS`` has them
#: in full, as the legend's hover text and in the page's glossary)
STATUS_WORDS = {
    "reproduced": "its test, committed before the run, passed",
    "not reproduced": "that test failed",
    "illustrated": "shown, but tuned on these numbers",
    "not testable here": "the toy cannot decide it",
}
LEDGER_ANCHOR = "ledger"


def status_word(status: str) -> str:
    """A status as coloured markdown with its symbol (``:green[✔ reproduced]``)."""
    return f":{_COLOR.get(status, 'gray')}[{_STATUS.get(status, status)}]"


def status_legend() -> str:
    """The four status words with their meanings, in one line of markdown; each word's full definition is its
    hover text (a link to the page's glossary)."""
    from toymodels.glossary import STATUS

    def word(s: str) -> str:
        title = STATUS[s].replace('"', "'")
        return f":{_COLOR[s]}[[{_STATUS[s]}](#glossary \"{title}\")]"

    return " · ".join(f"{word(s)}: {meaning}" for s, meaning in STATUS_WORDS.items())


def ledger_strip(verdict: Verdict, key: str = "ledger-strip") -> None:
    """The ledger in two lines, under the headline figure: the headline claim's status, the counts of the
    four statuses, a link to the full ledger further down (``claims_table``), and what the four words mean."""
    heads = [j for j in verdict.claims if j.kind == "headline"] or list(verdict.claims[:1])
    if not heads:
        return
    counts = {s: sum(j.status == s for j in verdict.claims) for s in _STATUS}
    with st.container(border=True, key=key, gap="small"):
        head = " ".join(f"{status_word(j.status)}" for j in heads)
        which = "Headline claim" if len(heads) == 1 else f"Headline claims ({len(heads)})"
        st.markdown(f"**{which}:** {head} · **All {len(verdict.claims)} claims:** "
                    + " · ".join(f"{n} {status_word(s)}" for s, n in counts.items() if n)
                    + f" · [full ledger ↓](#{LEDGER_ANCHOR})")
        st.caption(status_legend())


def claims_table(verdict: Verdict, key: str = "claims", heading: str | None = None, height: int = 560) -> None:
    """The topic's ledger: one row per claim (status, claim, paper, ours, kind), the paper's source beside its
    number; below, how each claim is tested (its rule, seeds and uncertainty, fitted parameters, and the commit
    that registered it). ``heading``: a subheader above it, the anchor ``ledger_strip`` links to. The table
    scrolls inside its frame: sideways on a narrow screen (its words wrap on a wide one), and downwards past
    ``height`` pixels when the ledger is long (a page of 29 claims stays a page)."""
    qualifier = {"precondition": ": precondition", "exact": ": exact check"}
    rows = [{"Status": _STATUS.get(j.status, j.status) + qualifier.get(j.rule, ""),
             "Claim": j.statement, "Paper": f"{j.paper} ({j.source})",
             "Ours": j.ours + (f" ({j.uncertainty})" if j.uncertainty else ""), "Kind": j.kind}
            for j in verdict.claims]
    if not rows:
        return
    if heading:
        st.subheader(heading, anchor=LEDGER_ANCHOR)
    st.html(f"<style>.st-key-{key}-ledger [data-testid='stTable'] {{overflow-x: auto;}}"
            f" .st-key-{key}-ledger table {{min-width: 44rem;}}</style>")
    with st.container(key=f"{key}-ledger"):  # .st-key-claims-ledger: the browser test finds it
        st.markdown(f"**{verdict.summary}.** Our toy against the paper, claim by claim:")
        frame = st.container(height=height if len(rows) > 8 else "content", border=len(rows) > 8)
        frame.table(pd.DataFrame(rows), hide_index=True, border="horizontal",  # wraps: every word of a claim shows
                    alt=f"The ledger of claims: {verdict.summary}")
        st.caption(status_legend())
    with st.expander("How each claim is tested", icon=":material/rule:"):
        for j in verdict.claims:
            seeds = f"{j.seeds} seed(s)" + (f", {j.uncertainty}" if j.uncertainty else "") if j.seeds else "no run"
            fitted = f" Chosen on these numbers: {', '.join(j.fitted)}." if j.fitted else ""
            registered = f" Test registered in {j.registered}." if j.registered else ""
            decided = f"  \nDecided by the {j.rule} rule: {j.reason}." if j.rule and j.reason else ""
            st.markdown(f"**{j.id}** · {j.kind} · {j.source} · **{_STATUS.get(j.status, j.status)}**  \n"
                        f"Test: {j.test} ({seeds}).{fitted}{registered}{decided}" + (f"  \n{j.note}" if j.note
                                                                                       else ""))


def device_caption() -> None:
    """A small footer naming where the toy runs."""
    import sys

    if "torch" in sys.modules:  # a model ran (or was loaded) in this server: name its device
        from toymodels.device import describe

        where = describe()
    else:  # nothing here needed torch: importing it just for this line would cost a cold page 2-4 s
        where = "the CPU (numpy; no torch model ran for this view)"
    st.caption(f"Computed by `toymodels` on {where}. Same seed, same numbers on the CPU.")


def page_end(verdict: Verdict, paper: Paper, snippet: str, cli: str | None = None, shown: dict | None = None,
             device: bool = True) -> None:
    """The end of every paper page: the full ledger (the anchor ``ledger_strip`` links to), the page's glossary,
    Cite / Code for this view / Present (``ui.share``), and where it ran (``device``: False for a page that adds
    lines of its own before that footer)."""
    from .cite import share
    from .glossary import glossary

    claims_table(verdict, heading="The ledger, claim by claim")
    glossary(paper.topic, verdict=verdict)
    share(paper, snippet, cli=cli, shown=shown)
    if device:
        device_caption()


def lab_table(rows: Iterable[dict], title: str = "Every configuration tried", alt: str | None = None) -> None:
    """A lab notebook (``M.LAB_NOTEBOOK``: one dict an entry) as a wrapping table under its subheader: every word
    of each entry shows."""
    st.subheader(title)
    st.table(pd.DataFrame(list(rows)), hide_index=True, border="horizontal", alt=alt or title)


def caveats(items: Iterable[str], title: str = "Caveats") -> None:
    """A topic's caveats (``CAVEATS`` in its ``notebook.py``: one markdown sentence or more each) as a list."""
    st.subheader(title)
    st.markdown("\n".join(f"- {c}" for c in items))
