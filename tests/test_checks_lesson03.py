"""The lesson 03 checks: correct answers pass, every named mistake gets its own message and id."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support.check_tables import assert_mistakes_distinct

from helpers import checks, softmax
from helpers.checks.draws import seeded_draws

ex = checks.scaled_scores
KT = lambda K: np.swapaxes(K, -1, -2)  # noqa: E731 (Kᵀ of each matrix, batched)


def _np_softmax(z):
    """A learner's own softmax: scaled_scores may use NumPy only (helpers.softmax is refused)."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _loops(Q, K):
    *lead, n_q, d_k = Q.shape
    Qf, Kf = Q.reshape(-1, n_q, d_k), K.reshape(-1, K.shape[-2], d_k)
    out = np.zeros((Qf.shape[0], n_q, K.shape[-2]))
    for b in range(Qf.shape[0]):
        for i in range(n_q):
            for j in range(K.shape[-2]):
                out[b, i, j] = sum(Qf[b, i, t] * Kf[b, j, t] for t in range(d_k)) / d_k**0.5
    return out.reshape(*lead, n_q, K.shape[-2])


CORRECT = {
    "matmul on float64 copies": lambda Q, K: (
        np.asarray(Q, dtype=np.float64) @ KT(K.copy()) / np.sqrt(Q.shape[-1])
    ),
    "loops over the flattened batch": _loops,
    "einsum": lambda Q, K: np.einsum("...id,...jd->...ij", Q, K) / np.sqrt(K.shape[-1]),
    "float32": lambda Q, K: (
        (Q.astype(np.float32) @ KT(K.astype(np.float32))) / np.float32(np.sqrt(Q.shape[-1]))
    ),
    "matmul with moveaxis": lambda Q, K: np.matmul(Q, np.moveaxis(K, -1, -2)) * Q.shape[-1] ** -0.5,
}

MISTAKES = {
    "no scale": (lambda Q, K: Q @ KT(K), "without the scale", "unscaled"),
    "divide by d_k": (
        lambda Q, K: Q @ KT(K) / Q.shape[-1],
        "you divided by d_k =",
        "divided_by_d_k",
    ),
    "multiply": (lambda Q, K: Q @ KT(K) * np.sqrt(Q.shape[-1]), "multiplied by √d_k", "multiplied"),
    "hard-coded sqrt(4)": (
        lambda Q, K: Q @ KT(K) / 2,
        "running example's √d_k",
        "hard_coded_sqrt_4",
    ),
    "softmax of scaled": (
        lambda Q, K: _np_softmax(Q @ KT(K) / np.sqrt(Q.shape[-1])),
        r"these are softmax weights \(each row sums to 1\), not scores",
        "softmax_of_scaled",
    ),
    "softmax of raw": (
        lambda Q, K: _np_softmax(Q @ KT(K)),
        "softmax weights of the unscaled scores",
        "softmax_of_unscaled",
    ),
    "divide by n_q": (
        lambda Q, K: Q @ KT(K) / Q.shape[-2],
        r"you divided by \d+, from n_q, the number of queries",
        "divided_by_n_q",
    ),
    "divide by n_k": (
        lambda Q, K: Q @ KT(K) / K.shape[-2],
        r"you divided by \d+, from n_k, the number of keys",
        "divided_by_n_k",
    ),
    "divide by sqrt(n_k)": (
        lambda Q, K: Q @ KT(K) / np.sqrt(K.shape[-2]),
        r"you divided by √\d+, from n_k",
        "divided_by_sqrt_n_k",
    ),
    "K Q^T": (lambda Q, K: K @ KT(Q) / np.sqrt(Q.shape[-1]), "that is K Qᵀ", "keys_times_queries"),
    "2-D only (K.T)": (
        lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]),
        r"works on \(n, d_k\) matrices but not with one leading axis\. K\.T reverses",
        "only_2d",
    ),
    "one batch axis only": (
        lambda Q, K: (
            Q @ K.T / np.sqrt(Q.shape[-1])
            if Q.ndim == 2
            else np.stack([q @ k.T for q, k in zip(Q, K)]) / np.sqrt(Q.shape[-1])
        ),
        r"works on one leading axis but not with two leading axes",
        "one_batch_axis",
    ),
    "None": (lambda Q, K: None, "returned None", "returned_none"),
}


@pytest.mark.parametrize("name", CORRECT)
def test_correct_answers_pass(name):
    for _ in range(5):  # fresh sizes every time
        result = ex.check(CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", MISTAKES)
def test_each_mistake_fails_with_its_own_message(name):
    answer, expected_text, mistake = MISTAKES[name]
    for _ in range(5):
        result = ex.check(answer)
        assert result.passed is False
        assert re.search(expected_text, result.message), result.message
        assert result.mistake == f"scaled_scores.{mistake}", result.mistake


def test_mistake_messages_are_distinct():
    assert_mistakes_distinct(ex, {k: v[:2] for k, v in MISTAKES.items()})


def test_d_k_read_from_axis_1_of_a_batch_is_named_as_a_sequence_length():
    result = ex.check(lambda Q, K: Q @ KT(K) / np.sqrt(Q.shape[1]))
    assert result.passed is False and result.mistake == "scaled_scores.divided_by_sqrt_n_q"


def test_transposed_square_case_is_named():
    # n_q == n_k only in the third case; an answer that is right until then must be caught there.
    def transposed_when_square(Q, K):
        if Q.shape[-2] == K.shape[-2]:
            return K @ KT(Q) / np.sqrt(Q.shape[-1])
        return Q @ KT(K) / np.sqrt(Q.shape[-1])

    result = ex.check(transposed_when_square)
    assert result.passed is False and result.mistake == "scaled_scores.keys_times_queries"
    assert "you computed K Qᵀ" in result.message


def test_stub_exception_not_a_function_hints():
    def stub(Q, K):
        raise NotImplementedError("replace this line with your answer")

    assert ex.check(stub).passed is None

    def broken(Q, K):
        d_k = Q.shape[-1]
        return Q @ K / np.sqrt(d_k)  # forgot the transpose: shapes do not match

    result = ex.check(broken)
    assert result.passed is False and result.mistake == "scaled_scores.raised"
    assert "return Q @ K / np.sqrt(d_k)" in result.message and "at line" in result.message
    assert ex.check(np.zeros((2, 2))).mistake == "scaled_scores.not_a_function"
    assert "swapaxes" in str(ex.hint(3)) and len(ex._hints) >= 3 and ex.stars == 2
    assert "def scaled_scores(Q, K)" in str(ex.solution())


def test_sizes_keep_every_divisor_distinct():
    from helpers.checks.lesson03 import _divisors, _sizes

    rng = np.random.default_rng(0)
    for square in (False, True) * 50:
        n_q, n_k, d_k = _sizes(rng, square=square)
        assert (n_q == n_k) == square
        assert d_k != 4
        divisors = np.sort(_divisors(n_q, n_k, d_k))
        assert np.all(np.diff(divisors) > 0)


# ---------------------------------------------------------------------------------------------
# Predictions


def test_the_variance_prediction_is_a_number_explained_either_way():
    p = checks.unscaled_variance_at_64
    assert p.check(64).passed is True and p.check(60.0).passed is True
    low = p.check(8)  # √64: the typical size, not the variance
    assert low.passed is False and low.mistake == "unscaled_variance_at_64.too_low"
    assert "64 · 1 = 64" in low.message


def test_the_softmax_trend_prediction_is_explained_either_way():
    p = checks.unscaled_softmax_trend
    assert p.check("peakier").passed is True
    wrong = p.check("flatter")
    assert wrong.passed is False and wrong.mistake == "unscaled_softmax_trend.picked_flatter"
    assert "spread further apart" in wrong.message and "one-hot" in wrong.message


# ---------------------------------------------------------------------------------------------
# The challenge: scale_for_entropy(scores, target)

ent = checks.scale_for_entropy


def _entropy(scores, c, axis=-1, log=np.log):
    p = softmax(c * scores, axis=axis)
    return np.mean(-np.sum(p * log(np.where(p > 0, p, 1.0)), axis=axis))


def _bisect(fn, target, steps=60):
    lo, hi = 0.0, 1.0
    while fn(hi) > target:
        lo, hi = hi, 2 * hi
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fn(mid) > target else (lo, mid)
    return (lo + hi) / 2


def _bisect_in(fn, target, lo, hi, steps=60):
    """Bisection inside a fixed bracket [lo, hi], never widened."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fn(mid) > target else (lo, mid)
    return (lo + hi) / 2


def _newton_free_secant(scores, target):
    """A different search: a scan over log c, then the secant method."""
    cs = np.exp(np.linspace(-6, 6, 121))
    H = np.array([_entropy(scores, c) for c in cs])
    k = int(np.argmax(H < target))  # first c below the target
    a, b = cs[k - 1], cs[k]
    for _ in range(50):
        fa, fb = _entropy(scores, a) - target, _entropy(scores, b) - target
        if fb == fa:
            break
        a, b = b, b - fb * (b - a) / (fb - fa)
    return b


def _grid(scores, target):
    cs = np.geomspace(1e-3, 1e3, 600_001)  # brute force: fine enough, within the time limit?
    lo, hi = 0, len(cs) - 1
    while hi - lo > 1:  # bisection over the grid's indices
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _entropy(scores, cs[mid]) > target else (lo, mid)
    return cs[hi]


def _right_scale(scores, target):
    return _bisect(lambda c: _entropy(scores, c), target)


ENTROPY_CORRECT = {
    "bisection": _right_scale,
    "bisection, returns a NumPy float": lambda s, t: np.float64(
        _bisect(lambda c: _entropy(s, c), t)
    ),
    "scan + secant": _newton_free_secant,
    "bisection over a grid": _grid,
}

ENTROPY_MISTAKES = {
    "bits": (
        lambda s, t: _bisect(lambda c: _entropy(s, c, log=np.log2), t),
        r"in bits \(log2\)",
        "bits",
    ),
    "columns": (
        lambda s, t: _bisect(lambda c: _entropy(s, c, axis=0), t),
        r"down the columns",
        "columns",
    ),
    "first row": (
        lambda s, t: _bisect(lambda c: _entropy(s[:1], c), t),
        r"the first row alone",
        "first_row",
    ),
    "returned the target": (lambda s, t: t, r"returned the target itself", "returned_target"),
    "c = 1": (lambda s, t: 1.0, r"c = 1 leaves the scores", "unscaled"),
    "inverse": (lambda s, t: 1 / _right_scale(s, t), r"you returned 1/c", "inverse"),
    "fixed bracket [0, 10]": (
        lambda s, t: _fixed_bracket(s, t),
        r"the end of a fixed search range",
        "fixed_bracket",
    ),
    "per row": (
        lambda s, t: np.array([_bisect(lambda c, r=r: _entropy(r[None], c), t) for r in s]),
        r"one scale per row",
        "per_row",
    ),
    "too few halvings": (
        lambda s, t: 1.02 * _bisect(lambda c: _entropy(s, c), t),  # stopped 2% short
        r"close, the mean entropy there",
        "not_converged",
    ),
    "negative": (lambda s, t: -1.0, r"positive, finite number", "not_positive"),
}


@pytest.mark.parametrize("name", ENTROPY_CORRECT)
def test_entropy_scale_correct_answers_pass(name):
    for _ in range(2):
        result = ent.check(ENTROPY_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", ENTROPY_MISTAKES)
def test_entropy_scale_each_mistake_is_named(name):
    answer, pattern, mistake = ENTROPY_MISTAKES[name]
    for _ in range(3):
        result = ent.check(answer)
        assert result.passed is False
        assert re.search(pattern, result.message), result.message
        assert result.mistake == f"scale_for_entropy.{mistake}", result.message


def test_entropy_scale_messages_are_distinct_and_a_far_answer_says_which_way():
    table = {k: v[:2] for k, v in ENTROPY_MISTAKES.items()}
    assert_mistakes_distinct(ent, table)
    # Seeded draws: on a rare fresh draw, 3 x the right c is also where the first row alone hits
    # the target, and the check names that mistake (seen once in a fresh-clone make test).
    for seed in range(20):
        with seeded_draws(seed):
            result = ent.check(lambda s, t: 3 * _right_scale(s, t))
        assert result.passed is False and result.mistake is None, (seed, result.message)
        assert "so the right c is smaller" in result.message
    assert ent.stars == 3 and len(ent._hints) >= 3


def test_a_search_whose_bracket_stops_at_1_is_told_so():
    # issue 34: bisection in (0, 1] ends at c = 1, and the message said "Search for c."
    for seed in range(5):
        with seeded_draws(seed):
            result = ent.check(lambda s, t: _bisect_in(lambda c: _entropy(s, c), t, 0.0, 1.0))
        assert result.mistake == "scale_for_entropy.unscaled", result.message
        assert "the answer was outside it; widen it" in result.message
        assert "Search for c" not in result.message


def test_lesson_03_does_not_call_a_checks_reference_on_screen():
    """Issue 17: the lesson ran checks.scale_for_entropy.reference right under the challenge."""
    from pathlib import Path

    source = (Path(__file__).parents[1] / "solutions" / "03_scores_and_scaling.py").read_text()
    assert ".reference" not in source


def _fixed_bracket(scores, target, hi=10.0):
    """Bisection over a bracket fixed in advance, [0, hi]: right only when c < hi."""
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _entropy(scores, mid) > target else (lo, mid)
    return (lo + hi) / 2


def test_entropy_scale_a_fixed_bracket_0_10_fails_on_a_target_that_needs_c_above_10():
    """Issue 17: a bisection over a hard-coded [0, 10] passed every draw."""
    for _ in range(5):
        result = ent.check(_fixed_bracket)
        assert result.passed is False
        assert result.mistake == "scale_for_entropy.fixed_bracket", result.message
        assert "the end of a fixed search range" in result.message
    assert ent.check(lambda s, t: _fixed_bracket(s, t, hi=1e4)).passed is True  # wide enough


# ---------------------------------------------------------------------------------------------
# The sweep (tests/test_checks_sweep.py runs these over hundreds of seeds): every exercise of
# lesson 03, correct answers in several styles and every mistake its check names.


def _mistakes_by_id(table):
    """{mistake id: answer} from a table of (answer, pattern, id); the first answer per id."""
    out = {}
    for answer, _, mistake in table.values():
        out.setdefault(mistake, answer)
    return out


def _entropy_not_a_number(scores, target):
    return "c"


SWEEP = {
    "scaled_scores": {
        "correct": list(CORRECT.values()),
        "mistakes": {
            **_mistakes_by_id(MISTAKES),
            "divided_by_sqrt_n_q": lambda Q, K: Q @ KT(K) / np.sqrt(Q.shape[-2]),
        },
    },
    "scale_for_entropy": {
        "correct": list(ENTROPY_CORRECT.values()),
        "mistakes": {**_mistakes_by_id(ENTROPY_MISTAKES), "not_a_number": _entropy_not_a_number},
    },
}
