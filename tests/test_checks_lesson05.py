"""Lesson 05 checks: the reference passes, each catalogued mistake gets its own message."""

import numpy as np
import pytest

from helpers.checks import lesson05

causal_mask = lesson05.causal_mask
masked_attention = lesson05.masked_attention


# ---------------------------------------------------------------------------------------------
# causal_mask(n)


def loop_mask(n):
    M = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1):
            M[i, j] = True
    return M


@pytest.mark.parametrize(
    "answer",
    [
        lesson05._reference_causal_mask,
        loop_mask,
        lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None],
        lambda n: ~np.triu(np.ones((n, n), dtype=bool), k=1),
    ],
)
def test_correct_causal_masks_pass(answer):
    result = causal_mask.check(answer)
    assert result.passed is True, result.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda n: np.triu(np.ones((n, n), dtype=bool)), "upper triangle"),
        (lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1), "leaves the diagonal out"),
        (lambda n: np.triu(np.ones((n, n), dtype=bool), k=1), "is inverted"),
        (lambda n: np.ones((n, n), dtype=bool), "True everywhere"),
        (lambda n: np.tril(np.ones((n, n))), "right pattern, but dtype float64"),
        (lambda n: np.tril(np.ones((n, n), dtype=int)), "right pattern, but dtype int"),
        (lambda n: np.tril(np.full((n, n), 2.0)), "values other than 0 and 1"),
        (lambda n: np.triu(np.full((n, n), -np.inf), k=1), "additive mask M"),
        (lambda n: np.where(np.tril(np.ones((n, n), bool)), 0.0, -1e9), "additive mask M"),
        (lambda n: None, "returned None"),
        (lambda n: np.tril(np.ones((n, n + 1), dtype=bool)), "expected ("),
    ],
)
def test_each_causal_mask_mistake_gets_its_own_message(answer, words):
    result = causal_mask.check(answer)
    assert result.passed is False
    assert words in result.message, result.message


def test_a_mask_wrong_in_one_cell_is_located():
    def one_cell_off(n):
        M = np.tril(np.ones((n, n), dtype=bool))
        M[-1, 0] = False
        return M

    result = causal_mask.check(one_cell_off)
    assert result.passed is False and "row" in result.message and "column 0" in result.message


def test_a_hard_coded_mask_fails():
    fixed = np.tril(np.ones((6, 6), dtype=bool))
    assert causal_mask.check(lambda n: fixed).passed is False


# ---------------------------------------------------------------------------------------------
# masked_attention(Q, K, V, mask)


def stable_softmax(s, axis=-1):
    s = s - s.max(axis=axis, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


def loop_answer(Q, K, V, mask):
    n_q, n_k = mask.shape
    weights = np.zeros((n_q, n_k))
    for i in range(n_q):
        allowed = [j for j in range(n_k) if mask[i, j]]
        s = np.array([Q[i] @ K[j] for j in allowed]) / np.sqrt(Q.shape[1])
        e = np.exp(s - s.max())
        weights[i, allowed] = e / e.sum()
    return weights @ V, weights


def einsum_float32_answer(Q, K, V, mask):
    s = np.einsum("qd,kd->qk", Q, K) / np.float32(np.sqrt(Q.shape[-1]))
    w = stable_softmax(np.where(mask, s, np.float32(-1e9))).astype(np.float32)
    return np.einsum("qk,kv->qv", w, V), w


def renormalise_after_softmax(Q, K, V, mask):
    w = stable_softmax(Q @ K.T / np.sqrt(Q.shape[1])) * mask
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


@pytest.mark.parametrize(
    "answer",
    [
        lesson05._reference_masked_attention,
        loop_answer,
        einsum_float32_answer,
        lambda Q, K, V, mask: list(lesson05._reference_masked_attention(Q, K, V, mask)),
    ],
)
def test_correct_masked_attention_passes(answer):
    result = masked_attention.check(answer)
    assert result.passed is True, result.message


def wrong(weights_fn):
    """A learner answer whose weights are weights_fn(scores_scaled, Q, K, V, mask)."""

    def answer(Q, K, V, mask):
        w = weights_fn(Q @ K.T / np.sqrt(Q.shape[1]), Q, K, V, mask)
        return w @ V, w

    return answer


def naive_softmax(s):
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


MISTAKES = [
    (wrong(lambda s, Q, K, V, m: stable_softmax(s) * m), "without renormalising"),
    (wrong(lambda s, Q, K, V, m: stable_softmax(s * m)), "multiplying the blocked scores by 0"),
    (wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, s, 0.0))), "multiplying"),
    (wrong(lambda s, Q, K, V, m: stable_softmax(s)), "ignore the mask"),
    (wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, -np.inf, s))), "blocked the True"),
    (
        wrong(
            lambda s, Q, K, V, m: stable_softmax(
                np.where(np.tril(np.ones(m.shape, bool)), s, -np.inf)
            )
        ),
        "your own causal mask",
    ),
    (
        wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, s, -np.inf), axis=0)),
        "normalises each column",
    ),
    (
        wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, s * np.sqrt(Q.shape[1]), -np.inf))),
        "not scaled",
    ),
    (
        wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, s / np.sqrt(Q.shape[1]), -np.inf))),
        "divided by d_k",
    ),
    (
        wrong(
            lambda s, Q, K, V, m: stable_softmax(
                np.where(m, s * np.sqrt(Q.shape[1] / V.shape[1]), -np.inf)
            )
        ),
        "sqrt(d_v)",
    ),
    (wrong(lambda s, Q, K, V, m: naive_softmax(np.where(m, s, -np.inf))), "overflows"),
    (renormalise_after_softmax, "underflows to 0"),
    (lambda Q, K, V, m: lesson05._reference_masked_attention(Q, K, V, m)[0], "only the output"),
    (lambda Q, K, V, m: lesson05._reference_masked_attention(Q, K, V, m)[1], "only the weights"),
    (
        lambda Q, K, V, m: lesson05._reference_masked_attention(Q, K, V, m)[::-1],
        "(weights, output)",
    ),
    (lambda Q, K, V, m: None, "returned None"),
    (
        lambda Q, K, V, m: (
            lesson05._reference_masked_attention(Q, K, V, m)[0].T,
            lesson05._reference_masked_attention(Q, K, V, m)[1],
        ),
        "looks transposed",
    ),
    (
        lambda Q, K, V, m: (
            lesson05._reference_masked_attention(Q, K, V, m)[0],
            lesson05._reference_masked_attention(Q, K, V, m)[1].T,
        ),
        "transpose",
    ),
    (
        lambda Q, K, V, m: (
            lesson05._reference_masked_attention(Q, K, V, m)[1].T @ V,
            lesson05._reference_masked_attention(Q, K, V, m)[1],
        ),
        "weights.T @ V",
    ),
]


@pytest.mark.parametrize(("answer", "words"), MISTAKES)
def test_each_masked_attention_mistake_gets_its_own_message(answer, words):
    result = masked_attention.check(answer)
    assert result.passed is False
    assert words in result.message, result.message


def filled_with(fill):
    """A learner answer that fills the blocked scores with ``fill`` instead of -inf."""
    return wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, s, fill)))


def additive_mask_answer(Q, K, V, mask):
    M = np.where(mask, 0.0, -np.inf)  # lesson 05's additive mask
    w = stable_softmax(Q @ K.T / np.sqrt(Q.shape[1]) + M)
    return w @ V, w


@pytest.mark.parametrize("fill", [-5.0, -30.0, -100.0, -700.0])
def test_a_finite_fill_is_named_on_every_run(fill):
    for _ in range(20):  # fresh random inputs each time: the diagnosis must not depend on them
        result = masked_attention.check(filled_with(fill))
        assert result.passed is False, result.message
        assert f"finite value (≈ {fill:.3g})" in result.message, result.message
        assert "multiplying" not in result.message


@pytest.mark.parametrize(
    "answer", [filled_with(-1e4), filled_with(-1e9), additive_mask_answer], ids=str
)
def test_fills_whose_exp_is_exactly_0_pass_on_every_run(answer):
    for _ in range(20):
        result = masked_attention.check(answer)
        assert result.passed is True, result.message


def test_a_fill_of_0_is_still_multiplying_by_0():
    for _ in range(10):
        assert (
            "multiplying the blocked scores by 0"
            in masked_attention.check(filled_with(0.0)).message
        )


def test_blocked_weights_must_be_exactly_0():
    def almost(Q, K, V, mask):
        out, w = lesson05._reference_masked_attention(Q, K, V, mask)
        return out, np.where(mask, w, 1e-9)  # within compare's tolerance, but not 0

    result = masked_attention.check(almost)
    assert result.passed is False and "instead of exactly 0" in result.message, result.message


def test_no_mistake_is_named_as_another():
    messages = [masked_attention.check(answer).message for answer, _ in MISTAKES]
    for i, message in enumerate(messages):
        for j, (_, words) in enumerate(MISTAKES):
            if i != j and words not in MISTAKES[i][1] and MISTAKES[i][1] not in words:
                assert words not in message, (MISTAKES[i][1], message)


def test_a_stub_is_not_attempted_yet():
    def stub(Q, K, V, mask):
        raise NotImplementedError("replace this line with your answer")

    def causal_mask_stub(n):
        raise NotImplementedError("replace this line with your answer")

    assert masked_attention.check(stub).passed is None
    assert causal_mask.check(causal_mask_stub).passed is None


def test_an_exception_in_the_answer_is_reported_with_its_line():
    def broken(Q, K, V, mask):
        d_k = Q.shape[2]  # Q is (n_q, d_k): there is no axis 2
        return Q / d_k, Q

    result = masked_attention.check(broken)
    assert result.passed is False
    assert "IndexError" in result.message and "d_k = Q.shape[2]" in result.message


def test_an_answer_that_modifies_its_inputs_cannot_fool_the_check():
    def in_place(Q, K, V, mask):
        mask[:] = True
        return lesson05._reference_masked_attention(Q, K, V, mask)

    assert masked_attention.check(in_place).passed is False


def test_solution_and_hints_are_shown():
    assert "np.where(mask" in masked_attention.solution().text
    assert "def masked_attention(" in masked_attention.solution().text
    assert "def causal_mask(" in causal_mask.solution().text
    assert "tril" in causal_mask.hint(3).text
