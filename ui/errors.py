"""One error handler for pages and fragments, and ``plain`` for text from a link, an upload or an error."""
from __future__ import annotations

import functools
import logging
import os
from typing import Any, Callable

import streamlit as st

from toymodels.topic import BudgetError, InputError

_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()<>#+-.!|~:$=&"})


def plain(text: Any) -> str:
    """``text`` escaped for Streamlit's markdown, so it shows as the characters it is: every punctuation mark
    that can start markup gets a backslash (CommonMark escapes any ASCII punctuation), so no link, image,
    emphasis, heading, list, HTML, icon, colour, LaTeX or autolink (':' and '.' escaped) can form. Commas,
    slashes and quotes stay as they are. For text that comes from a link, an upload or an error quoting
    either."""
    return str(text).translate(_MARKUP)


def _show_errors() -> bool:
    """Tracebacks for developers and tests (AppTest, TOYMODELS_SHOW_ERRORS=1); one line for visitors."""
    from streamlit import config

    return bool(config.get_option("global.appTest")) or os.environ.get("TOYMODELS_SHOW_ERRORS") == "1"


def report_error(exc: BaseException, what: str = "") -> None:
    """The one handler for an error, caught by a page or not. The rule: settings over a budget
    (``BudgetError``) are a warning (the message says what to change); a bad input (``InputError``: a value, a
    file, a link) is an error with its own message (it is written for a person), after ``what`` ("Cannot use
    this file"); anything else one line for the visitor and the traceback in the server log."""
    lead = f"{what}: " if what else ""
    if isinstance(exc, BudgetError):
        st.warning(lead + plain(exc), icon=":material/speed:")
        return
    if isinstance(exc, InputError):
        st.error(lead + plain(exc), icon=":material/error:")
        return
    logging.getLogger("toymodels.app").error("page failed", exc_info=exc)
    st.error(f"Something went wrong on this page ({type(exc).__name__}). It has been logged; try other "
             "settings, or reload the page.", icon=":material/error:")


def fragment(fn: Callable | None = None, **kwargs):
    """``st.fragment`` whose uncaught errors go to ``report_error``. A fragment's own reruns do not pass through
    the page's handler in ``Home.py``, so without this a visitor would see Streamlit's raw error box."""

    def wrap(f: Callable) -> Callable:
        @functools.wraps(f)
        def body(*a, **k):
            if _show_errors():
                return f(*a, **k)
            try:
                return f(*a, **k)
            except Exception as exc:  # noqa: BLE001 - shown as one line; st.stop/rerun are not Exceptions
                report_error(exc)
                return None

        return st.fragment(body, **kwargs)

    return wrap(fn) if fn is not None else wrap
