"""Lesson 07 exercises: the memory of the attention weights, and attention without them.

- ``score_matrix_bytes(n, h, batch, dtype)`` (★): ``batch * h * n * n * itemsize`` as an ``int``.
- ``score_memory_doubling`` (prediction): doubling n multiplies that memory by 4.
- ``online_softmax_update(m, l, acc, scores, V_block)`` (★★): one step of the online softmax.
- ``blockwise_attention(Q, K, V, block_size)`` (★★): the output, one block of keys at a time.
- ``causal_blockwise_attention(Q, K, V, block_size)`` (★★★): causal, skipping future tiles.

Notation (lesson 07): ``m`` is the running row max, ``l`` (ℓ) the running sum of
``exp(s - m)``, ``acc`` the running sum of ``exp(s - m) @ V``; b is the block size.
"""

from __future__ import annotations

import numbers

import numpy as np

from .answers import lesson07 as answers
from .compare import as_result_array, compare
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction

score_memory_doubling = Prediction(
    name="score_memory_doubling",
    question="If the sentence doubles in length (n -> 2n), by what factor does the memory of "
    "the attention weights grow? (a number)",
    answer=answers.score_memory_doubling,
    explanation="The weights hold one number per (query, key) pair, n * n of them; with 2n "
    "tokens that is (2n)^2 = 4 n^2. Q, K and V only double: one row per token.",
    rtol=0.01,
)


# ----------------------------------------------------------------------------------------------
# score_matrix_bytes(n, h, batch, dtype)


def _as_number(value, what: str) -> int | float:
    """The learner's return value as an int or a float, or a Mistake saying why not."""
    if value is None:
        raise Mistake(
            f"{what} returned None; did you forget the `return` statement?", "returned_none"
        )
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise Mistake(
            f"{what} returned a {type(value).__name__}; it should return one number of bytes",
            "not_numbers",
        )
    if not np.isfinite(float(value)):
        raise Mistake(
            f"{what} returned {value!r}; it should return a whole number of bytes", "nan_or_inf"
        )
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def _mistakes(n, h, batch, itemsize):
    """What each catalogued wrong formula returns, with its id and message."""
    size = batch * h * n * n * itemsize
    always = (
        "the bytes per number depend on dtype: use np.dtype(dtype).itemsize (2 for "
        "float16, 4 for float32, 8 for float64), not always"
    )
    return [
        (
            batch * n * n * itemsize,
            "no_heads",
            "you forgot the heads: every head has its own (n, n) matrix",
        ),
        (
            h * n * n * itemsize,
            "no_batch",
            "you forgot the batch: every sequence has its own matrices",
        ),
        (n * n * itemsize, "no_heads_no_batch", "you forgot both the heads and the batch"),
        (
            batch * h * n * itemsize,
            "n_not_squared",
            "the score matrix is n x n: use n * n (n squared), not n",
        ),
        (size * 8, "bits", "that is bits, not bytes: 1 byte = 8 bits"),
        (batch * h * n * n * 4, "always_4", f"{always} 4"),
        (batch * h * n * n * 8, "always_8", f"{always} 8"),
        (
            batch * h * n * n,
            "numbers_not_bytes",
            "you counted numbers, not bytes: multiply by "
            "the bytes per number, np.dtype(dtype).itemsize",
        ),
        (size / 2**20, "mib", "that looks like MiB; return plain bytes"),
        (size / 1e6, "mb", "that looks like MB; return plain bytes"),
        (size / 2**30, "gib", "that looks like GiB; return plain bytes"),
        (size / 1e9, "gb", "that looks like GB; return plain bytes"),
    ]


def _cases(rng):
    """Fresh sizes on which the catalogued mistakes all give different numbers.

    h != batch (forgetting one differs from forgetting the other), n > 16 (n differs from
    h and from the itemsize), and h, batch not in {1, 2, 4, 8} (forgetting the heads would
    otherwise equal counting numbers instead of bytes when h equals the itemsize).
    """
    dtype_forms = [np.float16, "float32", np.dtype(np.float64), np.float32, "float16"]
    allowed = [k for k in range(3, 33) if k not in (4, 8)]
    cases = []
    for dtype in dtype_forms:
        n, h = int(rng.integers(20, 3000)), int(rng.choice([k for k in allowed if k <= 16]))
        batch = int(rng.choice([b for b in allowed if b != h]))
        cases.append((n, h, batch, dtype))
    cases.append((100_000, 1, 1, np.float32))  # the lesson's long context: 40 GB
    cases.append((123_456_791, 5, 3, np.float16))  # 4.6e17 bytes > 2**53: a float rounds it
    return cases


def _grade_bytes(call):
    rng = fresh_rng()
    for n, h, batch, dtype in _cases(rng):
        shown = dtype if isinstance(dtype, str) else f"np.{np.dtype(dtype).name}"
        shown = repr(shown) if isinstance(dtype, str) else shown
        what = f"score_matrix_bytes(n={n}, h={h}, batch={batch}, dtype={shown})"
        got = _as_number(call(n, h, batch, dtype), what)
        expected = answers.score_matrix_bytes(n, h, batch, dtype)
        if isinstance(got, int) and got == expected:
            continue
        itemsize = np.dtype(dtype).itemsize
        for wrong, mistake_id, message in _mistakes(n, h, batch, itemsize):
            if wrong == expected:  # e.g. "always 4 bytes" is right for float32
                continue
            if np.isclose(float(got), float(wrong), rtol=1e-12, atol=0):
                raise Mistake(
                    named(mistake_id, f"{what} returned {got:,}: {message}. Expected {expected:,}.")
                )
        if isinstance(got, float):
            if got.is_integer() and np.isclose(got, expected, rtol=1e-9, atol=0):
                raise Mistake(
                    named(
                        "float_not_int",
                        f"{what} returned {got!r}, a float; return an int. A float holds whole "
                        "numbers exactly only up to 2**53 (about 9e15), so a byte count of a "
                        "long context can come out rounded. Use whole numbers throughout: "
                        "*, not / (np.dtype(dtype).itemsize is already an int).",
                    )
                )
            raise Mistake(
                named(
                    "not_whole",
                    f"{what} returned {got!r}, which is not a whole number of bytes; bytes "
                    "come from counting numbers and multiplying by their size, so no division "
                    "is needed",
                )
            )
        raise Mistake(
            named(
                "wrong_count",
                f"{what} returned {got:,}, expected {expected:,}. Count the weights first: "
                "how many (n, n) matrices does one layer hold for a batch, and how many bytes "
                "does each number take?",
            )
        )
    return (
        "your byte count matches batch * h * n^2 * itemsize, as an int, on fresh sizes, for "
        "float16, float32 and float64 given as types, dtypes or names, for a 100k-token "
        "context (40,000,000,000 bytes for one float32 head) and beyond 2**53 bytes."
    )


score_matrix_bytes = Exercise(
    name="score_matrix_bytes",
    ready_made="helpers.blockwise.score_matrix_bytes",
    allowed=(),  # NumPy only: helpers.blockwise.score_matrix_bytes is this answer
    signature="score_matrix_bytes(n, h, batch, dtype)",
    grade=_grade_bytes,
    reference=answers.score_matrix_bytes,
    hints=[
        "Count the numbers first: how many attention weights does one head hold for one "
        "sequence of n tokens? Then how many heads, how many sequences?",
        "There are batch * h matrices of n * n weights each. Each weight takes "
        "np.dtype(dtype).itemsize bytes (an int: 4 for float32). Multiply whole numbers only, "
        "so the answer stays an int.",
        "return batch * h * n * n * np.dtype(dtype).itemsize",
    ],
    stars=1,
    title="bytes of one layer's attention weights for h heads, a batch and any dtype",
)

# ----------------------------------------------------------------------------------------------
# online_softmax_update(m, l, acc, scores, V_block)


def _update_wrong(m, l, acc, scores, V_block, how):
    """One update step done wrong in the way ``how`` names (the catalogue of mistakes)."""
    with np.errstate(all="ignore"):
        blockmax = scores.max(axis=-1)
        m_new = np.maximum(m, blockmax)
        if how == "nan_on_masked_row":  # right, but without the -inf guard
            c, p = np.exp(m - m_new), np.exp(scores - m_new[:, None])
            return m_new, l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        shift = np.where(np.isneginf(m_new), 0.0, m_new)
        c, p = np.exp(m - shift), np.exp(scores - shift[:, None])
        new_l, new_acc = l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        if how == "forgot_rescale_l":
            return m_new, l + p.sum(-1), new_acc
        if how == "forgot_rescale_acc":
            return m_new, new_l, acc + p @ V_block
        if how == "forgot_rescale_both":
            return m_new, l + p.sum(-1), acc + p @ V_block
        if how == "inverted_correction":
            c = np.exp(shift - m)
            return m_new, l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        if how == "block_max":
            c, p = np.exp(m - blockmax), np.exp(scores - blockmax[:, None])
            return blockmax, l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        if how == "m_not_updated":
            return m, new_l, new_acc
        if how == "exp_old_max":
            p = np.exp(scores - m[:, None])
            return m_new, l + p.sum(-1), acc + p @ V_block
        if how == "normalised_acc":
            return m_new, new_l, new_acc / new_l[:, None]
        if how == "no_max_subtracted":
            p = np.exp(scores)
            return m_new, l + p.sum(-1), acc + p @ V_block
    raise ValueError(how)


_UPDATE_MISTAKES = {
    "nan_on_masked_row": "rows whose keys are all masked (-inf) so far come back as NaN: with "
    "m = -inf and m_new = -inf, exp(m - m_new) is exp(-inf - (-inf)) = exp(NaN). Such a row "
    "must keep m = -inf, l = 0 and acc = 0: where m_new is still -inf, subtract 0 instead of "
    "m_new.",
    "forgot_rescale_l": "you rescale acc but not l: when a block raises a row's max, the l "
    "summed so far was computed with the old m and must be multiplied by exp(m_old - m_new) "
    "too, like acc.",
    "forgot_rescale_acc": "you rescale l but not acc: acc was summed with the old m, so when "
    "the max rises it must be multiplied by exp(m_old - m_new) too (one factor per row: "
    "correction[:, None]).",
    "forgot_rescale_both": "neither l nor acc is rescaled: both were summed with the old m; "
    "when a block raises a row's max, multiply both by exp(m_old - m_new) before adding the "
    "new block.",
    "inverted_correction": "your correction is exp(m_new - m_old), which is >= 1; it must "
    "shrink what was summed with the old, smaller max: exp(m_old - m_new) <= 1.",
    "block_max": "your m is this block's max, not the running max. m must be "
    "max(m, scores.max(axis=-1)): with only the block's max, exp(m_old - m_block) grows "
    "without bound when an earlier block had the larger scores (it overflows to inf above "
    "709).",
    "m_not_updated": "you return the old m: l and acc are now sums of exp(s - m_new), so the "
    "m you return must be m_new, or the next step rescales by the wrong amount.",
    "exp_old_max": "you take exp(scores - m) with the old m and never rescale: on the first "
    "block m is -inf, so exp(scores + inf) is inf. Compute m_new first, then exp(scores - "
    "m_new), and rescale l and acc by exp(m_old - m_new).",
    "normalised_acc": "your acc is divided by l: acc must stay the un-normalised sum of "
    "exp(s - m) @ V, so later blocks can be added to it; divide by l only once, at the very "
    "end (acc / l[:, None]).",
    "no_max_subtracted": "you take exp(scores) without subtracting the max: the sums are right "
    "only while the scores are small, and exp overflows to inf above 709. Subtract m_new "
    "inside the exp and rescale l and acc by exp(m_old - m_new).",
}


def _close3(got, want) -> bool:
    return all(
        np.shape(g) == np.shape(w)
        and np.allclose(np.asarray(g, float), w, rtol=1e-4, atol=1e-5, equal_nan=True)
        for g, w in zip(got, want)
    )


def _unpack_state(value, what, n_q, d_v):
    """The learner's ``(m, l, acc)`` as float arrays of the right shapes, or a Mistake."""
    if value is None:
        raise Mistake(f"{what} returned None; did you forget `return m, l, acc`?", "returned_none")
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        kind = (
            f"{len(value)} values"
            if isinstance(value, (tuple, list))
            else (f"a {type(value).__name__}")
        )
        raise Mistake(
            named(
                "not_a_triple",
                f"{what} returned {kind}; return the new state, three "
                "values: `return m_new, l, acc`.",
            ),
        )
    parts = []
    for part, shape, value_part in zip(("m", "l", "acc"), ((n_q,), (n_q,), (n_q, d_v)), value):
        parts.append(as_result_array(value_part, what, shape, part=part))
    return tuple(parts)


def _state_case(rng, n_q, b, d_v):
    """A running state after some keys (finite m, l > 0) and a new block of scores.

    Half the rows get a new block with a larger max (so the state must be rescaled), half a
    smaller one (m stays), so every catalogued mistake changes the result.
    """
    old_scores = rng.normal(0, 1.5, (n_q, 5))
    m = old_scores.max(axis=-1)
    p_old = np.exp(old_scores - m[:, None])
    V_old = rng.standard_normal((5, d_v))
    l, acc = p_old.sum(-1), p_old @ V_old
    scores = rng.normal(0, 1.5, (n_q, b))
    up = np.arange(n_q) % 2 == 0
    scores[up] += (
        m[up, None] - scores[up].max(-1, keepdims=True) + rng.uniform(0.5, 2, (up.sum(), 1))
    )
    scores[~up] += (
        m[~up, None] - scores[~up].max(-1, keepdims=True) - rng.uniform(0.5, 2, ((~up).sum(), 1))
    )
    return m, l, acc, scores, rng.standard_normal((b, d_v))


def _grade_update(call):
    rng = fresh_rng()
    while True:  # distinct sizes, so that a misplaced axis shows in the shapes
        n_q, b, d_v = int(rng.integers(4, 9)), int(rng.integers(2, 7)), int(rng.integers(2, 7))
        if len({n_q, b, d_v}) == 3:
            break

    # 1. One step from a running state: the rescaling must be right.
    m, l, acc, scores, V_b = _state_case(rng, n_q, b, d_v)
    what = (
        f"online_softmax_update(m, l, acc, scores, V_block) from a running state (n_q={n_q}, "
        f"b={b}, d_v={d_v}; half the rows get a larger max)"
    )
    got = _unpack_state(call(m, l, acc, scores, V_b), what, n_q, d_v)
    want = answers.online_softmax_update(m, l, acc, scores, V_b)
    _compare_state(got, want, (m, l, acc, scores, V_b), what)

    # 2. The first block, from m = -inf, l = 0, acc = 0, with rows whose keys are all masked.
    scores = rng.normal(0, 2, (n_q, b))
    scores[0] = -np.inf  # row 0 sees none of these keys (a causal mask, a padded block)
    scores[1, : b // 2] = -np.inf  # row 1 sees some
    start = (np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v)))
    V_b = rng.standard_normal((b, d_v))
    what = (
        "online_softmax_update on the first block (m = -inf, l = 0, acc = 0; row 0's "
        "scores all -inf, masked)"
    )
    got = _unpack_state(call(*start, scores, V_b), what, n_q, d_v)
    _compare_state(
        got, answers.online_softmax_update(*start, scores, V_b), (*start, scores, V_b), what
    )

    # 3. A whole run over blocks of keys: acc / l is attention, even for large scores.
    for label, spread, dtype in (
        ("scores up to about 800", 400.0, np.float64),
        ("float32 inputs", 1.0, np.float32),
    ):
        n_k = int(rng.integers(7, 14))
        scores = (rng.standard_normal((n_q, n_k)) * spread).astype(dtype)
        V = rng.standard_normal((n_k, d_v)).astype(dtype)
        state = (np.full(n_q, -np.inf, dtype), np.zeros(n_q, dtype), np.zeros((n_q, d_v), dtype))
        cuts = [0, *sorted(rng.choice(np.arange(1, n_k), 2, replace=False)), n_k]
        what = (
            f"online_softmax_update over {len(cuts) - 1} blocks of keys {cuts} "
            f"(n_q={n_q}, n_k={n_k}, {label})"
        )
        for start_k, stop_k in zip(cuts[:-1], cuts[1:]):
            state = _unpack_state(
                call(*state, scores[:, start_k:stop_k], V[start_k:stop_k]), what, n_q, d_v
            )
        s = scores.astype(float)
        weights = np.exp(s - s.max(-1, keepdims=True))
        expected = weights / weights.sum(-1, keepdims=True) @ V.astype(float)
        with np.errstate(all="ignore"):
            output = state[2] / state[1][:, None]
        compare(
            output,
            expected,
            {},
            f"{what}: the final acc / l[:, None] is not softmax(scores) @ V.",
            name="output",
        )
    return (
        "your update rescales l and acc by exp(m_old - m_new), keeps masked rows at "
        "(-inf, 0, 0), and acc / l after the last block equals softmax(scores) @ V, for "
        "scores up to about 800 and in float32, on fresh sizes and block cuts."
    )


def _compare_state(got, want, inputs, what):
    if _close3(got, want):
        return
    for how, message in _UPDATE_MISTAKES.items():
        wrong = _update_wrong(*inputs, how)
        if _close3(want, wrong):  # this mistake makes no difference on this case
            continue
        if _close3(got, wrong):
            raise Mistake(named(how, f"{what}: {message}"))
    if _close3((got[1], got[0], got[2]), want):
        raise Mistake(
            named(
                "swapped_m_l",
                f"{what}: you returned l, m, acc; return m first: `return m_new, l, acc`.",
            )
        )
    for part, g, w in zip(("m", "l", "acc"), got, want):
        compare(
            g, w, {}, f"{what}: your {part} is not what one online-softmax step gives.", name=part
        )


online_softmax_update = Exercise(
    name="online_softmax_update",
    allowed=(),  # NumPy only: helpers.blockwise folds blocks the same way
    signature="online_softmax_update(m, l, acc, scores, V_block)",
    grade=_grade_update,
    reference=answers.online_softmax_update,
    hints=[
        "Three steps per block: the new running max m_new (per row), the factor that corrects "
        "what was summed with the old max, then add this block's exponentials. All of it row "
        "by row: m and l are (n_q,), scores (n_q, b).",
        "m_new = np.maximum(m, scores.max(axis=-1)); correction = np.exp(m - m_new); "
        "p = np.exp(scores - m_new[:, None]). l and acc are both multiplied by the correction "
        "(acc with correction[:, None]) before this block's p.sum(axis=-1) and p @ V_block are "
        "added.",
        "Where m_new is still -inf (a row whose keys are all masked), subtract 0 instead: "
        "shift = np.where(np.isneginf(m_new), 0.0, m_new); correction = np.exp(m - shift); "
        "p = np.exp(scores - shift[:, None]); return m_new, l * correction + p.sum(-1), "
        "acc * correction[:, None] + p @ V_block",
    ],
    stars=2,
    title="one step of the online softmax: rescale the running max, sum and output",
)


# ----------------------------------------------------------------------------------------------
# blockwise_attention(Q, K, V, block_size)


def _blockwise_wrong(Q, K, V, block_size, how):
    with np.errstate(all="ignore"):
        return _blockwise_wrong_quietly(Q, K, V, block_size, how)


def _blockwise_wrong_quietly(Q, K, V, block_size, how):
    n_q, n_k, d_k = Q.shape[0], K.shape[0], Q.shape[1]
    scale = {"unscaled": 1.0, "scale_d_v": 1 / np.sqrt(V.shape[1])}.get(how, 1 / np.sqrt(d_k))
    stops = range(0, n_k, block_size)
    if how == "last_block_dropped":
        stops = range(0, (n_k // block_size) * block_size, block_size)
    m, l, acc = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, V.shape[1]))
    for start in stops:
        if how == "only_last_block":
            m, l, acc = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, V.shape[1]))
        s, e = (0, block_size) if how == "first_block_repeated" else (start, start + block_size)
        m, l, acc = answers.online_softmax_update(m, l, acc, Q @ K[s:e].T * scale, V[s:e])
    return acc if how == "not_normalised" else acc / l[:, None]


_BLOCKWISE_MISTAKES = {
    "unscaled": "the scores are not scaled: multiply each tile Q @ K_block.T by 1/sqrt(d_k).",
    "scale_d_v": "the scores are divided by sqrt(d_v), the width of the values; the scale is "
    "1/sqrt(d_k), d_k = Q.shape[1].",
    "last_block_dropped": "the last, shorter block of keys is missing: when n_k is not a "
    "multiple of block_size, range(0, n_k, block_size) with stop = min(start + block_size, "
    "n_k) still visits it.",
    "only_last_block": "your output is attention over the last block only: m, l and acc must "
    "start at (-inf, 0, 0) once, before the loop, and carry over from block to block.",
    "first_block_repeated": "every step uses the first block of keys: slice K[start:stop] and "
    "V[start:stop] with the loop's start.",
    "not_normalised": "you return acc without dividing by l: the output is acc / l[:, None].",
}


def _grade_blockwise(call):
    rng = fresh_rng()
    while True:
        n_q, d_k, d_v = int(rng.integers(3, 8)), int(rng.integers(2, 7)), int(rng.integers(2, 7))
        if len({n_q, d_k, d_v}) == 3:
            break
    block = int(rng.integers(2, 5))
    n_k = block * int(rng.integers(2, 5)) + int(rng.integers(1, block))  # a shorter last block
    cases = [
        (
            f"n_k={n_k} keys in blocks of {block} (the last one shorter)",
            n_k,
            block,
            1.0,
            np.float64,
        ),
        ("blocks of 1 key", n_k, 1, 1.0, np.float64),
        (f"one block (block_size={n_k + 3} > n_k)", n_k, n_k + 3, 1.0, np.float64),
        ("large scores (Q and K times 20)", n_k, block, 20.0, np.float64),
        ("float32 inputs", n_k, block, 1.0, np.float32),
    ]
    for label, nk, bs, size, dtype in cases:
        Q = rng.standard_normal((n_q, d_k)) * size
        K = rng.standard_normal((nk, d_k)) * size
        # With large scores, values far from 0 (in [1, 2]): the output is then not a
        # cancelling sum, so an answer that works in float32 (its scores rounded by about
        # 1e-7 of ~500, which moves the weights by about 1e-4 relative) is not failed for it.
        V = rng.uniform(1, 2, (nk, d_v)) if size > 1 else rng.standard_normal((nk, d_v))
        what = (
            f"blockwise_attention(Q, K, V, block_size={bs}) on {label} (Q {Q.shape}, "
            f"K {K.shape}, V {V.shape})"
        )
        got = as_result_array(call(*(a.astype(dtype) for a in (Q, K, V)), bs), what, (n_q, d_v))
        s = Q @ K.T / np.sqrt(d_k)
        w = np.exp(s - s.max(-1, keepdims=True))
        expected = w / w.sum(-1, keepdims=True) @ V
        known = {}
        for how, message in _BLOCKWISE_MISTAKES.items():
            wrong = _blockwise_wrong(Q, K, V, bs, how)
            if not np.allclose(wrong, expected, rtol=1e-4, atol=1e-5):
                known[named(how, f"{what}: {message}")] = wrong
        compare(
            got,
            expected,
            known,
            f"{what}: your output differs from softmax(Q K^T / sqrt(d_k)) V.",
            name="output",
        )
    measured = _check_memory(call, rng)
    memory = (
        f"on {MEMORY_N_Q:,} queries x {MEMORY_N_K:,} keys it never held the (n_q, n_k) score matrix"
        if measured
        else "its memory was not measured (Python's tracemalloc was already tracing something "
        "else, and the check does not disturb it)"
    )
    return (
        "your blockwise attention equals softmax(Q K^T / sqrt(d_k)) V with a shorter last "
        f"block, blocks of 1, one block, large scores and float32, and {memory}."
    )


# The memory case. It must tell O(n * d) memory (the inputs, copies of them, the output, one
# tile of scores per step) from O(n_q * n_k) (the score matrix), so its sizes put the two far
# apart: with n_q = 256, n_k = 8192 and d_k = d_v = 4, one set of Q, K, V and the output takes
# 0.54 MB, one (n_q, block) tile of scores 0.26 MB, the whole score matrix 16.8 MB. The limit,
# half the score matrix, leaves room for ten more copies of every input on top of three tiles
# alive at once (the reference's peak), and no room for the matrix. When grading, the peak is
# also read from the kernel's resident memory (course_grader.isolation.peak), which counts what the
# kernel does around the call too (about 2 MB measured): 8,192 keys keep that far below the
# limit (2,048 did not). More queries would widen the gap further, but an answer that loops
# over the queries in Python (a correct answer) would then run for seconds under tracemalloc
# (0.7 s measured at these sizes).
MEMORY_N_Q, MEMORY_N_K, MEMORY_D, MEMORY_BLOCK = 256, 8192, 4, 128


def _peak_beyond_inputs(call, Q, K, V, block) -> float | None:
    """Bytes the answer held at once beyond the copies of Q, K and V the check hands it (None
    when not measured: tracemalloc already tracing something else, which the check does not
    disturb). When grading, measured in the student's kernel (see docs/INSTRUCTORS.md)."""
    # The check's call measures where the answer runs: in this process (LocalAnswer) or, when
    # grading, in the student's kernel (course_grader.isolation.remote.RemoteAnswer).
    peak = call.measure_peak(Q, K, V, block)[1]
    return None if peak is None else peak - (Q.nbytes + K.nbytes + V.nbytes)


def _check_memory(call, rng) -> bool:
    """Fail if the answer's peak memory is a large fraction of the (n_q, n_k) score matrix.

    Copies of the inputs are fine (``np.asarray(K, dtype=np.float64)``, ``.copy()``, a float32
    round trip): they are O(n * d), and the sizes above keep many of them below the limit.
    Returns whether the memory was measured."""
    n_q, n_k, d, block = MEMORY_N_Q, MEMORY_N_K, MEMORY_D, MEMORY_BLOCK
    Q, K, V = (rng.standard_normal(shape) for shape in ((n_q, d), (n_k, d), (n_k, d)))
    full = n_q * n_k * 8  # bytes of the float64 score matrix
    inputs = Q.nbytes + K.nbytes + V.nbytes
    extra = _peak_beyond_inputs(call, Q, K, V, block)
    if extra is None:
        return False
    if extra >= full / 2:
        raise Mistake(
            named(
                "full_matrix",
                f"blockwise_attention(Q, K, V, block_size={block}) on Q {Q.shape}, K {K.shape}, "
                f"V {V.shape}: the output is right, but your answer held {extra / 1e6:.1f} MB at "
                f"once beyond its inputs, at least half of the whole ({n_q}, {n_k}) score matrix "
                f"({full / 1e6:.1f} MB). Copies of Q, K and V are not the problem (all three "
                f"take {inputs / 1e6:.2f} MB); a ({n_q}, {block}) tile of scores takes "
                f"{n_q * block * 8 / 1e6:.2f} MB. Compute one tile per step, "
                "Q @ K[start:stop].T, and never all of Q @ K.T.",
            )
        )
    return True


blockwise_attention = Exercise(
    name="blockwise_attention",
    ready_made="helpers.blockwise_attention",
    allowed=(),  # NumPy and the learner's own online_softmax_update
    signature="blockwise_attention(Q, K, V, block_size)",
    grade=_grade_blockwise,
    reference=answers.blockwise_attention,
    hints=[
        "Start from m = -inf, l = 0, acc = 0 (shapes (n_q,), (n_q,), (n_q, d_v)), then walk "
        "over the keys block_size at a time and let your online_softmax_update fold each block "
        "in. The output is acc / l at the end.",
        "For start in range(0, n_k, block_size): stop = min(start + block_size, n_k); the tile "
        "of scores is Q @ K[start:stop].T / np.sqrt(d_k), shape (n_q, stop - start); the values "
        "are V[start:stop].",
        "m, l, acc = np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v)); for start in "
        "range(0, n_k, block_size): m, l, acc = online_softmax_update(m, l, acc, "
        "Q @ K[start:start + block_size].T / np.sqrt(Q.shape[1]), V[start:start + "
        "block_size]); return acc / l[:, None]",
    ],
    stars=2,
    title="attention one block of keys at a time, never holding the n x n matrix",
)


blockwise_memory_growth = Prediction(
    name="blockwise_memory_growth",
    question="From n = 1024 to n = 4096 (4 times as many tokens) the naive peak memory grows "
    "about 16 times. By what factor does the peak memory of blockwise attention (blocks of 128 "
    "keys) grow? (a number)",
    answer=answers.blockwise_memory_growth,
    explanation="Blockwise attention holds one (n, 128) tile of scores and the (n, d_v) state "
    "m, l, acc: every one of them has one row per query, so its memory grows like n, not n^2. "
    "The time still grows like n^2: every query still meets every key.",
)


# ----------------------------------------------------------------------------------------------
# causal_blockwise_attention(Q, K, V, block_size) -> (output, tiles): the ★★★ challenge


def _causal_attention(Q, K, V, scale=None, offset=0, mask="causal"):
    """Plain attention with query i seeing keys j <= i + offset (or every key)."""
    n = Q.shape[0]
    s = Q @ K.T * (1 / np.sqrt(Q.shape[1]) if scale is None else scale)
    if mask == "causal":
        s = np.where(np.arange(n)[None, :] > np.arange(n)[:, None] + offset, -np.inf, s)
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True) @ V


def _causal_wrong(Q, K, V, b, how):
    n = Q.shape[0]
    if how == "no_mask":
        return _causal_attention(Q, K, V, mask=None)
    if how == "unscaled":
        return _causal_attention(Q, K, V, scale=1.0)
    if how == "strict_mask":
        return _causal_attention(Q, K, V, offset=-1)
    block_of = np.arange(n) // b
    if how == "sees_next_key":  # key i + 1 too, when it lies in the query's own block
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        allowed = (j <= i + 1) & (block_of[None, :] <= block_of[:, None])
    elif how == "diagonal_unmasked":  # whole key blocks up to the query's own block
        allowed = block_of[None, :] <= block_of[:, None]
    elif how == "skips_diagonal":  # only the key blocks strictly before the query's block
        allowed = block_of[None, :] < block_of[:, None]
    else:
        raise ValueError(how)
    s = np.where(allowed, Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True) @ V


_CAUSAL_MISTAKES = {
    "no_mask": "your output is attention with no mask: every query sees the future. Query i "
    "may only see keys 0..i.",
    "diagonal_unmasked": "you skip the future tiles, but inside the diagonal tile (query block "
    "== key block) nothing is masked, so a query sees the later keys of its own block. Set "
    "scores to -inf where the key position j > the query position i.",
    "skips_diagonal": "you skip the diagonal tiles too: a query block must also visit its own "
    "key block (k0 <= q0), masked inside. Without it the first block's queries see no key "
    "at all.",
    "strict_mask": "your mask hides the diagonal: query i may see key i itself (j <= i), so "
    "mask only j > i. Row 0 otherwise sees nothing.",
    "sees_next_key": "your mask lets query i see key i + 1: mask every j > i.",
    "unscaled": "the scores are not scaled: multiply each tile by 1/sqrt(d_k).",
}


def _grade_causal(call):
    rng = fresh_rng()
    d_k, d_v = int(rng.integers(2, 6)), int(rng.integers(6, 9))
    cases = []
    for _ in range(2):
        b = int(rng.integers(3, 5))  # >= 3: seeing key i + 1 differs from the whole block
        n = b * int(rng.integers(3, 5)) + int(rng.integers(1, b))  # a shorter last block
        cases.append((n, b))
    n = int(rng.integers(9, 13))
    cases += [(n, 1), (n, n + 2)]
    for n, b in cases:
        Q, K, V = (rng.standard_normal(s) for s in ((n, d_k), (n, d_k), (n, d_v)))
        n_b = -(-n // b)  # blocks: ceil(n / b)
        what = (
            f"causal_blockwise_attention(Q, K, V, block_size={b}) with n={n} ({n_b} blocks "
            f"of queries and of keys)"
        )
        value = call(Q, K, V, b)
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise Mistake(
                named(
                    "not_a_pair",
                    f"{what} returned {type(value).__name__}; return two "
                    "values: `return output, tiles` (tiles = how many score tiles you "
                    "computed).",
                ),
            )
        out = as_result_array(value[0], what, (n, d_v), part="output")
        expected, want_tiles = answers.causal_blockwise_attention(Q, K, V, b)
        known = {}
        for how, message in _CAUSAL_MISTAKES.items():
            wrong = _causal_wrong(Q, K, V, b, how)
            if not np.allclose(np.nan_to_num(wrong), expected, rtol=1e-4, atol=1e-5):
                known[named(how, f"{what}: {message}")] = wrong
        compare(
            out,
            expected,
            known,
            f"{what}: your output differs from causal attention (query i sees keys 0..i).",
            name="output",
        )
        tiles = value[1]
        if isinstance(tiles, (bool, np.bool_)) or not isinstance(tiles, numbers.Integral):
            raise Mistake(
                named(
                    "tiles_not_int",
                    f"{what}: tiles should be a whole number (the count of "
                    f"score tiles you computed), got {type(tiles).__name__}.",
                ),
            )
        if tiles == n_b * n_b and n_b > 1:
            raise Mistake(
                named(
                    "computed_every_tile",
                    f"{what}: the output is right, but you computed "
                    f"all {n_b} x {n_b} = {n_b * n_b} tiles. A tile whose keys all come after "
                    f"its last query is fully masked; skip it: {want_tiles} = n_b(n_b+1)/2 "
                    "tiles are enough.",
                ),
            )
        if tiles != want_tiles:
            raise Mistake(
                named(
                    "tile_count",
                    f"{what}: the output is right, but you report {tiles} "
                    f"tiles; visiting each query block's key blocks up to and including its "
                    f"own (the diagonal) gives n_b(n_b+1)/2 = {want_tiles}.",
                ),
            )
    measured = _check_causal_memory(call, rng)
    return (
        "your causal blockwise attention equals causal attention with a shorter last block, "
        "blocks of 1 and one block, and visits only the n_b(n_b+1)/2 tiles on or below the "
        "diagonal: about half the work of the full square"
        + (
            f"; on n = {CAUSAL_MEMORY_N:,} tokens it never held the (n, n) score matrix or mask."
            if measured
            else " (its memory was not measured: Python's tracemalloc was already tracing "
            "something else, and the check does not disturb it)."
        )
    )


# The causal memory case: the tile count is what the answer reports, so what it computed is
# checked another way. With n = 2048 and d = 4, Q, K, V take 0.2 MB, one (128, 128) tile of
# scores 0.13 MB and one query block's strip of keys up to its diagonal at most (128, 2048),
# 2.1 MB; the whole (n, n) score matrix takes 33.6 MB and a boolean (n, n) mask 4.2 MB. The limit,
# an eighth of the matrix (4.2 MB), leaves room for the strip and copies of the inputs, and none
# for the matrix, its float mask, or its boolean mask alongside.
CAUSAL_MEMORY_N, CAUSAL_MEMORY_BLOCK = 2048, 128


def _check_causal_memory(call, rng) -> bool:
    n, d, block = CAUSAL_MEMORY_N, MEMORY_D, CAUSAL_MEMORY_BLOCK
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
    extra = _peak_beyond_inputs(call, Q, K, V, block)
    if extra is None:
        return False
    full = n * n * 8
    if extra >= full / 8:
        raise Mistake(
            named(
                "full_matrix",
                f"causal_blockwise_attention(Q, K, V, block_size={block}) on n = {n} tokens "
                f"(d_k = d_v = {d}): the output is right, but your answer held "
                f"{extra / 1e6:.1f} MB at once beyond its inputs, while one ({block}, {block}) "
                f"tile of scores takes {block * block * 8 / 1e6:.2f} MB and the whole ({n}, {n})"
                f" score matrix {full / 1e6:.1f} MB (a boolean ({n}, {n}) mask "
                f"{n * n / 1e6:.1f} MB); the limit here is {full / 8e6:.1f} MB. Compute one tile "
                "per step, Q[q0:q1] @ K[k0:k1].T with at most block_size keys, mask only inside "
                "the diagonal tile, and never build the (n, n) scores or mask, nor all of a "
                "query block's keys at once.",
            )
        )
    return True


causal_blockwise_attention = Exercise(
    name="causal_blockwise_attention",
    # The mask of a diagonal tile is a causal_mask; attention itself (helpers.
    # scaled_dot_product_attention, helpers.blockwise) would skip the online softmax.
    allowed=("helpers.causal_mask",),
    signature="causal_blockwise_attention(Q, K, V, block_size)",
    grade=_grade_causal,
    reference=answers.causal_blockwise_attention,
    hints=[
        "Cut both the queries and the keys into blocks of block_size: a grid of n_b x n_b "
        "tiles, n_b = ceil(n / block_size). Query block q0:q1 only needs key blocks that start "
        "before q1; the others lie entirely in its future.",
        "For each query block run the online softmax over key blocks k0 = 0, b, ... while "
        "k0 < q1, counting the tiles. Only the diagonal tile (k0 == q0) has some future keys "
        "inside: set those scores to -inf where key j > query i.",
        "for q0 in range(0, n, b): q1 = min(q0 + b, n); m, l, acc = start state; for k0 in "
        "range(0, q1, b): k1 = min(k0 + b, n); s = Q[q0:q1] @ K[k0:k1].T / np.sqrt(d_k); "
        "s = np.where(np.arange(k0, k1)[None, :] > np.arange(q0, q1)[:, None], -np.inf, s); "
        "tiles += 1; m, l, acc = online_softmax_update(m, l, acc, s, V[k0:k1]); then "
        "output[q0:q1] = acc / l[:, None]",
    ],
    stars=3,
    title="challenge: causal blockwise attention that skips the fully masked tiles",
)
