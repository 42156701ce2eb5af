"""Write the learner's copy of the course as a new git repository, to push as the repository
students clone, pull (nbgitpuller), open on Binder or Colab, or pip install from.

    python tools/make_learner_repo.py DEST [--graded] [--repo OWNER/NAME]

It holds what `make handout` zips (tools/learner_copy.py): no `solutions/`, tests, tools or
`grader/`; with `--graded`, no lesson answers or last hints either. `--repo` fills every
OWNER/REPO placeholder (Binder and Colab links, pip and clone commands) with the repository's
own name, so the links point at it. DEST must not exist yet, or be an empty folder.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from learner_copy import learner_files, write_copy

COMMITTER = ["-c", "user.name=self-attention course", "-c", "user.email=course@localhost"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="the new repository's folder")
    parser.add_argument("--graded", action="store_true", help="the graded build (no answers)")
    parser.add_argument("--repo", help="owner/name the repository will have, for OWNER/REPO")
    args = parser.parse_args()
    dest = args.dest.resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        sys.exit(f"{dest} exists and is not an empty folder: choose a new one")
    if args.repo is not None and args.repo.count("/") != 1:
        sys.exit(f"--repo {args.repo!r}: give it as owner/name, e.g. my-school/attention-course")
    files = learner_files(graded=args.graded, repo=args.repo)
    dest.mkdir(parents=True, exist_ok=True)
    write_copy(dest, files)
    build = "graded build" if args.graded else "self-study build"
    git = ["git", "-C", str(dest)]
    subprocess.run([*git, "init", "--quiet", "--initial-branch=main"], check=True)
    subprocess.run([*git, "add", "--all"], check=True)
    message = f"The learner's copy of the self-attention course ({build})"
    subprocess.run([*git, *COMMITTER, "commit", "--quiet", "-m", message], check=True)
    print(f"wrote {dest} ({build}): {len(files)} files, one commit on branch main.")
    if args.repo is None:
        print("OWNER/REPO is left as it is: give --repo owner/name (REPO=owner/name) to fill it.")
    print(
        "Next: create the repository on GitHub (empty), then\n"
        f"  git -C {dest} remote add origin https://github.com/{args.repo or 'OWNER/REPO'}.git\n"
        f"  git -C {dest} push -u origin main"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
