"""What ``make grade`` writes into ``OUT``: each writer is a function of the class's results.

==========================  =================================================================
``grades.csv``              one row per student × exercise: ``student,lesson,exercise,status,
                            mistake,message``
``scores.csv``              ``student,lesson,points,max_points``: one row per student × lesson,
                            then one per student with lesson ``all``
``lms/canvas.csv``          Canvas's gradebook import: ``Student,ID,SIS User ID,SIS Login ID,
                            Section``, one column per lesson; a ``Points Possible`` row first
``lms/moodle.csv``          Moodle's CSV grade import: ``Email address``, one column per lesson
``feedback/<student>.md``   per student: points, what went well, what to fix, with hints
``feedback/<student>.txt``  the same in plain text, for an LMS's comment box
``lms/<lms>-feedback.zip``  after ``--from-canvas`` or ``--from-moodle``: each student's
                            feedback, named for the LMS's upload of feedback files; and
                            ``lms/roster-from-download.csv``, a roster to complete
``similarity.csv``          ``exercise,student_a,student_b,similarity``
``report.html``             the class at a glance, what to reteach, answers that look alike
==========================  =================================================================

A file whose content is already what a writer would write is left alone (a regrade of one
student rewrites that student's feedback, not the class's).

Canvas's format: Ohio State's "Import a CSV File to Carmen Grades" (teaching.resources.osu.edu;
the student is identified by Student name, ID or SIS User ID, with SIS Login ID and Section;
then one column per assignment; a column matching no assignment creates one) and the nemogb
package's "Detailed Canvas Export Info" (the export's identity columns Student ("Last,
First"), ID, SIS User ID, SIS Login ID, Section, and assignment columns named "Name (id)").
The ``Points Possible`` row is the one Canvas's export writes before the students (as the issue
asks); none of the pages we could read shows it, so it is the part to check first on a real
import. Moodle's: MoodleDocs "Grade import" (docs.moodle.org, 3.11; CSV import: choose the
column that identifies users, "Map from" *Email address* to "Map to" *useremail*, then map each
grade column to a grade item or a new one; email addresses compared case-sensitively).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

from .. import COLUMNS
from ..pipeline.lms import feedback_zip
from ..pipeline.points import fmt
from ..pipeline.roster import COLUMNS as ROSTER_COLUMNS
from .files import write_if_changed
from .report import feedback_markdown, report_html
from .results import ClassResults

SCORES_COLUMNS = ("student", "lesson", "points", "max_points")
SIMILARITY_COLUMNS = ("exercise", "student_a", "student_b", "similarity")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def _csv(path: Path, header, rows) -> None:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(header)
    writer.writerows([_inert(cell) for cell in row] for row in rows)
    write_if_changed(path, text.getvalue())


def _inert(cell):
    """A text cell a spreadsheet will not run as a formula (OWASP's CSV injection advice: a
    leading ' before =, +, -, @, tab or carriage return). Numbers are left as they are."""
    if isinstance(cell, str) and cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + cell
    return cell


def lesson_column(lesson: str) -> str:
    return f"Lesson {lesson}"


def write_grades(results: ClassResults, out: Path) -> None:
    _csv(out / "grades.csv", COLUMNS, (r.as_tuple() for r in results.rows))


def write_scores(results: ClassResults, out: Path) -> None:
    totals = results.totals
    assert totals is not None
    rows = []
    for student in results.students:
        for lesson in results.lessons:
            rows.append(
                (
                    student,
                    lesson,
                    fmt(totals.by_lesson[(student, lesson)]),
                    fmt(totals.max_by_lesson[lesson]),
                )
            )
        rows.append((student, "all", fmt(totals.overall[student]), fmt(totals.max_overall)))
    _csv(out / "scores.csv", SCORES_COLUMNS, rows)


def lms_students(results: ClassResults) -> list[str]:
    """Who goes into the LMS files: the roster's students in its order (those without a folder
    too, with 0 points), or every folder when there is no roster."""
    if results.roster is None:
        return list(results.students)
    return [p.student for p in results.roster]


def write_canvas(results: ClassResults, out: Path) -> None:
    totals = results.totals
    assert totals is not None
    header = [*CANVAS_IDENTITY, *(lesson_column(lesson) for lesson in results.lessons)]
    possible = ["Points Possible", "", "", "", ""]
    possible += [fmt(totals.max_by_lesson[lesson]) for lesson in results.lessons]
    rows = [possible]
    for student in lms_students(results):
        person = results.person(student)
        identity = (
            [person.name, person.id, person.sis_user_id, person.sis_login_id, person.section]
            if person is not None
            else [student, "", "", "", ""]
        )
        rows.append(
            identity
            + [fmt(totals.by_lesson.get((student, lesson), 0.0)) for lesson in results.lessons]
        )
    _csv(out / "lms" / "canvas.csv", header, rows)


def write_moodle(results: ClassResults, out: Path) -> None:
    totals = results.totals
    assert totals is not None
    header = ["Email address", "Student", *(lesson_column(lesson) for lesson in results.lessons)]
    rows = []
    for student in lms_students(results):
        person = results.person(student)
        email, name = (person.email, person.name) if person is not None else ("", student)
        rows.append(
            [email, name]
            + [fmt(totals.by_lesson.get((student, lesson), 0.0)) for lesson in results.lessons]
        )
    _csv(out / "lms" / "moodle.csv", header, rows)


def write_feedback(results: ClassResults, out: Path) -> None:
    folder = out / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    for student in results.students:
        mine = results.per_student[student]
        text = feedback_markdown(student, mine.rows, mine.notes, mine.chosen, results)
        write_if_changed(folder / f"{student}.md", text)
        plain = feedback_markdown(student, mine.rows, mine.notes, mine.chosen, results, True)
        write_if_changed(folder / f"{student}.txt", plain)


def write_lms_feedback(results: ClassResults, out: Path) -> None:
    """The feedback as a zip the LMS the submissions came from takes back
    (:func:`course_grader.pipeline.lms.feedback_zip`)."""
    if results.manifest is None:
        return
    feedback = {}
    for student in results.students:
        mine = results.per_student[student]
        text = feedback_markdown(student, mine.rows, mine.notes, mine.chosen, results)
        feedback[student] = (text, list(mine.chosen.values()))
    data = feedback_zip(results.manifest, feedback)
    path = out / "lms" / f"{results.manifest.lms}-feedback.zip"
    if not path.exists() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # A roster to complete (a Moodle import matches on e-mail addresses, which a download
    # does not hold): the folders with the LMS's names and ids filled in.
    rows = [(s.folder, s.name, s.user, "", "", "", "") for s in results.manifest.students]
    _csv(out / "lms" / "roster-from-download.csv", ROSTER_COLUMNS, rows)


def write_similarity(results: ClassResults, out: Path) -> None:
    rows = [(e, a, b, f"{s:.3f}") for e, a, b, s in results.alike]
    _csv(out / "similarity.csv", SIMILARITY_COLUMNS, rows)


def write_report(results: ClassResults, out: Path) -> None:
    write_if_changed(out / "report.html", report_html(results))


WRITERS: list[Callable[[ClassResults, Path], None]] = [
    write_grades,
    write_scores,
    write_canvas,
    write_moodle,
    write_feedback,
    write_lms_feedback,
    write_similarity,
    write_report,
]


def write_all(results: ClassResults, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for writer in WRITERS:
        writer(results, out)
