"""Lesson 04's checks: right answers pass in any style, each known mistake gets its own message."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import checks
from helpers.checks import _core, lesson04

# ------------------------------------------------------------------------------ softmax


def softmax_loops(z):
    out = np.empty_like(z)
    for i, row in enumerate(z):
        m = max(row)
        e = [np.exp(x - m) for x in row]
        out[i] = [x / sum(e) for x in e]
    return out


def softmax_float32(z):
    z = np.asarray(z, dtype=np.float32)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / np.einsum("ij->i", e)[:, None]


def softmax_global_shift_per_row_logsumexp(z):
    m = z.max(axis=-1, keepdims=True)
    return np.exp(z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))


def softmax_in_place(z):
    z -= z.max(axis=-1, keepdims=True)  # modifies its input: fine, the check passes copies
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


@pytest.mark.parametrize(
    "answer", [lesson04._reference_softmax, softmax_loops, softmax_float32,
               softmax_global_shift_per_row_logsumexp, softmax_in_place]
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


def _returns_nothing(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    e / e.sum(axis=-1, keepdims=True)  # noqa: B018 - the forgotten return is the point


SOFTMAX_MISTAKES = {
    _naive: "NaN or inf on large scores",
    _global_max: "maximum of the whole matrix",
    _min_shift: "you subtracted the row's minimum",
    _mean_shift: "you subtracted the row's mean",
    _axis0: "columns sum to 1",
    _whole: "the whole matrix sums to 1",
    _no_exp: "forget np.exp? Dividing the scores",
    _no_exp_shifted: "forget np.exp? You subtracted the max",
    _not_normalised: "do not sum to 1. After np.exp, divide",
    _exp_only: "never divided by the sum",
    _no_keepdims: "without keepdims=True",
    _no_keepdims_max: "broadcasts the max of row j across column j",
    _no_keepdims_either: "add keepdims=True to both",
    _no_keepdims_no_max: "divide by the row sum with keepdims=True",
    _returns_nothing: "returned None",
}


@pytest.mark.parametrize("mistake", list(SOFTMAX_MISTAKES), ids=lambda f: f.__name__)
def test_each_softmax_mistake_gets_its_own_message(mistake):
    with np.errstate(all="ignore"):
        result = checks.softmax.check(mistake)
    assert result.passed is False
    assert SOFTMAX_MISTAKES[mistake] in result.message, result.message
    others = [m for f, m in SOFTMAX_MISTAKES.items() if f is not mistake]
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


def test_a_hard_coded_softmax_fails():
    worked = np.array([[1.0, 2.0, 3.0]])
    fixed = lesson04._reference_softmax(worked)
    assert checks.softmax.check(lambda z: fixed).passed is False


# ------------------------------------------------------------------------------ attention


def _stable_softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention_loops(Q, K, V):
    n_q, n_k, d_k = len(Q), len(K), Q.shape[1]
    weights = np.zeros((n_q, n_k))
    for i in range(n_q):
        scores = [Q[i] @ K[j] / d_k**0.5 for j in range(n_k)]
        weights[i] = _stable_softmax(np.array(scores))
    output = np.array([sum(weights[i, j] * V[j] for j in range(n_k)) for i in range(n_q)])
    return output, weights


def attention_einsum_float32(Q, K, V):
    Q, K, V = (np.asarray(a, np.float32) for a in (Q, K, V))
    A = _stable_softmax(np.einsum("qd,kd->qk", Q, K) / np.float32(np.sqrt(Q.shape[-1])))
    return np.einsum("qk,kv->qv", A, V), A


@pytest.mark.parametrize(
    "answer", [lesson04._reference_attention, attention_loops, attention_einsum_float32]
)
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


_no_scale = _attention_with(lambda Q, K: _stable_softmax(Q @ K.T))
_by_d_k = _attention_with(lambda Q, K: _stable_softmax(Q @ K.T / _d_k(Q)))
_by_n = _attention_with(lambda Q, K: _stable_softmax(Q @ K.T / len(K)))
_transposed_scores = _attention_with(lambda Q, K: _stable_softmax(K @ Q.T / np.sqrt(_d_k(Q))))
_wrong_axis = _attention_with(lambda Q, K: _stable_softmax(Q @ K.T / np.sqrt(_d_k(Q)), axis=0))


def _naive_softmax_inside(Q, K, V):
    e = np.exp(Q @ K.T / np.sqrt(_d_k(Q)))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A


def _returns_scores(Q, K, V):
    scores = Q @ K.T / np.sqrt(_d_k(Q))
    return _stable_softmax(scores) @ V, scores


def _returns_weights_twice(Q, K, V):
    A = _stable_softmax(Q @ K.T / np.sqrt(_d_k(Q)))
    return A, A


def _returns_weights_then_output(Q, K, V):
    output, A = lesson04._reference_attention(Q, K, V)
    return A, output


def _returns_only_output(Q, K, V):
    return lesson04._reference_attention(Q, K, V)[0]


def _returns_only_weights(Q, K, V):
    return lesson04._reference_attention(Q, K, V)[1]


def _transposed_output(Q, K, V):
    output, A = lesson04._reference_attention(Q, K, V)
    return output.T, A


def _transposed_weights(Q, K, V):
    output, A = lesson04._reference_attention(Q, K, V)
    return output, A.T


def _returns_none(Q, K, V):
    lesson04._reference_attention(Q, K, V)


ATTENTION_MISTAKES = {
    _no_scale: "the weights are not scaled",
    _by_d_k: "you divided the scores by d_k",
    _by_n: "divided the scores by the sequence length",
    _transposed_scores: "the scores are transposed: K Q^T",
    _wrong_axis: "columns sum to 1, not the rows",
    _naive_softmax_inside: "your weights contain NaN or inf",
    _returns_scores: "holds the scores Q K^T / sqrt(d_k)",
    _returns_weights_twice: "the first value has the weights' shape",
    _returns_weights_then_output: "returned (weights, output)",
    _returns_only_output: "only the output",
    _returns_only_weights: "only the weights",
    _transposed_output: "looks transposed",
    _transposed_weights: "the weights are transposed",
    _returns_none: "returned None",
}


@pytest.mark.parametrize("mistake", list(ATTENTION_MISTAKES), ids=lambda f: f.__name__)
def test_each_attention_mistake_gets_its_own_message(mistake):
    with np.errstate(all="ignore"):
        result = checks.attention.check(mistake)
    assert result.passed is False
    assert ATTENTION_MISTAKES[mistake] in result.message, result.message
    others = [m for f, m in ATTENTION_MISTAKES.items() if f is not mistake]
    assert not any(m in result.message for m in others), result.message


def test_attention_is_also_checked_with_fewer_queries_than_keys():
    def square_only(Q, K, V):
        if Q.shape[0] != K.shape[0]:
            raise ValueError("I assumed n_q == n_k")
        return lesson04._reference_attention(Q, K, V)

    result = checks.attention.check(square_only)
    assert result.passed is False and "n_q == n_k" in result.message


def test_attention_is_also_checked_on_one_token():
    def breaks_on_one_token(Q, K, V):
        if len(Q) == 1:
            return np.zeros((1, V.shape[1])), np.zeros((1, 1))
        return lesson04._reference_attention(Q, K, V)

    result = checks.attention.check(breaks_on_one_token)
    assert result.passed is False and "one-token" in result.message


# ------------------------------------------------------------------------------ both


@pytest.mark.parametrize("exercise", [checks.softmax, checks.attention])
def test_stub_is_not_attempted_yet(exercise):
    def stub(*args):
        raise NotImplementedError("replace this line with your answer")

    result = exercise.check(stub)
    assert result.passed is None
    assert "not attempted" in str(result).lower()


def test_an_answer_that_raises_is_reported_with_its_line():
    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.summ(axis=-1, keepdims=True)

    result = checks.softmax.check(softmax)
    assert result.passed is False
    assert "raised AttributeError" in result.message
    assert "e.summ(axis=-1, keepdims=True)" in result.message and "at line" in result.message


@pytest.mark.parametrize("exercise", [checks.softmax, checks.attention])
def test_hints_and_solution_are_shown(exercise):
    assert "Hint 1 of 3" in repr(exercise.hint(1))
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
    only_rectangular = _core.Exercise(
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
        weights = lesson04._reference_softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
        return weights @ K, weights  # K is (n, 16), V is (n, 3)

    message = checks.attention.check(attention).message
    assert "(self-attention): your output has shape (" in message, message
    assert "'s output" not in message


def test_the_keepdims_hint_is_only_for_a_reduction_along_an_axis():
    from helpers.checks._core import _reduces_without_keepdims

    assert _reduces_without_keepdims("e = np.exp(z - z.max(-1))")
    assert _reduces_without_keepdims("m = np.max(z, axis=-1)")
    assert _reduces_without_keepdims("s = e / np.sum(e, -1)")
    assert not _reduces_without_keepdims("e = np.exp(z - z.max(axis=-1, keepdims=True))")
    assert not _reduces_without_keepdims("y = x + np.ones(17) * e.sum()")  # one number
    assert not _reduces_without_keepdims("m = np.max(z)")
