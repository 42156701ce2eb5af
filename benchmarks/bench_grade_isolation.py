"""What grading safely costs (issue 33): this grader against an older one, on the same class.

    .venv/bin/python benchmarks/bench_grade_isolation.py [--old 5297f68] [--lesson 03]
        [--students 30] [--repeats 3] [--jobs 2]

The class: ``--students`` copies of the learner notebook of ``--lesson``, its first exercise
answered right, wrong, not at all, or with an endless loop (benchmarks/bench_grade.py's mix).
The older grader (``--old``, by default the last commit before issue 33: verdicts computed
inside each student's kernel, no sandbox) runs from ``git archive`` of that commit's ``src/``;
this one from the working tree (verdicts computed in the grader's process, each kernel in
bubblewrap's sandbox where it can run). Each is ``python -m course_grader --no-cache`` in a
fresh process, in turn, ``--repeats`` times; printed: the median seconds of each, the ratio of
the medians and of each pair (target: at most 1.3x), and whether every run's grades.csv is the
same file byte for byte (the draws are seeded by the student's name, as before).

Timings depend on what else the machine does: keep it quiet. A script to read, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_grade import make_class  # noqa: E402
from course_grader.isolation import bubblewrap  # noqa: E402


def _old_source(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "src"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    import io

    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _grade(src: Path, folder: Path, out: Path, jobs: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(src))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "course_grader", "--submissions", str(folder), "--out", str(out),
         "--jobs", str(jobs), "--no-cache", "--quiet"],
        check=True, env=env, cwd=folder.parent, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--old", default="5297f68")
    parser.add_argument("--lesson", default="03")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    print(f"sandbox: {bubblewrap.unavailable() or 'bubblewrap'}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = tmp / "class"
        counts = make_class(folder, args.lesson, args.students)
        print(f"class: {args.students} notebooks of lesson {args.lesson}: {counts}")
        sources = {"old": _old_source(args.old, tmp / "old"), "new": ROOT / "src"}
        times: dict[str, list[float]] = {"old": [], "new": []}
        grades: dict[str, list[bytes]] = {"old": [], "new": []}
        for r in range(args.repeats):
            # Alternate which goes first: a slow moment on a shared machine hits both sides.
            for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
                out = tmp / f"out-{which}-{r}"
                times[which].append(_grade(sources[which], folder, out, args.jobs))
                grades[which].append((out / "grades.csv").read_bytes())
                print(f"  run {r + 1} {which}: {times[which][-1]:.1f} s", flush=True)
        old, new = (statistics.median(times[w]) for w in ("old", "new"))
        pairs = [n / o for n, o in zip(times["new"], times["old"])]
        print(
            f"old {old:.1f} s, new {new:.1f} s (medians of {args.repeats}); ratio new / old "
            f"{new / old:.2f}x, by pair {', '.join(f'{p:.2f}' for p in pairs)} (target 1.3x)"
        )
        same = len({*grades["old"], *grades["new"]}) == 1
        print(f"grades.csv byte for byte the same in all {2 * args.repeats} runs: {same}")
        if not same:
            old_rows = grades["old"][0].decode().splitlines()
            new_rows = grades["new"][0].decode().splitlines()
            for a, b in zip(old_rows, new_rows):
                if a != b:
                    print(f"  old: {a}\n  new: {b}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
