"""A guided tour whose every step is a link, and lesson links that hide what a lesson does not use."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import streamlit as st

from .links import link_notice


@dataclass(frozen=True)
class Step:
    """One step of a guided tour. ``text``: two or three sentences naming what to look at. ``settings``: the
    widget keys (and values) the step sets, so the view it describes is on screen and in the URL. ``look_at``:
    the number or mark that shows it. ``hide``: sections this step does not use (see ``shown``)."""

    title: str
    text: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    look_at: str = ""
    hide: tuple[str, ...] = ()


def _tour_step(n_steps: int) -> int | None:
    """The active step (1-based) from the link's ``tour`` value, or None."""
    raw = st.query_params.get("tour")
    try:
        step = int(raw) if raw is not None else None
    except ValueError:
        step = None
    return step if step is not None and 1 <= step <= n_steps else None


def _go(step: int | None) -> None:
    if step is None:
        st.query_params.pop("tour", None)
    else:
        st.query_params["tour"] = str(step)


def tour(steps: list[Step], key: str = "tour") -> Step | None:
    """A guided tour of the page: ``?tour=1`` opens step 1 ("Step 1 of N") with Back / Next; each step sets the
    knobs it needs (before the page's widgets are drawn, so call this above them), and its link opens it. Off
    the tour, one button starts it. Returns the active step."""
    n = len(steps)
    if not n:
        return None
    step = _tour_step(n)
    if step is None:
        if "tour" in st.query_params:
            link_notice([("tour", st.query_params.get("tour", ""))], f"not a step of this page's {n}-step tour")
            st.query_params.pop("tour", None)
        if st.button(f"Take the guided tour ({n} steps)", key=f"{key}-start", icon=":material/tour:"):
            step = 1
            _go(1)
        else:
            return None
    if st.session_state.get(f"_{key}_applied") != step:  # entering a step: set its knobs once
        for widget_key, value in steps[step - 1].settings.items():
            st.session_state[widget_key] = value
        st.session_state[f"_{key}_applied"] = step
    current = steps[step - 1]
    with st.container(border=True, key=f"{key}-box"):
        st.caption(f"Guided tour · Step {step} of {n}")
        st.markdown(f"**{current.title}.** {current.text}")
        if current.look_at:
            st.markdown(f":material/visibility: **Look at:** {current.look_at}")
        cols = st.columns([1, 1, 1, 3])
        back = cols[0].button("Back", key=f"{key}-back", disabled=step == 1, icon=":material/arrow_back:")
        nxt = cols[1].button("Next", key=f"{key}-next", disabled=step == n, icon=":material/arrow_forward:",
                             type="primary")
        leave = cols[2].button("End tour", key=f"{key}-end")
        cols[3].caption("Each step is a link: copy the address bar to share this step.")
    if back or nxt or leave:
        _go(None if leave else step + (1 if nxt else -1))
        st.session_state.pop(f"_{key}_applied", None) if leave else None
        st.rerun()
    return current


def shown(section: str, active: Step | None = None) -> bool:
    """False when a lesson link hides ``section`` (``?hide=sweep,upload``) or the active tour step does. Pages
    wrap optional sections: ``if ui.shown("sweep"): ...``."""
    hidden = {h.strip() for raw in st.query_params.get_all("hide") for h in raw.split(",")}
    return section not in hidden and not (active is not None and section in active.hide)
