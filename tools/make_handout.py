"""Zip the learner's course (no solutions) into build/self-attention-course.zip.

    python tools/make_handout.py [--out PATH]

The zip holds what a learner needs to run `make lab`: the learner notebooks, the helpers
package, the set-up files and the licences. It leaves out `solutions/`, the tests, the tools
and the grader (`grader/`, the instructor's package: its checks of similarity, its sandbox).
"""

from __future__ import annotations

import argparse
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
    "LICENSE",
    "LICENSE-CONTENT.md",
    "THIRD_PARTY_NOTICES.md",
    "CITATION.cff",
)
OUT = ROOT / "build" / "self-attention-course.zip"
HANDOUT_NOTE = (
    "> **This is the learner's copy of the course.** Run `make lab` and start with\n"
    "> `notebooks/00_start_here.ipynb`. The answered lessons (`solutions/`), the tests and the\n"
    "> tools are not in this copy, so the links and `make` targets below that need them do not\n"
    "> work here; ask your instructor for them.\n\n"
)


def tracked() -> list[str]:
    """The files git tracks, so caches, a local .venv and the model files never end up in a
    zip or a copy (make gradescope and tools/check_pip_install.py take the same list)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [name for name in out.stdout.decode().split("\0") if name]


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"the zip to write (default {OUT})")
    out = parser.parse_args().out.resolve()
    files = [f for f in tracked() if f.startswith(INCLUDE) or f in INCLUDE]
    if not any(f.startswith("notebooks/") for f in files):
        sys.exit("no learner notebooks found: run `make notebooks` first")
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in files:
            if name == "README.md":  # the same README, told that solutions/ and tests/ are not here
                archive.writestr(f"self-attention-course/{name}", HANDOUT_NOTE + readme())
            else:
                archive.write(ROOT / name, f"self-attention-course/{name}")
    print(f"wrote {out}: {len(files)} files, {out.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
