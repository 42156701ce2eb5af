"""Peak memory of grading each lesson's solution notebook, the grader and its kernel together.

    python benchmarks/peak_memory_grade.py [LESSON ...]

Runs ``python -m course_grader --one solutions/NN_*.ipynb`` and samples, every 50 ms, the
resident memory of that process and every process below it (the sandboxed kernel included),
added up: an overestimate, since a page two processes share is counted twice. The numbers back
the memory ``make gradescope`` suggests (docs/GRADER_EVIDENCE.md).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent


def peak_mib(command: list[str]) -> float:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root, peak = psutil.Process(process.pid), 0
    while process.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:  # a process ended between the listing and the reading
            pass
        time.sleep(0.05)
    return peak / 2**20


def main(lessons: list[str]) -> int:
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        if path.name[:2] in ("00",) or (lessons and path.name[:2] not in lessons):
            continue
        command = [sys.executable, "-m", "course_grader", "--one", str(path), "-q"]
        print(f"{path.name[:2]} {peak_mib(command):.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
