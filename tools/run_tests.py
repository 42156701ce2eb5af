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
INSTALL_CHROMIUM = "install Chromium (Debian/Ubuntu: sudo apt-get install chromium)"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    """The first Chromium on this machine (shutil.which takes names and absolute paths)."""
    return next(filter(None, map(shutil.which, CHROMIUM_CANDIDATES)), None)


# One kernel per core; every cell of a notebook runs in the same worker (--dist loadfile).
PARALLEL = ["-n", str(min(4, os.cpu_count() or 1)), "--dist", "loadfile"]

LINTED = [
    "conftest.py",
    "src",
    "tests",
    "tools",
    "benchmarks",
    *(f"solutions/{p.name}" for p in sorted(ROOT.glob("solutions/*.py"))),
]
STEPS = {
    "lint (ruff)": [PY, "-m", "ruff", "check", *LINTED],
    # Includes tests/test_build_lessons.py, which fails when a generated lesson file is stale.
    "helpers and course tests": [PY, "-m", "pytest", "-q", *PARALLEL, "-m", "not browser"],
    # Solutions: every stored output must reproduce (only cells tagged as unreproducible skip).
    "solutions reproduce (nbval)": [
        PY,
        "-m",
        "pytest",
        "-q",
        *PARALLEL,
        "--nbval",
        "--nbval-current-env",
        "solutions",
    ],
    # Learner copies: no stored outputs; they must run top to bottom without an error.
    "learner notebooks run (nbval-lax)": [
        PY,
        "-m",
        "pytest",
        "-q",
        *PARALLEL,
        "--nbval-lax",
        "--nbval-current-env",
        "notebooks",
    ],
}
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
    if which in ("all", "fast"):
        for name, cmd in STEPS.items():
            run(name, cmd)
    if which in ("all", "browser"):
        if not (ROOT / "tests" / "browser").is_dir():
            print("\n=== browser tests: none yet")
        elif find_chromium():
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
