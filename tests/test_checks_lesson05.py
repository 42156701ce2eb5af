"""Lesson 05 checks: the reference passes, each catalogued mistake gets its own message."""

import numpy as np
import pytest

from helpers.checks import lesson05, lesson05_decoding, lesson05_padding

causal_mask = lesson05.causal_mask
masked_attention = lesson05.masked_attention

# Answers never call into the check module (its .reference is refused like a helper): the
# reference answers below are the tests' own copies.


def ref_causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))


def ref_masked_attention(Q, K, V, mask):
    scores = np.where(mask, Q @ K.T / np.sqrt(Q.shape[-1]), -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def ref_causal_build_it(seed):
    np.random.seed(seed)
    X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    Wq, Wk, Wv = (np.random.randn(4, 4) * 0.5 for _ in range(3))
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = np.where(np.tril(np.ones((3, 3), dtype=bool)), Q @ K.T / 2.0, -np.inf)
    A = np.exp(scores - scores.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return A, A @ V


def ref_padding_mask(lengths, n):
    return np.arange(n)[None, :] < np.asarray(lengths)[:, None]


def ref_batched_masked_attention(Q, K, V, lengths, causal):
    n = Q.shape[1]
    mask = (np.arange(n)[None, :] < np.asarray(lengths)[:, None])[:, None, :]
    if causal:
        mask = mask & np.tril(np.ones((n, n), dtype=bool))
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def ref_decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    q = x_t @ W_Q
    K_cache = np.vstack([K_cache, x_t @ W_K])
    V_cache = np.vstack([V_cache, x_t @ W_V])
    s = K_cache @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    w = w / w.sum()
    return w @ V_cache, K_cache, V_cache


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
        ref_causal_mask,
        loop_mask,
        lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None],
        lambda n: ~np.triu(np.ones((n, n), dtype=bool), k=1),
    ],
)
def test_correct_causal_masks_pass(answer):
    result = causal_mask.check(answer)
    assert result.passed is True, result.message


@pytest.mark.parametrize(
    ("answer", "words", "mistake_id"),
    [
        (lambda n: np.triu(np.ones((n, n), dtype=bool)), "upper triangle", "upper_triangle"),
        (lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1), "leaves the diagonal out",
         "diagonal_left_out"),
        (lambda n: np.triu(np.ones((n, n), dtype=bool), k=1), "is inverted", "inverted"),
        (lambda n: np.ones((n, n), dtype=bool), "True everywhere", "all_true"),
        (lambda n: np.tril(np.ones((n, n))), "right pattern, but dtype float64", "not_boolean"),
        (lambda n: np.tril(np.ones((n, n), dtype=int)), "right pattern, but dtype int",
         "not_boolean"),
        (lambda n: np.tril(np.full((n, n), 2.0)), "values other than 0 and 1", "not_01"),
        (lambda n: np.triu(np.full((n, n), -np.inf), k=1), "additive mask M", "additive_mask"),
        (lambda n: np.where(np.tril(np.ones((n, n), bool)), 0.0, -1e9), "additive mask M",
         "additive_mask"),
        (lambda n: None, "returned None", "returned_none"),
        (lambda n: np.tril(np.ones((n, n + 1), dtype=bool)), "expected (", "wrong_shape"),
    ],
)  # fmt: skip
def test_each_causal_mask_mistake_gets_its_own_message(answer, words, mistake_id):
    result = causal_mask.check(answer)
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"causal_mask.{mistake_id}", result.mistake


def test_the_inverted_mask_states_pytorchs_two_conventions_right():
    message = causal_mask.check(lambda n: np.triu(np.ones((n, n), dtype=bool), k=1)).message
    assert "F.scaled_dot_product_attention) True = may attend" in message
    assert "nn.MultiheadAttention's boolean masks mean the opposite" in message


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
        ref_masked_attention,
        loop_answer,
        einsum_float32_answer,
        lambda Q, K, V, mask: list(ref_masked_attention(Q, K, V, mask)),
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
    (wrong(lambda s, Q, K, V, m: stable_softmax(np.where(m, s, -5.0))), "finite value"),
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
    (renormalise_after_softmax, "every allowed weight underflows"),
    (lambda Q, K, V, m: ref_masked_attention(Q, K, V, m)[0], "only the output"),
    (lambda Q, K, V, m: ref_masked_attention(Q, K, V, m)[1], "only the weights"),
    (
        lambda Q, K, V, m: ref_masked_attention(Q, K, V, m)[::-1],
        "(weights, output)",
    ),
    (lambda Q, K, V, m: None, "returned None"),
    (
        lambda Q, K, V, m: (
            ref_masked_attention(Q, K, V, m)[0].T,
            ref_masked_attention(Q, K, V, m)[1],
        ),
        "looks transposed",
    ),
    (
        lambda Q, K, V, m: (
            ref_masked_attention(Q, K, V, m)[0],
            ref_masked_attention(Q, K, V, m)[1].T,
        ),
        "transpose",
    ),
    (
        lambda Q, K, V, m: (
            ref_masked_attention(Q, K, V, m)[1].T @ V,
            ref_masked_attention(Q, K, V, m)[1],
        ),
        "weights.T @ V",
    ),
]


MISTAKE_IDS = [
    "after_no_renorm", "times_zero", "times_zero", "no_mask", "inverted", "finite_fill",
    "own_causal", "axis0", "no_scale", "scale_dk", "scale_dv", "overflow",
    "after_renorm_underflow", "returned_one", "returned_one", "swapped_pair", "returned_none",
    "transposed", "transposed", "output_transposed_weights",
]  # fmt: skip


@pytest.mark.parametrize(("answer", "words", "mistake_id"),
                         [(*m, i) for m, i in zip(MISTAKES, MISTAKE_IDS, strict=True)])  # fmt: skip
def test_each_masked_attention_mistake_gets_its_own_message(answer, words, mistake_id):
    result = masked_attention.check(answer)
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"masked_attention.{mistake_id}", (result.mistake, result.message)


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
    "answer",
    [filled_with(-1e4), filled_with(-1e9), additive_mask_answer],
    ids=["fill -1e4", "fill -1e9", "additive -inf mask"],
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
        out, w = ref_masked_attention(Q, K, V, mask)
        return out, np.where(mask, w, 1e-9)  # within compare's tolerance, but not 0

    result = masked_attention.check(almost)
    assert result.passed is False and "instead of exactly 0" in result.message, result.message
    assert result.mistake == "masked_attention.not_exactly_zero"


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
        return ref_masked_attention(Q, K, V, mask)

    assert masked_attention.check(in_place).passed is False


def test_solution_and_hints_are_shown():
    assert "np.where(mask" in masked_attention.solution().text
    assert "def masked_attention(" in masked_attention.solution().text
    assert "def causal_mask(" in causal_mask.solution().text
    assert "tril" in causal_mask.hint(3).text


# ---------------------------------------------------------------------------------------------
# causal_build_it(seed): the lesson text's cell made causal

causal_build_it = lesson05.causal_build_it
_X3 = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])


def _cell(seed, weights_from_scores, out_from_full=False):
    """The lesson text's cell for ``seed``, with the weights computed by the given rule."""
    np.random.seed(seed)
    Wq = np.random.randn(4, 4) * 0.5
    Wk = np.random.randn(4, 4) * 0.5
    Wv = np.random.randn(4, 4) * 0.5
    Q, K, V = _X3 @ Wq, _X3 @ Wk, _X3 @ Wv
    scores = Q @ K.T / np.sqrt(4)
    with np.errstate(all="ignore"):
        A = weights_from_scores(scores)
    return A, (stable_softmax(scores) if out_from_full else A) @ V


TRIL3 = np.tril(np.ones((3, 3), dtype=bool))


def build_it_loops(seed):
    def rows(s):
        A = np.zeros((3, 3))
        for i in range(3):
            e = np.exp(s[i, : i + 1] - s[i, : i + 1].max())
            A[i, : i + 1] = e / e.sum()
        return A

    return _cell(seed, rows)


def build_it_additive(seed):
    return _cell(seed, lambda s: stable_softmax(s + np.triu(np.full((3, 3), -np.inf), k=1)))


def build_it_helpers(seed):
    import helpers

    def rule(s):
        return helpers.softmax(np.where(helpers.causal_mask(3), s, -np.inf))

    return _cell(seed, rule)


def build_it_renormalised(seed):
    def rule(s):
        late = stable_softmax(s) * TRIL3
        return late / late.sum(axis=1, keepdims=True)

    return _cell(seed, rule)


@pytest.mark.parametrize(
    "answer",
    [ref_causal_build_it, build_it_loops, build_it_additive, build_it_helpers,
     build_it_renormalised],
)  # fmt: skip
def test_correct_causal_cells_pass(answer):
    result = causal_build_it.check(answer)
    assert result.passed is True, result.message


BUILD_IT_MISTAKES = {
    "no_mask": (lambda seed: _cell(seed, stable_softmax), "this is the cell unchanged"),
    "upper_triangle": (
        lambda seed: _cell(seed, lambda s: stable_softmax(np.where(TRIL3.T, s, -np.inf))),
        "keeps the upper triangle",
    ),
    "diagonal_left_out": (
        lambda seed: _cell(
            seed, lambda s: stable_softmax(np.where(np.tril(TRIL3, -1), s, -np.inf))
        ),
        "leaves the diagonal out",
    ),
    "after_no_renorm": (
        lambda seed: _cell(seed, lambda s: stable_softmax(s) * TRIL3),
        "without renormalising",
    ),
    "times_zero": (
        lambda seed: _cell(seed, lambda s: stable_softmax(s * TRIL3)),
        "multiplied the blocked scores by 0",
    ),
    "out_from_unmasked": (
        lambda seed: _cell(seed, lambda s: stable_softmax(np.where(TRIL3, s, -np.inf)), True),
        "out still comes from the unmasked weights",
    ),
    "ignores_seed": (lambda seed: ref_causal_build_it(0), "numbers of seed 0"),
    "swapped_pair": (lambda seed: ref_causal_build_it(seed)[::-1], "(out, A)"),
    "returned_one": (lambda seed: ref_causal_build_it(seed)[0],
                     "one array of shape (3, 3); return two values: `return A, out`"),
}  # fmt: skip


@pytest.mark.parametrize("mistake_id", list(BUILD_IT_MISTAKES))
def test_each_causal_cell_mistake_gets_its_own_message(mistake_id):
    answer, words = BUILD_IT_MISTAKES[mistake_id]
    result = causal_build_it.check(answer)
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"causal_build_it.{mistake_id}", result.message


def test_the_causal_cell_check_leaves_the_global_random_state_alone():
    np.random.seed(123)
    expected = np.random.rand()
    np.random.seed(123)
    causal_build_it.check(ref_causal_build_it)
    assert np.random.rand() == expected


def test_the_lesson_cells_row_0_becomes_1_0_0():
    A, out = ref_causal_build_it(0)
    assert np.allclose(A[0], [1, 0, 0]) and np.allclose(A.sum(axis=1), 1)


# ---------------------------------------------------------------------------------------------
# padding_mask(lengths, n)

padding_mask = lesson05_padding.padding_mask


def padding_loops(lengths, n):
    mask = np.zeros((len(lengths), n), dtype=bool)
    for s, length in enumerate(lengths):
        for j in range(length):
            mask[s, j] = True
    return mask


@pytest.mark.parametrize(
    "answer",
    [
        ref_padding_mask,
        padding_loops,
        lambda lengths, n: np.less.outer(np.arange(n), lengths).T,
        lambda lengths, n: np.array([np.arange(n) < length for length in lengths]).reshape(-1, n),
    ],
)
def test_correct_padding_masks_pass(answer):
    result = padding_mask.check(answer)
    assert result.passed is True, result.message


PADDING_MISTAKES = {
    "inverted": (lambda L, n: np.arange(n) >= L[:, None], "inverted"),
    "includes_first_pad": (lambda L, n: np.arange(n) <= L[:, None], "one True too many"),
    "drops_last_token": (lambda L, n: np.arange(n) < L[:, None] - 1, "one True too few"),
    "left_padded": (lambda L, n: np.arange(n) >= n - L[:, None], "left padding"),
    "all_true": (lambda L, n: np.ones((len(L), n), bool), "ignores the lengths"),
    "one_length": (
        lambda L, n: np.tile(np.arange(n) < L[0], (len(L), 1)),
        "first sentence's length",
    ),
    "not_boolean": (lambda L, n: (np.arange(n) < L[:, None]).astype(int), "dtype int64"),
    "transposed": (lambda L, n: (np.arange(n) < L[:, None]).T, "looks transposed"),
    "additive_mask": (
        lambda L, n: np.where(np.arange(n) < L[:, None], 0.0, -np.inf),
        "additive mask",
    ),
}


@pytest.mark.parametrize("mistake_id", list(PADDING_MISTAKES))
def test_each_padding_mask_mistake_gets_its_own_message(mistake_id):
    answer, words = PADDING_MISTAKES[mistake_id]
    result = padding_mask.check(answer)
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"padding_mask.{mistake_id}", result.message


def test_a_hard_coded_padding_mask_fails():
    fixed = np.array([[True, True, False], [True, False, False]])
    assert padding_mask.check(lambda lengths, n: fixed).passed is False


# ---------------------------------------------------------------------------------------------
# batched_masked_attention(Q, K, V, lengths, causal)

batched = lesson05_padding.batched_masked_attention


def _batched(rule):
    """An answer whose mask is rule(real (b, n), tril (n, n), causal), broadcast to (b, n, n)."""

    def answer(Q, K, V, lengths, causal):
        b, n, d_k = Q.shape
        real = np.arange(n)[None, :] < np.asarray(lengths)[:, None]
        tril = np.tril(np.ones((n, n), dtype=bool))
        mask = rule(real, tril, causal)
        scores = np.einsum("bqd,bkd->bqk", Q, K) / np.sqrt(d_k)
        with np.errstate(all="ignore"):
            w = stable_softmax(np.where(mask, scores, -np.inf))
        return w @ V, w

    return answer


batched_vectorised = _batched(
    lambda real, tril, causal: real[:, None, :] & (tril if causal else True)
)


def batched_loops(Q, K, V, lengths, causal):
    b, n, d_k = Q.shape
    weights = np.zeros((b, n, n))
    for s in range(b):
        for i in range(n):
            keys = [j for j in range(n) if j < lengths[s] and (j <= i or not causal)]
            scores = np.array([Q[s, i] @ K[s, j] for j in keys]) / np.sqrt(d_k)
            e = np.exp(scores - scores.max())
            weights[s, i, keys] = e / e.sum()
    return weights @ V, weights


def batched_helpers(Q, K, V, lengths, causal):
    """The helpers it may use: helpers.padding_mask, helpers.causal_mask, helpers.softmax."""
    import helpers

    n = Q.shape[1]
    mask = helpers.padding_mask(lengths, n)[:, None, :]  # (b, 1, n): broadcasts over queries
    if causal:
        mask = mask & helpers.causal_mask(n)
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
    w = helpers.softmax(scores, axis=-1)
    return w @ V, w


def batched_via_scaled_dot_product_attention(Q, K, V, lengths, causal):
    import helpers

    n = Q.shape[1]
    mask = helpers.padding_mask(lengths, n)[:, None, :]
    if causal:
        mask = mask & helpers.causal_mask(n)
    return helpers.scaled_dot_product_attention(Q, K, V, mask=mask)


def test_masked_attention_through_the_course_helper_is_refused_in_both_exercises():
    """issue 17: helpers.scaled_dot_product_attention(mask=...) was refused for masked_attention
    but accepted for batched_masked_attention; both exercises' answer, both refused."""
    import helpers

    result = batched.check(batched_via_scaled_dot_product_attention)
    assert result.mistake == "batched_masked_attention.calls_helper", result.message
    assert "helpers.scaled_dot_product_attention" in result.message
    result = masked_attention.check(
        lambda Q, K, V, mask: helpers.scaled_dot_product_attention(Q, K, V, mask=mask)
    )
    assert result.mistake == "masked_attention.calls_helper", result.message


def batched_additive_float_mask(Q, K, V, lengths, causal):
    n = Q.shape[1]
    allowed = (np.arange(n) < lengths[:, None])[:, None, :] & (
        np.tril(np.ones((n, n), bool)) if causal else True
    )
    M = np.where(allowed, 0.0, -1e9)  # an additive float mask, -1e9 for blocked keys
    w = stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + M)
    return w @ V, w


@pytest.mark.parametrize(
    "answer",
    [ref_batched_masked_attention, batched_vectorised, batched_loops,
     batched_helpers, batched_additive_float_mask],
)  # fmt: skip
def test_correct_batched_masked_attentions_pass(answer):
    result = batched.check(answer)
    assert result.passed is True, result.message


def _k_dot_T(Q, K, V, lengths, causal):
    n = Q.shape[1]
    mask = (np.arange(n) < lengths[:, None])[:, None, :] & (
        np.tril(np.ones((n, n), bool)) if causal else True
    )
    with np.errstate(all="ignore"):
        w = stable_softmax(np.where(mask, Q @ K.T / np.sqrt(Q.shape[-1]), -np.inf))
    return w @ V, w


def _zeroed_rows(Q, K, V, lengths, causal):
    out, w = ref_batched_masked_attention(Q, K, V, lengths, causal)
    real = np.arange(Q.shape[1])[None, :] < lengths[:, None]
    return out * real[:, :, None], w * real[:, :, None]


def _unscaled(Q, K, V, lengths, causal):
    return ref_batched_masked_attention(Q * np.sqrt(Q.shape[-1]), K, V, lengths,
                                                        causal)  # fmt: skip


def _times_zero(Q, K, V, lengths, causal):
    n = Q.shape[1]
    mask = (np.arange(n) < lengths[:, None])[:, None, :] & (
        np.tril(np.ones((n, n), bool)) if causal else True
    )
    w = stable_softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) * mask)
    return w @ V, w


BATCHED_MISTAKES = {
    "ignores_padding": (_batched(lambda real, tril, causal: tril if causal else np.ones_like(tril)),
                        "padded keys get weight"),
    "ignores_causal": (_batched(lambda real, tril, causal: real[:, None, :]),
                       "queries still see later keys"),
    "always_causal": (_batched(lambda real, tril, causal: real[:, None, :] & tril),
                      "your weights are causal anyway"),
    "masks_padded_queries": (
        _batched(lambda real, tril, causal: real[:, None, :] & real[:, :, None]
                 & (tril if causal else True)),
        "the padded query rows are NaN",
    ),
    "padding_on_query_axis": (
        _batched(lambda real, tril, causal: real[:, :, None] & (tril if causal else True)),
        "runs along the query axis",
    ),
    "includes_first_pad": (
        _batched(lambda real, tril, causal: np.concatenate(
            [real[:, :1], real[:, :-1] | real[:, 1:]], axis=1)[:, None, :]
            & (tril if causal else True)),
        "first padding position",
    ),
    "one_length": (_batched(lambda real, tril, causal: real[:1, None, :]
                            & (tril if causal else True)), "the first sentence's length"),
    "zeroed_padded_rows": (_zeroed_rows, "you zeroed the padded query rows"),
    "unscaled": (_unscaled, "the scores are not scaled"),
    "times_zero": (_times_zero, "multiplied blocked scores by 0"),
    "transpose_all_axes": (_k_dot_T, "K.T reverses every axis"),
}  # fmt: skip


@pytest.mark.parametrize("mistake_id", list(BATCHED_MISTAKES))
def test_each_batched_masked_attention_mistake_gets_its_own_message(mistake_id):
    answer, words = BATCHED_MISTAKES[mistake_id]
    result = batched.check(answer)
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"batched_masked_attention.{mistake_id}", result.message


def test_a_padded_query_row_attends_to_its_sentences_real_tokens():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(2, 5, 3)) for _ in range(3))
    lengths = np.array([5, 2])
    out, w = ref_batched_masked_attention(Q, K, V, lengths, True)
    assert np.all(np.isfinite(w)) and np.allclose(w.sum(-1), 1)
    assert np.all(w[1, :, 2:] == 0)  # no query of sentence 1 sees its padding
    for i in (3, 4):  # padded query rows: a softmax over the sentence's two real keys
        assert np.allclose(w[1, i, :2], stable_softmax(K[1, :2] @ Q[1, i] / np.sqrt(3)))


# ---------------------------------------------------------------------------------------------
# the prediction, and the ★★★ decode_step challenge


@pytest.mark.parametrize(
    "guess, passed, mistake",
    [("rise", True, None), ("Stay", False, "picked_stay"), ("fall", False, "picked_fall"),
     (None, None, None)],
)  # fmt: skip
def test_the_allowed_weight_prediction_is_explained_either_way(guess, passed, mistake):
    result = lesson05.allowed_weight_with_mask.check(guess)
    assert result.passed is passed
    if guess is not None:
        assert "share the whole budget of 1" in result.message
        assert result.mistake == (f"allowed_weight_with_mask.{mistake}" if mistake else None)


def test_the_allowed_weight_prediction_holds_on_the_running_example():
    import helpers

    tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
    X = helpers.build_Z(tokens, helpers.D_MODEL)
    W = helpers.seeded_projections(helpers.D_MODEL, n_heads=helpers.N_HEADS, seed=0)
    Q, K, V = X @ W["W_Q"][0], X @ W["W_K"][0], X @ W["W_V"][0]
    _, free = helpers.scaled_dot_product_attention(Q, K, V)
    _, masked = helpers.scaled_dot_product_attention(Q, K, V, mask=helpers.causal_mask(len(X)))
    sat, cat = tokens.index("sat"), tokens.index("cat")
    assert masked[sat, cat] > free[sat, cat]
    factor = masked[sat, : sat + 1] / free[sat, : sat + 1]  # every allowed weight, same factor
    assert np.allclose(factor, factor[0])


decode_step = lesson05_decoding.decode_step


def decode_concatenate(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    import helpers

    q = x_t @ W_Q
    K_cache = np.concatenate([K_cache, (x_t @ W_K)[None, :]])
    V_cache = np.concatenate([V_cache, (x_t @ W_V)[None, :]])
    out, _ = helpers.scaled_dot_product_attention(q[None, :], K_cache, V_cache)
    return out[0], K_cache, V_cache  # the helper's output is (1, d_v): its one row


def decode_loops_einsum(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    q = np.einsum("m,md->d", x_t, W_Q)
    K_cache = np.append(K_cache, [x_t @ W_K], axis=0)
    V_cache = np.append(V_cache, [x_t @ W_V], axis=0)
    s = np.array([q @ k for k in K_cache]) / np.sqrt(len(q))
    w = np.exp(s - s.max())
    w = w / w.sum()
    return np.einsum("k,kv->v", w, V_cache), K_cache, V_cache


@pytest.mark.parametrize("answer", [ref_decode_step, decode_concatenate, decode_loops_einsum])
def test_correct_decode_steps_pass(answer):
    result = decode_step.check(answer)
    assert result.passed is True, result.message


def _decode_with(out_rule):
    """An answer that grows the cache right but computes out_t = out_rule(q, k_t, K, V)."""

    def answer(x_t, K_cache, V_cache, W_Q, W_K, W_V):
        q, k_t = x_t @ W_Q, x_t @ W_K
        K_new, V_new = np.vstack([K_cache, k_t]), np.vstack([V_cache, x_t @ W_V])
        return out_rule(q, k_t, K_cache, V_cache, K_new, V_new), K_new, V_new

    return answer


def _attend(q, K, V, scale=True):
    s = K @ q / (np.sqrt(len(q)) if scale else 1.0)
    w = np.exp(s - s.max())
    return (w / w.sum()) @ V


def _no_grow(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    out, _, _ = ref_decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V)
    return out, K_cache, V_cache


def _holds_x(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    X_cache = np.array([*K_cache, x_t])  # the token itself, not its key
    V_new = np.array([*V_cache, x_t @ W_V])
    return V_new.mean(axis=0), X_cache, V_new


def _bad_contents(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    out, K_new, V_new = ref_decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V)
    return out, K_new[::-1], V_new[::-1]


DECODE_MISTAKES = {
    "attends_before_append": (
        _decode_with(lambda q, k, K, V, K2, V2: _attend(q, K, V) if len(K) else V2[-1]),
        "attends to the keys before this token only",
    ),
    "only_new_token": (_decode_with(lambda q, k, K, V, K2, V2: V2[-1]), "own value"),
    "first_key_only": (_decode_with(lambda q, k, K, V, K2, V2: V2[0]), "all the weight goes"),
    "unscaled": (_decode_with(lambda q, k, K, V, K2, V2: _attend(q, K2, V2, False)),
                 "not scaled"),
    "mean_of_values": (_decode_with(lambda q, k, K, V, K2, V2: V2.mean(axis=0)), "plain mean"),
    "key_as_query": (_decode_with(lambda q, k, K, V, K2, V2: _attend(k, K2, V2)),
                     "the query is x_t @ W_Q"),
    "cache_not_grown": (_no_grow, "still holds"),
    "cache_holds_x": (_holds_x, "the tokens x_t themselves"),
    "cache_contents": (_bad_contents, "appended as the last row"),
    "returned_one": (lambda *args: ref_decode_step(*args)[0], "three values"),
    # issue 34: a (1, d_v) row was squeezed silently though the prompt says (d_v,)
    "out_t_shape": (lambda *args: (lambda o, K, V: (o[None, :], K, V))(*ref_decode_step(*args)),
                    "its numbers are right, but it should be"),
}  # fmt: skip


@pytest.mark.parametrize("mistake_id", list(DECODE_MISTAKES))
def test_each_decode_step_mistake_gets_its_own_message(mistake_id):
    answer, words = DECODE_MISTAKES[mistake_id]
    result = decode_step.check(answer)
    assert result.passed is False
    assert words in result.message, result.message
    assert result.mistake == f"decode_step.{mistake_id}", result.message


@pytest.mark.parametrize(
    "exercise",
    [causal_mask, masked_attention, causal_build_it, padding_mask, batched, decode_step],
    ids=lambda e: e.name,
)
def test_every_exercise_has_stars_three_hints_and_a_runnable_solution(exercise):
    assert exercise.stars in (1, 2, 3) and len(exercise._hints) >= 3
    namespace = {"np": np}
    exec(exercise.solution().text, namespace)
    assert exercise.check(namespace[exercise.name]).passed is True

    def stub(*args):
        raise NotImplementedError

    assert exercise.check(stub).passed is None


# ---------------------------------------------------------------------------------------------
# The sweep: tests/test_checks_sweep.py runs every answer below over many seeded draws; the
# correct ones must pass every draw, each mistake must be named by its id on 99 % of them.


def _almost_zero(Q, K, V, mask):
    out, w = ref_masked_attention(Q, K, V, mask)
    return out, np.where(mask, w, 1e-9)  # within compare's tolerance, but not 0


def masked_copies_inputs(Q, K, V, mask):
    Q, K, V = (np.array(a, dtype=np.float64, copy=True) for a in (Q, K, V))
    return ref_masked_attention(Q, K, V, np.asarray(mask, dtype=bool).copy())


def decode_copies_inputs(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    args = (np.array(a, dtype=np.float64, copy=True) for a in (x_t, K_cache, V_cache))
    return ref_decode_step(*args, W_Q, W_K, W_V)


def masked_dtype_minimum_fill(Q, K, V, mask):
    """Blocked scores filled with the dtype's own minimum (what half-precision code does)."""
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = stable_softmax(np.where(mask, s, np.finfo(s.dtype).min))
    return w @ V, w


def batched_float32_dtype_minimum(Q, K, V, lengths, causal):
    Q, K, V = (np.asarray(a, np.float32) for a in (Q, K, V))
    n, d_k = Q.shape[1], Q.shape[2]
    mask = (np.arange(n) < np.asarray(lengths)[:, None])[:, None, :]
    if causal:
        mask = mask & np.tri(n, dtype=bool)
    s = np.einsum("bqd,bkd->bqk", Q, K) / np.float32(np.sqrt(d_k))
    w = stable_softmax(np.where(mask, s, np.finfo(np.float32).min))
    return w @ V, w


_ONES = np.ones  # the causal masks' mistakes, one answer each

SWEEP = {
    "causal_mask": {
        "correct": [ref_causal_mask, loop_mask,
                    lambda n: np.arange(n)[None, :] <= np.arange(n)[:, None],
                    lambda n: ~np.triu(np.ones((n, n), dtype=bool), k=1)],
        "mistakes": {
            "upper_triangle": lambda n: np.triu(_ONES((n, n), dtype=bool)),
            "diagonal_left_out": lambda n: np.tril(_ONES((n, n), dtype=bool), k=-1),
            "inverted": lambda n: np.triu(_ONES((n, n), dtype=bool), k=1),
            "all_true": lambda n: _ONES((n, n), dtype=bool),
            "not_boolean": lambda n: np.tril(_ONES((n, n))),
            "not_01": lambda n: np.tril(np.full((n, n), 2.0)),
            "additive_mask": lambda n: np.triu(np.full((n, n), -np.inf), k=1),
            "returned_none": lambda n: None,
            "wrong_shape": lambda n: np.tril(_ONES((n, n + 1), dtype=bool)),
        },
    },
    "masked_attention": {
        "correct": [ref_masked_attention, loop_answer, einsum_float32_answer,
                    masked_copies_inputs, masked_dtype_minimum_fill],
        "mistakes": {
            **{mistake_id: answer
               for (answer, _), mistake_id in zip(MISTAKES, MISTAKE_IDS, strict=True)},
            "not_exactly_zero": _almost_zero,
        },
    },
    "causal_build_it": {
        "correct": [ref_causal_build_it, build_it_loops, build_it_additive, build_it_helpers,
                    build_it_renormalised],
        "mistakes": {mistake_id: answer for mistake_id, (answer, _) in BUILD_IT_MISTAKES.items()},
    },
    "padding_mask": {
        "correct": [ref_padding_mask, padding_loops,
                    lambda lengths, n: np.less.outer(np.arange(n), lengths).T,
                    lambda L, n: np.array([np.arange(n) < m for m in L]).reshape(-1, n)],
        "mistakes": {mistake_id: answer for mistake_id, (answer, _) in PADDING_MISTAKES.items()},
    },
    "batched_masked_attention": {
        "correct": [ref_batched_masked_attention, batched_vectorised, batched_loops,
                    batched_helpers, batched_additive_float_mask, batched_float32_dtype_minimum],
        "mistakes": {mistake_id: answer for mistake_id, (answer, _) in BATCHED_MISTAKES.items()},
    },
    "decode_step": {
        "correct": [ref_decode_step, decode_concatenate, decode_loops_einsum,
                    decode_copies_inputs],
        "mistakes": {mistake_id: answer for mistake_id, (answer, _) in DECODE_MISTAKES.items()},
    },
}  # fmt: skip


def test_every_exercise_of_lessons_04_to_06_says_its_solution_prints_code():
    """issue 17: solution() prints the code of ★★★ challenges too; the lessons say so."""
    from pathlib import Path

    from helpers import checks
    from helpers.checks import Exercise

    root = Path(__file__).resolve().parents[1] / "solutions"
    text = " ".join(p.read_text("utf-8") for p in sorted(root.glob("0[456]_*.py")))
    text = " ".join(text.replace("#", " ").split())
    for exercise in checks.catalogue():
        if isinstance(exercise, Exercise) and exercise.lesson in ("04", "05", "06"):
            assert f"`checks.{exercise.name}.solution()`" in text, exercise.name


def _decode_with_mask_row(row):
    def decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V):
        import helpers

        K_cache = np.vstack([K_cache, x_t @ W_K])
        V_cache = np.vstack([V_cache, x_t @ W_V])
        t = len(K_cache) - 1
        mask = helpers.causal_mask(t + 1)[row]  # (t + 1,): the new query's row, or row 0
        s = np.where(mask, K_cache @ (x_t @ W_Q) / np.sqrt(W_Q.shape[1]), -np.inf)
        w = np.exp(s - s.max())
        return (w / w.sum()) @ V_cache, K_cache, V_cache

    return decode_step


def test_decode_step_with_the_helpers_causal_mask_is_judged_by_its_row():
    # issue 34: causal_mask was refused, for the right row and the wrong one alike
    assert decode_step.check(_decode_with_mask_row(-1)).passed is True
    wrong = decode_step.check(_decode_with_mask_row(0))
    assert wrong.mistake == "decode_step.first_key_only", wrong.message
    assert "row 0 of a causal mask" in wrong.message
