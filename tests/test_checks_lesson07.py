"""Lesson 07's check accepts every correct byte count and names each catalogued mistake."""

import numpy as np
import pytest

from helpers import checks
from helpers.blockwise import score_matrix_bytes as helpers_score_matrix_bytes

check = checks.score_matrix_bytes.check


def itemsize(dtype):
    return np.dtype(dtype).itemsize


def numpy_int(n, h, batch, dtype):
    return np.int64(batch) * h * n**2 * np.empty(0, dtype).itemsize  # a NumPy integer


def whole_float(n, h, batch, dtype):
    return float(batch * h * n * n * itemsize(dtype))  # exact for these sizes


@pytest.mark.parametrize(
    "answer",
    [checks.score_matrix_bytes.reference, helpers_score_matrix_bytes, numpy_int, whole_float],
)
def test_correct_implementations_pass(answer):
    result = check(answer)
    assert result.passed is True, result.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda n, h, b, dt: b * n * n * itemsize(dt), "forgot the heads"),
        (lambda n, h, b, dt: h * n * n * itemsize(dt), "forgot the batch"),
        (lambda n, h, b, dt: n * n * itemsize(dt), "forgot both the heads and the batch"),
        (lambda n, h, b, dt: b * h * n * itemsize(dt), "n squared"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) * 8, "bits, not bytes"),
        (lambda n, h, b, dt: b * h * n * n * 4, "not always 4"),
        (lambda n, h, b, dt: b * h * n * n * 8, "not always 8"),
        (lambda n, h, b, dt: b * h * n * n, "counted numbers, not bytes"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 2**20, "MiB"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 1e6, "MB"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 2**30, "looks like GiB"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 1e9, "looks like GB"),
    ],
)
def test_each_mistake_gets_its_own_message(answer, words):
    result = check(answer)
    assert result.passed is False and words in result.message, result.message


def test_a_hard_coded_answer_fails():
    assert check(lambda n, h, b, dt: 40_000_000_000).passed is False


def test_wrong_return_types_are_explained():
    assert "return` statement" in check(lambda n, h, b, dt: None).message
    assert "one number of bytes" in check(lambda n, h, b, dt: [n, h]).message
    assert "whole number" in check(lambda n, h, b, dt: b * h * n * n * itemsize(dt) + 0.5).message


def test_a_stub_is_not_attempted_yet():
    def stub(n, h, batch, dtype):
        raise NotImplementedError("replace this line with your answer")

    assert check(stub).passed is None


def test_a_crash_is_reported_with_its_line():
    result = check(lambda n, h, b, dt: dt.itemsize * n)  # np.float32 (a type) has no itemsize
    assert result.passed is False and "raised" in result.message and "line" in result.message


def test_reference_agrees_with_helpers():
    for args in [(1, 1, 1, np.float32), (100_000, 8, 4, "float16"), (7, 3, 2, np.float64)]:
        assert checks.score_matrix_bytes.reference(*args) == helpers_score_matrix_bytes(*args)


def test_mistakes_stay_distinct_on_every_case():
    """No two catalogued mistakes (or a mistake and the answer) coincide on the check's sizes."""
    from helpers.checks.lesson07 import _cases, _mistakes, _reference

    for seed in range(200):
        for n, h, batch, dtype in _cases(np.random.default_rng(seed)):
            if (n, h, batch) == (100_000, 1, 1):
                continue  # the long-context case checks the number itself, not the mistakes
            right = _reference(n, h, batch, dtype)
            values = [v for v, _ in _mistakes(n, h, batch, itemsize(dtype)) if v != right]
            assert len(set(values)) == len(values), (n, h, batch, dtype)
