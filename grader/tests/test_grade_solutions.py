"""make grade on the course's own answers: every exercise and prediction of every lesson is
graded correct (issue 33).

The executed solutions (``solutions/NN_*.ipynb``) answer everything. Graded as a student's
notebooks, each answer goes through the grader's own check, from its process: the cases drawn
there, the student's function called in the kernel (in the sandbox where bubblewrap runs) and
what it returns sent back as plain values. An answer whose arguments or results cannot make
that trip (a type the wire refuses, a call the runner cannot make) would show here as a
correct answer graded wrong.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys

from support import ROOT


def test_every_answer_of_the_course_is_graded_correct(tmp_path):
    folder = tmp_path / "submissions" / "teacher"
    folder.mkdir(parents=True)
    lessons = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
    for path in lessons:
        shutil.copyfile(path, folder / path.name)
    run = subprocess.run(
        [sys.executable, "-m", "course_grader", "--submissions", str(tmp_path / "submissions"),
         "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    graded = {r["lesson"] for r in rows}
    assert graded == {p.name[:2] for p in lessons} - {"00"}  # lesson 00 has no exercises
    wrong = [(r["lesson"], r["exercise"], r["status"], r["message"][:200]) for r in rows
             if r["status"] != "correct"]  # fmt: skip
    assert not wrong, wrong
