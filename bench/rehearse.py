"""Rehearse the hosted demo (Streamlit Community Cloud) from a clean clone, on this machine.

    python bench/rehearse.py                 # or: make rehearse
    python bench/rehearse.py --sessions 16 --keep --venv /tmp/rehearsal-venv   # reuse an installed venv

1. ``git clone`` this repository's committed HEAD into a temporary folder (uncommitted changes are not rehearsed).
2. Install exactly what Community Cloud would: ``requirements.txt`` into a fresh virtual environment (with ``uv``
   when it is on PATH, as Cloud does, else pip). ``requirements.txt`` points at PyTorch's CPU index for
   ``torch==2.13.0+cpu``; when that index cannot be reached from here, the rehearsal says so and installs the same
   requirements from the configured package index (pip's own configuration) instead.
3. Start the server headless under Community Cloud's limits: a memory cap of about 2.7 GB and 2 CPUs, with Cloud's
   forced settings (``client.showErrorDetails=false``, ``runner.fastReruns=true``). The cap, like Cloud's, is on
   resident memory: a cgroup (``systemd-run --scope -p MemoryMax=``) where systemd runs this machine, else a memory
   cgroup made here as a child of this process's own (v1 ``memory.limit_in_bytes`` or v2 ``memory.max``, no swap;
   needs root), else a watchdog that samples the server's resident memory (and the kernel's high-water mark) every
   0.2 s and kills the server above the cap, as an out-of-memory killer would. (``--cap prlimit`` caps address space
   instead: measured here, torch and Streamlit reserve far more address space than they use, and a 2.7 GB
   address-space cap failed thread starts and 49 MB allocations at 760 MiB resident with two sessions: not what
   Cloud enforces.)
4. Open every page with 16 concurrent browser sessions (``bench/load.py``) and start one live computation on every
   paper page (its Run/Train button, every number input and slider at its minimum). On Cloud the browsers run on
   the visitors' own machines; here they share the server's 2 cores, and as equals 16 Chromiums took about 80 % of
   the CPU (the server 149 of 866 CPU-seconds, 23 Nov 2026). So by default (``--browsers background``) the server
   runs in a cpu cgroup with ten times the share of the browsers' (``cpu_cgroups``): they get the cores whenever
   the server leaves them free, and compete with the rest of the machine as one ordinary process group.
5. Print, as the last line, one JSON object: install_s, cold_start_s (server start until the home page is drawn),
   sessions, errors, peak_rss_mb, memory_limit_mb, p50_s, p95_s (every page load), ``pages`` (per page: loads,
   errors, p50_s, p95_s, max_s), ``error_list`` (each error prefixed with the page it came from; a traceback in the
   server log is attributed to the innermost page script in it), ``contention`` and details. Exit 1 on any error
   or a peak over the cap. All traffic is to 127.0.0.1 (besides the package install); every wait is bounded.

``--contention N`` (``make rehearse CONTENTION=1``) runs N extra CPU-bound processes (a Python busy loop each) beside
the server for the whole rehearsal, at the server's priority and in its CPU share, as a shared free tier would:
the server gets about one of the 2 cores, the browsers what the two leave.

Everything it starts is stopped on SIGTERM, SIGINT or SIGHUP (``make`` passes SIGTERM on; Ctrl-C sends SIGINT), on
any failure and at the end (``Reaper``): the server and its session, the browsers and Playwright's driver, the
installer, the busy loops (every descendant of this process: it is their child subreaper, so an orphaned
grandchild comes back to it), the cgroups it made, the temporary clone, virtual environment and browser wrapper.
The server also gets SIGTERM from the kernel if this process dies by SIGKILL (``PR_SET_PDEATHSIG``).
``--stop-after PHASE`` (``clone``, ``server``, ``sessions``) sends this process SIGTERM itself at that point: how the
test of that machinery (tests/test_rehearse.py) stops it cheaply.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
MEMORY_LIMIT_MB = 2575  # ~2.7 GB (2.7e9 bytes) in MiB: Community Cloud's documented limit
CPUS = 2


def log(msg: str) -> None:
    load.log(msg)


def reachable(url: str, timeout: float = 5.0) -> bool:
    try:
        urllib.request.urlopen(url, timeout=timeout)
        return True
    except Exception:  # noqa: BLE001 -- DNS failure, refused, timeout: all mean unreachable
        return False


def clone(dest: Path) -> str:
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(dest)], check=True)
    return subprocess.run(["git", "-C", str(dest), "rev-parse", "--short", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def install(app: Path, venv: Path, notes: list[str]) -> float:
    """Install app/requirements.txt into a fresh venv as Community Cloud would; return seconds."""
    req = app / "requirements.txt"
    lines = req.read_text().splitlines()
    uses_cpu_index = any(CPU_INDEX in ln for ln in lines)
    if uses_cpu_index and not reachable(CPU_INDEX + "/"):
        note = (f"the PyTorch CPU index ({CPU_INDEX}) is unreachable from here: installing requirements.txt "
                f"without it, from the configured package index (pip config)")
        log(note)
        notes.append(note)
        req = app.parent / "requirements.fallback.txt"  # in the work folder (removed at the end), not beside --venv
        req.write_text("\n".join(ln for ln in lines if CPU_INDEX not in ln) + "\n")
    start = time.perf_counter()
    uv = shutil.which("uv")
    if uv:
        notes.append("installer: uv (as Community Cloud)")
        subprocess.run([uv, "venv", "--quiet", str(venv)], check=True)
        cmd = [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "-r", str(req)]
    else:
        notes.append("installer: pip (uv is not installed here; Community Cloud uses uv, falling back to pip)")
        subprocess.run([shutil.which("python3") or sys.executable, "-m", "venv", str(venv)],
                       check=True)
        cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r", str(req)]
    log("installing: " + " ".join(cmd))
    proc = subprocess.run(cmd, cwd=app, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("install failed:\n" + (proc.stdout + proc.stderr)[-3000:])
    return time.perf_counter() - start


class Cgroup:
    """A child of this process's own cgroup for one controller (``memory`` or ``cpu``), v1 or v2, or None where
    this machine does not let us make one (not root, a read-only hierarchy): ``Cgroup.make(...)``."""

    def __init__(self, path: Path, v2: bool):
        self.path, self.v2 = path, v2

    @classmethod
    def make(cls, controller: str, name: str) -> "Cgroup | None":
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return None
        base, v2 = None, False
        for line in lines:
            _, ctrls, rel = line.split(":", 2)
            if controller in ctrls.split(","):  # v1: a hierarchy of its own
                base = Path("/sys/fs/cgroup") / controller / rel.lstrip("/")
        if base is None and Path("/sys/fs/cgroup/cgroup.controllers").exists():  # pure v2
            rel = next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), "/")
            base, v2 = Path("/sys/fs/cgroup") / rel.lstrip("/"), True
            if controller not in (base / "cgroup.controllers").read_text().split():
                return None
        if base is None or not base.is_dir():
            return None
        path = base / f"{name}-{os.getpid()}"
        try:
            path.mkdir()
        except OSError:
            return None
        return cls(path, v2)

    def write(self, name: str, value) -> bool:
        try:
            (self.path / name).write_text(str(value))
            return True
        except OSError:
            return False

    def read_int(self, name: str, key: str | None = None) -> int | None:
        try:
            text = (self.path / name).read_text()
        except OSError:
            return None
        if key is None:
            return int(text.split()[0])
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
        return None

    @property
    def procs(self) -> Path:
        return self.path / "cgroup.procs"

    def wrap(self) -> list[str]:
        """A command prefix that moves the command into this cgroup, then runs it."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.procs)]

    def remove(self) -> None:
        for _ in range(20):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.25)  # its last processes are still exiting


def memory_cgroup(limit_bytes: int) -> Cgroup | None:
    """A memory cgroup capped at ``limit_bytes`` with no swap, as Community Cloud's container."""
    cg = Cgroup.make("memory", "toymodels-server")
    if cg is None:
        return None
    limit, no_swap = ("memory.max", "memory.swap.max") if cg.v2 else \
        ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
    if not cg.write(limit, limit_bytes):
        cg.remove()
        return None
    # no swap: v1 counts memory + swap against memsw, v2 caps swap alone; the file is absent without swap accounting
    cg.write(no_swap, limit_bytes if not cg.v2 else 0)
    return cg


def cgroup_memory_report(cg: Cgroup) -> dict:
    """The cgroup's own peak (resident memory and page cache, as the container's limit counts them) and how many
    times the kernel's out-of-memory killer ran in it."""
    if cg.v2:
        peak, ooms = cg.read_int("memory.peak"), cg.read_int("memory.events", "oom_kill")
    else:
        peak, ooms = cg.read_int("memory.max_usage_in_bytes"), cg.read_int("memory.oom_control", "oom_kill")
    return {"cgroup_peak_mb": round(peak / 2**20, 1) if peak is not None else None, "oom_kills": ooms}


def cpu_cgroups() -> tuple[Cgroup, Cgroup] | None:
    """Two CPU cgroups: the server's (and the contention's busy loops') with ten times the browsers' share, the
    browsers' with ten times the default share; or None where they cannot be made (then the browsers run at
    niceness 10).

    The browsers get only what the server leaves, as if they ran on the visitors' machines; both groups stand
    above other work on this machine, which is not what is being rehearsed: Chromium raises its own processes to
    niceness -8 (weight 6100), so on a shared machine other people's browsers alone outweigh a group at the
    default share. (27 Nov 2026, load 15-40: with the browsers' group at a tenth of the default share, and then
    at the default share, no page loaded in 5 minutes while the server idled at 0-1 % and the busy loop ran.)
    The rehearsal lasts minutes; the Makefile's other work runs niced."""
    server = Cgroup.make("cpu", "toymodels-server-cpu")
    if server is None:
        return None
    browsers = Cgroup.make("cpu", "toymodels-browsers")
    ok = browsers is not None and (server.write("cpu.weight", 10000) if server.v2 else
                                   server.write("cpu.shares", 102400))
    ok = ok and (browsers.write("cpu.weight", 1000) if browsers.v2 else browsers.write("cpu.shares", 10240))
    if not ok:
        for cg in (server, browsers):
            if cg is not None:
                cg.remove()
        return None
    return server, browsers


def limits(notes: list[str], cap: str) -> tuple[list[str], dict, str, float | None, Cgroup | None]:
    """The wrapper command, extra environment, a description of how the memory cap is enforced, the resident-memory
    limit the watchdog enforces (None when the kernel does), and the memory cgroup made here (or None)."""
    limit_bytes = MEMORY_LIMIT_MB * 2**20
    wrap: list[str] = []
    env: dict = {}
    watchdog, cg = None, None
    systemd = Path("/run/systemd/system").is_dir() and shutil.which("systemd-run")
    if cap == "auto" and systemd and subprocess.run(
            ["systemd-run", "--scope", "--quiet", "-p", f"MemoryMax={limit_bytes}", "true"],
            capture_output=True).returncode == 0:
        wrap = ["systemd-run", "--scope", "--quiet", "-p", f"MemoryMax={limit_bytes}", "-p", "MemorySwapMax=0"]
        how = "cgroup (systemd-run MemoryMax)"
    elif cap in ("auto", "cgroup") and (cg := memory_cgroup(limit_bytes)) is not None:
        wrap = cg.wrap()
        how = f"cgroup ({'v2 memory.max' if cg.v2 else 'v1 memory.limit_in_bytes'} = {limit_bytes} bytes, no swap)"
    elif cap == "prlimit":
        wrap = ["prlimit", f"--as={limit_bytes}", "--"]
        env["MALLOC_ARENA_MAX"] = "2"
        how = "prlimit --as (address space; MALLOC_ARENA_MAX=2)"
    else:
        if cap == "cgroup":
            notes.append("no memory cgroup could be made here (not root, or no writable cgroup hierarchy)")
        watchdog = float(MEMORY_LIMIT_MB)
        how = "resident-memory watchdog (kills the server over the cap, as an out-of-memory killer)"
    cpus = len(os.sched_getaffinity(0))
    if cpus > CPUS and shutil.which("taskset"):
        wrap = ["taskset", "-c", ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:CPUS])] + wrap
    notes.append(f"memory cap: {how}; CPUs: {min(cpus, CPUS)}")
    return wrap, env, how, watchdog, cg


def _proc_parents() -> dict[int, list[int]]:
    """Parent pid -> its children's pids, from /proc (every process visible here)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z":  # a zombie has exited already
                children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children, their children, ...)."""
    children, out, todo = _proc_parents(), [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _reap_zombies() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


class Reaper:
    """What the rehearsal started, stopped in one place: on SIGTERM, SIGINT or SIGHUP (``install_signals``), on
    any failure and at the end (``stop``, idempotent). Stops the servers' sessions, then every descendant of this
    process (this process is their child subreaper, so orphans come back to it), then empties and removes the
    cgroups it made, then removes its temporary paths."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self):
        self.pid = os.getpid()
        self.servers: list = []
        self.cgroups: list[Cgroup] = []
        self.paths: list[Path] = []
        self.stopped = False
        self._lock = threading.Lock()
        with contextlib.suppress(Exception):  # Linux: orphaned descendants are re-parented to this process
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER

    def install_signals(self) -> None:
        for sig in self.SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, _frame) -> None:
        log(f"stopped by {signal.Signals(signum).name}: stopping everything the rehearsal started")
        self.stop()
        log("stopped; nothing it started is left")
        os._exit(128 + signum)

    def stop(self, grace: float = 5.0) -> None:
        with self._lock:
            if self.stopped:
                return
            self.stopped = True
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:  # a second Ctrl-C must not interrupt the clean-up
                signal.signal(sig, signal.SIG_IGN)
        for server in self.servers:
            with contextlib.suppress(Exception):
                server.stop()
        for attempt in range(3):  # what is left below this process: browsers, Playwright's driver, installers
            pids = descendants(self.pid)
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGTERM if attempt == 0 else signal.SIGKILL)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(_alive(p) for p in pids):
                _reap_zombies()
                time.sleep(0.1)
            _reap_zombies()
        for cg in self.cgroups:
            with contextlib.suppress(OSError, ValueError):
                for pid in cg.procs.read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
            cg.remove()
        for path in self.paths:
            shutil.rmtree(path, ignore_errors=True)


def busy_loops(n: int, cgroup: Cgroup | None = None) -> list[subprocess.Popen]:
    """``n`` CPU-bound processes (a Python busy loop each), the contention of a shared machine: in the server's cpu
    cgroup when there is one (they compete with the server as equals, as a neighbour on the same host would)."""
    prefix = cgroup.wrap() if cgroup is not None else []
    return [subprocess.Popen(prefix + [sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(n)]


def _stop_here(phase: str, wanted: str | None) -> None:
    if phase == wanted:
        log(f"--stop-after {phase}: sending SIGTERM to this process")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)  # the handler exits


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=16, help="concurrent browser sessions (default 16)")
    ap.add_argument("--port", type=int, default=None, help="server port (default: a free one)")
    ap.add_argument("--venv", type=Path, default=None,
                    help="reuse this virtual environment if it exists (install_s is then null); else create it")
    ap.add_argument("--cap", choices=["auto", "cgroup", "watchdog", "prlimit"], default="auto",
                    help="memory cap: auto (a systemd scope where systemd runs, else a memory cgroup made here, "
                         "else the watchdog), cgroup, watchdog (kill the server when its resident memory passes "
                         "the cap), prlimit (address space)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone (and venv) afterwards")
    ap.add_argument("--page-timeout", type=float, default=300)
    ap.add_argument("--compute-timeout", type=float, default=420)
    ap.add_argument("--deadline", type=float, default=1800, help="stop the sessions after this many seconds")
    ap.add_argument("--contention", type=int, default=0, metavar="N",
                    help="run N extra CPU-bound processes beside the server throughout (default 0)")
    ap.add_argument("--stop-after", choices=["clone", "server", "sessions"], default=None,
                    help="send this process SIGTERM after that phase (to test that it stops everything it started)")
    ap.add_argument("--browsers", choices=["background", "equal"], default="background",
                    help="background (default): the browsers get a tenth of the server's CPU share when both want "
                         "the cores (a cpu cgroup; else niceness 10), as if on the visitors' own machines, as on "
                         "Cloud; equal: they compete with the server for this machine's cores as equals")
    args = ap.parse_args(argv)
    if not Path(load.CHROMIUM).exists():
        print(f"error: {load.CHROMIUM} is missing (apt-get install chromium, or set CHROMIUM)", file=sys.stderr)
        return 2
    load_before = [round(x, 2) for x in os.getloadavg()]  # the machine's load when it started (1, 5, 15 min)
    if not 0 <= args.contention <= 8:
        ap.error("--contention must be 0..8")
    notes: list[str] = []
    reaper = Reaper()
    reaper.install_signals()
    work = Path(tempfile.mkdtemp(prefix="toymodels-rehearsal-"))
    if not args.keep:
        reaper.paths.append(work)
    # every temporary file of what it starts (the browsers' profiles, Playwright's artifacts, the browser wrapper)
    # goes under one folder of its own, removed at the end even after a browser was killed (a short path under /tmp:
    # Chromium's socket path must stay under 108 characters)
    scratch = Path(tempfile.mkdtemp(prefix="toymodels-tmp-", dir="/tmp" if Path("/tmp").is_dir() else None))
    reaper.paths.append(scratch)
    os.environ["TMPDIR"] = tempfile.tempdir = str(scratch)
    log(f"working in {work}; temporary files of the browsers under {scratch}")
    app = work / "app"
    server, mem_cg, cpu_cg, mem_report, hogs = None, None, None, {}, []
    try:
        commit = clone(app)
        log(f"clean clone of {commit} in {app}")
        _stop_here("clone", args.stop_after)
        venv = args.venv or work / "venv"
        if args.venv and (venv / "bin" / "python").exists():
            install_s = None
            notes.append(f"reused the virtual environment {venv} (no install timed)")
        else:
            install_s = install(app, venv, notes)
            log(f"installed in {install_s:.0f} s")
        python = str(venv / "bin" / "python")
        torch_version, python_version = (subprocess.run(
            [python, "-c", "import sys, torch; print(torch.__version__, sys.version.split()[0])"],
            capture_output=True, text=True).stdout.split() + ["?", "?"])[:2]  # now: the venv goes at the end
        wrap, env, how, watchdog, mem_cg = limits(notes, args.cap)
        reaper.cgroups += [mem_cg] if mem_cg else []
        executable = load.CHROMIUM
        server_cpu = None
        if args.browsers == "background":
            pair = cpu_cgroups()
            server_cpu, cpu_cg = pair if pair else (None, None)
            reaper.cgroups += list(pair or ())
            if server_cpu is not None:
                wrap = server_cpu.wrap() + wrap
            executable = load.wrapped(load.CHROMIUM, nice=0 if cpu_cg else 10,
                                      cgroup_procs=cpu_cg.procs if cpu_cg else None)
            if executable != load.CHROMIUM:
                reaper.paths.append(Path(executable).parent)
            notes.append("browsers: " + ("a cpu cgroup at ten times the default share, the server's (and the busy "
                                         "loops') at ten times theirs" if cpu_cg else
                                         "niceness 10 (no cpu cgroup could be made; Chromium resets it in part)"))
        env["TOYMODELS_CACHE"] = str(work / "cache")
        paths, topics = load.page_paths(app)
        server = load.Server(app, python=python, port=args.port, wrap=wrap, env=env,
                             extra_flags=["--client.showErrorDetails", "false", "--runner.fastReruns", "true"],
                             log_path=work / "server.log")
        reaper.servers.append(server)
        if args.contention:
            hogs = busy_loops(args.contention, server_cpu)
            notes.append(f"contention: {args.contention} extra CPU-bound process(es) (a Python busy loop each) beside "
                         "the server throughout, at its priority")
            log(f"contention: {args.contention} busy loop(s) started (pids {', '.join(str(h.pid) for h in hogs)})")
        log(f"starting the server on {server.url} under {how}")
        healthy_s = server.start(timeout=300)
        _stop_here("server", args.stop_after)
        first_s = asyncio.run(load.first_render(server.url, args.page_timeout))
        cold_start_s = time.perf_counter() - server.started_at
        log(f"cold start: healthy after {healthy_s:.1f} s, home page drawn after {cold_start_s:.1f} s; "
            f"{args.sessions} sessions over {len(paths)} pages, one computation on each of {len(topics)} pages")
        if args.stop_after == "sessions":  # SIGTERM while the browsers are busy
            threading.Timer(20.0, _stop_here, ("sessions", "sessions")).start()
        out = load.run_load(server.url, args.sessions, min(len(topics), args.sessions), paths, topics,
                            server.proc.pid, server, args.page_timeout, args.compute_timeout, args.deadline,
                            limit_mb=watchdog, executable=executable)
    finally:
        if server:
            server.stop()
        hog_cpu = [round(load.cpu_seconds(h.pid), 1) for h in hogs]  # before they are stopped (and reaped)
        if mem_cg:
            mem_report = cgroup_memory_report(mem_cg)
        reaper.stop()
    result = {
        "install_s": round(install_s, 1) if install_s is not None else None,
        "cold_start_s": round(cold_start_s, 1),
        "sessions": out["sessions"],
        "errors": out["errors"],
        "peak_rss_mb": out["peak_rss_mb"],
        "memory_limit_mb": MEMORY_LIMIT_MB,
        "p50_s": out["p50_s"],
        "p95_s": out["p95_s"],
        "max_s": out["max_s"],
        "page_loads": out["page_loads"],
        "server_healthy_s": round(healthy_s, 1),
        "first_render_s": round(first_s, 1),
        "computations": out["computations"],
        "error_list": out["error_list"],
        "commit": commit,
        "torch": torch_version,
        "python": python_version,
        "memory_cap": how,
        "notes": notes,
        "wall_s": out["wall_s"],
        "server_cpu_s": out.get("server_cpu_s"),
        "browsers": args.browsers,
        "contention": args.contention,
        "contention_cpu_s": hog_cpu,
        "load_before": load_before,
        "pages": out["pages"],
        **mem_report,
    }
    if mem_report.get("oom_kills"):
        result["errors"] += mem_report["oom_kills"]
        result["error_list"].insert(0, f"the kernel's out-of-memory killer ran {mem_report['oom_kills']} time(s) in "
                                       f"the server's {MEMORY_LIMIT_MB} MiB cgroup")
    for e in out["error_list"]:
        log(f"error: {e}")
    over = result["peak_rss_mb"] is not None and result["peak_rss_mb"] > MEMORY_LIMIT_MB
    if over:
        log(f"peak resident memory {result['peak_rss_mb']} MiB is over the {MEMORY_LIMIT_MB} MiB cap")
    print(json.dumps(result))
    return 1 if result["errors"] or over else 0


if __name__ == "__main__":
    sys.exit(main())
