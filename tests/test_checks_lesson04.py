"""Lesson 04's checks: right answers pass in any style, each known mistake gets its own message."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import built_lessons

from helpers import checks
from helpers.checks import exercise, lesson04, lesson04_temperature

# Answers never call into the check module (its .reference is refused like a helper): the
# reference answers below are the tests' own copies.


def ref_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def ref_attention(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def ref_zero_temperature(Q, K, V):
    scores = Q @ K.T
    top = scores == scores.max(axis=-1, keepdims=True)
    weights = top / top.sum(axis=-1, keepdims=True)
    return weights @ V, weights


# ------------------------------------------------------------------------------ softmax


def softmax_loops(z):
    rows = z.reshape(-1, z.shape[-1])  # every row, whatever the leading axes
    out = np.empty_like(rows)
    for i, row in enumerate(rows):
        top = max(row)
        e = [np.exp(x - top) for x in row]
        out[i] = [x / sum(e) for x in e]
    return out.reshape(z.shape)


def softmax_float32(z):
    z = np.asarray(z, dtype=np.float32)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / np.einsum("...j->...", e)[..., None]


def softmax_global_shift_per_row_logsumexp(z):
    m = z.max(axis=-1, keepdims=True)
    return np.exp(z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))


def softmax_in_place(z):
    z -= z.max(axis=-1, keepdims=True)  # modifies its input: fine, the check passes copies
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


def _stable_softmax_row(z):  # the lesson's one-row function, plain Python
    top = max(z)
    e = [math.exp(z_j - top) for z_j in z]
    total = sum(e)
    return [e_j / total for e_j in e]


def softmax_rows_in_plain_python(z):  # the lesson's function on every row: lists accepted
    rows = [_stable_softmax_row(row) for row in np.reshape(z, (-1, np.shape(z)[-1]))]
    return np.reshape(rows, np.shape(z))


@pytest.mark.parametrize(
    "answer", [ref_softmax, softmax_loops, softmax_float32,
               softmax_global_shift_per_row_logsumexp, softmax_in_place,
               softmax_rows_in_plain_python]
)  # fmt: skip
def test_correct_softmaxes_pass(answer):
    result = checks.softmax.check(answer)
    assert result.passed is True, result.message


def _naive(z):
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _global_max(z):
    e = np.exp(z - z.max())
    return e / e.sum(axis=-1, keepdims=True)


def _axis0(z):
    e = np.exp(z - z.max(axis=0))
    return e / e.sum(axis=0)


def _whole(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def _min_shift(z):
    e = np.exp(z - z.min(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _mean_shift(z):
    e = np.exp(z - np.mean(z, axis=1)[:, None])
    return e / e.sum(axis=-1, keepdims=True)


def _no_exp(z):
    return z / z.sum(axis=-1, keepdims=True)


def _no_exp_shifted(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z / z.sum(axis=-1, keepdims=True)


def _not_normalised(z):
    return np.exp(z - z.max(axis=-1, keepdims=True))


def _exp_only(z):
    return np.exp(z)


def _no_keepdims(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


def _no_keepdims_max(z):
    e = np.exp(z - z.max(axis=-1))
    return e / e.sum(axis=-1, keepdims=True)


def _no_keepdims_either(z):
    e = np.exp(z - z.max(-1))
    return e / e.sum(-1)


def _no_keepdims_no_max(z):
    return np.exp(z) / np.exp(z).sum(-1)


def _axis_1(z):  # right on a matrix, where axis 1 is the last axis
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _each_matrix(z):  # the lesson's idea applied to z[b] with whole-array max and sum
    out = np.empty_like(z)
    for b, matrix in enumerate(z):
        if matrix.ndim == 1:  # a 2-D z: each row on its own, which is right
            matrix = matrix[None, :]
        e = np.exp(matrix - matrix.max())
        out[b] = (e / e.sum()).reshape(out[b].shape)
    return out


def _rows_of_a_matrix_only(z):  # the lesson's row function on each row of z
    return np.array([_stable_softmax_row(row) for row in z])


def _returns_nothing(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    e / e.sum(axis=-1, keepdims=True)  # noqa: B018 - the forgotten return is the point


SOFTMAX_MISTAKES = {  # answer: (words in its message, its stable mistake id)
    _naive: ("NaN or inf on large scores", "overflow"),
    _global_max: ("maximum of the whole matrix", "global_max"),
    _min_shift: ("you subtracted the row's minimum", "min_shift"),
    _mean_shift: ("you subtracted the row's mean", "mean_shift"),
    _axis0: ("columns sum to 1", "columns_sum_to_one"),
    _whole: ("the whole matrix sums to 1", "whole_matrix"),
    _no_exp: ("forget np.exp? Dividing the scores", "no_exp"),
    _no_exp_shifted: ("forget np.exp? You subtracted the max", "no_exp_shifted"),
    _not_normalised: ("do not sum to 1. After np.exp, divide", "not_normalised"),
    _exp_only: ("never divided by the sum", "exp_only"),
    _no_keepdims: ("without keepdims=True", "no_keepdims_sum"),
    _no_keepdims_max: ("broadcasts the max of row i across column i", "no_keepdims_max"),
    _no_keepdims_either: ("add keepdims=True to both", "no_keepdims_either"),
    _no_keepdims_no_max: ("divide by the row sum with keepdims=True", "no_keepdims_no_max"),
    _axis_1: ("your distributions run along axis 1", "axis_1_not_last"),
    _each_matrix: ("each (n_q, n_k) matrix of the batch sums to 1", "matrix_sums_to_one"),
    _rows_of_a_matrix_only: ("works on 2-D matrices but raises on a 3-D array", "fixed_rank"),
    _returns_nothing: ("returned None", "returned_none"),
}


@pytest.mark.parametrize("mistake", list(SOFTMAX_MISTAKES), ids=lambda f: f.__name__)
def test_each_softmax_mistake_gets_its_own_message(mistake):
    with np.errstate(all="ignore"):
        result = checks.softmax.check(mistake)
    words, mistake_id = SOFTMAX_MISTAKES[mistake]
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"softmax.{mistake_id}", result.mistake
    others = [m for f, (m, _) in SOFTMAX_MISTAKES.items() if f is not mistake]
    assert not any(m in result.message for m in others), result.message


@pytest.mark.parametrize("shift", [_min_shift, _mean_shift], ids=lambda f: f.__name__)
def test_min_and_mean_shifts_are_unstable_and_fail(shift):
    with np.errstate(all="ignore"):
        assert np.isnan(shift(np.array([[-1000.0, 0.0, 1000.0]]))).any()
        result = checks.softmax.check(shift)
    assert result.passed is False and "subtract the max" in result.message.lower()


def test_the_checked_inputs_include_a_row_spread_over_plus_minus_1000():
    cases = lesson04._softmax_cases(np.random.default_rng(0))
    wide = [z for what, z in cases if "spread" in what]
    assert wide and all(np.ptp(row) >= 1900 for row in wide[0])


def test_the_lessons_one_row_function_is_not_already_the_answer():
    result = checks.softmax.check(_stable_softmax_row)  # max() of a matrix compares whole rows
    assert result.passed is False and result.mistake == "softmax.raised", result.message


def test_the_checked_inputs_include_a_row_and_batches_of_any_rank():
    ranks = [z.ndim for _, z in lesson04._softmax_cases(np.random.default_rng(0))]
    assert {1, 2, 3, 4} <= set(ranks)
    assert ranks.index(3) < ranks.index(1)  # axis=1 is named on a batch before 1-D raises


def test_a_hard_coded_softmax_fails():
    worked = np.array([[1.0, 2.0, 3.0]])
    fixed = ref_softmax(worked)
    assert checks.softmax.check(lambda z: fixed).passed is False


# ------------------------------------------------------------------------------ attention
# Batched inputs: Q (..., n_q, d_k), K (..., n_k, d_k), V (..., n_k, d_v).


def _stable_softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _KT(K):
    return np.swapaxes(K, -1, -2)


def attention_loops(Q, K, V):
    lead, n_q, n_k, d_k = Q.shape[:-2], Q.shape[-2], K.shape[-2], Q.shape[-1]
    weights = np.zeros((*lead, n_q, n_k))
    output = np.zeros((*lead, n_q, V.shape[-1]))
    for idx in np.ndindex(*lead):  # every example (and head) of the batch
        for i in range(n_q):
            scores = np.array([Q[idx][i] @ K[idx][j] / d_k**0.5 for j in range(n_k)])
            weights[idx][i] = _stable_softmax(scores)
            output[idx][i] = sum(weights[idx][i, j] * V[idx][j] for j in range(n_k))
    return output, weights


def attention_einsum_float32(Q, K, V):
    Q, K, V = (np.asarray(a, np.float32) for a in (Q, K, V))
    A = _stable_softmax(np.einsum("...qd,...kd->...qk", Q, K) / np.float32(np.sqrt(Q.shape[-1])))
    return np.einsum("...qk,...kv->...qv", A, V), A


def attention_reshape(Q, K, V):
    """Flatten the leading axes into one batch, loop-free, then restore them."""
    lead = Q.shape[:-2]
    q, k, v = (a.reshape(-1, *a.shape[-2:]) for a in (Q, K, V))
    A = _stable_softmax(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]))
    return (A @ v).reshape(*lead, *(A @ v).shape[-2:]), A.reshape(*lead, *A.shape[-2:])


@pytest.mark.parametrize(
    "answer",
    [ref_attention, attention_loops, attention_einsum_float32,
     attention_reshape],
)  # fmt: skip
def test_correct_attentions_pass(answer):
    result = checks.attention.check(answer)
    assert result.passed is True, result.message


def _attention_with(weights_fn):
    def answer(Q, K, V):
        A = weights_fn(Q, K)
        return A @ V, A

    return answer


def _d_k(Q):
    return Q.shape[-1]


_no_scale = _attention_with(lambda Q, K: _stable_softmax(Q @ _KT(K)))
_by_d_k = _attention_with(lambda Q, K: _stable_softmax(Q @ _KT(K) / _d_k(Q)))
_by_n = _attention_with(lambda Q, K: _stable_softmax(Q @ _KT(K) / K.shape[-2]))
_transposed_scores = _attention_with(lambda Q, K: _stable_softmax(K @ _KT(Q) / np.sqrt(_d_k(Q))))
_wrong_axis = _attention_with(lambda Q, K: _stable_softmax(Q @ _KT(K) / np.sqrt(_d_k(Q)), axis=-2))
_batch_axis = _attention_with(
    lambda Q, K: _stable_softmax(Q @ _KT(K) / np.sqrt(_d_k(Q)), axis=0 if Q.ndim > 2 else -1)
)
_k_dot_T = _attention_with(lambda Q, K: _stable_softmax(Q @ K.T / np.sqrt(_d_k(Q))))


def _three_axes_only(Q, K, V):
    A = _stable_softmax(np.einsum("bqd,bkd->bqk", Q, K) / np.sqrt(_d_k(Q)))
    return A @ V, A


def _naive_softmax_inside(Q, K, V):
    e = np.exp(Q @ _KT(K) / np.sqrt(_d_k(Q)))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A


def _one_max_for_the_batch(Q, K, V):
    s = Q @ _KT(K) / np.sqrt(_d_k(Q))
    e = np.exp(s - s.max())
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A


def _returns_scores(Q, K, V):
    scores = Q @ _KT(K) / np.sqrt(_d_k(Q))
    return _stable_softmax(scores) @ V, scores


def _returns_raw_scores(Q, K, V):
    scores = Q @ _KT(K)
    return _stable_softmax(scores / np.sqrt(_d_k(Q))) @ V, scores


def _returns_weights_twice(Q, K, V):
    A = _stable_softmax(Q @ _KT(K) / np.sqrt(_d_k(Q)))
    return A, A


def _returns_weights_then_output(Q, K, V):
    output, A = ref_attention(Q, K, V)
    return A, output


def _returns_only_output(Q, K, V):
    return ref_attention(Q, K, V)[0]


def _returns_only_weights(Q, K, V):
    return ref_attention(Q, K, V)[1]


def _transposed_output(Q, K, V):
    output, A = ref_attention(Q, K, V)
    return output.T, A


def _transposed_weights(Q, K, V):
    output, A = ref_attention(Q, K, V)
    return output, _KT(A)


def _output_from_transposed_weights(Q, K, V):
    output, A = ref_attention(Q, K, V)
    return _KT(A) @ V, A


def _returns_none(Q, K, V):
    ref_attention(Q, K, V)


ATTENTION_MISTAKES = {  # answer: (words in its message, its stable mistake id)
    _no_scale: ("the weights are not scaled", "unscaled"),
    _by_d_k: ("you divided the scores by d_k", "scale_dk"),
    _by_n: ("divided the scores by the sequence length", "scale_n"),
    _transposed_scores: ("K Q^T puts keys on the rows", "keys_on_rows"),
    _wrong_axis: ("columns sum to 1, not the rows", "columns_sum_to_one"),
    _batch_axis: ("sum to 1 across the batch", "batch_axis"),
    _k_dot_T: ("K.T reverses *every* axis", "transpose_all_axes"),
    _three_axes_only: ("works on 3-D inputs but raises on 2-D", "fixed_rank"),
    _naive_softmax_inside: ("np.exp of scores around 800 overflows", "overflow"),
    _one_max_for_the_batch: ("one maximum for the whole batch", "global_max"),
    _returns_scores: ("holds the scores Q K^T / sqrt(d_k)", "returned_scores"),
    _returns_raw_scores: ("holds the raw scores Q K^T;", "returned_raw_scores"),
    _returns_weights_twice: ("the first value has the weights' shape", "weights_as_output"),
    _returns_weights_then_output: ("returned (weights, output)", "swapped_pair"),
    _returns_only_output: ("only the output", "returned_one"),
    _returns_only_weights: ("only the weights", "returned_one"),
    _transposed_output: ("your output has shape", "transposed"),
    _transposed_weights: ("the weights are transposed", "weights_transposed"),
    _output_from_transposed_weights: ("the output uses the transposed weights",
                                      "output_transposed_weights"),
    _returns_none: ("returned None", "returned_none"),
}  # fmt: skip


@pytest.mark.parametrize("mistake", list(ATTENTION_MISTAKES), ids=lambda f: f.__name__)
def test_each_attention_mistake_gets_its_own_message(mistake):
    with np.errstate(all="ignore"):
        result = checks.attention.check(mistake)
    words, mistake_id = ATTENTION_MISTAKES[mistake]
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"attention.{mistake_id}", (result.mistake, result.message)
    others = [m for f, (m, _) in ATTENTION_MISTAKES.items() if f is not mistake]
    assert not any(m in result.message for m in others), result.message


def test_k_dot_T_is_named_also_where_it_raises(monkeypatch):
    """On (b, h, n, d_k) inputs K.T cannot even be multiplied: the error is named the same."""
    cases = lesson04._attention_cases
    monkeypatch.setattr(
        lesson04, "_attention_cases", lambda rng: [c for c in cases(rng) if c[1].ndim == 4]
    )
    result = checks.attention.check(_k_dot_T)
    assert result.passed is False and result.mistake == "attention.transpose_all_axes"
    assert "K.T reverses" in result.message and "raised ValueError" in result.message


def test_attention_is_checked_with_0_to_3_leading_axes_and_fewer_queries_than_keys():
    cases = lesson04._attention_cases(np.random.default_rng(0))
    assert {Q.ndim for _, Q, _, _ in cases} == {2, 3, 4, 5}
    assert any(Q.shape[-2] < K.shape[-2] for _, Q, K, _ in cases)
    # the case where K.T runs silently: b = n_k = d_k
    assert any(Q.ndim == 3 and Q.shape[0] == K.shape[-2] == K.shape[-1] for _, Q, K, _ in cases)


def test_a_hard_coded_attention_fails():
    Q = np.ones((2, 3, 4))
    fixed = ref_attention(Q, Q, Q)
    assert checks.attention.check(lambda Q, K, V: fixed).passed is False


# ------------------------------------------------------------------------------ prediction


@pytest.mark.parametrize(
    "guess, passed, mistake",
    [("fall", True, None), ("rise", False, "picked_rise"), ("stay", False, "picked_stay"),
     (None, None, None)],
)  # fmt: skip
def test_the_temperature_prediction_is_explained_either_way(guess, passed, mistake):
    result = checks.cat_at_temperature_10.check(guess)
    assert result.passed is passed
    assert result.mistake == (f"cat_at_temperature_10.{mistake}" if mistake else None)
    if guess is not None:
        assert "flattens towards 1/n" in result.message


def test_the_prediction_matches_the_running_example():
    import helpers

    tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
    X = helpers.build_Z(tokens)
    W = helpers.seeded_projections(helpers.D_MODEL, n_heads=helpers.N_HEADS, seed=0)
    Q, K, V = (X @ W[name][0] for name in ("W_Q", "W_K", "W_V"))
    cat = tokens.index("cat")
    top = [
        helpers.scaled_dot_product_attention(Q, K, V, scale=1 / (2.0 * T))[1][cat].max()
        for T in (1.0, 10.0)
    ]
    assert top[1] < top[0]  # "fall"


# ------------------------------------------------------------------------------ ★★★ T -> 0


def zero_t_loops(Q, K, V):
    scores = Q @ K.T
    weights = np.zeros(scores.shape)
    for i, row in enumerate(scores):
        top = [j for j, s in enumerate(row) if s == row.max()]
        for j in top:
            weights[i, j] = 1 / len(top)
    return weights @ V, weights


def zero_t_tiny_temperature(Q, K, V):
    import helpers

    weights = helpers.softmax(Q @ K.T / np.sqrt(Q.shape[-1]) / 1e-6)  # stable, so T can be tiny
    return weights @ V, weights


def zero_t_einsum_isclose(Q, K, V):
    s = np.einsum("qd,kd->qk", Q, K) / np.sqrt(Q.shape[-1])
    top = np.isclose(s, s.max(-1, keepdims=True)).astype(float)
    weights = top / np.einsum("qk->q", top)[:, None]
    return np.einsum("qk,kv->qv", weights, V), weights


@pytest.mark.parametrize(
    "answer",
    [ref_zero_temperature, zero_t_loops, zero_t_tiny_temperature,
     zero_t_einsum_isclose],
)  # fmt: skip
def test_correct_zero_temperature_limits_pass(answer):
    result = checks.zero_temperature_attention.check(answer)
    assert result.passed is True, result.message


def _zero_t_argmax(Q, K, V):
    s = Q @ K.T
    weights = np.eye(K.shape[0])[s.argmax(axis=-1)]
    return weights @ V, weights


def _zero_t_small_but_finite(Q, K, V):
    weights = _stable_softmax(Q @ K.T / np.sqrt(Q.shape[-1]) / 0.3)
    return weights @ V, weights


def _zero_t_argmin(Q, K, V):
    s = Q @ K.T
    low = s == s.min(axis=-1, keepdims=True)
    weights = low / low.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def _zero_t_uniform(Q, K, V):
    weights = np.full((Q.shape[0], K.shape[0]), 1 / K.shape[0])
    return weights @ V, weights


def _zero_t_ordinary(Q, K, V):
    return ref_attention(Q, K, V)


def _zero_t_over_queries(Q, K, V):
    s = Q @ K.T
    top = (s == s.max(axis=0, keepdims=True)).astype(float)
    weights = top / np.maximum(top.sum(axis=-1, keepdims=True), 1)
    return weights @ V, weights


def _zero_t_ties_not_shared(Q, K, V):
    s = Q @ K.T
    weights = (s == s.max(axis=-1, keepdims=True)).astype(float)
    return weights @ V, weights


ZERO_T_MISTAKES = {
    _zero_t_argmax: ("np.argmax picks only the first", "one_of_ties"),
    _zero_t_small_but_finite: ("still positive, as at any finite temperature",
                               "finite_temperature"),
    _zero_t_argmin: ("the keys with the *lowest* score", "lowest_score"),
    _zero_t_uniform: ("that is the limit T -> infinity", "uniform"),
    _zero_t_ordinary: ("the ordinary attention weights, at T = 1", "temperature_one"),
    _zero_t_over_queries: ("the top score of each column", "argmax_over_queries"),
    _zero_t_ties_not_shared: ("a row with two tied keys sums to 2", "ties_not_normalised"),
}  # fmt: skip


@pytest.mark.parametrize("mistake", list(ZERO_T_MISTAKES), ids=lambda f: f.__name__)
def test_each_zero_temperature_mistake_gets_its_own_message(mistake):
    result = checks.zero_temperature_attention.check(mistake)
    words, mistake_id = ZERO_T_MISTAKES[mistake]
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"zero_temperature_attention.{mistake_id}", result.message


def test_the_zero_temperature_inputs_hold_exact_ties():
    for _, Q, K, _ in lesson04_temperature._zero_t_cases(np.random.default_rng(0)):
        s = Q @ K.T
        assert (s == s.max(axis=-1, keepdims=True)).sum(axis=-1).max() >= 2


# ------------------------------------------------------------------------------ both


def test_an_answer_that_raises_is_reported_with_its_line():
    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.summ(axis=-1, keepdims=True)

    result = checks.softmax.check(softmax)
    assert result.passed is False
    assert "raised AttributeError" in result.message
    assert "e.summ(axis=-1, keepdims=True)" in result.message and "at line" in result.message


@pytest.mark.parametrize(
    "exercise", [checks.softmax, checks.attention, checks.zero_temperature_attention]
)
def test_hints_and_solution_are_shown(exercise):
    assert "Hint 1 of 3" in repr(exercise.hint(1)) and exercise.stars in (1, 2, 3)
    solution = repr(exercise.solution())
    assert f"def {exercise.name}(" in solution
    namespace = {"np": np}
    exec(exercise.solution().text, namespace)
    assert exercise.check(namespace[exercise.name]).passed is True


def test_a_max_without_keepdims_on_a_non_square_matrix_points_at_keepdims():
    def softmax(z):
        e = np.exp(z - z.max(axis=-1))  # (n, m) - (n,): a broadcasting error when n != m
        return e / e.sum(axis=-1, keepdims=True)

    # The check's square case names this mistake first; the rectangular cases raise.
    grade = checks.softmax._grade
    only_rectangular = exercise.Exercise(
        "softmax", "softmax(z)", lambda call: grade(lambda z: call(z[:, :-1])), None, []
    )
    result = only_rectangular.check(softmax)
    assert result.passed is False and "ValueError" in result.message
    assert "keepdims=True" in result.message and "z.max(axis=-1))" in result.message


def test_a_correct_attention_calling_an_unfinished_softmax_is_told_which_one():
    def softmax(z):
        raise NotImplementedError("replace this line with your answer")

    def attention(Q, K, V):
        weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
        return weights @ V, weights

    result = checks.attention.check(attention)
    assert result.passed is False and "not attempted" not in str(result).lower()
    assert "attention calls softmax" in result.message and "helpers.softmax" in result.message


def test_a_wrongly_shaped_output_reads_as_a_sentence():
    def attention(Q, K, V):
        weights = ref_softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
        return weights @ K, weights  # K is (n, 16), V is (n, 3)

    message = checks.attention.check(attention).message
    assert "(self-attention): your output has shape (" in message, message
    assert "'s output" not in message


def test_the_keepdims_hint_is_only_for_a_reduction_along_an_axis():
    from helpers.checks.messages import reduces_without_keepdims

    assert reduces_without_keepdims("e = np.exp(z - z.max(-1))")
    assert reduces_without_keepdims("m = np.max(z, axis=-1)")
    assert reduces_without_keepdims("s = e / np.sum(e, -1)")
    assert not reduces_without_keepdims("e = np.exp(z - z.max(axis=-1, keepdims=True))")
    assert not reduces_without_keepdims("y = x + np.ones(17) * e.sum()")  # one number
    assert not reduces_without_keepdims("m = np.max(z)")


# ------------------------------------------------------------------------------ the lesson itself

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _code_cells(path):
    """The code cells of a jupytext py:percent file, as strings."""
    cells = path.read_text(encoding="utf-8").split("# %%")
    return [c for c in cells if not c.lstrip(" ").startswith("[markdown]")]


def test_the_softmax_answer_is_not_on_screen_in_the_learners_copy():
    """Exercise 1 asks for the stable, row-wise softmax: no cell of the learner's copy may show
    it (the lesson text's "Build it yourself" cell defines it; ours calls helpers.softmax)."""
    cells = _code_cells(_ROOT / "notebooks" / "04_softmax_and_attention.py")
    shown = [c for c in cells if "max(axis=-1, keepdims=True)" in c or "max(-1, keepdims" in c]
    assert shown == [], shown
    defs = [c for c in cells if "def softmax(" in c]
    assert len(defs) == 1 and "NotImplementedError" in defs[0], defs


def test_the_build_it_cell_still_prints_the_lesson_texts_numbers():
    import json

    nb = json.loads((_ROOT / "solutions" / "04_softmax_and_attention.ipynb").read_text("utf-8"))
    cell = next(c for c in nb["cells"] if "that's 'self'-attention" in "".join(c["source"]))
    printed = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    for row in ("[0.452 0.369 0.179]", "[0.744 0.117 0.139]", "[0.818 0.099 0.083]",
                "[-0.275 -0.698 -0.833  0.551]", "[-0.742 -1.385 -0.952  0.879]",
                "row sums: [1. 1. 1.]"):  # fmt: skip
        assert row in printed, printed


# ------------------------------------------------------------------------------ the sweep
# tests/test_checks_sweep.py runs every answer below over many seeded draws: the correct ones
# must pass every draw, each mistake must be named by its id on at least 99 % of them.


def softmax_copies_input(z):
    z = np.array(z, dtype=np.float64, copy=True)
    return np.exp(z - z.max(-1, keepdims=True)) / np.exp(z - z.max(-1, keepdims=True)).sum(
        -1, keepdims=True
    )


def attention_copies_inputs(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=np.float64).copy() for a in (Q, K, V))
    return ref_attention(Q, K, V)


SWEEP = {
    "softmax": {
        "correct": [ref_softmax, softmax_loops, softmax_float32, softmax_in_place,
                    softmax_global_shift_per_row_logsumexp, softmax_rows_in_plain_python,
                    softmax_copies_input],
        "mistakes": {mistake_id: f for f, (_, mistake_id) in SOFTMAX_MISTAKES.items()},
    },
    "attention": {
        "correct": [ref_attention, attention_loops, attention_einsum_float32, attention_reshape,
                    attention_copies_inputs],
        "mistakes": {mistake_id: f for f, (_, mistake_id) in ATTENTION_MISTAKES.items()},
    },
    "zero_temperature_attention": {
        "correct": [ref_zero_temperature, zero_t_loops, zero_t_tiny_temperature,
                    zero_t_einsum_isclose],
        "mistakes": {mistake_id: f for f, (_, mistake_id) in ZERO_T_MISTAKES.items()},
    },
}  # fmt: skip


def test_the_softmax_is_called_positive_only_with_its_floating_point_caveat_printed():
    source = (_ROOT / "solutions" / "04_softmax_and_attention.py").read_text("utf-8")
    assert "score 800 below its row's maximum already gets a weight of exactly 0" in source
    assert "helpers.softmax([0, -800]) = [1. 0.]" in built_lessons.printed(
        "04_softmax_and_attention"
    )
