"""NeurIPS 2025 Best Papers Explorer: the router and the home view.

``st.navigation`` decides which pages exist (the ``pages/`` folder is not auto-discovered
once it is called); every paper in ``toymodels.registry`` whose page file exists is routed.
"""
import logging
import os
import re

import streamlit as st

from toymodels.registry import AWARD, MORE, PAPERS, RUNNER_UP, read_verdicts

APP_TITLE = "NeurIPS 2025 Best Papers Explorer"
_BADGE = {True: ("Reproduced", "green", ":material/check_circle:"),
          False: ("Not reproduced", "orange", ":material/warning:"),
          None: ("Partly / not tested", "gray", ":material/help:")}


def _plain(text: str) -> str:
    """Our own verdict text as literal markdown (Home stays light: it does not import ``ui``), with its
    subscripts and exponents set as such: ``τ_mem ∝ n^0.93`` reads τ<sub>mem</sub> ∝ n<sup>0.93</sup>."""
    out = "".join("\\" + c if c in "\\`*_{}[]()<>#+-.!|~:$=&" else c for c in text)
    out = re.sub(r"(?<![\\\w])([^\W\d_])\\_([^\W\d_]+)", r"\1<sub>\2</sub>", out)  # τ\_mem -> τ<sub>mem</sub>
    return re.sub(r"(?<=[\w)])\^((?:\\-|−)?\d+(?:\\\.\d+)?)", r"<sup>\1</sup>", out)  # n^0\.93 -> n<sup>0\.93</sup>


SECTIONS = ((AWARD, "Best Paper awards", None), (RUNNER_UP, "Runners-up", None),
            (MORE, MORE, "Not NeurIPS 2025 award papers: small models of 2025 that capture a phenomenon exactly "
                         "and run in seconds on a laptop. Each card names the paper's own venue."))


def home() -> None:
    st.session_state.pop("_link_dropped", None)  # Home has no settings to fall back from
    st.title(APP_TITLE)
    st.markdown(
        "Seven papers won awards at NeurIPS 2025: four **Best Paper** awards and three **runners-up**. "
        "Each page here runs a small, faithful toy model of one paper's central idea, computed live by the "
        "`toymodels` package on this machine, and puts our number beside the paper's own. "
        "Move the knobs, sweep a parameter, download the numbers, share the link. Beyond the award papers, a few "
        "more solvable toy models of 2025 close the list."
    )
    with st.expander("Start here", expanded=True, icon=":material/explore:"):
        left, right = st.columns(2)
        left.markdown(
            "**New to these ideas?** Go in this order:\n"
            "1. *Transductive online learning*: a game you can play, with exact answers.\n"
            "2. *RLVR & reasoning*: one estimator (pass@k) and one surprising crossover.\n"
            "3. *Superposition & scaling*: arrows in 2-D that explain a scaling law.\n"
            "4. *Diffusion memorization*: watch a model generalise, then memorise.\n\n"
            "Each page opens on its headline figure, computed in advance, with our number beside the paper's; "
            "the knobs come after, and a guided tour takes you through it."
        )
        right.markdown(
            "**Practitioner?** Every page puts our number beside the paper's, then a ledger of the paper's "
            "claims, each with its pre-registered test and its status; figures download as SVG and PNG, tables "
            "as CSV, and each page gives the code that rebuilds its view. The headline experiments run from the "
            "command line:\n"
            "```\npython -m toymodels list\npython -m toymodels reproduce rlvr --quick\n```\n"
            "The last line printed is JSON with the headline metrics. Settings live in the URL, so a link "
            "reopens the same view."
        )
    verdicts = read_verdicts()  # written by `python -m toymodels precompute`, checked by `precompute --check`
    for award, heading, intro in SECTIONS:
        group = [p for p in PAPERS if p.award == award]
        if not group:
            continue
        st.subheader(heading)
        if intro:
            st.caption(intro)
        cols = st.columns(2)
        for i, paper in enumerate(group):
            with cols[i % 2].container(border=True, key=f"card-{paper.topic}"):
                badge = {AWARD: "Best Paper", RUNNER_UP: "Runner-up"}.get(award, paper.venue)
                st.badge(badge + (f" · {paper.track}" if paper.track != "Main track" else ""),
                         color={AWARD: "orange", RUNNER_UP: "gray"}.get(award, "blue"),
                         icon=":material/emoji_events:" if award in (AWARD, RUNNER_UP) else ":material/science:")
                st.markdown(f"#### {paper.short_title}")
                st.markdown(f"*{paper.title}*  \n<small>{paper.authors}</small>", unsafe_allow_html=True)
                st.markdown(_plain(paper.claim), unsafe_allow_html=True)
                v = verdicts.get(paper.topic)
                if v:
                    text, color, icon = _BADGE.get(v.get("reproduced"), _BADGE[None])
                    left, right = st.columns(2)
                    for col, label, key in ((left, "Our toy", "ours"), (right, "Paper", "paper")):
                        col.caption(label)  # whole words, never truncated like a metric's value
                        col.markdown(f"**{_plain(str(v.get(key) or 'n/a'))}**", unsafe_allow_html=True)
                    claims = v.get("claims") or []
                    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                        st.badge(text, color=color, icon=icon)
                        if claims:
                            done = sum(c["status"] == "reproduced" for c in claims)
                            st.caption(f"{done} of {len(claims)} claims reproduced")
                st.markdown(f"**Paper's number:** {_plain(paper.headline)}", unsafe_allow_html=True)
                links = f"[arXiv {paper.arxiv}]({paper.arxiv_url})"
                links += f" · [official code]({paper.code_url})" if paper.code_url else " · no official code"
                st.markdown(links)
                if paper.has_page:
                    st.page_link(paper.page, label="Open the toy", icon=":material/arrow_forward:")
                else:
                    st.caption("Toy page coming soon.")
    st.divider()
    st.caption("Numbers marked *paper* are quoted from the papers as references; every other number is computed "
               "by our code. Source: the `toymodels` package in this repository.")


sections = {"Overview": [st.Page(home, title="Home", icon=":material/home:", default=True)]}
for award, section in ((AWARD, "Best Papers"), (RUNNER_UP, "Runners-up"), (MORE, "More toy models")):
    pages = [st.Page(p.page, title=p.short_title, icon=p.icon, url_path=p.topic)
             for p in PAPERS if p.award == award and p.has_page]
    if pages:
        sections[section] = pages
# The favicon before the router: set first, it stops the router from making each page's material icon the
# favicon, which the browser would fetch from a font CDN (an emoji is drawn locally: the app works offline).
# A presenter link (``?present=1``) opens with the sidebar folded away.
st.set_page_config(page_icon="🏆", layout="wide",
                   initial_sidebar_state="collapsed" if "present" in st.query_params else "auto")
page = st.navigation(sections)
# The browser tab names the page (set after navigation, which knows which page is open).
st.set_page_config(page_title=APP_TITLE if page.title == "Home" else f"{page.title} · {APP_TITLE}")


#: seconds the warm-up waits after the first script run: the browser draws the first page meanwhile (1-4 s on a
#: small server), and imports started at once took the same CPU (Home 3.1 -> 2.5 s, a paper page 7.1 -> 6.0 s,
#: cold, 2-core machine at load 6; issue 39). A visitor who reads the first page that long finds the rest warm.
WARMUP_DELAY_S = 6.0


def _warm_up() -> None:
    """Import what the paper pages need (ui, numpy, pandas, altair, the topic modules) in a background thread,
    once per server process, ``WARMUP_DELAY_S`` after the first page's script run (the browser draws it
    meanwhile): the second page finds them loaded. A page that needs a module before the thread has imported it
    waits for that import (Python's import lock), never imports twice. Off under AppTest and with
    TOYMODELS_WARMUP=0."""
    import importlib
    import threading
    import time

    from streamlit import config

    if config.get_option("global.appTest") or os.environ.get("TOYMODELS_WARMUP", "1") == "0":
        return

    @st.cache_resource(show_spinner=False)
    def start() -> threading.Thread:
        def work() -> None:
            time.sleep(WARMUP_DELAY_S)
            for name in ["ui"] + [p.import_name for p in PAPERS if p.has_page and p.import_name]:
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 - the page that needs it will raise it where it can be seen
                    logging.getLogger("toymodels.app").exception("warm-up import of %s failed", name)

        thread = threading.Thread(target=work, name="toymodels-warm-up", daemon=True)
        thread.start()
        return thread

    start()


def run_page() -> None:
    """Run the page; an unexpected error shows visitors a short message, never a traceback (Community Cloud
    forces tracebacks on for uncaught errors): ``ui.report_error``, the handler fragments use too. The traceback
    goes to the server log. Developers opt in to see it with TOYMODELS_SHOW_ERRORS=1; tests (AppTest) see the
    exception itself."""
    from streamlit import config

    if config.get_option("global.appTest") or os.environ.get("TOYMODELS_SHOW_ERRORS") == "1":
        page.run()
        return
    try:
        page.run()
    except Exception as exc:  # noqa: BLE001 - the visitor sees one line; the log keeps the rest
        try:
            from ui import report_error
        except Exception:  # noqa: BLE001 - ui itself failed to import: say it plainly
            logging.getLogger("toymodels.app").exception("page %s failed", page.title)
            st.error(f"Something went wrong on this page ({type(exc).__name__}).", icon=":material/error:")
        else:
            report_error(exc)


try:
    run_page()
finally:  # also after st.stop() or a rerun
    _warm_up()
