"""Lesson 01 exercise: the sinusoidal positional encoding."""

from __future__ import annotations

import numpy as np

from ..positions import sinusoidal_positional_encoding
from ._core import Exercise, Mistake, as_result_array, compare, fresh_rng


def _reference(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]  # (n, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, d_model/2)
    angles = pos / 10000 ** (two_i / d_model)
    PE = np.zeros((n_positions, d_model))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE


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
                "(PE[pos, 2*i] = ..., one '=', not '==') and that the function returns PE."
            )
        # An integer array truncates every sin and cos to a whole number (mostly 0).
        if np.asarray(answer).dtype.kind in "iub" and not np.all(expected == np.round(expected)):
            raise Mistake(
                f"{what} holds only whole numbers: did you create PE with an integer dtype "
                "(e.g. np.zeros_like of an integer arange)? Storing sin and cos in it cuts them "
                "to whole numbers. Start from np.zeros((n_positions, d_model)), which is float."
            )
        compare(
            got,
            expected,
            {
                f"{what}: sin and cos are swapped. Even columns (0, 2, ...) take sin, "
                "odd columns take cos.": _variant(n, d, swap=True),
                f"{what}: the exponent is off. Column pair i uses 10000^(2i/d_model), where "
                "2i is the even column index (0, 2, 4, ...), not i.": _variant(n, d, exponent="i"),
                f"{what}: each cos column has its own frequency: you used 10000^(k/d_model) "
                "with every column's own index k. Both columns of a pair share one frequency: "
                "column 2i+1 uses 10000^(2i/d_model), like column 2i.": _variant(
                    n, d, exponent="k"
                ),
                f"{what}: the base is off. The paper divides by 10000^(2i/d_model).": _variant(
                    n, d, base=1000.0
                ),
                f"{what}: the sines and cosines sit in two halves; the paper interleaves "
                "them (sin in column 2i, cos in column 2i+1).": _variant(n, d, halves=True),
                f"{what}: the base looks like e instead of 10000.": _variant(n, d, base=np.e),
                f"{what}: your positions start at 1; the first row is position 0 "
                "(np.arange(n_positions)), so PE[0] = [0, 1, 0, 1, ...].": _variant(n, d, start=1),
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
    signature="positional_encoding(n_positions, d_model)",
    grade=_grade,
    reference=_reference,
    hints=[
        "Build a column of positions, shape (n_positions, 1), and a row of even column indices "
        "2i = 0, 2, 4, ..., shape (1, d_model/2). Broadcasting divides one by the other.",
        "The angle for position pos and pair i is pos / 10000 ** (2i / d_model). Put sin of the "
        "angles in the even columns PE[:, 0::2] and cos in the odd columns PE[:, 1::2].",
        "pos = np.arange(n_positions)[:, None]; two_i = np.arange(0, d_model, 2)[None, :]; "
        "angles = pos / 10000 ** (two_i / d_model); PE = np.zeros((n_positions, d_model)); "
        "PE[:, 0::2] = np.sin(angles); PE[:, 1::2] = np.cos(angles); return PE",
    ],
)
