"""Widgets whose link stores a stable id."""
from __future__ import annotations

from typing import Callable

import streamlit as st

from .links import link_warning


def choice(widget: Callable, label: str, options: "dict[str, str]", key: str, default: str | None = None,
           **kwargs) -> str:
    """A selectbox / radio / segmented control whose link stores a stable id, not its display label.

    ``options`` maps ids (what the URL and the code see) to labels (what a visitor reads). Streamlit's own
    ``bind="query-params"`` writes the *formatted* label into the URL, so a wording change breaks old links;
    this writes the id. A link with an unknown id opens the default with a notice. (For widgets bound with
    ``bind="query-params"``, Streamlit's front end drops an out-of-range value before the server sees it:
    the default opens, but no notice can be shown.)
    """
    ids = list(options)
    default = ids[0] if default is None else default
    if key not in st.session_state:  # the first run of this widget in the session: honour the link
        raw = st.query_params.get(key)
        if raw is not None and raw not in options:
            link_warning(key, raw, "is not one of the choices")
            raw = None
        st.session_state[key] = raw if raw is not None else default
    value = widget(label, ids, format_func=lambda i: options.get(i, i), key=key, **kwargs)
    if value == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = value
    return value
