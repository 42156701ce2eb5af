"""Points: what each row earns, and the policy a term sets for it, in one :class:`Scheme`.

By default each exercise is worth its stars (★ 1, ★★ 2, ★★★ 3) and each prediction 1;
the ★★★ challenges, which the lessons mark optional, are **extra credit** (they add to a
student's points, never to the maximum); a prediction earns its point for **a guess made**,
right or wrong (the learner's copy shows the answer after a wrong guess, so a re-run would
score it anyway); an exercise earns its points when it is ``correct``, and nothing otherwise
unless the file names a mistake that still earns part of them. The file passed with
``--points`` (``POINTS=`` for make) is TOML, every table optional:

.. code-block:: toml

    [policy]
    challenges = "extra"        # or "counted": ★★★ in the maximum like the others
    predictions = "completion"  # or "correct" (only a right guess), or "none" (0 points)

    [points]                    # an exercise's or prediction's worth
    positional_encoding = 2
    pe_far_positions = 0.5

    [partial]                   # a named mistake that still earns this fraction
    "scaled_scores.unscaled" = 0.5

    [late]                      # see :class:`Late`
    due = 2027-02-01T23:59:00-05:00
    per_day = 0.1

(the ``[points]`` keys may also stand at the top level). ``python -m course_grader
--points-table`` prints the whole default file, ready to copy and edit.
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from helpers.checks import grading
from helpers.checks.grading import Exercise, is_wrong_guess

STARS = {1: "★", 2: "★★", 3: "★★★"}
CHALLENGES = ("extra", "counted")
PREDICTIONS = ("completion", "correct", "none")
_TABLES = ("policy", "points", "partial", "late")


class PointsError(ValueError):
    """The points file cannot be used (says which line or key, and why)."""


@dataclass(frozen=True)
class Late:
    """A late policy: ``per_day`` of the points lost for each day, or part of one, after the
    due date (``extensions`` give a student their own), never more than ``most``; a
    submission an LMS marks late without saying when it came (Canvas's ``_LATE`` in a
    download's file names) loses ``marked``. ``excused`` students lose nothing."""

    due: datetime | None = None
    per_day: float = 0.0
    most: float = 1.0
    marked: float | None = None  # None: per_day (one day late)
    extensions: dict[str, datetime] = field(default_factory=dict)
    excused: tuple[str, ...] = ()

    def days_late(self, who: list[str], submitted: datetime) -> int | None:
        """Days, or parts of one, after ``who``'s due date (their extension's, else ``due``);
        None without a due date."""
        due = next((self.extensions[n] for n in who if n in self.extensions), self.due)
        return None if due is None else max(0, math.ceil((submitted - due) / timedelta(days=1)))

    def lost(self, who: list[str], submitted: datetime | None, marked_late: bool) -> float:
        """The fraction of a lesson's points lost by a submission of ``who`` (the names the
        student goes by: folder, LMS id, email) at ``submitted``, or marked late by the LMS."""
        if any(name in self.excused for name in who):
            return 0.0
        days = self.days_late(who, submitted) if submitted is not None else None
        if days is not None:
            return min(self.most, self.per_day * days)
        if marked_late:
            return min(self.most, self.per_day if self.marked is None else self.marked)
        return 0.0


@dataclass(frozen=True)
class Scheme:
    """Each exercise's and prediction's worth, and how a row earns it."""

    points: dict[str, float]
    challenges: str = "extra"
    predictions: str = "completion"
    partial: dict[str, float] = field(default_factory=dict)  # "exercise.mistake" -> fraction
    late: Late = field(default_factory=Late)

    def is_extra(self, name: str) -> bool:
        """Extra credit: its points add to a student's, not to the maximum."""
        item = _items()[name]
        return self.challenges == "extra" and isinstance(item, Exercise) and item.stars == 3

    def worth(self, name: str) -> float:
        """What ``name`` earns at best (0 for a prediction under ``predictions = "none"``)."""
        if self.predictions == "none" and not isinstance(_items()[name], Exercise):
            return 0.0
        return self.points[name]

    def counted(self, name: str) -> float:
        """What ``name`` adds to the maximum."""
        return 0.0 if self.is_extra(name) else self.worth(name)

    def earned(self, name: str, status: str, mistake: str) -> float:
        """The points a row of ``name`` with this status and mistake id earns."""
        worth = self.worth(name)
        if status == "correct":
            return worth
        if isinstance(_items()[name], Exercise):
            return worth * self.partial.get(mistake, 0.0) if status == "not_yet" else 0.0
        guessed = status == "not_yet" and is_wrong_guess(mistake)
        return worth if guessed and self.predictions == "completion" else 0.0

    def lesson_max(self, lesson: str) -> float:
        return sum(self.counted(i.name) for i in grading.catalogue() if i.lesson == lesson)

    def describe(self) -> str:
        """One sentence for the report's footer and the feedback: the policy in force."""
        parts = [
            "★★★ challenges are extra credit" if self.challenges == "extra"
            else "★★★ challenges count in the maximum",
            {"completion": "a prediction earns its point for a guess, right or wrong",
             "correct": "a prediction earns its point when it is right",
             "none": "predictions earn no points"}[self.predictions],
        ]  # fmt: skip
        if self.partial:
            parts.append(f"{len(self.partial)} named mistake(s) earn part of their points")
        if self.late.per_day or self.late.marked:
            parts.append(_late_sentence(self.late))
        return "; ".join(parts)


def _late_sentence(late: Late) -> str:
    parts = []
    if late.per_day:
        after = f" after {late.due.isoformat(sep=' ', timespec='minutes')}" if late.due else ""
        parts.append(f"late work loses {late.per_day:.0%} per day{after}")
    marked = late.per_day if late.marked is None else late.marked
    if marked:
        parts.append(f"a submission the LMS marks late, without its time, loses {marked:.0%}")
    most = f" (at most {late.most:.0%} in all)" if late.most < 1 else ""
    return "; ".join(parts) + most


@functools.cache
def _items() -> dict:
    """Exercise id → its exercise or prediction (looked up for every row: built once)."""
    return {item.name: item for item in grading.catalogue()}


def default_points() -> dict[str, float]:
    """Exercise id → points: its number of stars, or 1 for a prediction."""
    return {
        item.name: float(item.stars) if isinstance(item, Exercise) else 1.0
        for item in grading.catalogue()
    }


def default_scheme() -> Scheme:
    return Scheme(default_points())


def load_points(path: Path | None) -> Scheme:
    """The default scheme with ``path``'s settings applied; :class:`PointsError` for anything
    it cannot use (an exercise the course does not have, a fraction outside 0–1, ...)."""
    if path is None:
        return default_scheme()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PointsError(f"no such points file: {path}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise PointsError(f"{path} is not TOML: {problem}") from None
    tables = {name: data.pop(name, {}) for name in _TABLES}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise PointsError(f"{path}: {name} must be a table ([{name}])")
    return Scheme(
        points=_points(path, {**data, **tables["points"]}),
        challenges=_choice(path, tables["policy"], "challenges", CHALLENGES),
        predictions=_choice(path, tables["policy"], "predictions", PREDICTIONS),
        partial=_partial(path, tables["partial"]),
        late=_late(path, tables["late"]),
    )


def _points(path: Path, overrides: dict) -> dict[str, float]:
    table = default_points()
    unknown = sorted(set(overrides) - set(table))
    if unknown:
        raise PointsError(
            f"{path}: no exercise named {', '.join(unknown)} in the course "
            "(python -m course_grader --points-table lists them)"
        )
    for name, value in overrides.items():
        table[name] = _number(path, name, value)
    return table


def _number(path: Path, name: str, value, most: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise PointsError(f"{path}: {name} = {value!r}: give a number >= 0")
    if most is not None and value > most:
        raise PointsError(f"{path}: {name} = {value!r}: give a fraction from 0 to {most:g}")
    return float(value)


def _choice(path: Path, policy: dict, key: str, choices: tuple[str, ...]) -> str:
    unknown = sorted(set(policy) - {"challenges", "predictions"})
    if unknown:
        raise PointsError(f"{path}: [policy] has no setting {', '.join(unknown)} "
                          "(it has challenges and predictions)")  # fmt: skip
    value = policy.get(key, choices[0])
    if value not in choices:
        raise PointsError(f"{path}: [policy] {key} = {value!r}: give one of "
                          f"{', '.join(map(repr, choices))}")  # fmt: skip
    return value


def _partial(path: Path, table: dict) -> dict[str, float]:
    exercises = {n for n, item in _items().items() if isinstance(item, Exercise)}
    flat = {}
    for key, value in table.items():  # scaled_scores.unscaled = 0.5 unquoted is a table
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    partial = {}
    for key, value in flat.items():
        exercise, _, mistake = key.partition(".")
        if exercise not in exercises or not re.fullmatch(r"[a-z0-9_]+", mistake):
            raise PointsError(
                f"{path}: [partial] {key!r}: give an exercise's mistake id, "
                '"exercise.mistake" as the report names it (e.g. "scaled_scores.unscaled")'
            )
        if mistake in ("raised", "timeout", "checker_failed"):
            raise PointsError(f"{path}: [partial] {key!r}: not a mistake in the answer (its "
                              "code raised, ran too long, or the check failed)")  # fmt: skip
        partial[key] = _number(path, f"[partial] {key}", value, most=1)
    return partial


def _late(path: Path, table: dict) -> Late:
    known = {"due", "per_day", "most", "marked", "extensions", "excused"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise PointsError(f"{path}: [late] has no setting {', '.join(unknown)} "
                          f"(it has {', '.join(sorted(known))})")  # fmt: skip

    def when(name: str, value) -> datetime:
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise PointsError(f"{path}: {name} = {value!r}: give a date and time with its "
                              "time zone, e.g. 2027-02-01T23:59:00-05:00")  # fmt: skip
        return value

    extensions = table.get("extensions", {})
    excused = table.get("excused", [])
    if not isinstance(extensions, dict):
        raise PointsError(f"{path}: [late] extensions must be a table ([late.extensions])")
    if not isinstance(excused, list) or not all(isinstance(s, str) for s in excused):
        raise PointsError(f'{path}: [late] excused must be a list of names, e.g. ["ada"]')
    return Late(
        due=when("[late] due", table["due"]) if "due" in table else None,
        per_day=_number(path, "[late] per_day", table.get("per_day", 0.0), most=1),
        most=_number(path, "[late] most", table.get("most", 1.0), most=1),
        marked=_number(path, "[late] marked", table["marked"], most=1)
        if "marked" in table
        else None,  # fmt: skip
        extensions={str(k): when(f"[late.extensions] {k}", v) for k, v in extensions.items()},
        excused=tuple(excused),
    )


def fmt(points: float) -> str:
    """2.0 → '2', 0.5 → '0.5' (as the CSV files and the report write points)."""
    return f"{round(points, 4):g}"


def points_table_toml() -> str:
    """The default file as TOML an instructor can copy and edit."""
    lines = [
        "# Points for python -m course_grader --points FILE (make grade POINTS=FILE).",
        "# Keep only the lines you change; the others keep these values.",
        "",
        "[policy]",
        'challenges = "extra"  # ★★★ add to the points, not the maximum; or "counted"',
        'predictions = "completion"  # a guess, right or wrong; or "correct", or "none"',
        "",
        "[points]  # ★ 1, ★★ 2, ★★★ 3, a prediction 1",
    ]
    table, scheme = default_points(), default_scheme()
    lesson = None
    for item in grading.catalogue():
        if item.lesson != lesson:
            lesson = item.lesson
            items = [i for i in grading.catalogue() if i.lesson == lesson]
            guesses = sum(scheme.counted(i.name) for i in items if not isinstance(i, Exercise))
            extra = sum(scheme.worth(i.name) for i in items if scheme.is_extra(i.name))
            lines.append(f"# lesson {lesson}: maximum {fmt(scheme.lesson_max(lesson))}, of which "
                         f"predictions {fmt(guesses)}; extra credit {fmt(extra)}")  # fmt: skip
        kind = f"{STARS[item.stars]} exercise" if isinstance(item, Exercise) else "prediction"
        lines.append(f"{item.name} = {fmt(table[item.name])}  # {kind}")
    lines += [
        "",
        "[partial]  # a named mistake (as the report names it) that earns part of the points",
        '# "scaled_scores.unscaled" = 0.5',
        "",
        "[late]  # per_day: the fraction lost per day or part of one after due",
        "# due = 2027-02-01T23:59:00-05:00",
        "# per_day = 0.1",
        "# most = 0.5    # never more than this fraction lost",
        "# marked = 0.1  # a submission an LMS marks late without its time (Canvas's _LATE)",
        '# excused = ["ada"]',
        "# [late.extensions]",
        "# ben = 2027-02-04T23:59:00-05:00",
    ]
    return "\n".join(lines) + "\n"
