"""Lesson 07 exercises: the memory of the attention weights, and attention without them.

- ``score_matrix_bytes(n, h, batch, dtype)`` (★): ``batch * h * n * n * itemsize`` as an ``int``.
- ``score_memory_doubling`` (prediction): doubling n multiplies that memory by 4.
- ``online_softmax_update(m, l, acc, scores, V_block)`` (★★): one step of the online softmax
  (in :mod:`.lesson07_online`).
- ``blockwise_attention(Q, K, V, block_size)`` (★★): the output, one block of keys at a time.
- ``causal_blockwise_attention(Q, K, V, block_size)`` (★★★): causal, skipping future tiles
  (in :mod:`.lesson07_causal`).

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


def _close(got: int | float, wrong: int | float) -> bool:
    """Within a relative 1e-12; an int beyond any float is close to no float."""
    try:
        return abs(got - wrong) <= 1e-12 * abs(wrong)
    except OverflowError:
        return False


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
    if isinstance(value, numbers.Integral):  # any size: Python's ints do not overflow
        return int(value)
    if not np.isfinite(float(value)):
        raise Mistake(
            f"{what} returned {value!r}; it should return a whole number of bytes", "nan_or_inf"
        )
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
            if _close(got, wrong):
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


def peak_beyond_inputs(call, Q, K, V, block) -> float | None:
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
    extra = peak_beyond_inputs(call, Q, K, V, block)
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
