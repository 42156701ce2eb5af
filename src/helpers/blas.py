"""Which BLAS NumPy uses here, which OpenBLAS kernels this CPU can run, and how to ask for one.

Floating-point addition is not associative (``(0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3)``), and
each BLAS kernel groups, orders and rounds the terms of a matrix product its own way (vector
width, blocking, fused multiply-add or not). So a product, float32 or float64, can differ in its
last few bits from one kernel to another: measured here, a float32 (64 x 256) @ (256 x 64)
product under OpenBLAS's ``SkylakeX`` and ``Sandybridge`` kernels differs from ``Haswell``'s in
40 % and 84 % of its entries, by a median of 3 units in the last place. A printed number or a
training run that depends on those bits is not the same on every laptop.

Which kernel runs: NumPy's pip wheels on x86-64 bring OpenBLAS built with DYNAMIC_ARCH, which
picks one per CPU when it loads (``Haswell`` with AVX2, ``SkylakeX`` with AVX-512, ``Sandybridge``
with AVX only; newer names map onto these in that build, e.g. ``Zen`` gives ``Haswell``); on Arm,
OpenBLAS's Arm kernels; on macOS 14 or later NumPy uses Apple's Accelerate instead, which
threadpoolctl cannot see (:func:`numpy_blas` then falls back to NumPy's build information).
OpenBLAS reads ``OPENBLAS_CORETYPE`` when it loads and then uses that kernel (an unknown name
falls back to its own choice; a kernel the CPU lacks crashes with SIGILL, hence
:data:`KERNEL_NEEDS`). NumPy's own CPU-specific loops (``np.exp`` in float64, say) differ from
one CPU to another too; ``NPY_DISABLE_CPU_FEATURES`` turns the newer ones off
(:data:`NUMPY_FEATURES_OFF`). ``make test`` uses both to run the numerical tests as on an AVX2 and
an AVX laptop (``tools/run_tests.py``); lesson 10's weights are retrained bit for bit with the
first (:mod:`helpers.induction.reproduce`).

:func:`cpu_flags` and :func:`runnable_kernels` import nothing heavy: they are for a parent
process that will start a child with those variables set.
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
    "NUMPY_FEATURES_OFF",
    "numpy_blas",
    "describe",
    "cpu_flags",
    "runnable_kernels",
    "kernel_env",
    "kernel_in_child",
    "one_blas_thread",
]

# The OpenBLAS kernels the tests run under, each with the CPU flags (as Linux's /proc/cpuinfo
# names them) that its instructions need: forcing a kernel the CPU lacks ends in SIGILL.
KERNEL_NEEDS = {
    "Haswell": frozenset({"avx2", "fma"}),
    "SkylakeX": frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}),
    "Sandybridge": frozenset({"avx"}),
}
# NumPy's dispatched loops a CPU of each kernel's generation would not have (NumPy 2.4's names;
# its baseline is X86_V2): passed as NPY_DISABLE_CPU_FEATURES with the kernel, where this CPU has
# them, so that NumPy's own code runs as on that CPU too.
NUMPY_FEATURES_OFF = {
    "Haswell": ("X86_V4", "AVX512_ICL", "AVX512_SPR"),
    "SkylakeX": (),
    "Sandybridge": ("X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"),
}


def numpy_blas() -> dict:
    """The BLAS NumPy calls in this process: ``{"numpy", "library", "version", "kernel",
    "numpy_features"}``.

    ``library`` is threadpoolctl's name (``"openblas"``, ``"mkl"``, ...) or, where threadpoolctl
    sees none (Accelerate), the name NumPy was built with; ``kernel`` is OpenBLAS's
    architecture (``"Haswell"``, ``"SkylakeX"``, ...) or ``None``; ``numpy_features`` the CPU
    features NumPy's own loops may use here (after ``NPY_DISABLE_CPU_FEATURES``).
    """
    import numpy
    from threadpoolctl import threadpool_info

    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another NumPy layout: no features known
        __cpu_features__ = {}
    found = {
        "numpy": numpy.__version__,
        "library": "unknown",
        "version": None,
        "kernel": None,
        "numpy_features": sorted(name for name, on in __cpu_features__.items() if on),
    }
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            found["library"] = info.get("internal_api", "unknown")
            found["version"] = info.get("version")
            found["kernel"] = info.get("architecture")
            return found
    try:
        built = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
        found["library"], found["version"] = built.get("name", "unknown"), built.get("version")
    except Exception:  # an older NumPy or another layout: say we do not know
        pass
    return found


def describe(blas: dict | None = None) -> str:
    """``"NumPy 2.4.6, OpenBLAS 0.3.31.188.0, kernel SkylakeX"``: for messages and lessons."""
    blas = numpy_blas() if blas is None else blas
    name = {"openblas": "OpenBLAS", "scipy-openblas": "OpenBLAS", "mkl": "MKL"}.get(
        blas["library"], blas["library"]
    )
    text = f"NumPy {blas['numpy']}, {name}"
    if blas["version"]:
        text += f" {blas['version']}"
    if blas["kernel"]:
        text += f", kernel {blas['kernel']}"
    return text


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


def kernel_env(kernel: str) -> dict[str, str]:
    """The environment variables that make a new Python compute as a CPU of ``kernel``'s
    generation: OpenBLAS's kernel, and NumPy's newer loops off (disabling a loop this CPU lacks
    is allowed and does nothing). Lesson 10's bit-for-bit retraining needs both: with NumPy's
    AVX2 loops off too, the Haswell kernel's first 100 steps differ in a loss's last bit."""
    return {
        "OPENBLAS_CORETYPE": kernel,
        "NPY_DISABLE_CPU_FEATURES": " ".join(NUMPY_FEATURES_OFF[kernel]),
    }


def kernel_in_child(
    coretype: str | None, python: str = sys.executable, generation: bool = False
) -> dict:
    """:func:`numpy_blas` in a new Python with ``OPENBLAS_CORETYPE=coretype`` (None: unset);
    with ``generation``, in the environment of :func:`kernel_env` (NumPy's newer loops off too),
    so that a caller checks the very environment it will run in."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype is not None:
        env.update(kernel_env(coretype) if generation else {"OPENBLAS_CORETYPE": coretype})
    code = "import json, helpers.blas as b; print(json.dumps(b.numpy_blas()))"
    result = subprocess.run(
        [python, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


_THREADS: list = []  # one ThreadpoolController, made on first use (it inspects the process)


def one_blas_thread():
    """A context with one BLAS thread, for lesson 10's model's many small products: training
    (whose float32 products must not depend on the number of threads) and every forward pass.
    With OpenBLAS's default threads, two processes doing this at once on 2 cores (pytest's two
    workers, or a test beside a lesson's kernel) took minutes instead of seconds under the
    ``Haswell`` kernel; alone, one thread is as fast here."""
    from threadpoolctl import ThreadpoolController  # at call time: this module imports light

    if not _THREADS:
        _THREADS.append(ThreadpoolController())
    return _THREADS[0].limit(limits=1, user_api="blas")
