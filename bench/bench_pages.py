"""Benchmark: how long a visitor waits, in a real browser (headless Chromium through Playwright).

    python bench/bench_pages.py [--pages home rlvr ...] [--widgets] [--repeat 1]

For each page: start a fresh server (a cold process, an empty disk cache), open the page in an already running
browser and time from the request until the page's result is on screen (Home: the award cards; a paper page:
its result strip) and the app has stopped running. That is the "first page of a cold server" figure, the
browser's own work included. ``--widgets`` then moves the first slider or select box on each paper page that is
not behind a button and times until the rerun has finished ("one knob, warm").

Prints one line per measurement and, last, one JSON object. Run it on a quiet machine; the server gets the
thread policy it has in production (cores / compute slots).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve():
    """A fresh server with an empty disk cache; yields its URL once /_stcore/health answers."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TOYMODELS_CACHE=str(Path(tmp) / "cache"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "Home.py", "--server.headless", "true", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 60
            while True:
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                        break
                except OSError:
                    if time.time() > deadline:
                        raise RuntimeError("the server did not start in 60 s")
                    time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def wait_idle(page, timeout_ms: int = 120_000) -> None:
    """Until the app is not running: Streamlit shows its status widget ("Running…") while a script runs."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=timeout_ms)


def open_page(page, url: str, marker: str) -> float:
    t = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(marker, state="visible", timeout=120_000)
    seen = time.perf_counter() - t
    wait_idle(page)
    done = time.perf_counter() - t
    if os.environ.get("BENCH_VERBOSE"):
        print(f"    result on screen {seen:.2f} s, app idle {done:.2f} s", flush=True)
    return done


def move_first_knob(page) -> tuple[str, float] | None:
    """Press ArrowRight on the first slider of the main area (outside forms and buttons' results); time the rerun."""
    sliders = page.locator("section.main [role=slider], [data-testid=stMain] [role=slider]")
    if sliders.count() == 0:
        return None
    knob = sliders.first
    label = knob.get_attribute("aria-label") or "slider"
    knob.focus()
    t = time.perf_counter()
    knob.press("ArrowRight")
    # the rerun starts shortly after the key press; wait for it to start (or not), then to finish
    with contextlib.suppress(Exception):
        page.wait_for_selector("[data-testid=stStatusWidget]", state="visible", timeout=1500)
    wait_idle(page)
    return label, time.perf_counter() - t


def main() -> None:
    from playwright.sync_api import sync_playwright

    from toymodels.registry import PAPERS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*", default=None, help="home and/or topic names (default: all)")
    ap.add_argument("--widgets", action="store_true", help="also time one knob per paper page, warm")
    ap.add_argument("--repeat", type=int, default=1, help="cold starts per page (the median is reported)")
    ap.add_argument("--after-home", type=float, default=None, metavar="SECONDS",
                    help="open Home first, wait this long (a visitor reading it), then time the page: the usual "
                         "path into a paper page of a fresh server")
    a = ap.parse_args()
    names = a.pages or ["home"] + [p.topic for p in PAPERS if p.has_page]
    cold: dict[str, float] = {}
    knob: dict[str, dict] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        for name in names:
            path = "" if name == "home" else name
            marker = "text=Best Paper awards" if name == "home" else ".st-key-result-strip"
            times = []
            for _ in range(a.repeat):
                with serve() as url:
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    if a.after_home is not None and name != "home":
                        open_page(page, url, "text=Best Paper awards")
                        time.sleep(a.after_home)
                    times.append(open_page(page, f"{url}/{path}", marker))
                    if a.widgets and name != "home" and len(times) == 1:
                        moved = move_first_knob(page)
                        if moved:
                            moved2 = move_first_knob(page)   # the second move is the warm one
                            knob[name] = {"knob": moved[0], "first_s": round(moved[1], 2),
                                          "second_s": round(moved2[1], 2) if moved2 else None}
                            print(f"{name:16s} knob {moved[0]!r}: {moved[1]:.2f} s, again {knob[name]['second_s']} s",
                                  flush=True)
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
