"""Running one student's notebook apart from everything else, and checking its answers.

:mod:`.sandbox` runs a notebook in a fresh kernel with hard limits; :mod:`.bubblewrap`,
:mod:`.seccomp` and :mod:`.cgroup` keep that kernel from the machine; :mod:`.ipc` gives it Unix
sockets instead of TCP ports; :mod:`.peak` measures its memory from outside; :mod:`.remote` is
the grader's own check of each answer, its cases and verdicts in the grader's process, and
:mod:`.wire` reads back what crosses from the kernel (plain values, checked on the way in).
Nothing here knows about classes, points or reports.
"""
