"""An estimate of each lesson's time, from its length: the table in docs/INSTRUCTORS.md.

    python tools/lesson_times.py        # the Markdown tables the guide holds

Not timed on learners: a rule of thumb over the learner's notebook (our guess, not a
measurement), said in the guide beside the table. Reading: the text cells' words at 150 a
minute (technical prose with formulas), and half a minute per code cell to read and run it.
Exercises: 10 minutes for ★, 20 for ★★; 3 per prediction; the ★★★ challenge, optional, 30
minutes, in a column of its own. Each sum rounded up to 5 minutes.
``tests/test_lesson_times.py`` fails when the guide's tables are not this script's.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 150
CODE_CELL_MINUTES = 0.5
EXERCISE_MINUTES = {1: 10, 2: 20}
CHALLENGE_MINUTES = 30
PREDICTION_MINUTES = 3
# The guide's suggested three weeks: the core path (00-04), masking, heads and cost (05-07),
# then training, a real model, induction heads and positions (08-11).
WEEKS = (("00", "01", "02", "03", "04"), ("05", "06", "07"), ("08", "09", "10", "11"))


def _up(minutes: float) -> int:
    return 5 * math.ceil(minutes / 5)


def lesson_rows() -> list[dict]:
    from helpers import checks
    from helpers.checks import Exercise

    rows = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        lesson = path.name[:2]
        nb = nbformat.read(path, as_version=4)
        words = sum(
            len(re.findall(r"\w+", c.source)) for c in nb.cells if c.cell_type == "markdown"
        )
        code = sum(c.cell_type == "code" for c in nb.cells)
        items = [i for i in checks.catalogue() if i.lesson == lesson]
        exercises = [i for i in items if isinstance(i, Exercise) and i.stars < 3]
        challenges = [i for i in items if isinstance(i, Exercise) and i.stars == 3]
        predictions = [i for i in items if not isinstance(i, Exercise)]
        rows.append({
            "lesson": lesson,
            "title": re.sub(r"^#+\s*\d\d\s*·\s*", "", nb.cells[0].source.splitlines()[0]),
            "reading": _up(words / WORDS_PER_MINUTE + code * CODE_CELL_MINUTES),
            "exercises": _up(sum(EXERCISE_MINUTES[i.stars] for i in exercises)
                             + PREDICTION_MINUTES * len(predictions)),
            "challenge": _up(CHALLENGE_MINUTES * len(challenges)),
        })  # fmt: skip
    return rows


def table() -> str:
    lines = [
        "| lesson | reading and running | exercises and predictions | in all | "
        "★★★ challenge (optional) |",
        "|---|---|---|---|---|",
    ]
    for r in lesson_rows():
        work = f"{r['exercises']} min" if r["exercises"] else "none"
        challenge = f"{r['challenge']} min" if r["challenge"] else "none"
        lines.append(f"| {r['lesson']} {r['title']} | {r['reading']} min | {work} | "
                     f"{r['reading'] + r['exercises']} min | {challenge} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def _hours(minutes: int) -> str:
    return f"{minutes // 60} h {minutes % 60:02d}" if minutes >= 60 else f"{minutes} min"


def plan() -> str:
    """The three weeks, each with its lessons' estimated time (challenges not counted)."""
    by = {r["lesson"]: r for r in lesson_rows()}
    lines = ["| week | lessons | estimated time (without the challenges) |", "|---|---|---|"]
    for number, week in enumerate(WEEKS, 1):
        minutes = sum(by[n]["reading"] + by[n]["exercises"] for n in week)
        lines.append(f"| {number} | {', '.join(week)} | {_hours(minutes)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table() + "\n" + plan())  # the guide keeps a blank line after each
