"""Each exercise says which course helpers it may use, and its check enforces exactly that list
(issue 17, part 3).

The lesson states the list on a ``*May use:*`` line of the exercise's prompt (the markdown above
the cell that runs ``checks.NAME.check(``); the check's ``allowed`` holds the same names. Any
other helper is refused, whether the answer calls it or is it, and so is a check's own answer.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

import helpers
from helpers import checks
from helpers.checks import Exercise, policy

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = [e for e in checks.catalogue() if isinstance(e, Exercise)]
MAY_USE = re.compile(r"\*May use:\*(.*)")


def _lesson_source(lesson: str) -> str:
    (path,) = ROOT.glob(f"solutions/{lesson}_*.py")
    return path.read_text(encoding="utf-8")


def stated_list(exercise: Exercise) -> set[str] | None:
    """The helpers the lesson's *May use:* line names for ``exercise`` (None: no such line)."""
    lines = _lesson_source(exercise.lesson).splitlines()
    call = next(i for i, line in enumerate(lines) if f"checks.{exercise.name}.check(" in line)
    for line in reversed(lines[:call]):
        if re.search(r"checks\.\w+\.check\(", line):
            return None  # reached the previous exercise's check: this one has no line
        found = MAY_USE.search(line)
        if found:
            text = found.group(1)
            names = set(re.findall(r"`(helpers\.[\w.*]+)`", text))
            assert names or "NumPy only" in text, f"{exercise.name}: {line!r}"
            return names
    return None


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_lesson_states_the_list_the_check_enforces(exercise):
    stated = stated_list(exercise)
    assert stated is not None, f"{exercise.name}: no '*May use:*' line in its prompt"
    assert stated == set(exercise.allowed)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_every_allowed_name_is_a_real_helper(exercise):
    for dotted in exercise.allowed:
        assert dotted.startswith("helpers."), dotted
        if dotted.endswith(".*"):
            importlib.import_module(dotted.removesuffix(".*"))
        else:
            policy.resolve(dotted)  # raises if the name is not there


def test_a_helper_outside_the_list_is_refused_called_or_passed():
    softmax = checks.softmax
    for answer in (
        helpers.softmax,  # the helper itself as the answer
        lambda z: helpers.softmax(z),  # called
        lambda z: np.apply_along_axis(helpers.softmax, -1, z),  # called back by NumPy
    ):
        result = softmax.check(answer)
        assert result.mistake == "softmax.calls_helper", result
        assert "helpers.softmax" in result.message and "may use" in result.message


def test_a_helper_on_the_list_may_be_called_and_its_own_calls_are_not_watched():
    # helpers.scaled_dot_product_attention calls helpers.softmax (not on the list) inside:
    # only calls made by the learner's code count.
    exercise = Exercise(
        name="attention",
        signature="attention(Q, K, V)",
        grade=lambda call: call(np.eye(3), np.eye(3), np.eye(3)) and "ok",
        reference=lambda Q, K, V: None,
        hints=["a", "b", "c"],
        allowed=("helpers.scaled_dot_product_attention",),
    )

    def attention(Q, K, V):
        return helpers.scaled_dot_product_attention(Q, K, V)

    assert exercise.check(attention).passed is True
    refused = exercise.check(lambda Q, K, V: helpers.softmax(Q))
    assert refused.mistake == "attention.calls_helper"
    assert "may use: NumPy and helpers.scaled_dot_product_attention" in refused.message
