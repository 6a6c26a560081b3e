"""Link hygiene: values in a shared link that no widget can take are dropped before the page runs and named once;
a cold server's first deep link is handed to ``Home.py``'s router. Reaches into two Streamlit internals, each
guarded."""
from __future__ import annotations

import math
from typing import Iterable

import streamlit as st


def _hand_over_to_router() -> None:
    """Make sure the page runs inside ``Home.py``'s router.

    Streamlit runs the first script run of a fresh server in its legacy ``pages/`` mode, until some session
    has called ``st.navigation``. A deep link as the very first request of a cold server (a shared link to a
    sleeping hosted demo) then runs the page file alone: no router, no page config, the legacy sidebar.
    Leave legacy mode and rerun, so Home.py runs and its router resolves the same URL. This reads one
    Streamlit internal; if that ever moves, the guard does nothing and the page still renders.
    """
    try:
        from streamlit import config
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - depends on the Streamlit version
        return
    if config.get_option("global.appTest"):  # AppTest resets this flag on every run; a rerun would eat clicks
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


def link_warning(key: str, value: str, why: str) -> None:
    """Tell the visitor that a value in their link was not used (the default is shown instead)."""
    link_notice([(key, value)], why.removeprefix("is ").removeprefix("are "))


def link_notice(items: Iterable[tuple[str, str]], why: str = "not values this page offers") -> None:
    """Tell the visitor which ``key=value`` pairs of their link were not used. The values are shown as plain
    text (a code block), never as markdown: a crafted link cannot draw a link, an image or anything else."""
    items = [(str(k), str(v)) for k, v in items]
    if not items:
        return
    st.warning(f"Some values in this link were not used ({why}); showing the default for those:",
               icon=":material/link_off:")
    st.code("\n".join(f"{k[:40]}={v if len(v) <= 60 else v[:57] + '...'}" for k, v in items[:10]), language=None,
            wrap_lines=True)


# A link's value longer than this is no setting of any page (the longest, a transductive class, is ~17,400).
MAX_LINK_VALUE = 20_000


def _unusable(raw: str) -> bool:
    """A link value no widget can take: a number that is not finite or too large for any knob (inf, nan, 1e309,
    20-digit integers: Streamlit's own reader raises OverflowError on some), or text too long to be a setting."""
    if len(raw) > MAX_LINK_VALUE:
        return True
    try:
        x = float(raw)
    except ValueError:
        return False
    return not math.isfinite(x) or abs(x) > 1e15


def drop_unusable_link_values() -> None:
    """Remove such values from the link before the page's widgets read it (``paper_header`` calls this
    first), and tell the visitor which (``dropped_link_notice``).

    Bound widgets seed themselves from the link's *initial* values, which Streamlit keeps apart from
    ``st.query_params``; both are filtered (the initial ones through one Streamlit internal: if that moves, the
    test ``test_link_values_no_widget_can_take_are_dropped`` fails)."""
    dropped: list[tuple[str, str]] = []

    def filtered(params: dict, setter, deleter) -> None:
        for key in list(params):
            values = params[key] if isinstance(params[key], list) else [params[key]]
            keep = [v for v in values if not _unusable(v)]
            if len(keep) != len(values):
                dropped.extend((key, v) for v in values if _unusable(v) and (key, v) not in dropped)
                setter(key, keep) if keep else deleter(key)

    filtered({k: st.query_params.get_all(k) for k in st.query_params},
             lambda k, v: st.query_params.__setitem__(k, v), st.query_params.__delitem__)
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        with get_session_state().query_params() as qp:
            initial = qp._initial_query_params
            filtered(initial, initial.__setitem__, initial.__delitem__)
    except (ImportError, AttributeError, TypeError):
        pass
    if dropped:
        st.session_state["_link_dropped"] = dropped


def dropped_link_notice() -> None:
    """The values ``drop_unusable_link_values`` dropped from this session's link before the page ran (numbers
    no widget can take: inf, nan, 1e309, overflowing integers; values too long to be settings), shown once."""
    dropped = st.session_state.pop("_link_dropped", None)
    if dropped:
        link_notice(dropped, "no setting on this page can take them")


def in_link(*keys: str) -> bool:
    """Whether the page's link sets any of ``keys`` (a section a shared link configures opens expanded)."""
    return any(k in st.query_params for k in keys)
