"""The guide's time per lesson and three-week plan are tools/lesson_times.py's, over the
lessons as they are now (a lesson grown or an exercise added changes them)."""

from __future__ import annotations

import lesson_times
from support import ROOT


def test_the_guide_holds_the_current_estimates():
    guide = (ROOT / "docs" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    for table in (lesson_times.table(), lesson_times.plan()):
        assert table in guide, f"docs/INSTRUCTORS.md: paste python tools/lesson_times.py's\n{table}"


def test_every_lesson_and_week_is_estimated():
    rows = lesson_times.lesson_rows()
    assert [r["lesson"] for r in rows] == [f"{n:02d}" for n in range(12)]
    assert sorted(n for week in lesson_times.WEEKS for n in week) == [r["lesson"] for r in rows]
    assert all(r["reading"] > 0 for r in rows)
