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
    assert "**Well done**" in ada and "✓ Exercise 1 ★ `positional_encoding`" in ada
    hana = (graded["out"] / "feedback" / "hana.md").read_text()
    assert "MB of output" in hana


def test_every_student_gets_plain_text_feedback_for_an_lms_comment(graded):
    """feedback/<student>.txt: the Markdown feedback's content, shown as it is: no entities, no
    Markdown marks, each exercise by its lesson's title."""
    students = sorted({e.student for e in graded["expects"]})
    assert sorted(p.stem for p in (graded["out"] / "feedback").glob("*.txt")) == students
    for student in students:
        text = (graded["out"] / "feedback" / f"{student}.txt").read_text()
        markdown = (graded["out"] / "feedback" / f"{student}.md").read_text()
        assert text.startswith(f"Feedback for {student}\n")
        assert "&lt;" not in text and "&amp;" not in text and "**Well done" not in text
        if "&lt;" in markdown:  # a message quoting "<": as it is in the plain text
            assert "<" in text
    ben = (graded["out"] / "feedback" / "ben.txt").read_text()
    assert "Exercise 1 ★ (positional_encoding), not yet (positional_encoding.transposed)" in ben
    assert "Hint: " in ben


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


def test_a_flat_folder_or_one_without_notebooks_is_an_error_that_says_what_is_expected(tmp_path):
    """A Canvas-style flat folder of notebooks, an empty folder and student folders with no
    notebook each stop the run with a message (exit status non-zero), writing nothing."""
    from course_grader import main

    flat, empty, hollow = tmp_path / "flat", tmp_path / "empty", tmp_path / "hollow"
    flat.mkdir(), empty.mkdir(), (hollow / "ada").mkdir(parents=True)
    for name in ("smithjohn_LATE_123_456_lesson05.ipynb", "doejane_124_457_lesson05.ipynb"):
        (flat / name).write_text("{}")
    cases = {
        flat: "It holds 2 notebook(s) directly",
        empty: "no student folder in",
        hollow: "1 student folder(s)",
    }
    for folder, words in cases.items():
        out = tmp_path / f"out-{folder.name}"
        with pytest.raises(SystemExit) as stop:
            main(["--submissions", str(folder), "--out", str(out)])
        assert words in str(stop.value), stop.value
        assert not out.exists() or not any(out.iterdir())
