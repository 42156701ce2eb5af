"""What `make test` runs, in order, stopping at the first failure.

python tools/run_tests.py all       # everything (browser tests only where Chromium exists)
python tools/run_tests.py fast      # everything but the browser tests
python tools/run_tests.py browser   # only the browser tests
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
    "solutions",
]
BROWSER_STEP = [PY, "-m", "pytest", "-q", "-s", "-m", "browser", "tests/browser"]


def run(name: str, cmd: list[str]) -> None:
    print(f"\n=== {name}: {' '.join(Path(c).name if c == PY else c for c in cmd)}", flush=True)
    start = time.perf_counter()
    code = subprocess.call(cmd, cwd=ROOT)
    outcome = "ok" if code == 0 else f"FAILED (exit {code})"
    print(f"=== {name}: {outcome} in {time.perf_counter() - start:.1f} s", flush=True)
    if code != 0:
        sys.exit(code)


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
    if len(sys.argv) != 2 or sys.argv[1] not in ("all", "fast", "browser"):
        sys.exit(__doc__)
    main(sys.argv[1])
