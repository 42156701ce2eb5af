"""The lesson 03 check: the reference passes, every catalogued mistake gets its own message."""

from __future__ import annotations

import re

import numpy as np
import pytest
from check_tables import assert_mistakes_distinct

from helpers import checks, softmax

ex = checks.scaled_scores


def _loops(Q, K):
    n_q, d_k = Q.shape
    out = np.zeros((n_q, K.shape[0]))
    for i in range(n_q):
        for j in range(K.shape[0]):
            out[i, j] = sum(Q[i, t] * K[j, t] for t in range(d_k)) / d_k**0.5
    return out


CORRECT = {
    "reference": ex.reference,
    "loops": _loops,
    "einsum": lambda Q, K: np.einsum("id,jd->ij", Q, K) / np.sqrt(K.shape[1]),
    "float32": lambda Q, K: (
        (Q.astype(np.float32) @ K.astype(np.float32).T) / np.float32(np.sqrt(Q.shape[1]))
    ),
    "list of lists": lambda Q, K: (Q @ K.T / np.sqrt(Q.shape[1])).tolist(),
}

MISTAKES = {
    "no scale": (lambda Q, K: Q @ K.T, "without the scale"),
    "divide by d_k": (lambda Q, K: Q @ K.T / Q.shape[1], "you divided by d_k ="),
    "multiply": (lambda Q, K: Q @ K.T * np.sqrt(Q.shape[1]), "multiplied by √d_k"),
    "hard-coded sqrt(4)": (lambda Q, K: Q @ K.T / 2, "running example's √d_k"),
    "softmax of scaled": (
        lambda Q, K: softmax(Q @ K.T / np.sqrt(Q.shape[1])),
        r"these are softmax weights \(each row sums to 1\), not scores",
    ),
    "softmax of raw": (lambda Q, K: softmax(Q @ K.T), "softmax weights of the unscaled scores"),
    "divide by n_q": (
        lambda Q, K: Q @ K.T / Q.shape[0],
        r"you divided by \d+, from n_q, the number of queries",
    ),
    "divide by n_k": (
        lambda Q, K: Q @ K.T / len(K),
        r"you divided by \d+, from n_k, the number of keys",
    ),
    "divide by sqrt(n_k)": (
        lambda Q, K: Q @ K.T / np.sqrt(len(K)),
        r"you divided by √\d+, from n_k",
    ),
    "K Q^T": (lambda Q, K: K @ Q.T / np.sqrt(Q.shape[1]), "that is K Qᵀ"),
    "None": (lambda Q, K: None, "returned None"),
    "hard-coded": (lambda Q, K: np.zeros((6, 6)), r"returned shape \(6, 6\)"),
}


@pytest.mark.parametrize("name", CORRECT)
def test_correct_answers_pass(name):
    for _ in range(5):  # fresh sizes every time
        result = ex.check(CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", MISTAKES)
def test_each_mistake_fails_with_its_own_message(name):
    answer, expected_text = MISTAKES[name]
    for _ in range(5):
        result = ex.check(answer)
        assert result.passed is False
        assert re.search(expected_text, result.message), result.message


def test_mistake_messages_are_distinct():
    assert_mistakes_distinct(ex, MISTAKES)


def test_transposed_square_case_is_named():
    # n_q == n_k only in the third case; an answer that is right until then must be caught there.
    def transposed_when_square(Q, K):
        if Q.shape[0] == K.shape[0]:
            return K @ Q.T / np.sqrt(Q.shape[1])
        return Q @ K.T / np.sqrt(Q.shape[1])

    result = ex.check(transposed_when_square)
    assert result.passed is False
    assert "you computed K Qᵀ" in result.message


def test_stub_is_not_attempted():
    def stub(Q, K):
        raise NotImplementedError("replace this line with your answer")

    result = ex.check(stub)
    assert result.passed is None
    assert "not attempted" in result.status.lower()


def test_an_exception_is_reported_with_its_line():
    def broken(Q, K):
        d_k = Q.shape[-1]
        return Q @ K / np.sqrt(d_k)  # forgot the transpose: shapes do not match

    result = ex.check(broken)
    assert result.passed is False
    assert "raised ValueError" in result.message
    assert "return Q @ K / np.sqrt(d_k)" in result.message
    assert "at line" in result.message


def test_not_a_function():
    result = ex.check(np.zeros((2, 2)))
    assert result.passed is False and "pass the function itself" in result.message


def test_hint_and_solution():
    assert "Q @ K.T" in str(ex.hint(3))
    assert "def scaled_scores(Q, K)" in str(ex.solution())


def test_sizes_keep_every_divisor_distinct():
    from helpers.checks.lesson03 import _divisors, _sizes

    rng = np.random.default_rng(0)
    for square in (False, True) * 50:
        n_q, n_k, d_k = _sizes(rng, square=square)
        assert (n_q == n_k) == square
        assert d_k != 4
        divisors = np.sort(_divisors(n_q, n_k, d_k))
        assert np.all(np.diff(divisors) > 0)
