"""Lesson 07's peak memory, measured by the grader from outside the student's kernel.

The blockwise exercises fail an answer that holds the whole score matrix at once. In the
notebook the check measures that with tracemalloc, in the process the answer runs in; when
grading, that process is the student's kernel, where a notebook can stop tracemalloc from
seeing an allocation (an array in memory from ``mmap``, or tracemalloc itself patched), or
hold the matrix in another process. So the grader also reads the resident memory of every
process of the kernel (its control group, or the kernel and its descendants, from psutil)
around the call: it resets each one's peak (``clear_refs``), and after the reply adds up how
far each peak (``VmHWM``) rose above what that process held before (``VmRSS``; a process
started meanwhile counts whole). The verdict takes the larger of the two measurements: what
the kernel reports can only make the peak larger, never hide memory its processes touched.

What this cannot see: memory the answer reuses that was already resident before the call (the C
library keeps freed memory for later allocations); tracemalloc, in the kernel, counts that. An
answer must fool both at once to pass with the whole matrix: docs/INSTRUCTORS.md says so.
"""

from __future__ import annotations

import psutil


def descendants(root: int | None) -> list[int]:
    """``root`` and every process below it, now (psutil's process tree)."""
    if root is None:
        return []
    try:
        return [root, *(child.pid for child in psutil.Process(root).children(recursive=True))]
    except psutil.Error:  # gone, or not ours to read
        return []


def _resident(pid: int) -> int:
    """What the process holds in memory now (bytes): VmRSS."""
    return psutil.Process(pid).memory_info().rss


def _peak(pid: int) -> int:
    """The process's peak resident set since its last reset (bytes): VmHWM, which psutil does
    not report, read from /proc/PID/status itself."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    raise OSError(f"no VmHWM in /proc/{pid}/status")


class PeakWatch:
    """How much the resident memory of the kernel's processes rose at its peak, from
    :meth:`start` to :meth:`stop` (bytes): every process ``processes()`` lists (the kernel's
    control group, or the kernel and its descendants), those it starts meanwhile included, so
    a child process that holds the matrix, or that sleeps as a decoy, counts."""

    def __init__(self, processes, group=None):
        self.processes = processes  # () -> list of process ids
        self.group = group  # the kernel's cgroup.Group, or None
        self._before: dict[int, int] | None = None
        self._group_rose = None

    def start(self) -> None:
        # The group's own peak sees a child that held the matrix and exited before the reply;
        # the processes' peaks see what the group's count may not (it also counts page cache).
        self._group_rose = self.group.memory_peak_watch() if self.group is not None else None
        self._before = {}
        for pid in self.processes():
            try:
                with open(f"/proc/{pid}/clear_refs", "w") as f:
                    f.write("5")  # its peak resident set (VmHWM) starts again from now
                self._before[pid] = _resident(pid)
            except (OSError, ValueError, psutil.Error):
                continue  # gone, or not ours to read
        if not self._before:
            self._before = None  # nothing could be measured (no rights, no process)

    def stop(self) -> int | None:
        """The sum over the processes of how far each one's peak rose above what it held at
        :meth:`start` (a process started since: its whole peak), or None when nothing could
        be measured."""
        group = None
        if self._group_rose is not None:
            try:
                group = max(0, self._group_rose())
            except (OSError, ValueError):
                group = None
        if self._before is None:
            return group
        total = 0
        for pid in self.processes():
            try:
                total += max(0, _peak(pid) - self._before.get(pid, 0))
            except (OSError, ValueError):
                continue  # gone since
        return total if group is None else max(total, group)
