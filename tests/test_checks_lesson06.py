"""Lesson 06 checks: the reference passes, each catalogued mistake gets its own message."""

import numpy as np
import pytest

from helpers.checks import lesson06

cross_attention = lesson06.cross_attention
split_heads = lesson06.split_heads
ref_cross = lesson06._reference_cross_attention


def softmax_rows(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---------------------------------------------------------------------------------------------
# cross_attention(X_q, X_kv, W_Q, W_K, W_V)


def loop_cross(X_q, X_kv, W_Q, W_K, W_V):
    K, V = X_kv @ W_K, X_kv @ W_V
    outs, weights = [], []
    for x in X_q:  # one query at a time
        q = x @ W_Q
        w = softmax_rows(np.array([q @ k for k in K]) / np.sqrt(len(q)))
        weights.append(w)
        outs.append(w @ V)
    return np.array(outs), np.array(weights)


def via_helpers(X_q, X_kv, W_Q, W_K, W_V):
    import helpers

    return helpers.scaled_dot_product_attention(X_q @ W_Q, X_kv @ W_K, X_kv @ W_V)


def einsum_float32(X_q, X_kv, W_Q, W_K, W_V):
    Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
    w = softmax_rows(np.einsum("qd,kd->qk", Q, K) / np.float32(np.sqrt(Q.shape[1])))
    return np.einsum("qk,kv->qv", w, V).astype(np.float32), w.astype(np.float32)


@pytest.mark.parametrize("answer", [ref_cross, loop_cross, via_helpers, einsum_float32])
def test_correct_cross_attention_passes(answer):
    result = cross_attention.check(answer)
    assert result.passed is True, result.message


def scaled(factor_fn, axis=-1):
    def answer(X_q, X_kv, W_Q, W_K, W_V):
        Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
        w = softmax_rows(Q @ K.T * factor_fn(Q, X_q), axis=axis)
        return w @ V, w

    return answer


CROSS_MISTAKES = [
    (lambda Xq, Xkv, WQ, WK, WV: ref_cross(Xkv, Xq, WQ, WK, WV), "roles are swapped"),
    (lambda Xq, Xkv, WQ, WK, WV: ref_cross(Xq, Xq, WQ, WK, WV), "self-attention on X_q"),
    (scaled(lambda Q, X: 1.0), "not scaled"),
    (scaled(lambda Q, X: 1 / Q.shape[1]), "divided by d_k"),
    (scaled(lambda Q, X: 1 / np.sqrt(X.shape[1])), "sqrt(d_model)"),
    (scaled(lambda Q, X: 1 / np.sqrt(Q.shape[1]), axis=0), "normalises each column"),
    (lambda *a: ref_cross(*a)[0], "only the output"),
    (lambda *a: ref_cross(*a)[1], "only the weights"),
    (lambda *a: ref_cross(*a)[::-1], "(weights, output)"),
    (lambda *a: None, "returned None"),
    (lambda *a: (ref_cross(*a)[0], ref_cross(*a)[1].T), "weights are transposed"),
    (lambda *a: (ref_cross(*a)[0].T, ref_cross(*a)[1]), "looks transposed"),
    (
        lambda Xq, Xkv, WQ, WK, WV: (
            ref_cross(Xq, Xkv, WQ, WK, WV)[1] @ (Xkv @ WK),
            ref_cross(Xq, Xkv, WQ, WK, WV)[1],
        ),
        "mixes the keys",
    ),
    (lambda *a: (2 * ref_cross(*a)[0], ref_cross(*a)[1]), "not weights @"),
]


@pytest.mark.parametrize(("answer", "words"), CROSS_MISTAKES)
def test_each_cross_attention_mistake_gets_its_own_message(answer, words):
    result = cross_attention.check(answer)
    assert result.passed is False
    assert words in result.message, result.message


def test_no_cross_attention_mistake_is_named_as_another():
    messages = [cross_attention.check(answer).message for answer, _ in CROSS_MISTAKES]
    for i, message in enumerate(messages):
        for j, (_, words) in enumerate(CROSS_MISTAKES):
            if i != j:
                assert words not in message, (CROSS_MISTAKES[i][1], message)


# ---------------------------------------------------------------------------------------------
# split_heads(X, h)


def loop_split(X, h):
    d_k = X.shape[1] // h
    return np.stack([X[:, j * d_k : (j + 1) * d_k] for j in range(h)])


@pytest.mark.parametrize(
    "answer",
    [
        lesson06._reference_split_heads,
        loop_split,
        lambda X, h: np.array(np.split(X, h, axis=1)),
        lambda X, h: np.swapaxes(X.reshape(X.shape[0], h, -1), 0, 1),
    ],
)
def test_correct_split_heads_passes(answer):
    result = split_heads.check(answer)
    assert result.passed is True, result.message


def test_the_course_helper_passes_too():
    import helpers

    assert split_heads.check(helpers.split_heads).passed is True


SPLIT_MISTAKES = [
    (lambda X, h: X.reshape(h, X.shape[0], X.shape[1] // h), "without a transpose"),
    (lambda X, h: X.reshape(X.shape[0], X.shape[1] // h, h).transpose(2, 0, 1), "stride"),
    (lambda X, h: np.array(np.split(X, h, axis=0)), "block of rows"),
    (lambda X, h: X.reshape(X.shape[0], h, X.shape[1] // h), "head axis is not in front"),
    (lambda X, h: loop_split(X, h).transpose(0, 2, 1), "each head is transposed"),
    (lambda X, h: None, "returned None"),
    (lambda X, h: loop_split(X, h)[::-1], "head j must be X[:, j*d_k:(j+1)*d_k]"),
]


@pytest.mark.parametrize(("answer", "words"), SPLIT_MISTAKES)
def test_each_split_heads_mistake_gets_its_own_message(answer, words):
    result = split_heads.check(answer)
    assert result.passed is False
    assert words in result.message, result.message


def test_no_split_heads_mistake_is_named_as_another():
    messages = [split_heads.check(answer).message for answer, _ in SPLIT_MISTAKES]
    for i, message in enumerate(messages):
        for j, (_, words) in enumerate(SPLIT_MISTAKES):
            if i != j:
                assert words not in message, (SPLIT_MISTAKES[i][1], message)


# ---------------------------------------------------------------------------------------------
# Both exercises: stubs, exceptions, hard-coded answers, hints and solutions


def test_a_stub_is_not_attempted_yet():
    def stub(*args):
        raise NotImplementedError("replace this line with your answer")

    assert cross_attention.check(stub).passed is None
    assert split_heads.check(stub).passed is None


def test_an_exception_in_the_answer_is_reported_with_its_line():
    def broken(X, h):
        n, d_model, extra = X.shape  # X is (n, d_model): only two sizes to unpack
        return X

    result = split_heads.check(broken)
    assert result.passed is False
    assert "ValueError" in result.message and "n, d_model, extra = X.shape" in result.message


def test_a_hard_coded_answer_fails():
    rng = np.random.default_rng(0)
    fixed = rng.standard_normal((2, 6, 4))
    assert split_heads.check(lambda X, h: fixed).passed is False


def test_solutions_and_hints_are_shown():
    assert "def cross_attention(" in cross_attention.solution().text
    assert "X_kv @ W_K" in cross_attention.solution().text
    assert "def split_heads(" in split_heads.solution().text
    assert "transpose" in split_heads.hint(3).text
