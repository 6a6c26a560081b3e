"""What the browser scripts share: Debian's Chromium, a local server, and "the page is drawn and idle".

Used by ``tests/test_browser.py``, ``bench/bench_pages.py``, ``bench/load.py`` and ``bench/rehearse.py``.

A page is *settled* when both hold, without a break, for ``settle_ms``:

- Streamlit has finished the script run: the app root's ``data-test-script-state`` is ``notRunning``
  (a page may rerun itself once, e.g. after syncing its link, hence the settle time);
- every element is drawn: no element container still shows the placeholder (``stSkeleton``) that Streamlit draws
  while the code of a lazily loaded widget or chart is being fetched. Under load this takes seconds: the script
  run has ended, the text is there, but the page's select boxes, buttons and charts are not yet.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-dev-shm-usage"]

#: placeholders of elements whose code is still loading
PENDING = "[data-testid='stElementContainer'] > [data-testid='stSkeleton']"

#: a predicate for ``page.wait_for_function(SETTLED_JS, arg=[settle_ms])``
SETTLED_JS = """([settle]) => {
  const el = document.querySelector('[data-test-script-state]');
  const idle = el && el.getAttribute('data-test-script-state') === 'notRunning'
               && !document.querySelector("%s");
  const now = performance.now();
  if (!idle) { window.__toySettledSince = undefined; return false; }
  if (window.__toySettledSince === undefined) window.__toySettledSince = now;
  return now - window.__toySettledSince >= settle;
}""" % PENDING.replace('"', '\\"')


def wrapped(executable: str = CHROMIUM, nice: int = 0, cgroup_procs: Path | None = None) -> str:
    """``executable``, or a wrapper script that first moves itself into a cgroup (``cgroup_procs``: that cgroup's
    ``cgroup.procs``) and/or lowers its priority (``nice``), then runs it: every process the browser starts
    inherits both. A load test's browsers stand in for visitors' own machines: in a cgroup with a small CPU share
    (or at a lower priority) they take only the CPU the server leaves, as if they ran elsewhere. Chromium, run as
    root, resets the niceness of its own processes (seen here: -8 to 5), so ``nice`` is the weaker of the two."""
    if nice <= 0 and cgroup_procs is None:
        return executable
    wrapper = Path(tempfile.mkdtemp(prefix="toymodels-chromium-")) / "chromium"
    lines = ["#!/bin/sh"]
    if cgroup_procs is not None:
        lines.append(f'echo $$ > "{cgroup_procs}" || exit 1')
    lines.append(f'exec {"nice -n %d " % int(nice) if nice > 0 else ""}"{executable}" "$@"')
    wrapper.write_text("\n".join(lines) + "\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def free_port(preferred: int | None = None) -> int:
    """``preferred`` if it is free on 127.0.0.1, else any free port."""
    if preferred:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", preferred))
                return preferred
            except OSError:
                pass
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def streamlit_cmd(port: int, python: str = sys.executable) -> list[str]:
    return [python, "-m", "streamlit", "run", "Home.py", "--server.headless", "true", "--server.address",
            "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> float:
    """Seconds until ``url``'s health endpoint answers; RuntimeError if the server exits or stays silent."""
    start, deadline = time.perf_counter(), time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                return time.perf_counter() - start
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def serve(tmp_dir: Path | None = None, env: dict | None = None, port: int | None = None):
    """``streamlit run Home.py`` on a free localhost port (``port`` if it is free) with an empty disk cache; yields
    its URL once healthy, stops it afterwards. Its output goes to ``tmp_dir/streamlit.log``; a server that fails to
    start raises RuntimeError with the log's tail."""
    with contextlib.ExitStack() as stack:
        if tmp_dir is None:
            tmp_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="toymodels-serve-")))
        tmp_dir = Path(tmp_dir)
        port = free_port(port)
        log = stack.enter_context(open(tmp_dir / "streamlit.log", "w+"))
        proc = subprocess.Popen(streamlit_cmd(port), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env=dict(os.environ, TOYMODELS_CACHE=str(tmp_dir / "cache"), **(env or {})))
        url = f"http://127.0.0.1:{port}"
        try:
            try:
                wait_healthy(url, proc)
            except RuntimeError as exc:
                log.flush()
                tail = "\n".join((tmp_dir / "streamlit.log").read_text(errors="replace").splitlines()[-30:])
                raise RuntimeError(f"{exc}:\n{tail}") from None
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def wait_settled(page, timeout_s: float = 120, settle_ms: int = 400, polling: int = 50) -> None:
    """Block (Playwright's sync API) until the page is settled (see the module's docstring)."""
    page.wait_for_function(SETTLED_JS, arg=[settle_ms], timeout=timeout_s * 1000, polling=polling)


async def wait_settled_async(page, timeout_s: float = 120, settle_ms: int = 750, polling: int = 250) -> None:
    """The same, for Playwright's async API."""
    await page.wait_for_function(SETTLED_JS, arg=[settle_ms], timeout=timeout_s * 1000, polling=polling)
