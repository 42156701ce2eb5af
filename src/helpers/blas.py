"""Which BLAS NumPy uses here, which OpenBLAS kernels this CPU can run, and how to ask for one.

Floating-point sums give results that depend on the order of their terms, and each BLAS kernel
(OpenBLAS picks one per CPU at start: ``Haswell`` on AVX2 machines, ``SkylakeX`` on AVX-512,
``Sandybridge`` on AVX ones; Apple's Accelerate and Arm's own) orders them its own way. So a
float32 product can differ in its last bit from one CPU to another, and a printed number or a
training run that depends on that bit is not the same on every laptop. OpenBLAS reads the
environment variable ``OPENBLAS_CORETYPE`` once, when NumPy is imported, and then uses that
kernel instead of its own choice: that is how ``make test`` checks the course under kernels
other than this CPU's (``tools/run_tests.py``), and how lesson 10's weights are retrained bit for
bit (:mod:`helpers.induction.reproduce`).

Nothing here imports NumPy at module level: :func:`cpu_flags` and :func:`runnable_kernels` are
for a parent process that will start a child with ``OPENBLAS_CORETYPE`` set.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

__all__ = [
    "KERNEL_NEEDS",
    "numpy_blas",
    "describe",
    "cpu_flags",
    "runnable_kernels",
    "kernel_in_child",
]

# The OpenBLAS kernels the tests run under, each with the CPU flags (as Linux's /proc/cpuinfo
# names them) that its instructions need: forcing a kernel the CPU lacks ends in SIGILL.
KERNEL_NEEDS = {
    "Haswell": frozenset({"avx2", "fma"}),
    "SkylakeX": frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}),
    "Sandybridge": frozenset({"avx"}),
}


def numpy_blas() -> dict:
    """The BLAS NumPy calls in this process: ``{"library", "version", "kernel"}``.

    ``library`` is threadpoolctl's name (``"openblas"``, ``"mkl"``, ...) or ``"unknown"``;
    ``kernel`` is OpenBLAS's architecture (``"Haswell"``, ``"SkylakeX"``, ...) or ``None``.
    """
    import numpy  # noqa: F401  (loads NumPy's BLAS, so that threadpoolctl sees it)
    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return {
                "library": info.get("internal_api", "unknown"),
                "version": info.get("version"),
                "kernel": info.get("architecture"),
            }
    return {"library": "unknown", "version": None, "kernel": None}


def describe(blas: dict | None = None) -> str:
    """``"OpenBLAS 0.3.31, kernel SkylakeX"``: one line for messages and test headers."""
    blas = numpy_blas() if blas is None else blas
    name = {"openblas": "OpenBLAS", "mkl": "MKL", "blis": "BLIS"}.get(
        blas["library"], blas["library"]
    )
    text = f"{name} {blas['version']}" if blas["version"] else name
    if blas["kernel"]:
        text += f", kernel {blas['kernel']}"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return text + (f" (OPENBLAS_CORETYPE={forced})" if forced else "")


def cpu_flags() -> frozenset[str]:
    """This CPU's instruction-set flags, on Linux x86-64 (empty elsewhere: no kernel is forced)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return frozenset()
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def runnable_kernels() -> list[str]:
    """The kernels of :data:`KERNEL_NEEDS` this CPU can run, in that order."""
    flags = cpu_flags()
    return [kernel for kernel, needs in KERNEL_NEEDS.items() if needs <= flags]


def kernel_in_child(coretype: str | None, python: str = sys.executable) -> dict:
    """:func:`numpy_blas` in a new Python with ``OPENBLAS_CORETYPE=coretype`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    code = "import json, helpers.blas as b; print(json.dumps(b.numpy_blas()))"
    result = subprocess.run(
        [python, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)
