"""The page's head and its ledger: ``paper_header``, ``shipped_verdict``, ``claims_table``, ``reproduce_panel``
and the device footer."""
from __future__ import annotations

from typing import Any, Iterable

import pandas as pd
import streamlit as st

from toymodels import shipped
from toymodels.registry import AWARD, RUNNER_UP, Paper, get_paper
from toymodels.topic import Verdict

from .links import _hand_over_to_router, drop_unusable_link_values, dropped_link_notice
from .memory import _MEMO


def paper_header(topic: str) -> Paper:
    """Title, authors, award badge, paper and code links, and the TL;DR. Returns the paper's metadata."""
    drop_unusable_link_values()  # before any widget of the page seeds itself from the link
    _hand_over_to_router()
    paper = get_paper(topic)
    st.title(paper.short_title)
    st.markdown(f"**{paper.title}**  \n{paper.authors}")
    label = {AWARD: "NeurIPS 2025 Best Paper", RUNNER_UP: "NeurIPS 2025 Runner-up"}.get(
        paper.award, f"{paper.award} · {paper.venue}")
    if paper.track != "Main track":
        label += f" · {paper.track}"
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):  # wraps on a narrow screen
        st.badge(label, icon=":material/emoji_events:", color="orange" if paper.award == AWARD else "gray")
        st.link_button("arXiv", paper.arxiv_url, icon=":material/description:", width="content",
                       help=f"arXiv {paper.arxiv}")
        if paper.code_url:
            st.link_button("Code", paper.code_url, icon=":material/code:", width="content", help=paper.code)
        else:
            st.caption("No official code released")
    st.markdown(f"**TL;DR.** {paper.tldr}")
    dropped_link_notice()
    return paper


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
    """The topic's verdict on its shipped views (memoised for the server)."""
    module = shipped.module_for(topic_name)
    return _MEMO.get(f"verdict:{topic_name}", lambda: shipped.shipped_verdict(module))


_STATUS = {"reproduced": "✔ reproduced", "not reproduced": "✘ not reproduced", "illustrated": "◐ illustrated",
           "not testable here": "○ not testable here"}


def claims_table(verdict: Verdict, key: str = "claims") -> None:
    """The topic's ledger, compact: one row per claim (claim, paper, ours, status), the paper's source beside
    its number; below, how each claim is tested (its rule, seeds and uncertainty, fitted parameters, and the
    commit that registered it). The first thing under a page's title."""
    rows = [{"Status": _STATUS.get(j.status, j.status) + (": precondition" if j.rule == "precondition" else ""),
             "Claim": j.statement, "Paper": f"{j.paper} ({j.source})",
             "Ours": j.ours + (f" ({j.uncertainty})" if j.uncertainty else ""), "Kind": j.kind}
            for j in verdict.claims]
    if not rows:
        return
    with st.container(key=f"{key}-ledger"):  # .st-key-claims-ledger: the browser test finds it above the fold
        st.markdown(f"**{verdict.summary}.** Our toy against the paper, claim by claim:")
        st.table(pd.DataFrame(rows), hide_index=True, border="horizontal",  # wraps: every word of a claim shows
                 alt=f"The ledger of claims: {verdict.summary}")
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
