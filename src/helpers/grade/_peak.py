"""Lesson 07's peak memory, measured by the grader from outside the student's kernel.

The blockwise exercises fail an answer that holds the whole score matrix at once. In the
notebook the check measures that with tracemalloc, in the process the answer runs in; when
grading, that process is the student's kernel, where a notebook can stop tracemalloc from
seeing an allocation (an array in memory from ``mmap``, or tracemalloc itself patched). So the
grader also reads the kernel process's resident memory around the call from ``/proc``: it
resets the kernel's peak (``clear_refs``), and after the reply reads the peak (``VmHWM``) less
what was resident before (``VmRSS``). The verdict takes the larger of the two measurements: what
the kernel reports can only make the peak larger, never hide memory the kernel touched.

What this cannot see: memory the answer reuses that was already resident before the call (the C
library keeps freed memory for later allocations); tracemalloc, in the kernel, counts that. An
answer must fool both at once to pass with the whole matrix: docs/INSTRUCTORS.md says so.
"""

from __future__ import annotations

import os

_KERNEL_MARK = b"ipykernel_launcher"


def kernel_python(launched: int | None) -> int | None:
    """The process id of the kernel's Python: ``launched`` itself, or, when it was started
    through wrappers (the sandbox, prlimit, a shell), its descendant running ipykernel."""
    if launched is None:
        return None
    parents: dict[int, int] = {}
    candidates = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            parents[pid] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if _KERNEL_MARK in f.read():
                    candidates.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    # The deepest one: the wrappers' command lines (a shell's "$@") name ipykernel too.
    found, depth = None, -1
    for pid in candidates:
        ancestor, hops = pid, 0
        while ancestor in parents and hops < 64:
            if ancestor == launched:
                if hops > depth:
                    found, depth = pid, hops
                break
            ancestor, hops = parents[ancestor], hops + 1
    return found


class PeakWatch:
    """The peak resident memory of one process from :meth:`start` to :meth:`stop` (bytes)."""

    def __init__(self, pid: int | None):
        self.pid = pid
        self._before: int | None = None

    def _status(self, field: str) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024  # kB
        raise OSError(f"no {field} in /proc/{self.pid}/status")

    def start(self) -> None:
        self._before = None
        if self.pid is None:
            return
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as f:
                f.write("5")  # the peak resident set (VmHWM) starts again from now
            self._before = self._status("VmRSS")
        except (OSError, ValueError):
            self._before = None

    def stop(self) -> int | None:
        """Bytes by which the peak rose above what was resident at :meth:`start`, or None when
        it could not be measured (no such process, no right to reset its peak)."""
        if self._before is None:
            return None
        try:
            return max(0, self._status("VmHWM") - self._before)
        except (OSError, ValueError):
            return None
