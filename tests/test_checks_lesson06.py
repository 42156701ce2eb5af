"""Lesson 06 checks: the reference passes, each catalogued mistake gets its own message."""

import numpy as np
import pytest

import helpers
from helpers.checks import lesson06

cross_attention = lesson06.cross_attention
multi_head_attention = lesson06.multi_head_attention
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
# multi_head_attention(X, W_Q, W_K, W_V, W_O)


def mha_batched(X, W_Q, W_K, W_V, W_O):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (h, n, d_k): broadcast over the head axis
    A = softmax_rows(Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1]))  # (h, n, n)
    heads = A @ V  # (h, n, d_v)
    concat = heads.transpose(1, 0, 2).reshape(X.shape[0], -1)  # (n, h * d_v)
    return concat @ W_O, A


def mha_per_head_blocks_of_W_O(X, W_Q, W_K, W_V, W_O):
    """concat @ W_O == sum_j head_j @ (head j's rows of W_O)."""
    out, weights = 0.0, []
    d_v = W_V.shape[-1]
    for j in range(len(W_Q)):
        o, w = ref_cross(X, X, W_Q[j], W_K[j], W_V[j])
        out = out + o @ W_O[j * d_v : (j + 1) * d_v]
        weights.append(w)
    return out, np.array(weights)


def mha_float32(X, W_Q, W_K, W_V, W_O):
    out, A = mha_batched(*(np.asarray(a, np.float32) for a in (X, W_Q, W_K, W_V, W_O)))
    return out.astype(np.float32), A.astype(np.float32)


@pytest.mark.parametrize(
    "answer",
    [
        lesson06._reference_multi_head_attention,
        mha_batched,
        mha_per_head_blocks_of_W_O,
        mha_float32,
        lambda X, W_Q, W_K, W_V, W_O: helpers.multi_head_attention(X, W_Q, W_K, W_V, W_O),
    ],
)
def test_correct_multi_head_attention_passes(answer):
    result = multi_head_attention.check(answer)
    assert result.passed is True, result.message


def test_the_shown_solution_agrees_with_the_course_helper():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 8))
    W = helpers.seeded_projections(8, n_heads=2, seed=0)
    got = lesson06._reference_multi_head_attention(X, **W)
    want = helpers.multi_head_attention(X, **W)
    assert all(np.allclose(a, b) for a, b in zip(got, want))


def _mha_parts(X, W_Q, W_K, W_V, shared=False, factor=None):
    """Each head's outputs and weights, as lists: the pieces the wrong answers combine."""
    heads, weights = [], []
    for j in range(len(W_Q)):
        k = 0 if shared else j
        Q, K, V = X @ W_Q[k], X @ W_K[k], X @ W_V[k]
        A = softmax_rows(Q @ K.T * (factor(Q, X) if factor else 1 / np.sqrt(Q.shape[1])))
        heads.append(A @ V)
        weights.append(A)
    return heads, weights


def mha_wrong(combine=None, **parts):
    def answer(X, W_Q, W_K, W_V, W_O):
        heads, weights = _mha_parts(X, W_Q, W_K, W_V, **parts)
        if combine is None:
            return np.concatenate(heads, axis=1) @ W_O, np.stack(weights)
        return combine(heads, weights, W_O)

    return answer


MHA_MISTAKES = [
    (mha_wrong(lambda H, A, W_O: (np.concatenate(H, axis=1), np.stack(A))), "you forgot W_O"),
    (mha_wrong(lambda H, A, W_O: (np.concatenate(H[::-1], axis=1) @ W_O, np.stack(A))),
     "wrong order"),
    (mha_wrong(lambda H, A, W_O: (np.stack(H).reshape(len(H[0]), -1) @ W_O, np.stack(A))),
     "straight to (n, h * d_v)"),
    (mha_wrong(lambda H, A, W_O: (np.concatenate(H, axis=0), np.stack(A))), "as extra rows"),
    (mha_wrong(lambda H, A, W_O: (np.mean(H, axis=0), np.stack(A))), "did you average"),
    (mha_wrong(lambda H, A, W_O: (
        sum(h @ W_O[j * len(h[0]) : (j + 1) * len(h[0])] for j, h in enumerate(H)) / len(H),
        np.stack(A))), "averaged the heads' contributions"),
    (mha_wrong(lambda H, A, W_O: (np.concatenate(H, axis=1) @ W_O, np.mean(A, axis=0))),
     "average over the heads"),
    (mha_wrong(lambda H, A, W_O: (np.concatenate(H, axis=1) @ W_O, A[0])), "weights have shape"),
    (mha_wrong(shared=True), "same weights"),
    (mha_wrong(factor=lambda Q, X: 1.0), "not scaled"),
    (mha_wrong(factor=lambda Q, X: 1 / np.sqrt(X.shape[1])), "sqrt(d_model)"),
    (lambda *a: None, "returned None"),
    (lambda *a: lesson06._reference_multi_head_attention(*a)[0], "only the output"),
    (lambda *a: lesson06._reference_multi_head_attention(*a)[1], "only the weights"),
    (lambda *a: lesson06._reference_multi_head_attention(*a)[::-1], "(weights, output)"),
    (lambda *a: (2 * lesson06._reference_multi_head_attention(*a)[0],
                 lesson06._reference_multi_head_attention(*a)[1]), "output is not concat"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "words"), MHA_MISTAKES)
def test_each_multi_head_attention_mistake_gets_its_own_message(answer, words):
    result = multi_head_attention.check(answer)
    assert result.passed is False
    assert words in result.message, result.message


def test_no_multi_head_attention_mistake_is_named_as_another():
    messages = [multi_head_attention.check(answer).message for answer, _ in MHA_MISTAKES]
    for i, message in enumerate(messages):
        for j, (_, words) in enumerate(MHA_MISTAKES):
            if i != j:
                assert words not in message, (MHA_MISTAKES[i][1], message)


# ---------------------------------------------------------------------------------------------
# Both exercises: stubs, exceptions, hard-coded answers, hints and solutions


def test_a_stub_is_not_attempted_yet():
    def stub(*args):
        raise NotImplementedError("replace this line with your answer")

    assert cross_attention.check(stub).passed is None
    assert multi_head_attention.check(stub).passed is None


def test_an_exception_in_the_answer_is_reported_with_its_line():
    def broken(X, W_Q, W_K, W_V, W_O):
        h, d_model = W_Q.shape  # W_Q is (h, d_model, d_k): three sizes to unpack
        return X, W_Q

    result = multi_head_attention.check(broken)
    assert result.passed is False
    assert "ValueError" in result.message and "h, d_model = W_Q.shape" in result.message


def test_a_hard_coded_answer_fails():
    X = np.random.default_rng(0).standard_normal((6, 8))
    fixed = helpers.multi_head_attention(X, **helpers.seeded_projections(8, n_heads=2))
    assert multi_head_attention.check(lambda *a: fixed).passed is False


def test_solutions_and_hints_are_shown():
    assert "def cross_attention(" in cross_attention.solution().text
    assert "X_kv @ W_K" in cross_attention.solution().text
    assert "def multi_head_attention(" in multi_head_attention.solution().text
    assert "@ W_O" in multi_head_attention.solution().text
    assert "np.concatenate" in multi_head_attention.hint(3).text
    namespace = {"np": np}
    exec(multi_head_attention.solution().text, namespace)
    assert multi_head_attention.check(namespace["multi_head_attention"]).passed is True
