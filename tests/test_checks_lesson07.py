"""Lesson 07's checks accept every correct answer and name each catalogued mistake by its id."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from support import built_lessons
from support.check_tables import assert_mistakes_distinct

import helpers
from helpers import checks
from helpers.blockwise import online_softmax_steps
from helpers.blockwise import score_matrix_bytes as helpers_score_matrix_bytes
from helpers.checks import lesson07

# ---------------------------------------------------------------------------------------------
# score_matrix_bytes(n, h, batch, dtype)

check = checks.score_matrix_bytes.check


def itemsize(dtype):
    return np.dtype(dtype).itemsize


def numpy_int(n, h, batch, dtype):
    return np.int64(batch) * h * n**2 * np.empty(0, dtype).itemsize  # a NumPy integer


def with_math_prod(n, h, batch, dtype):
    return math.prod([batch, h, n, n, np.dtype(dtype).itemsize])


def bytes_written_out(n, h, batch, dtype):
    itemsize = np.dtype(dtype).itemsize  # bytes per number
    return batch * h * n * n * itemsize


def bytes_counted_in_loops(n, h, batch, dtype):
    """Sums the matrices one by one, as a Python int."""
    total = 0
    for _ in range(batch):
        for _ in range(h):
            total += n * n * np.zeros(1, dtype=dtype).nbytes
    return total


BYTES_CORRECT = [bytes_written_out, numpy_int, with_math_prod, bytes_counted_in_loops]


@pytest.mark.parametrize("answer", BYTES_CORRECT)
def test_correct_byte_counts_pass(answer):
    result = check(answer)
    assert result.passed is True and result.mistake is None, result.message


@pytest.mark.parametrize(
    ("answer", "mistake", "words"),
    [
        (lambda n, h, b, dt: b * n * n * itemsize(dt), "no_heads", "forgot the heads"),
        (lambda n, h, b, dt: h * n * n * itemsize(dt), "no_batch", "forgot the batch"),
        (lambda n, h, b, dt: n * n * itemsize(dt), "no_heads_no_batch", "forgot both"),
        (lambda n, h, b, dt: b * h * n * itemsize(dt), "n_not_squared", "n squared"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) * 8, "bits", "bits, not bytes"),
        (lambda n, h, b, dt: b * h * n * n * 4, "always_4", "not always 4"),
        (lambda n, h, b, dt: b * h * n * n * 8, "always_8", "not always 8"),
        (lambda n, h, b, dt: b * h * n * n, "numbers_not_bytes", "counted numbers, not bytes"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 2**20, "mib", "looks like MiB"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 1e6, "mb", "looks like MB"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 2**30, "gib", "looks like GiB"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 1e9, "gb", "looks like GB"),
        (lambda n, h, b, dt: float(b * h * n * n * itemsize(dt)), "float_not_int", "return an int"),
        (lambda n, h, b, dt: b * h * n * n * itemsize(dt) + 0.5, "not_whole", "not a whole number"),
        (lambda n, h, b, dt: b * h * n * (n + 1) * itemsize(dt), "wrong_count", "expected"),
    ],
)
def test_each_byte_count_mistake_is_named(answer, mistake, words):
    result = check(answer)
    assert result.passed is False and result.mistake == f"score_matrix_bytes.{mistake}"
    assert words in result.message, result.message


def test_a_wrong_count_is_told_what_to_count_not_given_the_formula():
    """The generic message once gave batch * h * n * n * itemsize, the whole answer."""
    result = check(lambda n, h, b, dt: b * h * n * (n + 1) * itemsize(dt))
    assert result.mistake == "score_matrix_bytes.wrong_count"
    assert "batch * h * n * n" not in result.message and "Count the weights" in result.message


def test_the_masked_row_message_points_at_the_guard_without_its_code():
    result = update_check(nan_on_masked_row)
    assert result.mistake == "online_softmax_update.nan_on_masked_row"
    assert "np.where" not in result.message and "subtract 0 instead" in result.message


def test_a_float_byte_count_is_refused_as_the_text_says():
    """The lesson says "return an int"; a float that happens to be whole is not accepted."""
    result = check(lambda n, h, b, dt: b * h * n * n * itemsize(dt) * 1.0)
    assert result.passed is False and "return an int" in result.message


def test_a_hard_coded_answer_fails():
    assert check(lambda n, h, b, dt: 40_000_000_000).passed is False


def test_wrong_return_types_are_explained():
    assert check(lambda n, h, b, dt: None).mistake == "score_matrix_bytes.returned_none"
    assert check(lambda n, h, b, dt: [n, h]).mistake == "score_matrix_bytes.not_numbers"


def test_a_stub_is_not_attempted_yet():
    def stub(n, h, batch, dtype):
        raise NotImplementedError("replace this line with your answer")

    assert check(stub).passed is None


def test_a_crash_is_reported_with_its_line():
    result = check(lambda n, h, b, dt: dt.itemsize * n)  # np.float32 (a type) has no itemsize
    assert result.passed is False and "raised" in result.message and "line" in result.message


def test_reference_agrees_with_helpers():
    for args in [(1, 1, 1, np.float32), (100_000, 8, 4, "float16"), (7, 3, 2, np.float64)]:
        assert checks.score_matrix_bytes.reference(*args) == helpers_score_matrix_bytes(*args)


def test_the_blockwise_memory_prediction_is_four_not_sixteen():
    assert checks.blockwise_memory_growth.check(4.2).passed is True
    wrong = checks.blockwise_memory_growth.check(16)
    assert wrong.passed is False and wrong.mistake == "blockwise_memory_growth.too_high"
    assert "grows like n, not n^2" in wrong.message


def test_the_doubling_prediction_is_four():
    assert checks.score_memory_doubling.check(4).passed is True
    wrong = checks.score_memory_doubling.check(2)
    assert wrong.passed is False and "(2n)^2" in wrong.message
    assert checks.score_memory_doubling.check(None).passed is None


# ---------------------------------------------------------------------------------------------
# online_softmax_update(m, l, acc, scores, V_block)

update_check = checks.online_softmax_update.check


def update_guarded(m, l, acc, scores, V_block):
    m_new = np.maximum(m, scores.max(axis=1))
    safe = np.where(m_new == -np.inf, 0, m_new)
    c = np.exp(m - safe)
    p = np.exp(scores - safe[:, None])
    return m_new, c * l + p.sum(axis=1), c[:, None] * acc + p @ V_block


def update_loops(m, l, acc, scores, V_block):
    """Row by row, with Python scalars and an explicit case for a row that has seen nothing."""
    m, l, acc = m.copy(), l.copy(), acc.copy()
    for i in range(len(m)):
        m_new = max(m[i], scores[i].max())
        if m_new == -np.inf:
            continue  # nothing seen yet: the state stays (-inf, 0, 0)
        c = math.exp(m[i] - m_new)
        p = np.exp(scores[i] - m_new)
        l[i] = l[i] * c + p.sum()
        acc[i] = acc[i] * c + p @ V_block
        m[i] = m_new
    return m, l, acc


def update_einsum_nan_to_num(m, l, acc, scores, V_block):
    m_new = np.maximum(m, scores.max(-1))
    with np.errstate(invalid="ignore"):
        c = np.nan_to_num(np.exp(m - m_new))  # NaN (nothing seen yet) -> 0
        p = np.nan_to_num(np.exp(scores - m_new[:, None]))
    return (
        m_new,
        l * c + p.sum(-1),
        np.einsum("q,qd->qd", c, acc) + np.einsum("qb,bd->qd", p, V_block),
    )


def update_copies_inputs(m, l, acc, scores, V_block):
    """Converts every input to a float64 copy first, then the guarded update."""
    m, l, acc, scores, V_block = (
        np.array(a, dtype=np.float64) for a in (m, l, acc, scores, V_block)
    )
    m_new = np.fmax(m, np.max(scores, axis=-1))
    shift = np.where(np.isfinite(m_new), m_new, 0.0)
    c = np.exp(m - shift)
    p = np.exp(scores - shift[:, np.newaxis])
    return m_new, l * c + np.sum(p, axis=-1), acc * c[:, np.newaxis] + np.matmul(p, V_block)


def update_in_float32(m, l, acc, scores, V_block):
    """Works in float32 whatever the inputs."""
    return update_guarded(*(np.asarray(a, dtype=np.float32) for a in (m, l, acc, scores, V_block)))


UPDATE_CORRECT = [
    update_guarded,
    update_loops,
    update_einsum_nan_to_num,
    update_copies_inputs,
    update_in_float32,
]


@pytest.mark.parametrize("answer", UPDATE_CORRECT)
def test_correct_online_softmax_updates_pass(answer):
    for _ in range(3):  # fresh inputs each time
        result = update_check(answer)
        assert result.passed is True, result.message


def _m_new(m, scores):
    return np.maximum(m, scores.max(-1))


def _shift(m_new):
    return np.where(np.isneginf(m_new), 0.0, m_new)


def forgot_rescale_l(m, l, acc, scores, V_block):
    m_new = _m_new(m, scores)
    c, p = np.exp(m - _shift(m_new)), np.exp(scores - _shift(m_new)[:, None])
    return m_new, l + p.sum(-1), acc * c[:, None] + p @ V_block


def forgot_rescale_acc(m, l, acc, scores, V_block):
    m_new = _m_new(m, scores)
    c, p = np.exp(m - _shift(m_new)), np.exp(scores - _shift(m_new)[:, None])
    return m_new, l * c + p.sum(-1), acc + p @ V_block


def forgot_rescale_both(m, l, acc, scores, V_block):
    m_new = _m_new(m, scores)
    p = np.exp(scores - _shift(m_new)[:, None])
    return m_new, l + p.sum(-1), acc + p @ V_block


def inverted_correction(m, l, acc, scores, V_block):
    m_new = _m_new(m, scores)
    c, p = np.exp(_shift(m_new) - m), np.exp(scores - _shift(m_new)[:, None])
    return m_new, l * c + p.sum(-1), acc * c[:, None] + p @ V_block


def block_max(m, l, acc, scores, V_block):
    m_b = scores.max(-1)  # this block's max only
    c, p = np.exp(m - m_b), np.exp(scores - m_b[:, None])
    return m_b, l * c + p.sum(-1), acc * c[:, None] + p @ V_block


def m_not_updated(m, l, acc, scores, V_block):
    m_new = _m_new(m, scores)
    c, p = np.exp(m - _shift(m_new)), np.exp(scores - _shift(m_new)[:, None])
    return m, l * c + p.sum(-1), acc * c[:, None] + p @ V_block


def exp_old_max(m, l, acc, scores, V_block):
    p = np.exp(scores - m[:, None])
    return _m_new(m, scores), l + p.sum(-1), acc + p @ V_block


def normalised_acc(m, l, acc, scores, V_block):
    m_new, l, acc = update_guarded(m, l, acc, scores, V_block)
    return m_new, l, acc / l[:, None]


def no_max_subtracted(m, l, acc, scores, V_block):
    p = np.exp(scores)
    return _m_new(m, scores), l + p.sum(-1), acc + p @ V_block


def nan_on_masked_row(m, l, acc, scores, V_block):
    m_new = np.maximum(m, scores.max(-1))
    c, p = np.exp(m - m_new), np.exp(scores - m_new[:, None])  # -inf - (-inf) = NaN
    return m_new, l * c + p.sum(-1), acc * c[:, None] + p @ V_block


def swapped_m_l(m, l, acc, scores, V_block):
    m_new, l, acc = update_guarded(m, l, acc, scores, V_block)
    return l, m_new, acc


UPDATE_MISTAKES = {
    "forgot_rescale_l": (forgot_rescale_l, r"rescale acc but not l"),
    "forgot_rescale_acc": (forgot_rescale_acc, r"rescale l but not acc"),
    "forgot_rescale_both": (forgot_rescale_both, r"neither l nor acc"),
    "inverted_correction": (inverted_correction, r"exp\(m_new - m_old\)"),
    "block_max": (block_max, r"this block's max, not the running max"),
    "m_not_updated": (m_not_updated, r"return the old m"),
    "exp_old_max": (exp_old_max, r"with the old m and never rescale"),
    "normalised_acc": (normalised_acc, r"your acc is divided by l"),
    "no_max_subtracted": (no_max_subtracted, r"without subtracting the max"),
    "nan_on_masked_row": (nan_on_masked_row, r"-inf - \(-inf\)"),
    "swapped_m_l": (swapped_m_l, r"you returned l, m, acc"),
}


@pytest.mark.parametrize("mistake", list(UPDATE_MISTAKES))
def test_each_online_softmax_mistake_is_named(mistake):
    answer, pattern = UPDATE_MISTAKES[mistake]
    for _ in range(3):  # on fresh inputs every time
        result = update_check(answer)
        assert result.passed is False, mistake
        assert result.mistake == f"online_softmax_update.{mistake}", result.message
        assert re.search(pattern, result.message), result.message


def test_online_softmax_mistake_messages_are_distinct():
    assert_mistakes_distinct(checks.online_softmax_update, UPDATE_MISTAKES)


def test_online_softmax_return_slips_are_named():
    three = update_check(lambda m, l, acc, s, V: (m, l))
    assert three.mistake == "online_softmax_update.not_a_triple"
    assert update_check(lambda m, l, acc, s, V: None).mistake == (
        "online_softmax_update.returned_none"
    )
    acc_shape = update_check(lambda m, l, acc, s, V: (m, l, acc.T))
    assert acc_shape.passed is False and "acc" in acc_shape.message


def test_the_helpers_online_softmax_steps_agree_with_the_reference_update():
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((5, 4)), rng.standard_normal((9, 4)), rng.standard_normal((9, 3))
    m, l, acc = np.full(5, -np.inf), np.zeros(5), np.zeros((5, 3))
    for step in online_softmax_steps(Q, K, V, block_size=4):
        scores = Q @ K[step.start : step.stop].T / 2.0
        m, l, acc = checks.online_softmax_update.reference(
            m, l, acc, scores, V[step.start : step.stop]
        )
        np.testing.assert_allclose(m, step.m)
        np.testing.assert_allclose(l, step.l)
        np.testing.assert_allclose(acc, step.acc)


# ---------------------------------------------------------------------------------------------
# blockwise_attention(Q, K, V, block_size)

blockwise_check = checks.blockwise_attention.check


def blockwise_per_query(Q, K, V, block_size):
    """One query at a time, the running state as Python floats."""
    out = []
    for q in Q:
        m, l, acc = -np.inf, 0.0, np.zeros(V.shape[1])
        for start in range(0, len(K), block_size):
            s = K[start : start + block_size] @ q / np.sqrt(len(q))
            m_new = max(m, s.max())
            c, p = np.exp(m - m_new), np.exp(s - m_new)
            l, acc, m = l * c + p.sum(), acc * c + p @ V[start : start + block_size], m_new
        out.append(acc / l)
    return np.array(out)


def blockwise_with_array_split(Q, K, V, block_size):
    pieces = max(1, -(-len(K) // block_size))
    state = (np.full(len(Q), -np.inf), np.zeros(len(Q)), np.zeros((len(Q), V.shape[1])))
    for K_b, V_b in zip(np.array_split(K, pieces), np.array_split(V, pieces)):
        scores = np.einsum("qd,kd->qk", Q, K_b) / np.sqrt(Q.shape[-1])
        state = update_guarded(*state, scores, V_b)
    return state[2] / state[1][:, None]


def blockwise_copies_inputs(Q, K, V, block_size):
    """Correct, O(n * d) memory, but copies every input several times (all kept alive)."""
    Q64, K64, V64 = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    Q_copy, K_copy, V_copy = Q64.copy(), K64.copy(), V64.copy()
    K_c, V_c = np.ascontiguousarray(K_copy), np.ascontiguousarray(V_copy.T).T
    K_round, V_round = K.astype(np.float32).astype(np.float64), np.array(V, dtype=np.float64)
    K_round[:] = K_c  # the float32 round trip is rounded: keep K's exact values
    V_round[:] = V_c
    out = blockwise_with_array_split(Q_copy, K_round, V_round, block_size)
    return np.array(out, copy=True)


def blockwise_float64_copies_row_loops(Q, K, V, block_size):
    """Converts the inputs to float64 first (a copy of each) and keeps the state in loops."""
    Q, K, V = (np.array(a, dtype=np.float64) for a in (Q, K, V))
    n_q, d_v = len(Q), V.shape[1]
    m, l, acc = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v))
    for start in range(0, len(K), block_size):
        K_b, V_b = K[start : start + block_size].copy(), V[start : start + block_size].copy()
        m, l, acc = update_loops(m, l, acc, Q @ K_b.T / np.sqrt(Q.shape[1]), V_b)
    return acc / l[:, None]


def blockwise_in_float32(Q, K, V, block_size):
    """Works in float32 whatever the inputs: right to float32's precision."""
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    return blockwise_with_array_split(Q, K, V, block_size)


BLOCKWISE_CORRECT = [
    blockwise_in_float32,
    blockwise_per_query,
    blockwise_with_array_split,
    blockwise_copies_inputs,
    blockwise_float64_copies_row_loops,
]


@pytest.mark.parametrize("answer", BLOCKWISE_CORRECT)
def test_correct_blockwise_attention_passes(answer):
    result = blockwise_check(answer)
    assert result.passed is True, result.message


@pytest.mark.parametrize(
    ("answer", "draws"), [(blockwise_copies_inputs, 20), (blockwise_float64_copies_row_loops, 4)]
)
def test_blockwise_answers_that_copy_their_inputs_pass_on_every_draw(answer, draws):
    """Input-sized copies are O(n * d): the memory case must not take them for the n x n matrix
    (before the fix, about one draw in two was refused when d >= 5). The memory case's sizes
    no longer depend on the draw; the sweep runs every style over hundreds of draws."""
    for _ in range(draws):
        result = blockwise_check(answer)
        assert result.passed is True, result.message


def test_an_answer_that_works_in_float32_passes_the_large_scores_case():
    """Scores of several hundred, rounded in float32, once moved a cancelling output (values
    around 0) past the tolerance on about 1 draw in 100; the large case now has values in [1, 2]."""
    from helpers.checks import draws

    for seed in range(85, 100):  # seed 91 failed before the fix; the sweep runs 300 seeds
        with draws.seeded_draws(seed):
            result = blockwise_check(blockwise_in_float32)
        assert result.passed is True, (seed, result.message)


def test_the_success_message_does_not_claim_memory_it_did_not_measure():
    """With tracemalloc already tracing, the memory case is skipped: the message says so instead
    of "it never held the (n_q, n_k) score matrix"."""
    import tracemalloc

    tracemalloc.start()
    try:
        result = blockwise_check(blockwise_with_array_split)
    finally:
        tracemalloc.stop()
    assert result.passed is True
    assert "never held" not in result.message and "not measured" in result.message
    assert "never held" in blockwise_check(blockwise_with_array_split).message


def test_the_memory_case_separates_input_copies_from_the_score_matrix():
    """Ten copies of every input, and three tiles, stay below the limit; the matrix does not."""
    n_q, n_k, d, b = (lesson07.MEMORY_N_Q, lesson07.MEMORY_N_K, lesson07.MEMORY_D,
                      lesson07.MEMORY_BLOCK)  # fmt: skip
    one_set = (2 * n_q + 2 * n_k) * d * 8  # Q, K, V and the output, float64
    full = n_q * n_k * 8
    assert 10 * one_set + 3 * n_q * b * 8 < full / 2 <= full


def blockwise_variant(scale="d_k", stop="all", reset=False, first_only=False, divide=True):
    def answer(Q, K, V, block_size):
        d = {"d_k": Q.shape[1], "none": 1, "d_v": V.shape[1]}[scale]
        n_blocks = len(K) // block_size if stop == "full_blocks_only" else -(-len(K) // block_size)
        state = (np.full(len(Q), -np.inf), np.zeros(len(Q)), np.zeros((len(Q), V.shape[1])))
        for k in range(n_blocks):
            if reset:
                state = (np.full(len(Q), -np.inf), np.zeros(len(Q)), np.zeros((len(Q), V.shape[1])))
            start = 0 if first_only else k * block_size
            K_b, V_b = K[start : start + block_size], V[start : start + block_size]
            state = update_guarded(*state, Q @ K_b.T / np.sqrt(d), V_b)
        return state[2] / state[1][:, None] if divide else state[2]

    return answer


def naive_full_matrix(Q, K, V, block_size):
    """Right output, but through the whole (n_q, n_k) score matrix."""
    s = Q @ K.T / np.sqrt(Q.shape[1])
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ V


def naive_float32_scores(Q, K, V, block_size):
    """Builds the whole score matrix, in float32 to save memory: still O(n_q * n_k)."""
    s = np.asarray(Q, np.float32) @ np.asarray(K, np.float32).T / np.float32(np.sqrt(Q.shape[1]))
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ V


@pytest.mark.parametrize("answer", [naive_full_matrix, naive_float32_scores])
def test_answers_that_build_the_score_matrix_are_caught_on_every_draw(answer):
    for _ in range(10):
        result = blockwise_check(answer)
        assert result.mistake == "blockwise_attention.full_matrix", result.message


BLOCKWISE_MISTAKES = {
    "unscaled": (blockwise_variant(scale="none"), r"not scaled"),
    "scale_d_v": (blockwise_variant(scale="d_v"), r"sqrt\(d_v\)"),
    "last_block_dropped": (blockwise_variant(stop="full_blocks_only"), r"last, shorter block"),
    "only_last_block": (blockwise_variant(reset=True), r"last block only"),
    "first_block_repeated": (blockwise_variant(first_only=True), r"uses the first block"),
    "not_normalised": (blockwise_variant(divide=False), r"without dividing by l"),
    "full_matrix": (naive_full_matrix, r"at least half of the whole"),
}


@pytest.mark.parametrize("mistake", list(BLOCKWISE_MISTAKES))
def test_each_blockwise_mistake_is_named(mistake):
    answer, pattern = BLOCKWISE_MISTAKES[mistake]
    result = blockwise_check(answer)
    assert result.passed is False and result.mistake == f"blockwise_attention.{mistake}"
    assert re.search(pattern, result.message), result.message


def test_blockwise_mistake_messages_are_distinct():
    assert_mistakes_distinct(checks.blockwise_attention, BLOCKWISE_MISTAKES)


def test_blockwise_that_calls_an_unfinished_update_names_it():
    def online_softmax_update(m, l, acc, scores, V_block):
        raise NotImplementedError

    def blockwise_attention(Q, K, V, block_size):
        return online_softmax_update(None, None, None, Q @ K.T, V)

    result = blockwise_check(blockwise_attention)
    assert result.passed is False and result.mistake == "blockwise_attention.calls_unfinished"
    assert "online_softmax_update" in result.message


# ---------------------------------------------------------------------------------------------
# causal_blockwise_attention(Q, K, V, block_size): the challenge

causal_check = checks.causal_blockwise_attention.check


def causal_row_by_row(Q, K, V, block_size):
    """Query blocks of block_size; for each, key blocks up to its own; masks by position."""
    n = len(Q)
    out, tiles = np.zeros((n, V.shape[1])), 0
    for q0 in range(0, n, block_size):
        rows = np.arange(q0, min(q0 + block_size, n))
        state = (
            np.full(len(rows), -np.inf),
            np.zeros(len(rows)),
            np.zeros((len(rows), V.shape[1])),
        )
        for k0 in range(0, q0 + 1, block_size):
            cols = np.arange(k0, min(k0 + block_size, n))
            s = Q[rows] @ K[cols].T / np.sqrt(Q.shape[1])
            s[cols[None, :] > rows[:, None]] = -np.inf
            state = update_loops(*state, s, V[cols])
            tiles += 1
        out[rows] = state[2] / state[1][:, None]
    return out, tiles


def causal_with_causal_mask(Q, K, V, block_size):
    """Copies its inputs to float64; a helpers.causal_mask for each diagonal tile."""
    Q, K, V = (np.array(a, dtype=np.float64) for a in (Q, K, V))
    n, b, d_v = len(Q), block_size, V.shape[1]
    out, tiles = np.empty((n, d_v)), 0
    for q0 in range(0, n, b):
        q1 = min(q0 + b, n)
        state = (np.full(q1 - q0, -np.inf), np.zeros(q1 - q0), np.zeros((q1 - q0, d_v)))
        for k0 in range(0, q1, b):
            k1 = min(k0 + b, n)
            s = np.einsum("qd,kd->qk", Q[q0:q1], K[k0:k1]) / np.sqrt(Q.shape[1])
            if k0 == q0:  # the diagonal tile: square, masked inside
                s = np.where(helpers.causal_mask(q1 - q0), s, -np.inf)
            state = update_copies_inputs(*state, s, V[k0:k1])
            tiles += 1
        out[q0:q1] = state[2] / state[1][:, None]
    return out, tiles


def causal_query_blocks_with_softmax(Q, K, V, block_size):
    """Each query block attends to all keys up to its last query at once (no key tiles, but
    the same output) and reports the tiles it would have visited: the count it reports is not
    what it computed (issue 34), so it is rejected, by its memory."""
    n, b = len(Q), block_size
    out, tiles = [], 0
    for q0 in range(0, n, b):
        q1 = min(q0 + b, n)
        s = Q[q0:q1] @ K[:q1].T / np.sqrt(Q.shape[1])
        s[np.arange(q1)[None, :] > np.arange(q0, q1)[:, None]] = -np.inf
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out.append(e / e.sum(axis=1, keepdims=True) @ V[:q1])
        tiles += -(-q1 // b)
    return np.concatenate(out), tiles


def causal_in_float32(Q, K, V, block_size):
    """Works in float32 whatever the inputs."""
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    return causal_row_by_row(Q, K, V, block_size)


def causal_whole_matrix_formula_count(Q, K, V, block_size):
    """The whole (n, n) score matrix, masked, and the tile count from the formula (issue 34:
    the check trusted the count it was told)."""
    n = len(Q)
    n_b = -(-n // block_size)
    s = Q @ K.T / np.sqrt(Q.shape[1])
    s[np.triu(np.ones((n, n), dtype=bool), 1)] = -np.inf
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) @ V, n_b * (n_b + 1) // 2


CAUSAL_CORRECT = [
    causal_row_by_row,
    causal_with_causal_mask,
    causal_in_float32,
]


@pytest.mark.parametrize(
    "answer", [causal_whole_matrix_formula_count, causal_query_blocks_with_softmax]
)
def test_a_reported_tile_count_is_not_taken_on_trust(answer):
    result = causal_check(answer)
    assert result.passed is False
    assert result.mistake == "causal_blockwise_attention.full_matrix", result.message
    assert "never build the (n, n) scores or mask" in result.message


@pytest.mark.parametrize("answer", CAUSAL_CORRECT)
def test_correct_causal_blockwise_passes(answer):
    result = causal_check(answer)
    assert result.passed is True, result.message


def causal_variant(mask="causal", k_stop="own", scale=True, count="honest"):
    def answer(Q, K, V, b):
        n = len(Q)
        out, tiles = np.zeros((n, V.shape[1])), 0
        for q0 in range(0, n, b):
            q1 = min(q0 + b, n)
            stop = {"own": q1, "before": q0, "all": n}[k_stop]
            state = (np.full(q1 - q0, -np.inf), np.zeros(q1 - q0), np.zeros((q1 - q0, V.shape[1])))
            for k0 in range(0, stop, b):
                k1 = min(k0 + b, n)
                s = Q[q0:q1] @ K[k0:k1].T / (np.sqrt(Q.shape[1]) if scale else 1)
                offset = {"causal": 0, "strict": -1, "next": 1, "none": None}[mask]
                if offset is not None:
                    s = np.where(
                        np.arange(k0, k1)[None, :] > np.arange(q0, q1)[:, None] + offset, -np.inf, s
                    )
                state = update_guarded(*state, s, V[k0:k1])
                tiles += 1
            with np.errstate(all="ignore"):
                out[q0:q1] = state[2] / state[1][:, None]
        return out, tiles

    return answer


CAUSAL_MISTAKES = {
    "no_mask": (causal_variant(mask="none", k_stop="all"), r"attention with no mask"),
    "diagonal_unmasked": (causal_variant(mask="none"), r"inside the diagonal tile"),
    "skips_diagonal": (causal_variant(k_stop="before"), r"skip the diagonal tiles too"),
    "strict_mask": (causal_variant(mask="strict"), r"hides the diagonal"),
    "sees_next_key": (causal_variant(mask="next"), r"see key i \+ 1"),
    "unscaled": (causal_variant(scale=False), r"not scaled"),
    "computed_every_tile": (causal_variant(k_stop="all"), r"you computed all"),
    "tile_count": (lambda Q, K, V, b: (causal_variant()(Q, K, V, b)[0], 1), r"you report 1"),
    "not_a_pair": (lambda Q, K, V, b: causal_variant()(Q, K, V, b)[0], r"return two values"),
}


@pytest.mark.parametrize("mistake", list(CAUSAL_MISTAKES))
def test_each_causal_blockwise_mistake_is_named(mistake):
    answer, pattern = CAUSAL_MISTAKES[mistake]
    result = causal_check(answer)
    assert result.passed is False and result.mistake == f"causal_blockwise_attention.{mistake}"
    assert re.search(pattern, result.message), result.message


def test_causal_blockwise_mistake_messages_are_distinct():
    assert_mistakes_distinct(checks.causal_blockwise_attention, CAUSAL_MISTAKES)


def test_every_lesson_07_exercise_meets_the_bar():
    for exercise in (
        checks.score_matrix_bytes,
        checks.online_softmax_update,
        checks.blockwise_attention,
        checks.causal_blockwise_attention,
    ):
        assert exercise.lesson == "07" and len(exercise._hints) >= 3
    assert checks.causal_blockwise_attention.stars == 3
    assert checks.online_softmax_update.stars == checks.blockwise_attention.stars == 2


def _lesson_07_source():
    return (Path(__file__).parents[1] / "solutions" / "07_cost_of_attention.py").read_text()


def test_lesson_07_table_1_prose_matches_what_its_cell_counts(capsys):
    """The prose once counted Q K^T and A V (2 n^2 d) while the code counted n^2 d, and called
    the ratio "a self-attention layer's arithmetic" without the 4 n d^2 projections."""
    source = _lesson_07_source()
    cell = source[source.index("d = 512  # the paper's d_model") :]
    cell = cell[: cell.index("# %%")]
    exec(cell, {})
    printed = capsys.readouterr().out
    row_32 = next(line for line in printed.splitlines() if line.strip().startswith("32 |"))
    assert "0.125" in row_32  # 2 n^2 d / (n d^2) = 2 * 32 / 512 = 1/8
    assert "pairwise part = recurrence at n = 256" in printed
    assert "LSTM layer at n = 1024" in printed
    prose = source[source.index("# The table's comparison, attention's pairwise part") :]
    prose = prose[: prose.index("# %%")]
    assert "$n = d/2 = 256$" in prose and "1/8" in prose and "$n = 2d = 1024$" in prose
    assert "1/16" not in source and "Below $n = 512$ tokens a self-attention layer" not in source


def test_lesson_07_prints_its_slopes_and_says_what_they_show():
    """The executed lesson prints both time slopes and the memory slope, and the prose says
    what a quiet machine measures: the time slope for n >= 1024 near 2 and the one for n <= 512
    flatter (timings vary: benchmarks/bench_attention_slope.py measures that claim, repeated,
    on this machine); the memory slope, which tracemalloc gives the same on every run, is 2."""
    printed = built_lessons.printed("07_cost_of_attention")
    found = re.search(r"time: +slope (\S+) for n >= 1024 \(and (\S+) for n <= 512\)", printed)
    assert found, "lesson 07's built solution does not print its time slopes"
    memory = re.search(r"memory: slope (\S+) for n >= 1024", printed)
    assert memory and abs(float(memory[1]) - 2) < 0.05, "the memory slope is not 2"
    prose = _lesson_07_source()
    assert "comes out near 2, a little above or below it" in prose
    assert "At small $n$ the line is flatter (the second slope printed above)" in prose
    assert "slope near 2 for large $n$" in prose


def test_lesson_07_names_dilated_convolutions_and_exact_long_context_attention():
    source = _lesson_07_source()
    assert "*dilated* convolutions" in source and "$O(n/k)$" in source
    assert "Ainslie et al. 2023" in source and "Shazeer 2019" in source


# ---------------------------------------------------------------------------------------------
# The sweep (tests/test_checks_sweep.py): every exercise, correct styles and named mistakes.

BYTES_MISTAKES = {
    "no_heads": lambda n, h, b, dt: b * n * n * itemsize(dt),
    "no_batch": lambda n, h, b, dt: h * n * n * itemsize(dt),
    "no_heads_no_batch": lambda n, h, b, dt: n * n * itemsize(dt),
    "n_not_squared": lambda n, h, b, dt: b * h * n * itemsize(dt),
    "bits": lambda n, h, b, dt: b * h * n * n * itemsize(dt) * 8,
    "always_4": lambda n, h, b, dt: b * h * n * n * 4,
    "always_8": lambda n, h, b, dt: b * h * n * n * 8,
    "numbers_not_bytes": lambda n, h, b, dt: b * h * n * n,
    "mib": lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 2**20,
    "mb": lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 1e6,
    "gib": lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 2**30,
    "gb": lambda n, h, b, dt: b * h * n * n * itemsize(dt) / 1e9,
    "float_not_int": lambda n, h, b, dt: float(b * h * n * n * itemsize(dt)),
    "not_whole": lambda n, h, b, dt: b * h * n * n * itemsize(dt) + 0.5,
    "wrong_count": lambda n, h, b, dt: b * h * n * (n + 1) * itemsize(dt),
    "returned_none": lambda n, h, b, dt: None,
    "not_numbers": lambda n, h, b, dt: f"{b * h * n * n * itemsize(dt)} bytes",
    "nan_or_inf": lambda n, h, b, dt: float("nan"),
}

SWEEP = {
    "score_matrix_bytes": {"correct": BYTES_CORRECT, "mistakes": BYTES_MISTAKES},
    "online_softmax_update": {
        "correct": UPDATE_CORRECT,
        "mistakes": {
            **{mistake: answer for mistake, (answer, _) in UPDATE_MISTAKES.items()},
            "not_a_triple": lambda m, l, acc, s, V: (m, l),
            "returned_none": lambda m, l, acc, s, V: None,
        },
    },
    "blockwise_attention": {
        "correct": BLOCKWISE_CORRECT,
        "mistakes": {mistake: answer for mistake, (answer, _) in BLOCKWISE_MISTAKES.items()},
    },
    "causal_blockwise_attention": {
        "correct": CAUSAL_CORRECT,
        "mistakes": {
            **{mistake: answer for mistake, (answer, _) in CAUSAL_MISTAKES.items()},
            "tiles_not_int": lambda Q, K, V, b: (causal_row_by_row(Q, K, V, b)[0], 3.0),
        },
    },
}
