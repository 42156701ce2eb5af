"""Lesson 03 exercise: the scaled scores Q K^T / sqrt(d_k)."""

from __future__ import annotations

import numpy as np

from ..attention import softmax
from ._core import Exercise, Mistake, as_result_array, compare, fresh_rng


def _reference(Q, K):
    d_k = Q.shape[-1]
    return Q @ K.T / np.sqrt(d_k)  # (n_q, n_k)


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
    n_q, d_k = Q.shape
    n_k = K.shape[0]
    raw = Q @ K.T  # (n_q, n_k)
    scaled = raw / np.sqrt(d_k)
    mistakes = {
        f"{what}: you returned Q Kᵀ without the scale. Divide by √d_k, the square root of the "
        "last dimension of Q and K.": raw,
        f"{what}: you divided by d_k = {d_k}; the paper divides by its square root, "
        f"√d_k = {np.sqrt(d_k):.3f}, which brings the variance of q·k back to 1.": raw / d_k,
        f"{what}: you multiplied by √d_k instead of dividing by it.": raw * np.sqrt(d_k),
        f"{what}: you divided by 2 = √4, the running example's √d_k. Read d_k from the input "
        f"(Q.shape[-1] is {d_k} here).": raw / 2,
        f"{what}: these are softmax weights (each row sums to 1), not scores. Return the "
        "scaled scores; the softmax comes in lesson 04.": softmax(scaled),
        f"{what}: these are softmax weights of the unscaled scores (each row sums to 1). Return "
        "Q Kᵀ / √d_k before any softmax.": softmax(raw),
    }
    for size, name in ((n_q, "n_q, the number of queries"), (n_k, "n_k, the number of keys")):
        for divisor, how in ((size, f"{size}"), (np.sqrt(size), f"√{size}")):
            mistakes[
                f"{what}: you divided by {how}, from {name} (a sequence length). The scale "
                f"depends on the vector size d_k = Q.shape[-1] = {d_k}: divide by √d_k."
            ] = raw / divisor
    if n_q == n_k:
        mistakes[
            f"{what}: you computed K Qᵀ (rows = keys). Scores put one query per row: Q @ K.T."
        ] = (K @ Q.T) / np.sqrt(d_k)
    return mistakes


def _grade(call):
    rng = fresh_rng()
    cases = [
        (_sizes(rng), np.float64, "fresh random Q and K with n_q ≠ n_k"),
        (_sizes(rng), np.float32, "float32 inputs"),
        (_sizes(rng, square=True), np.float64, "a square case, n_q = n_k"),
    ]
    for (n_q, n_k, d_k), dtype, _ in cases:
        Q = rng.standard_normal((n_q, d_k)).astype(dtype)
        K = rng.standard_normal((n_k, d_k)).astype(dtype)
        what = f"scaled_scores(Q {Q.shape}, K {K.shape})"
        value = call(Q, K)
        shape = np.shape(value) if isinstance(value, np.ndarray) else None
        if shape == (n_k, n_q) and n_q != n_k:
            raise Mistake(
                f"{what} returned shape {shape}, expected (n_q, n_k) = {(n_q, n_k)}: that is "
                "K Qᵀ. Scores put one query per row and one key per column: Q @ K.T."
            )
        got = as_result_array(value, what, (n_q, n_k))
        expected = _reference(Q.astype(float), K.astype(float))
        compare(
            got,
            expected,
            _known_mistakes(Q.astype(float), K.astype(float), what),
            f"{what} differs from Q Kᵀ / √d_k: entry [i, j] should be q_i · k_j / √{d_k}.",
        )
    return "your scores match Q Kᵀ / √d_k on fresh inputs: n_q ≠ n_k, float32, and a square case."


scaled_scores = Exercise(
    name="scaled_scores",
    signature="scaled_scores(Q, K)",
    grade=_grade,
    reference=_reference,
    hints=[
        "Every query scores every key: entry [i, j] is the dot product of row i of Q with row j "
        "of K. One matrix product does all of them at once.",
        "Q has shape (n_q, d_k) and K has shape (n_k, d_k); Q @ K.T has shape (n_q, n_k). Then "
        "divide by the square root of d_k, which you read from the input: Q.shape[-1].",
        "d_k = Q.shape[-1]; return Q @ K.T / np.sqrt(d_k)",
    ],
)
