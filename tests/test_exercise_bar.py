"""The bar every exercise meets, checked over the whole course at once (every exercise and
prediction of checks.catalogue(): a new one is covered without a line here)."""

import pytest
from support.learner_code import as_learner_code

from helpers import checks
from helpers.checks import Exercise, Prediction
from helpers.checks.prediction import _sentences

EXERCISES = [e for e in checks.catalogue() if isinstance(e, Exercise)]
PREDICTIONS = [e for e in checks.catalogue() if isinstance(e, Prediction)]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_every_exercise_has_stars_three_hints_and_a_solution_that_passes_its_own_check(exercise):
    assert exercise.stars in (1, 2, 3)
    assert len(exercise._hints) >= 3
    assert all(exercise.hint(level).text for level in (1, 2, 3))
    assert f"def {exercise.name}(" in exercise.solution().text
    # The solution shown, typed into a notebook, passes: it uses only what the exercise allows.
    result = exercise.check(as_learner_code(exercise))
    assert result.passed is True, result.message


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_a_stub_is_not_attempted_yet_and_a_non_function_is_named(exercise):
    def stub(*args):
        raise NotImplementedError("replace this line with your answer")

    result = exercise.check(stub)
    assert result.passed is None and "not attempted" in str(result).lower(), result.message
    result = exercise.check("my answer")
    assert result.passed is False and result.mistake == f"{exercise.name}.not_a_function"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_checks_own_answer_is_refused_as_an_answer(exercise):
    for answer in (exercise.reference, lambda *args: exercise.reference(*args)):
        result = exercise.check(answer)
        assert result.passed is False and result.mistake == f"{exercise.name}.calls_reference"
        assert f"checks.{exercise.name}.reference" in result.message


@pytest.mark.parametrize("lesson", [f"{n:02d}" for n in range(1, 9)])
def test_every_lesson_from_01_to_08_ends_with_a_three_star_challenge(lesson):
    stars = [e.stars for e in EXERCISES if e.lesson == lesson]
    assert stars and stars[-1] == 3, f"lesson {lesson}: stars in order {stars}"


@pytest.mark.parametrize("lesson", [f"{n:02d}" for n in range(1, 8)])
def test_every_lesson_from_01_to_07_asks_for_a_prediction(lesson):
    assert any(p.lesson == lesson for p in PREDICTIONS)


@pytest.mark.parametrize("prediction", PREDICTIONS, ids=lambda p: p.name)
def test_every_prediction_is_right_with_its_answer_and_explains_a_wrong_one(prediction):
    assert prediction.check(prediction.answer).passed is True
    assert prediction.check(None).passed is None
    if prediction.choices:
        for choice in prediction.choices:
            if choice != prediction.answer:
                wrong = prediction.check(choice)
                assert wrong.passed is False and _sentences(prediction.explanation) in wrong.message
    else:
        wrong = prediction.check(float(prediction.answer) * 10 + 10)
        assert wrong.passed is False and _sentences(prediction.explanation) in wrong.message


def test_the_exercises_issue_10_names_exist():
    names = {e.name for e in checks.catalogue()}
    assert {
        "attention",
        "padding_mask",
        "batched_masked_attention",
        "online_softmax_update",
        "blockwise_attention",
        "softmax_backward",
        "head_offset_score",
    } <= names
