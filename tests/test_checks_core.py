"""The exercise-check machinery: never raises, times out, reports the learner's line."""

import re

import numpy as np
import pytest
from support.learner_code import as_learner_code

from helpers import checks
from helpers.checks import compare, exercise, messages, mistakes, record, results, timelimit

ex = checks.positional_encoding
right_answer = as_learner_code(ex)  # the shown solution, as notebook code


def test_stub_is_not_attempted_yet():
    def positional_encoding(n_positions, d_model):
        raise NotImplementedError("replace this line with your answer")

    result = ex.check(positional_encoding)
    assert result.passed is None and "Not attempted yet" in str(result)


def test_an_exception_in_the_answer_is_reported_with_its_line():
    def positional_encoding(n_positions, d_model):
        angles = np.zeros(n_positions)
        return angles.reshape(n_positions + 1, d_model)  # fails for every size the check picks

    result = ex.check(positional_encoding)
    assert result.passed is False
    assert "ValueError" in result.message
    assert "angles.reshape(n_positions + 1, d_model)" in result.message


def test_an_error_raised_inside_numpy_points_at_the_learners_line():
    def positional_encoding(n_positions, d_model):
        PE = np.zeros((n_positions, d_model))
        return PE.sum(axis=2)  # no axis 2 in a 2-D array

    result = ex.check(positional_encoding)
    assert result.passed is False and "AxisError" in result.message
    assert "PE.sum(axis=2)" in result.message and "_methods" not in result.message


def test_an_endless_loop_hits_the_time_limit(monkeypatch):
    monkeypatch.setattr(timelimit, "TIME_LIMIT_SECONDS", 0.3)

    def positional_encoding(n_positions, d_model):
        while True:
            pass

    result = ex.check(positional_encoding)
    assert result.passed is False and "did not finish within 0.3 s" in result.message


def test_the_time_limit_also_works_outside_the_main_thread(monkeypatch):
    import threading

    monkeypatch.setattr(timelimit, "TIME_LIMIT_SECONDS", 0.3)
    results = []

    def positional_encoding(n_positions, d_model):
        import time

        time.sleep(2)

    worker = threading.Thread(target=lambda: results.append(ex.check(positional_encoding)))
    worker.start()
    worker.join(5)
    assert results and results[0].passed is False and "did not finish" in results[0].message


def transposed(n_positions, d_model):
    """A positional_encoding whose result is transposed. The check draws a random first case;
    a square one cannot show a transposition, so it is answered right there, and the check goes
    on to (1, 2)."""
    if n_positions != d_model:
        return np.zeros((d_model, n_positions))
    angles = np.arange(n_positions)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    return np.stack([np.sin(angles), np.cos(angles)], axis=2).reshape(n_positions, d_model)


def test_wrong_types_are_named():
    assert "returned None" in ex.check(lambda n, d: None).message
    assert "tuple of 2" in ex.check(lambda n, d: (1, 2)).message
    assert "not an array of numbers" in ex.check(lambda n, d: "PE").message
    assert "pass the function itself" in ex.check(np.zeros((3, 4))).message

    assert "transposed" in ex.check(transposed).message


def test_an_answer_that_modifies_its_input_cannot_corrupt_the_check():
    calls = []

    def grade(call):
        x = np.ones(3)
        call(x)
        calls.append(x.copy())
        return "fine"

    def destructive(x):
        x[:] = 0

    assert exercise.Exercise("f", "f(x)", grade, lambda x: x, ["h"]).check(destructive).passed
    assert np.array_equal(calls[0], np.ones(3))


def test_a_bug_in_a_checker_is_not_blamed_on_the_learner():
    def grade(call):
        raise KeyError("oops")

    result = exercise.Exercise("f", "f()", grade, lambda: 0, ["h"]).check(lambda: 0)
    assert result.passed is False and "checker itself failed" in result.message


def test_results_render_as_coloured_html_and_plain_text():
    good = results.CheckResult(True, "fine <b>")
    assert "Correct" in good._repr_html_() and "&lt;b&gt;" in good._repr_html_()
    assert str(good).startswith("✓ Correct")
    assert str(results.CheckResult(False, "x")).startswith("✗ Not yet")


def test_hints_progress_and_clamp_and_solution_is_code():
    assert "Hint 1 of 3" in repr(ex.hint(1)) and "hint(2)" in repr(ex.hint(1))
    assert "Hint 3 of 3" in repr(ex.hint(99)) and "Hint 1 of 3" in repr(ex.hint(0))
    solution = repr(ex.solution())
    assert "def positional_encoding(n_positions, d_model)" in solution and "np.sin" in solution


def test_results_show_the_check_and_cross_symbols_in_html_too():
    # Lesson 00 promises "✓ Correct, or ✗ what is wrong".
    assert "✓ Correct" in results.CheckResult(True, "fine")._repr_html_()
    assert "✗ Not yet" in results.CheckResult(False, "x")._repr_html_()


def test_numpy_warnings_in_the_answer_are_not_printed():
    import warnings

    def softmax(z):
        return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)  # overflows on large scores

    before = np.geterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = checks.softmax.check(softmax)
    assert result.passed is False and "overflows" in result.message
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], caught
    assert np.geterr() == before  # the learner's own cells still warn


def test_an_exception_shows_the_actual_arguments():
    def positional_encoding(n_positions, d_model):
        return np.zeros(n_positions)[d_model + n_positions]  # always out of bounds

    message = ex.check(positional_encoding).message
    assert "IndexError" in message and "called with n_positions=" in message, message
    n = int(message.split("n_positions=")[1].split(",")[0])
    assert f"index {n + int(message.split('d_model=')[1].split()[0])} is out of bounds" in message

    def attention(Q, K, V):
        return Q @ V  # (n, d_k) @ (n, d_v): mismatched

    message = checks.attention.check(attention).message
    assert "called with Q of shape (" in message and ", V of shape (" in message, message


def test_a_call_to_an_unfinished_helper_of_the_learners_is_named():
    def my_angles(n):
        raise NotImplementedError

    def positional_encoding(n_positions, d_model):
        return np.sin(my_angles(n_positions))

    result = ex.check(positional_encoding)
    assert result.passed is False
    assert "positional_encoding calls my_angles" in result.message, result.message


def test_unpack_pair_names_the_usual_slips_by_their_shapes():
    output, weights = np.zeros((3, 2)), np.zeros((3, 5))
    assert compare.unpack_pair((output, weights), "f(x)", (3, 2), (3, 5)) == (output, weights)
    for value, words in [
        (None, "returned None"),
        (weights, "only the weights"),
        ((output, weights, output), "returned 3 values"),
        ((weights, output), "returned (weights, output)"),
    ]:
        with pytest.raises(mistakes.Mistake, match=re.escape(words)):
            compare.unpack_pair(value, "f(x)", (3, 2), (3, 5))
    # Equal shapes cannot tell the order: the values come back for the exercise to compare.
    square = np.ones((3, 3))
    assert compare.unpack_pair((square, output), "f(x)", (3, 3), (3, 3))[0] is square


# ----------------------------------------------------------------------------------------------
# Issue 11: the checks hold against any answer.


@pytest.fixture
def short_limits(monkeypatch):
    monkeypatch.setattr(timelimit, "TIME_LIMIT_SECONDS", 0.3)
    monkeypatch.setattr(timelimit, "CHECK_TIME_LIMIT_SECONDS", 1.2)


def _no_timer_left():
    import signal
    import sys

    return signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and sys.gettrace() is None


def test_a_complex_answer_is_rejected_with_its_own_mistake_id():
    def positional_encoding(n_positions, d_model):
        return right_answer(n_positions, d_model) + 5j

    result = ex.check(positional_encoding)
    assert result.passed is False and result.mistake == "positional_encoding.complex"
    assert "complex numbers" in result.message
    with pytest.raises(mistakes.Mistake) as caught:
        compare.as_result_array([1 + 2j, 3], "f(x)", (2,))
    assert caught.value.id == "complex"
    with pytest.raises(mistakes.Mistake) as caught:
        compare.compare(np.ones(3) + 0j, np.ones(3), {}, "differs.")
    assert caught.value.id == "complex"
    assert not compare.close(np.ones(3) + 1e-9j, np.ones(3))


@pytest.mark.parametrize("raised", [SystemExit, SystemExit(3), KeyboardInterrupt, GeneratorExit])
def test_system_exit_and_other_base_exceptions_become_results(raised):
    def positional_encoding(n_positions, d_model):
        raise raised

    result = ex.check(positional_encoding)
    assert result.passed is False and result.mistake == "positional_encoding.raised"
    name = raised.__name__ if isinstance(raised, type) else type(raised).__name__
    assert f"raised {name}" in result.message


def test_exit_in_an_answer_does_not_escape():
    def positional_encoding(n_positions, d_model):
        exit()

    result = ex.check(positional_encoding)
    assert result.passed is False and "SystemExit" in result.message


def test_a_loop_that_catches_exception_around_a_sleep_is_stopped(short_limits):
    import time

    def positional_encoding(n_positions, d_model):
        while True:
            try:
                time.sleep(1)
            except Exception:
                pass

    start = time.perf_counter()
    result = ex.check(positional_encoding)
    assert time.perf_counter() - start < 1.5
    assert result.passed is False and result.mistake == "positional_encoding.timeout"
    assert _no_timer_left()


def test_even_a_bare_except_loop_is_stopped(short_limits):
    import time

    def positional_encoding(n_positions, d_model):
        while True:
            try:
                time.sleep(1)
            except:  # noqa: E722 (the point of the test)
                pass

    start = time.perf_counter()
    result = ex.check(positional_encoding)
    assert time.perf_counter() - start < 1.5
    assert result.mistake == "positional_encoding.timeout" and _no_timer_left()


def test_a_sleeping_array_conversion_runs_inside_the_limit(short_limits):
    import time

    class Slow:
        def __array__(self, dtype=None, copy=None):
            time.sleep(30)

    start = time.perf_counter()
    result = ex.check(lambda n, d: Slow())
    assert time.perf_counter() - start < 1.5
    assert result.passed is False and result.mistake == "positional_encoding.timeout"


def test_a_slow_object_anywhere_is_stopped_by_the_whole_check_limit(short_limits):
    import time

    class SlowFloat:
        def __float__(self):
            time.sleep(30)

    start = time.perf_counter()
    result = ex.check(lambda n, d: [[SlowFloat()] * d] * n)
    assert time.perf_counter() - start < 2.0
    assert result.passed is False and result.mistake == "positional_encoding.timeout"
    assert _no_timer_left()


def test_a_long_call_into_compiled_code_is_named_when_it_returns(monkeypatch):
    monkeypatch.setattr(timelimit, "TIME_LIMIT_SECONDS", 0.05)
    monkeypatch.setattr(messages, "LATE_SECONDS", 0.2)

    def positional_encoding(n_positions, d_model):
        return sum(range(60_000_000))  # one C call: no signal handler runs until it returns

    result = ex.check(positional_encoding)
    assert result.mistake == "positional_encoding.timeout"
    assert "cannot be interrupted inside the notebook" in result.message
    assert "make grade" in result.message


def test_seterr_raise_in_an_earlier_cell_does_not_break_the_checks_own_math():
    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    before = np.geterr()
    np.seterr(all="raise")
    try:
        assert checks.softmax.check(softmax).passed is True
        assert np.geterr()["over"] == "raise"  # the learner's own setting stays theirs
    finally:
        np.seterr(**before)


def test_a_warnings_filter_set_to_error_does_not_break_the_checks():
    import warnings

    def softmax(z):
        return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = checks.softmax.check(softmax)
    assert result.passed is False and "checker itself failed" not in result.message


def test_an_exception_whose_str_raises_is_reported_not_raised():
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no message for you")

    def positional_encoding(n_positions, d_model):
        raise Unprintable()

    result = ex.check(positional_encoding)
    assert result.passed is False and result.mistake == "positional_encoding.raised"
    assert "Unprintable" in result.message and "cannot be shown" in result.message
    assert "checker itself" not in result.message


def test_rng_state_and_print_options_set_in_an_answer_are_undone():
    import random

    def positional_encoding(n_positions, d_model):
        np.random.seed(0)
        random.seed(0)
        np.set_printoptions(precision=1, threshold=5)
        return right_answer(n_positions, d_model)

    np.random.seed(123)
    random.seed(123)
    expected = (np.random.random(), random.random())
    np.random.seed(123)
    random.seed(123)
    options = np.get_printoptions()
    assert ex.check(positional_encoding).passed is True
    assert (np.random.random(), random.random()) == expected
    assert np.get_printoptions() == options


def test_a_prediction_survives_hostile_guesses():
    prediction = next(p for p in checks.catalogue() if isinstance(p, checks.Prediction))

    class Hostile(str):
        def strip(self, *args):
            raise SystemExit

        def __str__(self):
            raise ValueError

    assert prediction.check(Hostile("x")).passed is False


def test_every_check_appends_one_json_line_when_grading(tmp_path, monkeypatch):
    import json

    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(record.LOG_VARIABLE, str(log))
    ex.check(transposed)
    ex.check(right_answer)
    prediction = next(p for p in checks.catalogue() if isinstance(p, checks.Prediction))
    prediction.check(None)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # While grading, a check notes what it was given and writes no verdict: the grader
    # computes every verdict in its own process (course_grader.isolation.remote).
    assert [(r["exercise"], r["passed"], r["mistake"]) for r in records] == [
        ("positional_encoding", None, None),
        ("positional_encoding", None, None),
        (prediction.name, None, None),
    ]
    assert {r["lesson"] for r in records[:2]} == {"01"} and records[0]["phase"] == "notebook"
    assert record.answers["positional_encoding"] is right_answer
    assert record.answers[prediction.name] is None


def test_an_array_of_a_number_beyond_any_float_is_named_not_a_checker_failure():
    """10**400 (an int no float holds) where an array is expected: the learner's mistake."""
    with pytest.raises(mistakes.Mistake) as named:
        compare.as_result_array(10**400, "f(x)", ())
    assert named.value.id == "nan_or_inf" and "too large for a float" in str(named.value)
