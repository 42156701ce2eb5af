"""Lesson 06 checks: correct answers pass, each catalogued mistake is named by its stable id."""

import re

import numpy as np
import pytest
from support.check_tables import assert_mistakes_distinct

import helpers
from helpers import checks

cross_attention = checks.cross_attention
multi_head_attention = checks.multi_head_attention
multi_query_attention = checks.multi_query_attention


# Answers never call into the check module (its .reference is refused like a helper): the
# reference answers below are the tests' own copies.


def ref_cross(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    real = np.arange(K.shape[-2]) < np.asarray(kv_lengths)[:, None]
    scores = np.where(real[:, None, :], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def ref_mha(X, W_Q, W_K, W_V, W_O):
    heads, weights = [], []
    for a in range(W_Q.shape[0]):
        Q, K, V = X @ W_Q[a], X @ W_K[a], X @ W_V[a]
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        A = np.exp(scores - scores.max(axis=-1, keepdims=True))
        A = A / A.sum(axis=-1, keepdims=True)
        heads.append(A @ V)
        weights.append(A)
    return np.concatenate(heads, axis=-1) @ W_O, np.stack(weights, axis=-3)


def ref_mqa(X, W_Q, W_K, W_V, W_O):
    K, V = (X @ W_K)[..., None, :, :], (X @ W_V)[..., None, :, :]  # (..., 1, n, d)
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    A = np.exp(scores - scores.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    heads = A @ V  # (..., h, n, d_v)
    return np.concatenate([heads[..., a, :, :] for a in range(len(W_Q))], axis=-1) @ W_O, A


def softmax_rows(s, axis=-1):
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def assert_named(exercise, answer, mistake, pattern):
    result = exercise.check(answer)
    assert result.passed is False and result.mistake == f"{exercise.name}.{mistake}", result
    assert re.search(pattern, result.message), result.message


# ---------------------------------------------------------------------------------------------
# The prediction


def test_the_shape_prediction_explains_each_answer():
    assert checks.cross_attention_shape.check("4x6").passed is True
    wrong = checks.cross_attention_shape.check("6x4")
    assert wrong.passed is False and wrong.mistake == "cross_attention_shape.picked_6x4"
    assert "one row per query" in wrong.message
    assert checks.cross_attention_shape.check(None).passed is None


# ---------------------------------------------------------------------------------------------
# cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths)


def cross_loops(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    """Sequence by sequence, query by query, over the real keys only; padded weights are 0."""
    b, n_q, n_k = len(X_q), X_q.shape[1], X_kv.shape[1]
    out, weights = np.zeros((b, n_q, W_V.shape[1])), np.zeros((b, n_q, n_k))
    for i in range(b):
        L = int(kv_lengths[i])
        K, V = X_kv[i, :L] @ W_K, X_kv[i, :L] @ W_V
        for q in range(n_q):
            query = X_q[i, q] @ W_Q
            w = softmax_rows(K @ query / np.sqrt(len(query)))
            weights[i, q, :L] = w
            out[i, q] = w @ V
    return out, weights


def cross_via_helpers(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    mask = np.arange(X_kv.shape[1]) < np.asarray(kv_lengths)[:, None]  # (b, n_k)
    return helpers.scaled_dot_product_attention(
        X_q @ W_Q, X_kv @ W_K, X_kv @ W_V, mask=mask[:, None, :]
    )


def cross_einsum_finite_fill(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
    s = np.einsum("bqd,bkd->bqk", Q, K) / np.sqrt(Q.shape[-1])
    pad = np.arange(K.shape[1])[None, None, :] >= np.asarray(kv_lengths)[:, None, None]
    w = softmax_rows(np.where(pad, -1e9, s))  # a large negative fill works too
    return np.einsum("bqk,bkv->bqv", w, V), w


@pytest.mark.parametrize(
    "answer", [ref_cross, cross_loops, cross_via_helpers, cross_einsum_finite_fill]
)
def test_correct_cross_attention_passes(answer):
    for _ in range(2):
        result = cross_attention.check(answer)
        assert result.passed is True, result.message


def cross_variant(how):
    def answer(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
        Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
        scale = {"unscaled": 1, "scale_d_model": X_q.shape[-1]}.get(how, Q.shape[-1])
        s = Q @ np.swapaxes(K, 1, 2) / np.sqrt(scale)
        pos = np.arange(K.shape[1])
        real = {
            "off_by_one": pos[None, :] <= kv_lengths[:, None],
            "inverted_mask": pos[None, :] >= kv_lengths[:, None],
        }.get(how, pos[None, :] < kv_lengths[:, None])
        if how == "no_padding_mask":
            w = softmax_rows(s)
        elif how == "zeroed_after_softmax":
            w = softmax_rows(s) * real[:, None, :]
        else:
            w = softmax_rows(np.where(real[:, None, :], s, -np.inf))
        return w @ V, w

    return answer


CROSS_MISTAKES = {
    "no_padding_mask": (cross_variant("no_padding_mask"), r"padded keys get weight"),
    "zeroed_after_softmax": (cross_variant("zeroed_after_softmax"), r"after the softmax"),
    "off_by_one": (cross_variant("off_by_one"), r"one padded key too"),
    "inverted_mask": (cross_variant("inverted_mask"), r"wrong way round"),
    "unscaled": (cross_variant("unscaled"), r"not scaled"),
    "scale_d_model": (cross_variant("scale_d_model"), r"sqrt\(d_model\)"),
    "roles_swapped": (lambda Xq, Xkv, WQ, WK, WV, L: ref_cross(Xkv, Xq, WQ, WK, WV, L),
                      r"roles are swapped"),
    "self_attention": (
        lambda Xq, Xkv, WQ, WK, WV, L: ref_cross(Xq, Xq, WQ, WK, WV, np.full(len(L), Xq.shape[1])),
        r"self-attention on X_q"),
    "transposed": (lambda *a: (ref_cross(*a)[0], np.swapaxes(ref_cross(*a)[1], 1, 2)),
                   r"weights are transposed"),
}  # fmt: skip


@pytest.mark.parametrize("mistake", list(CROSS_MISTAKES))
def test_each_cross_attention_mistake_is_named(mistake):
    answer, pattern = CROSS_MISTAKES[mistake]
    assert_named(cross_attention, answer, mistake, pattern)


def test_cross_attention_mistake_messages_are_distinct():
    assert_mistakes_distinct(cross_attention, CROSS_MISTAKES)


def test_cross_attention_pair_slips_are_named():
    assert cross_attention.check(lambda *a: ref_cross(*a)[0]).mistake == (
        "cross_attention.returned_one"
    )
    assert cross_attention.check(lambda *a: ref_cross(*a)[::-1]).mistake == (
        "cross_attention.swapped_pair"
    )
    result = cross_attention.check(lambda *a: (2 * ref_cross(*a)[0], ref_cross(*a)[1]))
    assert result.passed is False and "not weights @" in result.message


def cross_with_dot_T(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    Q, K = X_q @ W_Q, X_kv @ W_K
    return Q @ K.T, None  # K.T reverses every axis of a batch


def test_cross_attention_with_k_dot_t_on_a_batch_reports_the_line():
    result = cross_attention.check(cross_with_dot_T)
    assert result.passed is False and result.mistake == "cross_attention.dot_t_on_batch"
    assert "np.swapaxes" in result.message


# ---------------------------------------------------------------------------------------------
# multi_head_attention(X, W_Q, W_K, W_V, W_O): any leading axes, d_v != d_k


def mha_einsum(X, W_Q, W_K, W_V, W_O):
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)
    K = np.einsum("...nd,hdk->...hnk", X, W_K)
    V = np.einsum("...nd,hdv->...hnv", X, W_V)
    A = softmax_rows(np.einsum("...hqk,...hnk->...hqn", Q, K) / np.sqrt(Q.shape[-1]))
    heads = A @ V  # (..., h, n, d_v)
    concat = np.swapaxes(heads, -3, -2).reshape(*X.shape[:-1], -1)  # (..., n, h * d_v)
    return concat @ W_O, A


def mha_per_head_blocks_of_W_O(X, W_Q, W_K, W_V, W_O):
    """concat @ W_O == sum_a head_a @ (head a's rows of W_O)."""
    out, weights = 0.0, []
    d_v = W_V.shape[-1]
    for a in range(len(W_Q)):
        Q, K, V = X @ W_Q[a], X @ W_K[a], X @ W_V[a]
        A = softmax_rows(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
        out = out + (A @ V) @ W_O[a * d_v : (a + 1) * d_v]
        weights.append(A)
    return out, np.stack(weights, axis=-3)


@pytest.mark.parametrize(
    "answer",
    [
        ref_mha,
        mha_einsum,
        mha_per_head_blocks_of_W_O,
    ],
)
def test_correct_multi_head_attention_passes(answer):
    result = multi_head_attention.check(answer)
    assert result.passed is True, result.message


def test_the_shown_solution_agrees_with_the_course_helper():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3, 6, 8))
    W = helpers.seeded_projections(8, n_heads=2, seed=0)
    got, want = ref_mha(X, **W), helpers.multi_head_attention(X, **W)
    assert all(np.allclose(a, b) for a, b in zip(got, want))


def mha_variant(combine="concat", shared=False, scale="d_k", stack_axis=-3):
    def answer(X, W_Q, W_K, W_V, W_O):
        heads, weights = [], []
        for a in range(len(W_Q)):
            k = 0 if shared else a
            Q, K, V = X @ W_Q[k], X @ W_K[k], X @ W_V[k]
            d = {"d_k": Q.shape[-1], "none": 1, "d_model": X.shape[-1]}[scale]
            A = softmax_rows(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d))
            heads.append(A @ V)
            weights.append(A)
        W = np.stack(weights, axis=stack_axis)
        if combine == "concat":
            return np.concatenate(heads, axis=-1) @ W_O, W
        if combine == "reversed":
            return np.concatenate(heads[::-1], axis=-1) @ W_O, W
        if combine == "reshape":
            H = np.stack(heads, axis=-3)  # (..., h, n, d_v)
            return H.reshape(*X.shape[:-1], -1) @ W_O, W
        if combine == "divided":
            return np.concatenate(heads, axis=-1) @ W_O / len(heads), W
        if combine == "no_w_o":
            return np.concatenate(heads, axis=-1), W
        if combine == "mean":
            return np.mean(heads, axis=0), W
        if combine == "rows":
            return np.concatenate(heads, axis=-2) @ W_O[: heads[0].shape[-1]], W
        if combine == "mean_weights":
            return np.concatenate(heads, axis=-1) @ W_O, np.mean(weights, axis=0)
        if combine == "one_weights":
            return np.concatenate(heads, axis=-1) @ W_O, weights[0]
        raise ValueError(combine)

    return answer


MHA_MISTAKES = {
    "unscaled": (mha_variant(scale="none"), r"not scaled"),
    "scale_d_model": (mha_variant(scale="d_model"), r"sqrt\(d_model\)"),
    "shared_projections": (mha_variant(shared=True), r"same weights"),
    "heads_reversed": (mha_variant("reversed"), r"wrong order"),
    "reshape_without_transpose": (mha_variant("reshape"), r"straight to"),
    "averaged_heads": (mha_variant("divided"), r"averaged the heads' contributions"),
    "no_w_o": (mha_variant("no_w_o"), r"you forgot W_O"),
    "output_one_head_width": (mha_variant("mean"), r"did you average"),
    "heads_as_rows": (mha_variant("rows"), r"as extra rows"),
    "weights_averaged": (mha_variant("mean_weights"), r"average over the heads"),
    "one_head_weights": (mha_variant("one_weights"), r"one head's; return"),
    "head_axis_first": (mha_variant(stack_axis=0), r"in front of the batch axes"),
}


@pytest.mark.parametrize("mistake", list(MHA_MISTAKES))
def test_each_multi_head_attention_mistake_is_named(mistake):
    answer, pattern = MHA_MISTAKES[mistake]
    for _ in range(2):
        assert_named(multi_head_attention, answer, mistake, pattern)


def test_multi_head_attention_mistake_messages_are_distinct():
    assert_mistakes_distinct(multi_head_attention, MHA_MISTAKES)


def test_a_two_dimensional_only_answer_is_caught_on_the_batch():
    def two_d_only(X, W_Q, W_K, W_V, W_O):
        heads, weights = [], []
        for a in range(len(W_Q)):
            Q, K, V = X @ W_Q[a], X @ W_K[a], X @ W_V[a]
            A = softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1]))  # K.T: fine in 2-D only
            heads.append(A @ V)
            weights.append(A)
        return np.concatenate(heads, axis=-1) @ W_O, np.stack(weights)

    result = multi_head_attention.check(two_d_only)
    assert result.passed is False and result.mistake == "multi_head_attention.dot_t_on_batch"
    assert "np.swapaxes(K, -1, -2)" in result.message


# ---------------------------------------------------------------------------------------------
# multi_query_attention(X, W_Q, W_K, W_V, W_O): the challenge


def mqa_loops(X, W_Q, W_K, W_V, W_O):
    """One sentence and one head at a time, over every leading index."""
    lead, n, h = X.shape[:-2], X.shape[-2], len(W_Q)
    out = np.zeros((*lead, n, W_O.shape[-1]))
    weights = np.zeros((*lead, h, n, n))
    for idx in np.ndindex(*lead):
        K, V = X[idx] @ W_K, X[idx] @ W_V  # this sentence's shared keys and values
        heads = []
        for a in range(h):
            A = softmax_rows(X[idx] @ W_Q[a] @ K.T / np.sqrt(K.shape[-1]))
            weights[idx][a] = A
            heads.append(A @ V)
        out[idx] = np.concatenate(heads, axis=-1) @ W_O
    return out, weights


def mqa_float32_course_attention(X, W_Q, W_K, W_V, W_O):
    """float32, and the course's scaled_dot_product_attention, which broadcasts K over heads."""
    X, W_Q, W_K, W_V, W_O = (np.asarray(a, np.float32) for a in (X, W_Q, W_K, W_V, W_O))
    Q = X[..., None, :, :] @ W_Q  # (..., 1, n, d_model) @ (h, d_model, d_k): (..., h, n, d_k)
    heads, A = helpers.scaled_dot_product_attention(
        Q, (X @ W_K)[..., None, :, :], (X @ W_V)[..., None, :, :]
    )
    concat = np.swapaxes(heads, -3, -2).reshape(*X.shape[:-1], -1)  # (..., n, h * d_v)
    return concat @ W_O, A


def mqa_copies_inputs(X, W_Q, W_K, W_V, W_O):
    X = np.array(X, dtype=np.float64, copy=True)
    W_Q, W_K, W_V, W_O = (np.ascontiguousarray(a) for a in (W_Q, W_K, W_V, W_O))
    return ref_mqa(X, W_Q, W_K, W_V, W_O)


def mqa_einsum(X, W_Q, W_K, W_V, W_O):
    """No head axis on K and V at all: einsum's letters line them up with every head."""
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)
    K, V = X @ W_K, X @ W_V  # (..., n, d_k), (..., n, d_v)
    A = softmax_rows(np.einsum("...hqd,...kd->...hqk", Q, K) / np.sqrt(Q.shape[-1]))
    H = np.einsum("...hqk,...kv->...qhv", A, V)  # (..., n, h, d_v): heads side by side per token
    return H.reshape(*H.shape[:-2], -1) @ W_O, A


MQA_CORRECT = [ref_mqa, mqa_loops, mqa_float32_course_attention, mqa_copies_inputs, mqa_einsum]


@pytest.mark.parametrize("answer", MQA_CORRECT)
def test_correct_multi_query_attention_passes(answer):
    for _ in range(3):
        result = multi_query_attention.check(answer)
        assert result.passed is True, result.message


def test_multi_head_attention_with_the_keys_repeated_is_refused():
    """multi_query = helpers.multi_head_attention with W_K, W_V stacked h times: assembled from
    a helper that is not on the exercise's list."""

    def via_multi_head(X, W_Q, W_K, W_V, W_O):
        h = len(W_Q)
        return helpers.multi_head_attention(X, W_Q, np.stack([W_K] * h), np.stack([W_V] * h), W_O)

    result = multi_query_attention.check(via_multi_head)
    assert result.mistake == "multi_query_attention.calls_helper", result.message


def mqa_variant(how):
    def answer(X, W_Q, W_K, W_V, W_O):
        K, V = (X @ W_K)[..., None, :, :], (X @ W_V)[..., None, :, :]
        Ws = np.stack([W_Q[0]] * len(W_Q)) if how == "one_query_head" else W_Q
        Q = np.einsum("...nd,hdk->...hnk", X, Ws)
        widths = {"unscaled": 1, "scale_d_model": X.shape[-1]}
        scale = np.sqrt(widths.get(how, K.shape[-1]))
        A = softmax_rows(Q @ np.swapaxes(K, -1, -2) / scale)  # (..., h, n, n)
        heads = A @ V  # (..., h, n, d_v)
        h, n, d_v = heads.shape[-3:]
        per_head = [heads[..., a, :, :] for a in range(h)]
        concat = np.concatenate(per_head, axis=-1)
        if how == "no_w_o":
            return concat, A
        if how == "heads_reversed":
            return np.concatenate(per_head[::-1], axis=-1) @ W_O, A
        if how == "reshape_without_transpose":
            return heads.reshape(*heads.shape[:-3], n, h * d_v) @ W_O, A
        if how == "averaged_heads":
            return concat @ W_O / h, A
        if how == "one_head_weights":
            return concat @ W_O, A[..., 0, :, :]
        if how == "head_axis_first":
            return concat @ W_O, np.moveaxis(A, -3, 0)
        return concat @ W_O, A

    return answer


def mqa_two_d_only(X, W_Q, W_K, W_V, W_O):
    """Right for one sentence; on a batch X @ W_Q lines X's batch axis up with the heads."""
    K, V = X @ W_K, X @ W_V
    A = softmax_rows(X @ W_Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    heads = A @ V
    return np.concatenate(list(heads), axis=-1) @ W_O, A


MQA_MISTAKES = {
    how: (mqa_variant(how), pattern)
    for how, pattern in {
        "one_query_head": r"used W_Q\[0\] for all",
        "unscaled": r"not scaled",
        "scale_d_model": r"divided by sqrt\(d_model\)",
        "no_w_o": r"forgot W_O",
        "heads_reversed": r"wrong order",
        "reshape_without_transpose": r"straight to",
        "averaged_heads": r"divided by h",
        "one_head_weights": r"one head's; return",
        "head_axis_first": r"in front of the batch axes",
    }.items()
}
MQA_MISTAKES["no_head_axis"] = (mqa_two_d_only, r"an axis of length 1 where the queries have")


def mqa_keys_without_head_axis(X, W_Q, W_K, W_V, W_O):
    """The queries per head done right, the shared K and V left without a head axis."""
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)
    K, V = X @ W_K, X @ W_V
    A = softmax_rows(Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1]))
    return np.concatenate(list(np.moveaxis(A @ V, -3, 0)), axis=-1) @ W_O, A


def test_a_broadcast_failure_shows_the_learners_line_and_does_not_write_the_answer():
    # issue 34: the message blamed X @ W_Q, gave np.einsum(...) and K[..., None, :, :] in
    # full, and was cut off before the learner's own failing line
    result = checks.multi_query_attention.check(mqa_keys_without_head_axis)
    assert result.mistake == "multi_query_attention.no_head_axis", result.message
    assert "at line" in result.message and not result.message.endswith(" ...")
    assert "np.einsum" not in result.message and "None, :, :" not in result.message


@pytest.mark.parametrize("mistake", list(MQA_MISTAKES))
def test_each_multi_query_mistake_is_named(mistake):
    answer, pattern = MQA_MISTAKES[mistake]
    for _ in range(3):
        assert_named(multi_query_attention, answer, mistake, pattern)


def test_multi_query_mistake_messages_are_distinct():
    assert_mistakes_distinct(multi_query_attention, MQA_MISTAKES)


def test_multi_query_is_checked_on_batches_one_of_them_as_many_sentences_as_heads():
    """issue 17: the ★★★ was 2-D only, easier than the ★★ before it. A 2-D-only answer now
    fails, and scaling by sqrt(d_model) is named."""
    assert multi_query_attention.check(mqa_two_d_only).passed is False
    result = multi_query_attention.check(mqa_variant("scale_d_model"))
    assert result.mistake == "multi_query_attention.scale_d_model", result.message


# ---------------------------------------------------------------------------------------------
# Every exercise: stubs, exceptions, hard-coded answers, hints and solutions


def test_a_stub_is_not_attempted_yet():
    def stub(*args):
        raise NotImplementedError("replace this line with your answer")

    for exercise in (cross_attention, multi_head_attention, multi_query_attention):
        assert exercise.check(stub).passed is None


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


def test_solutions_run_and_pass():
    for exercise in (cross_attention, multi_head_attention, multi_query_attention):
        namespace = {"np": np, "helpers": helpers}
        exec(exercise.solution().text, namespace)
        assert exercise.check(namespace[exercise.name]).passed is True
        assert len(exercise._hints) >= 3 and exercise.lesson == "06"
    assert multi_query_attention.stars == 3


# ---------------------------------------------------------------------------------------------
# The lesson's prose


_LESSON = __import__("pathlib").Path(__file__).resolve().parents[1] / "solutions"


def _lesson06_markdown():
    text = (_LESSON / "06_cross_attention_and_heads.py").read_text(encoding="utf-8")
    return " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))


def test_what_trained_heads_do_is_cited_not_claimed():
    """Lesson 09 finds no head that links "it" to its noun; the lesson cites Clark et al. (2019)
    for what BERT's heads were found to do, and points to lesson 09's own measurement."""
    prose = _lesson06_markdown()
    assert "Clark et al. (2019" in prose and "What Does BERT Look At?" in prose
    assert "direct objects attend to their verbs" in prose  # the paper's direction (head 8-10)
    assert "(09_real_model.ipynb)" in prose


# ---------------------------------------------------------------------------------------------
# The sweep: tests/test_checks_sweep.py runs every answer below over many seeded draws; the
# correct ones must pass every draw, each mistake must be named by its id on 99 % of them.


def mha_copies_inputs(X, W_Q, W_K, W_V, W_O):
    X = np.array(X, dtype=np.float64, copy=True)
    return ref_mha(X, *(np.ascontiguousarray(W) for W in (W_Q, W_K, W_V, W_O)))


def mha_course_attention_float32(X, W_Q, W_K, W_V, W_O):
    X, W_Q, W_K, W_V, W_O = (np.asarray(a, np.float32) for a in (X, W_Q, W_K, W_V, W_O))
    Q, K, V = (X[..., None, :, :] @ W for W in (W_Q, W_K, W_V))  # (..., h, n, d)
    heads, A = helpers.scaled_dot_product_attention(Q, K, V)
    return np.swapaxes(heads, -3, -2).reshape(*X.shape[:-1], -1) @ W_O, A


SWEEP = {
    "cross_attention": {
        "correct": [ref_cross, cross_loops, cross_via_helpers, cross_einsum_finite_fill],
        "mistakes": {m: answer for m, (answer, _) in CROSS_MISTAKES.items()}
        | {"dot_t_on_batch": cross_with_dot_T},
    },
    "multi_head_attention": {
        "correct": [ref_mha, mha_einsum, mha_per_head_blocks_of_W_O, mha_copies_inputs,
                    mha_course_attention_float32],
        "mistakes": {m: answer for m, (answer, _) in MHA_MISTAKES.items()},
    },
    "multi_query_attention": {
        "correct": MQA_CORRECT,
        "mistakes": {m: answer for m, (answer, _) in MQA_MISTAKES.items()},
    },
}  # fmt: skip
