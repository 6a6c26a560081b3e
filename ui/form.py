"""Forms drawn from a topic's ``KNOBS`` (``toymodels.knobs``): the widgets, bound to the URL by the knobs' stable ids,
and the page's one notice for link values it cannot use. Pages type no range and parse no URL."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Sequence

import streamlit as st

from toymodels.knobs import Knob, Knobs
from toymodels.topic import Each, Range

from .links import link_notice, link_warning


def read_link(table: Knobs) -> None:
    """Once per session and table, the link's value of every knob the table offers (one loop, as TF Playground's
    ``deserializeState``): a value its knob parses and offers sets the widget's state; the others are ignored
    and named in one notice. ``ui.form`` calls it; a page that wants the notice at its top calls it there."""
    flag = "_knobs_read:" + ",".join(sorted(r.id for r in table.on_page()))[:300]
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    bad = []
    for knob in table.on_page():
        if knob.id not in st.query_params:
            continue
        raws = st.query_params.get_all(knob.id)
        try:
            st.session_state[knob.id] = knob.parse(raws)
        except (ValueError, TypeError):
            bad += [(knob.id, raw) for raw in raws[:1]]
    link_notice(bad)


def default_of(knob: Knob, base: Any) -> Any:
    """A knob's default: the field of ``base`` it names (a dataclass or a dict), else the row's own default."""
    if dataclasses.is_dataclass(base) and hasattr(base, knob.name):
        return getattr(base, knob.name)
    if isinstance(base, dict) and knob.name in base:
        return base[knob.name]
    return knob.default


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _kind(knob: Knob, choices: tuple | None) -> str:
    if knob.widget:
        return knob.widget
    if isinstance(knob.bound, Each):
        return "multiselect"
    if choices is not None:
        if all(isinstance(c, bool) for c in choices):
            return "toggle"
        if all(isinstance(c, (int, float)) for c in choices):
            return "select_slider"
        return "radio" if len(choices) <= 3 else "selectbox"
    return "slider" if knob.step() else "number"


def _draw(knob: Knob, where, on_change: Callable | None = None, disabled: bool = False) -> Any:
    choices = knob.choices()
    kind = _kind(knob, choices)
    common = dict(key=knob.id, help=knob.help or None, disabled=disabled,
                  **({"on_change": on_change} if on_change else {}))
    if kind == "text":
        return where.text_area(knob.label, max_chars=knob.bound.max_chars, placeholder=knob.help or None, **common)
    if kind == "toggle":
        return where.toggle(knob.label, **common)
    if kind == "multiselect":
        return where.multiselect(knob.label, list(choices), format_func=knob.show, max_selections=knob.bound.max_len,
                                 **common)
    if kind == "select_slider":
        return where.select_slider(knob.label, list(choices), format_func=knob.show, **common)
    if kind == "radio":
        return where.radio(knob.label, list(choices), format_func=knob.show,
                           horizontal=all(len(knob.show(c)) <= 24 for c in choices), **common)
    if kind == "selectbox":
        return where.selectbox(knob.label, list(choices), format_func=knob.show, **common)
    if kind == "segmented":
        return where.segmented_control(knob.label, list(choices), format_func=knob.show, **common)
    item: Range = knob.item
    num = int if item.integer else float
    lo, hi = knob.limits()
    if kind in ("slider", "range"):
        return where.slider(knob.label, num(lo), num(hi), step=num(knob.step() or 1), **common)
    return where.number_input(knob.label, num(lo), num(hi), step=num(knob.step() or 1), **common)


def knob(table: Knobs, key: str, default: Any = None, where=None, hi: float | None = None,
         on_change: Callable | None = None, disabled: bool = False) -> Any:
    """One knob's widget (``table[key]``), bound to the URL by its id; returns its value (``default``: the
    row's own when None). ``hi``: a lower top for a range whose end the data sets (the last iteration of a run, the
    layers of a model). ``on_change``: the widget's callback; ``disabled``: shown, not settable."""
    row = table[key]
    default = row.default if default is None else default
    if hi is not None and isinstance(row.item, Range) and hi < row.limits()[1]:
        offer = tuple(v for v in row.offer if v <= hi) if isinstance(row.offer, tuple) else row.offer
        row = dataclasses.replace(row, span=(row.limits()[0], hi), offer=offer)
        default = tuple(min(v, hi) for v in default) if isinstance(default, (tuple, list)) else min(default, hi)
        table = Knobs([row, *(r for r in table.values() if r.key != key)])
    return form(table, {row.name: default}, [key], columns=1, where=where, on_change=on_change,
                disabled=disabled)[row.name]


def form(table: Knobs, base: Any = None, keys: Sequence[str] | None = None, columns: int | Sequence = 4,
         submit: str | None = None, key: str | None = None, where=None,
         on_change: Callable | None = None, disabled: bool = False) -> Any:
    """Widgets for the knobs ``keys`` of ``table`` (by default every row a page offers, in order), ``columns`` to a
    row, bound to the URL by their ids; returns ``base`` with the knobs' values (a dataclass: ``replace``; a dict:
    updated; None: a dict by knob name).

    The link is read once per session for the whole table (a value no knob offers: one notice); after the
    widgets, each knob's value goes into the link by its id, left out when it is the default (``base``'s field).
    ``submit``: the widgets sit in an ``st.form`` applied by a button of that text, or of ``submit(result)`` (its
    expected time, say); ``key``: the form's key, ``submitted(key)`` whether it was pressed.
    ``on_change``: called when a widget changes (when the form is applied, with ``submit``)."""
    read_link(table)
    rows = [table[k] for k in keys] if keys is not None else table.on_page()
    defaults = {r.id: default_of(r, base) for r in rows}
    for r in rows:  # "End tour" puts a knob the tour set back to this
        remember_default(r.id, _plain(defaults[r.id]) if isinstance(r.bound, Each) else defaults[r.id])
    for r in rows:
        current = st.session_state.get(r.id)
        if current is None or not r.offered(_plain(current) if isinstance(r.bound, Each) else current):
            st.session_state[r.id] = _plain(defaults[r.id]) if isinstance(r.bound, Each) else defaults[r.id]
    host = where if where is not None else st
    box_key = key or f"form-{rows[0].id}"
    box = host.form(box_key, border=False) if submit else host.container()
    with box:
        cols = box.columns(columns) if not isinstance(columns, int) or columns > 1 else [box]
        values = {}
        for i, r in enumerate(rows):
            value = _draw(r, cols[i % len(cols)], None if submit else on_change, disabled)
            values[r.name] = tuple(value) if isinstance(defaults[r.id], tuple) else value
        result = dataclasses.replace(base, **values) if dataclasses.is_dataclass(base) else {**(base or {}), **values}
        if submit:
            st.form_submit_button(submit(result) if callable(submit) else submit, icon=":material/tune:",
                                  on_click=on_change, key=f"{box_key}-submit")
    _write_link(rows, defaults)
    return result


def submitted(key: str) -> bool:
    """Whether the submit button of ``ui.form(..., submit=..., key=key)`` was pressed on this run."""
    return bool(st.session_state.get(f"{key}-submit"))


def _write_link(rows: Iterable[Knob], defaults: dict) -> None:
    """Each knob's value into the link by its id (TF Playground's ``serialize``), the default left out."""
    for r in rows:
        value = st.session_state.get(r.id)
        default = defaults[r.id]
        if value is None or _plain(value) == _plain(default):
            st.query_params.pop(r.id, None)
        else:
            st.query_params[r.id] = r.text(value)


def keep_knobs() -> None:
    """Keep every knob's value across runs that do not draw it: Streamlit forgets the state of a widget a run
    leaves out (a knob in a tab that is not open, since tabs draw only when open), and ``form`` would then reset
    it to its default and drop it from the link. Set again through the Session State API, the value stays
    (Streamlit's own advice). Call it at the top of a page, before any widget (``paper_header`` does)."""
    for key in st.session_state.get("_knob_defaults", {}):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def remember_default(key: str, value) -> None:
    """Note the value a knob opens on, for this session: "End tour" puts a knob the tour set back to it (a
    widget's own default is not always the knob's: ``choice`` seeds its widget from the link)."""
    st.session_state.setdefault("_knob_defaults", {})[key] = value


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
    remember_default(key, default)
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
