"""Lesson 01's check accepts correct encodings and names each catalogued mistake."""

import numpy as np
import pytest

from helpers import checks
from helpers.checks.lesson01 import _variant

check = checks.positional_encoding.check


def loops(n_positions, d_model):
    PE = [[0.0] * d_model for _ in range(n_positions)]
    for pos in range(n_positions):
        for i in range(0, d_model, 2):
            PE[pos][i] = np.sin(pos / 10000 ** (i / d_model))
            PE[pos][i + 1] = np.cos(pos / 10000 ** (i / d_model))
    return PE  # a list of lists is fine


def float32(n_positions, d_model):
    pos = np.arange(n_positions, dtype=np.float32)[:, None]
    i = np.arange(0, d_model, 2, dtype=np.float32)
    angles = pos / np.float32(10000) ** (i / d_model)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(n_positions, d_model)


@pytest.mark.parametrize("answer", [checks.positional_encoding.reference, loops, float32])
def test_correct_implementations_pass(answer):
    result = check(answer)
    assert result.passed is True, result.message


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(swap=True), "sin and cos are swapped"),
        (dict(exponent="i"), "exponent is off"),
        (dict(base=1000.0), "base is off"),
        (dict(halves=True), "two halves"),
        (dict(base=np.e), "e instead of 10000"),
        (dict(exponent="k"), "each cos column has its own frequency"),
        (dict(start=1), "positions start at 1"),
    ],
)
def test_each_mistake_gets_its_own_message(kwargs, words):
    result = check(lambda n, d: _variant(n, d, **kwargs))
    assert result.passed is False and words in result.message


def test_a_hard_coded_answer_fails():
    PE = checks.positional_encoding.reference(6, 8)
    assert check(lambda n, d: PE).passed is False


def test_transposed_result_is_named():
    result = check(lambda n, d: checks.positional_encoding.reference(n, d).T)
    assert result.passed is False and "transposed" in result.message


def per_column_frequency(n_positions, d_model):
    """The blog-post bug: column k uses 10000^(k/d_model), so cos columns get their own."""
    PE = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for k in range(d_model):
            angle = pos / 10000 ** (k / d_model)
            PE[pos, k] = np.sin(angle) if k % 2 == 0 else np.cos(angle)
    return PE


def integer_array(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    angles = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    PE = np.zeros_like(pos * np.arange(d_model))  # int, like pos
    PE[:, 0::2], PE[:, 1::2] = np.sin(angles), np.cos(angles)  # truncated to whole numbers
    return PE


def test_the_per_column_frequency_bug_is_named():
    for _ in range(5):  # fresh sizes every time
        result = check(per_column_frequency)
        assert result.passed is False and "own frequency" in result.message, result.message


def test_an_integer_array_is_named():
    for _ in range(5):
        result = check(integer_array)
        assert result.passed is False and "integer dtype" in result.message, result.message


def test_an_unrecognised_difference_names_the_first_entry_that_differs():
    def one_entry_off(n_positions, d_model):
        PE = checks.positional_encoding.reference(n_positions, d_model)
        PE[-1, -1] += 0.5
        return PE

    for _ in range(5):
        message = check(one_entry_off).message
        n, d = (int(x) for x in message[len("positional_encoding(") :].split(")")[0].split(","))
        expected = checks.positional_encoding.reference(n, d)[-1, -1]
        assert f"PE[{n - 1}, {d - 1}] is {expected + 0.5:.3g} in yours" in message, message


def comparison_instead_of_assignment(n_positions, d_model):
    PE = np.zeros((n_positions, d_model))  # float, as the exercise says
    for pos in range(n_positions):
        for i in range(0, d_model, 2):
            PE[pos, i] == np.sin(pos / 10000 ** (i / d_model))  # noqa: B015 ('==' for '=')
            PE[pos, i + 1] == np.cos(pos / 10000 ** (i / d_model))  # noqa: B015
    return PE


def test_an_array_left_at_zero_is_not_blamed_on_its_dtype():
    for _ in range(5):
        message = check(comparison_instead_of_assignment).message
        assert "all zeros" in message and "integer dtype" not in message, message
