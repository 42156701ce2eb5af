"""Zip the learner's course (no solutions) into build/self-attention-course.zip.

    python tools/make_handout.py

The zip holds what a learner needs to run `make lab`: the learner notebooks, the helpers
package, the set-up files. It leaves out `solutions/`, the tests and the tools.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = (
    "notebooks/",
    "src/",
    "jupyter/",
    "README.md",
    "Makefile",
    "requirements.txt",
    "pyproject.toml",
    "environment.yml",
    "postBuild",
    "jupytext.toml",
)
OUT = ROOT / "build" / "self-attention-course.zip"


def main() -> int:
    # Files git tracks, so caches and a local .venv never end up in the zip.
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    files = [f for f in tracked if f.startswith(INCLUDE) or f in INCLUDE]
    if not any(f.startswith("notebooks/") for f in files):
        sys.exit("no learner notebooks found: run `make notebooks` first")
    OUT.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(OUT, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in files:
            archive.write(ROOT / name, f"self-attention-course/{name}")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(files)} files, {OUT.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
