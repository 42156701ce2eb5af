"""Assertions shared by the exercise-check tests that keep their answers in tables."""

from __future__ import annotations

import re


def assert_mistakes_distinct(exercise, mistakes: dict) -> None:
    """Each mistake's expected text (a regex) matches its own message and no other's.

    ``mistakes`` maps a name to ``(answer, pattern)``.
    """
    messages = {name: exercise.check(answer).message for name, (answer, _) in mistakes.items()}
    for name, (_, pattern) in mistakes.items():
        others = [m for other, m in messages.items() if other != name]
        assert not any(re.search(pattern, m) for m in others), (
            f"{name!r}'s text also matches elsewhere"
        )
