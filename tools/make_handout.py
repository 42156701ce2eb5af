"""Zip the learner's course (no solutions) into build/self-attention-course.zip.

    python tools/make_handout.py [--graded] [--repo OWNER/NAME] [--out PATH]

The zip holds what a learner needs to run `make lab` (tools/learner_copy.py says what): the
learner notebooks, the helpers package, the set-up files and the licences. It leaves out
`solutions/`, the tests, the tools and the grader (`grader/`, the instructor's package).
`--graded` makes the graded build (no lesson answers, no last hints; the default zip is then
build/self-attention-course-graded.zip); `--repo` fills the OWNER/REPO placeholders.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

from learner_copy import ROOT, learner_files

OUT = ROOT / "build" / "self-attention-course.zip"
GRADED_OUT = ROOT / "build" / "self-attention-course-graded.zip"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graded", action="store_true", help="the graded build (no answers)")
    parser.add_argument("--repo", help="owner/name of the learner repository, for OWNER/REPO")
    parser.add_argument("--out", type=Path, help=f"the zip to write (default {OUT.name})")
    args = parser.parse_args()
    out = (args.out or (GRADED_OUT if args.graded else OUT)).resolve()
    files = learner_files(graded=args.graded, repo=args.repo)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(f"self-attention-course/{name}", (2026, 1, 1, 0, 0, 0))
            mode = 0o755 if (ROOT / name).stat().st_mode & 0o111 else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    build = "graded build" if args.graded else "self-study build"
    print(f"wrote {out} ({build}): {len(files)} files, {out.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
