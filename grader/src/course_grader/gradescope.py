"""Gradescope: grade the one submission Gradescope hands the autograder, into its results.json.

    python -m course_grader --gradescope /autograder --lesson 03 [--points TOML]
                            [--visibility visible]

``make gradescope LESSON=03`` builds the autograder zip (``tools/make_gradescope.py``) whose
``run_autograder`` calls this. Gradescope's layout (https://gradescope-autograders.readthedocs.io,
"Autograder Specifications"): the student's files in ``/autograder/submission/``, who submitted
in ``/autograder/submission_metadata.json``, and the results to write to
``/autograder/results/results.json``: one test per exercise and prediction of the lesson
(``name``, ``score``, ``max_score``, ``status``, ``output``, ``visibility``), the ``score``, an
``output`` for the whole submission, ``execution_time``, and ``stdout_visibility`` (the
run's printout, which holds what only the instructor should see, stays hidden).

The grading is the course's own (:func:`.one.result_of`: the same sandbox, checks and points as
``make grade``). Whatever the submission is (no notebook, several, an empty or a broken file, a
notebook of another lesson, a hostile one), this writes a results.json: a submission that cannot
be graded scores 0 on every exercise, with a message saying what to upload instead.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from .isolation import bubblewrap
from .isolation.sandbox import Limits
from .outputs.flags import sandbox_status
from .outputs.report import LABEL
from .pipeline.grading import lesson_items
from .pipeline.points import PointsError, fmt, lesson_max, load_points

# The values Gradescope reads for a test's or the submission's visibility.
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
MAX_NOTEBOOK_BYTES = 50 * 2**20  # a lesson's notebook with its outputs is well under 5 MB
MAX_OUTPUT = 4000  # characters of one test's output (a check's message is shorter)


def _student(root: Path) -> str:
    """Who submitted (seeds the checks' draws, so a resubmission draws the same cases): the
    first submitter's Gradescope id, else "gradescope"."""
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        user = metadata["users"][0]
        return f"gradescope-{int(user['id'])}"
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return "gradescope"


def find_notebook(folder: Path, lesson: str) -> tuple[Path | None, str]:
    """The submission's notebook of ``lesson``, or None and what to tell the student.

    One ``.ipynb`` file (at any depth; Jupyter's checkpoints aside) is it; among several, the
    one whose metadata names the lesson (as the course's notebooks do), else the student is
    asked to submit one."""
    if not folder.is_dir():
        return None, "the submission is empty: upload your notebook of the lesson (.ipynb)"
    notebooks = sorted(
        p for p in folder.rglob("*.ipynb")
        if p.is_file() and not p.is_symlink() and ".ipynb_checkpoints" not in p.parts
    )  # fmt: skip
    others = sorted(p.name for p in folder.rglob("*") if p.is_file() and p.suffix != ".ipynb")
    if not notebooks:
        seen = f" (it holds {', '.join(others[:5])}{', ...' if len(others) > 5 else ''})"
        return None, (
            f"no Jupyter notebook (.ipynb) in the submission{seen if others else ''}: upload "
            f"your notebook of lesson {lesson} itself, as JupyterLab saves it (File → Download)"
        )
    if len(notebooks) == 1:
        return notebooks[0], ""
    marked = [p for p in notebooks if _marked_lesson(p) == lesson]
    if len(marked) == 1:
        return marked[0], ""
    names = ", ".join(p.relative_to(folder).as_posix() for p in notebooks[:6])
    return None, (
        f"the submission holds {len(notebooks)} notebooks ({names}): upload only your "
        f"notebook of lesson {lesson}"
    )


def _marked_lesson(path: Path) -> str | None:
    """The lesson a notebook's metadata names (``metadata.course.lesson``), without running it."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        lesson = json.loads(path.read_text(encoding="utf-8"))["metadata"]["course"]["lesson"]
        return lesson if isinstance(lesson, str) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _test(number: int, item, points: float, max_points: float, status: str, output: str,
          visibility: str) -> dict:  # fmt: skip
    return {
        "name": item,
        "number": str(number),
        "score": points,
        "max_score": max_points,
        "status": "passed" if status == "correct" else "failed",
        "output": output[:MAX_OUTPUT],
        "visibility": visibility,
    }


def results_for(result: dict, visibility: str = "visible", seconds: float = 0.0) -> dict:
    """Gradescope's results.json for one graded notebook (:func:`.one.result_of`'s dict)."""
    tests = []
    for number, e in enumerate(result["exercises"], 1):
        if e["status"] == "correct":
            output = "✓ correct"
        else:
            mistake = f" (mistake: {e['mistake']})" if e["mistake"] else ""
            output = f"{LABEL[e['status']]}{mistake}: {e['message']}"
        tests.append(_test(number, e["exercise"], e["points"], e["max_points"], e["status"],
                           output, visibility))  # fmt: skip
    done = sum(e["status"] == "correct" for e in result["exercises"])
    summary = (
        f"Lesson {result['lesson']}: {fmt(result['points'])}/{fmt(result['max_points'])} "
        f"points, {done} of {len(result['exercises'])} exercises and predictions correct. "
        "The grader ran your notebook from top to bottom in a fresh kernel, then checked each "
        "answer itself, on cases it drew."
    )
    return {
        "score": result["points"],
        "execution_time": round(seconds),
        "output": summary,
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"sandbox": result["sandbox"], "flags": result["flags"]},
    }


def not_graded(lesson: str, message: str, table: dict | None, visibility: str = "visible",
               seconds: float = 0.0) -> dict:  # fmt: skip
    """results.json for a submission that could not be graded: 0 on each of the lesson's
    exercises (so the assignment's total stays what it is), ``message`` saying why."""
    tests = []
    if table is not None:
        for number, item in enumerate(lesson_items(lesson), 1):
            tests.append(_test(number, item.name, 0.0, table[item.name], "not_graded",
                               f"not graded: {message}", visibility))  # fmt: skip
    most = fmt(lesson_max(lesson, table)) if table is not None else "?"
    return {
        "score": 0.0,
        "execution_time": round(seconds),
        "output": f"Not graded (0/{most} points): {message}",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def grade_submission(root: Path, lesson: str, limits: Limits, points_file: Path | None = None,
                     visibility: str = "visible") -> dict:  # fmt: skip
    """The results.json for the submission under ``root`` (Gradescope's /autograder)."""
    from .one import NotGradable, result_of
    from .pipeline.grading import known_lessons

    start = time.monotonic()
    if lesson not in known_lessons():
        raise SystemExit(f"--lesson {lesson}: the lessons with exercises are "
                         f"{', '.join(known_lessons())}")  # fmt: skip
    table = load_points(points_file)  # PointsError: the instructor's, at build time

    def failed(message: str) -> dict:
        return not_graded(lesson, message, table, visibility, time.monotonic() - start)

    if limits.sandbox and bubblewrap.unavailable() and not bubblewrap.own_user_only():
        # The kernel would run as the grader's own user, which writes results.json: a notebook
        # could forge its score. Refused. (--no-sandbox, added to run_autograder by hand,
        # would grade anyway, with the student's kernel as root: never on Gradescope.)
        print(f"not grading: {sandbox_status(limits)}", file=sys.stderr)
        return failed(
            "the autograder cannot keep a notebook away from its results here (no sandbox); "
            "tell your instructor (it is not your notebook's fault)"
        )

    path, problem = find_notebook(root / "submission", lesson)
    if path is None:
        return failed(problem)
    name = path.relative_to(root / "submission").as_posix()
    if path.stat().st_size == 0:
        return failed(f"{name} is empty (0 bytes): upload the notebook once JupyterLab has "
                      "saved it")  # fmt: skip
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return failed(f"{name} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MB, more than any "
                      "lesson's notebook: clear its outputs (Edit → Clear Outputs of All Cells), "
                      "save it and upload it again")  # fmt: skip
    marked = _marked_lesson(path)  # another lesson's notebook: said before it runs
    if marked is not None and marked != lesson:
        return failed(f"{name} is the notebook of lesson {marked}; this assignment grades "
                      f"lesson {lesson}")  # fmt: skip
    try:
        result = result_of(path, limits, _student(root), table)
    except NotGradable as why:
        reason = str(why).removeprefix(f"{path}: ")
        return failed(f"{name}: {reason}: upload your notebook of lesson {lesson}, as "
                      "JupyterLab saves it")  # fmt: skip
    if result["lesson"] != lesson:
        return failed(f"{name} is the notebook of lesson {result['lesson']}; this assignment "
                      f"grades lesson {lesson}")  # fmt: skip
    return results_for(result, visibility, time.monotonic() - start)


def _table_for_failures(lesson: str, points_file: Path | None) -> dict | None:
    """The points table for a results.json after a failure: the instructor's, else the
    default, so each of the lesson's tests still shows its maximum; None if neither loads or
    the lesson is unknown (the results then hold no tests)."""
    from .pipeline.grading import known_lessons

    for source in (points_file, None):
        try:
            if lesson in known_lessons():
                return load_points(source)
        except Exception:
            continue
    return None


def main(root: Path, lesson: str, limits: Limits, points_file: Path | None,
         visibility: str) -> int:  # fmt: skip
    """Write ``root/results/results.json``, whatever happens while grading; print the run
    (Gradescope shows the printout to the instructor only: ``stdout_visibility``)."""
    start = time.monotonic()
    out = root / "results" / "results.json"
    try:
        results = grade_submission(root, lesson, limits, points_file, visibility)
    except (SystemExit, PointsError) as mistake:  # the autograder's set-up, not the student's
        print(f"the autograder is misconfigured: {mistake}", file=sys.stderr)
        results = not_graded(lesson, "the autograder is misconfigured; tell your instructor",
                             _table_for_failures(lesson, points_file), visibility,
                             time.monotonic() - start)  # fmt: skip
    except BaseException as failure:  # never leave Gradescope without results
        print(f"the grader failed: {type(failure).__name__}: {failure}", file=sys.stderr)
        results = not_graded(lesson, "the grader failed on this submission; tell your "
                             "instructor (it is not your notebook's fault)",
                             _table_for_failures(lesson, points_file), visibility,
                             time.monotonic() - start)  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".results-{os.getpid()}.json")
    temporary.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    temporary.replace(out)
    print(json.dumps({k: v for k, v in results.items() if k != "tests"}, ensure_ascii=False))
    for test in results["tests"]:
        print(f"  {test['name']}: {fmt(test['score'])}/{fmt(test['max_score'])} "
              f"{test['status']}: {test['output'][:300]}")  # fmt: skip
    return 0
