"""The class's results: what every writer reads, computed once; kept in ``OUT`` for regrades.

:class:`ClassResults` holds, per student, the rows of ``grades.csv``, the notes for their
feedback, the notebook chosen per lesson, what needs the instructor's look, and their answers'
code (for the similarity check). :func:`finish` adds what is derived from those for the whole
class, once: the points and totals, the roster's matches, the answers that look alike.

``OUT/.grade/state.json`` keeps the per-student part, so that ``--students ada`` regrades Ada
alone and merges her new results with everyone else's unchanged ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from helpers.checks.grading import Exercise

from ..pipeline.grading import Row, lesson_items
from ..pipeline.lms import Manifest
from ..pipeline.points import Scheme, default_scheme
from ..pipeline.roster import Person
from .files import write_if_changed

STATE_VERSION = 1


@dataclass
class StudentResults:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for their feedback
    chosen: dict[str, str] = field(default_factory=dict)  # lesson -> notebook graded
    attention: list[str] = field(default_factory=list)  # for the instructor's report
    answers: dict[str, str] = field(default_factory=dict)  # exercise -> answer code
    notebooks: int = 0  # notebooks run (or taken from the cache) for this student


@dataclass
class Totals:
    """Points per (student, lesson) and per student overall, computed once."""

    by_lesson: dict[tuple[str, str], float]
    overall: dict[str, float]
    max_by_lesson: dict[str, float]
    max_overall: float


@dataclass
class ClassResults:
    students: list[str]
    lessons: list[str]
    per_student: dict[str, StudentResults]
    notes: list[str] = field(default_factory=list)  # about the class's folder, the roster...
    settings: str = ""
    points: Scheme = field(default_factory=default_scheme)
    # student -> the fraction of their points lost to the late policy, and why (the LMS's mark)
    late: dict[str, tuple[float, str]] = field(default_factory=dict)
    manifest: Manifest | None = None  # the LMS download the submissions were unpacked from
    roster: list[Person] | None = None
    not_in_roster: list[str] = field(default_factory=list)
    without_folder: list[str] = field(default_factory=list)
    totals: Totals | None = None
    alike: list[tuple[str, str, str, float]] = field(default_factory=list)
    # exercise -> the students whose answer is the course's own solution (the same tree)
    as_course: dict[str, list[str]] = field(default_factory=dict)

    @property
    def rows(self) -> list[Row]:
        return [row for s in self.students for row in self.per_student[s].rows]

    @property
    def attention(self) -> list[str]:
        return self.notes + [a for s in self.students for a in self.per_student[s].attention]

    @property
    def notebooks(self) -> int:
        return sum(self.per_student[s].notebooks for s in self.students)

    def person(self, student: str) -> Person | None:
        if self.roster is None:
            return None
        return next((p for p in self.roster if p.student == student), None)


def compute_totals(results: ClassResults) -> Totals:
    """Each student's points per lesson (the scheme's, less the late policy's share) and
    overall; each lesson's maximum (without extra credit)."""
    scheme = results.points
    max_by_lesson = {lesson: scheme.lesson_max(lesson) for lesson in results.lessons}
    by_lesson: dict[tuple[str, str], float] = {}
    overall: dict[str, float] = {}
    for student in results.students:
        for lesson in results.lessons:
            by_lesson[(student, lesson)] = 0.0
        for row in results.per_student[student].rows:
            if row.lesson in max_by_lesson:
                earned = scheme.earned(row.exercise, row.status, row.mistake)
                by_lesson[(student, row.lesson)] += earned
        kept = 1.0 - results.late.get(student, (0.0, ""))[0]
        for lesson in results.lessons:
            by_lesson[(student, lesson)] *= kept
        overall[student] = sum(by_lesson[(student, lesson)] for lesson in results.lessons)
    return Totals(by_lesson, overall, max_by_lesson, sum(max_by_lesson.values()))


def finish(results: ClassResults, similarity_store: dict | None = None) -> ClassResults:
    """Totals, roster matches and similar answers: derived from the per-student results
    (``similarity_store``: what an earlier run in ``OUT`` worked out about the answers, see
    :func:`course_grader.outputs.similarity.alike_pairs`)."""
    from .similarity import alike_pairs

    results.totals = compute_totals(results)
    if results.roster is not None:
        listed = {p.student for p in results.roster}
        results.not_in_roster = [s for s in results.students if s not in listed]
    exercises = [
        item
        for lesson in results.lessons
        for item in lesson_items(lesson)
        if isinstance(item, Exercise)
    ]
    answers = {s: results.per_student[s].answers for s in results.students}
    results.alike, results.as_course = alike_pairs(answers, exercises, similarity_store)
    return results


# ----------------------------------------------------------------------------------------------
# Kept between runs


def state_path(out: Path) -> Path:
    return out / ".grade" / "state.json"


def save_state(results: ClassResults, out: Path) -> None:
    data = {
        "version": STATE_VERSION,
        "lessons": results.lessons,
        "students": {
            s: {
                "rows": [list(r.as_tuple()) for r in results.per_student[s].rows],
                "notes": results.per_student[s].notes,
                "chosen": results.per_student[s].chosen,
                "attention": results.per_student[s].attention,
                "answers": results.per_student[s].answers,
                "notebooks": results.per_student[s].notebooks,
            }
            for s in results.students
        },
        "notes": results.notes,
        "without_folder": results.without_folder,
    }
    write_if_changed(state_path(out), json.dumps(data, ensure_ascii=False, indent=1))


def load_state(out: Path) -> dict | None:
    """The previous run's per-student results in ``out`` (None when there are none)."""
    path = state_path(out)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if data.get("version") != STATE_VERSION:
        return None
    students = {}
    for name, d in data["students"].items():
        students[name] = StudentResults(
            rows=[Row(*r) for r in d["rows"]],
            notes=d["notes"],
            chosen=d["chosen"],
            attention=d["attention"],
            answers=d["answers"],
            notebooks=d.get("notebooks", 0),
        )
    return {
        "lessons": data["lessons"],
        "students": students,
        "notes": data.get("notes", []),
        "without_folder": data.get("without_folder", []),
    }
