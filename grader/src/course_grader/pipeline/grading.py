"""Find the submissions, recognise each notebook's lesson, and turn runs into grade rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from helpers.checks import grading
from helpers.checks.grading import Exercise

from ..isolation.sandbox import Limits, RunOutcome

if TYPE_CHECKING:
    import nbformat


@dataclass
class Row:
    student: str
    lesson: str
    exercise: str
    status: str
    mistake: str
    message: str

    def as_tuple(self) -> tuple[str, ...]:
        return (self.student, self.lesson, self.exercise, self.status, self.mistake, self.message)


@dataclass
class Submission:
    """One ``.ipynb`` file of one student."""

    student: str
    path: Path
    name: str  # the path below the student's folder, e.g. "week2/lesson.ipynb"
    lesson: str | None = None
    recognised_by: str = ""  # "metadata" or "exercise names"
    nb: nbformat.NotebookNode | None = None
    unreadable: str = ""  # why the file is not a notebook, when it is not
    outcome: RunOutcome | None = None
    rows: list[Row] = field(default_factory=list)
    sha256: str = ""  # of the file's bytes (the cache's key)
    cached: bool = False  # rows, outcome and answers come from OUT's cache
    answers: dict[str, str] = field(default_factory=dict)  # exercise -> answer code
    flags: list[str] = field(default_factory=list)  # what the instructor should look at


def student_order(name: str) -> tuple:
    """The key that lists students everywhere (report, CSV and LMS files, similar answers): in
    natural order, ``student2`` before ``student10``, case ignored (``Ada``, ``bob``); names
    that differ only there (``Ada``, ``ada``, ``s02``, ``s2``) by the raw name, so that the order
    is total and the same on every run."""
    parts = re.split(r"([0-9]+)", name)  # text, number, text, ..., text
    natural = tuple(int(p) if i % 2 else p.casefold() for i, p in enumerate(parts))
    return natural, name


def lesson_items(lesson: str) -> list:
    """The lesson's exercises and predictions, in the order the lesson defines them."""
    return [item for item in grading.catalogue() if item.lesson == lesson]


def exercise_names(lesson: str) -> list[str]:
    return [i.name for i in lesson_items(lesson) if isinstance(i, Exercise)]


def known_lessons() -> list[str]:
    return sorted({item.lesson for item in grading.catalogue()})


def find_submissions(root: Path) -> tuple[list[str], list[Submission], list[str]]:
    """(students, their notebooks, notes on anything skipped) under ``root/<student>/``."""
    students, found, notes = [], [], []
    for entry in sorted(root.iterdir(), key=lambda e: student_order(e.name)):
        if entry.name.startswith("."):
            continue
        if not entry.is_dir():
            if entry.suffix == ".ipynb":
                notes.append(
                    f"{entry.name} is directly in the submissions folder, not in a student's "
                    "folder: skipped (expected <student>/<notebook>.ipynb)"
                )
            continue
        # A name the file system gave as bytes that are not UTF-8 (surrogate escapes) cannot be
        # written to any report: shown with "?" instead, and said.
        student = _valid_text(entry.name)
        if student != entry.name:
            if student in students:
                notes.append(f"{student}/: its name is not valid UTF-8 and, shown with '?', is "
                             "another folder's: skipped (rename it)")  # fmt: skip
                continue
            notes.append(f"{student}/: its name is not valid UTF-8; shown with '?'")
        students.append(student)
        if entry.is_symlink():
            notes.append(f"{student}/ is a link, not a folder: skipped (a link could point to "
                         "another student's work or to the grader's files)")  # fmt: skip
            continue
        for path in sorted(entry.rglob("*.ipynb")):
            relative = path.relative_to(entry)
            name = _valid_text(relative.as_posix())
            if any(part.startswith(".") for part in relative.parts):  # .ipynb_checkpoints
                continue
            if path.is_symlink() or any(p.is_symlink() for p in path.parents if entry in p.parents):
                # A link is not the student's own file: it could point to another student's
                # notebook (their grades) or to a file only the grader may read.
                notes.append(f"{student}/{name} is a link: skipped")
                continue
            if path.is_file():
                found.append(Submission(student, path, name))
    return students, found, notes


# Other keys may come before "lesson" (an executed solution's "helpers_sha256" does).
_META_IN_TEXT = re.compile(r'"course"\s*:\s*\{[^{}]*?"lesson"\s*:\s*"(\d\d)"')


def _lesson_from_names(sources: list[str]) -> str | None:
    """The lesson whose exercise names the code mentions most (``def name(``, ``checks.name``)."""
    text = "\n".join(sources)
    scores: dict[str, int] = {}
    for item in grading.catalogue():
        name = re.escape(item.name)
        if re.search(rf"\bdef\s+{name}\s*\(|\bchecks\.{name}\b", text):
            scores[item.lesson] = scores.get(item.lesson, 0) + 1
    if not scores:
        return None
    best = max(scores.values())
    winners = [lesson for lesson, score in scores.items() if score == best]
    return winners[0] if len(winners) == 1 else None


def _valid_text(text: str) -> str:
    """``text`` with any lone surrogate replaced by "?" (unchanged, and not copied, if none)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="replace").decode("utf-8")


def recognise(submission: Submission) -> None:
    """Read the notebook and find its lesson: metadata first, exercise names second. The file
    name is never used. An unreadable file is recognised from its raw text if possible."""
    import nbformat  # not at import time: see isolation.sandbox

    raw = submission.path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    try:
        nb = nbformat.reads(text, as_version=4)
        if not isinstance(nb.get("cells"), list) or not all(
            isinstance(c, dict) and isinstance(c.get("source"), str) and "cell_type" in c
            for c in nb.cells
        ):
            raise ValueError("its cells are not notebook cells")
    except Exception as problem:  # any parse failure: JSON, nbformat version, structure
        # The type only: a parser's message quotes the file, which need not be a notebook.
        submission.unreadable = type(problem).__name__
        match = _META_IN_TEXT.search(text)
        if match:
            submission.lesson, submission.recognised_by = match.group(1), "metadata (raw text)"
        else:
            lesson = _lesson_from_names([text])
            if lesson:
                submission.lesson, submission.recognised_by = lesson, "exercise names (raw text)"
        return
    for cell in nb.cells:
        # JSON can spell a lone surrogate ("\\ud800"), which no file can hold in UTF-8: every
        # message and cache entry that quoted the cell would fail to be written (found by a red
        # team: the whole class's grading stopped).
        cell.source = _valid_text(cell.source)
    submission.nb = nb
    lesson = (
        nb.metadata.get("course", {}).get("lesson")
        if isinstance(nb.metadata.get("course"), dict)
        else None
    )
    if isinstance(lesson, str) and re.fullmatch(r"\d\d", lesson):
        # Trusted even for a lesson without exercises (00): its names are only mentioned.
        submission.lesson, submission.recognised_by = lesson, "metadata"
        return
    lesson = _lesson_from_names([c.source for c in nb.cells if c.cell_type == "code"])
    if lesson:
        submission.lesson, submission.recognised_by = lesson, "exercise names"


# ----------------------------------------------------------------------------------------------
# From a run to rows


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _status_of(record: dict) -> tuple[str, str]:
    passed, mistake = record.get("passed"), record.get("mistake") or ""
    if passed is True:
        return "correct", ""
    if passed is None:
        return "not_attempted", ""
    if mistake.endswith(".timeout"):
        return "timeout", mistake
    if mistake.endswith((".raised", ".checker_failed")):
        return "error", mistake
    return "not_yet", mistake


def cell_label(nb: nbformat.NotebookNode, index: int) -> str:
    source = nb.cells[index].source if 0 <= index < len(nb.cells) else ""
    line = next((s.strip() for s in source.splitlines() if s.strip()), "")
    line = line if len(line) <= 50 else line[:47] + "..."
    return f"cell {index + 1} (`{line}`)" if line else f"cell {index + 1}"


def _errors_mentioning(submission: Submission, pattern: str) -> list[str]:
    """'cell 7 (`def f(x):`) raised SyntaxError: ...' for error cells whose code matches."""
    assert submission.nb is not None and submission.outcome is not None
    found = []
    for error in submission.outcome.errors:
        if 0 <= error.index < len(submission.nb.cells) and re.search(
            pattern, submission.nb.cells[error.index].source
        ):
            evalue = f": {error.evalue}" if error.evalue else ""
            found.append(f"{cell_label(submission.nb, error.index)} raised {error.ename}{evalue}")
    return found


def _stopped_message(submission: Submission, limits: Limits) -> tuple[str, str]:
    """(status, message) for a check that never ran because the run stopped early."""
    outcome = submission.outcome
    assert outcome is not None and submission.nb is not None
    at = outcome.stopped_at
    where = (
        cell_label(submission.nb, at)
        if at is not None and at >= 0
        else (outcome.detail or "the notebook")
    )
    if outcome.stopped == "cell_timeout":
        return "timeout", (
            f"{where} ran past the {limits.cell_seconds:g} s limit per cell (an endless loop?): "
            "the grader killed the kernel there, so this check never ran"
        )
    if outcome.stopped == "notebook_timeout":
        return "timeout", (
            f"the notebook ran past its {limits.notebook_seconds:g} s limit at {where}: the "
            "grader killed the kernel there, so this check never ran"
        )
    if outcome.stopped == "failed_to_start":
        return "error", f"the notebook's kernel did not start ({outcome.detail})"
    if outcome.out_of_memory and limits.memory_bytes:
        return "error", (
            f"the notebook's kernel ran out of memory at {where} (its limit is "
            f"{limits.memory_bytes / 2**30:g} GiB, files it wrote in /tmp included): the "
            "grader's sandbox stopped it, so this check never ran"
        )
    return "error", (
        f"the notebook's kernel died at {where} (sys.exit is fine, but os._exit, a killed "
        "process or a crash end the kernel): this check never ran"
    )


def rows_for(submission: Submission, limits: Limits) -> list[Row]:
    """One row per exercise and prediction of the submission's lesson."""
    assert submission.lesson is not None
    rows = []
    for item in lesson_items(submission.lesson):
        status, mistake, message = _row_for(submission, item, limits)
        rows.append(
            Row(
                submission.student,
                submission.lesson,
                item.name,
                status,
                mistake,
                _one_line(message),
            )
        )
    return rows


def _row_for(submission: Submission, item, limits: Limits) -> tuple[str, str, str]:
    name = item.name
    if submission.unreadable:
        return (
            "error",
            "",
            (
                f"{submission.name} is not a readable notebook ({submission.unreadable}); open it "
                "in JupyterLab, save it, and hand it in again"
            ),
        )
    outcome = submission.outcome
    assert outcome is not None
    # The grader's own verdict (course_grader.isolation.remote), never the notebook's records.
    verdicts = [r for r in outcome.verdicts if r.get("exercise") == name]
    record = verdicts[-1] if verdicts else None
    if record is not None and record.get("found") is not False:
        status, mistake = _status_of(record)
        status = record.get("status", status)  # set by the grader when no check could run
        return status, mistake, str(record.get("message", ""))
    if record is None and outcome.stopped:
        status, message = _stopped_message(submission, limits)
        return status, "", message
    if isinstance(item, Exercise):
        broken = _errors_mentioning(submission, rf"\bdef\s+{re.escape(name)}\s*\(")
        if broken:
            return "error", "", (f"{name} is not defined at the end of the notebook: {broken[-1]}")
        later = _errors_mentioning(submission, rf"\b{re.escape(name)}\b")
        because = f"; {later[-1]}" if later else ""
        return (
            "missing",
            "",
            (f"no function named {name} in the notebook (renamed or deleted?){because}"),
        )
    broken = _errors_mentioning(submission, rf"\bchecks\.{re.escape(name)}\b")
    if broken:
        return "error", "", f"the cell that checks this prediction failed: {broken[-1]}"
    return (
        "missing",
        "",
        (f"the prediction's check (checks.{name}.check(...)) never ran: was its cell deleted?"),
    )


def score(rows: list[Row]) -> tuple[int, int]:
    """For choosing between two notebooks of one lesson: correct first, then attempted."""
    correct = sum(r.status == "correct" for r in rows)
    answered = sum(r.status not in ("missing", "not_attempted", "error") for r in rows)
    return correct, answered


def missing_rows(student: str, lesson: str, why: str) -> list[Row]:
    return [Row(student, lesson, item.name, "missing", "", why) for item in lesson_items(lesson)]
