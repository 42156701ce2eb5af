"""What `make test` runs, in order, stopping at the first failure.

python tools/run_tests.py all       # everything (browser tests only where Chromium exists)
python tools/run_tests.py fast      # everything but the browser tests
python tools/run_tests.py browser   # only the browser tests
python tools/run_tests.py kernels   # only the numerical tests and nbval under other BLAS kernels

`all` and `fast` end with `kernels`: the numerical tests and the solutions' stored outputs again,
under each OpenBLAS kernel this CPU can run that the first pass did not use (helpers.blas), so
that a number that depends on the CPU fails here and not on a learner's laptop.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
INSTALL_CHROMIUM = (
    "install Chromium (Debian/Ubuntu: sudo apt-get install chromium-headless-shell, or chromium)"
)
# Chromium's headless shell first (Debian's chromium-headless-shell, the build Playwright itself
# runs headless): the same Blink as the full browser without its UI, and about 1/6 less CPU for
# the browser suite here (395-475 s against 478-572 s, two runs each, interleaved).
CHROMIUM_CANDIDATES = (
    "/usr/bin/chromium-headless-shell",
    "chromium-headless-shell",
    "/usr/bin/chromium",
    "chromium",
    "chromium-browser",
    "google-chrome",
)


def find_chromium() -> str | None:
    """The first Chromium on this machine (shutil.which takes names and absolute paths)."""
    return next(filter(None, map(shutil.which, CHROMIUM_CANDIDATES)), None)


# One worker per core. One pytest session runs the tests and the lessons, so
# the workers start and import once and none waits idle at the end of a step for the other;
# --dist loadfile keeps each test file and each notebook on one worker (a notebook's cells share
# its kernel); conftest.py starts the longest first and runs notebooks/ as --nbval-lax does.
PARALLEL = ["-n", str(min(4, os.cpu_count() or 1)), "--dist", "loadfile", "--no-loadscope-reorder"]

LINTED = [
    "conftest.py",
    "src",
    "grader",
    "tests",
    "tools",
    "benchmarks",
    *(f"solutions/{p.name}" for p in sorted(ROOT.glob("solutions/*.py"))),
]
LINT = [PY, "-m", "ruff", "check", *LINTED]
# tests/: includes tests/test_build_lessons.py, which fails when a generated lesson file is
# stale. solutions/: every stored output must reproduce (only cells tagged as unreproducible
# skip). notebooks/ (learner copies, no stored outputs): every cell runs without an error.
PYTEST = [
    PY,
    "-m",
    "pytest",
    "-q",
    # First, before nbval's import of jsonschema: see tests/pytest_lazy_imports.py.
    "-p",
    "tests.pytest_lazy_imports",
    *PARALLEL,
    "-m",
    "not browser",
    "--nbval",
    "--nbval-current-env",
    "tests",
    "grader/tests",
    "solutions",
]
# The test files that compute nothing a BLAS kernel could change (set-up, building, grading,
# time limits, accessibility): the kernel passes leave them out, as they leave out the grader's
# tests (grader/tests: nothing numerical). Every other file of tests/ runs under every kernel, so
# a new one is numerical until listed here (tests/test_run_tests.py).
NOT_NUMERICAL = (
    "test_allowed_helpers.py",
    "test_binder.py",
    "test_build_lessons.py",
    "test_checks_no_delegation.py",
    "test_checks_time_limits.py",
    "test_colour_vision.py",
    "test_exercise_bar.py",
    "test_handout.py",
    "test_pip_install.py",
    "test_run_tests.py",
    "test_site.py",
    "test_slider.py",
    "test_workflows.py",
)
NUMERICAL = [
    PY,
    *PYTEST[1 : PYTEST.index("--nbval")],
    "--nbval",
    "--nbval-current-env",
    *(f"--ignore=tests/{name}" for name in NOT_NUMERICAL),
    "tests",
    "solutions",
]
BROWSER_STEP = [PY, "-m", "pytest", "-q", "-s", "-m", "browser", "tests/browser"]


def run(name: str, cmd: list[str], env: dict | None = None) -> None:
    shown = [Path(c).name if c == PY else c for c in cmd if not c.startswith("--ignore=")]
    if len(shown) < len(cmd):
        shown.insert(-2, "--ignore=(tools/run_tests.py's NOT_NUMERICAL)")
    print(f"\n=== {name}: {' '.join(shown)}", flush=True)
    start = time.perf_counter()
    code = subprocess.call(cmd, cwd=ROOT, env=env)
    outcome = "ok" if code == 0 else f"FAILED (exit {code})"
    print(f"=== {name}: {outcome} in {time.perf_counter() - start:.1f} s", flush=True)
    if code != 0:
        sys.exit(code)


def blas_in_child(coretype: str | None, generation: bool = False) -> dict:
    """helpers.blas.numpy_blas() in a new Python with OPENBLAS_CORETYPE=coretype (None: unset);
    with ``generation``, in the kernel pass's own environment (helpers.blas.kernel_env)."""
    from helpers.blas import kernel_in_child

    try:
        return kernel_in_child(coretype, python=PY, generation=generation)
    except subprocess.CalledProcessError as error:
        sys.exit(f"could not read NumPy's BLAS with OPENBLAS_CORETYPE={coretype}:\n{error.stderr}")


def other_kernels() -> tuple[list[str], str]:
    """The kernels to run the numerical tests under again, and a line that says which and why.

    The first pass ran with the environment as it is (OPENBLAS_CORETYPE set or not); the others
    are this CPU's own choice (if the environment forced another) and each kernel of
    helpers.blas.KERNEL_NEEDS the CPU can run, but the one already used.
    """
    from helpers.blas import runnable_kernels

    first = blas_in_child(os.environ.get("OPENBLAS_CORETYPE"))
    if first["library"] != "openblas":
        return [], f"NumPy here uses {first['library']}, not OpenBLAS: it has no kernel to choose"
    native = blas_in_child(None)["kernel"]
    kernels = [k for k in (native, *runnable_kernels()) if k]
    todo = [k for i, k in enumerate(kernels) if k != first["kernel"] and k not in kernels[:i]]
    line = f"first pass: kernel {first['kernel']}; this CPU's own: {native}"
    return todo, line


def kernel_passes() -> None:
    from helpers.blas import NUMPY_FEATURES_OFF, kernel_env

    todo, line = other_kernels()
    if not todo:
        print(f"\n=== other BLAS kernels: none to run ({line})")
        return
    print(f"\n=== other BLAS kernels: {', '.join(todo)} ({line})", flush=True)
    has = set(blas_in_child(None)["numpy_features"])  # NumPy's loops this CPU can run
    for kernel in todo:
        # The pass's own environment, read back: OpenBLAS's kernel, and NumPy's newer loops off
        # as on a CPU of that kernel's generation (those this CPU has).
        child = blas_in_child(kernel, generation=True)
        if child["kernel"] != kernel:
            sys.exit(f"OPENBLAS_CORETYPE={kernel} did not take: OpenBLAS chose {child['kernel']}")
        off = [f for f in NUMPY_FEATURES_OFF[kernel] if f in has]
        still_on = [f for f in off if f in child["numpy_features"]]
        if still_on:
            sys.exit(f"NPY_DISABLE_CPU_FEATURES did not take: NumPy still uses {still_on}")
        env = {**os.environ, **kernel_env(kernel)}
        also = f", NumPy's {' '.join(off)} loops off" if off else ""
        run(f"numerical tests and solutions under OpenBLAS kernel {kernel}{also}", NUMERICAL, env)


def main(which: str) -> None:
    start = time.perf_counter()
    browser = (ROOT / "tests" / "browser").is_dir() and find_chromium() is not None
    if which in ("all", "fast"):
        run("lint (ruff)", LINT)
        if which == "all" and browser:
            # The learner copies run once, in the browser tests, which run every cell of both
            # copies anyway (and fail on any error output, as nbval-lax does).
            run("tests, solutions reproduce (nbval); learner copies: in the browser", PYTEST)
        else:
            run("tests, solutions reproduce (nbval), learner copies run (nbval-lax)",
                [*PYTEST, "notebooks"])  # fmt: skip
        kernel_passes()
    if which == "kernels":
        kernel_passes()
    if which in ("all", "browser"):
        if not (ROOT / "tests" / "browser").is_dir():
            print("\n=== browser tests: none yet")
        elif browser:
            run("browser tests (JupyterLab in headless Chromium)", BROWSER_STEP)
        elif which == "browser":
            sys.exit(f"No Chromium found: {INSTALL_CHROMIUM} to run the browser tests.")
        else:
            print(
                "\n=== browser tests: SKIPPED, no Chromium found. Everything else passed.\n"
                f"    To run them too: {INSTALL_CHROMIUM}, then make test-browser."
            )
    print(f"\nAll requested tests passed in {time.perf_counter() - start:.1f} s.")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("all", "fast", "browser", "kernels"):
        sys.exit(__doc__)
    main(sys.argv[1])
