"""make grade on a class of broken notebooks: exactly the expected grades.csv (issue 11).

The class (tests/support/class_builder.py) has 13 students x 2 lessons: right, wrong
with a named mistake, untouched, not JSON, endless loops, sys.exit, os._exit, a killed kernel,
16 GiB allocations, two million printed lines, renamed and deleted functions, no metadata.
The grader runs once (two kernels at a time, short limits) for every test in this file.
"""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from course_grader import COLUMNS, STATUSES
from support import ROOT, class_builder

LIMITS = ["--cell-timeout", "6", "--check-time-limit", "1", "--memory-limit", "2G"]


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    } | {str(p.relative_to(folder)) + "/": "dir" for p in folder.rglob("*") if p.is_dir()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("grade")
    submissions, out = root / "submissions", root / "out"
    expects = class_builder.build_class(submissions)
    before = _hashes(submissions)
    run = subprocess.run(
        [sys.executable, "-m", "course_grader", "--submissions", str(submissions),
         "--out", str(out), "--jobs", "2", *LIMITS],
        capture_output=True, text=True, timeout=300, cwd=root,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return {
        "submissions": submissions,
        "out": out,
        "expects": expects,
        "before": before,
        "stdout": run.stdout,
    }


def test_grades_csv_is_exactly_what_the_class_deserves(graded):
    with open(graded["out"] / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == COLUMNS == ("student", "lesson", "exercise", "status", "mistake",
                                         "message")  # fmt: skip
    actual = [tuple(r) for r in rows[1:]]
    expected = class_builder.expected_rows(graded["expects"])
    problems = class_builder.matches(actual, expected)
    assert not problems, "\n".join(problems)
    assert {r[3] for r in actual} == set(STATUSES)  # every status occurs in the fixture


def test_nothing_in_the_submissions_folder_changed(graded):
    assert _hashes(graded["submissions"]) == graded["before"]


def test_every_student_gets_feedback_with_messages_and_hints(graded):
    students = sorted({e.student for e in graded["expects"]})
    files = sorted(p.stem for p in (graded["out"] / "feedback").glob("*.md"))
    assert files == students
    ben = (graded["out"] / "feedback" / "ben.md").read_text()
    assert "positional_encoding.transposed" in ben and "*Hint:*" in ben
    ada = (graded["out"] / "feedback" / "ada.md").read_text()
    assert "**Well done**" in ada and "✓ `positional_encoding`" in ada
    hana = (graded["out"] / "feedback" / "hana.md").read_text()
    assert "MB of output" in hana


def test_the_report_shows_the_class_and_the_common_named_mistakes(graded):
    page = (graded["out"] / "report.html").read_text()
    for student in ("ada", "ben", "max"):
        assert f">{student}</th>" in page
    assert "What to reteach" in page and "positional_encoding.transposed" in page
    assert "Notebooks that need a look" in page and "not a readable notebook" in page


def test_make_grade_calls_the_grader():
    run = subprocess.run(
        ["make", "-n", "grade", "SUBMISSIONS=in dir", "OUT=out"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "-m course_grader --submissions" in run.stdout and "in dir" in run.stdout
