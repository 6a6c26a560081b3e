"""Benchmark: how long a visitor waits, in a real browser (headless Chromium through Playwright).

    python bench/bench_pages.py [--pages home rlvr ...] [--widgets] [--repeat 1]

For each page: start a fresh server (a cold process, an empty disk cache), open the page in an already running
browser and time from the request until the page's result is on screen (Home: the award cards; a paper page: its
claims table, or the result strip on a page not yet on the contract) and the app has stopped running. That is the
"first page of a cold server" figure, the browser's own work included. ``--widgets`` then moves every visible widget
of each paper page once (sliders, select boxes, radios, segmented controls, toggles, number inputs; not buttons, not
widgets inside forms) and times each rerun until the app has stopped running: what a visitor waits for one knob.

Prints one line per measurement and, last, one JSON object. Run it on a quiet machine; the server gets the thread
policy it has in production (cores / compute slots)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.browserkit import CHROMIUM, FLAGS, serve, wait_settled  # noqa: E402

SETTLE_MS = 400


def wait_idle(page, timeout_ms: int = 120_000, settle_ms: int = SETTLE_MS) -> None:
    """Until the page has settled (``browserkit``: script run finished, every lazily loaded element drawn) and
    stayed so for ``settle_ms`` (a page may rerun itself once, e.g. after syncing its link)."""
    wait_settled(page, timeout_ms / 1000, settle_ms)


def open_page(page, url: str, marker: str) -> float:
    t = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(marker, state="visible", timeout=120_000)
    seen = time.perf_counter() - t
    wait_idle(page)
    done = time.perf_counter() - t - SETTLE_MS / 1000
    if os.environ.get("BENCH_VERBOSE"):
        print(f"    result on screen {seen:.2f} s, app idle {done:.2f} s", flush=True)
    return done


_WATCH = """() => {
  if (window.__toyRuns !== undefined) return;
  window.__toyRuns = 0;
  new MutationObserver((records) => {
    for (const r of records)
      if (r.target.getAttribute('data-test-script-state') === 'notRunning') window.__toyRuns += 1;
  }).observe(document.body, {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
}"""

#: the widgets a visitor moves, outside forms (a form reruns only on its submit button); buttons are skipped
KNOBS = {
    "slider": "[data-testid=stMain] [data-testid=stSlider]",
    "select": "[data-testid=stMain] [data-testid=stSelectbox]",
    "radio": "[data-testid=stMain] [data-testid=stRadio]",
    "segmented": "[data-testid=stMain] [data-testid=stButtonGroup]",
    "toggle": "[data-testid=stMain] [data-testid=stCheckbox]",
    "number": "[data-testid=stMain] [data-testid=stNumberInput]",
}


def _label(widget) -> str:
    with contextlib.suppress(Exception):
        text = widget.locator("xpath=ancestor-or-self::*[contains(@class,'stElementContainer')][1]"
                              "//*[@data-testid='stWidgetLabel']").first.inner_text(timeout=500)
        return " ".join(text.split())[:48]
    return "?"


def _act(kind: str, widget, page) -> None:
    if kind == "slider":  # one step to the right (or left, at the top of its range); first thumb of a range
        thumb = widget.locator("input[type=range]").first
        at_max = thumb.input_value() == thumb.get_attribute("max")
        thumb.focus()
        thumb.press("ArrowLeft" if at_max else "ArrowRight")
    elif kind == "select":  # the first option that is not the current one
        widget.locator("input[role=combobox]").first.click(timeout=5000)
        page.locator("[role=option]:not([aria-selected=true])").first.click(timeout=5000)
    elif kind == "radio":  # the first option that is not the current one
        widget.locator("[data-testid=stRadioOption]:not([data-selected=true])").first.click()
    elif kind == "segmented":
        widget.locator("button").nth(1).click()
    elif kind == "toggle":
        widget.locator("label").first.click()
    elif kind == "number":
        widget.locator("[data-testid=stNumberInputStepUp]").click()


def walk_knobs(page, limit: int = 40, timeout_s: float = 60, skip: tuple = ()) -> list[dict]:
    """Move every widget of the page once (expanders opened, every tab visited; not inside forms); time each
    rerun from the action until the app has finished running. A widget that starts no rerun within 3 s (disabled,
    or one that only changes the view in the browser) is reported with ``seconds: None``."""
    page.evaluate(_WATCH)
    for summary in page.locator("[data-testid=stMain] [data-testid=stExpander] details:not([open]) > summary").all():
        with contextlib.suppress(Exception):
            summary.click()
    tabs = page.locator("[data-testid=stMain] [data-testid=stTab]")
    tab_labels = [None] + [tabs.nth(i).inner_text() for i in range(tabs.count())]
    results, done = [], set()
    for tab in tab_labels:
        if tab is not None:
            with contextlib.suppress(Exception):
                page.locator("[data-testid=stMain] [data-testid=stTab]", has_text=tab).first.click()
        for kind, selector in KNOBS.items():
            widgets = page.locator(selector)
            for i in range(min(widgets.count(), limit)):
                widget = widgets.nth(i)
                if not widget.is_visible() or widget.locator("xpath=ancestor::*[@data-testid='stForm']").count():
                    continue
                label = _label(widget)
                if (kind, label) in done or any(word in label for word in skip):
                    continue
                done.add((kind, label))
                before = page.evaluate("window.__toyRuns || 0")
                page.keyboard.press("Escape")
                page.mouse.move(0, 0)
                widget.evaluate("e => e.scrollIntoView({block: 'center'})")  # clear of the fixed header
                t = time.perf_counter()
                try:
                    _act(kind, widget, page)
                    page.wait_for_function(f"(window.__toyRuns || 0) > {before}", timeout=3000)
                except Exception as exc:  # noqa: BLE001 - disabled, or no rerun: not a knob that computes
                    why = "disabled" if widget.locator("[disabled], [aria-disabled=true]").count() else \
                        str(exc).splitlines()[0][:80]
                    results.append({"kind": kind, "label": label, "tab": tab, "seconds": None, "why": why})
                    continue
                wait_idle(page, int(timeout_s * 1000), SETTLE_MS)
                results.append({"kind": kind, "label": label, "tab": tab,
                                "seconds": round(time.perf_counter() - t - SETTLE_MS / 1000, 2)})
    return results


def main() -> None:
    from playwright.sync_api import sync_playwright

    from toymodels.registry import PAPERS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*", default=None, help="home and/or topic names (default: all)")
    ap.add_argument("--widgets", action="store_true", help="also time one knob per paper page, warm")
    ap.add_argument("--skip", nargs="*", default=[], help="leave out knobs whose label contains one of these "
                    "(a knob that switches the page to another mode hides the rest)")
    ap.add_argument("--repeat", type=int, default=1, help="cold starts per page (the median is reported)")
    ap.add_argument("--after-home", type=float, default=None, metavar="SECONDS",
                    help="open Home first, wait this long (a visitor reading it), then time the page: the usual "
                         "path into a paper page of a fresh server")
    ap.add_argument("--port", type=int, default=None, help="serve on this port if it is free (else any free one)")
    a = ap.parse_args()
    names = a.pages or ["home"] + [p.topic for p in PAPERS if p.has_page]
    cold: dict[str, float] = {}
    knob: dict[str, dict] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        for name in names:
            path = "" if name == "home" else name
            marker = "text=Best Paper awards" if name == "home" else ".st-key-claims-ledger, .st-key-result-strip"
            times = []
            for _ in range(a.repeat):
                with serve(port=a.port) as url:
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    if a.after_home is not None and name != "home":
                        open_page(page, url, "text=Best Paper awards")
                        time.sleep(a.after_home)
                    times.append(open_page(page, f"{url}/{path}", marker))
                    if a.widgets and name != "home" and len(times) == 1:
                        knob[name] = walk_knobs(page, skip=tuple(a.skip))
                        for k in knob[name]:
                            took = f"no rerun ({k['why']})" if k["seconds"] is None else f"{k['seconds']:.2f} s"
                            print(f"{name:16s}   {k['kind']:9s} {k['label']!r:52s} {took}", flush=True)
                    page.close()
            times.sort()
            cold[name] = round(times[len(times) // 2], 2)
            what = "cold first page" if a.after_home is None else f"after Home + {a.after_home:g} s"
            print(f"{name:16s} {what}: {cold[name]:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times)})",
                  flush=True)
        browser.close()
    print(json.dumps({"cold_first_page_s": cold, "knob_s": knob}))


if __name__ == "__main__":
    main()
