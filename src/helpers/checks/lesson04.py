"""Lesson 04 exercises: a numerically stable ``softmax`` and ``attention(Q, K, V)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attention import scaled_dot_product_attention
from ..attention import softmax as _softmax
from ._core import Exercise, Mistake, as_result_array, compare, fresh_rng, unpack_pair


def _reference_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)  # shift-invariant: exp never sees a positive number
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _reference_attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (n_q, n_k)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)  # each row sums to 1
    output = weights @ V  # (n_q, d_v): a weighted average of V's rows
    return output, weights


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
def _axis0(z):
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


@_quiet
def _whole(z):
    e = np.exp(z - z.max())
    return e / e.sum()


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
    return e / e.sum(axis=-1)  # (n, n) / (n,): divides column j by row j's sum


@_quiet
def _no_keepdims_max(z):
    e = np.exp(z - z.max(axis=-1))  # (n, n) - (n,): column j loses row j's max
    return e / e.sum(axis=-1, keepdims=True)


@_quiet
def _no_keepdims_either(z):
    e = np.exp(z - z.max(axis=-1))
    return e / e.sum(axis=-1)


@_quiet
def _no_keepdims_no_max(z):
    e = np.exp(z)
    return e / e.sum(axis=-1)


def _softmax_mistakes(z: np.ndarray, what: str) -> dict[str, np.ndarray]:
    rows = "rows" if z.shape[0] > 1 else "row"
    mistakes = {
        f"{what}: you subtracted the row's minimum, not its maximum. Softmax is "
        "shift-invariant, so the answer would be the same, but after z - min every entry is "
        ">= 0 and np.exp still sees large positive numbers: on a row like [0, 1000] it "
        "overflows to inf, and inf / inf is NaN. Subtract the max: "
        "z.max(axis=-1, keepdims=True).": _min_shift(z),
        f"{what}: you subtracted the row's mean, not its maximum. That centres the scores, "
        "but entries above the mean stay positive, so on a row that spreads from -1000 to "
        "+1000 np.exp still sees large positive numbers, overflows to inf, and inf / inf is "
        "NaN. Subtract the max: z.max(axis=-1, keepdims=True).": _mean_shift(z),
        f"{what}: NaN or inf on large scores. np.exp(1000) overflows to inf, and inf / inf "
        "is NaN. Subtract each row's maximum before np.exp: softmax is shift-invariant, so "
        "the answer is the same and exp never sees a positive number.": _no_max(z),
        f"{what}: you subtracted the maximum of the whole matrix. That keeps exp from "
        "overflowing, but a row whose scores are far below that maximum underflows to "
        "0 / 0 = NaN. Subtract each row's own max: z.max(axis=-1, keepdims=True).": _global_max(z),
        f"{what}: your columns sum to 1, not your {rows}. Softmax runs along the last axis "
        "(axis=-1): one distribution per row (per query).": _axis0(z),
        f"{what}: the whole matrix sums to 1, but each row should. Take the max and the "
        "sum along axis=-1 with keepdims=True.": _whole(z),
        f"{what}: did you forget np.exp? Dividing the scores by their sum is not a softmax "
        "(it can give negative 'weights').": _no_exp(z),
        f"{what}: did you forget np.exp? You subtracted the max and normalised, but without "
        "exp the entries are not positive.": _no_exp_shifted(z),
        f"{what}: the {rows} do not sum to 1. After np.exp, divide by the sum along the "
        "last axis (keepdims=True).": _not_normalised(z),
        f"{what}: the {rows} do not sum to 1: you took np.exp but never divided by the sum "
        "(and subtract the row max first, or large scores overflow).": _not_normalised_no_max(z),
    }
    if z.shape[0] == z.shape[1]:  # only a square z lets a missing keepdims broadcast at all
        no_keepdims_sum = (
            "e.sum(axis=-1) without keepdims=True has shape (n,), so the division broadcasts it "
            "along the wrong axis (row i gets divided by other rows' sums). Use "
            "e.sum(axis=-1, keepdims=True)."
        )
        no_keepdims_max = (
            "subtract the row max with keepdims=True: z.max(axis=-1, keepdims=True). Without "
            "it the max has shape (n,), and NumPy broadcasts the max of row j across column j "
            "instead of along row j."
        )
        mistakes[f"{what}: {no_keepdims_sum}"] = _no_keepdims(z)
        mistakes[f"{what}: {no_keepdims_max}"] = _no_keepdims_max(z)
        mistakes[
            f"{what}: neither z.max(axis=-1) nor e.sum(axis=-1) keeps its axis; add "
            "keepdims=True to both, so each row is shifted by its own max and divided by its "
            "own sum (without it, row j's max and sum land on column j)."
        ] = _no_keepdims_either(z)
        mistakes[
            f"{what}: divide by the row sum with keepdims=True, "
            "np.exp(z).sum(axis=-1, keepdims=True): without keepdims the sum has shape (n,) and "
            "divides column j by row j's sum. Also subtract the row max first, or large scores "
            "overflow."
        ] = _no_keepdims_no_max(z)
    return mistakes


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
    return [
        ("softmax(z) on a square score matrix", rng.normal(0.0, 2.0, (square, square))),
        ("softmax(z) on random scores", rng.normal(0.0, 2.0, (n, m))),
        ("softmax(z) on scores around +1000, 0 and -1000", big),
        ("softmax(z) on rows that spread from -1000 to +1000", wide),
        ("softmax(z) on one row", rng.normal(0.0, 2.0, (1, m))),
        ("softmax(z) with one key per row", rng.normal(0.0, 2.0, (n, 1))),
    ]


def _grade_softmax(call) -> str:
    for what, z in _softmax_cases(fresh_rng()):
        got = as_result_array(call(z), what, z.shape)
        compare(
            got,
            _softmax(z, axis=-1),
            _softmax_mistakes(z, what),
            f"{what} differs from softmax along the last axis: exp(z - row max), then divide "
            "each row by its sum (subtracting the max keeps every exponent <= 0, even when a "
            "row spreads from -1000 to +1000).",
        )
    return (
        "your softmax matches on fresh random scores, a square matrix, rows around "
        "+-1000, rows that spread from -1000 to +1000 (no overflow) and single rows and "
        "columns."
    )


softmax = Exercise(
    name="softmax",
    signature="softmax(z)",
    grade=_grade_softmax,
    reference=_reference_softmax,
    hints=[
        "Each row of z is one query's scores; turn each row into positive numbers that sum "
        "to 1 with exp, then divide by the row's sum. Work along axis=-1.",
        "np.exp(1000) is inf. Subtract each row's max first: z - z.max(axis=-1, keepdims=True). "
        "The result does not change (softmax is shift-invariant) and nothing overflows.",
        "z = z - z.max(axis=-1, keepdims=True); e = np.exp(z); "
        "return e / e.sum(axis=-1, keepdims=True)",
    ],
)


# ------------------------------------------------------------------------------ attention


def _weights_mistakes(Q, K, what: str) -> dict[str, np.ndarray]:
    d_k, n_k = Q.shape[-1], K.shape[0]
    scores = Q @ K.T
    mistakes = {
        f"{what}: the weights are not scaled. Divide the scores Q K^T by sqrt(d_k) before the "
        "softmax (without it, large d_k saturates the softmax).": _softmax(scores),
        f"{what}: you divided the scores by d_k = {d_k}; the paper divides by "
        f"sqrt(d_k) = {np.sqrt(d_k):g}.": _softmax(scores / d_k),
        f"{what}: you divided the scores by the sequence length n = {n_k}; the scale is "
        f"1 / sqrt(d_k), with d_k = {d_k} the width of Q and K.": _softmax(scores / n_k),
        f"{what}: the second value holds the scores Q K^T / sqrt(d_k); return the weights, "
        "softmax(scores), whose rows sum to 1.": scores / np.sqrt(d_k),
        f"{what}: the second value holds the raw scores Q K^T; return the weights, "
        "softmax(Q K^T / sqrt(d_k)).": scores,
        f"{what}: your weights' columns sum to 1, not the rows: take the softmax along the "
        "last axis (keys), one distribution per query.": _softmax(scores / np.sqrt(d_k), axis=0),
    }
    if Q.shape[0] == K.shape[0]:
        mistakes[
            f"{what}: the scores are transposed: K Q^T puts keys on the rows. Use Q @ K.T so "
            "that row i holds query i's score against every key."
        ] = _softmax((K @ Q.T) / np.sqrt(d_k))
        mistakes[
            f"{what}: the weights are transposed: row i should be query i's distribution over "
            "the keys (rows sum to 1)."
        ] = _softmax(scores / np.sqrt(d_k)).T
    return mistakes


def _unpack(value: Any, what: str, n_q: int, n_k: int, d_v: int) -> tuple[np.ndarray, np.ndarray]:
    """The learner's (output, weights), or a Mistake saying what came back instead."""
    value = unpack_pair(value, what, (n_q, d_v), (n_q, n_k))
    first = np.shape(value[0])
    if d_v != n_k and first == (n_q, n_k):  # (weights, output) is named by unpack_pair
        raise Mistake(
            f"{what}: the first value has the weights' shape {first}; the output is "
            f"weights @ V, shape (n_q, d_v) = {(n_q, d_v)}."
        )
    output = as_result_array(value[0], what, (n_q, d_v), part="output")
    weights = as_result_array(value[1], what, (n_q, n_k), part="weights")
    return output, weights


def _attention_cases(rng: np.random.Generator):
    n, d_k, d_v = int(rng.integers(4, 7)), 16, 3  # sqrt(d_k) = 4 differs from d_k and n
    X = rng.normal(size=(n, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, d)) / np.sqrt(8) for d in (d_k, d_k, d_v))
    n_q, n_k = 3, 7
    # Scores around 800, where np.exp overflows: a shared last column adds 40 * 40 / sqrt(4) to
    # every score (softmax ignores it), the rest are halves, so float32 holds them exactly.
    big_Q, big_K = (np.round(rng.normal(size=(m, 4)) * 2) / 2 for m in (4, 5))
    big_Q[:, -1] = big_K[:, -1] = 40.0
    return [
        ("attention(Q, K, V) with Q, K, V from the same X (self-attention)",
         X @ W_Q, X @ W_K, X @ W_V),
        (f"attention(Q, K, V) with n_q = {n_q} queries and n_k = {n_k} keys",
         rng.normal(size=(n_q, 9)), rng.normal(size=(n_k, 9)), rng.normal(size=(n_k, 2))),
        ("attention(Q, K, V) with scores around 800",
         big_Q, big_K, rng.normal(size=(5, 2))),
        ("attention(Q, K, V) on a one-token sequence",
         rng.normal(size=(1, 4)), rng.normal(size=(1, 4)), rng.normal(size=(1, 3))),
    ]  # fmt: skip


def _grade_attention(call) -> str:
    for what, Q, K, V in _attention_cases(fresh_rng()):
        n_q, n_k, d_v = Q.shape[0], K.shape[0], V.shape[1]
        expected_out, expected_w = scaled_dot_product_attention(Q, K, V)
        output, weights = _unpack(call(Q, K, V), what, n_q, n_k, d_v)
        if not np.all(np.isfinite(weights)) and "800" in what:
            raise Mistake(
                f"{what}: your weights contain NaN or inf. np.exp of large scores overflows; "
                "subtract each row's max before np.exp (use your stable softmax)."
            )
        compare(
            weights,
            expected_w,
            _weights_mistakes(Q, K, what),
            f"{what}: the weights differ from softmax(Q K^T / sqrt(d_k)) taken along each row.",
        )
        mistakes = {}
        if d_v == n_k:
            mistakes[f"{what}: the first value holds the weights; the output is weights @ V."] = (
                expected_w
            )
        if n_q == n_k:
            mistakes[
                f"{what}: the output uses the transposed weights; it is weights @ V, row i a "
                "weighted average of the rows of V."
            ] = expected_w.T @ V
        compare(
            output,
            expected_out,
            mistakes,
            f"{what}: your weights are right but the output is not weights @ V "
            "(row i should be sum_j weights[i, j] * V[j]).",
        )
    return (
        "your attention matches on fresh inputs: self-attention, n_q != n_k, large scores "
        "(no overflow) and a one-token sequence; it returns (output, weights)."
    )


attention = Exercise(
    name="attention",
    signature="attention(Q, K, V)",
    grade=_grade_attention,
    reference=_reference_attention,
    hints=[
        "Three steps: scores = Q K^T / sqrt(d_k), shape (n_q, n_k); weights = softmax of each "
        "row; output = weights @ V. Return both: `return output, weights`.",
        "d_k is the width of Q and K: Q.shape[-1]. Use Q @ K.T (not K @ Q.T) so row i holds "
        "query i's scores, and a stable softmax along axis=-1 (subtract the row max).",
        "d_k = Q.shape[-1]; scores = Q @ K.T / np.sqrt(d_k); "
        "scores = scores - scores.max(axis=-1, keepdims=True); weights = np.exp(scores); "
        "weights = weights / weights.sum(axis=-1, keepdims=True); return weights @ V, weights",
    ],
)
