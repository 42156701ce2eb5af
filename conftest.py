"""Settings for every pytest run in this repository, nbval's notebook runs included.

nbval's kernels listen on Unix sockets instead of TCP ports, so two pytest-xdist workers starting
kernels at once cannot race for a port (see helpers.grade._ipc, which the grader uses too).
"""

from __future__ import annotations

import nbval.kernel

from helpers.grade._ipc import SUPPORTED, IpcKernelManager

if SUPPORTED:
    nbval.kernel.KernelManager = IpcKernelManager
