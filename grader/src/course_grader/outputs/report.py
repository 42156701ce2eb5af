"""The two documents ``make grade`` writes for people: feedback/<student>.md and report.html,
each from a Jinja2 template in templates/ (the report autoescaped as HTML, the feedback made
inert for Markdown); this module gathers what they show."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from helpers.checks import grading
from helpers.checks.grading import Exercise

from ..pipeline.grading import Row, lesson_items, student_order
from ..pipeline.points import fmt

if TYPE_CHECKING:
    from .results import ClassResults

LABEL = {
    "correct": "correct",
    "not_yet": "not yet",
    "not_attempted": "not attempted",
    "error": "error",
    "timeout": "timeout",
    "missing": "missing",
}
SYMBOL = {
    "correct": "✓",
    "not_yet": "✗",
    "not_attempted": "…",
    "error": "!",
    "timeout": "◷",
    "missing": "–",
}
# Colour-blind-safe: green for correct, orange for not yet, purple for errors and time-outs,
# greys for what was not there to grade.
COLOUR = {
    "correct": ("#1b7837", "#ffffff"),
    "not_yet": ("#e08214", "#ffffff"),
    "not_attempted": ("#d9d9d9", "#333333"),
    "error": ("#762a83", "#ffffff"),
    "timeout": ("#c2a5cf", "#222222"),
    "missing": ("#f7f7f7", "#777777"),
}


def _items_by_name() -> dict:
    return {item.name: item for item in grading.catalogue()}


def _inert_markdown(value: object) -> object:
    """Every value a Markdown template prints (Jinja2's ``finalize``): a message may quote the
    student's own code or exception text, and a Markdown viewer renders raw HTML (an <img> that
    loads when the file is previewed), so "<" and "&" are written as entities (the viewer shows
    them as they were). The course's own text, marked :class:`markupsafe.Markup`, is left as is."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return value.replace("&", "&amp;").replace("<", "&lt;")


_TEMPLATES = PackageLoader("course_grader.outputs", "templates")
# The report: HTML, every value escaped (autoescape). The feedback: Markdown, every value inert.
_HTML = Environment(loader=_TEMPLATES, autoescape=True, keep_trailing_newline=True,
                    undefined=StrictUndefined)  # fmt: skip
_MARKDOWN = Environment(loader=_TEMPLATES, autoescape=False, finalize=_inert_markdown,
                        undefined=StrictUndefined)  # fmt: skip
# The feedback as plain text, for an LMS comment: shown as it is, so printed as it is.
_PLAIN = Environment(loader=_TEMPLATES, autoescape=False, undefined=StrictUndefined,
                     trim_blocks=True, lstrip_blocks=True)  # fmt: skip


def _code_span(value: object) -> Markup:
    """``value`` as a Markdown code span, shown as it is (no entities: a code span prints them
    literally): fenced by one backtick more than the longest run inside it (CommonMark), so a
    file name with a backtick cannot close the span and let the rest be read as HTML."""
    text = str(value).replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(f"{fence}{pad}{text}{pad}{fence}")


_MARKDOWN.filters["code"] = _code_span


def feedback_markdown(
    student: str,
    rows: list[Row],
    notes: list[str],
    chosen: dict[str, str],
    results: ClassResults | None = None,
    plain: bool = False,
) -> str:
    """A student's feedback: per lesson, points, what went well and what to fix (messages,
    hints), each exercise named as its lesson titles it; ``chosen`` names the notebook graded
    per lesson. ``plain``: as plain text (feedback.txt) instead of Markdown."""
    items = _items_by_name()
    totals = results.totals if results is not None else None
    scheme = results.points if results is not None else None
    by_lesson: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_lesson[row.lesson].append(row)
    lessons = []
    for lesson, lesson_rows in by_lesson.items():
        points = totals is not None and (student, lesson) in totals.by_lesson
        lessons.append({
            "lesson": lesson,
            "notebook": chosen.get(lesson),
            "correct": sum(r.status == "correct" for r in lesson_rows),
            "rows": len(lesson_rows),
            "points": fmt(totals.by_lesson[(student, lesson)]) if points else "",
            "max_points": fmt(totals.max_by_lesson[lesson]) if points else "",
            "good": [_done(r, items.get(r.exercise), scheme) for r in lesson_rows
                     if r.status == "correct"],
            "to_fix": [_to_fix(r, items.get(r.exercise), scheme) for r in lesson_rows
                       if r.status != "correct"],
        })  # fmt: skip
    overall = totals is not None and len(results.lessons) > 1
    lost, why = results.late.get(student, (0.0, "")) if results is not None else (0.0, "")
    environment, template = (_PLAIN, "feedback.txt") if plain else (_MARKDOWN, "feedback.md")
    text = environment.get_template(template).render(
        student=student,
        overall=fmt(totals.overall[student]) if overall else "",
        max_overall=fmt(totals.max_overall) if overall else "",
        lessons=lessons,
        notes=notes,
        late=f"{lost:.0%} of your points were taken off: {why}." if lost else "",
        policy=scheme.describe() if scheme is not None and totals is not None else "",
    )
    return text.rstrip("\n") + "\n"


def credit(row: Row, scheme) -> str:
    """What the row earned, said for the student: "2 of 2 points", "1 of 2 points (partial
    credit)", "3 points, extra credit"; "" without a scheme."""
    if scheme is None:
        return ""
    earned, worth = scheme.earned(row.exercise, row.status, row.mistake), scheme.worth(row.exercise)
    unit = "point" if worth == 1 else "points"
    if scheme.is_extra(row.exercise):
        return f"{fmt(earned)} of {fmt(worth)} {unit}, extra credit"
    partial = " (partial credit)" if 0 < earned < worth else ""
    return f"{fmt(earned)} of {fmt(worth)} {unit}{partial}"


def _done(row: Row, item, scheme=None) -> dict:
    """One row of "Well done"."""
    return {"exercise": row.exercise, "heading": getattr(item, "heading", ""),
            "message": row.message, "credit": credit(row, scheme)}  # fmt: skip


def _to_fix(row: Row, item, scheme=None) -> dict:
    """One row of "To work on": its status, message, and the next hint (the course's text)."""
    hint, more = None, None
    if isinstance(item, Exercise) and row.status != "missing":
        hints = grading.hints(item)
        level = min(1 if row.status == "not_attempted" else 2, len(hints))
        hint, more = Markup(hints[level - 1]), min(level + 1, len(hints))
    return {"exercise": row.exercise, "heading": getattr(item, "heading", ""),
            "symbol": SYMBOL[row.status], "label": LABEL[row.status],
            "mistake": row.mistake, "message": row.message, "hint": hint, "more": more,
            "credit": credit(row, scheme)}  # fmt: skip


def _cell(row: Row | None) -> dict | None:
    """One square of the class grid (None: nothing to grade there)."""
    if row is None:
        return None
    background, colour = COLOUR[row.status]
    mistake = f" ({row.mistake})" if row.mistake else ""
    short = ""
    if row.status == "not_yet" and row.mistake:
        short = row.mistake.split(".", 1)[1].replace("_", " ")
    return {"background": background, "colour": colour, "symbol": SYMBOL[row.status],
            "title": f"{row.exercise}: {LABEL[row.status]}{mistake}\n{row.message}",
            "short": short}  # fmt: skip


def report_html(results: ClassResults) -> str:
    """The class at a glance (with points), what to reteach (the most common named mistakes),
    the LMS files and the roster, answers that look alike, notebooks that need a look."""
    students, lessons, rows = results.students, results.lessons, results.rows
    totals = results.totals
    assert totals is not None
    table = {(r.student, r.exercise): r for r in rows}
    columns = [(lesson, item) for lesson in lessons for item in lesson_items(lesson)]
    n = len(students)
    grid = []
    for student in students:
        graded = [table.get((student, item.name)) for _, item in columns]
        correct = sum(row is not None and row.status == "correct" for row in graded)
        grid.append({"name": student, "cells": [_cell(row) for row in graded], "correct": correct,
                     "points": fmt(totals.overall[student])})  # fmt: skip
    shares = []
    for _, item in columns:
        done = sum(table.get((s, item.name)) is not None
                   and table[(s, item.name)].status == "correct" for s in students)  # fmt: skip
        shares.append(round(100 * done / n) if n else 0)
    mistakes, examples, who = _named_mistakes(rows)
    overall = Counter()
    for counter in mistakes.values():
        overall.update(counter)
    top = [{"count": count, "mistake": mistake, "message": _short(examples[mistake]),
            "names": ", ".join(who[mistake])}
           for mistake, count in overall.most_common(10)]  # fmt: skip
    sections = [_section(lesson, item, table, students, mistakes, examples)
                for lesson, item in columns]  # fmt: skip
    attention, settings, notebooks = results.attention, results.settings, results.notebooks
    return _HTML.get_template("report.html").render(
        title=f"Class report: {n} students, lesson{'s' if len(lessons) > 1 else ''} "
        + ", ".join(lessons),
        summary=(
            f"{notebooks} notebook{'s' if notebooks != 1 else ''} graded; "
            f"{sum(r.status == 'correct' for r in rows)} of {len(rows)} exercises correct"
            + (f"; {len(attention)} notebook(s) need a look (at the end)" if attention else "")
        ),
        no_sandbox=settings.split(". ")[0] if "NO SANDBOX" in settings else "",
        statuses=[
            {
                "symbol": SYMBOL[s],
                "label": LABEL[s],
                "background": COLOUR[s][0],
                "colour": COLOUR[s][1],
            }
            for s in COLOUR
        ],  # fmt: skip
        lesson_heads=[(lesson, len(lesson_items(lesson))) for lesson in lessons],
        item_heads=[(item.name, not isinstance(item, Exercise)) for _, item in columns],
        grid=grid,
        max_points=fmt(totals.max_overall),
        shares=shares,
        mean=f"{sum(totals.overall.values()) / n if n else 0.0:.1f}",
        top=top,
        sections=sections,
        attention=attention,
        settings=settings,
        **_lms(results),
        **_alike(results),
    )


def _named_mistakes(rows: list[Row]) -> tuple[dict[str, Counter], dict[str, str], dict]:
    """What to reteach: named mistakes (status not_yet) per exercise, counted once per
    student; one example message per mistake, and who made it."""
    mistakes: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, str] = {}
    who: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.status == "not_yet" and r.mistake:
            mistakes[r.exercise][r.mistake] += 1
            examples.setdefault(r.mistake, r.message)
            who[r.mistake].append(r.student)
    return mistakes, examples, who


def _section(lesson, item, table, students, mistakes, examples) -> dict:
    """One exercise's box under "Per exercise": its statuses as a bar, its named mistakes."""
    statuses = Counter(table[(s, item.name)].status for s in students if (s, item.name) in table)
    named = mistakes.get(item.name) or Counter()
    return {
        "name": item.name,
        "lesson": lesson,
        "bar": [
            {
                "count": statuses[s],
                "background": COLOUR[s][0],
                "colour": COLOUR[s][1],
                "label": LABEL[s],
            }
            for s in COLOUR
            if statuses[s]
        ],  # fmt: skip
        "legend": ", ".join(f"{statuses[s]} {LABEL[s]}" for s in COLOUR if statuses[s]),
        "named": [
            {"count": count, "mistake": m.split(".", 1)[1], "message": _short(examples[m])}
            for m, count in named.most_common()
        ],  # fmt: skip
    }


def _short(message: str, limit: int = 220) -> str:
    message = re.sub(r"\s+", " ", message).strip()
    return message if len(message) <= limit else message[: limit - 3] + "..."


def _lms(results: ClassResults) -> dict:
    """Where the LMS files are, and how the roster matched the folders (templates/lms.html)."""
    totals = results.totals
    assert totals is not None
    return {
        "possible": ", ".join(
            f"lesson {lesson}: {fmt(totals.max_by_lesson[lesson])}" for lesson in results.lessons
        ),  # fmt: skip
        "policy": results.points.describe(),
        "late": ", ".join(
            f"{student} {lost:.0%} ({why})" for student, (lost, why) in results.late.items() if lost
        ),
        "roster_size": None if results.roster is None else len(results.roster),
        "not_in_roster": results.not_in_roster,
        "without_folder": results.without_folder,
    }


def _alike(results: ClassResults, limit: int = 60) -> dict:
    """Answers that look alike (templates/alike.html): students sharing one syntax tree form a
    group; other pairs are listed as pairs. A prompt to look, not proof."""
    lines, seen = [], set()
    for exercise, a, b, score in results.alike:
        if score == 1.0:
            if (exercise, a) in seen:
                continue
            group = {a, b}
            for e, x, y, s in results.alike:
                if e == exercise and s == 1.0 and (x in group or y in group):
                    group |= {x, y}
            seen |= {(exercise, s) for s in group}
            lines.append((exercise, sorted(group, key=student_order), "1.00 (the same tree)"))
        else:
            lines.append((exercise, [a, b], f"{score:.2f}"))
    return {
        "alike": [{"exercise": e, "students": who, "similarity": s} for e, who, s in lines[:limit]],
        "alike_more": max(0, len(lines) - limit),
        "as_course": _as_course(results),
    }


def _as_course(results: ClassResults) -> list[dict]:
    """Per student, the exercises whose answer is the course's own solution (the same tree),
    each with how many of the class who answered it wrote the same: a rare match says more."""
    answered = {
        exercise: sum(bool(results.per_student[s].answers.get(exercise)) for s in results.students)
        for exercise in results.as_course
    }
    lines = []
    for student in results.students:
        mine = [e for e, who in results.as_course.items() if student in who]
        if mine:
            lines.append({
                "student": student,
                "count": len(mine),
                "of": sum(bool(code) for code in results.per_student[student].answers.values()),
                "exercises": [
                    {"name": e, "same": len(results.as_course[e]), "answered": answered[e]}
                    for e in mine
                ],
            })  # fmt: skip
    # The largest share of answers that are the solution first.
    lines.sort(
        key=lambda line: (-line["count"] / max(line["of"], 1), student_order(line["student"]))
    )  # noqa: E501
    return lines
