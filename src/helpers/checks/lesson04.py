"""Lesson 04 exercises: a stable ``softmax``, batched ``attention(Q, K, V)``, a prediction about
temperature; its ★★★ challenge ``zero_temperature_attention`` (the T -> 0 limit) is in
:mod:`.lesson04_temperature`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attention import scaled_dot_product_attention
from ..attention import softmax as _softmax
from .answers import lesson04 as answers
from .compare import as_result_array, as_result_pair, compare, raw_softmax, unpack_pair
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import LearnerError, Mistake, named
from .prediction import Prediction

# ------------------------------------------------------------------------------ softmax
# What common wrong softmaxes return, to recognise them. NumPy's overflow warnings are
# silenced: a NaN here is the point.


def _quiet(fn):
    def wrapped(z):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            return fn(np.asarray(z, dtype=float))

    return wrapped


@_quiet
def _no_max(z):
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@_quiet
def _global_max(z):
    e = np.exp(z - z.max())
    return e / e.sum(axis=-1, keepdims=True)


@_quiet
def _min_shift(z):
    e = np.exp(z - z.min(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@_quiet
def _mean_shift(z):
    e = np.exp(z - z.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@_quiet
def _no_exp(z):
    return z / z.sum(axis=-1, keepdims=True)


@_quiet
def _no_exp_shifted(z):
    s = z - z.max(axis=-1, keepdims=True)
    return s / s.sum(axis=-1, keepdims=True)


@_quiet
def _not_normalised(z):
    return np.exp(z - z.max(axis=-1, keepdims=True))


@_quiet
def _not_normalised_no_max(z):
    return np.exp(z)


@_quiet
def _no_keepdims(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)  # (n, n) / (n,): divides column i by row i's sum


@_quiet
def _no_keepdims_max(z):
    e = np.exp(z - z.max(axis=-1))  # (n, n) - (n,): column i loses row i's max
    return e / e.sum(axis=-1, keepdims=True)


@_quiet
def _no_keepdims_either(z):
    e = np.exp(z - z.max(axis=-1))
    return e / e.sum(axis=-1)


@_quiet
def _no_keepdims_no_max(z):
    e = np.exp(z)
    return e / e.sum(axis=-1)


# Each common wrong softmax: (its id, when the input's shape can show it, what it returns,
# the message; {what} is the answer's name, {rows} "row" or "rows", {ndim} the input's rank).
_NO_KEEPDIMS_SUM = (
    "e.sum(axis=-1) without keepdims=True has shape (n,), so the division broadcasts it along "
    "the wrong axis (row i gets divided by other rows' sums). Use e.sum(axis=-1, keepdims=True)."
)
_NO_KEEPDIMS_MAX = (
    "subtract the row max with keepdims=True: z.max(axis=-1, keepdims=True). Without it the max "
    "has shape (n,), and NumPy broadcasts the max of row i across column i instead of along "
    "row i."
)


def _always(z: np.ndarray) -> bool:
    return True


def _square(z: np.ndarray) -> bool:  # only then does a missing keepdims broadcast
    return z.ndim == 2 and z.shape[0] == z.shape[1]


_SOFTMAX_MISTAKES = (
    ("min_shift", _always, _min_shift,
     "{what}: you subtracted the row's minimum, not its maximum. Softmax is shift-invariant, so "
     "the answer would be the same, but after z - min every entry is >= 0 and np.exp still sees "
     "large positive numbers: on a row like [0, 1000] it overflows to inf, and inf / inf is NaN. "
     "Subtract the max: z.max(axis=-1, keepdims=True)."),
    ("mean_shift", _always, _mean_shift,
     "{what}: you subtracted the row's mean, not its maximum. That centres the scores, but "
     "entries above the mean stay positive, so on a row that spreads from -1000 to +1000 np.exp "
     "still sees large positive numbers, overflows to inf, and inf / inf is NaN. Subtract the "
     "max: z.max(axis=-1, keepdims=True)."),
    ("overflow", _always, _no_max,
     "{what}: NaN or inf on large scores. np.exp(1000) overflows to inf, and inf / inf is NaN. "
     "Subtract each row's maximum before np.exp: softmax is shift-invariant, so the answer is "
     "the same and exp never sees a positive number."),
    ("global_max", _always, _global_max,
     "{what}: you subtracted the maximum of the whole matrix. That keeps exp from overflowing, "
     "but a row whose scores are far below that maximum underflows to 0 / 0 = NaN. Subtract "
     "each row's own max: z.max(axis=-1, keepdims=True)."),
    ("whole_matrix", _always, lambda z: raw_softmax(z, axis=None),
     "{what}: the whole matrix sums to 1, but each row should. Take the max and the sum along "
     "axis=-1 with keepdims=True."),
    ("no_exp", _always, _no_exp,
     "{what}: did you forget np.exp? Dividing the scores by their sum is not a softmax (it can "
     "give negative 'weights')."),
    ("no_exp_shifted", _always, _no_exp_shifted,
     "{what}: did you forget np.exp? You subtracted the max and normalised, but without exp the "
     "entries are not positive."),
    ("not_normalised", _always, _not_normalised,
     "{what}: the {rows} do not sum to 1. After np.exp, divide by the sum along the last axis "
     "(keepdims=True)."),
    ("exp_only", _always, _not_normalised_no_max,
     "{what}: the {rows} do not sum to 1: you took np.exp but never divided by the sum (and "
     "subtract the row max first, or large scores overflow)."),
    ("columns_sum_to_one", lambda z: z.ndim == 2, lambda z: raw_softmax(z, axis=0),
     "{what}: your columns sum to 1, not your {rows}. Softmax runs along the last axis "
     "(axis=-1): one distribution per row (per query)."),
    ("axis_1_not_last", lambda z: z.ndim >= 3, lambda z: raw_softmax(z, axis=1),
     "{what}: your distributions run along axis 1. For a matrix (n_q, n_k) axis 1 is the last "
     "axis, the keys; for this {ndim}-D array it is not. Use axis=-1, which is the keys whatever "
     "the number of leading axes."),
    ("matrix_sums_to_one", lambda z: z.ndim >= 3, lambda z: raw_softmax(z, axis=(-2, -1)),
     "{what}: each (n_q, n_k) matrix of the batch sums to 1, but each row should. A row.max() "
     "or e.sum() without an axis, applied to each z[b], takes all the rows of that matrix "
     "together; reduce along axis=-1 (keepdims=True) instead."),
    ("no_keepdims_sum", _square, _no_keepdims, "{what}: " + _NO_KEEPDIMS_SUM),
    ("no_keepdims_max", _square, _no_keepdims_max, "{what}: " + _NO_KEEPDIMS_MAX),
    ("no_keepdims_either", _square, _no_keepdims_either,
     "{what}: neither z.max(axis=-1) nor e.sum(axis=-1) keeps its axis; add keepdims=True to "
     "both, so each row is shifted by its own max and divided by its own sum (without it, row "
     "i's max and sum land on column i)."),
    ("no_keepdims_no_max", _square, _no_keepdims_no_max,
     "{what}: divide by the row sum with keepdims=True, np.exp(z).sum(axis=-1, keepdims=True): "
     "without keepdims the sum has shape (n,) and divides column i by row i's sum. Also "
     "subtract the row max first, or large scores overflow."),
)  # fmt: skip


def _softmax_mistakes(z: np.ndarray, what: str) -> dict[str, np.ndarray]:
    """What each common wrong softmax returns on ``z``, keyed by its named mistake."""
    rows = "rows" if z.size > z.shape[-1] else "row"
    return {
        named(mistake, message.format(what=what, rows=rows, ndim=z.ndim)): wrong(z)
        for mistake, shows, wrong, message in _SOFTMAX_MISTAKES
        if shows(z)
    }


def _softmax_cases(rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    n, m = int(rng.integers(3, 7)), int(rng.integers(7, 10))  # rectangular: n != m
    # Scores around 1000 in one row, around 0 and -1000 in the others; multiples of 1/64, so
    # a float32 answer holds them exactly (a float32 1000.x is only good to 6e-5).
    big = np.round(rng.normal(0.0, 3.0, (3, 5)) * 64) / 64
    big[0] += 1000.0
    big[2] -= 1000.0
    # Scores that spread over +-1000 *within* each row: only subtracting the row's max keeps
    # every exponent <= 0 (subtracting the min or the mean still overflows). Each row holds a
    # score near -1000, one near 0 and one near +1000, plus a few ~N(0, 500); multiples of 1/64.
    wide = np.round(rng.normal(0.0, 500.0, (n, m)) * 64) / 64
    for row in wide:
        row[rng.permutation(m)[:3]] = np.round(rng.normal(0.0, 3.0, 3) * 64) / 64 + [-1000, 0, 1000]
    square = int(rng.integers(3, 6))
    # A batch (b, n_q, n_k) whose matrices sit at different heights, one row per matrix spread
    # over +-1000; and a (b, h, n_q, n_k) batch of heads. b = 2 and n_q = 3 != n_k, so a
    # reduction without keepdims cannot broadcast by accident.
    batch = np.round(rng.normal(0.0, 3.0, (2, 3, m)) * 64) / 64 + np.array([[[800.0]], [[-800.0]]])
    batch[1, 0, rng.permutation(m)[:2]] = [-1000.0, 1000.0]
    return [
        ("softmax(z) on a square score matrix", rng.normal(0.0, 2.0, (square, square))),
        ("softmax(z) on random scores", rng.normal(0.0, 2.0, (n, m))),
        ("softmax(z) on scores around +1000, 0 and -1000", big),
        ("softmax(z) on rows that spread from -1000 to +1000", wide),
        ("softmax(z) on one row", rng.normal(0.0, 2.0, (1, m))),
        ("softmax(z) with one key per row", rng.normal(0.0, 2.0, (n, 1))),
        (f"softmax(z) on a batch (b, n_q, n_k) = (2, 3, {m}) around +800 and -800", batch),
        (f"softmax(z) on batch and heads (b, h, n_q, n_k) = (2, 3, 4, {m})",
         rng.normal(0.0, 3.0, (2, 3, 4, m))),
        ("softmax(z) on a 1-D row of scores (n_k,)", rng.normal(0.0, 2.0, m)),
    ]  # fmt: skip


def _grade_softmax(call) -> str:
    ranks_passed: set[int] = set()
    for what, z in _softmax_cases(fresh_rng()):
        try:
            value = call(z)
        except LearnerError as error:
            if ranks_passed and z.ndim not in ranks_passed:
                raise Mistake(
                    named(
                        "fixed_rank",
                        f"{what}: your softmax works on 2-D matrices but raises on a "
                        f"{z.ndim}-D array. A loop over z gives rows only when z is a matrix "
                        "(a 1-D z gives single numbers, a 3-D z whole matrices). Take the max "
                        "and the sum along axis=-1 with keepdims=True, which works for any "
                        "number of leading axes, or loop over z.reshape(-1, z.shape[-1]) and "
                        "reshape back.\n" + str(error),
                    )
                ) from None
            raise
        got = as_result_array(value, what, z.shape)
        compare(
            got,
            _softmax(z, axis=-1),
            _softmax_mistakes(z, what),
            f"{what} differs from softmax along the last axis: exp(z - row max), then divide "
            "each row by its sum (subtracting the max keeps every exponent <= 0, even when a "
            "row spreads from -1000 to +1000).",
        )
        ranks_passed.add(z.ndim)
    return (
        "your softmax matches on fresh random scores, a square matrix, rows around "
        "+-1000, rows that spread from -1000 to +1000 (no overflow), single rows and columns, "
        "a 1-D row, and batches (b, n_q, n_k) and (b, h, n_q, n_k)."
    )


softmax = Exercise(
    name="softmax",
    ready_made="helpers.softmax",
    allowed=(),
    signature="softmax(z)",
    grade=_grade_softmax,
    reference=answers.softmax,
    stars=1,
    title="a stable softmax over the last axis: a row, a score matrix or a batch",
    hints=[
        "The lesson's stable_softmax_row works on one row: subtract that row's max, exponentiate, "
        "divide by the sum. Every row of z (along its last axis, whatever the leading axes) is "
        "one such distribution, with its own max: a row near -1000 and a row near +1000 need "
        "different shifts. NumPy reductions along axis=-1 do all rows at once.",
        "np.exp(1000) is inf. Subtract each row's max first: z.max(axis=-1, keepdims=True) has "
        "z's shape with the last axis 1, (..., n_q, 1): one max per row, which broadcasts along "
        "its own row. Divide by the row sums taken the same way. The result does not change "
        "(softmax is shift-invariant) and nothing overflows.",
        "z = z - z.max(axis=-1, keepdims=True); e = np.exp(z); "
        "return e / e.sum(axis=-1, keepdims=True)",
    ],
)


# ------------------------------------------------------------------------------ attention
# Batched: Q (..., n_q, d_k), K (..., n_k, d_k), V (..., n_k, d_v), any number of leading axes.


def _weights_mistakes(Q, K, what: str) -> dict[str, np.ndarray]:
    d_k, n_k = Q.shape[-1], K.shape[-2]
    scores = Q @ np.swapaxes(K, -1, -2)
    scaled = scores / np.sqrt(d_k)
    with np.errstate(all="ignore"):
        naive = np.exp(scaled)
        naive = naive / naive.sum(axis=-1, keepdims=True)
        global_max = np.exp(scaled - scaled.max())
        global_max = global_max / global_max.sum(axis=-1, keepdims=True)
    mistakes = {
        named(
            "unscaled",
            f"{what}: the weights are not scaled. Divide the scores Q K^T by sqrt(d_k) before "
            "the softmax (without it, large d_k saturates the softmax).",
        ): raw_softmax(scores),
        named(
            "scale_dk",
            f"{what}: you divided the scores by d_k = {d_k}; the paper divides by "
            f"sqrt(d_k) = {np.sqrt(d_k):g}.",
        ): raw_softmax(scores / d_k),
        named(
            "scale_n",
            f"{what}: you divided the scores by the sequence length n_k = {n_k}; the scale is "
            f"1 / sqrt(d_k), with d_k = {d_k} the width of Q and K.",
        ): raw_softmax(scores / n_k),
        named(
            "returned_scores",
            f"{what}: the second value holds the scores Q K^T / sqrt(d_k); return the weights, "
            "softmax(scores), whose rows sum to 1.",
        ): scaled,
        named(
            "returned_raw_scores",
            f"{what}: the second value holds the raw scores Q K^T; return the weights, "
            "softmax(Q K^T / sqrt(d_k)).",
        ): scores,
        named(
            "columns_sum_to_one",
            f"{what}: your weights' columns sum to 1, not the rows: take the softmax along the "
            "last axis (keys, axis=-1), one distribution per query.",
        ): raw_softmax(scaled, axis=-2),
        named(
            "overflow",
            f"{what}: your weights contain NaN or inf. np.exp of scores around 800 overflows; "
            "subtract each row's max before np.exp (your stable softmax).",
        ): naive,
        named(
            "global_max",
            f"{what}: you subtracted one maximum for the whole batch. The example whose scores "
            "are far below it underflows to 0 / 0 = NaN. Subtract each row's own max: "
            "scores.max(axis=-1, keepdims=True).",
        ): global_max,
    }
    mistakes.update(_shape_mistakes(Q, K, scaled, what))
    return mistakes


def _shape_mistakes(Q, K, scaled, what: str) -> dict[str, np.ndarray]:
    """The wrong weights only some shapes can show: a batch's axes (Q with leading axes), and
    the transposes (as many queries as keys)."""
    d_k = Q.shape[-1]
    mistakes = {}
    if Q.ndim >= 3:
        mistakes[
            named(
                "batch_axis",
                f"{what}: your weights sum to 1 across the batch (axis 0), not along each row. "
                "The leading axes are separate examples; the softmax runs over the keys only: "
                "axis=-1.",
            )
        ] = raw_softmax(scaled, axis=0)
        KT = K.T  # what K.T gives on a batch: every axis reversed, (d_k, n_k, b) for (b, n_k, d_k)
        try:
            with np.errstate(all="ignore"):
                flipped = Q @ KT / np.sqrt(d_k)
        except ValueError:
            flipped = None
        if flipped is not None and flipped.shape == scaled.shape:
            mistakes[named("transpose_all_axes", _transpose_all_axes_message(what))] = raw_softmax(
                flipped
            )
    if Q.shape[-2] == K.shape[-2]:
        mistakes[
            named(
                "keys_on_rows",
                f"{what}: the scores are transposed: K Q^T puts keys on the rows. Use Q K^T so "
                "that row i holds query i's score against every key.",
            )
        ] = raw_softmax(scaled.swapaxes(-1, -2))
        mistakes[
            named(
                "weights_transposed",
                f"{what}: the weights are transposed: row i should be query i's distribution "
                "over the keys (rows sum to 1).",
            )
        ] = raw_softmax(scaled).swapaxes(-1, -2)
    return mistakes


def _transpose_all_axes_message(what: str) -> str:
    return (
        f"{what}: K.T reverses *every* axis: on a batch K of shape (b, n_k, d_k) it gives "
        "(d_k, n_k, b), not (b, d_k, n_k). Swap only the last two axes: "
        "np.swapaxes(K, -1, -2) (or K.transpose(0, 2, 1) for exactly 3 axes, or np.einsum with "
        "'...')."
    )


def unpack_batched(value: Any, what: str, lead, n_q: int, n_k: int, d_v: int):
    """The learner's (output, weights), or a Mistake saying what came back instead."""
    out_shape, w_shape = (*lead, n_q, d_v), (*lead, n_q, n_k)
    value = unpack_pair(value, what, out_shape, w_shape)
    first = np.shape(value[0])
    if d_v != n_k and first == w_shape:  # (weights, output) is named by unpack_pair
        raise Mistake(
            named(
                "weights_as_output",
                f"{what}: the first value has the weights' shape {first}; the output is "
                f"weights @ V, shape (..., n_q, d_v) = {out_shape}.",
            )
        )
    return as_result_pair(value, what, out_shape, w_shape)


def _attention_cases(rng: np.random.Generator):
    """(what, Q, K, V), from no leading axis to two; sizes differ so each mistake shows."""
    n, d_k, d_v = int(rng.integers(5, 8)), 16, 3  # sqrt(d_k) = 4 differs from d_k and n
    X = rng.normal(size=(n, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, d)) / np.sqrt(8) for d in (d_k, d_k, d_v))
    # Scores around 800 in one example of the batch, ordinary in the other: a shared last
    # column adds 40 * 40 / sqrt(4) to every score of example 0 (its softmax ignores that); the
    # rest are halves, so float32 holds them exactly.
    big_Q = np.round(rng.normal(size=(2, 4, 4)) * 2) / 2
    big_K = np.round(rng.normal(size=(2, 5, 4)) * 2) / 2
    big_Q[0, :, -1] = big_K[0, :, -1] = 40.0
    big_Q[1, :, -1] = big_K[1, :, -1] = 0.0  # example 1: ordinary scores
    b, h = 2, 3
    return [
        ("attention(Q, K, V) on one (n, d_k) sequence, no batch axis (self-attention)",
         X @ W_Q, X @ W_K, X @ W_V),
        # b = n_k = d_k = 4: here K.T (flipping every axis) runs without an error, wrongly.
        ("attention(Q, K, V) on a batch of 4, Q (4, 3, 4), K (4, 4, 4)",
         rng.normal(size=(4, 3, 4)), rng.normal(size=(4, 4, 4)), rng.normal(size=(4, 4, 2))),
        ("attention(Q, K, V) on a batch (b, n_q, d_k) with n_q = 3 queries and n_k = 7 keys",
         rng.normal(size=(b, 3, 9)), rng.normal(size=(b, 7, 9)), rng.normal(size=(b, 7, 2))),
        ("attention(Q, K, V) on batch and heads (b, h, n, d_k) = (2, 3, 5, 6)",
         rng.normal(size=(b, h, 5, 6)), rng.normal(size=(b, h, 5, 6)),
         rng.normal(size=(b, h, 5, 4))),
        ("attention(Q, K, V) on a batch whose example 0 has scores around 800",
         big_Q, big_K, rng.normal(size=(2, 5, 3))),
        ("attention(Q, K, V) on one token, with three leading axes (1, 2, 1, 1, 4)",
         rng.normal(size=(1, 2, 1, 1, 4)), rng.normal(size=(1, 2, 1, 1, 4)),
         rng.normal(size=(1, 2, 1, 1, 3))),
    ]  # fmt: skip


def _ranks_that_run(call, cases, failed_ndim: int) -> set[int]:
    """The input ranks (2-D, 3-D, ...) on which the answer at least runs without raising."""
    ranks = set()
    for _, Q, K, V in cases:
        if Q.ndim != failed_ndim and Q.ndim not in ranks:
            try:
                call(Q, K, V)
            except Exception:  # LearnerError, or a stub: either way it does not run there
                continue
            ranks.add(Q.ndim)
    return ranks


def _grade_attention(call) -> str:
    passed_ranks: list[int] = []
    cases = _attention_cases(fresh_rng())
    for what, Q, K, V in cases:
        lead, n_q, n_k, d_v = Q.shape[:-2], Q.shape[-2], K.shape[-2], V.shape[-1]
        try:
            value = call(Q, K, V)
        except LearnerError as error:
            text = str(error)
            if Q.ndim >= 3 and (".T" in text or "transpose()" in text):
                raise Mistake(
                    named("transpose_all_axes", _transpose_all_axes_message(what) + "\n" + text)
                ) from None
            works_on = set(passed_ranks) or _ranks_that_run(call, cases, Q.ndim)
            if works_on and Q.ndim not in works_on:
                ranks = " and ".join(f"{r}-D" for r in sorted(works_on))
                raise Mistake(
                    named(
                        "fixed_rank",
                        f"{what}: your attention works on {ranks} inputs but raises on "
                        f"{Q.ndim}-D ones. The exercise asks for any number of leading axes: "
                        "use Q @ np.swapaxes(K, -1, -2) and reductions along axis=-1, or "
                        "np.einsum('...qd,...kd->...qk', Q, K).\n" + text,
                    )
                ) from None
            raise
        expected_out, expected_w = scaled_dot_product_attention(Q, K, V)
        output, weights = unpack_batched(value, what, lead, n_q, n_k, d_v)
        compare(
            weights,
            expected_w,
            _weights_mistakes(Q, K, what),
            f"{what}: the weights differ from softmax(Q K^T / sqrt(d_k)) taken along each row "
            "(axis=-1), separately for each example of the batch.",
            name="weights",
        )
        mistakes = {}
        if d_v == n_k:
            mistakes[
                named(
                    "weights_as_output",
                    f"{what}: the first value holds the weights; the output is weights @ V.",
                )
            ] = expected_w
        if n_q == n_k:
            mistakes[
                named(
                    "output_transposed_weights",
                    f"{what}: the output uses the transposed weights; it is weights @ V, row i "
                    "a weighted average of the rows of V.",
                )
            ] = np.swapaxes(expected_w, -1, -2) @ V
        compare(
            output,
            expected_out,
            mistakes,
            f"{what}: your weights are right but the output is not weights @ V "
            "(row i should be sum_j weights[..., i, j] * V[..., j, :]).",
            name="output",
        )
        passed_ranks.append(Q.ndim)
    return (
        "your attention matches on fresh inputs with 0, 1, 2 and 3 leading axes (a single "
        "sequence, a batch, batch x heads), n_q != n_k, scores around 800 in one example "
        "(no overflow, no underflow in the others) and one token; it returns (output, weights)."
    )


attention = Exercise(
    name="attention",
    ready_made="helpers.scaled_dot_product_attention",
    allowed=("helpers.softmax",),
    signature="attention(Q, K, V)",
    grade=_grade_attention,
    reference=answers.attention,
    stars=2,
    title="attention on batched inputs (..., n_q, d_k), any number of leading axes",
    hints=[
        "Three steps, as in the lesson: scores, a softmax of each row, weights @ V. What "
        "changes with leading axes is the transpose: for Q (b, n_q, d_k) and K (b, n_k, d_k) "
        "you need K with its last two axes swapped, (b, d_k, n_k), so that Q @ that is "
        "(b, n_q, n_k). @ (np.matmul) already treats leading axes as a batch.",
        "K.T reverses every axis ((b, n_k, d_k) -> (d_k, n_k, b)); np.swapaxes(K, -1, -2) "
        "swaps only the last two, whatever the number of axes. d_k is Q.shape[-1]; the softmax "
        "takes the max and the sum along axis=-1 with keepdims=True. np.einsum with '...' is "
        "another way.",
        "d_k = Q.shape[-1]; scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k); "
        "scores = scores - scores.max(axis=-1, keepdims=True); weights = np.exp(scores); "
        "weights = weights / weights.sum(axis=-1, keepdims=True); return weights @ V, weights",
    ],
)


# ------------------------------------------------------------------------------ prediction

cat_at_temperature_10 = Prediction(
    name="cat_at_temperature_10",
    question=(
        "At temperature T = 10 (the scores divided by 10 once more), does the largest weight "
        "in the row of 'cat' (head 0) rise, fall or stay the same, compared with T = 1?"
    ),
    answer=answers.cat_at_temperature_10,
    choices=["rise", "fall", "stay"],
    explanation=(
        "Dividing the scores by T = 10 shrinks every difference between them tenfold, and the "
        "softmax only sees differences: exp of small differences are all close to 1, so the "
        "row flattens towards 1/n = 1/6 ≈ 0.17 for every key. The largest weight falls, the "
        "smallest rise. T below 1 does the opposite: at T = 0.1 the row sharpens towards its "
        "top key."
    ),
    wrong={
        "rise": "A larger T makes the scores closer together, not further apart; a rise is "
        "what T = 0.1 does.",
        "stay": "Softmax ignores adding a number to every score (shift-invariance), but not "
        "dividing them: scaling changes the gaps between scores, and the gaps set the weights.",
    },
)
