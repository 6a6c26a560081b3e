"""Load test: N concurrent browser sessions against a real local server, every page, some live computations.

    python bench/load.py                       # serve the app here, 8 sessions, 2 of them start a computation
    python bench/load.py --sessions 16 --compute 7 --port 8620
    python bench/load.py --url http://127.0.0.1:8501 --pid 1234   # an already running server (RSS from its pid)

Each session is its own browser context (its own Streamlit session), driven by Playwright in Debian's headless
Chromium (no browser download). Every session opens the home page and every paper page (pages discovered from
``toymodels.registry``), starting at a different page so the load spreads. ``--compute K``: sessions 0..K-1 each
start one live computation on the page ``topics[s % T]``, the first page they open: every number input and slider
on that page (or in the button's form) set to its minimum, then the page's first Run/Train button pressed (found by
role and text, in expanders and tabs too), and the session waits for it to finish.

An error is: a Python exception shown on a page (``stException``), the router's "Something went wrong on this page"
message (Home.run_page: the traceback goes to the server log), a JavaScript page error, "Page not found", a page or
computation that does not finish within its timeout, or (for a server started here) a traceback in the server log.
Page time: from the request until the page has settled (``browserkit``: a heading drawn, the script run finished and
every lazily loaded widget and chart drawn). Peak RSS: the largest resident memory of the server process and its
children, sampled every 0.2 s (and the kernel's high-water mark, VmHWM). Everything talks to 127.0.0.1 only, and
every wait is bounded (``--deadline``). The last line printed is one JSON object. A session that starts no
computation reports what the page showed (``seen``: script state, tabs, buttons, sliders, inputs); with
``LOAD_SHOTS=DIR`` it also saves a screenshot and the page's text there.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.browserkit import CHROMIUM, FLAGS, ROOT, free_port, streamlit_cmd, wait_healthy, wait_settled_async, wrapped  # noqa: E402

BUTTON_TEXT = re.compile(r"(Run|Train)")  # the button's accessible name may start with an icon ligature
SKIP_BUTTON_TEXT = re.compile(r"(?i)(sweep|all views|rerun)")  # prefer a single run over a sweep


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the pages


def page_paths(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """The URL paths of the home page and of every paper page that exists in ``root``, from the registry."""
    sys.path.insert(0, str(root))
    from toymodels.registry import PAPERS

    topics = [p.topic for p in PAPERS if (root / p.page).is_file()]
    return [""] + topics, topics


# --------------------------------------------------------------------------- the server and its memory


def _children(pid: int) -> list[int]:
    out = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    return out


def _status_kb(pid: int, field: str) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of ``pid`` itself and of its children that have ended, seconds."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, MiB."""
    todo, seen, kb = [pid], set(), 0
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        kb += _status_kb(p, "VmRSS")
        todo += _children(p)
    return kb / 1024


class RssSampler(threading.Thread):
    """Samples the server's resident memory every ``every`` seconds until stopped.

    With ``limit_mb``, it is also the memory cap: a server whose resident memory (with its children, or the
    kernel's high-water mark) goes over the limit is killed, as a container's out-of-memory killer would."""

    def __init__(self, pid: int | None, every: float = 0.2, limit_mb: float | None = None):
        super().__init__(daemon=True)
        self.pid, self.every, self.peak_mb, self.peak_hwm_mb = pid, every, 0.0, 0.0
        self.limit_mb, self.killed_at_mb = limit_mb, None
        self._halt = threading.Event()

    def run(self):
        while self.pid and not self._halt.is_set():
            self.peak_mb = max(self.peak_mb, tree_rss_mb(self.pid))
            self.peak_hwm_mb = max(self.peak_hwm_mb, _status_kb(self.pid, "VmHWM") / 1024)
            now = max(self.peak_mb, self.peak_hwm_mb)
            if self.limit_mb and now > self.limit_mb and self.killed_at_mb is None:
                self.killed_at_mb = round(now, 1)
                log(f"resident memory {now:.0f} MiB is over the {self.limit_mb:.0f} MiB cap: killing the server")
                with contextlib.suppress(OSError):
                    os.killpg(self.pid, 9)  # the server runs in its own session (process group)
            self._halt.wait(self.every)

    def stop(self) -> float:
        self._halt.set()
        self.join(2)
        return round(max(self.peak_mb, self.peak_hwm_mb), 1)


def _die_with_parent() -> None:
    """In the child before it runs the server: SIGTERM it when the process that started it dies, even by SIGKILL
    (Linux ``PR_SET_PDEATHSIG``; elsewhere nothing)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


class Server:
    """``streamlit run Home.py`` on 127.0.0.1, optionally under a wrapper command (prlimit, taskset, ...)."""

    def __init__(self, app_dir: Path, python: str = sys.executable, port: int | None = None,
                 wrap: list[str] | None = None, env: dict | None = None, extra_flags: list[str] | None = None,
                 log_path: Path | None = None):
        self.app_dir, self.port = Path(app_dir), free_port(port)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path or Path(tempfile.mkdtemp(prefix="toymodels-load-")) / "server.log"
        self.cmd = (wrap or []) + streamlit_cmd(self.port, python) + (extra_flags or [])
        self.env = dict(os.environ, **(env or {}))
        self.env.setdefault("TOYMODELS_CACHE", str(self.log_path.parent / "cache"))
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0

    def start(self, timeout: float = 120) -> float:
        """Start and wait for the health endpoint; return seconds until healthy."""
        self._log = open(self.log_path, "w")
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(self.cmd, cwd=self.app_dir, env=self.env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent)
        try:
            wait_healthy(self.url, self.proc, timeout)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}:\n{self.log_tail()}") from None
        return time.perf_counter() - self.started_at

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, n: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-n:])

    def tracebacks(self) -> list[str]:
        """The last line of every traceback in the server log (the exception itself)."""
        return [f"{e}" for _, e in self.page_tracebacks()]

    def page_tracebacks(self) -> list[tuple[str, str]]:
        """(page, exception) for every traceback in the server log: the page is the innermost frame in a page's
        script (``pages/<topic>.py``, else ``Home.py``), the file a visitor had open; "unknown page" when no
        frame of the app is in it (Streamlit's own threads)."""
        lines, out = self.log_text().splitlines(), []
        for i, line in enumerate(lines):
            if line.startswith("Traceback (most recent call last)"):
                j, page = i + 1, None
                while j < len(lines) and (lines[j].startswith(" ") or not lines[j].strip()):
                    m = _PAGE_FRAME.search(lines[j])
                    if m:
                        page = m.group(1) or "home"
                    j += 1
                out.append((page or "unknown page", lines[j].strip() if j < len(lines) else "Traceback"))
        return out

    def stop(self) -> None:
        """Stop the server and everything in its session (it runs in its own): SIGTERM, then SIGKILL."""
        if self.proc is not None:
            stop_group(self.proc)
        with contextlib.suppress(Exception):
            self._log.close()


_PAGE_FRAME = re.compile(r'File "[^"]*?(?:/pages/([\w-]+)\.py|/Home\.py)"')


def stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop ``proc``, started in a session of its own, and every process of that session: SIGTERM to the group,
    then, after ``grace`` seconds, SIGKILL."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # the leader is gone: its group's stragglers too
            return
        except subprocess.TimeoutExpired:
            continue


# --------------------------------------------------------------------------- one browser session


async def _script_done(page, timeout: float) -> None:
    """Wait until the page is settled (``browserkit``): a heading drawn, the script run finished and every
    lazily loaded widget and chart drawn, for 0.75 s."""
    deadline = time.monotonic() + timeout
    await page.wait_for_selector("[data-testid='stApp']", timeout=timeout * 1000)
    await page.wait_for_selector("h1", timeout=max(1.0, deadline - time.monotonic()) * 1000)
    try:
        await wait_settled_async(page, max(1.0, deadline - time.monotonic()))
    except Exception as exc:  # playwright's TimeoutError: say what timed out, as before
        if "Timeout" in type(exc).__name__:
            raise TimeoutError(f"still running after {timeout:.0f} s") from None
        raise


async def _page_errors(page, js_errors: list[str]) -> list[str]:
    errs = []
    if await page.locator("[data-testid='stException']").count():
        text = (await page.locator("[data-testid='stException']").first.inner_text())[:200]
        errs.append("exception shown: " + " ".join(text.split()))
    if await page.get_by_text("Page not found").count():
        errs.append("page not found")
    if await page.get_by_text("Something went wrong on this page").count():  # Home.run_page caught an error
        errs.append("page failed: " + " ".join(
            (await page.get_by_text("Something went wrong on this page").first.inner_text())[:160].split()))
    errs += [f"javascript: {e[:200]}" for e in js_errors]
    js_errors.clear()
    return errs


async def _visible_button(page):
    """The first visible, enabled Run/Train button on screen (a single run before a sweep), or None."""
    found = []
    buttons = page.get_by_role("button", name=BUTTON_TEXT)
    for i in range(await buttons.count()):
        b = buttons.nth(i)
        if await b.is_visible() and await b.is_enabled():
            found.append((bool(SKIP_BUTTON_TEXT.search(await b.inner_text())), i, b))
    return min(found, key=lambda t: (t[0], t[1]))[2] if found else None


async def _open_expanders(page) -> None:
    summaries = page.locator("[data-testid='stExpander'] details:not([open]) > summary")
    for i in range(await summaries.count()):
        with contextlib.suppress(Exception):
            await summaries.nth(i).click(timeout=5000)


async def _each_tab(page, timeout: float):
    """Open each tab of the page in turn (yields after each is drawn). A tab bound to the link
    (``st.tabs(key=..., bind="query-params")``) draws its panel only after the rerun its click starts, so the page
    is waited for, and the tab's expanders opened, before the caller looks."""
    tabs = page.get_by_role("tab")
    for i in range(await tabs.count()):
        with contextlib.suppress(Exception):
            tab = tabs.nth(i)
            if await tab.get_attribute("aria-selected") != "true":
                await tab.click(timeout=5000)
                await page.wait_for_timeout(300)  # the panel is shown on the next frame (slow under load)
                await _script_done(page, timeout)
            await _open_expanders(page)
            yield " ".join((await tab.inner_text()).split())


async def _find_button(page, timeout: float = 60.0):
    """The first visible Run/Train button (not a sweep if a single run exists); opens expanders and tabs."""
    if (found := await _visible_button(page)) is not None:
        return found
    await _open_expanders(page)  # buttons folded away: open every closed expander, then try each tab
    if (found := await _visible_button(page)) is not None:
        return found
    async for _ in _each_tab(page, timeout):
        if (found := await _visible_button(page)) is not None:
            return found
    return None


async def _button_behind_knobs(page, timeout: float) -> tuple:
    """For a page that shows its shipped view at the default settings and offers a run only once a knob moves
    (the knobs in a tab): each tab in turn, its settings form applied at its minimum or its knobs set to their
    minimum, then the Run/Train button looked for. Returns (button or None, inputs changed, the tab's name)."""
    main = page.locator("[data-testid='stMain'], section.main").first
    changed, where = 0, None
    async for name in _each_tab(page, timeout):
        moved = await _apply_smallest(page, timeout) or await _smallest_settings(page, main, timeout)
        if moved:
            changed, where = changed + moved, name
            await _script_done(page, timeout)
            if (found := await _visible_button(page)) is not None:
                return found, changed, name
    return None, changed, where


async def _what_is_there(page) -> dict:
    """What the page shows when no computation could be started (for the report)."""
    async def n(sel):
        return await page.locator(sel).count()
    state = await page.evaluate(
        "() => { const e = document.querySelector('[data-test-script-state]');"
        " return e && e.getAttribute('data-test-script-state'); }")
    return {"script_state": state, "h1": await n("h1"), "tabs": await n("[role='tab']"),
            "buttons": await n("button"), "sliders": await n("[role='slider']"),
            "number_inputs": await n("input[type='number']"), "elements": await n("[data-testid='stElementContainer']")}


async def _smallest_settings(page, scope, timeout: float) -> int:
    """Set every number input and slider in ``scope`` to its minimum; return how many were changed."""
    changed = 0
    inputs = scope.locator("input[type='number']")
    for i in range(await inputs.count()):
        box = inputs.nth(i)
        with contextlib.suppress(Exception):
            if not await box.is_visible() or not await box.is_enabled():
                continue
            lo, value = await box.get_attribute("min"), await box.input_value()
            if lo is None or float(lo) == float(value or "nan"):
                continue
            await box.fill(lo, timeout=5000)
            await box.press("Enter", timeout=5000)
            changed += 1
            await _script_done(page, timeout)
    sliders = scope.get_by_role("slider")
    for i in range(await sliders.count()):
        thumb = sliders.nth(i)
        with contextlib.suppress(Exception):
            if not await thumb.is_visible():
                continue
            before = await thumb.get_attribute("aria-valuenow")
            if before is not None and before == await thumb.get_attribute("aria-valuemin"):
                continue
            await thumb.focus(timeout=5000)
            await thumb.press("Home", timeout=5000)
            if await thumb.get_attribute("aria-valuenow") == before:  # no Home key: walk left
                for _ in range(60):
                    await thumb.press("ArrowLeft")
            changed += 1
            await _script_done(page, timeout)
    return changed


async def _apply_smallest(page, timeout: float) -> int:
    """A settings form whose submit only applies them (gated attention: "Apply settings", after which a Train
    button appears): its inputs at their minimum, then submitted. Returns how many inputs changed (0: no form)."""
    submit = page.get_by_role("button", name=re.compile(r"Apply"))
    if not await submit.count() or not await submit.first.is_visible():
        return 0
    form = submit.first.locator("xpath=ancestor::*[@data-testid='stForm'][1]")
    changed = await _smallest_settings(page, form, timeout)
    await submit.first.click(timeout=60_000)
    await asyncio.sleep(0.5)
    await _script_done(page, timeout)
    return changed


async def _compute(page, js_errors, timeout: float, page_timeout: float) -> dict:
    """Start one live computation with the smallest settings and wait for it to finish: the page's single-run
    Run/Train button (after applying the smallest settings where a form only applies them), else a sweep, else
    (a page that computes live from its knobs) every knob of the page at its minimum."""
    button = await _find_button(page, page_timeout)
    if button is None or SKIP_BUTTON_TEXT.search(await button.inner_text()):
        if await _apply_smallest(page, page_timeout):
            button = await _find_button(page, page_timeout) or button
    tab = None
    if button is None:  # knobs in a tab, and a button only once they leave the shipped settings
        start = time.perf_counter()
        button, changed, tab = await _button_behind_knobs(page, page_timeout)
    if button is None:
        if tab is None:
            start = time.perf_counter()
            changed = await _smallest_settings(page, page.locator("[data-testid='stMain'], section.main").first,
                                               timeout)
        where = f"the knobs of its tab '{tab}'" if tab else "the page's knobs"
        out = {"button": f"none: {where} at their minimum (it computes live)" if changed else None,
               "settings_at_minimum": changed, "seconds": round(time.perf_counter() - start, 2),
               "errors": await _page_errors(page, js_errors)}
        if not changed:
            out["seen"] = await _what_is_there(page)
            if os.environ.get("LOAD_SHOTS"):
                shot = Path(os.environ["LOAD_SHOTS"]) / f"nobutton-{int(time.time() * 1000)}.png"
                with contextlib.suppress(Exception):
                    await page.screenshot(path=str(shot), full_page=True)
                    shot.with_suffix(".txt").write_text(await page.locator("body").inner_text())
        return out
    label = " ".join((await button.inner_text()).split())
    form = button.locator("xpath=ancestor::*[@data-testid='stForm'][1]")
    scope = form if await form.count() else page.locator("[data-testid='stMain'], section.main").first
    changed = await _smallest_settings(page, scope, page_timeout)
    # the button may have been redrawn by the reruns: wait for the page to settle, then find it again
    start = time.perf_counter()
    await _script_done(page, timeout)
    again = await _find_button(page, page_timeout)
    if again is None:  # at the smallest settings the run is cheap enough that the page computed it by itself
        return {"button": f"none: at the smallest settings '{label}' ran by itself", "settings_at_minimum": changed,
                "seconds": round(time.perf_counter() - start, 2), "errors": await _page_errors(page, js_errors)}
    button = again
    start = time.perf_counter()
    await button.click(timeout=60_000)
    await asyncio.sleep(0.5)
    await _script_done(page, timeout)
    return {"button": label, "settings_at_minimum": changed, "seconds": round(time.perf_counter() - start, 2),
            "errors": await _page_errors(page, js_errors)}


async def session(browser, base: str, index: int, paths: list[str], topics: list[str], compute: bool,
                  page_timeout: float, compute_timeout: float, results: dict) -> None:
    """One visitor: open every page (rotated start); optionally start a computation on the first paper page."""
    ctx = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await ctx.new_page()
    js_errors: list[str] = []
    page.on("pageerror", lambda e: js_errors.append(str(e)))
    first = topics[index % len(topics)] if topics else ""
    order = [first] + [p for p in paths if p != first]
    try:
        for n, path in enumerate(order):
            url = f"{base}/{path}"
            start = time.perf_counter()
            try:
                await page.goto(url, wait_until="domcontentloaded", timeout=page_timeout * 1000)
                await _script_done(page, page_timeout)
                seconds = time.perf_counter() - start
                errs = await _page_errors(page, js_errors)
                results["pages"].append({"session": index, "page": path or "home", "seconds": round(seconds, 2),
                                         "errors": errs})
                log(f"session {index}: /{path} in {seconds:.1f} s" + (f" ERRORS {errs}" if errs else ""))
            except Exception as exc:  # noqa: BLE001 -- every failure is counted, none stops the others
                results["pages"].append({"session": index, "page": path or "home", "seconds": None,
                                         "errors": [f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"]})
                log(f"session {index}: /{path} FAILED {results['pages'][-1]['errors']}")
                continue
            if compute and n == 0 and path:
                try:
                    out = await _compute(page, js_errors, compute_timeout, page_timeout)
                except Exception as exc:  # noqa: BLE001
                    out = {"button": "?", "errors": [f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"]}
                out.update(session=index, page=path)
                results["computations"].append(out)
                log(f"session {index}: {path}: computation {out}")
    finally:
        await ctx.close()


async def drive(base: str, sessions: int, computations: int, paths: list[str], topics: list[str],
                page_timeout: float, compute_timeout: float, deadline: float, executable: str = CHROMIUM) -> dict:
    from playwright.async_api import async_playwright

    results: dict = {"pages": [], "computations": []}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
        try:
            tasks = []
            for i in range(sessions):
                tasks.append(asyncio.create_task(session(browser, base, i, paths, topics, i < computations,
                                                         page_timeout, compute_timeout, results)))
                await asyncio.sleep(0.1)
            done, pending = await asyncio.wait(tasks, timeout=deadline)
            for t in pending:
                t.cancel()
            if pending:
                results["pages"].append({"session": None, "page": None, "seconds": None,
                                         "errors": [f"{len(pending)} session(s) still running at the "
                                                    f"{deadline:.0f} s deadline"]})
            await asyncio.gather(*pending, return_exceptions=True)
        finally:
            await browser.close()
    return results


async def first_render(base: str, timeout: float) -> float:
    """Seconds for one visitor to see the home page drawn (the cold start's last step)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = await browser.new_page()
            start = time.perf_counter()
            await page.goto(base, wait_until="domcontentloaded", timeout=timeout * 1000)
            await _script_done(page, timeout)
            return time.perf_counter() - start
        finally:
            await browser.close()


def summarize(results: dict, sessions: int, server: Server | None, peak_rss_mb: float | None) -> dict:
    times = sorted(p["seconds"] for p in results["pages"] if p["seconds"] is not None)
    errors = [f"{p['page']} (session {p['session']}): {e}" for p in results["pages"] for e in p["errors"]]
    errors += [f"{c['page']} computation (session {c['session']}): {e}"
               for c in results["computations"] for e in c.get("errors", [])]
    tracebacks = server.page_tracebacks() if server else []
    errors += [f"{page} (server log): {t}" for page, t in tracebacks]
    by_page: dict = {}
    for p in results["pages"]:
        if p["page"] is None:
            continue
        row = by_page.setdefault(p["page"], {"loads": 0, "errors": 0, "times": []})
        row["loads"] += 1
        row["errors"] += len(p["errors"])
        if p["seconds"] is not None:
            row["times"].append(p["seconds"])
    for c in results["computations"]:
        by_page.setdefault(c["page"], {"loads": 0, "errors": 0, "times": []})["errors"] += len(c.get("errors", []))
    for page, _ in tracebacks:
        by_page.setdefault(page, {"loads": 0, "errors": 0, "times": []})["errors"] += 1

    pages = {page: {"loads": row["loads"], "errors": row["errors"], "p50_s": quantile(row["times"], 0.5),
                    "p95_s": quantile(row["times"], 0.95), "max_s": max(row["times"]) if row["times"] else None}
             for page, row in by_page.items()}
    q = functools.partial(quantile, times)
    return {
        "sessions": sessions,
        "page_loads": len(times),
        "errors": len(errors),
        "error_list": errors[:20],
        "peak_rss_mb": peak_rss_mb,
        "p50_s": q(0.5),
        "p95_s": q(0.95),
        "max_s": round(times[-1], 2) if times else None,
        "computations": [{k: c.get(k) for k in ("session", "page", "button", "settings_at_minimum", "seconds", "seen")}
                         for c in results["computations"]],
        "pages": pages,
    }


def quantile(values, p: float) -> float | None:
    """The ``p`` quantile of ``values`` (linear interpolation between order statistics; the median at 0.5),
    rounded to 0.01; None when empty."""
    if not values:
        return None
    return round(float(statistics.quantiles(sorted(values), n=100, method="inclusive")[int(round(100 * p)) - 1])
                 if len(values) > 1 and 0 < p < 1 else float(sorted(values)[0 if p <= 0 else -1]), 2)


def run_load(base: str, sessions: int, computations: int, paths: list[str], topics: list[str],
             pid: int | None = None, server: Server | None = None, page_timeout: float = 240,
             compute_timeout: float = 300, deadline: float = 1200, limit_mb: float | None = None,
             executable: str = CHROMIUM) -> dict:
    """Drive the sessions against ``base`` while sampling the server's memory (and capping it at ``limit_mb``
    resident, when given); return the summary."""
    sampler = RssSampler(pid, limit_mb=limit_mb)
    sampler.start()
    start, cpu0 = time.perf_counter(), cpu_seconds(pid) if pid else None
    try:
        results = asyncio.run(drive(base, sessions, computations, paths, topics, page_timeout, compute_timeout,
                                    deadline, executable))
    finally:
        peak = sampler.stop() if pid else None
    out = summarize(results, sessions, server, peak)
    if sampler.killed_at_mb is not None:
        out["errors"] += 1
        out["error_list"].insert(0, f"the server was killed at {sampler.killed_at_mb} MiB resident, over the "
                                    f"{limit_mb:.0f} MiB cap")
    out["wall_s"] = round(time.perf_counter() - start, 1)
    if pid:  # how much of the machine the server itself used; the browsers, on the same cores, used the rest
        out["server_cpu_s"] = round(cpu_seconds(pid) - cpu0, 1)
        out["cpu_count"] = os.cpu_count()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=8, help="concurrent browser sessions (default 8)")
    ap.add_argument("--compute", type=int, default=2, help="sessions that start a live computation (default 2)")
    ap.add_argument("--url", help="an already running server (default: start one here)")
    ap.add_argument("--pid", type=int, help="that server's process id, for its memory")
    ap.add_argument("--port", type=int, default=None, help="port for the server started here (default: free)")
    ap.add_argument("--page-timeout", type=float, default=240)
    ap.add_argument("--compute-timeout", type=float, default=300)
    ap.add_argument("--deadline", type=float, default=1200, help="stop everything after this many seconds")
    ap.add_argument("--browser-nice", type=int, default=0, choices=range(0, 20), metavar="0..19",
                    help="run the browsers at this niceness, below the server, as if on visitors' own machines "
                         "(default 0: the browsers compete with the server for this machine's cores)")
    args = ap.parse_args(argv)
    if not 1 <= args.sessions <= 64 or not 0 <= args.compute <= args.sessions:
        ap.error("--sessions must be 1..64 and --compute 0..sessions")
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} is missing (apt-get install chromium, or set CHROMIUM)", file=sys.stderr)
        return 2
    paths, topics = page_paths()
    server = None
    if args.url:
        if not re.match(r"^https?://(127\.0\.0\.1|localhost)(:\d+)?/?$", args.url):
            print("error: --url must be a local server (127.0.0.1 or localhost)", file=sys.stderr)
            return 2
        base, pid, cold = args.url.rstrip("/"), args.pid, None
    else:
        server = Server(ROOT, port=args.port)
        log(f"starting the server on {server.url} (log: {server.log_path})")
        cold = server.start()
        base, pid = server.url, server.proc.pid
    try:
        first = asyncio.run(first_render(base, args.page_timeout))
        log(f"first render of the home page: {first:.1f} s; driving {args.sessions} sessions over "
            f"{len(paths)} pages, {args.compute} live computation(s)")
        out = run_load(base, args.sessions, args.compute, paths, topics, pid, server, args.page_timeout,
                       args.compute_timeout, args.deadline,
                       executable=wrapped(CHROMIUM, nice=args.browser_nice))
    finally:
        if server:
            server.stop()
    out = {"server_healthy_s": round(cold, 1) if cold is not None else None, "first_render_s": round(first, 1),
           **out}
    for e in out["error_list"]:
        log(f"error: {e}")
    print(json.dumps(out))
    return 1 if out["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
