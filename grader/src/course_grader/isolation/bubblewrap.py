"""Each student's kernel in a sandbox: bubblewrap (``bwrap``, Linux), when the system has it.

A student's notebook is code the grader runs. Without a sandbox it runs as the grader's user,
on the grader's machine: it can read the grader's files and other students' notebooks, write
anywhere the grader can, open network connections. Inside :func:`command`'s sandbox it has:

* no network (its own network namespace: only a loopback of its own);
* its own PID namespace, so it sees and signals no other process, and dies with the grader;
* a file system of the system's programs and libraries (``/usr``, ``/lib``, ``/bin``,
  ``/etc``), the Python that runs it and the course's ``helpers`` package, all read-only; an
  empty private ``/tmp`` and HOME; and, writable, only its own work folder (its copy of the
  notebook, the checks' log, its kernel's sockets). Not the submissions, not the grader's
  HOME, not the output folder, not the course's other files;
* limits on memory (``RLIMIT_AS``) and on processes (``RLIMIT_NPROC``: a fork bomb stops
  there). Run as root, the grader sets each sandbox up as root and runs the kernel in it as a
  user id of its own (above :data:`FIRST_UID`; ``setpriv``, which drops every capability), so
  the process limit counts that kernel's processes only; run as another user, bubblewrap
  needs user namespaces, and the limit is what that user already runs plus :data:`PROCESSES`;
* a seccomp filter (:mod:`course_grader.isolation.seccomp`, compiled by libseccomp): no new
  namespaces, no tracing of other processes, none of the Linux kernel's riskier interfaces;
* where the grader may make control groups (:mod:`course_grader.isolation.cgroup`), one per kernel:
  its memory with the tmpfs files it writes, its processes and an equal share of the CPU;
  the private ``/tmp`` and HOME at most :data:`TMPFS_BYTES` each; run as root, its work folder
  is a tmpfs of its own too (``Limits.files_bytes``), so no notebook fills the grader's disk.

Where ``bwrap`` is missing or cannot start a sandbox (macOS, Windows, a Linux without user
namespaces), :func:`unavailable` says why and the grader says so in the terminal and the report
(docs/INSTRUCTORS.md gives a container recipe).
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import psutil

from . import seccomp

PROCESSES = 256  # processes and threads a kernel may add (ipykernel itself runs about 10)
# The private /tmp and HOME are in memory (tmpfs): each at most this much, so that filling one
# fails with "No space left on device" in the student's cell, long before the memory limit.
TMPFS_BYTES = 256 * 2**20
FIRST_UID = 420_000  # run as root: kernels run as user ids from here (no passwd entry needed)
_uids = itertools.count()
# The system's programs and libraries, read-only (those that exist here).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def _fresh_uid() -> int:
    return FIRST_UID + (os.getpid() % 4096) * 128 + next(_uids) % 128


@functools.cache
def unavailable() -> str:
    """Why no sandbox can be used here ("" if one can)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap runs on Linux only (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap)"
    return _probe([], [], "bwrap cannot start a sandbox here")


def own_user_only() -> bool:
    """Where bubblewrap cannot run but the grader is root (a Docker container without the
    rights to make namespaces, as on Gradescope): each kernel still runs as a user id of its
    own (``setpriv``, every capability dropped), so it cannot write the grader's files, its
    results or another kernel's, nor signal the grader; but it sees the file system as any user
    does and has the network. Better than running the student's code as root; not a sandbox."""
    return (bool(unavailable()) and os.geteuid() == 0 and shutil.which("setpriv") is not None
            and not closed_to_other_users())  # fmt: skip


@functools.cache
def closed_to_other_users() -> str:
    """The first folder or file of the Python that runs the kernels (and of ``helpers``) that
    another user cannot reach ("" if none): a kernel of its own user could not start there."""
    import helpers

    for target in (sys.executable, sys.prefix, os.path.dirname(helpers.__file__)):
        path = Path(os.path.realpath(target))
        for place in [*reversed(path.parents), path]:
            mode = place.stat().st_mode
            if not mode & stat.S_IXOTH or (place == path and not mode & stat.S_IROTH):
                return str(place)
    return ""


def _probe(before: list[str], options: list[str], failed: str) -> str:
    """Start ``/bin/true`` as a kernel would be started (``before`` the bwrap command, bwrap's
    extra ``options``): "" if it ran, else ``failed`` and why."""
    uid = _fresh_uid() if os.geteuid() == 0 else None
    probe = [*before, *_bwrap(None), *options, "--", *_user_switch(uid), "/bin/true"]
    try:
        run = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as failure:
        return f"{failed}: {failure}"
    if run.returncode != 0:
        return f"{failed}: {run.stderr.strip()[:300]}"
    return ""


@functools.cache
def seccomp_unavailable() -> str:
    """Why the sandboxed kernels run without the seccomp filter of :mod:`.seccomp` ("" if
    they run with it): tried once, on ``/bin/true``, as a kernel would be started."""
    why = unavailable() or seccomp.unavailable()
    if why:
        return why
    return _probe(_with_filter(), ["--seccomp", str(_FILTER_FD)],
                  "bwrap could not install the seccomp filter")  # fmt: skip


_FILTER_FD = 9  # the descriptor bwrap reads the filter from (--seccomp 9)


def _with_filter() -> list[str]:
    """A prefix that opens the seccomp filter's file as descriptor 9, then runs the rest."""
    return ["/bin/sh", "-c", f'exec {_FILTER_FD}<"$0" && exec "$@"', seccomp.filter_path()]


def _readable_roots() -> list[str]:
    """The Python that runs the kernel (its prefixes and library folders) and the course's
    ``helpers`` package: read-only in the sandbox. Never the grader's working folder (which
    ``sys.path`` may hold), where submissions and reports may be."""
    import sysconfig

    import helpers

    roots = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    roots.add(str(Path(helpers.__file__).resolve().parent.parent))  # src/ (the helpers package)
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        roots.add(os.path.realpath(sysconfig.get_path(name)))
    keep = sorted(r for r in roots if r and os.path.exists(r) and r != "/")
    # Nested roots are covered by their parent; the system folders are bound anyway.
    return [r for r in keep if not any(r != o and r.startswith(o + os.sep) for o in keep)]


def _bwrap(work: Path | None, cwd: Path | None = None) -> list[str]:
    if os.geteuid() == 0:
        # Root sets the sandbox up (it can read a Python under /root, say) and the kernel then
        # runs as another user (setpriv, inside): no user namespace, which would map only root.
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                      "--unshare-cgroup-try"]  # fmt: skip
    else:
        namespaces = ["--unshare-all"]  # a user namespace first: bwrap runs unprivileged
    args = ["bwrap", *namespaces, "--die-with-parent", "--new-session"]
    for folder in SYSTEM:
        if os.path.exists(folder):
            args += ["--ro-bind", folder, folder]
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(TMPFS_BYTES),
        "--tmpfs",
        "/tmp",
        "--perms",
        "0755",
        "--dir",
        "/home",
        "--perms",
        "1777",
        "--size",
        str(TMPFS_BYTES),
        "--tmpfs",
        "/home/student",
    ]
    binds = [("--ro-bind", r) for r in _readable_roots() if not r.startswith(tuple(SYSTEM))]
    if work is not None:
        binds.append(("--bind", str(work)))
    made: set[str] = set()
    for how, path in binds:
        # The folders above a bound one, made by bwrap, must let the kernel's user through.
        for parent in reversed(Path(path).parents[:-1]):  # from the top, without "/"
            if str(parent) not in made and str(parent) not in SYSTEM + ("/tmp",):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        args += [how, path, path]
    if work is not None:
        args += ["--chdir", str(cwd or work)]
    return args + ["--setenv", "HOME", "/home/student", "--setenv", "TMPDIR", "/tmp"]


def _user_switch(uid: int | None) -> list[str]:
    if uid is None:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]  # fmt: skip


def _tasks_of_this_user() -> int:
    """The threads this user runs now, in every process (what RLIMIT_NPROC counts)."""
    uid, count = os.getuid(), 0
    for process in psutil.process_iter(["uids", "num_threads"]):
        uids, threads = process.info["uids"], process.info["num_threads"]
        if uids is not None and threads is not None and uids.effective == uid:
            count += threads
    return count


class Sandbox:
    """One kernel's sandbox: ``work`` (its only writable folder), ``cwd`` inside it."""

    def __init__(self, work: Path, cwd: Path, memory_bytes: int | None, group=None,
                 namespaces: bool = True):  # fmt: skip
        # namespaces=False: no bubblewrap, only the user of its own (:func:`own_user_only`).
        self.work, self.cwd, self.memory_bytes = work, cwd, memory_bytes
        self.namespaces = namespaces
        self.group = group  # a course_grader.isolation.cgroup.Group, or None where there is none
        # Run as root: a user id of this kernel's own (the process limit counts only its own
        # processes), apart from other graders' running at the same time (their process ids
        # differ) and from this grader's kernels running at once (fewer than 128).
        self.uid = _fresh_uid() if os.geteuid() == 0 else None

    def prepare(self) -> None:
        """Run as root, hand the kernel's user what it may write in ``work``: its copy of the
        notebook (``cwd``), its sockets, the checks' log and its connection file; and let it
        leave replies in ``.grader`` (sticky: it cannot remove the grader's requests). ``work``
        itself stays root's: the kernel cannot replace what is in it with a link."""
        if self.uid is None:
            return
        os.chmod(self.work, 0o711)
        if not self.namespaces:  # no private HOME and /tmp from bubblewrap: its own, here
            for name in ("home", "tmp"):
                (self.work / name).mkdir(exist_ok=True)
        mine = [*self.cwd.rglob("*"), self.cwd, self.work / "sockets"]
        mine += [self.work / name for name in ("home", "tmp")]
        mine += [self.work / name for name in ("checks.jsonl", "kernel.json")]
        for path in mine:
            if path.exists():
                os.chown(path, self.uid, self.uid, follow_symlinks=False)
        os.chmod(self.work / ".grader", 0o1733)

    def command(self, kernel_cmd: list[str]) -> list[str]:
        """``kernel_cmd`` wrapped to run in the sandbox."""
        processes = PROCESSES if self.uid is not None else _tasks_of_this_user() + PROCESSES
        limits = ["prlimit", f"--nproc={processes}"]
        if self.memory_bytes:
            limits.append(f"--as={int(self.memory_bytes)}")
        # The kernel under a shell that waits for it: in the PID namespace the command's parent
        # would be bwrap's init, PID 1, which ipykernel reads as "my parent has exited".
        keep_parent = ["/bin/sh", "-c", '"$@"', "kernel"]
        # The control group first: everything after it, bwrap included, is counted there.
        join = self.group.join_command() if self.group is not None else []
        if not self.namespaces:
            private = [f"HOME={self.work / 'home'}", f"TMPDIR={self.work / 'tmp'}"]
            return [*join, *limits, "--", "env", *private, *_user_switch(self.uid),
                    *kernel_cmd]  # fmt: skip
        # The seccomp filter, where bwrap can install it: the last step before the kernel.
        filtered = not seccomp_unavailable()
        opened = _with_filter() if filtered else []
        install = ["--seccomp", str(_FILTER_FD)] if filtered else []
        return [*join, *limits, "--", *opened, *_bwrap(self.work, self.cwd), *install, "--",
                *_user_switch(self.uid), *keep_parent, *kernel_cmd]  # fmt: skip
