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
