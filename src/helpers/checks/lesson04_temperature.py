"""Lesson 04's ★★★ challenge: ``zero_temperature_attention(Q, K, V)``, the limit of
softmax(Q K^T / (sqrt(d_k) T)) V as T -> 0 (ties shared equally)."""

from __future__ import annotations

import numpy as np

from .answers import lesson04 as answers
from .compare import close, compare, raw_softmax
from .draws import fresh_rng
from .exercise import Exercise
from .lesson04 import unpack_batched
from .mistakes import Mistake, named

# ------------------------------------------------------------------------------ ★★★ challenge
# zero_temperature_attention(Q, K, V): the limit of softmax(Q K^T / (sqrt(d_k) T)) V as T -> 0.


def _zero_t_cases(rng: np.random.Generator):
    """Integer Q and K with d_k = 4 (scale 1/2): every score is exact, so ties are exact."""
    cases = []
    for n_q, n_k, d_v in ((5, 6, 3), (4, 7, 2), (3, 5, 4)):
        Q = rng.integers(-2, 3, size=(n_q, 4)).astype(float)
        K = rng.integers(-2, 3, size=(n_k, 4)).astype(float)
        K[rng.integers(1, n_k)] = K[0]  # a duplicate key: it ties with key 0 for every query
        Q[0] = K[0] * 2 + (K[0] == 0)  # query 0's best score is key 0's, shared with its twin
        V = rng.normal(size=(n_k, d_v))
        cases.append((f"zero_temperature_attention on Q {Q.shape}, K {K.shape}, V {V.shape}",
                      Q, K, V))  # fmt: skip
    return cases


def _one_of_ties(got: np.ndarray, top: np.ndarray) -> bool:
    """Each row one-hot, on one of the row's tied top keys, and at least one row with a tie."""
    one_hot = np.all(np.isclose(got, 0) | np.isclose(got, 1), axis=-1) & np.isclose(got.sum(-1), 1)
    on_top = np.all((got < 0.5) | top, axis=-1)
    return bool(np.all(one_hot & on_top) and np.any(top.sum(-1) > 1))


def _zero_t_mistakes(what: str, scaled: np.ndarray, top: np.ndarray) -> dict[str, np.ndarray]:
    n_q, n_k = scaled.shape

    return {
        named(
            "lowest_score",
            f"{what}: your weights go to the keys with the *lowest* score. As T -> 0 the "
            "key with the highest score takes everything: (s_j - s_max)/T -> -inf for the "
            "others.",
        ): (lambda lo: lo / lo.sum(-1, keepdims=True))(scaled == scaled.min(-1, keepdims=True)),
        named(
            "uniform",
            f"{what}: your weights are uniform, 1/n_k per key: that is the limit T -> "
            "infinity (every score divided by a huge T is about 0). As T -> 0 the top key "
            "wins.",
        ): np.full((n_q, n_k), 1.0 / n_k),
        named(
            "temperature_one",
            f"{what}: these are the ordinary attention weights, at T = 1. The challenge asks "
            "for their limit as T -> 0.",
        ): raw_softmax(scaled),
        named(
            "argmax_over_queries",
            f"{what}: you took the top score of each column (over the queries, axis 0); "
            "each query picks among the keys: along axis=-1.",
        ): (lambda t: t / np.maximum(t.sum(-1, keepdims=True), 1))(
            scaled == scaled.max(axis=0, keepdims=True)
        ),
        named(
            "ties_not_normalised",
            f"{what}: every tied top key gets weight 1, so a row with two tied keys sums to "
            "2. They share the row's budget: divide by the number of ties in the row.",
        ): top.astype(float),
    }


def _grade_zero_temperature(call) -> str:
    for what, Q, K, V in _zero_t_cases(fresh_rng()):
        n_q, n_k, d_v = Q.shape[0], K.shape[0], V.shape[1]
        output, weights = unpack_batched(call(Q, K, V), what, (), n_q, n_k, d_v)
        ref_out, ref_w = answers.zero_temperature_attention(Q, K, V)
        scaled = Q @ K.T / 2.0
        top = scaled == scaled.max(axis=-1, keepdims=True)
        known = _zero_t_mistakes(what, scaled, top)
        for message, wrong in known.items():
            if not close(weights, ref_w) and close(weights, wrong):
                raise Mistake(message)
        if not close(weights, ref_w) and np.all(np.isfinite(weights)):
            if _one_of_ties(weights, top):
                raise Mistake(
                    named(
                        "one_of_ties",
                        f"{what}: each of your rows puts all its weight on one top key, but "
                        "some rows have two keys tied for the top score (key 0 and its twin). "
                        "In the limit exp((s_j - s_max) / T) -> 1 for *every* tied key, so the "
                        "tied keys share the weight equally. np.argmax picks only the first.",
                    )
                )
            if (
                np.all(weights > 0)
                and np.allclose(weights.sum(-1), 1)
                and not close(weights, np.full_like(weights, 1 / n_k))
            ):
                raise Mistake(
                    named(
                        "finite_temperature",
                        f"{what}: every one of your weights is still positive, as at any finite "
                        "temperature. The limit T -> 0 puts exactly 0 on every key below the "
                        "row's top score: work out the limit, do not just take a small T.",
                    )
                )
        compare(
            weights,
            ref_w,
            known,
            f"{what}: your weights differ from the T -> 0 limit: weight 1/m on each of the m "
            "keys that tie for the row's top score, 0 elsewhere.",
            name="weights",
        )
        compare(
            output,
            ref_out,
            {},
            f"{what}: your weights are right but the output is not weights @ V.",
            name="output",
        )
    return (
        "your limit is right on fresh inputs with exact ties: each query's output is the mean "
        "of the values of the keys that tie for its top score; the scale sqrt(d_k) does not "
        "matter, since dividing by a positive number keeps the order."
    )


zero_temperature_attention = Exercise(
    name="zero_temperature_attention",
    allowed=("helpers.softmax",),
    signature="zero_temperature_attention(Q, K, V)",
    grade=_grade_zero_temperature,
    reference=answers.zero_temperature_attention,
    stars=3,
    title="challenge: the T -> 0 limit of attention, ties included",
    hints=[
        "Write weight j as exp((s_j - s_max) / T) / sum_j' exp((s_j' - s_max) / T), with s_max "
        "the row's largest score. What does each term do as T -> 0 when s_j < s_max, and when "
        "s_j = s_max?",
        "Every term below the max goes to 0; every term equal to the max stays exactly 1. So "
        "the limit is 1/m on each of the m tied top keys and 0 elsewhere. The positive scale "
        "1/sqrt(d_k) does not change which keys are on top.",
        "scores = Q @ K.T; top = scores == scores.max(axis=-1, keepdims=True); "
        "weights = top / top.sum(axis=-1, keepdims=True); return weights @ V, weights",
    ],
)
