"""Grading the same notebooks twice gives the same grades, byte for byte (issue 17, part 5).

Each check draws fresh cases in a learner's session, but when grading the draws come from a
seed derived from (student, exercise, how many checks of it came before), so a rerun, or a
regrade on another machine, cannot turn a ✗ into a ✓ or change a message.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import nbformat
import numpy as np
from course_grader import main
from support import class_builder

from helpers import checks
from helpers.checks import draws, record

# Messages that name the drawn case: "called with n_positions=7, d_model=12".
RAISES = """\
def positional_encoding(n_positions, d_model):
    raise ValueError("not yet")"""
# Right on small cases only: whether it passes depends on the case drawn.
SOMETIMES = """\
def scaled_scores(Q, K):
    scale = np.sqrt(Q.shape[-1]) if Q.shape[-1] < 30 else Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / scale"""


def _grade(submissions: Path, out: Path) -> bytes:
    """``python -m course_grader`` run in this process (``main``, what ``__main__`` calls):
    fresh kernels as ever, without a new interpreter importing the course for each run."""
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = main(["--submissions", str(submissions), "--out", str(out), "--jobs", "2",
                     "--check-time-limit", "2"])  # fmt: skip
    assert code == 0, said.getvalue()[-3000:]
    return (out / "grades.csv").read_bytes()


def test_grading_the_same_notebooks_twice_gives_the_same_grades_csv(tmp_path):
    submissions = tmp_path / "submissions"
    for student in ("ana", "ben", "cyd"):
        for lesson, code in (("01", RAISES), ("03", SOMETIMES)):
            name = code.split("(")[0].removeprefix("def ")
            nb = class_builder.notebook(
                lesson, [class_builder.SETUP, code, class_builder.check_cell(name)]
            )
            (submissions / student).mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, submissions / student / f"lesson{lesson}.ipynb")
    first = _grade(submissions, tmp_path / "first")
    second = _grade(submissions, tmp_path / "second")
    assert b"called with n_positions=" in first  # the drawn case is in the grade table
    assert first == second


def _cases_drawn(exercise, answer_args: list) -> list:
    def record(*args):
        answer_args.append([np.shape(a) if isinstance(a, np.ndarray) else a for a in args])
        raise ValueError("recorded")

    return exercise.check(record)


def test_when_grading_draws_depend_on_the_student_and_exercise_only(monkeypatch):
    def drawn(student: str, times: int = 1) -> list:
        monkeypatch.setenv(record.STUDENT_VARIABLE, student)
        monkeypatch.setattr(draws, "checks_so_far", {})  # a new kernel
        seen: list = []
        for _ in range(times):
            for exercise in (checks.positional_encoding, checks.scaled_scores):
                _cases_drawn(exercise, seen)
        return seen

    assert drawn("ana") == drawn("ana")
    assert drawn("ana") != drawn("ben")  # 2 exercises' sizes: equal for both would be a fluke
    # A second check of the same exercise in the same kernel draws anew, reproducibly too.
    twice = drawn("ana", times=2)
    assert twice[:2] == drawn("ana") and twice[2:] != twice[:2] and twice == drawn("ana", 2)


def test_outside_grading_every_check_draws_fresh_cases(monkeypatch):
    monkeypatch.delenv(record.STUDENT_VARIABLE, raising=False)
    seen: list = []
    for _ in range(5):
        _cases_drawn(checks.scaled_scores, seen)
    assert len({str(s) for s in seen}) > 1


def test_seeded_draws_give_every_answer_the_same_cases():
    first: list = []
    second: list = []
    with draws.seeded_draws(7):
        _cases_drawn(checks.scaled_scores, first)
        _cases_drawn(checks.scaled_scores, second)
    assert first == second
