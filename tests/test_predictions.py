"""Predictions: a question answered before a widget shows it, explained whichever way."""

import re

import numpy as np
import pytest

from helpers import checks
from helpers.checks import Prediction

CHOICE = Prediction(
    "temperature_guess",
    "At temperature 10, does the largest weight rise or fall?",
    "fall",
    "dividing the scores by 10 shrinks their differences, so the weights spread out.",
    choices=["rise", "fall"],
    wrong={"rise": "a higher temperature flattens the softmax."},
)
NUMBER = Prediction("variance_guess", "What is Var(q·k) at d_k = 64?", 64.0, "Var = d_k.")


def test_no_guess_yet_is_not_attempted():
    for guess in (None, ...):
        result = CHOICE.check(guess)
        assert result.passed is None and result.mistake is None
        assert "make your guess first" in result.message


def test_the_right_choice_is_correct_whatever_its_case_and_spaces():
    result = CHOICE.check("  Fall ")
    assert result.passed is True and result.exercise == "temperature_guess"
    assert "spread out" in result.message


def test_a_wrong_choice_is_explained_and_named():
    result = CHOICE.check("rise")
    assert result.passed is False and result.mistake == "temperature_guess.picked_rise"
    assert "flattens" in result.message and "spread out" in result.message


@pytest.mark.parametrize("guess", ["up", 3, ["fall"], b"fall"])
def test_an_answer_outside_the_choices_says_what_to_answer(guess):
    result = CHOICE.check(guess)
    assert result.passed is False and result.mistake == "temperature_guess.not_a_choice"
    assert "'rise', 'fall'" in result.message


def test_a_number_within_tolerance_is_correct_and_one_outside_says_which_way():
    assert NUMBER.check(60).passed is True
    assert NUMBER.check(np.float32(66.0)).passed is True
    high, low = NUMBER.check(640), NUMBER.check(8)
    assert high.passed is False and high.mistake == "variance_guess.too_high"
    assert low.passed is False and low.mistake == "variance_guess.too_low"
    assert "Var = d_k" in high.message


@pytest.mark.parametrize("guess", [True, "64", float("nan"), float("inf"), [64]])
def test_a_number_question_rejects_what_is_not_a_finite_number(guess):
    result = NUMBER.check(guess)
    assert result.passed is False and result.mistake == "variance_guess.not_a_number"


def test_a_guess_that_breaks_when_read_is_reported_not_raised():
    class Hostile(str):
        def strip(self, *args):
            raise RuntimeError("boom")

    result = CHOICE.check(Hostile("fall"))
    assert result.passed is False


def test_a_right_answer_that_is_not_a_choice_is_refused_when_defined():
    with pytest.raises(ValueError, match="not one of the choices"):
        Prediction("x", "?", "maybe", "", choices=["yes", "no"])


def test_every_gathered_exercise_knows_its_lesson_and_stars():
    entries = checks.catalogue()
    assert entries and [e.lesson for e in entries] == sorted(e.lesson for e in entries)
    for entry in entries:
        assert entry.lesson.isdigit() and len(entry.lesson) == 2
        assert entry.stars in (1, 2, 3) and entry.title
        assert getattr(checks, entry.name) is entry


def _reads_as_sentences(message: str) -> bool:
    text = re.sub(r"\b(e\.g|i\.e|vs)\.", "", message)
    return re.search(r"[.!?] +[a-z]", text) is None and re.search(r"[,;:] *$", text) is None


def test_a_lowercase_explanation_still_reads_as_sentences():
    assert CHOICE.check("rise").message == (
        "you predicted 'rise'; the answer is 'fall'. A higher temperature flattens the "
        "softmax. Dividing the scores by 10 shrinks their differences, so the weights spread out."
    )


def test_a_wrong_prediction_reads_as_a_prediction_not_as_not_yet():
    # issue 34: "✗ Not yet: not 'steadily': the answer is ..." read oddly
    assert str(CHOICE.check("rise")).startswith("✗ Not what happens: you predicted 'rise'; ")
    assert str(CHOICE.check("fall")).startswith("✓ Right: 'fall'. ")


@pytest.mark.parametrize(
    "prediction",
    [p for p in checks.catalogue() if isinstance(p, Prediction)],
    ids=lambda p: p.name,
)
def test_every_prediction_answers_every_guess_in_whole_sentences(prediction):
    guesses = prediction.choices or [float(prediction.answer) * f for f in (1, 10, 0.01)]
    for guess in guesses:
        message = prediction.check(guess).message
        assert _reads_as_sentences(message), f"{prediction.name}, {guess!r}: {message}"


def test_an_explanation_that_starts_with_a_symbol_keeps_its_case():
    symbol = Prediction("v", "Var(q·k)?", 64.0, "q · k is a sum of 64 terms")
    assert symbol.check(650).message.endswith("64. q · k is a sum of 64 terms.")
