"""The browser scripts' shared pieces (bench/browserkit.py): the wrapper that puts the browsers in a cgroup or at a
lower priority, and the "settled" predicate."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from tests import browserkit  # noqa: E402


def test_no_wrapper_without_a_reason():
    assert browserkit.wrapped("/bin/echo") == "/bin/echo"


def test_wrapper_passes_every_argument_and_joins_the_cgroup(tmp_path):
    procs = tmp_path / "cgroup.procs"  # a plain file stands in for the cgroup's process list
    exe = browserkit.wrapped("/bin/sh", nice=5, cgroup_procs=procs)
    out = subprocess.run([exe, "-c", 'echo "$$ $1|$2"; nice', "sh", "x", "two words"], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    pid, args = out[0].split(" ", 1)
    assert args == "x|two words"                   # arguments arrive unchanged, spaces included
    assert procs.read_text().strip() == pid        # the process wrote its own pid, then exec'd (same pid)
    assert int(out[1]) == min(19, os.nice(0) + 5)  # and runs 5 steps nicer than its parent (19 at most)


def test_wrapper_refuses_to_run_outside_its_cgroup(tmp_path):
    exe = browserkit.wrapped("/bin/echo", cgroup_procs=tmp_path / "missing" / "cgroup.procs")
    assert subprocess.run([exe, "hi"], capture_output=True).returncode == 1


@pytest.mark.browser
def test_settled_waits_for_lazily_loaded_elements_too():
    """In Chromium, on a hand-made page: a finished script run with a widget still a placeholder is not settled;
    once the placeholder is replaced, it is (after the settle time); a rerun starting again un-settles it."""
    if not Path(browserkit.CHROMIUM).exists():
        pytest.skip("no Chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browserkit.CHROMIUM, headless=True, args=browserkit.FLAGS)
        page = browser.new_page()
        page.set_content('<div id="app" data-test-script-state="notRunning">'
                         '<div data-testid="stElementContainer" id="w"><div data-testid="stSkeleton"></div></div>'
                         '</div>')
        settled = f"({browserkit.SETTLED_JS})([100])"
        for _ in range(5):
            assert page.evaluate(settled) is False
            page.wait_for_timeout(50)
        page.evaluate("document.getElementById('w').innerHTML = '<button>Train</button>'")
        browserkit.wait_settled(page, timeout_s=5, settle_ms=100)
        page.evaluate("document.getElementById('app').setAttribute('data-test-script-state', 'running')")
        assert page.evaluate(settled) is False
        browser.close()
