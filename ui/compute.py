"""Computing for a page: compute slots (at most ``SLOTS`` heavy runs server-wide, one per visitor), ``compute``
(memory, shipped store, disk cache, else a bounded run), ``view`` (a topic's declared view, never retrained on a
page load) and ``guard``."""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable

import streamlit as st

from toymodels import shipped, store, topic
from toymodels.topic import InputError

from .errors import report_error
from .frozen import freeze
from .memory import _MEMO, _release_freed_memory

# At most this many heavy computations run at once on a hosted server; other visitors queue (and see it).
# One visitor holds at most one of them: a second computation of the same visitor waits for the first.
SLOTS = 2
# A computation that is not stored starts by itself only when its declared estimate is at most this; anything
# longer (or of unknown cost) waits for a button that states its cost, so a link never starts a long run.
AUTO_SECONDS = 3.0
_HEAVY = threading.BoundedSemaphore(SLOTS)
_QUEUE_LOCK = threading.Lock()
_WAITING = 0  # computations waiting for a slot, server-wide


def _thread_policy() -> None:
    """Threads per compute slot = cores / slots, set once for the server process (never by the library).
    Called before the first computation, so a page that only reads stored results never imports torch."""
    from toymodels.threads import set_thread_policy

    set_thread_policy(max(1, (os.cpu_count() or 1) // SLOTS))


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


_VERBS = {"analysing": "Analyse", "computing": "Compute", "embedding": "Embed", "estimating": "Estimate",
          "iterating": "Iterate", "reading": "Read", "running": "Run", "solving": "Solve", "subsampling": "Subsample",
          "sweeping": "Sweep", "training": "Train"}


def _imperative(label: str) -> str:
    """A button's text from a progress label: "Sweeping learning rates…" -> "Sweep learning rates" (a button
    that reads "Sweeping" before anything runs says something that is not happening)."""
    words = label.rstrip("…. ").split(" ", 1)
    verb = _VERBS.get(words[0].lower())
    if verb is None:
        return "Run: " + label.rstrip("…. ") if words[0].lower().endswith("ing") else label.rstrip("…. ")
    return " ".join([verb] + words[1:])


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
    starts a long computation. The result is frozen (``ui.frozen.freeze``): shared, so read-only. An out-of-bounds
    argument raises ``InputError`` before anything runs (see ``guard``).
    """
    key = store.call_key(fn, args, kwargs)
    hit, value = _MEMO.peek(key)
    if hit:
        return value
    hit, value = store.lookup(fn, *args, **kwargs)
    if hit:
        return _MEMO.get(key, lambda: freeze(value))
    if run is None:
        from .tour import tour_computes

        if seconds is not None and (seconds <= AUTO_SECONDS or tour_computes(seconds)):
            run = True
        else:
            if getattr(fn, "bounds", None) is not None:  # out of bounds: say so now, not after a button press
                _check_only(fn, args, kwargs)
            text = f"{button or _imperative(label)} ({cost_text or _seconds_text(seconds)})"
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
            return freeze(value)
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
                return freeze(store._compute_and_store(fn, args, dict(kwargs), progress))
            finally:
                _HEAVY.release()
                _release_freed_memory()

    try:
        return _MEMO.get(key, make)
    finally:
        slot.empty()


def _check_only(fn: Callable, args: tuple, kwargs: dict) -> None:
    """Run a ``@bounded`` function's checks (bounds and budget) without calling it: raises InputError."""
    topic.check_call(fn, *args, **kwargs)


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
        return _MEMO.get(memo, lambda: freeze(value))
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
        return freeze(old)
    st.stop()


@contextlib.contextmanager
def guard():
    """Show an ``InputError`` as a short message on the page instead of a traceback (a ``BudgetError``, settings
    that together are over a budget, as a warning), and stop the page."""
    try:
        yield
    except InputError as exc:
        report_error(exc)
        st.stop()


def _same(a: Any, b: Any) -> bool:
    """Two arguments alike; configs compare in their normalised form where they have one."""
    if a == b:
        return True
    norm = getattr(a, "normalised", None)
    return callable(norm) and callable(getattr(b, "normalised", None)) and norm() == b.normalised()


def view_or_compute(module, name: str, *args, fn: Callable | str | None = None, same: bool | None = None,
                    part: str | None = None, label: str | None = None, run: bool | None = None,
                    seconds: float | None = None, cost_text: str | None = None, button: str | None = None,
                    **kwargs) -> Any:
    """The shipped view ``module.VIEWS[name]`` when the knobs equal its arguments, else ``compute(fn, *args,
    **kwargs)``: one rule for every "shipped settings, or your own" knob. ``fn``: the view's own function unless
    given (a name of ``module`` is looked up only when it runs), so the function (and torch) is not imported for
    the shipped settings. ``same``: the page's own answer where the call is not the view's (another function,
    or one ``part`` of the view's result, its key). A refused input is shown (``report_error``: a budget as a
    warning saying what to change, a bad value as an error) and gives None, as does a run not yet started."""
    v = module.VIEWS[name]
    if same is None:
        shipped_args = v.arguments()
        call = dict(zip(shipped_args, args)) | kwargs
        same = call.keys() == shipped_args.keys() and all(_same(call[k], shipped_args[k]) for k in call)
    if same:
        result = view(module, name)
        return result[part] if part is not None else result
    try:
        fn = (v.resolve(getattr(module, "__name__", "")) if fn is None
              else getattr(module, fn) if isinstance(fn, str) else fn)
        return compute(fn, *args, label=label or v.label, run=run, seconds=seconds, cost_text=cost_text,
                       button=button, **kwargs)
    except InputError as exc:
        report_error(exc)
        return None


def refused(fn: Callable, *args, **kwargs) -> bool:
    """Whether a ``@bounded`` call is refused before anything runs (its bounds, then its budget), the refusal shown
    by ``report_error`` (a budget as a warning, a bad value as an error): for a button that starts a run later."""
    try:
        topic.check_call(fn, *args, **kwargs)
    except InputError as exc:
        report_error(exc)
        return True
    return False
