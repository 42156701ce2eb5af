"""Kernel managers whose kernels listen on Unix sockets (ZeroMQ's ipc transport), not TCP ports.

With TCP, jupyter_client picks a free port, releases it and lets the kernel bind it; another
process starting kernels at the same moment, or any outgoing connection, can take that port in
between, and the kernel then never answers ("Kernel didn't respond in 60 seconds": this failed a
CI run once, with two pytest-xdist workers running nbval). Here each kernel's sockets are files
named after a fresh uuid, in a temporary folder this process removes when it exits, so no two
kernels can share one. The grader uses :class:`AsyncIpcKernelManager` (nbclient is async); the
repository's ``conftest.py`` gives nbval :class:`IpcKernelManager`.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
import uuid

from jupyter_client.manager import AsyncKernelManager, KernelManager

SUPPORTED = os.name == "posix"  # ZeroMQ's ipc transport needs Unix sockets


@functools.cache
def _socket_folder() -> str:
    folder = tempfile.mkdtemp(prefix="kernel-sockets-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


class _OwnSockets:
    def __init__(self, **kwargs):
        # An absolute path: jupyter_client's default ("kernel-ipc") is relative to the current
        # folder, and the kernel may be started in another one (nbval: the notebook's folder).
        # jupyter_client removes the socket files when it cleans up after the kernel.
        kwargs.update(transport="ipc", ip=os.path.join(_socket_folder(), uuid.uuid4().hex))
        super().__init__(**kwargs)


class IpcKernelManager(_OwnSockets, KernelManager):
    """A blocking KernelManager (as nbval uses) over Unix sockets."""


class AsyncIpcKernelManager(_OwnSockets, AsyncKernelManager):
    """An async KernelManager (as nbclient uses) over Unix sockets."""
