"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium for the run.

The server is the course's own JupyterLab (``sys.executable -m jupyterlab``) on 127.0.0.1, a
free port, no token, with private runtime/config/data/settings directories in a temporary
folder, so nothing on this machine (``~/.jupyter``, a running Lab) leaks in or out. The course's
``jupyter/overrides.json`` (what ``make lab`` installs) is copied into the private application
settings directory, plus one test-only setting: autosave off, so running a notebook in the
browser never writes into the checkout.

The server is stopped by its own PID (SIGTERM, then SIGKILL after a timeout), and every process
it started (kernels) is killed by PID if still alive, even when a test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# tools/run_tests.py's search, which leaves the learner copies to these tests when it finds one.
from run_tests import INSTALL_CHROMIUM, find_chromium  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Test-only JupyterLab setting, merged over jupyter/overrides.json: never save a notebook we run.
TEST_ONLY_SETTINGS = {"@jupyterlab/docmanager-extension:plugin": {"autosave": False}}
SERVER_START_TIMEOUT = 90
SERVER_STOP_TIMEOUT = 10


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    """PIDs of every living descendant of ``pid`` (read from /proc; empty elsewhere)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: the ppid follows the last ')'.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def merged_overrides() -> dict:
    """jupyter/overrides.json (the course's settings) with the test-only settings on top."""
    settings = json.loads((ROOT / "jupyter" / "overrides.json").read_text())
    for plugin, values in TEST_ONLY_SETTINGS.items():
        settings.setdefault(plugin, {}).update(values)
    return settings


@dataclass
class LabServer:
    url: str
    process: subprocess.Popen
    log_path: Path
    tmp: Path
    kernel_pids: set[int] = field(default_factory=set)
    threads: list[threading.Thread] = field(default_factory=list)
    background_errors: list[str] = field(default_factory=list)

    def api(self, method: str, path: str, body: dict | None = None) -> object:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def start_session(self, path: str) -> None:
        """Start the notebook's kernel in the background; JupyterLab connects to a running
        session of the same path when it opens ``path``, so the kernel boots while the page
        loads instead of after. (Should JupyterLab look before the session exists, it starts a
        second kernel: the test still holds, and the teardown closes both.)"""
        body = {"path": path, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
        self._background(self.api, "POST", "/api/sessions", body)

    def close_all_sessions(self) -> None:
        self.close_sessions(None)

    def close_sessions(self, path: str | None) -> None:
        """Shut down the sessions of ``path`` (None: every session and every kernel) running
        now (REST API; needs disable_check_xsrf). The list is taken now; the shutdowns finish
        in the background."""
        self.kernel_pids.update(_children(self.process.pid))
        sessions = [s["id"] for s in self.api("GET", "/api/sessions") if path in (None, s["path"])]
        kernels = [k["id"] for k in self.api("GET", "/api/kernels")] if path is None else []

        def shut_down() -> None:
            for session in sessions:
                self._delete(f"/api/sessions/{session}")
            running = {k["id"] for k in self.api("GET", "/api/kernels")}
            for kernel in running & set(kernels):
                self._delete(f"/api/kernels/{kernel}")

        self._background(shut_down)

    def _delete(self, path: str) -> None:
        """DELETE ``path``; already gone (404: another shutdown took it first) is fine."""
        try:
            self.api("DELETE", path)
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise

    def _background(self, function, *args) -> None:
        def run() -> None:
            try:
                function(*args)
            except Exception as error:  # noqa: BLE001 - reported when the server stops
                self.background_errors.append(f"{function.__name__}{args[:2]}: {error!r}")

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.threads.append(thread)

    def join(self, timeout: float = 30) -> None:
        for thread in self.threads:
            thread.join(timeout)
        self.threads.clear()

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"


def _stop(process: subprocess.Popen, extra_pids: set[int]) -> None:
    """SIGTERM the server (it shuts its kernels down), SIGKILL after a timeout; then kill, by
    PID, any descendant still alive (kernels are started in their own process sessions)."""
    pids = set(extra_pids) | set(_children(process.pid))
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)  # the server's own group (new session)
            except ProcessLookupError:
                pass
            process.kill()
            process.wait(timeout=SERVER_STOP_TIMEOUT)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class CpuMeter:
    """CPU time (user + system) of this process and every descendant (JupyterLab, its kernels,
    Chromium, Playwright's driver) over the session, read from /proc every 0.5 s: a process
    counts up to its last reading before it exits (a kernel's last half second may be missed).

    The suite is CPU-bound on two cores, and the same work has taken from 357 to 483 s of CPU
    on this machine from one day to another: the wall time alone does not say whether the
    suite grew or the machine was slower. (Nothing on other systems: no /proc.)
    """

    def __init__(self, interval: float = 0.5):
        self.interval, self.seen = interval, {}  # (pid, start time) -> CPU seconds
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if Path("/proc/self/stat").exists():
            self._thread.start()

    def _read(self) -> None:
        stats: dict[int, list[str]] = {}
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, ValueError):
                continue
        children: dict[int, list[int]] = {}
        for pid, fields in stats.items():
            children.setdefault(int(fields[1]), []).append(pid)
        todo = [os.getpid()]
        while todo:
            pid = todo.pop()
            fields = stats.get(pid)
            if fields:  # utime, stime (fields 14, 15 of stat); start time (22) tells reused PIDs
                self.seen[(pid, fields[19])] = (int(fields[11]) + int(fields[12])) / self.tick
            todo.extend(children.get(pid, []))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._read()

    def stop(self) -> str:
        """Stop measuring; a line saying the session's wall time and CPU time."""
        wall = time.perf_counter() - self.start
        if not self._thread.is_alive():
            return f"browser tests: {wall:.1f} s"
        self._stop.set()
        self._thread.join()
        self._read()
        cpu = sum(self.seen.values())
        return (
            f"browser tests: {wall:.1f} s, {cpu:.0f} s of CPU in their processes "
            f"({cpu / wall:.2f} of {os.cpu_count()} cores busy on average)"
        )


@pytest.fixture(scope="session", autouse=True)
def _cpu_meter():
    meter = CpuMeter()
    yield meter
    print("\n" + meter.stop())


@pytest.fixture(scope="session")
def lab_server():
    chromium = find_chromium()
    if chromium is None:
        pytest.skip(f"no Chromium: {INSTALL_CHROMIUM} (never `playwright install`)")
    tmp = Path(tempfile.mkdtemp(prefix="course-browser-tests-"))
    dirs = {
        name: tmp / name
        for name in (
            "runtime",
            "config",
            "data",
            "app-settings",
            "user-settings",
            "workspaces",
            "checkpoints",
        )
    }
    for d in dirs.values():
        d.mkdir()
    (dirs["app-settings"] / "overrides.json").write_text(json.dumps(merged_overrides(), indent=2))
    # No "is a JupyterLab rebuild needed?" request on every page load (/lab/api/build: about
    # 1 s of server CPU per load here). The extensions are prebuilt pip packages: nothing to
    # build, and this check only ever shows a "Build recommended" dialog.
    (dirs["config"] / "labconfig").mkdir()
    (dirs["config"] / "labconfig" / "page_config.json").write_text(
        json.dumps({"buildCheck": False, "buildAvailable": False})
    )
    env = dict(
        os.environ,
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["user-settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        IPYTHONDIR=str(tmp / "ipython"),
        MPLCONFIGDIR=str(tmp / "matplotlib"),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={ROOT}",
        "--ServerApp.disable_check_xsrf=True",  # lets the fixture DELETE sessions
        f"--LabApp.app_settings_dir={dirs['app-settings']}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: see LabPage
        # JupyterLab makes a checkpoint of each file it opens: keep those out of the checkout.
        f"--FileCheckpoints.checkpoint_dir={dirs['checkpoints']}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log_path = tmp / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    server = LabServer(f"http://127.0.0.1:{port}", process, log_path, tmp)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n{server.log_tail()}")
            try:
                server.api("GET", "/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer /api/status:\n{server.log_tail()}")
                time.sleep(0.25)
        yield server
    finally:
        server.join()
        if server.background_errors:
            print("\nbackground REST calls that failed:", *server.background_errors, sep="\n  ")
        _stop(process, server.kernel_pids)
        log.close()
        leftover = [p for p in {process.pid, *server.kernel_pids} if _alive(p)]
        shutil.rmtree(tmp, ignore_errors=True)
        assert not leftover, f"processes still running after the server stopped: {leftover}"


@pytest.fixture(scope="session")
def playwright_session():
    """The one Playwright of the session: its sync API runs an event loop, and a second one
    started beside it (another test module's) fails ("Sync API inside the asyncio loop")."""
    from playwright.sync_api import sync_playwright

    if find_chromium() is None:
        pytest.skip("no Chromium: the browser tests need it (see tools/run_tests.py)")
    playwright = sync_playwright().start()
    try:
        yield playwright
    finally:
        playwright.stop()


@pytest.fixture(scope="session")
def browser(lab_server, playwright_session):
    executable = find_chromium()
    chromium = playwright_session.chromium.launch(
        executable_path=executable, args=CHROMIUM_ARGS, headless=True
    )
    print(f"\n  {executable}, version {chromium.version}")  # which build the times are of
    try:
        yield chromium
    finally:
        chromium.close()


# JupyterLab's application object (``--LabApp.expose_app_in_browser``): the tests open and
# close notebooks through its commands, as a learner does from the file browser, instead of
# loading the whole page again for each one (the suite's Chromium and server CPU time: 444 s
# with a page load per notebook, 270 s without, both at load average ~8).
APP_RESTORED = "async () => { await window.jupyterapp.restored; }"
OPEN_DOCUMENT = """
(path) => {
  // The default viewer of the file (a lesson's .py opens with jupytext's, as in the tree).
  window.jupyterapp.commands.execute('docmanager:open', {path});
}
"""
# Close every document (no "save your changes?" dialog: autosave is off, and the tests never
# save); the Launcher stays.
CLOSE_DOCUMENTS = """
() => {
  const app = window.jupyterapp;
  for (const widget of Array.from(app.shell.widgets('main'))) {
    if (!widget.context) continue;
    widget.context.model.dirty = false;
    widget.dispose();
  }
}
"""


class LabPage:
    """One browser tab (in its own browser context) holding one JupyterLab, loaded once.

    Collects the console errors, page errors and write requests to ``/api/contents`` seen since
    it last started opening a notebook.
    """

    def __init__(self, page, server: LabServer):
        self.page, self.server = page, server
        self.path: str | None = None  # the notebook this tab holds (or is opening)
        self.lab_started = self.lab_ready = False
        self.prestarted = False  # its notebook's kernel was started through the REST API
        # perf_counter() when Run All was started in this tab ahead of its test (see
        # test_lessons_in_browser.run_ahead), None otherwise.
        self.run_started: float | None = None
        self.console_errors: list[str] = []
        self.writes: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"pageerror: {error}"))
        page.on("dialog", lambda dialog: dialog.accept())  # "leave the page?" on navigation
        page.on("request", self._on_request)

    def _on_console(self, message) -> None:
        if message.type == "error":
            location = message.location.get("url", "") if message.location else ""
            self.console_errors.append(f"{message.text} ({location})")

    def _on_request(self, request) -> None:
        # Checkpoints go to the server's private checkpoint_dir, not into the checkout.
        if "/checkpoints" in request.url.split("?")[0]:
            return
        if "/api/contents" in request.url and request.method not in ("GET", "HEAD"):
            self.writes.append(f"{request.method} {request.url}")

    def start_lab(self) -> None:
        """Start loading JupyterLab in this tab (``/lab?reset``: the default layout); returns
        at once (:meth:`load` waits for it)."""
        if not self.lab_started:
            self.page.goto(f"{self.server.url}/lab?reset", wait_until="commit")
            self.lab_started = True

    def load(self, path: str, prestart: bool) -> None:
        """Start opening ``path`` in this tab's JupyterLab (returns once asked; the caller
        waits for what it needs).

        With ``prestart`` the kernel is started through the REST API first, so that it boots
        while JupyterLab opens the notebook (JupyterLab connects to a running session of the
        same path).
        """
        self.blank()
        if self.lab_ready:  # (what JupyterLab's own load logged counts for its first notebook)
            self.console_errors.clear()
            self.writes.clear()
        self.prestarted = prestart
        if prestart:
            self.server.start_session(path)
        if not self.lab_ready:
            self.start_lab()
            self.page.wait_for_function("() => !!window.jupyterapp", timeout=60_000)
            self.page.evaluate(APP_RESTORED)
            self.lab_ready = True
        self.path = path
        self.run_started = None
        self.page.evaluate(OPEN_DOCUMENT, path)

    def blank(self) -> None:
        """Close the notebook, then shut its kernels down."""
        if self.path is None:
            return
        path, self.path, self.run_started = self.path, None, None
        try:
            self.page.evaluate(CLOSE_DOCUMENTS)
        finally:
            self.server.close_sessions(path)


class Lab:
    """What a test drives: the tab holding its notebook (``page``), and a second tab that
    opens the next test's notebook meanwhile (:meth:`preload`), so that its kernel start and
    Run All overlap the current notebook's checks. Each notebook gets a kernel of its own."""

    def __init__(self, tabs: list[LabPage], server: LabServer):
        self.tabs, self.server = tabs, server
        self.current = tabs[0]

    @property
    def page(self):
        return self.current.page

    @property
    def console_errors(self) -> list[str]:
        return self.current.console_errors

    @property
    def writes(self) -> list[str]:
        return self.current.writes

    def open(self, path: str, prestart: bool = True) -> None:
        """Make ``path`` the current tab's notebook: the tab preloaded with it, or else open
        it in the current tab. Returns once opening started; the caller waits for what it
        needs."""
        preloaded = [
            t
            for t in self.tabs
            if t.path == path and t is not self.current and t.prestarted == prestart
        ]
        if preloaded:
            self.current.blank()
            self.current = preloaded[0]
            return
        self.current.load(path, prestart)

    @property
    def other(self) -> LabPage:
        """The tab that is not the current one."""
        return next(t for t in self.tabs if t is not self.current)

    def preload(self, path: str, prestart: bool = True) -> None:
        """Start opening ``path`` (kernel included) in the other tab."""
        if self.other.path != path:
            self.other.load(path, prestart=prestart)

    def leave(self) -> None:
        """After a test: the current tab closes its notebook and its kernels are shut down
        (a preloaded tab keeps its own)."""
        self.current.blank()


@pytest.fixture(scope="session")
def _lab_session(browser, lab_server):
    contexts, tabs = [], []
    try:
        for _ in range(2):
            # A context each: JupyterLab refuses two windows on one workspace in one profile.
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            contexts.append(context)
            page = context.new_page()
            page.set_default_timeout(30_000)
            tabs.append(LabPage(page, lab_server))
        for tab in tabs:  # both JupyterLabs load at once, before the first notebook opens
            tab.start_lab()
        yield Lab(tabs, lab_server)
    finally:
        for context in contexts:
            context.close()
        lab_server.close_all_sessions()


@pytest.fixture
def lab(_lab_session):
    """The shared tabs; the current notebook's kernels are shut down after the test."""
    try:
        yield _lab_session
    finally:
        _lab_session.leave()
