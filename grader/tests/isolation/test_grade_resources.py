"""make grade against notebooks that try to exhaust the grader's machine (issue 33): memory that
is not the kernel's address space (files in its in-memory /tmp, a memfd), the disk, processes
that leave the kernel's process group. Each kernel has a control group of its own
(``course_grader.isolation.cgroup``: memory with its tmpfs files, processes, an equal CPU
share), size limits on its tmpfs folders, and, run as root, a tmpfs for its work folder.

Needs bubblewrap and the right to make control groups (root, or a delegated cgroup v2 subtree):
CI runs as root with bubblewrap installed.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from course_grader.isolation import bubblewrap, cgroup
from support import class_builder
from support.class_builder import SETUP, SS_CORRECT, check_cell, notebook

CHECK = check_cell("scaled_scores")
WRONG = "def scaled_scores(Q, K):\n    return Q @ np.swapaxes(K, -1, -2)"  # unscaled
MiB = 2**20
MARK = "helpers-grade-escaped-7d1e"  # the command line of a process that tries to outlive it

ATTACKS = {
    # 300 MiB into the private /tmp (RAM): stops at the tmpfs size, in the cell.
    "fills_tmp": [
        WRONG,
        CHECK,
        "block = b'x' * 2**20\nwith open('/tmp/fill', 'wb') as f:\n"
        "    for _ in range(300):\n        f.write(block)",
    ],
    # 400 MiB into its own folder (the grader's disk, were it not a tmpfs).
    "fills_folder": [
        WRONG,
        CHECK,
        "block = b'x' * 2**20\nwith open('fill', 'wb') as f:\n"
        "    for _ in range(400):\n        f.write(block)",
    ],
    # Memory outside the address space limit: a memfd written past the memory limit (1 GiB).
    "memfd": [
        WRONG,
        CHECK,
        "import os\nfd = os.memfd_create('hog')\nblock = b'x' * 2**20\n"
        "for _ in range(1500):\n    os.write(fd, block)",
    ],
    # A process that leaves the kernel's process group and session, to outlive the grading.
    "escapes": [
        WRONG,
        CHECK,
        f"import subprocess\nsubprocess.Popen(['setsid', 'sh', '-c', 'exec -a {MARK} sleep 600'])",
    ],
}


def _available() -> str:
    return bubblewrap.unavailable() or cgroup.unavailable()


def _grade_class(
    root: Path, lesson: str, students: dict[str, list[str]], exercise: str, *options: str
) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """Write ``students`` (name -> cells after SETUP) as lesson ``lesson`` notebooks under
    ``root/submissions`` (beside any already there), grade them into ``root/out`` with
    ``options``, and return the run and each student's row for ``exercise``."""
    for student, cells in students.items():
        folder = root / "submissions" / student
        folder.mkdir(parents=True)
        nb = notebook(lesson, [SETUP, *cells])
        (folder / f"lesson{lesson}.ipynb").write_text(class_builder.nbformat.writes(nb))
    run = subprocess.run(
        [sys.executable, "-m", "course_grader", "--submissions", str(root / "submissions"),
         "--out", str(root / "out"), "--lessons", lesson, *options],
        capture_output=True, text=True, timeout=600, cwd=root,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    with open(root / "out" / "grades.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f) if r["exercise"] == exercise}
    return run, rows


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if _available():
        pytest.skip(f"no sandbox with control groups here: {_available()}")
    root = tmp_path_factory.mktemp("resources")
    # Red team: a lone surrogate, which JSON can spell and UTF-8 cannot hold, in a cell the
    # report quotes (it stopped the whole class's grading); and a folder name that is not UTF-8.
    nb = notebook("03", [SETUP, WRONG, CHECK, "import helpers.checks.exercise  # SURROGATE"])
    text = class_builder.nbformat.writes(nb).replace("SURROGATE", "\\ud800")
    for name in ("surrogate", os.fsdecode(b"not-utf8-\xff")):
        (root / "submissions" / name).mkdir(parents=True)
        (root / "submissions" / name / "lesson03.ipynb").write_text(text)
    run, rows = _grade_class(root, "03", {"honest": [SS_CORRECT, CHECK], **ATTACKS},
                             "scaled_scores", "--jobs", "2", "--cell-timeout", "60",
                             "--memory-limit", "1G")  # fmt: skip
    return {"run": run, "rows": rows, "report": (root / "out" / "report.html").read_text()}


def test_full_tmpfs_folders_fail_in_the_cell_and_the_grading_goes_on(graded):
    rows, report = graded["rows"], graded["report"]
    assert rows["honest"]["status"] == "correct"
    assert "a control group each" in graded["run"].stdout
    assert rows["fills_tmp"]["status"] == "not_yet"  # graded: the kernel survived
    assert "fills_tmp/lesson03.ipynb: cell" in report and "No space left" in report
    if os.geteuid() == 0:  # the work folder is a tmpfs only when the grader can mount one
        assert rows["fills_folder"]["status"] == "not_yet"
        assert "fills_folder/lesson03.ipynb: cell" in report


def test_a_lone_surrogate_or_a_folder_name_that_is_not_utf8_stops_nothing(graded):
    rows = graded["rows"]
    assert rows["surrogate"]["status"] == "not_yet"
    assert rows["not-utf8-?"]["status"] == "not_yet"
    assert "surrogate/lesson03.ipynb: cell" in graded["report"]  # flagged, quoted with a "?"


def test_memory_outside_the_address_space_is_limited_and_named(graded):
    row = graded["rows"]["memfd"]
    assert row["status"] == "error", row
    assert "ran out of memory" in row["message"] and "1 GiB" in row["message"], row


def test_no_process_outlives_its_grading(graded):
    assert graded["rows"]["escapes"]["status"] == "not_yet"
    left = subprocess.run(["pgrep", "-f", MARK], capture_output=True, text=True).stdout
    assert left == "", left


def test_a_group_limits_counts_and_kills_what_joins_it():
    if cgroup.unavailable():
        pytest.skip(cgroup.unavailable())
    group = cgroup.Group(memory_bytes=512 * MiB, processes=40)
    try:
        folders = dict(zip(("memory", "pids", "cpu"), group.folders))  # v1: in this order
        if group.v2:
            (folder,) = group.folders
            assert (folder / "memory.max").read_text().strip() == str(512 * MiB)
            assert (folder / "pids.max").read_text().strip() == "40"
        else:
            assert (folders["memory"] / "memory.limit_in_bytes").read_text().strip() == str(
                512 * MiB
            )
            assert (folders["pids"] / "pids.max").read_text().strip() == "40"
            assert (folders["cpu"] / "cpu.shares").read_text().strip() == "1024"
        # A process started through the join command is in the group, and so are its children
        # in a new session; kill() ends them all.
        child = subprocess.Popen(
            [*group.join_command(), "sh", "-c", "setsid sleep 300 & sleep 300"],
            start_new_session=True,
        )
        for _ in range(100):
            if len(group.pids()) >= 3:
                break
            time.sleep(0.05)
        assert len(group.pids()) >= 3, group.pids()
        assert child.pid in group.pids()
        group.kill()
        assert group.pids() == []
        child.wait(5)
        # Past the process limit, a fork fails inside the group.
        forks = subprocess.run(
            [*group.join_command(), sys.executable, "-c",
             "import os\nmade = 0\ntry:\n    for _ in range(100):\n"
             "        if os.fork() == 0:\n            import time; time.sleep(5); os._exit(0)\n"
             "        made += 1\nexcept OSError:\n    print('refused after', made)"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert "refused after" in forks.stdout, (forks.stdout, forks.stderr)
        assert int(forks.stdout.split()[-1]) < 40
    finally:
        group.remove()
    assert all(not folder.exists() for folder in folders.values())
    assert group.folders == []


BLOCKWISE = """\
def blockwise_attention(Q, K, V, block_size):
    n_q = Q.shape[0]
    m, l, acc = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, V.shape[1]))
    for start in range(0, K.shape[0], block_size):
        s = Q @ K[start:start + block_size].T / np.sqrt(Q.shape[1])
        m_new = np.maximum(m, s.max(axis=1))
        p = np.exp(s - m_new[:, None])
        scale = np.exp(m - m_new)
        l = l * scale + p.sum(axis=1)
        acc = acc * scale[:, None] + p @ V[start:start + block_size]
        m = m_new
    return acc / l[:, None]"""
# The whole score matrix, in memory tracemalloc does not see (an anonymous mmap).
BLOCKWISE_MMAP = """\
import mmap
def blockwise_attention(Q, K, V, block_size):
    n_q, n_k = Q.shape[0], K.shape[0]
    S = np.frombuffer(mmap.mmap(-1, n_q * n_k * 8), dtype=np.float64).reshape(n_q, n_k)
    np.matmul(Q, K.T, out=S)
    S /= np.sqrt(Q.shape[1])
    S -= S.max(axis=1, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)
    return S @ V"""


# Red team: a full-matrix answer, with the kernel's tracemalloc blinded and a sleeping child
# process as a decoy for the grader's reading of the kernel's memory.
DECOY = """\
import os, time, tracemalloc
tracemalloc.start()
if os.fork() == 0:
    time.sleep(3600)
    os._exit(0)"""
NAIVE = """\
def blockwise_attention(Q, K, V, block_size):
    S = Q @ K.T / np.sqrt(Q.shape[1])
    S = np.exp(S - S.max(axis=1, keepdims=True))
    return (S / S.sum(axis=1, keepdims=True)) @ V"""
# Red team: the whole matrix computed in a child process, the output sent back through a pipe.
FORK_COMPUTE = """\
import os
def blockwise_attention(Q, K, V, block_size):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        S = Q @ K.T / np.sqrt(Q.shape[1])
        S = np.exp(S - S.max(axis=1, keepdims=True))
        data = np.ascontiguousarray((S / S.sum(axis=1, keepdims=True)) @ V).tobytes()
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 1 << 20):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    return np.frombuffer(b"".join(chunks)).reshape(Q.shape[0], V.shape[1]).copy()"""


def test_lesson_07s_memory_is_measured_where_the_notebook_cannot_hide_it(tmp_path):
    """An answer that holds the whole score matrix in an mmap passes the notebook's own check
    (tracemalloc does not see it) and fails the grader's, which reads the kernel's resident
    memory; an honest blockwise answer passes both."""
    if bubblewrap.unavailable():
        pytest.skip(bubblewrap.unavailable())
    check = check_cell("blockwise_attention")
    students = {"honest": [BLOCKWISE, check], "mmap": [BLOCKWISE_MMAP, check],
                "decoy": [NAIVE, check, DECOY], "fork_compute": [FORK_COMPUTE, check]}  # fmt: skip
    _, rows = _grade_class(tmp_path, "07", students, "blockwise_attention", "--jobs", "2")
    assert rows["honest"]["status"] == "correct", rows["honest"]
    for student in ("mmap", "decoy", "fork_compute"):
        assert rows[student]["status"] == "not_yet", rows[student]
        assert "score matrix" in rows[student]["message"], rows[student]
    # In the notebook, the same answer passed: the notebook's own record differs from the
    # grader's verdict, and the report says so.
    from helpers import checks
    from helpers.checks.calling import LocalAnswer

    namespace = {"np": np}
    exec(BLOCKWISE_MMAP, namespace)
    exercise = checks.blockwise_attention
    local = exercise.verdict(LocalAnswer(namespace["blockwise_attention"], exercise.signature,
                                         exercise.allowed), 60)  # fmt: skip
    assert local.passed, local.message


# Refused by the filter, and harmless with these arguments without it (see SYSCALLS).
HARMLESS = ("process_vm_readv", "name_to_handle_at", "userfaultfd")
SYSCALLS = """\
import ctypes, errno, json, os, platform, sys, threading
number = json.loads(sys.argv[1])  # this processor's system call numbers, from libseccomp
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def result(*args):
    value = libc.syscall(*args)
    return "ok" if value >= 0 else errno.errorcode[ctypes.get_errno()]
found = {name: result(number[call], *args) for name, call, args in [
    ("unshare_user", "unshare", (0x10000000,)),
    # Not run outside the filter: there clone and clone3 would start a copy of this script.
    ("clone_newnet", "clone", (0x40000000 | 17, 0, 0, 0, 0)),  # CLONE_NEWNET | SIGCHLD
    ("clone3", "clone3", (ctypes.create_string_buffer(88), 88)),
    ("ptrace", "ptrace", (0, 0, 0, 0)),  # PTRACE_TRACEME
    ("io_uring_setup", "io_uring_setup", (1, ctypes.create_string_buffer(120))),
    ("keyctl", "keyctl", (0, -1, 0, 0, 0)),  # KEYCTL_GET_KEYRING_ID
    # Harmless arguments: outside a filter, "no such process", "bad descriptor", "invalid".
    ("process_vm_readv", "process_vm_readv", (0, 0, 0, 0, 0, 0)),
    ("name_to_handle_at", "name_to_handle_at", (-1, 0, 0, 0, 0)),
    ("userfaultfd", "userfaultfd", (-1,)),
    ("getpid", "getpid", ()),
] if call in number}
if platform.machine() == "x86_64":  # the x32 ABI's getpid: another ABI's number
    found["x32"] = result(0x40000000 + number["getpid"])
worker = threading.Thread(target=lambda: None)
worker.start()
worker.join()
found["thread"] = "ok"
pid = os.fork()
if pid == 0:
    os._exit(7)
found["fork"] = "ok" if os.waitpid(pid, 0)[1] >> 8 == 7 else "failed"
print(json.dumps(found))
"""


def test_the_seccomp_filter_refuses_namespaces_tracing_and_io_uring_not_threads():
    """The kernel's system calls under the sandbox's filter, on this machine's processor (the
    numbers from libseccomp): what an escape needs is refused (EPERM), clone3 is "not
    implemented" (the C library falls back to clone), threads and processes still start."""
    if bubblewrap.seccomp_unavailable():
        pytest.skip(bubblewrap.seccomp_unavailable())
    pyseccomp = pytest.importorskip("pyseccomp")  # its numbers for this processor
    names = ("unshare", "clone", "clone3", "ptrace", "io_uring_setup", "keyctl", *HARMLESS,
             "getpid")  # fmt: skip
    number = {n: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, n) for n in names}
    sandbox = bubblewrap.Sandbox(Path("/tmp"), Path("/tmp"), None)
    command = sandbox.command([sys.executable, "-c", SYSCALLS, json.dumps(number)])
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    expected = {"unshare_user": "EPERM", "clone_newnet": "EPERM", "clone3": "ENOSYS",
                "ptrace": "EPERM", "io_uring_setup": "EPERM", "keyctl": "EPERM",
                **dict.fromkeys(HARMLESS, "EPERM"), "getpid": "ok", "thread": "ok",
                "fork": "ok"}  # fmt: skip
    if "x32" in found:
        expected["x32"] = "EPERM"
    assert found == expected


def test_without_the_filter_the_same_calls_get_the_machine_s_own_answers():
    """The check on the check: outside the filter (bwrap with no --seccomp) the harmless calls
    get their ordinary errors, not EPERM, and another ABI's call is merely unknown (ENOSYS):
    the test before it measures the filter, not the machine."""
    if bubblewrap.unavailable():
        pytest.skip(bubblewrap.unavailable())
    pyseccomp = pytest.importorskip("pyseccomp")
    names = (*HARMLESS, "getpid")
    number = {n: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, n) for n in names}
    command = ["bwrap", "--dev-bind", "/", "/", "--", sys.executable, "-c", SYSCALLS,
               json.dumps(number)]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found.get("x32", "ENOSYS") == "ENOSYS", found
    allowed = [name for name in HARMLESS if found[name] != "EPERM"]
    if not allowed and "x32" not in found:
        pytest.skip(f"this machine refuses {HARMLESS} itself (an outer seccomp profile)")
    assert found["getpid"] == "ok", found
    print(f"outside the filter: {found}")


def test_the_filter_is_libseccomp_s_bpf_program_for_this_processor():
    from course_grader.isolation import seccomp

    if seccomp.unavailable():
        pytest.skip(seccomp.unavailable())
    code = seccomp.program()
    assert code is not None and len(code) % 8 == 0 and 0 < len(code) // 8 < 4096


def test_the_graders_kernel_sockets_refuse_huge_messages_and_a_huge_print_stops_nothing(tmp_path):
    """Red team: one `print` of 300 MB took the grader to 0.9 GB (and forged messages of that
    size to 2.6 GB). The sockets of the kernel clients the grader makes refuse messages over
    _sandbox.MAX_MESSAGE_BYTES (ZeroMQ drops the connection of a peer that sends more), and a
    class with such a notebook is graded as usual. (The grader's peak memory with it: below
    0.3 GB in 8 runs of 9 here, 0.55 GB once in a full test run: see issue 33's note.)"""
    import zmq
    from course_grader.isolation import sandbox as _sandbox

    client = _sandbox._capped_ipc_manager()().client()
    client.start_channels(hb=False)  # no kernel to beat with: only the sockets are read
    try:
        for channel in (client.iopub_channel, client.shell_channel, client.stdin_channel,
                        client.control_channel):  # fmt: skip
            assert channel.socket.getsockopt(zmq.MAXMSGSIZE) == _sandbox.MAX_MESSAGE_BYTES
    finally:
        client.stop_channels()
    assert _sandbox.MAX_MESSAGE_BYTES < 100e6
    huge = "import sys\nsys.stdout.write('x' * 300_000_000)"
    students = {"honest": [SS_CORRECT, CHECK], "prints": [WRONG, CHECK, huge]}
    _, rows = _grade_class(tmp_path, "03", students, "scaled_scores", "--jobs", "1",
                           "--cell-timeout", "60")  # fmt: skip
    assert rows["honest"]["status"] == "correct"
    assert rows["prints"]["status"] in ("not_yet", "timeout", "error"), rows["prints"]


def test_control_groups_a_process_cannot_join_count_as_unavailable(monkeypatch):
    """Where a group can be made but not joined, every kernel would fail to start: the probe
    says the groups are unavailable instead (the grader then warns and runs without)."""
    if cgroup.unavailable():
        pytest.skip(cgroup.unavailable())
    monkeypatch.setattr(cgroup.Group, "join_command", lambda self: ["/bin/sh", "-c", "exit 3"])
    assert "cannot join" in cgroup.unavailable.__wrapped__()
