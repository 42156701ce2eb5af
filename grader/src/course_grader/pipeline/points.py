"""Points: ★ 1, ★★ 2, ★★★ 3, a prediction 1, unless a TOML file says otherwise.

A row earns its exercise's points when its status is ``correct`` and nothing otherwise (the
checks are all-or-nothing). The file passed with ``--points`` (``POINTS=`` for make) is TOML:

.. code-block:: toml

    [points]
    positional_encoding = 2
    pe_far_positions = 0.5

(the keys may also stand at the top level). ``python -m course_grader --points-table`` prints
the default table in that form, ready to copy and edit.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from helpers.checks import grading
from helpers.checks.grading import Exercise

STARS = {1: "★", 2: "★★", 3: "★★★"}


class PointsError(ValueError):
    """The points file cannot be used (says which line or key, and why)."""


def default_points() -> dict[str, float]:
    """Exercise id → points: its number of stars, or 1 for a prediction."""
    return {
        item.name: float(item.stars) if isinstance(item, Exercise) else 1.0
        for item in grading.catalogue()
    }


def load_points(path: Path | None) -> dict[str, float]:
    """The default table with ``path``'s overrides applied; :class:`PointsError` if it names an
    exercise the course does not have, or gives something other than a number >= 0."""
    table = default_points()
    if path is None:
        return table
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PointsError(f"no such points file: {path}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise PointsError(f"{path} is not TOML: {problem}") from None
    overrides = data.pop("points", {}) if isinstance(data.get("points"), dict) else {}
    overrides = {**data, **overrides}
    unknown = sorted(set(overrides) - set(table))
    if unknown:
        raise PointsError(
            f"{path}: no exercise named {', '.join(unknown)} in the course "
            "(python -m course_grader --points-table lists them)"
        )
    for name, value in overrides.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise PointsError(f"{path}: {name} = {value!r}: give a number of points >= 0")
        table[name] = float(value)
    return table


def fmt(points: float) -> str:
    """2.0 → '2', 0.5 → '0.5' (as the CSV files and the report write points)."""
    return f"{round(points, 4):g}"


def points_table_toml() -> str:
    """The default table as a TOML file an instructor can copy and edit."""
    lines = [
        "# Points per exercise for python -m course_grader --points FILE (make grade POINTS=FILE).",
        "# Default: ★ 1, ★★ 2, ★★★ 3 points, a prediction 1. A row earns them when it is",
        "# correct. Keep only the lines you change; the others keep these values.",
        "",
        "[points]",
    ]
    table = default_points()
    lesson = None
    for item in grading.catalogue():
        if item.lesson != lesson:
            lesson = item.lesson
            lines.append(f"# lesson {lesson}")
        kind = f"{STARS[item.stars]} exercise" if isinstance(item, Exercise) else "prediction"
        lines.append(f"{item.name} = {fmt(table[item.name])}  # {kind}")
    return "\n".join(lines) + "\n"


def lesson_max(lesson: str, table: dict[str, float]) -> float:
    return sum(table[item.name] for item in grading.catalogue() if item.lesson == lesson)
