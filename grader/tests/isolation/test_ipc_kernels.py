"""Kernels started by nbval (conftest.py) and by the grader listen on Unix sockets of their own,
so kernels started at the same moment cannot race for a TCP port (course_grader.isolation.ipc)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from course_grader.isolation.ipc import AsyncIpcKernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, RunningKernel

pytestmark = pytest.mark.skipif(os.name != "posix", reason="ipc sockets need a POSIX system")


def test_nbval_kernels_listen_on_their_own_unix_sockets(tmp_path):
    kernels = [RunningKernel(CURRENT_ENV_KERNEL_NAME, str(tmp_path)) for _ in range(2)]
    try:
        infos = [json.loads(Path(k.km.connection_file).read_text()) for k in kernels]
        assert [info["transport"] for info in infos] == ["ipc", "ipc"]
        assert infos[0]["ip"] != infos[1]["ip"]  # each kernel's sockets are its own files
        for kernel in kernels:
            reply = kernel.kc.execute_interactive("assert 6 * 7 == 42", timeout=30)
            assert reply["content"]["status"] == "ok"
    finally:
        for kernel in kernels:
            kernel.stop()


def test_the_graders_kernel_answers_over_ipc_and_leaves_no_socket_behind(tmp_path):
    async def run() -> list[Path]:
        km = AsyncIpcKernelManager(kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path))  # another folder than ours, as in the grader
        sockets = Path(km.ip).parent.glob(Path(km.ip).name + "-*")
        client = km.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=30)
            assert km.transport == "ipc"
            sockets = list(sockets)
            assert len(sockets) == 5  # shell, iopub, stdin, control, heartbeat
        finally:
            client.stop_channels()
            await km.shutdown_kernel(now=True)
        return sockets

    assert not any(socket.exists() for socket in asyncio.run(run()))
