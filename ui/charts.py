"""Charts and tables for slides: the shared Altair theme and palette, ``chart`` (SVG, 2x PNG and CSV downloads),
``download_csv`` and ``csv_safe``."""
from __future__ import annotations

from typing import Callable

import altair as alt
import pandas as pd
import streamlit as st

from .errors import plain

# Okabe and Ito's colour-blind-safe palette (blue, orange, bluish green, vermillion, sky blue, reddish purple,
# yellow, grey), readable on the light and the dark theme alike. NEUTRAL: reference lines and annotations (a
# mid grey: visible on both backgrounds; never near-black or near-white).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#999999"]
NEUTRAL = "#8C8C8C"


@alt.theme.register("toymodels", enable=True)
def _theme() -> alt.theme.ThemeConfig:
    """Sizes and the palette only: grid, text and background colours come from Streamlit's active theme (light
    or dark), so every chart follows the theme switch."""
    return {
        "config": {
            "view": {"continuousWidth": 420, "continuousHeight": 300, "stroke": None},
            "range": {"category": PALETTE},
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
            "legend": {"labelFontSize": 12, "titleFontSize": 12, "orient": "bottom"},
            "title": {"fontSize": 14, "anchor": "start", "fontWeight": "normal"},
            "line": {"strokeWidth": 2.2},
            "point": {"size": 50, "filled": True},
        }
    }


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` in which no text cell can run as a spreadsheet formula: a cell starting with
    ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading apostrophe (OWASP's advice).
    Numbers stay numbers (a negative number is not text)."""
    out = pd.DataFrame(df).copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: "'" + v if isinstance(v, str) and v[:1] in ("=", "+", "-", "@",
                                                                                         "\t", "\r") else v)
    out.columns = [("'" + c if isinstance(c, str) and c[:1] in ("=", "+", "-", "@", "\t", "\r") else c)
                   for c in out.columns]
    return out


def download_csv(df: pd.DataFrame | Callable[[], pd.DataFrame], filename: str, label: str = "Download CSV",
                 key: str | None = None) -> None:
    """A download button for a table, as CSV (formula-safe: see ``csv_safe``), made only when the button is
    clicked (a page load or a rerun costs nothing). ``df`` may be the table or a function that returns it."""
    table = df  # built when the button is clicked, never on a page load (issue #38: nothing computes unasked)
    st.download_button(label, lambda: csv_safe(table() if callable(table) else table).to_csv(index=False).encode(),
                       file_name=filename, mime="text/csv", key=key or f"dl-{filename}", icon=":material/download:",
                       on_click="ignore")


#: the width, in pixels, of a full-width chart in an exported figure: the page's content width at 1400 px with
#: the sidebar collapsed (1240 px; 940 px with it open), so an export is at least as wide as the chart on a
#: 1400 px screen. A chart in a column exports at its share of it (``span``).
SLIDE_WIDTH = 1240
#: the gap between two columns, in pixels (Streamlit's "small" gap)
_GAP = 16


def _span_here() -> float:
    """The share of the page's width a chart drawn here gets: 1 at the top level, 1/2 inside columns, 1/4
    inside columns inside columns (Streamlit keeps no column weights on the server; a page that knows better
    passes ``span``)."""
    try:
        from streamlit.delta_generator_singletons import context_dg_stack

        depth = sum(t == "column" for t in context_dg_stack.get()[-1]._ancestor_block_types)
    except Exception:  # noqa: BLE001 - private API moved: assume the top level (the widest export)
        depth = 0
    return 1.0 / 2 ** depth


def _fit_width(spec: dict, width: int) -> None:
    """Give every view of ``spec`` that stretched on screen (no numeric width) the width it has on a slide;
    concatenations share it out. A view with a numeric width keeps it."""
    if "hconcat" in spec:
        parts = spec["hconcat"]
        for part in parts:
            _fit_width(part, max(80, (width - _GAP * (len(parts) - 1)) // len(parts)))
    elif "vconcat" in spec:
        for part in spec["vconcat"]:
            _fit_width(part, width)
    elif "concat" in spec:
        cols = spec.get("columns") or len(spec["concat"])
        for part in spec["concat"]:
            _fit_width(part, max(80, (width - _GAP * (cols - 1)) // cols))
    elif "facet" in spec or "repeat" in spec:
        inner = spec.get("spec", {})
        cols = spec.get("columns") or 1
        _fit_width(inner, max(80, (width - _GAP * (cols - 1)) // cols))
    elif not isinstance(spec.get("width"), (int, float)):
        spec["width"] = width


def _export_spec(chart: alt.TopLevelMixin, width: int | None = None) -> dict:
    """The chart's Vega-Lite spec for a slide: a white background and the width it has on screen or wider
    (``width``, default ``SLIDE_WIDTH``), legends and padding included, as Streamlit draws it (autosize "fit"),
    so a categorical axis gets the screen's band width, not its minimum step. Any number of rows (Altair's
    5,000-row guard is for notebooks: the page already draws them)."""
    width = int(width or SLIDE_WIDTH)
    with alt.data_transformers.disable_max_rows():
        spec = chart.to_dict()
    spec.setdefault("background", "white")
    _fit_width(spec, width)
    if not any(k in spec for k in ("hconcat", "vconcat", "concat", "facet", "repeat")):
        spec["autosize"] = {"type": "fit", "contains": "padding"}
    return spec


def export_svg(chart: alt.TopLevelMixin, width: int | None = None) -> str:
    """The chart as it goes on a slide (see ``_export_spec``), as SVG, rendered offline by vl-convert."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(_export_spec(chart, width))


def _title_text(title) -> str:
    """A chart's title as one line of text ("" when it has none): a string, lines, or a TitleParams' text."""
    if title is alt.Undefined or title is None:
        return ""
    text = getattr(title, "text", title)
    if isinstance(text, (list, tuple)):
        return " · ".join(str(t) for t in text if t)
    return "" if text is alt.Undefined else str(text)


def chart(fig: alt.TopLevelMixin, name: str, data: pd.DataFrame | None = None, alt_text: str = "",
          key: str | None = None, span: float | None = None, **kwargs) -> None:
    """An Altair chart with its downloads for slides: SVG, PNG at twice the size (rendered offline by
    vl-convert, only when clicked) and the data as CSV (``data``, else the chart's own table when it has one).
    ``alt_text``: what the chart shows, for screen readers (its Vega-Lite description). ``span``: the share of
    the page's width the chart takes (default: guessed from the columns it sits in); the export is
    ``span x SLIDE_WIDTH`` wide, at least the chart's width on a 1400 px screen. The chart's title is drawn as text
    above it on screen (it wraps on a phone; a chart title is cut short) and inside the exported figure. The chart
    and its buttons sit in one container keyed ``chart-<name>`` (a tour step's ``target``)."""
    if alt_text:
        fig = fig.properties(description=alt_text)
    key = key or f"chart-{name}"
    title = _title_text(getattr(fig, "title", alt.Undefined))
    shown = fig.properties(title="") if title else fig  # on screen the title is text above the chart: it wraps
    width = round((span if span is not None else _span_here()) * SLIDE_WIDTH)

    def svg() -> bytes:
        return export_svg(fig, width).encode()

    def png() -> bytes:
        import vl_convert as vlc

        return vlc.vegalite_to_png(_export_spec(fig, width), scale=2)

    table = data if data is not None else (fig.data if isinstance(getattr(fig, "data", None), pd.DataFrame) else None)
    with st.container(key=key, gap="small"):
        if title:
            st.markdown(f"**{plain(title)}**")
        st.altair_chart(shown, width="stretch", **kwargs)
        with st.container(horizontal=True, gap="small", key=f"{key}-downloads"):
            st.download_button("SVG", svg, file_name=f"{name}.svg", mime="image/svg+xml", key=f"{key}-svg",
                               icon=":material/download:", on_click="ignore", type="tertiary",
                               help=f"For a slide: {width} px wide, as on screen")
            st.download_button("PNG (2x)", png, file_name=f"{name}.png", mime="image/png", key=f"{key}-png",
                               icon=":material/download:", on_click="ignore", type="tertiary")
            if table is not None:  # the CSV is made when clicked, like the SVG and the PNG (not on a page load)
                st.download_button("CSV", lambda: csv_safe(table).to_csv(index=False).encode(),
                                   file_name=f"{name}.csv", mime="text/csv", key=f"{key}-csv",
                                   icon=":material/download:", on_click="ignore", type="tertiary")
