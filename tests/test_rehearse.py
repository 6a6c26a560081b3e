"""Issue #38 (2): a rehearsal stopped from outside (SIGTERM from make or a timeout, Ctrl-C's SIGINT, a closed
terminal's SIGHUP) or failing leaves no process, cgroup or temporary folder behind.

Every process the rehearsal starts inherits its environment, so a marker variable set here finds them all, however
they were started (own session, orphaned, renamed): after the rehearsal has exited, no process may carry it.
No Streamlit here (the rehearsal runs its own server in a child process).
"""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _carrying(marker: str) -> list[str]:
    """Live processes whose environment holds ``marker`` (their pid and command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if marker.encode() not in Path(f"/proc/{entry}/environ").read_bytes():
                continue
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state != "Z":
            found.append(f"{entry} {cmd[:120]}")
    return found


def _wait_gone(marker: str, seconds: float = 10) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _carrying(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


CHILD = textwrap.dedent("""
    import json, subprocess, sys, tempfile, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import load, rehearse

    reaper = rehearse.Reaper()
    reaper.install_signals()
    tmp = Path(tempfile.mkdtemp(prefix="toymodels-reaper-test-"))
    reaper.paths.append(tmp)

    class FakeServer:  # a process in a session of its own, with a child of its own, as streamlit under a wrapper
        def __init__(self):
            self.proc = subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300"], start_new_session=True)
        def stop(self):
            load.stop_group(self.proc)

    reaper.servers.append(FakeServer())
    hogs = rehearse.busy_loops(1)
    # an orphan: its parent exits at once, so it is re-parented (to this process, the subreaper)
    subprocess.run(["sh", "-c", "(sleep 300 &) ; exit 0"])
    print(json.dumps({"tmp": str(tmp)}), flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_the_reaper_stops_everything_on_a_signal(sig, tmp_path):
    marker = f"TOYMODELS_REHEARSAL_MARK={uuid.uuid4().hex}"
    env = dict(os.environ, **dict([marker.split("=")]))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT / "bench")], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(child.stdout.readline())
        deadline = time.monotonic() + 20
        while len(_carrying(marker)) < 6 and time.monotonic() < deadline:  # child, server, its 2 sleeps, hog, orphan
            time.sleep(0.1)
        assert len(_carrying(marker)) >= 6, _carrying(marker)
        child.send_signal(sig)
        rc = child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    assert rc == 128 + sig, child.stderr.read()[-2000:]
    assert _wait_gone(marker) == []
    assert not Path(info["tmp"]).exists()


def _rehearse(stop_after: str, tmp_path: Path, timeout: float) -> tuple[int, str]:
    """Run bench/rehearse.py on the committed HEAD with this interpreter's environment (no install), 2 sessions,
    stopping itself with SIGTERM after ``stop_after``; return its exit code and its log."""
    marker = f"TOYMODELS_REHEARSAL_MARK={uuid.uuid4().hex}"
    env = dict(os.environ, TMPDIR=str(tmp_path), **dict([marker.split("=")]))
    env.pop("TOYMODELS_DEVICE", None)
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "rehearse.py"), "--venv", sys.prefix,
                             "--sessions", "2", "--stop-after", stop_after, "--page-timeout", "120"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    left = _wait_gone(marker)
    assert left == [], f"still running after the rehearsal stopped: {left}\n{out[-3000:]}"
    assert list(tmp_path.iterdir()) == [], f"left in TMPDIR: {list(tmp_path.iterdir())}"
    scratch = re.search(r"temporary files of the browsers under (\S+)", out)
    assert scratch and not Path(scratch.group(1)).exists(), out[-2000:]
    cgroups = [p for p in Path("/sys/fs/cgroup").glob("**/toymodels-*") if p.is_dir()]
    assert not [p for p in cgroups if p.name.endswith(f"-{proc.pid}")], cgroups
    return proc.returncode, out


@pytest.mark.browser
def test_a_rehearsal_stopped_once_its_server_runs_leaves_nothing(tmp_path):
    """SIGTERM once the server (in its own session, under its memory cgroup) is healthy: exit 143, no process,
    no cgroup, no temporary clone left."""
    if not Path(os.environ.get("CHROMIUM", "/usr/bin/chromium")).exists():
        pytest.skip("Chromium is missing (the rehearsal needs it)")
    rc, out = _rehearse("server", tmp_path, timeout=400)
    assert rc == 128 + signal.SIGTERM, out[-3000:]
    assert "stopped by SIGTERM" in out and "nothing it started is left" in out


@pytest.mark.slow
@pytest.mark.browser
def test_a_rehearsal_stopped_while_its_browsers_load_pages_leaves_nothing(tmp_path):
    """SIGTERM 20 s into the sessions (Playwright's driver and Chromium busy, in their cpu cgroup)."""
    if not Path(os.environ.get("CHROMIUM", "/usr/bin/chromium")).exists():
        pytest.skip("Chromium is missing (the rehearsal needs it)")
    rc, out = _rehearse("sessions", tmp_path, timeout=600)
    assert rc == 128 + signal.SIGTERM, out[-3000:]
    assert "session" in out and "stopped by SIGTERM" in out


def test_a_rehearsal_that_fails_leaves_nothing(tmp_path):
    """A server that cannot start (here: a virtual environment whose python exits at once) is a failure: the
    rehearsal exits 1 and stops what it had started (the contention's busy loop), removing its folders."""
    if not Path(os.environ.get("CHROMIUM", "/usr/bin/chromium")).exists():
        pytest.skip("Chromium is missing (the rehearsal checks for it first)")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nexit 3\n")
    (venv / "bin" / "python").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    marker = f"TOYMODELS_REHEARSAL_MARK={uuid.uuid4().hex}"
    env = dict(os.environ, TMPDIR=str(work), **dict([marker.split("=")]))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "rehearse.py"), "--venv", str(venv),
                           "--contention", "1", "--cap", "watchdog"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1 and "the server exited with 3" in proc.stderr, proc.stderr[-2000:]
    assert "contention: 1 busy loop(s) started" in proc.stderr
    assert _wait_gone(marker) == []
    assert list(work.iterdir()) == []
    scratch = re.search(r"temporary files of the browsers under (\S+)", proc.stderr)
    assert scratch and not Path(scratch.group(1)).exists()
