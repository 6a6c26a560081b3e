"""A guided tour that takes the reader to what each step talks about, and lesson links that hide what a lesson
does not use.

A step is a link (``?tour=N``). Entering it sets its knobs (and the tab it names), runs what they need when the
step asks (``compute``), scrolls its ``target`` into view and outlines it. The tour's box floats over the page's
bottom edge, so Back / Next stay in view wherever the step scrolled to. A step may first ask the reader to
predict (``predict``): its knobs change and its text shows only after "Reveal". "End tour" puts back what the
knobs were before the tour (a tour link: the defaults).
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Mapping

import streamlit as st

from .links import link_notice

_ABSENT = "\x00absent"  # a knob that had no value before the tour (its widget was not drawn yet): the default


@dataclass(frozen=True)
class Step:
    """One step of a guided tour.

    ``text``: two or three sentences naming what to look at. ``settings``: the widget keys (and values) the step
    sets, so the view it describes is on screen and in the URL; a tab opens the same way (the key of a keyed
    ``st.tabs(..., on_change="rerun")`` and the tab's label). ``look_at``: the number or mark that shows it.
    ``target``: the key of the container the step is about (``ui.chart`` keys each chart ``chart-<name>``): the
    step scrolls to it and outlines it. ``compute``: run what the step's settings need (computations declared
    under ``TOUR_SECONDS``) instead of waiting for their button. ``predict``: a question asked before the step's
    settings apply and its text shows, with ``choices`` to pick from. ``hide``: sections this step does not use
    (see ``shown``)."""

    title: str
    text: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    look_at: str = ""
    hide: tuple[str, ...] = ()
    target: str = ""
    compute: bool = False
    predict: str = ""
    choices: tuple[str, ...] = ()


#: a tour step that asks to compute runs computations expected to take at most this long
TOUR_SECONDS = 30.0


def _tour_step(n_steps: int) -> int | None:
    """The active step (1-based) from the link's ``tour`` value, or None."""
    raw = st.query_params.get("tour")
    try:
        step = int(raw) if raw is not None else None
    except ValueError:
        step = None
    return step if step is not None and 1 <= step <= n_steps else None


def _go(step: int | None, key: str) -> None:
    if step is None:
        st.query_params.pop("tour", None)
    else:
        st.query_params["tour"] = str(step)
    st.session_state[f"_{key}_moves"] = st.session_state.get(f"_{key}_moves", 0) + 1  # scroll again


def _apply(step: Step) -> None:
    for widget_key, value in step.settings.items():
        st.session_state[widget_key] = value


def _restore(snapshot: Mapping[str, Any], link: Mapping[str, list] | None = None) -> None:
    """Put the knobs back as they were before the tour: every knob a step set, and every knob the link holds now
    (a preset a step chose sets knobs of its own), to its value before the tour, or else to its default: the
    knob table's (``ui.form`` notes it), else by removing it from the session and the link (a page that writes
    its own link then draws its default), else, for a widget bound to the link, the default its widget declares.
    A knob of the knob table also gets back the link it had before the tour (``link``: the link then), since a
    knob in a tab that is not open is not drawn, so it cannot rewrite its own link. Link values that are no
    knob's (``hide``, a lesson link's) stay."""
    defaults = st.session_state.get("_knob_defaults", {})
    for widget_key in list(snapshot) + [k for k in st.query_params if k != "tour" and k not in snapshot]:
        value = snapshot.get(widget_key, _ABSENT)
        if widget_key in defaults and link is not None:
            if widget_key in link:
                st.query_params[widget_key] = link[widget_key]
            else:
                st.query_params.pop(widget_key, None)
        if value != _ABSENT:
            st.session_state[widget_key] = value
        elif widget_key in defaults:
            st.session_state[widget_key] = defaults[widget_key]
        elif widget_key in st.session_state or widget_key in snapshot:
            try:
                st.query_params.pop(widget_key, None)
                st.session_state.pop(widget_key, None)
            except Exception:  # noqa: BLE001 - StreamlitAPIException: bound to a widget; ask the widget
                default = _widget_default(widget_key)
                if default is not _ABSENT:
                    st.session_state[widget_key] = default


def _widget_default(widget_key: str) -> Any:
    """The value a widget drawn in this session opens on (its default), or ``_ABSENT``: asked of the widget's own
    deserializer, as Streamlit does for a new widget (one Streamlit internal; if it moves, the knob is only
    removed from the session, and a widget bound to the link keeps the link's value)."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        state = get_session_state()._state
        wid = state._key_id_mapper.get_id_from_key(widget_key, None)
        meta = state._new_widget_state.widget_metadata.get(wid) if wid else None
        return _ABSENT if meta is None else meta.deserializer(None)
    except Exception:  # noqa: BLE001 - private API
        return _ABSENT


def tour_computes(seconds: float | None) -> bool:
    """True when the active tour step asks to run a computation of this expected cost (``Step.compute``)."""
    return bool(st.session_state.get("_tour_compute")) and seconds is not None and seconds <= TOUR_SECONDS


def _style(target: str) -> None:
    """The floating box and the outline of the step's target (CSS only: sent to the page's event container,
    it takes no room)."""
    dark = getattr(getattr(st.context, "theme", None), "type", None) == "dark"
    bg, fg, accent = ("#0E1117", "#FAFAFA", "#56B4E9") if dark else ("#FFFFFF", "#31333F", "#0072B2")
    outline = (f".st-key-{target} {{outline: 3px solid {accent}; outline-offset: 6px; border-radius: 0.5rem;"
               f" scroll-margin-top: 4.5rem;}}") if target else ""
    st.html(f"""<style>
.st-key-tour-box {{position: fixed; z-index: 999990; right: 1.25rem; bottom: 1.25rem;
  width: min(30rem, calc(100vw - 2.5rem)); max-height: 42vh; overflow-y: auto; background: {bg}; color: {fg};
  box-shadow: 0 4px 24px rgba(0,0,0,.28);
  border: 2px solid {accent} !important; padding: 0.75rem 1rem !important;}}
@media (max-width: 640px) {{ .st-key-tour-box {{right: 0.5rem; left: 0.5rem; bottom: 0.5rem; width: auto;
  max-height: 38vh;}} }}
.st-key-tour-nav {{position: sticky; top: -0.75rem; z-index: 1; background: {bg}; padding-top: 0.25rem;}}
{outline}
</style>""")


_SCROLL_JS = """<script>
(() => {
  // Scroll the step's target to the top of the view once the page has stopped moving, then keep it there for
  // a few seconds while charts above it finish drawing, unless the reader scrolls first.
  const token = %(token)s, sel = %(sel)s;
  if (window.__toyTourToken === token) return;
  window.__toyTourToken = token; window.__toyTourTarget = sel;  // (the browser test reads the target)
  if (sel === null) return;
  let last = null, still = 0, polls = 0, anchor = null, cancelled = false;
  const cancel = () => { cancelled = true; };
  ['wheel', 'touchmove', 'keydown'].forEach((e) => window.addEventListener(e, cancel, {once: true, passive: true}));
  const free = () => { const b = document.querySelector('.st-key-tour-box');  // the view the box leaves free
                       return b ? b.getBoundingClientRect().top : window.innerHeight; };
  const shown = (r) => r.top >= 56 && Math.min(r.bottom, free()) - r.top >= Math.min(r.height, 200);
  const go = (el) => {  // in view already (its top and 200 px of it above the box): leave the page where it is
    if (anchor !== null || !shown(el.getBoundingClientRect())) el.scrollIntoView({block: 'start'});
    anchor = el.getBoundingClientRect().top;
  };
  const tick = () => {
    if (cancelled || window.__toyTourToken !== token) return;
    const el = document.querySelector(sel);
    if (el) {
      const y = el.getBoundingClientRect().top;
      if (anchor === null) {
        const running = document.querySelector('[data-test-script-state="running"]');
        still = (last !== null && Math.abs(y - last) < 1 && !running) ? still + 1 : 0;
        last = y;
        if (still >= 3 || polls > 500) { go(el); polls = 0; }  // a step that computes: up to a minute
      } else if (Math.abs(y - anchor) > 30) { go(el); }  // something above it grew or shrank
    }
    if (++polls < (anchor === null ? 520 : 70)) setTimeout(tick, 120);
  };
  setTimeout(tick, 120);
})();
</script>"""


def tour(steps: list[Step], key: str = "tour") -> Step | None:
    """A guided tour of the page: ``?tour=1`` opens step 1 ("Step 1 of N") with Back / Next in a box that
    floats over the page's bottom edge; each step sets the knobs it needs (before the page's widgets are drawn,
    so call this above them), scrolls to its target and outlines it, and its link opens it. Off the tour, one
    button starts it. "End tour" restores the knobs. Returns the active step."""
    n = len(steps)
    if not n:
        return None
    step = _tour_step(n)
    scope = f"_{key}_{zlib.crc32('|'.join(s.title for s in steps).encode()):08x}"  # this page's tour
    snap_key, applied_key, seen_key = f"{scope}_before", f"{scope}_applied", f"{scope}_revealed"
    link_key = f"{scope}_link"
    if step is None:
        st.session_state["_tour_compute"] = False
        if "tour" in st.query_params:
            link_notice([("tour", st.query_params.get("tour", ""))], f"not a step of this page's {n}-step tour")
            st.query_params.pop("tour", None)
        if st.session_state.get(snap_key) is not None:  # left by the address bar or a link: still restore
            _restore(st.session_state.pop(snap_key), st.session_state.pop(link_key, None))
            st.session_state.pop(applied_key, None)
        from .ledger import header_row

        where = header_row() or st.container()
        if where.button(f"Take the guided tour ({n} steps)", key=f"{key}-start", icon=":material/tour:"):
            step = 1
            _go(1, key)
        else:
            return None
    current = steps[step - 1]
    if st.session_state.get(snap_key) is None:  # the tour starts: remember the knobs as they are
        names = {k for s in steps for k in s.settings}
        st.session_state[snap_key] = {k: st.session_state[k] if k in st.session_state else _ABSENT for k in names}
        st.session_state[link_key] = {k: st.query_params.get_all(k) for k in st.query_params if k != "tour"}
    revealed = not current.predict or st.session_state.get(seen_key, {}).get(step) is not None
    if st.session_state.get(applied_key) != (step, revealed):  # entering a step (or revealing it): set its knobs
        if revealed:
            _apply(current)
        st.session_state[applied_key] = (step, revealed)
    st.session_state["_tour_compute"] = bool(current.compute and revealed)
    _style(current.target)
    with st.container(border=True, key=f"{key}-box", gap="small"):
        with st.container(horizontal=True, gap="small", vertical_alignment="center", key=f"{key}-nav"):
            back = st.button("Back", key=f"{key}-back", disabled=step == 1, icon=":material/arrow_back:")
            nxt = st.button("Next", key=f"{key}-next", disabled=step == n, icon=":material/arrow_forward:",
                            type="primary" if revealed else "secondary")
            leave = st.button("End tour", key=f"{key}-end")
            st.caption(f"Guided tour · Step {step} of {n}")
        if revealed:
            guess = st.session_state.get(seen_key, {}).get(step)
            st.markdown(f"**{current.title}.** " + (f"You predicted: *{guess}*. " if guess else "") + current.text)
            if current.look_at:
                st.markdown(f":material/visibility: **Look at:** {current.look_at}")
        else:
            st.markdown(f"**{current.title}.** **Predict first:** {current.predict}")
            guess = st.radio("Your prediction", current.choices, index=None, key=f"{key}-guess-{step}",
                             label_visibility="collapsed", horizontal=True) if current.choices else None
            if st.button("Reveal", key=f"{key}-reveal", icon=":material/visibility:", type="primary",
                         disabled=bool(current.choices) and guess is None):
                st.session_state[seen_key] = {**st.session_state.get(seen_key, {}), step: guess or ""}
                _go(step, key)
                st.rerun()
        token = f"{scope}:{step}:{int(revealed)}:{st.session_state.get(f'_{key}_moves', 0)}"
        sel = f".st-key-{current.target}" if current.target else None
        st.html(_SCROLL_JS % {"token": json.dumps(token), "sel": json.dumps(sel)}, unsafe_allow_javascript=True,
                width="content")
    if back or nxt or leave:
        _go(None if leave else step + (1 if nxt else -1), key)
        if leave:
            _restore(st.session_state.pop(snap_key, None) or {}, st.session_state.pop(link_key, None))
            for k in (applied_key, seen_key):
                st.session_state.pop(k, None)
            st.session_state["_tour_compute"] = False
        st.rerun()
    return current


def shown(section: str, active: Step | None = None) -> bool:
    """False when a lesson link hides ``section`` (``?hide=sweep,upload``) or the active tour step does. Pages
    wrap optional sections: ``if ui.shown("sweep"): ...``."""
    hidden = {h.strip() for raw in st.query_params.get_all("hide") for h in raw.split(",")}
    return section not in hidden and not (active is not None and section in active.hide)
