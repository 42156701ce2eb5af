"""Lesson 03: the scaled scores for any leading axes, two predictions, the ★★★ entropy scale."""

from __future__ import annotations

import numpy as np

from ..attention import softmax
from .answers import lesson03 as answers
from .compare import as_result_array, compare
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import LearnerError, Mistake, named
from .prediction import Prediction

# ----------------------------------------------------------------------------------------------
# ★★ scaled_scores(Q, K): (..., n_q, d_k), (..., n_k, d_k) -> (..., n_q, n_k)


def _divisors(n_q: int, n_k: int, d_k: int) -> list[float]:
    """Everything a learner might divide Q K^T by; the sizes are chosen so these all differ.

    (When n_q = n_k the sequence lengths appear once.)"""
    lengths = {n_q, n_k}
    return [1.0, np.sqrt(d_k), d_k, 2.0, 1 / np.sqrt(d_k)] + [
        f(n) for n in sorted(lengths) for f in (float, np.sqrt)
    ]


def _sizes(rng: np.random.Generator, square: bool = False) -> tuple[int, int, int]:
    """Random (n_q, n_k, d_k) with n_q != n_k (unless ``square``) and every divisor distinct.

    d_k = 4 (the running example's) is excluded, so a hard-coded sqrt(4) = 2 shows up.
    """
    while True:
        n_q = int(rng.integers(3, 9))
        n_k = n_q if square else int(rng.integers(3, 12))
        d_k = int(rng.integers(5, 49))
        if not square and n_k == n_q:
            continue
        divisors = np.sort(_divisors(n_q, n_k, d_k))
        if np.all(np.diff(divisors) / divisors[1:] > 0.05):
            return n_q, n_k, d_k


def _known_mistakes(Q: np.ndarray, K: np.ndarray, what: str) -> dict[str, np.ndarray]:
    *_, n_q, d_k = Q.shape
    n_k = K.shape[-2]
    raw = Q @ np.swapaxes(K, -1, -2)  # (..., n_q, n_k)
    scaled = raw / np.sqrt(d_k)
    mistakes = {
        named(
            "unscaled",
            f"{what}: you returned Q Kᵀ without the scale. Divide by √d_k, the square root of "
            "the last dimension of Q and K.",
        ): raw,
        named(
            "divided_by_d_k",
            f"{what}: you divided by d_k = {d_k}; the paper divides by its square root, "
            f"√d_k = {np.sqrt(d_k):.3f}, which brings the variance of q·k back to 1.",
        ): raw / d_k,
        named("multiplied", f"{what}: you multiplied by √d_k instead of dividing by it."): raw
        * np.sqrt(d_k),
        named(
            "hard_coded_sqrt_4",
            f"{what}: you divided by 2 = √4, the running example's √d_k. Read d_k from the "
            f"input (Q.shape[-1] is {d_k} here).",
        ): raw / 2,
        named(
            "softmax_of_scaled",
            f"{what}: these are softmax weights (each row sums to 1), not scores. Return the "
            "scaled scores; the softmax comes in lesson 04.",
        ): softmax(scaled),
        named(
            "softmax_of_unscaled",
            f"{what}: these are softmax weights of the unscaled scores (each row sums to 1). "
            "Return Q Kᵀ / √d_k before any softmax.",
        ): softmax(raw),
    }
    for size, axis, name in (
        (n_q, "n_q", "n_q, the number of queries"),
        (n_k, "n_k", "n_k, the number of keys"),
    ):
        for divisor, how, id_ in (
            (size, f"{size}", f"divided_by_{axis}"),
            (np.sqrt(size), f"√{size}", f"divided_by_sqrt_{axis}"),
        ):
            message = named(
                id_,
                f"{what}: you divided by {how}, from {name} (a sequence length). The scale "
                f"depends on the vector size d_k = Q.shape[-1] = {d_k}: divide by √d_k.",
            )
            mistakes.setdefault(message, raw / divisor)
    if n_q == n_k:
        mistakes[
            named(
                "keys_times_queries",
                f"{what}: you computed K Qᵀ (rows = keys). Scores put one query per row: Q Kᵀ.",
            )
        ] = (K @ np.swapaxes(Q, -1, -2)) / np.sqrt(d_k)
    return mistakes


def _grade(call):
    rng = fresh_rng()
    b, h = int(rng.choice([2, 3])), 2  # batch and heads, never d_k (which is at least 5)
    cases = [  # (leading axes, sizes, dtype)
        ((), _sizes(rng), np.float64),
        ((b,), _sizes(rng), np.float32),
        ((b, h), _sizes(rng, square=True), np.float64),
    ]
    for lead, (n_q, n_k, d_k), dtype in cases:
        Q = rng.standard_normal((*lead, n_q, d_k)).astype(dtype)
        K = rng.standard_normal((*lead, n_k, d_k)).astype(dtype)
        what = f"scaled_scores(Q {Q.shape}, K {K.shape})"
        try:
            value = call(Q, K)
        except LearnerError as error:
            if not lead:
                raise
            which = "one leading axis" if len(lead) == 1 else "two leading axes (b, h)"
            fix = (
                "K.T reverses every axis of a batched array; swap only the last two: "
                "np.swapaxes(K, -1, -2), or np.einsum('...qd,...kd->...qk', Q, K)."
                if len(lead) == 1
                else "A loop over the first axis, or a transpose that names axes (0, 2, 1), "
                "handles exactly one leading axis; count axes from the end instead: "
                "np.swapaxes(K, -1, -2)."
            )
            works_on = "(n, d_k) matrices" if len(lead) == 1 else "one leading axis"
            raise Mistake(
                f"your scaled_scores works on {works_on} but not with {which}. {fix}"
                f"\nWhat happened: {error}",
                "only_2d" if len(lead) == 1 else "one_batch_axis",
            ) from None
        shape = np.shape(value) if isinstance(value, np.ndarray) else None
        if shape == (*lead, n_k, n_q) and n_q != n_k:
            raise Mistake(
                f"{what} returned shape {shape}, expected (..., n_q, n_k) = "
                f"{(*lead, n_q, n_k)}: that is K Qᵀ. Scores put one query per row and one key "
                "per column: Q Kᵀ.",
                "keys_times_queries",
            )
        got = as_result_array(value, what, (*lead, n_q, n_k))
        Q64, K64 = Q.astype(float), K.astype(float)
        compare(
            got,
            answers.scaled_scores(Q64, K64),
            _known_mistakes(Q64, K64, what),
            f"{what} differs from Q Kᵀ / √d_k: entry [..., i, j] should be q_i · k_j / √{d_k}.",
        )
    return (
        "your scores match Q Kᵀ / √d_k on fresh inputs: one (n_q, n_k) matrix with n_q ≠ n_k, "
        "a float32 batch, and a (b, h, n, n) stack of heads."
    )


scaled_scores = Exercise(
    name="scaled_scores",
    allowed=(),
    signature="scaled_scores(Q, K)",
    grade=_grade,
    reference=answers.scaled_scores,
    hints=[
        "Entry [..., i, j] is the dot product of query i with key j, divided by √d_k, for every "
        "batch and head index in front. A matrix product broadcasts over leading axes: A @ B "
        "multiplies the last two axes of A and B, batch by batch.",
        "You need Kᵀ of each (n_k, d_k) matrix, i.e. only the last two axes swapped. K.T "
        "reverses all axes, so for a (b, n_k, d_k) K it gives (d_k, n_k, b). d_k is "
        "Q.shape[-1], counted from the end too.",
        "d_k = Q.shape[-1]; return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)",
    ],
    stars=2,
    title="Q Kᵀ / √d_k for any leading axes (..., n_q, d_k): batches of sentences and heads",
)


# ----------------------------------------------------------------------------------------------
# Predictions

unscaled_variance_at_64 = Prediction(
    name="unscaled_variance_at_64",
    question=(
        "q and k have d_k = 64 independent entries, each of mean 0 and variance 1. Roughly "
        "what is the variance of the unscaled score q · k? (a number)"
    ),
    answer=answers.unscaled_variance_at_64,
    rtol=0.15,
    explanation=(
        "The score q · k = q_1 k_1 + ... + q_64 k_64 is a sum of 64 independent terms, and each "
        "product q_t k_t has variance Var(q_t) Var(k_t) = 1 (mean 0, so no cross terms). "
        "Variances of independent terms add: 64 · 1 = 64, a typical size of √64 = 8. Dividing "
        "by √d_k = 8 brings the variance back to 1. The cell below measures it for d_k from 1 "
        "to 512."
    ),
)

unscaled_softmax_trend = Prediction(
    name="unscaled_softmax_trend",
    question=(
        "Without the scale, as d_k grows from 1 to 512, does the softmax of one query's scores "
        "get flatter or peakier?"
    ),
    answer=answers.unscaled_softmax_trend,
    choices=["flatter", "peakier"],
    wrong={
        "flatter": "More dimensions do not average the scores out: each score is a sum of d_k "
        "terms, so the scores spread further apart as d_k grows."
    },
    explanation=(
        "The unscaled scores have a spread of √d_k, and the softmax turns differences between "
        "scores into ratios of weights, exp(s_1 - s_2). Wider gaps mean the largest score "
        "takes almost all the weight: the row tends to one-hot and the softmax's gradient "
        "shrinks. Divided by √d_k the spread stays 1 and so does the shape of the row."
    ),
)


# ----------------------------------------------------------------------------------------------
# ★★★ scale_for_entropy(scores, target) -> c with mean row entropy of softmax(c * scores) = target

ENTROPY_TOL = 1e-3  # nats


def _mean_entropy(scores, c, axis=-1, log=np.log, softmax=softmax):
    p = softmax(c * scores, axis=axis)
    return float(np.mean(-np.sum(p * log(np.where(p > 0, p, 1.0)), axis=axis)))


def _softmax_of_finite(x, axis=-1):
    """helpers.softmax's arithmetic without its input checks, for the check's own searches
    (finite scores times a finite c, hundreds of calls per check): the same bits."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _solve(fn, target):
    """The c > 0 with fn(c) = target for a decreasing fn, or None if out of reach."""
    if fn(0.0) <= target or fn(1e6) >= target:
        return None
    lo, hi = 0.0, 1.0
    while fn(hi) > target:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fn(mid) > target else (lo, mid)
    return (lo + hi) / 2


def _wrong_scales(scores, target, right):
    """What each named slip returns on these scores: {id: (c or None, why)}."""
    fast = _softmax_of_finite
    return {
        "bits": (
            _solve(lambda x: _mean_entropy(scores, x, log=np.log2, softmax=fast), target),
            "you measured the entropy in bits (log2); the target is in nats: use np.log.",
        ),
        "columns": (
            _solve(lambda x: _mean_entropy(scores, x, axis=0, softmax=fast), target),
            "you took the softmax (or the entropy) down the columns. Each row is one "
            "query's distribution over the keys: axis=-1.",
        ),
        "first_row": (
            _solve(lambda x: _mean_entropy(scores[:1], x, softmax=fast), target),
            "the first row alone hits the target. Average the entropy over all rows.",
        ),
        "returned_target": (target, "you returned the target itself; return the scale c."),
        "unscaled": (
            1.0,
            "c = 1 leaves the scores as they are. "
            + (
                "Here the answer is larger than 1: if you searched and stopped at 1 (a "
                "bracket such as (0, 1]), the answer was outside it; widen it first, doubling "
                "the upper end while the entropy is still above the target."
                if right > 1
                else "Here the answer is smaller than 1: search for c."
            ),
        ),
        "inverse": (
            1.0 / right,
            "you returned 1/c, the divisor; the scale multiplies the scores: softmax(c * scores).",
        ),
    }


def _slips_apart(scores, target) -> bool:
    """True if the right scale and every slip's scale differ by more than 5% from each other,
    so that each answer is recognised for what it is."""
    right = answers.scale_for_entropy(scores, target)
    values = [right] + [c for c, _ in _wrong_scales(scores, target, right).values() if c]
    values = np.sort(values)
    return bool(np.all(np.diff(values) > 0.05 * values[1:]))


def _bracket_end(c: float) -> bool:
    """True if c is (within 1e-6) a round number a search range might stop at: 10, 20, 50,
    100, 1000, ... (a bisection over [lo, hi] that never finds the target ends next to hi)."""
    if c < 5:
        return False
    exponent = 10.0 ** np.floor(np.log10(c))
    return any(
        abs(c - m * exponent) <= 1e-6 * c or abs(c - 10 * exponent) <= 1e-6 * c for m in (1, 2, 5)
    )


def _draw_entropy_cases(rng):
    """Four (scores, target) cases on which the right scale and every slip's scale differ."""
    cases = []
    # (fraction of log n_k, spread of the scores): the last case has small scores, so its c is
    # well above 10 (checked below), and a search over a fixed bracket such as [0, 10] fails.
    for fraction, spread in (
        (rng.uniform(0.25, 0.5), (0.5, 4.0)),
        (rng.uniform(0.55, 0.8), (0.5, 4.0)),
        (0.95, (0.5, 4.0)),
        (rng.uniform(0.3, 0.6), (0.02, 0.05)),
    ):
        while True:  # until every slip gives a scale of its own, apart from the right one
            n_q, n_k = int(rng.integers(4, 9)), int(rng.integers(5, 17))
            scores = rng.standard_normal((n_q, n_k)) * rng.uniform(*spread)
            target = float(fraction * np.log(n_k))
            if spread[0] < 0.5 and not 15 < answers.scale_for_entropy(scores, target) < 500:
                continue
            if n_q != n_k and _slips_apart(scores, target):
                break
        cases.append((scores, target))
    return cases


# The cases drawn from a generator's state: within seeded_draws (the sweep, the tests) every
# answer checked meets the same draws, so they are searched for once. Fresh draws (a learner's
# check) never repeat a state. Each check gets its own copy of the scores.
_CASES: dict[str, list] = {}


def _grade_entropy(call):
    rng = fresh_rng()
    key = repr(rng.bit_generator.state)
    if key not in _CASES:
        if len(_CASES) >= 32:
            _CASES.pop(next(iter(_CASES)))
        _CASES[key] = _draw_entropy_cases(rng)
    cases = [(scores.copy(), target) for scores, target in _CASES[key]]
    for scores, target in cases:
        what = f"scale_for_entropy(scores {scores.shape}, target={target:.4f})"
        value = call(scores, target)
        if isinstance(value, np.ndarray) and value.ndim == 1 and value.size == scores.shape[0]:
            raise Mistake(
                f"{what} returned one scale per row, shape {value.shape}. Find one number c for "
                "the whole matrix: the *mean* entropy of the rows matches the target.",
                "per_row",
            )
        try:
            c = float(np.asarray(value, dtype=float).reshape(()))
        except OverflowError:  # an int beyond any float: as infinite, said so below
            c = np.inf
        except (TypeError, ValueError):
            raise Mistake(
                f"{what} returned {type(value).__name__} {np.shape(value)}; return one number, "
                "the scale c.",
                "not_a_number",
            ) from None
        if not np.isfinite(c) or c <= 0:
            raise Mistake(
                f"{what} returned c = {c}; the scale is a positive, finite number (c = 0 makes "
                "every row flat, c < 0 favours the smallest scores).",
                "not_positive",
            )
        reached = _mean_entropy(scores, c)
        if abs(reached - target) <= ENTROPY_TOL:
            continue
        right = answers.scale_for_entropy(scores, target)
        if c < right and _bracket_end(c):
            raise Mistake(
                f"{what} returned c = {c:.6g}, the end of a fixed search range: at c = "
                f"{c:.6g} the mean entropy is still {reached:.4f} nats, above the target "
                f"{target:.4f}, and the right c is larger. These scores are small, so the c "
                "they need is large: grow the upper end (double it) until the entropy there "
                "is below the target, then search between.",
                "fixed_bracket",
            )
        wrong = _wrong_scales(scores, target, right)
        for mistake, (c_wrong, why) in wrong.items():
            if c_wrong is not None and abs(c - c_wrong) <= 0.003 * abs(c_wrong):
                raise Mistake(
                    f"{what} returned c = {c:.4g}: {why} (At your c the mean entropy is "
                    f"{reached:.4f} nats, the target {target:.4f}.)",
                    mistake,
                )
        direction = "larger" if reached > target else "smaller"
        if abs(c - right) < 0.03 * right:
            raise Mistake(
                f"{what} returned c = {c:.6g}: close, the mean entropy there is {reached:.5f} "
                f"nats against the target {target:.5f}, but not within {ENTROPY_TOL}. Keep "
                f"narrowing (the right c is a little {direction}): 50-60 halvings of the "
                "bracket reach any tolerance.",
                "not_converged",
            )
        raise Mistake(
            f"{what} returned c = {c:.4g}: the mean entropy of softmax(c * scores) there is "
            f"{reached:.4f} nats, not the target {target:.4f}. The entropy falls as c grows, "
            f"so the right c is {direction}."
        )
    return (
        f"the mean row entropy at your c matches each target within {ENTROPY_TOL} nats, on "
        "fresh scores. 1/√d_k is one such choice made once for all inputs; your function picks "
        "the scale for a given input and target: c is the inverse of a softmax temperature, "
        "1/T."
    )


scale_for_entropy = Exercise(
    name="scale_for_entropy",
    allowed=("helpers.softmax",),  # not helpers.scaling.entropy_scale, the answer
    ready_made="helpers.scaling.entropy_scale",
    signature="scale_for_entropy(scores, target)",
    grade=_grade_entropy,
    reference=answers.scale_for_entropy,
    hints=[
        "Write entropy(c), the mean over rows of -Σ p log p with p = softmax(c * scores) along "
        "each row, in nats. At c = 0 every row is flat (entropy log n_k); as c grows the rows "
        "peak and the entropy falls towards 0. One c in between gives the target.",
        "Because entropy(c) only falls as c grows, bisection finds it: start with lo = 0 and "
        "hi = 1, double hi until entropy(hi) < target, then repeat 60 times: mid = (lo+hi)/2, "
        "keep the half whose ends still straddle the target.",
        "lo, hi = 0.0, 1.0; while entropy(hi) > target: lo, hi = hi, 2 * hi; then 60 times: "
        "mid = (lo + hi) / 2; lo, hi = (mid, hi) if entropy(mid) > target else (lo, mid); "
        "return (lo + hi) / 2",
    ],
    stars=3,
    title="challenge: the scale c that gives the softmax rows a target mean entropy",
)
