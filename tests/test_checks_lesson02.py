"""The lesson 02 checks: correct answers pass, every named mistake gets its own message and id."""

from __future__ import annotations

import re

import numpy as np
import pytest
from check_tables import assert_mistakes_distinct

from helpers import checks

qkv = checks.project_qkv
heads = checks.head_slices
bilinear = checks.head_bilinear_form


def _run_table(exercise, table, name, repeats=3):
    answer, pattern, mistake = table[name]
    for _ in range(repeats):  # fresh sizes every time
        result = exercise.check(answer)
        assert result.passed is False
        assert re.search(pattern, result.message), result.message
        assert result.mistake == f"{exercise.name}.{mistake}", result.mistake


# ---------------------------------------------------------------------------------------------
# project_qkv(X, W_qkv)


def _qkv_loops(X, W_qkv):
    d_out = W_qkv.shape[1] // 3
    flat = X.reshape(-1, X.shape[-1])  # every token of every batch, one row each
    out = np.zeros((flat.shape[0], W_qkv.shape[1]))
    for r in range(flat.shape[0]):
        for c in range(W_qkv.shape[1]):
            out[r, c] = sum(flat[r, t] * W_qkv[t, c] for t in range(flat.shape[1]))
    out = out.reshape(*X.shape[:-1], -1)
    return [out[..., k * d_out : (k + 1) * d_out] for k in range(3)]  # a list of three is fine


QKV_CORRECT = {
    "reference": qkv.reference,
    "loops": _qkv_loops,
    "np.split": lambda X, W: tuple(np.split(X @ W, 3, axis=-1)),
    "weights first": lambda X, W: tuple(X @ w for w in np.split(W, 3, axis=1)),
    "einsum float32": lambda X, W: tuple(
        np.split(np.einsum("...nd,de->...ne", X.astype(np.float32), W.astype(np.float32)), 3, -1)
    ),
}

QKV_MISTAKES = {
    "fused only": (lambda X, W: X @ W, r"that is X @ W_qkv, all three", "fused_only"),
    "K, Q, V": (
        lambda X, W: (lambda q, k, v: (k, q, v))(*np.split(X @ W, 3, axis=-1)),
        r"your Q is the second block of X @ W_qkv, which is K",
        "wrong_order",
    ),
    "every third column": (
        lambda X, W: tuple((X @ W)[..., k::3] for k in range(3)),
        r"took every third column",
        "interleaved",
    ),
    "split axis 1": (
        lambda X, W: tuple(np.split(X @ W, 3, axis=1)),
        r"you cut the tokens axis into three",
        "split_tokens",
    ),
    "weight blocks": (
        lambda X, W: tuple(np.split(W, 3, axis=-1)),
        r"the shape of a weight block",
        "weight_blocks",
    ),
    "blocks d_model wide": (
        lambda X, W: tuple((X @ W)[..., k * X.shape[-1] : (k + 1) * X.shape[-1]] for k in range(3)),
        r"your Q has \d+ = d_model columns",
        "blocks_of_d_model",
    ),
    "X itself": (lambda X, W: (X, X, X), r"your Q is X itself", "x_itself"),
    "None": (lambda X, W: None, r"returned None; did you forget `return Q, K, V`", "returned_none"),
    "two arrays": (lambda X, W: tuple(np.split(X @ W, 3, -1))[:2], r"a tuple of 2", "returned_one"),
}


@pytest.mark.parametrize("name", QKV_CORRECT)
def test_project_qkv_correct_answers_pass(name):
    for _ in range(3):
        result = qkv.check(QKV_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", QKV_MISTAKES)
def test_project_qkv_each_mistake_fails_with_its_own_message(name):
    _run_table(qkv, QKV_MISTAKES, name)


def test_project_qkv_mistake_messages_are_distinct():
    assert_mistakes_distinct(qkv, {k: v[:2] for k, v in QKV_MISTAKES.items()})


def test_project_qkv_stub_exception_hints_and_solution():
    def stub(X, W_qkv):
        raise NotImplementedError

    assert qkv.check(stub).passed is None

    def broken(X, W_qkv):
        QKV = X @ W_qkv.T  # W_qkv is already (d_model, 3 d_out): shapes do not line up
        return np.split(QKV, 3, axis=-1)

    result = qkv.check(broken)
    assert result.passed is False and result.mistake == "project_qkv.raised"
    assert "QKV = X @ W_qkv.T" in result.message and "at line" in result.message
    assert qkv.stars == 1 and len(qkv._hints) >= 3
    assert "def project_qkv(X, W_qkv)" in str(qkv.solution())


# ---------------------------------------------------------------------------------------------
# head_slices(M, h)


HEADS_CORRECT = {
    "reference": heads.reference,
    "stack of slices": lambda M, h: np.stack(np.split(M, h, axis=-1), axis=-3),
    "moveaxis": lambda M, h: np.moveaxis(M.reshape(*M.shape[:-1], h, -1), -2, -3),
    "loops": lambda M, h: np.stack(
        [M[..., a * (M.shape[-1] // h) : (a + 1) * (M.shape[-1] // h)] for a in range(h)], -3
    ),
}

HEADS_MISTAKES = {
    "split rows": (
        lambda M, h: np.stack(np.split(M, h, axis=-2), axis=-3),
        r"you split the rows",
        "split_rows",
    ),
    "reshape without move": (
        lambda M, h: M.reshape(*M.shape[:-2], h, M.shape[-2], -1),
        r"you reshaped M straight to \(\.\.\., h, n, d_k\)",
        "reshaped_straight",
    ),
    "no head axis move": (
        lambda M, h: M.reshape(*M.shape[:-1], h, -1),
        r"did not move the head axis in front of the tokens",
        "head_axis_not_moved",
    ),
    "block transposed": (
        lambda M, h: np.moveaxis(M.reshape(*M.shape[:-1], h, -1), -3, -1),
        r"each head's block is transposed",
        "block_transposed",
    ),
    "interleaved": (
        lambda M, h: np.moveaxis(M.reshape(*M.shape[:-1], -1, h), -1, -3),
        r"head a got every h-th column",
        "interleaved",
    ),
    "h hard-coded": (
        lambda M, h: np.swapaxes(M.reshape(*M.shape[:-1], 2, -1), -3, -2),
        r"h = 2 is hard-coded",
        "h_hard_coded",
    ),
    "d_k hard-coded": (
        lambda M, h: np.swapaxes(M.reshape(*M.shape[:-1], -1, 4), -3, -2),
        r"d_k = 4 is hard-coded",
        "d_k_hard_coded",
    ),
    "stacked on axis 0": (
        lambda M, h: np.stack(np.split(M, h, axis=-1)),
        r"the head axis went in front of the batch axes",
        "head_axis_before_batch",
    ),
    "swapped axes 0 and 1": (
        lambda M, h: np.swapaxes(M.reshape(*M.shape[:-1], h, -1), 0, 1),
        r"with a batch axis in front those are the batch and the tokens",
        "batch_axis_moved",
    ),
    "2-D only, unpacking the shape": (
        lambda M, h: (lambda n, d: M.reshape(n, h, d // h).transpose(1, 0, 2))(*M.shape),
        r"works on a single \(n, d_model\) matrix but not with one leading axis",
        "only_2d",
    ),
    "2-D only, M.shape[0] as n": (
        lambda M, h: M.reshape(M.shape[0], h, -1).transpose(1, 0, 2),
        r"M.shape\[0\] is the batch size b, not n",
        "only_2d",
    ),
    "None": (lambda M, h: None, r"returned None", "returned_none"),
}


@pytest.mark.parametrize("name", HEADS_CORRECT)
def test_head_slices_correct_answers_pass(name):
    for _ in range(5):
        result = heads.check(HEADS_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", HEADS_MISTAKES)
def test_head_slices_each_mistake_fails_with_its_own_message(name):
    _run_table(heads, HEADS_MISTAKES, name, repeats=5)


def test_head_slices_mistake_messages_are_distinct():
    table = {k: v[:2] for k, v in HEADS_MISTAKES.items() if v[2] != "only_2d"}
    assert_mistakes_distinct(heads, table)


def test_head_slices_stub_exception_and_hard_coded_answer():
    def stub(M, h):
        raise NotImplementedError

    assert heads.check(stub).passed is None

    def broken(M, h):
        d_k = M.shape[-1] / h  # a float: reshape refuses it
        return np.swapaxes(M.reshape(*M.shape[:-1], h, d_k), -3, -2)

    result = heads.check(broken)
    assert result.passed is False and result.mistake == "head_slices.raised"
    assert "raised TypeError" in result.message and "at line" in result.message
    fixed = heads.reference(np.arange(48.0).reshape(6, 8), 2)
    assert heads.check(lambda M, h: fixed).passed is False
    assert heads.stars == 2 and len(heads._hints) >= 3


# ---------------------------------------------------------------------------------------------
# The prediction and the challenge


def test_the_rnn_prediction_is_explained_either_way():
    right, wrong = checks.rnn_nudge_fades.check("shrunk"), checks.rnn_nudge_fades.check("grown")
    assert right.passed is True and "r_1, r_2" in right.message
    assert wrong.passed is False and wrong.mistake == "rnn_nudge_fades.picked_grown"
    assert "slope is at most 1" in wrong.message and "r_1, r_2" in wrong.message


def _bilinear_loops(W_Q, W_K):
    h, d_model, d_k = W_Q.shape
    B = np.zeros((h, d_model, d_model))
    for a in range(h):
        for r in range(d_model):
            for c in range(d_model):
                B[a, r, c] = sum(W_Q[a, r, t] * W_K[a, c, t] for t in range(d_k))
    return B


BILINEAR_CORRECT = {
    "reference": bilinear.reference,
    "loops": _bilinear_loops,
    "einsum": lambda W_Q, W_K: np.einsum("adk,aek->ade", W_Q, W_K),
    "list of heads": lambda W_Q, W_K: [q @ k.T for q, k in zip(W_Q, W_K)],
}

BILINEAR_MISTAKES = {
    "keys first": (
        lambda W_Q, W_K: W_K @ np.swapaxes(W_Q, -1, -2),
        r"you returned W_K W_Qᵀ",
        "keys_first",
    ),
    "inner product": (
        lambda W_Q, W_K: np.swapaxes(W_Q, -1, -2) @ W_K,
        r"that is W_Qᵀ W_K, a d_k x d_k matrix",
        "inner_product",
    ),
    "summed heads": (
        lambda W_Q, W_K: np.einsum("adk,aek->de", W_Q, W_K),
        r"one d_model x d_model matrix for all heads",
        "summed_heads",
    ),
    "element-wise": (lambda W_Q, W_K: W_Q * W_K, r"an element-wise product", "elementwise"),
    "W_Q twice": (
        lambda W_Q, W_K: W_Q @ np.swapaxes(W_Q, -1, -2),
        r"you used W_Q on both sides",
        "query_twice",
    ),
    "scaled": (
        lambda W_Q, W_K: W_Q @ np.swapaxes(W_K, -1, -2) / np.sqrt(W_Q.shape[-1]),
        r"you divided by √d_k",
        "scaled",
    ),
}


@pytest.mark.parametrize("name", BILINEAR_CORRECT)
def test_bilinear_form_correct_answers_pass(name):
    for _ in range(3):
        result = bilinear.check(BILINEAR_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", BILINEAR_MISTAKES)
def test_bilinear_form_each_mistake_fails_with_its_own_message(name):
    _run_table(bilinear, BILINEAR_MISTAKES, name)


def test_bilinear_form_mistake_messages_are_distinct_and_the_rest_is_generic():
    assert_mistakes_distinct(bilinear, {k: v[:2] for k, v in BILINEAR_MISTAKES.items()})
    result = bilinear.check(lambda W_Q, W_K: 2 * bilinear.reference(W_Q, W_K))
    assert result.passed is False and result.mistake is None
    assert "x_i B[a] x_jᵀ should equal" in result.message
    assert bilinear.stars == 3 and len(bilinear._hints) >= 3


def test_bilinear_form_gives_the_scores_of_each_head():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 8))
    W_Q, W_K = rng.standard_normal((2, 2, 8, 4))
    B = bilinear.reference(W_Q, W_K)
    for a in range(2):
        assert np.allclose(X @ B[a] @ X.T, (X @ W_Q[a]) @ (X @ W_K[a]).T)
        assert np.linalg.matrix_rank(B[a]) == 4
