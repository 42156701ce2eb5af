"""Assertions shared by the exercise-check tests that keep their answers in tables.

A table maps a name to ``(answer, pattern)`` or ``(answer, pattern, mistake_id)``: the wrong
answer, a regex its message must match, and optionally the stable id of the mistake, without
the exercise prefix (``"unscaled"`` for ``"scaled_scores.unscaled"``).
"""

from __future__ import annotations

import re


def assert_mistakes_distinct(exercise, mistakes: dict) -> None:
    """Each mistake's expected text (a regex) matches its own message and no other's.

    Entries whose id they share (the same mistake reached two ways) are not compared.
    """
    messages = {name: exercise.check(entry[0]).message for name, entry in mistakes.items()}
    ids = {name: entry[2] if len(entry) > 2 else name for name, entry in mistakes.items()}
    for name, entry in mistakes.items():
        pattern = entry[1]
        others = [m for other, m in messages.items() if other != name and ids[other] != ids[name]]
        assert not any(re.search(pattern, m) for m in others), (
            f"{name!r}'s text also matches elsewhere"
        )


def assert_mistake_named(exercise, entry, repeats: int = 3) -> None:
    """The answer of ``entry`` fails, ``repeats`` times on fresh inputs, with its own message
    (and its own stable id, when the entry gives one)."""
    answer, pattern = entry[0], entry[1]
    for _ in range(repeats):
        result = exercise.check(answer)
        assert result.passed is False, result.message
        assert re.search(pattern, result.message), result.message
        if len(entry) > 2:
            assert result.mistake == f"{exercise.name}.{entry[2]}", (result.mistake, result.message)
