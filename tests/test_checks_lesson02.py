"""The lesson 02 checks: references pass, every catalogued mistake gets its own message."""

from __future__ import annotations

import re

import numpy as np
import pytest
from check_tables import assert_mistakes_distinct

from helpers import checks, split_heads

qkv = checks.project_qkv
heads = checks.head_slices


# ---------------------------------------------------------------------------------------------
# project_qkv


def _qkv_loops(X, W_Q, W_K, W_V):
    out = []
    for W in (W_Q, W_K, W_V):
        M = np.zeros((X.shape[0], W.shape[1]))
        for i in range(X.shape[0]):
            for j in range(W.shape[1]):
                M[i, j] = sum(X[i, t] * W[t, j] for t in range(X.shape[1]))
        out.append(M)
    return out  # a list of three is fine too


QKV_CORRECT = {
    "reference": qkv.reference,
    "loops": _qkv_loops,
    "einsum": lambda X, *W: tuple(np.einsum("nd,dk->nk", X, w) for w in W),
    "float32": lambda X, *W: tuple(X.astype(np.float32) @ w.astype(np.float32) for w in W),
}

QKV_MISTAKES = {
    "X itself": (lambda X, W_Q, W_K, W_V: (X, X, X), r"your Q is X itself"),
    "swapped Q and K": (
        lambda X, W_Q, W_K, W_V: (X @ W_K, X @ W_Q, X @ W_V),
        r"your Q equals X @ W_K, so the weights are swapped",
    ),
    "W_Q for everything": (
        lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_Q, X @ W_Q),
        r"your K equals X @ W_Q, so the weights are swapped",
    ),
    "V from W_K": (
        lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K, X @ W_K),
        r"your V equals X @ W_K",
    ),
    "W transposed": (
        lambda X, W_Q, W_K, W_V: (X @ W_Q.T, X @ W_K.T, X @ W_V.T),
        r"your Q equals X @ W_Qᵀ",
    ),
    "transposed result": (
        lambda X, W_Q, W_K, W_V: ((X @ W_Q).T, (X @ W_K).T, (X @ W_V).T),
        r"your Q has shape \(\d+, \d+\), expected \(\d+, \d+\): it looks transposed",
    ),
    "None": (lambda X, W_Q, W_K, W_V: None, r"returned None; did you forget `return Q, K, V`"),
    "one array": (lambda X, W_Q, W_K, W_V: X @ W_Q, r"returned one array of shape"),
    "two arrays": (lambda X, W_Q, W_K, W_V: (X @ W_Q, X @ W_K), r"returned a tuple of 2"),
    "K is None": (lambda X, W_Q, W_K, W_V: (X @ W_Q, None, X @ W_V), r"your K is None"),
}


@pytest.mark.parametrize("name", QKV_CORRECT)
def test_project_qkv_correct_answers_pass(name):
    for _ in range(3):
        result = qkv.check(QKV_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", QKV_MISTAKES)
def test_project_qkv_each_mistake_fails_with_its_own_message(name):
    answer, pattern = QKV_MISTAKES[name]
    for _ in range(3):
        result = qkv.check(answer)
        assert result.passed is False
        assert re.search(pattern, result.message), result.message


def test_project_qkv_mistake_messages_are_distinct():
    assert_mistakes_distinct(qkv, QKV_MISTAKES)


def test_project_qkv_stub_and_exception():
    def stub(X, W_Q, W_K, W_V):
        raise NotImplementedError

    assert qkv.check(stub).passed is None

    def broken(X, W_Q, W_K, W_V):
        Q = X @ W_Q
        K = W_K @ X  # wrong order: shapes do not line up
        return Q, K, X @ W_V

    result = qkv.check(broken)
    assert result.passed is False
    assert "raised ValueError" in result.message and "K = W_K @ X" in result.message
    assert "at line" in result.message


def test_project_qkv_hints_and_solution():
    assert "X @ W_Q" in str(qkv.hint(3))
    assert "def project_qkv(X, W_Q, W_K, W_V)" in str(qkv.solution())


# ---------------------------------------------------------------------------------------------
# head_slices


HEADS_CORRECT = {
    "reference": heads.reference,
    "reshape + transpose": lambda M, h: M.reshape(M.shape[0], h, -1).transpose(1, 0, 2),
    "helpers.split_heads": split_heads,
    "np.split": lambda M, h: np.array(np.split(M, h, axis=1)),
    "list of blocks": lambda M, h: [b for b in np.split(M, h, axis=1)],
}

HEADS_MISTAKES = {
    "split rows": (lambda M, h: np.array(np.split(M, h, axis=0)), r"you split the rows"),
    "reshape without transpose": (
        lambda M, h: M.reshape(h, M.shape[0], -1),
        r"you reshaped M straight to \(h, n, d_k\)",
    ),
    "no head axis move": (
        lambda M, h: M.reshape(M.shape[0], h, -1),
        r"did not move the head axis to the front",
    ),
    "block transposed": (
        lambda M, h: M.reshape(M.shape[0], h, -1).transpose(1, 2, 0),
        r"each head's block is transposed",
    ),
    "interleaved": (
        lambda M, h: M.reshape(M.shape[0], -1, h).transpose(2, 0, 1),
        r"head j got every h-th column",
    ),
    "h hard-coded": (
        lambda M, h: M.reshape(M.shape[0], 2, -1).transpose(1, 0, 2),
        r"h = 2 is hard-coded",
    ),
    "d_k hard-coded": (
        lambda M, h: M.reshape(M.shape[0], -1, 4).transpose(1, 0, 2),
        r"d_k = 4 is hard-coded",
    ),
    "None": (lambda M, h: None, r"returned None"),
    "ragged blocks": (
        lambda M, h: [M[:, :1], M[:, 1:]],
        r"returned a list, which is not an array of numbers",
    ),
}


@pytest.mark.parametrize("name", HEADS_CORRECT)
def test_head_slices_correct_answers_pass(name):
    for _ in range(5):
        result = heads.check(HEADS_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", HEADS_MISTAKES)
def test_head_slices_each_mistake_fails_with_its_own_message(name):
    answer, pattern = HEADS_MISTAKES[name]
    for _ in range(5):
        result = heads.check(answer)
        assert result.passed is False
        assert re.search(pattern, result.message), result.message


def test_head_slices_mistake_messages_are_distinct():
    assert_mistakes_distinct(heads, HEADS_MISTAKES)


def test_head_slices_stub_and_exception():
    def stub(M, h):
        raise NotImplementedError

    assert heads.check(stub).passed is None

    def broken(M, h):
        d_k = M.shape[1] / h  # a float: reshape refuses it
        return M.reshape(M.shape[0], h, d_k).transpose(1, 0, 2)

    result = heads.check(broken)
    assert result.passed is False
    assert "raised TypeError" in result.message and "at line" in result.message
    assert "M.reshape(M.shape[0], h, d_k)" in result.message


def test_head_slices_does_not_let_a_hard_coded_answer_pass():
    M = np.arange(48.0).reshape(6, 8)
    fixed = heads.reference(M, 2)
    result = heads.check(lambda M, h: fixed)
    assert result.passed is False
