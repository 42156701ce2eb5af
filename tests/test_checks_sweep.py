"""The sweep: every exercise's correct answers pass, and its named mistakes are named, on many
draws (issue 17, part 2).

Each ``tests/test_checks_lessonNN.py`` holds a ``SWEEP`` table: per exercise, correct answers in
several styles (loops, einsum, float32, copies of the inputs) and one answer per named mistake.
Each draw is seeded (``draws.seeded_draws``), so every answer meets the same cases and a failure
names the seed that reproduces it. ``make test`` runs a sample of seeds; ``make sweep`` runs
``HELPERS_SWEEP_SEEDS`` (default there: 300) of them. A correct answer rejected on one draw
fails; a mistake must be named right on at least 99 % of draws.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re

import pytest

from helpers import checks
from helpers.checks import Exercise, draws

SEEDS = range(int(os.environ.get("HELPERS_SWEEP_SEEDS", "6")))
LESSONS = [f"{n:02d}" for n in range(1, 12)]
EXERCISES = {e.name: e for e in checks.catalogue() if isinstance(e, Exercise)}


def _tables() -> dict[str, dict]:
    tables: dict[str, dict] = {}
    for lesson in LESSONS:
        module = importlib.import_module(f"test_checks_lesson{lesson}")
        for name, table in getattr(module, "SWEEP", {}).items():
            assert name not in tables, f"{name} is swept twice"
            tables[name] = table
    return tables


SWEEP = _tables()


def test_every_exercise_is_swept_with_three_correct_styles():
    assert set(SWEEP) == set(EXERCISES), (
        f"not swept: {sorted(set(EXERCISES) - set(SWEEP))}; "
        f"not exercises: {sorted(set(SWEEP) - set(EXERCISES))}"
    )
    for name, table in SWEEP.items():
        assert len(table["correct"]) >= 3, f"{name}: fewer than 3 correct styles"
        assert len({f.__code__ for f in table["correct"]}) == len(table["correct"]), name


@pytest.mark.parametrize("name", sorted(SWEEP))
def test_correct_answers_pass_on_every_draw(name):
    exercise, rejected = EXERCISES[name], []
    for seed in SEEDS:
        with draws.seeded_draws(seed):
            for answer in SWEEP[name]["correct"]:
                result = exercise.check(answer)
                if result.passed is not True:
                    rejected.append(f"seed {seed}, {answer.__name__}: {result}")
    assert not rejected, f"{len(rejected)} false rejection(s):\n" + "\n".join(rejected[:5])


@pytest.mark.parametrize("name", sorted(SWEEP))
def test_named_mistakes_are_named_right_on_99_percent_of_draws(name):
    exercise, misnamed = EXERCISES[name], {}
    for mistake, answer in SWEEP[name].get("mistakes", {}).items():
        wrong = []
        for seed in SEEDS:
            with draws.seeded_draws(seed):
                result = exercise.check(answer)
            if result.mistake != f"{name}.{mistake}":
                wrong.append(f"seed {seed}: {result.mistake}: {result.message[:300]}")
        if len(wrong) > 0.01 * len(SEEDS):
            misnamed[mistake] = wrong
    assert not misnamed, "\n".join(
        f"{mistake}: named otherwise on {len(w)} of {len(SEEDS)} draws, e.g. {w[0]}"
        for mistake, w in misnamed.items()
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_named_mistake_of_a_lesson_is_swept(lesson):
    # Every id the lesson's checks name with named("id", ...) has an answer that makes it.
    source = inspect.getsource(importlib.import_module(f"helpers.checks.lesson{lesson}"))
    named = set(re.findall(r'named\(\s*"([a-z0-9_]+)"', source))
    named |= set(re.findall(r'one_number="([a-z0-9_]+)"', source))  # _scores' mistake
    swept = {
        mistake
        for name, table in SWEEP.items()
        if EXERCISES[name].lesson == lesson
        for mistake in table.get("mistakes", {})
    }
    assert named <= swept, f"lesson {lesson}: not swept: {sorted(named - swept)}"
