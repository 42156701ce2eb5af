"""``python -m helpers.grade --submissions DIR --out DIR``: grade a class, write the reports."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

from helpers.checks import Exercise

from ._grading import (
    Row,
    Submission,
    find_submissions,
    known_lessons,
    lesson_items,
    missing_rows,
    recognise,
    rows_for,
    score,
)
from ._report import feedback_markdown, report_html, write_csv
from ._sandbox import Limits, run_all, run_notebook

ROOT = Path(__file__).resolve().parents[3]


def _bytes(text: str) -> int | None:
    """'4G', '512M', '0' (no limit) as a number of bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 4G, 512M, 0)")
    value = float(match.group(1)) * 1024 ** " KMG".index((match.group(2) or " ").upper())
    return int(value) or None


def _seconds(limit: float):
    """A float type for argparse that must lie in (0, limit) seconds."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not 0 < value < limit:
            raise argparse.ArgumentTypeError(
                f"{value:g} s: give more than 0 and less than {limit:g}"
            )
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m helpers.grade",
        description="Grade every student's notebooks: SUBMISSIONS/<student>/<any name>.ipynb. "
        "Writes OUT/grades.csv, OUT/feedback/<student>.md and OUT/report.html.",
    )
    p.add_argument("--submissions", required=True, type=Path, help="one folder per student")
    p.add_argument("--out", required=True, type=Path, help="where the reports go")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="kernels at once")
    p.add_argument("--cell-timeout", type=_seconds(86400), default=60.0, help="seconds per cell")
    p.add_argument(
        "--notebook-timeout", type=_seconds(86400), default=300.0, help="seconds per notebook"
    )
    p.add_argument(
        "--check-time-limit",
        type=_seconds(3600),  # the checks' own bound (helpers.checks._core)
        default=5.0,
        help="seconds for one call of a student's function inside a check",
    )
    p.add_argument(
        "--memory-limit", type=_bytes, default=4 * 2**30, help="per kernel, e.g. 4G; 0: none"
    )
    p.add_argument(
        "--lessons", nargs="*", default=None, help="grade these lessons (default: found)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no line per notebook")
    return p


def _kernel_config():
    """The course's kernel settings (as build_lessons and JupyterLab use), when present."""
    path = ROOT / "jupyter" / "jupyter_server_config.json"
    if not path.exists():
        return None
    from traitlets.config import Config

    return Config(json.loads(path.read_text()))


def grade(
    submissions: Path,
    out: Path,
    limits: Limits,
    jobs: int = 1,
    lessons: list[str] | None = None,
    say=print,
) -> list[Row]:
    """Grade the class and write the reports; returns the rows of grades.csv."""
    submissions, out = submissions.resolve(), out.resolve()
    if not submissions.is_dir():
        raise SystemExit(f"no such folder: {submissions}")
    if out == submissions or submissions in out.parents:
        raise SystemExit("--out must be outside --submissions (the submissions are never written)")
    start = time.monotonic()
    students, found, notes = find_submissions(submissions)
    for submission in found:
        recognise(submission)
    lessons_known = known_lessons()
    graded = sorted(
        set(lessons) if lessons else {s.lesson for s in found if s.lesson in lessons_known}
    )
    unknown = set(graded) - set(lessons_known)
    if unknown:
        raise SystemExit(f"no exercises for lesson(s) {', '.join(sorted(unknown))}")
    student_notes: dict[str, list[str]] = {s: [] for s in students}
    attention: list[str] = list(notes)
    for submission in found:
        where = f"{submission.student}/{submission.name}"
        if submission.lesson is None:
            why = f"not readable ({submission.unreadable})" if submission.unreadable else ""
            text = f"{where}: no lesson of the course recognised {why}".strip()
            student_notes[submission.student].append(f"`{submission.name}`: not graded, {text}")
            attention.append(text)
        elif submission.lesson not in lessons_known:
            student_notes[submission.student].append(
                f"`{submission.name}` is lesson {submission.lesson}, which has no exercises"
            )
        elif submission.lesson not in graded:
            student_notes[submission.student].append(
                f"`{submission.name}` is lesson {submission.lesson}, not graded in this run"
            )
        elif submission.unreadable:
            attention.append(f"{where}: not a readable notebook ({submission.unreadable})")
    to_run = [s for s in found if s.lesson in graded and s.nb is not None]
    config = _kernel_config()

    async def run_one(submission: Submission) -> None:
        names = [i.name for i in lesson_items(submission.lesson) if isinstance(i, Exercise)]
        submission.outcome = await run_notebook(
            submission.path, submission.nb, names, limits, config, submission.student
        )
        submission.rows = rows_for(submission, limits)
        if say:
            counts = {}
            for row in submission.rows:
                counts[row.status] = counts.get(row.status, 0) + 1
            summary = ", ".join(f"{v} {k}" for k, v in counts.items())
            ended = f", {submission.outcome.stopped}" if submission.outcome.stopped else ""
            say(
                f"  {submission.student}/{submission.name} (lesson {submission.lesson}): "
                f"{summary}{ended} [{submission.outcome.seconds:.1f} s]"
            )

    if say:
        say(
            f"Grading {len(to_run)} notebook(s) of {len(students)} student(s), lesson(s) "
            f"{', '.join(graded) or 'none'}, {max(1, min(jobs, len(to_run)))} at a time"
        )
    asyncio.run(run_all(to_run, jobs, run_one))
    for submission in found:
        if submission.lesson in graded and submission.unreadable:
            submission.rows = rows_for(submission, limits)
        outcome = submission.outcome
        where = f"{submission.student}/{submission.name}"
        if outcome is None:
            continue
        if outcome.stopped:
            what = {
                "cell_timeout": f"a cell ran past {limits.cell_seconds:g} s, kernel killed at",
                "notebook_timeout": f"ran past {limits.notebook_seconds:g} s, kernel killed at",
                "died": "the kernel died at",
                "failed_to_start": "the kernel did not start:",
            }[outcome.stopped]
            attention.append(f"{where}: {what} `{outcome.detail}`")
        if outcome.output_bytes > 10 * 2**20:
            mb = outcome.output_bytes / 2**20
            attention.append(f"{where}: printed {mb:.0f} MB of output (not kept)")
            student_notes[submission.student].append(
                f"`{submission.name}` printed {mb:.0f} MB of output; the grader kept none of it"
            )

    rows: list[Row] = []
    chosen: dict[str, dict[str, Submission]] = {s: {} for s in students}
    for student in students:
        for lesson in graded:
            candidates = [s for s in found if s.student == student and s.lesson == lesson]
            if not candidates:
                rows += missing_rows(
                    student, lesson, f"no notebook of lesson {lesson} in {student}/"
                )
                continue
            best = max(candidates, key=lambda s: score(s.rows))  # first of equals: name order
            chosen[student][lesson] = best
            rows += best.rows
            for other in candidates:
                if other is not best:
                    student_notes[student].append(
                        f"`{other.name}` is also lesson {lesson}; graded `{best.name}`, which "
                        "scored higher (or came first)"
                    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    write_csv(rows, out / "grades.csv")
    for student in students:
        text = feedback_markdown(
            student,
            [r for r in rows if r.student == student],
            student_notes[student],
            chosen[student],
        )
        (out / "feedback" / f"{student}.md").write_text(text, encoding="utf-8")
    memory = f"{limits.memory_bytes / 2**30:g} GiB" if limits.memory_bytes else "none"
    settings = (
        f"Limits: {limits.cell_seconds:g} s per cell, {limits.notebook_seconds:g} s per "
        f"notebook, {limits.check_seconds:g} s per call inside a check, memory {memory} per "
        f"kernel; {jobs} kernel(s) at once. Graded in {time.monotonic() - start:.0f} s."
    )
    (out / "report.html").write_text(
        report_html(students, graded, rows, attention, settings, len(to_run)),
        encoding="utf-8",
    )
    if say:
        say(f"Done in {time.monotonic() - start:.1f} s: {len(rows)} rows.")
        say(f"  {out / 'grades.csv'}\n  {out / 'report.html'}\n  {out / 'feedback'}/")
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    limits = Limits(
        cell_seconds=args.cell_timeout,
        notebook_seconds=args.notebook_timeout,
        check_seconds=args.check_time_limit,
        memory_bytes=args.memory_limit,
    )
    grade(
        args.submissions,
        args.out,
        limits,
        jobs=max(1, args.jobs),
        lessons=args.lessons,
        say=None if args.quiet else print,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
