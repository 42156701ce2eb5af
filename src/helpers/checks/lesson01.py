"""Lesson 01: the sinusoidal positional encoding, a prediction, and the ★★★ shift challenge."""

from __future__ import annotations

import numpy as np

from ..positions import sinusoidal_positional_encoding
from .answers import lesson01 as answers
from .compare import as_result_array, close, compare
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction


def _variant(n, d, base=10000.0, exponent="2i", swap=False, halves=False, start=0):
    """A wrong (or right) encoding, to recognise what a learner's answer computed.

    ``exponent``: "2i" (right), "i" (pair index instead of 2i), or "k" (each column's own
    index k, so cos column 2i+1 gets 10000^((2i+1)/d) instead of sharing its pair's).
    ``start``: the first position (1 when positions are counted from 1).
    """
    pos = np.arange(start, start + n)[:, None]
    i = np.arange(d // 2)[None, :]
    power = i / d if exponent == "i" else 2 * i / d  # the sin columns' exponent
    angles = pos / base**power
    second_angles = pos / base ** ((2 * i + 1) / d) if exponent == "k" else angles
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    if halves:
        return np.concatenate([first(angles), second(second_angles)], axis=1)
    PE = np.empty((n, d))
    PE[:, 0::2], PE[:, 1::2] = first(angles), second(second_angles)
    return PE


def _grade(call):
    rng = fresh_rng()
    cases = [(int(rng.integers(5, 40)), int(rng.integers(2, 17)) * 2), (1, 2), (50, 128)]
    for n, d in cases:
        what = f"positional_encoding({n}, {d})"
        answer = call(n, d)
        got = as_result_array(answer, what, (n, d))
        expected = sinusoidal_positional_encoding(n, d)
        if not np.any(got) and np.any(expected):
            raise Mistake(
                f"{what} is all zeros: nothing was written into PE. Check the assignments "
                "(PE[pos, 2*i] = ..., one '=', not '==') and that the function returns PE.",
                "all_zeros",
            )
        # An integer array truncates every sin and cos to a whole number (mostly 0).
        if np.asarray(answer).dtype.kind in "iub" and not np.all(expected == np.round(expected)):
            raise Mistake(
                f"{what} holds only whole numbers: did you create PE with an integer dtype "
                "(e.g. np.zeros_like of an integer arange)? Storing sin and cos in it cuts them "
                "to whole numbers. Start from np.zeros((n_positions, d_model)), which is float.",
                "integer_dtype",
            )
        compare(
            got,
            expected,
            {
                named(
                    "sin_cos_swapped",
                    f"{what}: sin and cos are swapped. Even columns (0, 2, ...) take sin, "
                    "odd columns take cos.",
                ): _variant(n, d, swap=True),
                named(
                    "exponent_i",
                    f"{what}: the exponent is off. Column pair i uses 10000^(2i/d_model), where "
                    "2i is the even column index (0, 2, 4, ...), not i.",
                ): _variant(n, d, exponent="i"),
                named(
                    "own_frequency_per_column",
                    f"{what}: each cos column has its own frequency: you used 10000^(k/d_model) "
                    "with every column's own index k. Both columns of a pair share one "
                    "frequency: column 2i+1 uses 10000^(2i/d_model), like column 2i.",
                ): _variant(n, d, exponent="k"),
                named(
                    "wrong_base",
                    f"{what}: the base is off. The paper divides by 10000^(2i/d_model).",
                ): _variant(n, d, base=1000.0),
                named(
                    "halves",
                    f"{what}: the sines and cosines sit in two halves; the paper interleaves "
                    "them (sin in column 2i, cos in column 2i+1).",
                ): _variant(n, d, halves=True),
                named("base_e", f"{what}: the base looks like e instead of 10000."): _variant(
                    n, d, base=np.e
                ),
                named(
                    "positions_from_1",
                    f"{what}: your positions start at 1; the first row is position 0 "
                    "(np.arange(n_positions)), so PE[0] = [0, 1, 0, 1, ...].",
                ): _variant(n, d, start=1),
            },
            f"{what} differs from the paper's encoding: PE[pos, 2i] = sin(pos/10000^(2i/d_model)),"
            " PE[pos, 2i+1] = cos(same).",
            name="PE",
        )
    return (
        "your encoding matches the paper's on fresh sizes, including one position and "
        "d_model = 128."
    )


positional_encoding = Exercise(
    name="positional_encoding",
    ready_made="helpers.sinusoidal_positional_encoding",
    allowed=(),  # NumPy only: helpers.sinusoidal_positional_encoding is the answer
    signature="positional_encoding(n_positions, d_model)",
    grade=_grade,
    reference=answers.positional_encoding,
    hints=[
        "Build a column of positions, shape (n_positions, 1), and a row of even column indices "
        "2i = 0, 2, 4, ..., shape (1, d_model/2). Broadcasting divides one by the other.",
        "The angle for position pos and pair i is pos / 10000 ** (2i / d_model). Put sin of the "
        "angles in the even columns PE[:, 0::2] and cos in the odd columns PE[:, 1::2].",
        "pos = np.arange(n_positions)[:, None]; two_i = np.arange(0, d_model, 2)[None, :]; "
        "angles = pos / 10000 ** (two_i / d_model); PE = np.zeros((n_positions, d_model)); "
        "PE[:, 0::2] = np.sin(angles); PE[:, 1::2] = np.cos(angles); return PE",
    ],
    stars=1,
    title="the paper's sinusoidal encoding, the whole (n_positions, d_model) matrix",
)


# ----------------------------------------------------------------------------------------------
# Prediction: which columns tell two far-apart positions apart?

pe_far_positions = Prediction(
    name="pe_far_positions",
    question=(
        "Positions 10 and 54 are 44 apart. Which part of their encodings (d_model = 32) differs "
        "more: the fastest pair, dimensions 0-1 ('fast'), or the slow half, dimensions 16-31 "
        "('slow')?"
    ),
    answer=answers.pe_far_positions,
    choices=["fast", "slow"],
    wrong={
        "fast": "The fastest pair changes most between neighbours, but it is a wave that "
        "repeats every 2π ≈ 6.28 positions, so after a whole number of turns it is back "
        "where it started."
    },
    explanation=(
        "44 positions is almost exactly 7 turns of the fastest wave (7 · 2π ≈ 43.98), so "
        "dimensions 0-1 come back to nearly the same values; the slow columns turn a little "
        "over 44 positions and never come back within the sequence, so they differ. Fast "
        "columns tell neighbours apart, slow columns tell far-apart positions apart: together "
        "every position gets its own vector. The next cell measures both."
    ),
)


# ----------------------------------------------------------------------------------------------
# ★★★ pe_shift_matrix(k, d_model): PE[pos + k] = PE[pos] @ M_k for every pos


def _frequencies(d_model, base=10000.0, exponent="2i"):
    i = np.arange(d_model // 2)
    return 1.0 / base ** ((i if exponent == "i" else 2 * i) / d_model)  # (d_model/2,)


def _shift_variant(k, d_model, sign=1.0, lower=-1.0, exponent="2i", halves=False):
    """The matrix M with PE[pos] @ M, built from 2x2 blocks [[cos, lower*sin], [sign*sin, cos]].

    (sign, lower) = (1, -1) is right; (-1, 1) rotates backwards; (1, 1) drops the minus.
    ``halves`` pairs column i with column i + d_model/2 instead of 2i with 2i+1.
    """
    M = np.zeros((d_model, d_model))
    for i, w in enumerate(_frequencies(d_model, exponent=exponent)):
        c, s = np.cos(k * w), np.sin(k * w)
        a, b = (i, i + d_model // 2) if halves else (2 * i, 2 * i + 1)
        M[a, a], M[a, b], M[b, a], M[b, b] = c, lower * s, sign * s, c
    return M


def _grade_shift(call):
    rng = fresh_rng()
    cases = [
        (int(rng.integers(2, 30)), int(rng.integers(3, 9)) * 2),
        (int(rng.integers(31, 200)), int(rng.integers(9, 17)) * 2),
        (1, 2),
    ]
    for k, d in cases:
        what = f"pe_shift_matrix({k}, {d})"
        got = as_result_array(call(k, d), what, (d, d))
        expected = answers.pe_shift_matrix(k, d)
        PE = sinusoidal_positional_encoding(k + 40, d)
        moved = PE[:40] @ got  # (40, d): every row shifted by your M
        if close(moved, PE[k : k + 40]):
            continue
        compare(
            got,
            expected,
            {
                named(
                    "rotates_backwards",
                    f"{what}: PE[pos] @ M gives PE[pos - {k}], a shift backwards. Either the "
                    "sin entries have the wrong signs, or you built M for column vectors "
                    "(M @ v); here the row PE[pos] multiplies M from the left, so use the "
                    "transpose of each 2x2 block.",
                ): _shift_variant(k, d, sign=-1.0, lower=1.0),
                named(
                    "missing_minus",
                    f"{what}: each block has +sin in both corners. cos(a + b) = cos a cos b "
                    "- sin a sin b: one of the two sin entries carries a minus sign.",
                ): _shift_variant(k, d, lower=1.0),
                named(
                    "ignores_k",
                    f"{what}: your M shifts by 1 position whatever k is. The angle of pair i "
                    f"grows by k · w_i, here {k} · w_i.",
                ): answers.pe_shift_matrix(1, d),
                named(
                    "identity",
                    f"{what} returned the identity: PE[pos] @ I is PE[pos], not PE[pos + {k}].",
                ): np.eye(d),
                named(
                    "exponent_i",
                    f"{what}: the frequencies are off. Pair i turns at w_i = "
                    "1 / 10000^(2i/d_model), with 2i the even column index, not i.",
                ): _shift_variant(k, d, exponent="i"),
                named(
                    "halves",
                    f"{what}: you paired column i with column i + d_model/2. The paper "
                    "interleaves: sin in column 2i, cos in column 2i+1, so each block sits on "
                    "the diagonal at rows and columns 2i, 2i+1.",
                ): _shift_variant(k, d, halves=True),
            },
            f"{what}: PE[pos] @ M is not PE[pos + {k}] for every pos. M is block diagonal, one "
            "2x2 rotation per column pair.",
            name="M",
        )
    return (
        "PE[pos] @ M = PE[pos + k] for every position, on fresh k and d_model: a shift by k "
        "positions is one fixed rotation per column pair, whatever the position. The paper "
        "chose the sinusoids because it 'hypothesized it would allow the model to easily learn "
        "to attend by relative positions'."
    )


pe_shift_matrix = Exercise(
    name="pe_shift_matrix",
    allowed=("helpers.sinusoidal_positional_encoding",),  # PE itself, not the matrix
    signature="pe_shift_matrix(k, d_model)",
    grade=_grade_shift,
    reference=answers.pe_shift_matrix,
    hints=[
        "Look at one column pair alone: the row [sin a, cos a] with a = pos · w_i. Shifting "
        "pos by k adds b = k · w_i to the angle. Which 2x2 matrix turns [sin a, cos a] into "
        "[sin(a + b), cos(a + b)] for every a?",
        "Use sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b. "
        "The row vector multiplies from the left (row @ M), so column 0 of the 2x2 block holds "
        "the coefficients of sin(a + b). Different pairs never mix: M is block diagonal.",
        "w = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model); M = np.zeros((d_model, d_model)); "
        "for each pair i with b = k * w[i]: M[2i:2i+2, 2i:2i+2] = [[cos b, -sin b], "
        "[sin b, cos b]]; return M",
    ],
    stars=3,
    title="challenge: the matrix M_k with PE[pos + k] = PE[pos] @ M_k for every position",
)
