"""The last step of the checks that score attention maps one number per map (lesson 09's
``head_offset_score``, lesson 10's ``previous_token_score`` and ``induction_score``): the
learner's scores for one stack of maps against the expected ones."""

from __future__ import annotations

from typing import Any

import numpy as np

from .compare import as_result_array, compare
from .mistakes import Mistake, named


def check_scores_per_map(
    value: Any,
    A: np.ndarray,
    expected: np.ndarray,
    what: str,
    mistakes: dict[str, np.ndarray],
    generic: str,
    one_number: str,
    advice: str = "",
) -> None:
    """Raise :class:`Mistake` unless ``value`` (what the learner returned for the maps ``A``,
    shape ``(..., n, n)``) matches ``expected`` (one score per map, shape ``A.shape[:-2]``).

    One number for a stack of maps that equals the mean of the expected scores is the mistake
    ``one_number`` (its id), its message followed by ``advice`` (``": the mean over the queries
    only"``); otherwise the value is checked as an array of the expected shape and compared,
    ``mistakes`` naming the known wrong scores and ``generic`` (with the first score that
    differs) any other. ``what`` says which call, e.g. ``"induction_score(A of shape (5, 5),
    L=3) on one map"``.
    """
    shape = np.shape(value) if not isinstance(value, tuple) else None
    if A.ndim > 2 and shape == () and np.isclose(float(value), expected.mean()):
        raise Mistake(
            named(
                one_number,
                f"{what} returned one number, the mean over every map; return one score per "
                f"map, shape {expected.shape}{advice}.",
            )
        )
    got = as_result_array(value, what, expected.shape)
    compare(got, expected, mistakes, generic, name="score")
