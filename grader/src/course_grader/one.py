"""``python -m course_grader --one NOTEBOOK [--json]``: grade one notebook, in the same sandbox.

For a course that grows beyond one machine: each student's repository grades itself on push
(GitHub Classroom, ``classroom/``), or each learner's JupyterHub server grades its own
notebook. Prints the rows (text, or JSON with ``--json``). Exit status: 0 when every exercise
and prediction of the lesson is correct, 1 when not, 2 on bad usage (no such file, not a
notebook of a lesson with exercises).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from pathlib import Path

from .isolation.sandbox import Limits, kernel_config, run_notebook
from .outputs.flags import flags_for, sandbox_status
from .outputs.report import LABEL, SYMBOL
from .pipeline.grading import Submission, known_lessons, lesson_items, recognise, rows_for
from .pipeline.points import PointsError, Scheme, fmt, load_points


def _fail(message: str) -> int:
    print(f"python -m course_grader --one: {message}", file=sys.stderr)
    return 2


class NotGradable(Exception):
    """The file cannot be graded as a lesson (not there, not a notebook, no lesson of the
    course recognised in it): the message says which."""


def result_of(
    path: Path, limits: Limits, student: str | None = None, table: Scheme | None = None
) -> dict:
    """Grade the notebook at ``path``: a dict of its lesson, each exercise's status, mistake,
    message and points (``max_points``: its worth; ``extra``: extra credit, outside the
    lesson's ``max_points``), the sandbox's status line and the flags for the instructor.
    Raises :class:`NotGradable` when it is not a notebook of a lesson with exercises."""
    path = Path(path)
    if not path.is_file():
        raise NotGradable(f"no such file: {path}")
    table = load_points(None) if table is None else table
    student = student or path.resolve().parent.name
    submission = Submission(student, path.resolve(), path.name)
    recognise(submission)
    if submission.lesson is None or submission.lesson not in known_lessons():
        why = (
            f"lesson {submission.lesson} has no exercises"
            if submission.lesson
            else "no lesson of the course recognised in it"
            + (f" ({submission.unreadable})" if submission.unreadable else "")
        )
        raise NotGradable(f"{path}: {why}")
    if submission.nb is not None:
        submission.outcome = asyncio.run(
            run_notebook(
                submission.path,
                submission.nb,
                lesson_items(submission.lesson),
                limits,
                kernel_config(),
                student,
            )
        )
    rows = rows_for(submission, limits)
    exercises = [
        {
            "exercise": r.exercise,
            "status": r.status,
            "mistake": r.mistake,
            "message": r.message,
            "points": table.earned(r.exercise, r.status, r.mistake),
            "max_points": table.worth(r.exercise),
            "extra": table.is_extra(r.exercise),
        }
        for r in rows
    ]
    return {
        "notebook": str(path),
        "student": student,
        "lesson": submission.lesson,
        "exercises": exercises,
        "points": sum(e["points"] for e in exercises),
        "max_points": table.lesson_max(submission.lesson),
        "sandbox": sandbox_status(limits),
        "flags": flags_for(submission) if submission.outcome is not None else [],
    }


def grade_one(
    path: Path,
    limits: Limits,
    student: str | None = None,
    points_file: Path | None = None,
    as_json: bool = False,
    github: bool = False,
    quiet: bool = False,
) -> int:
    try:
        result = result_of(path, limits, student, load_points(points_file))
    except (PointsError, NotGradable) as problem:
        return _fail(str(problem))
    all_correct = all(e["status"] == "correct" for e in result["exercises"])
    if as_json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    elif not quiet:
        print(result["sandbox"])
        print(f"{path} (lesson {result['lesson']}, graded as {result['student']}):")
        for e in result["exercises"]:
            mistake = f" ({e['mistake']})" if e["mistake"] else ""
            extra = ", extra credit" if e["extra"] else ""
            print(
                f"  {SYMBOL[e['status']]} {e['exercise']}: {LABEL[e['status']]}{mistake}, "
                f"{fmt(e['points'])}/{fmt(e['max_points'])} points{extra}"
            )
            if e["status"] != "correct":
                print(f"      {e['message']}")
        print(f"Points: {fmt(result['points'])}/{fmt(result['max_points'])}")
        for flag in result["flags"]:
            print(f"  To look at: {flag}")
    if github:
        _to_github(result, all_correct)
    return 0 if all_correct else 1


def classroom_result(result: dict, all_correct: bool) -> dict:
    """The result in the form GitHub Classroom's autograding reporter reads (its runners'
    ``result`` output, base64 JSON): one test per exercise, scored with its points."""
    return {
        "version": 1,
        "status": "pass" if all_correct else "fail",
        "max_score": result["max_points"],
        "tests": [
            {
                "name": e["exercise"],
                "status": "pass" if e["status"] == "correct" else "fail",
                "score": e["points"],
                "message": "" if e["status"] == "correct" else e["message"],
                "line_no": 0,
                "test_code": f"checks.{e['exercise']}.check(...)",
            }
            for e in result["exercises"]
        ],
    }


def _to_github(result: dict, all_correct: bool) -> None:
    """Points in the job's summary page; the reporter's ``result`` as a step output."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        lines = [
            f"### Lesson {result['lesson']}: {fmt(result['points'])} / "
            f"{fmt(result['max_points'])} points",
            "",
            "| exercise | status | points | what the check said |",
            "|---|---|---|---|",
        ]
        for e in result["exercises"]:
            message = e["message"].replace("|", "\\|")[:300]
            lines.append(
                f"| `{e['exercise']}` | {SYMBOL[e['status']]} {LABEL[e['status']]} | "
                f"{fmt(e['points'])}/{fmt(e['max_points'])} | {message} |"
            )
        with open(summary, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        encoded = base64.b64encode(
            json.dumps(classroom_result(result, all_correct)).encode("utf-8")
        ).decode("ascii")
        with open(output, "a", encoding="utf-8") as f:
            f.write(f"result={encoded}\n")
