"""A real browser: serve the app, open every page in Debian's headless Chromium, look for errors.

Screenshots go to screenshots/ (git-ignored), one per page, for a person to look at.
"""
import os
import time
from pathlib import Path

import pytest

from toymodels.registry import PAPERS

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "screenshots"
from tests.browserkit import CHROMIUM, FLAGS, serve, wait_settled  # noqa: E402  (shared with bench/*.py)


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: CI must install Debian's chromium (see .ci/run)")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    with serve(tmp_path_factory.mktemp("app")) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def warm_url(app_url, browser):
    """The app after one visit to the home page.

    Streamlit runs the very first script run of a fresh server in its legacy `pages/` mode, until the router
    (st.navigation in Home.py) has run once; a deep link as the first request of a cold server shows a one-off
    "page not found" notice before the router takes over. Warm the server as a first visitor of the home page
    would, so each page test sees what every later visitor sees.
    """
    page = browser.new_page()
    page.goto(app_url)
    page.wait_for_selector("h1", timeout=60_000)
    page.close()
    return app_url


def _wait_idle(page, timeout_s: float, settle_ms: int = 500) -> None:
    """Until the page has settled (``browserkit``: the script run finished and every lazily loaded widget and
    chart drawn) and stayed so for ``settle_ms``: a page may rerun itself once (a link synced, a fragment)."""
    wait_settled(page, timeout_s, settle_ms, polling=100)


def _open(browser, url: str, shot: str, timeout_s: float = 240, width: int = 1400, theme: str = "light"):
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=theme, accept_downloads=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stApp']", timeout=60_000)
    # wait until the script has finished running (the status widget disappears) and content is drawn
    page.wait_for_selector("h1", timeout=timeout_s * 1000)
    _wait_idle(page, timeout_s)
    time.sleep(1.0)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / shot), full_page=True)
    return page, errors


def test_home_shows_one_card_per_paper(app_url, browser):
    page, errors = _open(browser, app_url, "home.png")
    assert "NeurIPS 2025 Best Papers Explorer" in page.title()
    assert not _problems(page), _problems(page)
    cards = page.locator("[class*='st-key-card-']")
    assert cards.count() == len(PAPERS) >= 7  # the seven award papers and the more toy models of 2025
    assert not errors, errors
    page.close()


# Every Altair chart's drawing (canvas or svg) must fit inside the block that holds it.
_OVERFLOWS = """() => {
  const out = [];
  document.querySelectorAll('[data-testid="stVegaLiteChart"]').forEach((el, i) => {
    const holder = el.closest('[data-testid="stColumn"]') || el.closest('[data-testid="stVerticalBlock"]');
    const inner = el.querySelector('canvas, svg');
    if (!holder || !inner) return;
    const h = holder.getBoundingClientRect(), r = inner.getBoundingClientRect();
    if (r.width === 0 || h.width === 0) return;  // inside a closed expander or tab
    if (r.right > h.right + 2 || r.left < h.left - 2) out.push({chart: i, chart_px: Math.round(r.width),
                                                                 holder_px: Math.round(h.width)});
  });
  return out;
}"""


def _problems(page) -> list[str]:
    found = []
    if page.locator("[data-testid='stException']").count():
        found.append("the page shows a Python exception")
    if page.get_by_text("Something went wrong on this page").count():
        found.append("the page failed (Home.run_page caught an error; see the server log)")
    return found


@pytest.mark.parametrize("paper", [p for p in PAPERS if p.has_page], ids=lambda p: p.topic)
def test_every_page_opens_with_its_result_above_the_fold_and_no_chart_overflows(warm_url, browser, paper):
    page, errors = _open(browser, f"{warm_url}/{paper.topic}", f"{paper.topic}.png")
    assert paper.short_title in page.title()
    assert not _problems(page), _problems(page)
    assert not errors, errors
    ledger = page.locator(".st-key-claims-ledger")  # every page opens on its claims table
    page.evaluate("window.scrollTo(0, 0)")
    assert ledger.count() == 1, "no claims table (ui.claims_table), or two"
    box = ledger.bounding_box()
    assert box is not None and box["y"] + 120 <= 900, f"claims table starts below the fold at 1400x900: {box}"
    assert "Status" in ledger.inner_text() and "Paper" in ledger.inner_text() and "Ours" in ledger.inner_text()
    assert page.evaluate(_OVERFLOWS) == [], "a chart is wider than its column at 1400 px"
    page.close()
    narrow, errors = _open(browser, f"{warm_url}/{paper.topic}", f"{paper.topic}-800.png", width=800)
    assert not _problems(narrow) and not errors
    assert narrow.evaluate(_OVERFLOWS) == [], "a chart is wider than its column at 800 px"
    narrow.close()


_BACKGROUND = """() => {
  const c = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor.match(/\\d+/g);
  return (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
}"""


@pytest.mark.parametrize("paper", [p for p in PAPERS if p.has_page], ids=lambda p: p.topic)
def test_every_page_takes_the_tour_in_the_dark_theme_and_gives_a_chart_for_slides(warm_url, browser, paper):
    """Issue 35: ``?tour=1`` opens step 1 (in the dark theme the browser asks for), no chart overflows, and the
    first chart's SVG download is an SVG rendered offline."""
    page, errors = _open(browser, f"{warm_url}/{paper.topic}?tour=1", f"{paper.topic}-tour-dark.png", theme="dark")
    assert not _problems(page), _problems(page)
    assert not errors, errors
    assert page.evaluate(_BACKGROUND) < 0.3, "the dark theme is not applied"
    box = page.locator(".st-key-tour-box")
    assert box.count() == 1 and "Step 1 of" in box.inner_text(), "?tour=1 does not open step 1"
    assert page.evaluate(_OVERFLOWS) == [], "a chart is wider than its column at 1400 px"
    svg = page.get_by_role("button", name="SVG").first
    svg.scroll_into_view_if_needed()
    with page.expect_download(timeout=60_000) as download:
        svg.click()
    content = Path(download.value.path()).read_bytes()
    assert content.lstrip().startswith((b"<svg", b"<?xml")) and b"</svg>" in content[-200:], content[:80]
    page.close()


def test_deep_link_to_a_cold_server_opens_the_page_inside_the_router(browser, tmp_path):
    """A shared link is often the first request a sleeping hosted demo gets."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium")
    paper = next(p for p in PAPERS if p.has_page)
    with serve(tmp_path) as url:
        page, errors = _open(browser, f"{url}/{paper.topic}?", f"cold-{paper.topic}.png")
        assert paper.short_title in page.title()  # the router's tab title, not the legacy file name
        assert page.get_by_text("Page not found").count() == 0
        assert page.locator("[data-testid='stSidebarNav']").get_by_text("Runners-up", exact=True).count() >= 1
        assert page.locator("[data-testid='stException']").count() == 0 and not errors
        page.close()
