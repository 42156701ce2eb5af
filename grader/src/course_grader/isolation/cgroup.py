"""A control group for each student's kernel: its memory (tmpfs files included), its processes
and its share of the CPU, counted and limited by the Linux kernel, and everything it started
killed at the end, wherever it went.

The sandbox's per-process limits (``RLIMIT_AS``, ``RLIMIT_NPROC``) leave three ways for one
notebook to harm the grader's machine or a neighbour's grade: memory that is not the process's
address space (files in its private ``/tmp``, which live in RAM; ``memfd``), processes spread
over many address spaces, and CPU: two hundred busy threads take the cores from the kernel
graded beside it, whose time limits then run out. A control group counts all of a kernel's
processes together: the memory they use and the tmpfs pages they write (``memory``), how many
tasks they are (``pids``), and, with every kernel given the same weight (``cpu``), each gets an
equal share of the CPU whatever it starts.

Creating control groups needs the right to write in the hierarchy: root has it; another user
has it where systemd delegated a subtree to them (cgroup v2). :func:`unavailable` says why not
otherwise, and the grader reports it (docs/INSTRUCTORS.md, "Grading safely").

Both layouts are supported: cgroup v2 (one hierarchy, ``/sys/fs/cgroup``, with ``memory.max``,
``pids.max``, ``cpu.weight``) and cgroup v1 (one hierarchy per controller, with
``memory.limit_in_bytes``, ``pids.max``, ``cpu.shares``). v1 stays because machines still boot
with it: the course's own test and CI machines (December 2026) mount the v1 controllers, with a
v2 hierarchy beside them that holds none (``/sys/fs/cgroup/unified``). With v2 alone the kernels
graded there would get no memory, process or CPU limit of their group, and the tests of those
limits (grader/tests/isolation/test_grade_resources.py) would not run where they are run.
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
_names = itertools.count()


def _own_path(controller: str) -> str:
    """This process's control group in ``controller``'s hierarchy ("" for v2's unified one)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
        if controller == "" and number == "0":
            return path
    raise OSError(f"this process is in no {controller or 'cgroup v2'} control group")


def _parents() -> dict[str, Path]:
    """The folder under which each controller's groups are made: this process's own group (a
    grader in a container or a systemd scope makes its kernels' groups inside its own)."""
    unified = ROOT / "cgroup.controllers"
    if unified.exists() and set(CONTROLLERS) <= set(unified.read_text().split()):
        # Under v2 a group with processes of its own cannot enable controllers for children
        # (the "no internal processes" rule): the grader's own group usually has them (the
        # grader), so its kernels' groups go under the hierarchy's root, where systemd enables
        # the controllers, unless the grader's own group already delegates them.
        own = ROOT / _own_path("").lstrip("/")
        for path in (own, ROOT):
            enabled = (path / "cgroup.subtree_control").read_text().split()
            if set(CONTROLLERS) <= set(enabled) and os.access(path, os.W_OK):
                return {controller: path for controller in CONTROLLERS}
        raise OSError(f"cgroup v2: neither {own} nor {ROOT} lets this user make groups with "
                      f"the {', '.join(CONTROLLERS)} controllers")  # fmt: skip
    parents = {}
    for controller in CONTROLLERS:
        mount = ROOT / controller
        if not (mount / "cgroup.procs").exists():
            raise OSError(f"no cgroup v1 hierarchy for {controller} at {mount}")
        parents[controller] = mount / _own_path(controller).lstrip("/")
    return parents


def _v2(parents: dict[str, Path]) -> bool:
    return len(set(parents.values())) == 1


@functools.cache
def unavailable() -> str:
    """Why kernels cannot get a control group here ("" if they can)."""
    try:
        group = Group(memory_bytes=2**30, processes=16)
    except OSError as failure:
        return f"no control groups for the kernels: {failure}"[:300]
    try:
        # A process must be able to join it too (a v2 group outside this process's subtree
        # may refuse): else every kernel would fail to start, so say "unavailable" instead.
        joined = subprocess.run([*group.join_command(), "/bin/true"], capture_output=True,
                                text=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as failure:
        joined = subprocess.CompletedProcess([], 1, "", str(failure))
    finally:
        group.remove()
    if joined.returncode != 0:
        return f"a process cannot join a control group here: {joined.stderr.strip()[:200]}"
    return ""


class Group:
    """One kernel's control group (a folder per controller, or one under cgroup v2)."""

    def __init__(self, memory_bytes: int | None, processes: int):
        parents = _parents()
        name = f"helpers-grade-{os.getpid()}-{next(_names)}"
        self.v2 = _v2(parents)
        self.folders: list[Path] = []
        try:
            if self.v2:
                folder = parents["memory"] / name
                folder.mkdir()
                self.folders = [folder]
                if memory_bytes:
                    (folder / "memory.max").write_text(str(int(memory_bytes)))
                    _write_if_there(folder / "memory.swap.max", "0")
                (folder / "pids.max").write_text(str(int(processes)))
                (folder / "cpu.weight").write_text("100")  # every kernel the same weight
            else:
                for controller in CONTROLLERS:
                    folder = parents[controller] / name
                    folder.mkdir()
                    self.folders.append(folder)
                memory, pids, cpu = self.folders
                if memory_bytes:
                    (memory / "memory.limit_in_bytes").write_text(str(int(memory_bytes)))
                    # No swap either (where swap is counted), or the limit only moves the
                    # excess to disk.
                    _write_if_there(memory / "memory.memsw.limit_in_bytes", str(int(memory_bytes)))
                (pids / "pids.max").write_text(str(int(processes)))
                (cpu / "cpu.shares").write_text("1024")  # every kernel the same weight
        except OSError:
            self.remove()
            raise

    def join_command(self) -> list[str]:
        """A command prefix that puts what it runs into this group before starting it (run by
        the grader's user, who may write the group's ``cgroup.procs``)."""
        joins = " && ".join(f"echo $$ > {folder / 'cgroup.procs'}" for folder in self.folders)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "cgroup"]

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    def oom_kills(self) -> int:
        """How many of the group's processes the kernel killed for its memory limit: > 0
        explains a kernel that died."""
        if not self.folders:
            return 0
        name = "memory.events" if self.v2 else "memory.oom_control"
        try:
            for line in (self.folders[0] / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def memory_peak_watch(self):
        """Start watching the group's memory peak; returns a function giving how far it rose
        (bytes, all the group's processes together, a child that came and went included), or
        None if this kernel cannot reset the peak. v1: ``memory.max_usage_in_bytes``, reset by
        writing 0; v2: ``memory.peak``, reset for one open file by writing to it (Linux 6.12)."""
        if not self.folders:
            return None
        folder = self.folders[0]
        try:
            if not self.v2:
                before = int((folder / "memory.usage_in_bytes").read_text())
                (folder / "memory.max_usage_in_bytes").write_text("0")

                def rose_v1() -> int:
                    return int((folder / "memory.max_usage_in_bytes").read_text()) - before

                return rose_v1
            before = int((folder / "memory.current").read_text())
            fd = os.open(folder / "memory.peak", os.O_RDWR)
            try:
                os.write(fd, b"reset\n")
            except OSError:
                os.close(fd)
                return None

            def rose_v2() -> int:
                try:
                    os.lseek(fd, 0, os.SEEK_SET)
                    return int(os.read(fd, 64)) - before
                finally:
                    os.close(fd)

            return rose_v2
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """Kill every process in the group, including any that left the kernel's process
        group (``setsid``) or were started while the others were being killed."""
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        """Kill what is left and remove the group's folders (a group with no process left)."""
        self.kill()
        for folder in reversed(self.folders):
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy: a process is still exiting
                    time.sleep(0.02)
        self.folders = []


def _write_if_there(path: Path, value: str) -> None:
    if path.exists():
        try:
            path.write_text(value)
        except OSError:
            pass
