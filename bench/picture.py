"""Measure what a lecturer sees first (issue 44), in headless Chromium against a running server.

    python bench/picture.py http://127.0.0.1:8581 [topic ...] [--shots DIR] [--themes light,dark] [--narrow]

For each page at 1400x900: the page's height, the y of its first chart, of its ledger and of its tour box
(``?tour=1``), and whether the headline number is visible; at 390x844 (``--narrow``): its height and the text
elements cut at the left or right edge. Screenshots (the first screen and the full page) go to ``--shots``.
Prints one JSON line per page.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.browserkit import CHROMIUM, FLAGS, wait_settled  # noqa: E402
from toymodels.registry import PAPERS  # noqa: E402

#: the height of the page's scrolling content, the top of the first chart drawn (a chart inside a closed tab or
#: expander has no size), of the ledger strip or table, and of the tour box
MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  const top = (sel) => { for (const el of document.querySelectorAll(sel)) { const r = el.getBoundingClientRect();
                         if (r.width > 0 && r.height > 0) return Math.round(r.top + main.scrollTop); } return null; };
  return {height: Math.round(main.scrollHeight), first_chart: top('[data-testid="stVegaLiteChart"]'),
          ledger: top('.st-key-ledger-strip, .st-key-claims-ledger'), tour: top('.st-key-tour-box'),
          headline: top('.st-key-headline-number')};
}"""

from tests.test_browser import _CUT as CUT  # noqa: E402  (the browser test's own check)


def _open(browser, url, width, height, theme="light"):
    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=theme)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("h1", timeout=240_000)
    wait_settled(page, 240, 600, polling=150)
    page.wait_for_timeout(800)
    return page


def _full(page, path: Path, width: int) -> None:
    """The whole page in one picture: Streamlit scrolls inside its main block, so a "full page" screenshot shows
    only the first screen; make the viewport as tall as the page instead."""
    height = page.evaluate(MEASURE)["height"]
    page.set_viewport_size({"width": width, "height": min(int(height) + 50, 16000)})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("topics", nargs="*")
    ap.add_argument("--shots", default="/tmp/pic/shots")
    ap.add_argument("--themes", default="light")
    ap.add_argument("--narrow", action="store_true")
    ap.add_argument("--tour", action="store_true")
    args = ap.parse_args()
    shots = Path(args.shots)
    shots.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    topics = args.topics or [p.topic for p in PAPERS if p.has_page]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        warm = browser.new_page()
        warm.goto(args.url)
        warm.wait_for_selector("h1", timeout=120_000)
        warm.close()
        for topic in topics:
            row = {"topic": topic}
            for theme in args.themes.split(","):
                page = _open(browser, f"{args.url}/{topic}", 1400, 900, theme)
                if theme == "light":
                    row.update(page.evaluate(MEASURE))
                page.screenshot(path=str(shots / f"{topic}-{theme}-fold.png"))
                _full(page, shots / f"{topic}-{theme}-full.png", 1400)
                page.close()
            if args.tour:
                page = _open(browser, f"{args.url}/{topic}?tour=1", 1400, 900)
                row["tour_y"] = page.evaluate(MEASURE)["tour"]
                page.screenshot(path=str(shots / f"{topic}-tour1.png"))
                page.close()
            if args.narrow:
                page = _open(browser, f"{args.url}/{topic}", 390, 844)
                m = page.evaluate(MEASURE)
                row["height_390"] = m["height"]
                row["first_chart_390"] = m["first_chart"]
                row["cut_390"] = page.evaluate(CUT)
                page.screenshot(path=str(shots / f"{topic}-390-fold.png"))
                _full(page, shots / f"{topic}-390-full.png", 390)
                page.close()
            print(json.dumps(row), flush=True)
        browser.close()


if __name__ == "__main__":
    main()
