"""Shared Streamlit helpers for every page: header, claim box, reproduce panel, progress, downloads, theme.

Pages stay thin: widgets, one call to ``compute`` (cached in memory, on disk and in the
shipped result store), charts and text. Nothing here does science; that lives in ``toymodels``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from toymodels import shipped, store, topic
from toymodels.registry import AWARD, RUNNER_UP, Paper, get_paper
from toymodels.topic import InputError, Verdict

# At most this many heavy computations run at once on a hosted server; other visitors queue (and see it).
# One visitor holds at most one of them: a second computation of the same visitor waits for the first.
SLOTS = 2
# A computation that is not stored starts by itself only when its declared estimate is at most this; anything
# longer (or of unknown cost) waits for a button that states its cost, so a link never starts a long run.
AUTO_SECONDS = 3.0
_HEAVY = threading.BoundedSemaphore(SLOTS)
_QUEUE_LOCK = threading.Lock()
_WAITING = 0  # computations waiting for a slot, server-wide


def _allocator_policy() -> None:
    """glibc keeps freed mid-size blocks on its heap: a server's resident memory was 1.0-2.9x the arrays alive,
    and up to 1.35 GB freed by a finished computation stayed resident (bench/bench_memory.py). Serve blocks of
    1 MiB and up from mmap (returned to the system when freed), so resident memory follows the arrays; the cost
    measured there is 1.1-1.5x CPU on the allocation-heavy trainings. Linux/glibc only; elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD


def _release_freed_memory() -> None:
    """Give the heap's free pages back to the system after a computation (glibc ``malloc_trim``): after a deep-CRL
    training the server kept 705 MB resident, 148 MB after trimming."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)


_allocator_policy()


def _thread_policy() -> None:
    """Threads per compute slot = cores / slots, set once for the server process (never by the library).
    Called before the first computation, so a page that only reads stored results never imports torch."""
    from toymodels.threads import set_thread_policy

    set_thread_policy(max(1, (os.cpu_count() or 1) // SLOTS))


# --------------------------------------------------------------------------- chart theme

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


def use_theme() -> None:
    """Enable the shared chart theme (idempotent; importing ``ui`` already does this)."""
    alt.theme.enable("toymodels")


# --------------------------------------------------------------------------- page furniture


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


def claim_box(paper: Paper, extra: str | None = None) -> None:
    """The paper's headline claim and number, labelled as the paper's."""
    text = f"**The claim.** {paper.claim}\n\n**Paper's number:** {paper.headline}"
    if extra:
        text += f"\n\n{extra}"
    st.info(text, icon=":material/format_quote:")


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


_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()<>#+-.!|~:$=&"})


def plain(text: Any) -> str:
    """``text`` escaped for Streamlit's markdown, so it shows as the characters it is: every punctuation mark
    that can start markup gets a backslash (CommonMark escapes any ASCII punctuation), so no link, image,
    emphasis, heading, list, HTML, icon, colour, LaTeX or autolink (':' and '.' escaped) can form. Commas,
    slashes and quotes stay as they are. For text that comes from a link, an upload or an error quoting
    either."""
    return str(text).translate(_MARKUP)


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


# --------------------------------------------------------------------------- computing


def approx_bytes(obj: Any, _depth: int = 0) -> int:
    """A result's memory, roughly: arrays and tables by their buffers, containers by their items."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(index=True, deep=True).sum())
    if isinstance(obj, str):
        return len(obj) + 49
    if _depth > 8:
        return 64
    if isinstance(obj, dict):
        return 64 + sum(approx_bytes(k, _depth + 1) + approx_bytes(v, _depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return 56 + sum(approx_bytes(v, _depth + 1) for v in obj)
    return 32


class _Memo:
    """A thread-safe in-memory LRU of results, shared by every session of the server, bounded by count and
    by bytes (``approx_bytes``: a hosted server has 2.7 GB for everything).

    (Not ``st.cache_resource``: a cached Streamlit function records the elements it
    touches and replays them, which would replay our progress bar into other sessions.)
    One lock per key, so two visitors asking for the same thing compute it once.
    """

    def __init__(self, size: int = 96, max_bytes: int = 384 << 20):
        self.size, self.max_bytes = size, max_bytes
        self.items, self.sizes, self.locks, self.lock = OrderedDict(), {}, {}, threading.Lock()

    def peek(self, key: str) -> tuple[bool, Any]:
        """``(True, value)`` when ``key`` is held, without computing or waiting for a computation."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return True, self.items[key]
        return False, None

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            key_lock = self.locks.setdefault(key, threading.Lock())
        with key_lock:
            with self.lock:
                if key in self.items:
                    return self.items[key]
            value = make()
            nbytes = approx_bytes(value)
            with self.lock:
                if nbytes <= self.max_bytes:  # a result larger than the whole memo is served, not kept
                    self.items[key], self.sizes[key] = value, nbytes
                while self.items and (len(self.items) > self.size or sum(self.sizes.values()) > self.max_bytes):
                    old, _ = self.items.popitem(last=False)
                    self.sizes.pop(old, None)
                    self.locks.pop(old, None)
            return value


_MEMO = _Memo()


def _visitor() -> str:
    """Who is asking: the visitor's IP address when the server sees a remote one, else the browser session
    (every local session, as in a rehearsal, counts as its own visitor)."""
    ip = None
    with contextlib.suppress(Exception):
        ip = st.context.ip_address
    if ip and ip not in ("127.0.0.1", "::1", "localhost"):
        return f"ip:{ip}"
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return f"session:{ctx.session_id}" if ctx is not None else "session:none"


_VISITOR_GUARD = threading.Lock()
_VISITORS: dict[str, list] = {}  # visitor -> [lock held while one of their computations runs, users]


@contextlib.contextmanager
def _one_per_visitor(slot):
    """Hold the visitor's own lock: one visitor runs at most one computation (so holds at most one slot)."""
    who = _visitor()
    with _VISITOR_GUARD:
        entry = _VISITORS.setdefault(who, [threading.Lock(), 0])
        entry[1] += 1
    try:
        if not entry[0].acquire(blocking=False):
            slot.info("Your other computation is still running; this one starts when it has finished.",
                      icon=":material/hourglass_top:")
            entry[0].acquire()
            slot.empty()
        try:
            yield
        finally:
            entry[0].release()
    finally:
        with _VISITOR_GUARD:
            entry[1] -= 1
            if entry[1] == 0:
                _VISITORS.pop(who, None)


def _seconds_text(seconds: float | None) -> str:
    if seconds is None:
        return "not precomputed"
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    return f"about {seconds / 60:.0f} min"


def compute(fn: Callable, *args, label: str = "Computing…", run: bool | None = None,
            seconds: float | None = None, cost_text: str | None = None, button: str | None = None,
            **kwargs) -> Any:
    """``fn(*args, **kwargs)`` once per distinct arguments, with a progress bar; returns a read-only result,
    or None when it is not computed (see ``run``).

    Looks in memory (shared by every visitor), then the shipped result store, then the disk cache: none of
    these waits, and a stored result is returned whatever ``run`` says. Only a real computation waits for one
    of ``SLOTS`` (and for the visitor's own earlier computation); while it waits the visitor sees how many runs
    are ahead. ``run``: True computes (a button was pressed); False never computes (returns None unless
    stored); None computes by itself only when ``seconds`` (the expected time) is at most ``AUTO_SECONDS``,
    and otherwise shows a button that states the cost (``cost_text``, else "about N s") and computes when it
    is pressed (its text: ``button``, else ``label``; the progress bar says ``label``): a link alone never
    starts a long computation. The result is frozen (``topic.freeze``): shared, so read-only. An out-of-bounds
    argument raises ``InputError`` before anything runs (see ``guard``).
    """
    key = store.call_key(fn, args, kwargs)
    hit, value = _MEMO.peek(key)
    if hit:
        return value
    hit, value = store.lookup(fn, *args, **kwargs)
    if hit:
        return _MEMO.get(key, lambda: topic.freeze(value))
    if run is None:
        if seconds is not None and seconds <= AUTO_SECONDS:
            run = True
        else:
            if getattr(fn, "bounds", None) is not None:  # out of bounds: say so now, not after a button press
                _check_only(fn, args, kwargs)
            text = f"{(button or label).rstrip('…. ')} ({cost_text or _seconds_text(seconds)})"
            run = st.button(text, key=f"run-{key}", icon=":material/play_arrow:", type="primary")
    if not run:
        return None
    slot = st.empty()
    bar = None

    def progress(fraction: float, message: str = "") -> None:
        nonlocal bar
        text = f"{label} {message}".strip()
        if bar is None:
            bar = slot.progress(0.0, text=text)
        bar.progress(min(1.0, max(0.0, fraction)), text=text)

    def make():
        hit, value = store.lookup(fn, *args, **kwargs)
        if hit:
            return topic.freeze(value)
        global _WAITING
        with _one_per_visitor(slot):
            if not _HEAVY.acquire(blocking=False):
                with _QUEUE_LOCK:
                    _WAITING += 1
                    ahead = _WAITING - 1
                slot.info(f"Waiting for a free compute slot: {SLOTS} run(s) in progress"
                          + (f", {ahead} more waiting ahead of you" if ahead else "") + ". This page updates "
                          "when yours starts.", icon=":material/hourglass_top:")
                try:
                    _HEAVY.acquire()
                finally:
                    with _QUEUE_LOCK:
                        _WAITING -= 1
                slot.empty()
            try:
                _thread_policy()
                return topic.freeze(store._compute_and_store(fn, args, dict(kwargs), progress))
            finally:
                _HEAVY.release()
                _release_freed_memory()

    try:
        return _MEMO.get(key, make)
    finally:
        slot.empty()


def _check_only(fn: Callable, args: tuple, kwargs: dict) -> None:
    """Run a ``@bounded`` function's checks (bounds and budget) without calling it: raises InputError."""
    import inspect

    sig = inspect.signature(fn.__wrapped__)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise InputError(f"{fn.__name__}: {exc}") from None
    bound.apply_defaults()
    for name, spec in fn.bounds.items():
        spec.check(name, bound.arguments[name])
    if getattr(fn, "budget", None) is not None:
        fn.budget(**bound.arguments)


def view(module, name: str) -> Any:
    """A topic's declared default view (``module.VIEWS[name]``), read-only.

    Fresh in the shipped store (or already computed): returned at once, without importing a lazily declared
    function (so a page of shipped results never imports torch). Otherwise a view declared cheap (``seconds``
    at most ``AUTO_SECONDS``) is computed; a long one is never started by a page load: a stale shipped bundle is
    shown with a note and a button to recompute it, and a missing or damaged one shows the button and stops
    the page (or fragment) there."""
    v = module.VIEWS[name]
    memo = f"view:{module.TOPIC}/{name}"
    hit, value = _MEMO.peek(memo)
    if hit:
        return value
    hit, value = shipped.stored_view(module, name, resolve=False)
    if hit:
        return _MEMO.get(memo, lambda: topic.freeze(value))
    try:
        kwargs = shipped.view_arguments(module, name)
        fn = v.resolve(getattr(module, "__name__", ""))
    except topic.NotStored:
        fn = kwargs = None
    if fn is not None:
        cheap = v.seconds is not None and v.seconds <= AUTO_SECONDS
        result = compute(fn, label=v.label, run=True if cheap else False, **kwargs)
        if result is not None:
            return result
    old = store.load_shipped(module.TOPIC, name)
    what = f"The precomputed view `{name}`"
    if old is not None:
        st.caption(f"{what} was computed by an earlier version of the code; its numbers may differ from what "
                   "the code computes now.")
    else:
        st.warning(f"{what} is not shipped with this copy of the app (or is damaged).", icon=":material/info:")
    pressed = fn is not None and st.button(f"Recompute it ({_seconds_text(v.seconds)})", key=f"view-{name}",
                                           icon=":material/play_arrow:")
    if pressed:
        return compute(fn, label=v.label, run=True, **kwargs)
    if old is not None:
        return topic.freeze(old)
    st.stop()


@contextlib.contextmanager
def guard():
    """Show an ``InputError`` as a short message on the page instead of a traceback, and stop the page."""
    try:
        yield
    except InputError as exc:
        st.error(plain(exc), icon=":material/error:")
        st.stop()


def shipped_verdict(topic_name: str) -> tuple[Verdict, bool]:
    """The topic's verdict on its shipped views (memoised for the server)."""
    module = shipped.module_for(topic_name)
    return _MEMO.get(f"verdict:{topic_name}", lambda: shipped.shipped_verdict(module))


_BADGE = {True: ("Reproduced", "green", ":material/check_circle:"),
          False: ("Not reproduced", "orange", ":material/warning:"),
          None: ("Partly / not tested", "gray", ":material/help:")}


def result_strip(verdict: Verdict, caption: str | None = None) -> None:
    """Our number beside the paper's, with the library's verdict: the first thing under the claim."""
    # Metric values never truncate here: they wrap, a little smaller than Streamlit's default.
    st.html("<style>.st-key-result-strip [data-testid='stMetricValue'] , .st-key-result-strip "
            "[data-testid='stMetricValue'] * {white-space: normal !important; overflow: visible !important; "
            "text-overflow: clip !important; font-size: 1.55rem; line-height: 1.25;}</style>")
    with st.container(border=True, key="result-strip"):
        cols = st.columns([1.4, 1.4, 2.2], vertical_alignment="top")  # room for the numbers at 800 px
        cols[0].metric("Our toy", verdict.ours)
        cols[1].metric("Paper", verdict.paper)
        text, color, icon = _BADGE[verdict.reproduced]
        with cols[2]:
            st.badge(text, color=color, icon=icon)
            st.markdown(verdict.summary)
            if caption:
                st.caption(caption)


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


# --------------------------------------------------------------------------- links with stable values


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


# --------------------------------------------------------------------------- errors


def _show_errors() -> bool:
    """Tracebacks for developers and tests (AppTest, TOYMODELS_SHOW_ERRORS=1); one line for visitors."""
    from streamlit import config

    return bool(config.get_option("global.appTest")) or os.environ.get("TOYMODELS_SHOW_ERRORS") == "1"


def report_error(exc: BaseException) -> None:
    """The one handler for an error a page or a fragment did not catch: a bad input's own message (it is
    written for a person), anything else one line for the visitor and the traceback in the server log."""
    if isinstance(exc, InputError):
        st.error(plain(exc), icon=":material/error:")
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


# =========================================================================== the lecturer's kit
# A guided tour whose every step is a link, lesson links that hide what a lesson does not use, figures for slides
# (SVG, 2x PNG, CSV), a citation block, and the code that rebuilds what is on screen.


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


def app_version() -> tuple[str, str | None]:
    """``(version, commit)`` of this app: the package version and the git commit the code was served from
    (read from ``.git`` without running git; None when there is no repository, as in an installed package)."""
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    try:
        ver = version("toymodels")
    except PackageNotFoundError:
        ver = "0"
    git = Path(__file__).resolve().parent / ".git"
    commit = None
    try:
        head = (git / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:]
            path = git / ref
            if path.is_file():
                commit = path.read_text().strip()
            elif (git / "packed-refs").is_file():
                for line in (git / "packed-refs").read_text().splitlines():
                    if line.endswith(" " + ref):
                        commit = line.split()[0]
        else:
            commit = head
    except OSError:
        commit = None
    return ver, (commit[:12] if commit else None)


def bibtex(paper: Paper) -> str:
    """BibTeX for the paper (from the registry) and for this app (version and commit)."""
    surname = paper.authors.split(",")[0].split()[-1].lower()
    first_word = next(w for w in paper.title.lower().split() if w.isalpha() and len(w) > 3)
    authors = " and ".join(a.strip() for a in paper.authors.replace(" and ", ", ").split(","))
    venue, year = paper.venue, paper.year
    ver, commit = app_version()
    return (f"@inproceedings{{{surname}{year}{first_word},\n  title     = {{{paper.title}}},\n"
            f"  author    = {{{authors}}},\n  booktitle = {{{venue}}},\n  year      = {{{year}}},\n"
            f"  eprint    = {{{paper.arxiv}}},\n  archivePrefix = {{arXiv}},\n"
            f"  url       = {{{paper.arxiv_url}}}\n}}\n\n"
            f"@software{{toymodels_explorer,\n  title   = {{NeurIPS 2025 Best Papers Explorer: toy models, "
            f"claim by claim}},\n  version = {{{ver}}},\n  note    = {{commit {commit or 'unknown'}}},\n"
            f"  year    = {{2026}}\n}}\n")


def cite(paper: Paper) -> None:
    """A "Cite" block: BibTeX for the paper and for this app."""
    with st.expander("Cite", icon=":material/format_quote:"):
        st.code(bibtex(paper), language="bibtex")
        st.caption("Every number marked *paper* names its figure or table; every other number is computed by "
                   "`toymodels` at the commit above.")


def call_snippet(package: str, function: str, *args, **kwargs) -> str:
    """Python that rebuilds a view: ``import toymodels.<package> as M`` then ``M.<function>(...)`` with the exact
    arguments (dataclasses as their constructor calls) of the current knobs."""
    def show(v: Any) -> str:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields_ = ", ".join(f"{f.name}={show(getattr(v, f.name))}" for f in dataclasses.fields(v) if f.init)
            return f"M.{type(v).__name__}({fields_})"
        return repr(v)

    parts = [show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()]
    return f"import toymodels.{package} as M\n\nresult = M.{function}({', '.join(parts)})\n"


def code_for_view(snippet: str, cli: str | None = None) -> None:
    """"Code for this view": the Python that rebuilds what is on screen (``call_snippet``) and the command line
    that reproduces the headline."""
    with st.expander("Code for this view", icon=":material/code:"):
        st.code(snippet, language="python")
        if cli:
            st.caption("The headline, from the command line (its last line is JSON):")
            st.code(cli, language="bash")
