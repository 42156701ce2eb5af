"""Gradescope: grade the one submission Gradescope hands the autograder, into its results.json.

    python -m course_grader --gradescope /autograder --lesson "03 04" [--points TOML]
                            [--visibility visible] [--prediction-visibility after_due_date]

``make gradescope LESSON="03 04"`` builds the autograder zip (``tools/make_gradescope.py``)
whose ``run_autograder`` calls this. Gradescope's layout (https://gradescope-autograders.readthedocs.io,
"Autograder Specifications" and "Submission Metadata"): the student's files in
``/autograder/submission/``, who submitted and when in ``/autograder/submission_metadata.json``
(``users``, ``created_at``, ``assignment.due_date``), and the results to write to
``/autograder/results/results.json``: one test per exercise and prediction of each lesson,
named by the lesson's own heading (``name``, ``score``, ``max_score``, ``status``, ``output``,
``visibility``: a prediction's after the due date by default, since a wrong guess's output
gives the answer), the ``score`` (less a late policy's share), an ``output`` for the whole
submission, ``execution_time``, and ``stdout_visibility`` (the run's printout, which holds what
only the instructor should see, stays hidden). With several lessons, each notebook is found by
the lesson its metadata names.

The grading is the course's own (:func:`.one.result_of`: the same sandbox, checks and points as
``make grade``). Whatever the submission is (no notebook, several, an empty or a broken file, a
notebook of another lesson, a hostile one), this writes a results.json: a submission that cannot
be graded scores 0 on every exercise, with a message saying what to upload instead.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from helpers.checks.grading import Exercise

from .isolation import bubblewrap
from .isolation.sandbox import Limits
from .outputs.flags import sandbox_status
from .outputs.report import LABEL
from .pipeline.grading import lesson_items
from .pipeline.points import PointsError, Scheme, fmt, load_points

# The values Gradescope reads for a test's or the submission's visibility.
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


@dataclass(frozen=True)
class Visibility:
    """When students see each test: the exercises' (and the submission's) and the predictions'.
    A wrong prediction's output gives its answer, which a resubmission would then score: by
    default predictions show after the due date."""

    exercises: str = "visible"
    predictions: str = "after_due_date"


MAX_NOTEBOOK_BYTES = 50 * 2**20  # a lesson's notebook with its outputs is well under 5 MB
MAX_OUTPUT = 4000  # characters of one test's output (a check's message is shorter)


def _metadata(root: Path) -> dict:
    try:
        data = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _student(root: Path) -> str:
    """Who submitted (seeds the checks' draws, so a resubmission draws the same cases): the
    first submitter's Gradescope id, else "gradescope"."""
    try:
        user = _metadata(root)["users"][0]
        return f"gradescope-{int(user['id'])}"
    except (KeyError, IndexError, TypeError, ValueError):
        return "gradescope"


def _when(text) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(text))
        return when if when.tzinfo is not None else None
    except ValueError:
        return None


def late_share(root: Path, scheme: Scheme) -> tuple[float, str]:
    """The fraction of the points the late policy takes from this submission, and why: its
    ``created_at`` against the assignment's ``due_date`` on Gradescope (else the points file's
    ``due``), or a student's own date from ``[late.extensions]`` (by Gradescope id, e-mail or
    name: extensions granted in Gradescope are not in the metadata the autograder gets)."""
    if not scheme.late.per_day:
        return 0.0, ""
    metadata = _metadata(root)
    submitted = _when(metadata.get("created_at"))
    assignment = metadata.get("assignment") if isinstance(metadata.get("assignment"), dict) else {}
    due = _when(assignment.get("due_date")) or scheme.late.due  # Gradescope's own date first
    users = metadata.get("users") if isinstance(metadata.get("users"), list) else []
    who = [str(u.get(k)) for u in users if isinstance(u, dict) for k in ("id", "email", "name")
           if u.get(k) is not None]  # fmt: skip
    if submitted is None or due is None:
        return 0.0, ""
    late = dataclasses.replace(scheme.late, due=due)
    lost = late.lost(who, submitted, marked_late=False)
    if not lost:
        return 0.0, ""
    return lost, f"submitted {late.days_late(who, submitted)} day(s) after the due date"


def find_notebook(folder: Path, lesson: str, several: bool = False) -> tuple[Path | None, str]:
    """The submission's notebook of ``lesson``, or None and what to tell the student.

    One ``.ipynb`` file (at any depth; Jupyter's checkpoints aside) is it, when the assignment
    has one lesson (``several`` False); else, the one whose metadata names the lesson (as the
    course's notebooks do)."""
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
    if len(notebooks) == 1 and not several:
        return notebooks[0], ""
    marked = [p for p in notebooks if _marked_lesson(p) == lesson]
    if not marked and several:  # no metadata (a copy that lost it): the exercise names
        marked = [p for p in notebooks if _marked_lesson(p) is None and _named_lesson(p) == lesson]
    if len(marked) == 1:
        return marked[0], ""
    names = ", ".join(p.relative_to(folder).as_posix() for p in notebooks[:6])
    if not marked and several:
        return None, (f"none of the submission's notebooks ({names}) is the course's notebook of "
                      f"lesson {lesson}: upload it too")  # fmt: skip
    return None, (
        f"the submission holds {len(marked) or len(notebooks)} notebooks"
        f"{' of lesson ' + lesson if marked else ''} ({names}): upload only one notebook of "
        f"lesson {lesson}"
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


def _named_lesson(path: Path) -> str | None:
    """The lesson a notebook without the course's metadata is, by the exercise names in it."""
    from .pipeline.grading import Submission, recognise

    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return None
    submission = Submission("gradescope", path, path.name)
    recognise(submission)
    return submission.lesson


def test_name(lesson: str, name: str) -> str:
    """A test's name as the student reads it: the lesson and the exercise's own heading."""
    item = next(i for i in lesson_items(lesson) if i.name == name)
    heading = getattr(item, "heading", "") or name
    return f"Lesson {lesson} · {heading} ({name})"


def _test(number: str, lesson: str, name: str, points: float, max_points: float, status: str,
          output: str, visibility: Visibility) -> dict:  # fmt: skip
    prediction = not isinstance(next(i for i in lesson_items(lesson) if i.name == name), Exercise)
    return {
        "name": test_name(lesson, name),
        "number": number,
        "score": points,
        "max_score": max_points,
        "status": "passed" if status == "correct" else "failed",
        "output": output[:MAX_OUTPUT],
        "visibility": visibility.predictions if prediction else visibility.exercises,
    }


def lesson_tests(result: dict, visibility: Visibility) -> list[dict]:
    """One graded notebook's tests (:func:`.one.result_of`'s dict); an extra-credit one has
    ``max_score`` 0, so that it adds to the score, not to the assignment's total."""
    tests = []
    for number, e in enumerate(result["exercises"], 1):
        if e["status"] == "correct":
            output = "✓ correct"
        else:
            mistake = f" (mistake: {e['mistake']})" if e["mistake"] else ""
            output = f"{LABEL[e['status']]}{mistake}: {e['message']}"
        if e["extra"]:
            output += f" [extra credit: up to {fmt(e['max_points'])} points]"
        tests.append(_test(f"{result['lesson']}.{number}", result["lesson"], e["exercise"],
                           e["points"], 0.0 if e["extra"] else e["max_points"], e["status"],
                           output, visibility))  # fmt: skip
    return tests


def _missing_tests(lesson: str, message: str, scheme: Scheme | None,
                   visibility: Visibility) -> list[dict]:  # fmt: skip
    """0 on each of the lesson's exercises (so the assignment's total stays what it is)."""
    if scheme is None:
        return []
    return [_test(f"{lesson}.{number}", lesson, item.name, 0.0, scheme.counted(item.name),
                  "not_graded", f"not graded: {message}", visibility)
            for number, item in enumerate(lesson_items(lesson), 1)]  # fmt: skip


def results_json(lessons: list[str], graded: dict[str, dict], problems: dict[str, str],
                 scheme: Scheme | None, visibility: Visibility, seconds: float = 0.0,
                 late: tuple[float, str] = (0.0, "")) -> dict:  # fmt: skip
    """Gradescope's results.json for the assignment's lessons: each lesson's tests, from its
    graded notebook (``graded``) or 0 with what to upload (``problems``)."""
    tests, lines = [], []
    for lesson in lessons:
        if lesson in graded:
            result = graded[lesson]
            lesson_tests_ = lesson_tests(result, visibility)
            done = sum(e["status"] == "correct" for e in result["exercises"])
            extra = sum(e["points"] for e in result["exercises"] if e["extra"])
            extra_said = f" ({fmt(extra)} of them extra credit)" if extra else ""
            lines.append(f"Lesson {lesson}: {fmt(result['points'])}/{fmt(result['max_points'])} "
                         f"points{extra_said}, {done} of {len(result['exercises'])} exercises "
                         "and predictions correct.")  # fmt: skip
        else:
            lesson_tests_ = _missing_tests(lesson, problems[lesson], scheme, visibility)
            most = fmt(scheme.lesson_max(lesson)) if scheme is not None else "?"
            lines.append(f"Lesson {lesson}: not graded (0/{most} points): {problems[lesson]}")
        tests += lesson_tests_
    raw = sum(t["score"] for t in tests)
    lost, why = late
    if lost:
        lines.append(f"Late: {lost:.0%} of the points taken off ({why}).")
    if graded:
        lines.append("The grader ran your notebook from top to bottom in a fresh kernel, then "
                     "checked each answer itself, on cases it drew.")  # fmt: skip
    doc = {
        "score": round(raw * (1 - lost), 6),
        "execution_time": round(seconds),
        "output": " ".join(lines),
        "visibility": visibility.exercises,
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    extra = {}
    if graded:
        first = next(iter(graded.values()))
        extra = {"sandbox": first["sandbox"],
                 "flags": [f for r in graded.values() for f in r["flags"]]}  # fmt: skip
    if lost:
        extra["late"] = {"fraction": lost, "why": why, "before": raw}
    if extra:
        doc["extra_data"] = extra
    return doc


def not_graded(lessons: list[str], message: str, scheme: Scheme | None,
               visibility: Visibility, seconds: float = 0.0) -> dict:  # fmt: skip
    """results.json for a submission that could not be graded at all: 0 on each exercise of
    each lesson, ``message`` saying why."""
    doc = results_json(lessons, {}, dict.fromkeys(lessons, message), scheme, visibility, seconds)
    doc["output"] = f"Not graded: {message}"
    return doc


def grade_submission(root: Path, lessons: list[str], limits: Limits,
                     points_file: Path | None = None,
                     visibility: Visibility | None = None) -> dict:  # fmt: skip
    """The results.json for the submission under ``root`` (Gradescope's /autograder)."""
    from .pipeline.grading import known_lessons

    visibility = visibility or Visibility()
    start = time.monotonic()
    unknown = [lesson for lesson in lessons if lesson not in known_lessons()]
    if unknown or not lessons:
        raise SystemExit(f"--lesson {' '.join(lessons)}: the lessons with exercises are "
                         f"{', '.join(known_lessons())}")  # fmt: skip
    scheme = load_points(points_file)  # PointsError: the instructor's, at build time

    if limits.sandbox and bubblewrap.unavailable() and not bubblewrap.own_user_only():
        # The kernel would run as the grader's own user, which writes results.json: a notebook
        # could forge its score. Refused. (--no-sandbox, added to run_autograder by hand,
        # would grade anyway, with the student's kernel as root: never on Gradescope.)
        print(f"not grading: {sandbox_status(limits)}", file=sys.stderr)
        return not_graded(lessons, "the autograder cannot keep a notebook away from its "
                          "results here (no sandbox); tell your instructor (it is not your "
                          "notebook's fault)", scheme, visibility,
                          time.monotonic() - start)  # fmt: skip

    graded, problems = {}, {}
    for lesson in lessons:
        result, problem = _grade_lesson(root, lesson, len(lessons) > 1, limits, scheme)
        if result is not None:
            graded[lesson] = result
        else:
            problems[lesson] = problem
    return results_json(lessons, graded, problems, scheme, visibility, time.monotonic() - start,
                        late_share(root, scheme) if graded else (0.0, ""))  # fmt: skip


def _grade_lesson(root, lesson, several, limits, scheme):
    """(one.result_of's dict, "") for the submission's notebook of ``lesson``, or (None, what
    to tell the student)."""
    from .one import NotGradable, result_of

    path, problem = find_notebook(root / "submission", lesson, several)
    if path is None:
        return None, problem
    name = path.relative_to(root / "submission").as_posix()
    if path.stat().st_size == 0:
        return None, f"{name} is empty (0 bytes): upload the notebook once JupyterLab has saved it"
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return None, (f"{name} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MB, more than any "
                      "lesson's notebook: clear its outputs (Edit → Clear Outputs of All "
                      "Cells), save it and upload it again")  # fmt: skip
    marked = _marked_lesson(path)  # another lesson's notebook: said before it runs
    if marked is not None and marked != lesson:
        return None, (f"{name} is the notebook of lesson {marked}; this assignment grades "
                      f"lesson {lesson}")  # fmt: skip
    try:
        result = result_of(path, limits, _student(root), scheme)
    except NotGradable as why:
        reason = str(why).removeprefix(f"{path}: ")
        return None, (f"{name}: {reason}: upload your notebook of lesson {lesson}, as "
                      "JupyterLab saves it")  # fmt: skip
    if result["lesson"] != lesson:
        return None, (f"{name} is the notebook of lesson {result['lesson']}; this assignment "
                      f"grades lesson {lesson}")  # fmt: skip
    return result, ""


def _scheme_for_failures(lessons: list[str], points_file: Path | None) -> Scheme | None:
    """The points for a results.json after a failure: the instructor's, else the default, so
    each of the lessons' tests still shows its maximum; None if neither loads or a lesson is
    unknown (the results then hold no tests)."""
    from .pipeline.grading import known_lessons

    for source in (points_file, None):
        try:
            if lessons and all(lesson in known_lessons() for lesson in lessons):
                return load_points(source)
        except Exception:
            continue
    return None


def main(root: Path, lessons: list[str] | str, limits: Limits, points_file: Path | None,
         visibility: Visibility | str = "visible") -> int:  # fmt: skip
    """Write ``root/results/results.json``, whatever happens while grading; print the run
    (Gradescope shows the printout to the instructor only: ``stdout_visibility``)."""
    start = time.monotonic()
    out = root / "results" / "results.json"
    lessons = lessons.split() if isinstance(lessons, str) else list(lessons)
    if isinstance(visibility, str):
        visibility = Visibility(visibility)
    try:
        results = grade_submission(root, lessons, limits, points_file, visibility)
    except (SystemExit, PointsError) as mistake:  # the autograder's set-up, not the student's
        print(f"the autograder is misconfigured: {mistake}", file=sys.stderr)
        results = not_graded(lessons, "the autograder is misconfigured; tell your instructor",
                             _scheme_for_failures(lessons, points_file), visibility,
                             time.monotonic() - start)  # fmt: skip
    except BaseException as failure:  # never leave Gradescope without results
        print(f"the grader failed: {type(failure).__name__}: {failure}", file=sys.stderr)
        results = not_graded(lessons, "the grader failed on this submission; tell your "
                             "instructor (it is not your notebook's fault)",
                             _scheme_for_failures(lessons, points_file), visibility,
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
