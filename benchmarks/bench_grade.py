"""What grading costs: on top of simply running the notebooks (issue 11: at most 1.3x), and
for a term's class, a rerun with nothing changed and a rerun after one late notebook (issue 18).

    .venv/bin/python benchmarks/bench_grade.py [--students 30] [--repeats 3] [--lesson 01]
    .venv/bin/python benchmarks/bench_grade.py --term [--students 300] [--repeats 5]

A class of ``--students`` copies of the real learner notebook ``notebooks/NN_*.ipynb``, its
first exercise answered four ways: right (40 %), wrong (25 %), untouched (20 %) and an endless
loop (15 %, stopped by the check's own 5 s limit). Both runs use the same kernels, the same
number at once (one per core) and the same environment:

* plain: ``nbclient`` executes each notebook (``allow_errors=True``, and the kernel killed at
  the end as the grader does, ``shutdown_kernel="immediate"``: nbclient's default, a graceful
  shutdown, costs about a second more per notebook), nothing else;
* grade: ``course_grader`` end to end: find and recognise the notebooks, copy each into its own
  folder, run it under the limits, read the checks' log, write grades.csv, the feedback files
  and report.html.

The two alternate, ``--repeats`` times each; the ratio of the medians is printed at the end.

``--term`` (default 300 students, the same mix) times what a term needs instead: the full
run into a fresh ``OUT`` (once: it is the long one), then ``--repeats`` times each a second run
with nothing changed (target <= 5 s: every notebook from the cache) and a run after one
student's notebook changed (target <= that notebook's own run time + 5 s), each as
``python -m course_grader`` in a fresh process (imports included), medians printed.

``--keep DIR`` keeps the class and its ``OUT`` in ``DIR`` (``DIR/class``, ``DIR/out``) and, when
they are there from an earlier ``--term`` run, reuses them instead of the full run: to measure
the reruns again after a change to the grader without 20-35 minutes of grading first (a change
under ``src/helpers/`` empties the cache, so the first rerun after it runs every notebook again:
run the bench twice, or ``make grade`` once, and read the second).

Python's bytecode: when the environment sets ``PYTHONDONTWRITEBYTECODE`` (these sessions' shells
do), every ``python -m course_grader`` compiles the course's ~40 modules again (about 1 s here
under load); ``--bytecode`` runs the grader (and its kernels) as Python does by default, with
the compiled files kept (in a folder of the benchmark's, ``PYTHONPYCACHEPREFIX``, so nothing is
written into the repository). The output says which.

Timings depend on what else the machine does: a script to read, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from course_grader.cli import grade  # noqa: E402
from course_grader.isolation.sandbox import Limits, kernel_config, kernel_environment, run_all  # noqa: E402

from helpers import checks  # noqa: E402
from helpers.checks import Exercise  # noqa: E402

STUB = re.compile(r"^([ \t]*)# YOUR CODE HERE\n[ \t]*raise NotImplementedError\([^\n]*\)\n?", re.M)


def answers(exercise: Exercise) -> dict[str, str]:
    """Bodies for the exercise's stub: right (the reference's body), wrong, loop, untouched."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(exercise.reference))
    body = source.split("\n", 1)[1]  # everything after the def line
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith('"""'))
    first_arg = exercise.signature[exercise.signature.find("(") + 1 :].split(",")[0].strip(") ")
    return {
        "right": textwrap.dedent(body),
        "wrong": f"return {first_arg} * 0 + 1 if hasattr({first_arg}, 'shape') else None\n",
        "loop": "while True:\n    pass\n",
        "untouched": "",
    }


def make_class(folder: Path, lesson: str, students: int) -> dict[str, int]:
    template = nbformat.read(next((ROOT / "notebooks").glob(f"{lesson}_*.ipynb")), as_version=4)
    exercise = next(e for e in checks.catalogue() if e.lesson == lesson and isinstance(e, Exercise))
    bodies = answers(exercise)
    mix = ["right"] * 8 + ["wrong"] * 5 + ["untouched"] * 4 + ["loop"] * 3
    counts: dict[str, int] = {}
    for k in range(students):
        kind = mix[k * len(mix) // students]  # the same proportions for any class size
        counts[kind] = counts.get(kind, 0) + 1
        nb = nbformat.from_dict(template)
        for cell in nb.cells:
            if cell.cell_type == "code" and f"def {exercise.name}(" in cell.source and bodies[kind]:
                match = STUB.search(cell.source)
                if match:
                    indent = match.group(1)
                    body = "".join(indent + line + "\n" for line in bodies[kind].splitlines())
                    cell.source = cell.source[: match.start()] + body + cell.source[match.end() :]
        (folder / f"student{k:02d}").mkdir(parents=True)
        nbformat.write(nb, folder / f"student{k:02d}" / "my_notebook.ipynb")
    return counts


def plain(folder: Path, jobs: int, cell_seconds: float) -> float:
    """Every notebook with plain nbclient, ``jobs`` at once; seconds."""
    paths = sorted(folder.rglob("*.ipynb"))
    config = kernel_config()
    env = kernel_environment(None, None)

    async def one(path: Path) -> None:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=int(cell_seconds),
            allow_errors=True,
            kernel_name="python3",
            shutdown_kernel="immediate",  # as the grader does: a fair comparison
            resources={"metadata": {"path": str(path.parent)}},
            **({"config": config} if config is not None else {}),
        )
        await client.async_execute(env=env)

    start = time.perf_counter()
    asyncio.run(run_all(paths, jobs, one))
    return time.perf_counter() - start


def graded(folder: Path, out: Path, jobs: int, limits: Limits) -> float:
    start = time.perf_counter()
    grade(folder, out, limits, jobs=jobs, say=None, use_cache=False)
    return time.perf_counter() - start


def _cli(folder: Path, out: Path, jobs: int, env: dict | None = None) -> tuple[float, str]:
    """One ``python -m course_grader`` in a fresh process: (seconds, its first line)."""
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "course_grader", "--submissions", str(folder), "--out", str(out),
         "--jobs", str(jobs)],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return time.perf_counter() - start, run.stdout.splitlines()[0]


def _environment(bytecode: bool, folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env


def term(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        folder, out = base / "class", base / "out"
        env = _environment(args.bytecode, base)
        writes = "kept" if "PYTHONDONTWRITEBYTECODE" not in env else "not kept"
        print(f"load average at start: {os.getloadavg()}; Python's compiled bytecode {writes}")
        if (out / ".grade" / "state.json").exists() and folder.is_dir():
            print(f"reusing {folder} and {out} (--keep): no full run", flush=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            counts = make_class(folder, args.lesson, args.students)
            print(f"{args.students} students, lesson {args.lesson} ({counts}), {args.jobs} kernels")
            full, line = _cli(folder, out, args.jobs, env)
            print(f"full run: {full:.1f} s ({line})", flush=True)
        unchanged, changed, own = [], [], []
        late = folder / "student00" / "my_notebook.ipynb"
        for r in range(args.repeats):
            seconds, line = _cli(folder, out, args.jobs, env)
            unchanged.append(seconds)
            print(f"  repeat {r + 1}: nothing changed {seconds:.2f} s ({line})", flush=True)
            nb = nbformat.read(late, as_version=4)  # a new version each time: a late hand-in
            nb.cells.append(nbformat.v4.new_markdown_cell(f"handed in again ({r + 1})"))
            nbformat.write(nb, late)
            seconds, line = _cli(folder, out, args.jobs, env)
            changed.append(seconds)
            entries = sorted((out / ".grade" / "cache").glob("*.json"), key=os.path.getmtime)
            own.append(json.loads(entries[-1].read_text())["outcome"]["seconds"])
            print(
                f"  repeat {r + 1}: one notebook changed {seconds:.2f} s, that notebook's own "
                f"run {own[-1]:.2f} s ({line})",
                flush=True,
            )
        u, c, o = (statistics.median(x) for x in (unchanged, changed, own))
        print(f"median: nothing changed {u:.2f} s (target <= 5 s)")
        print(
            f"median: one notebook changed {c:.2f} s = its own run {o:.2f} s + {c - o:.2f} s "
            "(target: + <= 5 s)"
        )
        print(f"load average at end: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=None, help="30 (300 with --term)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lesson", default="01")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--term", action="store_true", help="full run, rerun, one late notebook")
    parser.add_argument("--keep", help="--term: keep (and reuse) the class and OUT in this folder")
    parser.add_argument(
        "--bytecode", action="store_true", help="--term: keep Python's compiled bytecode"
    )
    args = parser.parse_args()
    if args.term:
        args.students = args.students or 300
        term(args)
        return
    args.students = args.students or 30
    limits = Limits()
    with tempfile.TemporaryDirectory() as tmp:
        folder, out = Path(tmp) / "class", Path(tmp) / "out"
        counts = make_class(folder, args.lesson, args.students)
        print(
            f"{args.students} students, lesson {args.lesson} ({counts}), {args.jobs} kernels "
            f"at once, {args.repeats} repeats each"
        )
        plain_times, grade_times = [], []
        for r in range(args.repeats):
            plain_times.append(plain(folder, args.jobs, limits.cell_seconds))
            shutil.rmtree(out, ignore_errors=True)
            grade_times.append(graded(folder, out, args.jobs, limits))
            print(f"  repeat {r + 1}: plain nbclient {plain_times[-1]:.1f} s, "
                  f"make grade {grade_times[-1]:.1f} s", flush=True)  # fmt: skip
        rows = (out / "grades.csv").read_text().splitlines()[1:]
        statuses = {}
        for row in rows:
            status = row.split(",")[3]
            statuses[status] = statuses.get(status, 0) + 1
        p, g = statistics.median(plain_times), statistics.median(grade_times)
        print(f"grades.csv: {len(rows)} rows, {statuses}")
        print(f"median: plain nbclient {p:.1f} s, make grade {g:.1f} s")
        print(f"ratio grade / plain = {g / p:.2f} (target <= 1.30)")


if __name__ == "__main__":
    main()
