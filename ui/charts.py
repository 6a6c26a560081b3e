"""Charts and tables for slides: the shared Altair theme and palette, ``chart`` (SVG, 2x PNG and CSV downloads),
``download_csv`` and ``csv_safe``."""
from __future__ import annotations

from typing import Callable

import altair as alt
import pandas as pd
import streamlit as st

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
    """A download button for a table, as CSV (formula-safe: see ``csv_safe``). ``df`` may be a function that
    returns the table: it is then built only when the button is clicked (a large table costs nothing on a
    rerun)."""
    data = (lambda: csv_safe(df()).to_csv(index=False).encode()) if callable(df) else \
        csv_safe(df).to_csv(index=False).encode()
    st.download_button(label, data, file_name=filename, mime="text/csv", key=key or f"dl-{filename}",
                       icon=":material/download:", on_click="ignore" if callable(df) else "rerun")


def _export_spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite spec for a slide: a white background, a fixed width where it stretched."""
    spec = chart.to_dict()
    spec.setdefault("background", "white")
    return spec


def chart(fig: alt.TopLevelMixin, name: str, data: pd.DataFrame | None = None, alt_text: str = "",
          key: str | None = None, **kwargs) -> None:
    """An Altair chart with its downloads for slides: SVG, PNG at twice the size (rendered offline by
    vl-convert, only when clicked) and the data as CSV (``data``, else the chart's own table when it has one).
    ``alt_text``: what the chart shows, for screen readers (its Vega-Lite description)."""
    if alt_text:
        fig = fig.properties(description=alt_text)
    st.altair_chart(fig, width="stretch", **kwargs)
    key = key or f"chart-{name}"

    def svg() -> bytes:
        import vl_convert as vlc

        return vlc.vegalite_to_svg(_export_spec(fig)).encode()

    def png() -> bytes:
        import vl_convert as vlc

        return vlc.vegalite_to_png(_export_spec(fig), scale=2)

    table = data if data is not None else (fig.data if isinstance(getattr(fig, "data", None), pd.DataFrame) else None)
    with st.container(horizontal=True, gap="small", key=f"{key}-downloads"):
        st.download_button("SVG", svg, file_name=f"{name}.svg", mime="image/svg+xml", key=f"{key}-svg",
                           icon=":material/download:", on_click="ignore", type="tertiary")
        st.download_button("PNG (2x)", png, file_name=f"{name}.png", mime="image/png", key=f"{key}-png",
                           icon=":material/download:", on_click="ignore", type="tertiary")
        if table is not None:
            st.download_button("CSV", csv_safe(table).to_csv(index=False).encode(), file_name=f"{name}.csv",
                               mime="text/csv", key=f"{key}-csv", icon=":material/download:", on_click="ignore",
                               type="tertiary")
