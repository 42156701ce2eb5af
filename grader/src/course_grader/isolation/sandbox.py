"""Run one submitted notebook the way the grader does: fresh kernel, own folder, hard limits.

Every code cell runs in order, errors or not (as nbgrader does), so a typo in one cell does not
cost the exercises after it. The limits:

* time per cell and per notebook: when one runs out the kernel is killed (with its process
  group), not asked to stop; the cells after it do not run;
* memory: ``RLIMIT_AS`` on the kernel process (an allocation beyond it raises MemoryError in
  the student's code); in the sandbox, where control groups can be made, the same limit on the
  kernel's processes together, with the files they write in memory (:mod:`.cgroup`);
* output: nothing the notebook prints or displays is kept (only its size is counted), so a
  notebook that prints millions of lines costs the grader no memory;
* files: the kernel's working folder is a temporary copy; the submission is only read.

After the notebook's cells, the grader checks every exercise and prediction itself
(:mod:`course_grader.isolation.remote`): it draws the cases and judges the outputs in its own
process, and calls the student's functions in the kernel.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from helpers.checks import grading

from . import bubblewrap, cgroup, peak, wire
from .remote import Channel, grade_in_kernel

if TYPE_CHECKING:
    import nbformat
    from nbclient import NotebookClient

# nbformat and nbclient are imported when a notebook is run, not with this module: nbformat's
# schema validation imports jsonschema, whose format checkers cost seconds to import
# (rfc3987_syntax builds a grammar), and a rerun that takes every notebook from the cache
# needs neither.


@dataclass
class Limits:
    cell_seconds: float = 60.0
    notebook_seconds: float = 300.0
    check_seconds: float = 5.0  # one call of the learner's function inside a check
    memory_bytes: int | None = 4 * 2**30
    sandbox: bool = True  # each kernel in bubblewrap where it can run (isolation.bubblewrap)
    # Sandboxed and run as root: the kernel's work folder (its copy of the notebook, what it
    # writes there) and its folder for the grader's calls are tmpfs of this size each, so no
    # notebook fills the grader's disk.
    files_bytes: int = 256 * 2**20


@dataclass
class CellError:
    index: int  # 0-based position among all the notebook's cells
    ename: str
    evalue: str


@dataclass
class RunOutcome:
    """What running one notebook left behind: the checks' log and how the run ended."""

    log: list[dict] = field(default_factory=list)  # the notebook's own records (untrusted)
    verdicts: list[dict] = field(default_factory=list)  # the grader's (isolation.remote)
    errors: list[CellError] = field(default_factory=list)
    # None (ran to the end), "cell_timeout", "notebook_timeout", "died", "failed_to_start"
    stopped: str | None = None
    stopped_at: int | None = None  # cell index
    detail: str = ""
    output_bytes: int = 0
    seconds: float = 0.0
    sandboxed: bool = False  # the kernel ran in bubblewrap's sandbox
    own_user: bool = False  # no sandbox, but as root the kernel ran as a user of its own
    out_of_memory: bool = False  # its control group's memory limit was reached


@functools.cache
def _capped_client_class():
    """An nbclient that keeps only error outputs and counts the size of the rest."""
    from nbclient import NotebookClient

    class _CappedClient(NotebookClient):
        output_bytes = 0

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content", {})
            if msg["msg_type"] == "stream":
                self.output_bytes += len(content.get("text", ""))
            else:
                for value in content.get("data", {}).values():
                    self.output_bytes += len(value) if isinstance(value, str) else 64
            return None  # nothing stored: errors come from the execute replies

    return _CappedClient


def kernel_config():
    """The course's kernel settings (``jupyter/jupyter_server_config.json``: what build_lessons
    and ``make setup``'s JupyterLab use), or None where there are none. From the course's folder
    when it is installed from one in editable mode (``make setup``, GitHub Classroom's
    ``pip install -e .``); elsewhere (an installed grader, Gradescope) the ``KernelManager``
    settings of the environment's own jupyter_server_config.json files, as JupyterLab reads
    them. Never looked up beside this file."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config

    from helpers.checkout import course_checkout

    checkout = course_checkout()
    if checkout is not None and (checkout / "jupyter" / "jupyter_server_config.json").is_file():
        places = [checkout / "jupyter"]
    else:
        places = [Path(folder) for folder in reversed(jupyter_config_path())]  # lowest first
    settings = Config()
    for folder in places:
        try:
            found = json.loads((folder / "jupyter_server_config.json").read_text())
        except (OSError, ValueError):
            continue  # none there, or not a config file
        if isinstance(found, dict) and isinstance(found.get("KernelManager"), dict):
            settings.merge(Config({"KernelManager": found["KernelManager"]}))
    return settings or None


# The largest message the grader takes from a kernel. Without it one `print` of 300 MB, or a
# forged message of that size sent again and again on the kernel's sockets, lands whole in the
# grader's memory (a red team measured 0.9 and 2.6 GB); ZeroMQ drops the connection of a peer
# that sends more. An honest notebook's largest message is a figure (a few hundred kB).
MAX_MESSAGE_BYTES = 32 * 2**20


def _capped_client(client):
    """``client`` (a kernel client, before its channels start) whose sockets, made from its own
    ZeroMQ context, refuse messages larger than :data:`MAX_MESSAGE_BYTES`."""
    import zmq

    client.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
    return client


@functools.cache
def _capped_ipc_manager():
    from .ipc import AsyncIpcKernelManager

    class CappedIpcKernelManager(AsyncIpcKernelManager):
        def client(self, **kwargs):
            return _capped_client(super().client(**kwargs))

    return CappedIpcKernelManager


def _sandboxed_manager(sandbox: bubblewrap.Sandbox):
    """An async kernel manager whose kernel runs in ``sandbox``: its sockets (Unix sockets) and
    connection file inside the sandbox's work folder, its command wrapped by bubblewrap."""
    from jupyter_client.manager import AsyncKernelManager

    class SandboxedKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.update(
                transport="ipc",
                ip=str(sandbox.work / "sockets" / "kernel"),
                connection_file=str(sandbox.work / "kernel.json"),
            )
            super().__init__(**kwargs)

        def client(self, **kwargs):
            return _capped_client(super().client(**kwargs))

        def format_kernel_cmd(self, extra_arguments=None):
            # Called after the connection file is written: hand the folder to the kernel.
            sandbox.prepare()
            return sandbox.command(super().format_kernel_cmd(extra_arguments))

    return SandboxedKernelManager


def kernel_environment(
    log_path: Path | None, check_seconds: float | None, student: str | None = None
) -> dict[str, str]:
    """The kernel's environment: the caller's, one BLAS thread (one kernel per core), and the
    checks' log file, time limit and student when grading (the student seeds the checks'
    draws, so the same notebook always gets the same grade); see
    :func:`helpers.checks.grading.kernel_variables`."""
    # Only what a kernel needs from the grader's environment: the grader's own variables (a
    # token, a password) would otherwise be readable by the student's code and could be sent
    # back inside a message into grades.csv.
    env = {name: value for name, value in os.environ.items()
           if name in _KERNEL_VARIABLES or name.startswith(_KERNEL_PREFIXES)}  # fmt: skip
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    return grading.kernel_variables(env, log_path, check_seconds, student)


# HELPERS_MODEL_DIR: where lesson 09's model files are (the Gradescope autograder keeps them
# beside its venv).
_KERNEL_VARIABLES = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "PYTHONPATH",
                     "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX",
                     "PYTHONWARNINGS", "MPLBACKEND", "VIRTUAL_ENV",
                     "HELPERS_MODEL_DIR"}  # fmt: skip
# LC_*: the locale; OPENBLAS_ and NPY_: NumPy's kernels (the tests run under others).
_KERNEL_PREFIXES = ("LC_", "OPENBLAS_", "NPY_", "OMP_", "MKL_")


def _first_line(source: str) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


def _kernel_pid(client: NotebookClient) -> tuple[int | None, int | None]:
    provisioner = getattr(client.km, "provisioner", None)
    return getattr(provisioner, "pid", None), getattr(provisioner, "pgid", None)


def _limit_memory(pid: int | None, limit: int | None) -> None:
    if pid is None or limit is None or not hasattr(resource, "prlimit"):
        return
    try:
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError):
        pass


def _kill_group(pgid: int | None) -> None:
    """Kill whatever the kernel started (its process group), whatever state it is in."""
    if pgid is None or pgid == os.getpgid(0):
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


LOG_BYTES = 2 * 2**20  # far more than any honest notebook's checks write
LOG_RECORDS = 10_000


def _read_log(work_fd: int) -> list[dict]:
    """The checks' log in the kernel's folder (never through a link; at most LOG_BYTES)."""
    try:
        text = wire.read_file("checks.jsonl", work_fd, LOG_BYTES)[:LOG_BYTES]
    except OSError:
        return []
    return grading.parse_log(text.decode("utf-8", errors="replace").splitlines())[:LOG_RECORDS]


class _NotebookOutOfTime(Exception):
    """The notebook's own time limit passed between two cells."""


def _before_deadline(deadline: float) -> None:
    """Stop before the next cell once the notebook's limit has passed: each cell still gets at
    least 0.5 s of its own, so many quick cells could otherwise run past it."""
    if time.monotonic() >= deadline:
        raise _NotebookOutOfTime


async def run_notebook(
    path: Path,
    nb: nbformat.NotebookNode,
    items: list,
    limits: Limits,
    config=None,
    student: str | None = None,
) -> RunOutcome:
    """Run a copy of ``nb`` (read from ``path``) under ``limits``, then check each of ``items``
    (the lesson's exercises and predictions) from this process, calling the student's
    functions in the kernel; ``student`` seeds the checks' draws."""
    outcome = RunOutcome()
    start = time.monotonic()
    nb = copy.deepcopy(nb)
    work = Path(tempfile.mkdtemp(prefix="grade-"))
    sandboxing = limits.sandbox and not bubblewrap.unavailable()
    group = None
    # Run as root, two tmpfs: the work folder (the grader's requests, the kernel's replies and
    # log) and in it the notebook's folder (what the notebook writes): a notebook that fills
    # its folder does not leave the grader's checks without room.
    mounts = [work] if sandboxing and os.geteuid() == 0 and _mount_tmpfs(work, limits) else []
    try:
        folder = _work_folders(work, path, limits, mounts)
        # The grader reads and writes in the kernel's folders only through these descriptors,
        # opened before the kernel runs, so nothing the kernel puts there (a link to a file of
        # the grader's, a folder renamed and replaced) leads it elsewhere.
        work_fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        rpc_fd = os.open(work / ".grader", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        deadline = start + limits.notebook_seconds
        sandbox = None
        if sandboxing:
            if not cgroup.unavailable():
                group = cgroup.Group(limits.memory_bytes, bubblewrap.PROCESSES + 64)
            sandbox = bubblewrap.Sandbox(work, folder, limits.memory_bytes, group)
            outcome.sandboxed = True
        elif limits.sandbox and bubblewrap.own_user_only():
            sandbox = bubblewrap.Sandbox(work, folder, limits.memory_bytes, namespaces=False)
            outcome.own_user = True
        client = _notebook_client(nb, folder, limits, sandbox, config, outcome)
        client.timeout_func = lambda cell: max(
            0.5, min(limits.cell_seconds, deadline - time.monotonic())
        )
        kernel = _Kernel(client, work, work_fd, rpc_fd, sandbox, group, deadline)
        await _run_and_check(kernel, nb, items, limits, student, outcome)
        if not outcome.log:
            outcome.log = _read_log(work_fd)
        os.close(work_fd)
        os.close(rpc_fd)
        outcome.output_bytes = client.output_bytes
        if outcome.stopped and outcome.stopped_at is not None and outcome.stopped_at >= 0:
            outcome.detail = outcome.detail or _first_line(nb.cells[outcome.stopped_at].source)
    finally:
        if group is not None:
            group.remove()
        for mount in mounts:  # the inner one first
            subprocess.run(["umount", "--lazy", str(mount)], check=False, capture_output=True)
        _remove(work)
        outcome.seconds = time.monotonic() - start
    return outcome


def _work_folders(work: Path, path: Path, limits: Limits, mounts: list[Path]) -> Path:
    """The kernel's folders under ``work``: ``notebook/`` (a copy of the notebook, its working
    folder; a tmpfs of its own where ``work`` is one), the log, the grader's requests and
    replies (``.grader/``) and the kernel's Unix sockets. Returns the notebook's folder."""
    folder = work / "notebook"
    folder.mkdir()
    if mounts and _mount_tmpfs(folder, limits):
        mounts.insert(0, folder)
    shutil.copyfile(path, folder / path.name)
    (work / "checks.jsonl").touch()
    (work / ".grader").mkdir()  # the requests and replies of the grader's own checks
    (work / "sockets").mkdir()  # the kernel's Unix sockets (sandboxed: they are its own)
    return folder


def _notebook_client(nb, folder: Path, limits: Limits, sandbox, config, outcome: RunOutcome):
    """The nbclient client that runs ``nb`` in ``folder``: its kernel in ``sandbox`` (or on
    Unix sockets), its output counted and dropped, each cell's error noted in ``outcome``."""
    from .ipc import SUPPORTED as IPC_SUPPORTED

    if sandbox is not None:
        manager = {"kernel_manager_class": _sandboxed_manager(sandbox)}
    elif IPC_SUPPORTED:  # Unix sockets: kernels started at once cannot race for a TCP port
        manager = {"kernel_manager_class": _capped_ipc_manager()}
    else:
        manager = {}
    client = _capped_client_class()(
        nb,
        timeout=int(limits.cell_seconds),
        allow_errors=True,
        kernel_name="python3",
        shutdown_kernel="immediate",
        record_timing=False,
        # Widget messages are not kept either: their buffers would pile up in the grader's
        # memory, and a notebook can send as many as it likes.
        store_widget_state=False,
        iopub_timeout=4,
        resources={"metadata": {"path": str(folder)}},
        **manager,
        **({"config": config} if config is not None else {}),
    )

    def on_error(cell, cell_index, execute_reply):
        content = execute_reply.get("content", {})
        outcome.errors.append(
            CellError(
                cell_index,
                str(content.get("ename", "Error")),
                str(content.get("evalue", ""))[:300],
            )
        )

    client.on_cell_error = on_error
    return client


@dataclass
class _Kernel:
    """What one run holds: the client, the work folder and its descriptors, the sandbox and
    control group (or None), and the notebook's deadline (time.monotonic)."""

    client: object
    work: Path
    work_fd: int
    rpc_fd: int
    sandbox: object
    group: object
    deadline: float


async def _run_and_check(kernel: _Kernel, nb, items: list, limits: Limits,
                         student: str | None, outcome: RunOutcome) -> None:  # fmt: skip
    """Start the kernel, run every code cell, then the grader's own checks; how it stopped
    (time, a dead kernel, memory) goes into ``outcome``. Everything the kernel started is
    killed at the end."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    client, group = kernel.client, kernel.group
    env = kernel_environment(kernel.work / "checks.jsonl", limits.check_seconds, student)
    folder = kernel.work / "notebook"
    pgid = None
    try:
        async with client.async_setup_kernel(env=env, cwd=str(folder)):
            pid, pgid = _kernel_pid(client)
            _limit_memory(pid, limits.memory_bytes)
            if kernel.sandbox is not None and kernel.sandbox.uid is not None:
                # The kernel's sockets exist now: the kernel may no longer replace them
                # (with a link the grader's reconnecting sockets would follow).
                os.chown(kernel.work / "sockets", 0, 0)
                os.chmod(kernel.work / "sockets", 0o755)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                outcome.stopped_at = index
                _before_deadline(kernel.deadline)
                await client.async_execute_cell(cell, index)
            outcome.stopped_at = None
            # The verdicts: the grader's own checks, the student's functions called in the
            # kernel (course_grader.isolation.remote). The notebook's own records only say how
            # many checks it made (the draws) and are compared in the report.
            outcome.log = _read_log(kernel.work_fd)
            outcome.stopped_at, outcome.detail = -1, "the grader's own checks"
            watch = peak.PeakWatch(group.pids if group is not None
                                   else lambda: peak.descendants(pid), group)  # fmt: skip
            channel = Channel(client, asyncio.get_running_loop(), kernel.work / ".grader",
                              kernel.rpc_fd, limits.check_seconds, _cell_adder(nb),
                              lambda: _kill_group(pgid), watch)  # fmt: skip
            # A thread: the checks are plain functions that wait for each call's reply,
            # while this event loop carries the messages to and from the kernel.
            outcome.verdicts = await asyncio.to_thread(
                grade_in_kernel, channel, items, student or "", outcome.log
            )
            outcome.stopped_at, outcome.detail = None, ""
    except _NotebookOutOfTime:
        outcome.stopped = "notebook_timeout"
    except CellTimeoutError:
        late = time.monotonic() >= kernel.deadline - 0.5
        outcome.stopped = "notebook_timeout" if late else "cell_timeout"
    except DeadKernelError:
        outcome.stopped = "died"
    except Exception as failure:  # the kernel did not start, or nbclient failed
        outcome.stopped = "died" if outcome.stopped_at is not None else "failed_to_start"
        outcome.detail = f"{type(failure).__name__}: {failure}"[:300]
    finally:
        _kill_group(pgid)
        if group is not None:
            group.kill()  # what left the process group too (setsid)
            outcome.out_of_memory = group.oom_kills() > 0


def _cell_adder(nb):
    """A function that appends a code cell to ``nb`` (the grader's calls into the kernel run
    as cells after the notebook's own) and returns it with its index."""
    import nbformat

    def add_cell(source):
        nb.cells.append(nbformat.v4.new_code_cell(source))
        return nb.cells[-1], len(nb.cells) - 1

    return add_cell


def _mount_tmpfs(folder: Path, limits: Limits) -> bool:
    """Make ``folder`` a tmpfs of ``limits.files_bytes`` (root only): what the kernel writes
    there then counts against its memory and stops there ("No space left on device")."""
    options = f"size={int(limits.files_bytes)},mode=0700,nosuid,nodev"
    run = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                         check=False, capture_output=True)  # fmt: skip
    return run.returncode == 0


def _remove(work: Path) -> None:
    """Remove a kernel's work folder, however the notebook left it: shutil.rmtree recurses and
    fails on a tree thousands of folders deep (RecursionError, which ignore_errors does not
    catch); rm does not."""
    try:
        shutil.rmtree(work)
    except (OSError, RecursionError):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(work)], check=False,
                       capture_output=True)  # fmt: skip


async def run_all(jobs: list, jobs_at_once: int, run_one) -> list:
    """Run ``run_one(job)`` for every job, at most ``jobs_at_once`` at a time, in order."""
    gate = asyncio.Semaphore(max(1, jobs_at_once))

    async def guarded(job):
        async with gate:
            return await run_one(job)

    return await asyncio.gather(*(guarded(job) for job in jobs))
