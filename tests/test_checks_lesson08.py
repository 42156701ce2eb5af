"""Lesson 08's checks: correct gradients pass, each catalogued mistake is named by its id."""

import re
from pathlib import Path

import numpy as np
import pytest
from support.check_tables import assert_mistakes_distinct

import helpers
from helpers import checks
from helpers import training as T
from helpers.checks import lesson08

# ---------------------------------------------------------------------------------------------
# softmax_backward(A, dA)

softmax_check = checks.softmax_backward.check


def jacobian_per_row(A, dA):
    """Build each row's Jacobian diag(a) - a a^T and apply it (loops over the leading axes)."""
    dS = np.empty_like(A)
    for index in np.ndindex(A.shape[:-1]):
        a = A[index]
        dS[index] = (np.diag(a) - np.outer(a, a)) @ dA[index]
    return dS


def with_einsum(A, dA):
    c = np.einsum("...k,...k->...", dA, A)  # one number per row
    return A * dA - A * c[..., None]


def with_input_copies(A, dA):
    """Copies both inputs to float64 and subtracts the row's weighted sum in place."""
    A, dA = np.array(A, dtype=np.float64), np.asarray(dA, dtype=np.float64).copy()
    dA -= np.sum(dA * A, axis=-1)[..., np.newaxis]
    return A * dA


def rows_in_a_loop(A, dA):
    """One row at a time, over every leading axis, with Python-level dot products."""
    A2, dA2 = A.reshape(-1, A.shape[-1]), dA.reshape(-1, A.shape[-1])
    out = np.empty(A2.shape)
    for r, (a, da) in enumerate(zip(A2, dA2)):
        weighted = float(np.dot(a, da))
        out[r] = [a_k * (da_k - weighted) for a_k, da_k in zip(a, da)]
    return out.reshape(A.shape)


def softmax_backward_in_float32(A, dA):
    """Works in float32 whatever the inputs."""
    A, dA = np.asarray(A, dtype=np.float32), np.asarray(dA, dtype=np.float32)
    return A * (dA - np.einsum("...k,...k->...", dA, A)[..., None])


SOFTMAX_CORRECT = [
    jacobian_per_row,
    with_einsum,
    with_input_copies,
    rows_in_a_loop,
    softmax_backward_in_float32,
]


@pytest.mark.parametrize("answer", SOFTMAX_CORRECT)
def test_correct_softmax_backward_passes(answer):
    for _ in range(2):
        result = softmax_check(answer)
        assert result.passed is True, result.message


SOFTMAX_MISTAKES = {
    "identity": (lambda A, dA: dA, r"not the identity"),
    "no_row_sum": (lambda A, dA: A * dA, r"your dS is A \* dA"),
    "forgot_a_factor": (
        lambda A, dA: dA - (dA * A).sum(-1, keepdims=True),
        r"lacks the outer factor",
    ),
    "sum_without_a": (
        lambda A, dA: A * (dA - dA.sum(axis=-1, keepdims=True)),
        r"adds up dA alone",
    ),
    "sign_flipped": (lambda A, dA: A * ((dA * A).sum(-1, keepdims=True) - dA), r"sign is flipped"),
    "diagonal_only": (lambda A, dA: A * (1 - A) * dA, r"only the diagonal"),
    "column_sum": (lambda A, dA: A * (dA - (dA * A).sum(axis=-2, keepdims=True)), r"axis=-2"),
    "whole_sum": (lambda A, dA: A * (dA - np.sum(dA * A)), r"over the whole array"),
    "no_keepdims": (lambda A, dA: A * (dA - (dA * A).sum(axis=-1)), r"lost its axis"),
}


@pytest.mark.parametrize("mistake", list(SOFTMAX_MISTAKES))
def test_each_softmax_backward_mistake_is_named(mistake):
    answer, pattern = SOFTMAX_MISTAKES[mistake]
    for _ in range(2):  # fresh inputs each time
        result = softmax_check(answer)
        assert result.passed is False and result.mistake == f"softmax_backward.{mistake}"
        assert re.search(pattern, result.message), result.message


FORMULA = re.compile(r"dA\s*-\s*(rowsum|\(dA \* A\)|sum)|A \* \(dA")


@pytest.mark.parametrize("mistake", [m for m in SOFTMAX_MISTAKES if m != "no_keepdims"])
def test_softmax_backward_messages_point_at_the_term_not_the_whole_formula(mistake):
    """The formula dS = A * (dA - rowsum(dA * A)) is the last hint, not the first message."""
    message = softmax_check(SOFTMAX_MISTAKES[mistake][0]).message
    assert not FORMULA.search(message), message
    assert not FORMULA.search(checks.softmax_backward.hint(1).text)
    assert FORMULA.search(checks.softmax_backward.hint(3).text)


def test_dropping_the_row_sum_is_told_as_the_missing_subtraction():
    message = softmax_check(lambda A, dA: A * dA).message
    assert "dropped the subtraction of the row's weighted sum" in message, message


def test_softmax_backward_mistake_messages_are_distinct():
    assert_mistakes_distinct(checks.softmax_backward, SOFTMAX_MISTAKES)


def test_softmax_backward_slips_and_stub():
    assert softmax_check(lambda A, dA: None).mistake == "softmax_backward.returned_none"
    assert softmax_check(lambda A, dA: A[..., 0]).mistake == "softmax_backward.wrong_shape"

    def stub(A, dA):
        raise NotImplementedError

    assert softmax_check(stub).passed is None


def test_softmax_backward_reference_is_finite_differences():
    rng = np.random.default_rng(0)
    S, dA = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    A = helpers.softmax(S, axis=-1)
    np.testing.assert_allclose(
        checks.softmax_backward.reference(A, dA),
        lesson08._finite_difference_softmax(S, dA),
        atol=1e-8,
    )


# ---------------------------------------------------------------------------------------------
# attention_backward(Q, K, V, dO): the challenge

attention_check = checks.attention_backward.check


def backward_loops(Q, K, V, dO):
    """Row by row: each query's softmax backward on its own."""
    c = 1 / np.sqrt(Q.shape[1])
    dQ, dK, dV = np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)
    for i in range(len(Q)):
        a = helpers.softmax(K @ Q[i] * c)  # (n_k,)
        da = V @ dO[i]  # (n_k,)
        dV += np.outer(a, dO[i])
        ds = a * (da - da @ a)
        dQ[i] = c * ds @ K
        dK += c * np.outer(ds, Q[i])
    return dQ, dK, dV


def backward_einsum_with_helpers(Q, K, V, dO):
    c = 1 / np.sqrt(Q.shape[-1])
    _, A = helpers.scaled_dot_product_attention(Q, K, V)
    dS = T.softmax_backward(A, np.einsum("qv,kv->qk", dO, V))
    return (
        np.einsum("qk,kd->qd", dS, K) * c,
        np.einsum("qk,qd->kd", dS, Q) * c,
        np.einsum("qk,qv->kv", A, dO),
    )


def backward_matrix_copies(Q, K, V, dO):
    """Float64 copies of the inputs, NumPy only, the softmax written out."""
    Q, K, V, dO = (np.array(a, dtype=np.float64) for a in (Q, K, V, dO))
    c = 1 / np.sqrt(Q.shape[-1])
    S = Q @ K.T * c
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    dA = dO @ V.T
    dS = A * (dA - np.sum(dA * A, axis=-1, keepdims=True))
    return c * dS @ K, c * dS.T @ Q, A.T @ dO


def backward_in_float32(Q, K, V, dO):
    """Works in float32 whatever the inputs, the scale a float32 too."""
    Q, K, V, dO = (np.asarray(a, dtype=np.float32) for a in (Q, K, V, dO))
    c = np.float32(1 / np.sqrt(Q.shape[-1]))
    S = Q @ K.T * c
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A /= A.sum(axis=-1, keepdims=True)
    dA = dO @ V.T
    dS = A * (dA - np.sum(dA * A, axis=-1, keepdims=True))
    return c * dS @ K, c * dS.T @ Q, A.T @ dO


ATTENTION_CORRECT = [
    backward_loops,
    backward_einsum_with_helpers,
    backward_matrix_copies,
    backward_in_float32,
]


@pytest.mark.parametrize("answer", ATTENTION_CORRECT)
def test_correct_attention_backward_passes(answer):
    result = attention_check(answer)
    assert result.passed is True, result.message


def backward_variant(how):
    def answer(Q, K, V, dO):
        c = 1 / np.sqrt(Q.shape[-1])
        A = helpers.softmax(Q @ K.T * c, axis=-1)
        dA = dO @ V.T
        dV = A @ dO if how == "dv_not_transposed" else A.T @ dO
        if how == "softmax_skipped":
            dS = dA
        elif how == "no_row_sum":
            dS = A * dA
        else:
            dS = A * (dA - (dA * A).sum(-1, keepdims=True))
        f = {"forgot_scale": 1.0, "scale_inverted": np.sqrt(Q.shape[-1])}.get(how, c)
        dQ = dS @ K * f
        dK = dS @ Q * f if how == "dk_not_transposed" else dS.T @ Q * f
        return (dK, dQ, dV) if how == "dq_dk_swapped" else (dQ, dK, dV)

    return answer


ATTENTION_MISTAKES = {
    "forgot_scale": (backward_variant("forgot_scale"), r"lack the scale"),
    "scale_inverted": (backward_variant("scale_inverted"), r"multiplied by sqrt\(d_k\)"),
    "softmax_skipped": (backward_variant("softmax_skipped"), r"as if the softmax were"),
    "no_row_sum": (backward_variant("no_row_sum"), r"your dS is A \* dA"),
    "dv_not_transposed": (backward_variant("dv_not_transposed"), r"dV = A @ dO"),
    "dk_not_transposed": (backward_variant("dk_not_transposed"), r"dK = c dS Q"),
    "dq_dk_swapped": (backward_variant("dq_dk_swapped"), r"dQ and dK are swapped"),
    "not_a_triple": (lambda Q, K, V, dO: backward_variant("")(Q, K, V, dO)[:2], r"three"),
}


@pytest.mark.parametrize("mistake", list(ATTENTION_MISTAKES))
def test_each_attention_backward_mistake_is_named(mistake):
    answer, pattern = ATTENTION_MISTAKES[mistake]
    result = attention_check(answer)
    assert result.passed is False and result.mistake == f"attention_backward.{mistake}"
    assert re.search(pattern, result.message), result.message


def test_attention_backward_mistake_messages_are_distinct():
    assert_mistakes_distinct(checks.attention_backward, ATTENTION_MISTAKES)


def test_every_lesson_08_exercise_meets_the_bar():
    assert checks.softmax_backward.lesson == checks.attention_backward.lesson == "08"
    assert checks.softmax_backward.stars == 2 and checks.attention_backward.stars == 3
    for exercise in (checks.softmax_backward, checks.attention_backward):
        assert len(exercise._hints) >= 3


def test_lesson_08_shows_the_softmax_backward_answer_only_in_its_solution():
    """The Summary once gave dS = A (dA - rowsum(dA A)) on screen, below the exercise."""
    source = (Path(__file__).parents[1] / "solutions" / "08_training_attention.py").read_text()
    outside = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "", source, flags=re.S)
    assert "rowsum" not in outside
    assert not re.search(r"dA\s*-\s*\(?dA", outside)
    assert not re.search(r"\\odot\s*\(dA", outside)


# ---------------------------------------------------------------------------------------------
# The sweep (tests/test_checks_sweep.py): every exercise, correct styles and named mistakes.

SWEEP = {
    "softmax_backward": {
        "correct": SOFTMAX_CORRECT,
        "mistakes": {
            **{mistake: answer for mistake, (answer, _) in SOFTMAX_MISTAKES.items()},
            "returned_none": lambda A, dA: None,
            "wrong_shape": lambda A, dA: A[..., 0],
        },
    },
    "attention_backward": {
        "correct": ATTENTION_CORRECT,
        "mistakes": {mistake: answer for mistake, (answer, _) in ATTENTION_MISTAKES.items()},
    },
}
