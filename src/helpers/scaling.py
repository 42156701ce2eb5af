"""Why attention divides by √d_k, measured on random vectors (pure NumPy).

For a query q and a key k whose d_k entries are independent with mean 0 and variance 1, the
dot product q·k is a sum of d_k independent unit-variance terms, so its variance is d_k. These
functions sample such vectors so a lesson can *measure* that growth, and what it does to the
softmax: without a scale the weights saturate towards one-hot (the softmax's gradient with
respect to its own input vanishes, and almost every key's weight, which its share of the
gradient is proportional to, falls below 1 %); dividing by √d_k keeps them in the same range for
every d_k. The scale does not enlarge the gradient reaching q·k itself: it multiplies it by
1/√d_k (``raw_grad_norm`` in :func:`softmax_peakedness`).

The three scales compared are named ``"none"`` (Q K^T), ``"sqrt"`` (Q K^T / √d_k, the paper's)
and ``"linear"`` (Q K^T / d_k, too much: the softmax goes flat instead).
"""

from __future__ import annotations

import numpy as np

from ._validate import (
    ArgumentTypeError,
    as_float_array,
    positive_scale,
    require_finite,
    whole_number,
)
from .attention import softmax

__all__ = [
    "SCALES",
    "scale_factor",
    "random_dot_products",
    "dot_product_variance",
    "softmax_statistics",
    "softmax_peakedness",
    "row_weights",
    "SIGNAL_WEIGHT",
    "mean_row_entropy",
    "entropy_scale",
]

SCALES = ("none", "sqrt", "linear")
SIGNAL_WEIGHT = 0.01  # a key whose weight is below this gets almost no gradient (see below)


def scale_factor(d_k: int, scale: str) -> float:
    """The number the scores are multiplied by: 1, 1/√d_k or 1/d_k.

    Raises
    ------
    ValueError
        If ``d_k`` is not a positive whole number or ``scale`` is not one of :data:`SCALES`.
    """
    d_k = whole_number(d_k, "d_k", minimum=1)
    _check_scale_name(scale)
    return {"none": 1.0, "sqrt": 1.0 / np.sqrt(d_k), "linear": 1.0 / d_k}[scale]


def _check_scale_name(scale, name: str = "scale") -> None:
    if not isinstance(scale, str):
        raise ArgumentTypeError(
            f"{name} must be one of the names {SCALES}, got {scale!r} of type "
            f"{type(scale).__name__}"[:300]
        )
    if scale not in SCALES:
        raise ValueError(f"{name} must be one of {SCALES}, got {scale!r}"[:300])


def _check_d_ks(d_ks) -> list[int]:
    if isinstance(d_ks, (str, bytes)) or not np.iterable(d_ks):
        raise ArgumentTypeError(
            f"d_ks must be a list of dimensions such as [1, 4, 16], got {type(d_ks).__name__}"
        )
    return [whole_number(d_k, f"d_ks[{i}]", minimum=1) for i, d_k in enumerate(d_ks)]


def random_dot_products(
    d_k: int, n_queries: int, n_keys: int, rng: np.random.Generator
) -> np.ndarray:
    """Unscaled scores q·k for random unit-variance q and k: shape ``(n_queries, n_keys)``.

    Each query gets its own ``n_keys`` fresh keys, so all ``n_queries * n_keys`` scores are
    independent samples of q·k. Entries of q and k are standard normal.

    Parameters
    ----------
    d_k : int
        Length of each query and key vector.
    n_queries, n_keys : int
        How many rows of scores, and how many keys each query scores.
    rng : numpy.random.Generator
        Source of the random vectors (seed it for reproducible numbers).
    """
    scale_factor(d_k, "none")  # validates d_k
    n_queries = whole_number(n_queries, "n_queries")
    n_keys = whole_number(n_keys, "n_keys")
    if not isinstance(rng, np.random.Generator):
        raise ArgumentTypeError(
            f"rng must be a numpy.random.Generator, e.g. np.random.default_rng(0); got "
            f"{type(rng).__name__}"
        )
    q = rng.standard_normal((n_queries, d_k, 1))  # (n_queries, d_k, 1): one query per row
    k = rng.standard_normal((n_queries, n_keys, d_k))  # (n_queries, n_keys, d_k)
    return np.matmul(k, q)[..., 0]  # (n_queries, n_keys): score[i, j] = q_i · k_ij


def dot_product_variance(
    d_ks, n_samples: int = 4000, seed: int = 0, scale: str = "none"
) -> np.ndarray:
    """Measured variance of ``q·k * scale_factor(d_k, scale)`` for each d_k in ``d_ks``.

    Parameters
    ----------
    d_ks : sequence of int
        The dimensions to measure.
    n_samples : int
        Independent (q, k) pairs per dimension.
    seed : int
        Seeds one generator shared by all dimensions, in order.
    scale : {"none", "sqrt", "linear"}
        Which scale to apply before taking the variance.

    Returns
    -------
    ndarray, shape (len(d_ks),)
        The sample variances; for ``scale="none"`` they estimate d_k itself.
    """
    d_ks = _check_d_ks(d_ks)
    n_samples = whole_number(n_samples, "n_samples", minimum=1)
    rng = np.random.default_rng(whole_number(seed, "seed"))
    _check_scale_name(scale)
    out = []
    for d_k in d_ks:
        s = random_dot_products(int(d_k), n_samples, 1, rng) * scale_factor(int(d_k), scale)
        out.append(s.var())
    return np.array(out)


def softmax_statistics(weights: np.ndarray) -> dict[str, np.ndarray]:
    """How peaked each row of softmax weights is.

    Parameters
    ----------
    weights : ndarray, shape (..., n_keys)
        Rows of attention weights (non-negative, summing to 1).

    Returns
    -------
    dict of ndarray, each of shape (...)
        ``"max_weight"``: the largest weight of the row (1/n_keys = flat, 1 = one-hot);
        ``"entropy"``: in nats (log n_keys = flat, 0 = one-hot);
        ``"grad_norm"``: Frobenius norm of the softmax Jacobian diag(p) - p pᵀ, how strongly
        the weights respond to a change of the softmax's own input (0 = one-hot: the gradient
        vanishes);
        ``"keys_over_1pct"``: how many keys of the row have a weight of at least
        :data:`SIGNAL_WEIGHT` (0.01). The gradient a loss sends to key j's score is
        p_j (g_j - Σ_l p_l g_l), proportional to its weight p_j, so a key below 1 % gets
        almost no learning signal.
    """
    p = as_float_array(weights, "weights", min_ndim=1)
    require_finite(p, "weights")
    if p.shape[-1] == 0:
        raise ValueError(f"weights must hold at least one weight per row, got shape {p.shape}")
    if (p < 0).any() or (p > 1 + 1e-9).any():
        raise ValueError(
            f"weights must be softmax weights in [0, 1], got values from {p.min():g} to {p.max():g}"
        )
    safe = np.where(p > 0, p, 1.0)
    entropy = -np.sum(np.where(p > 0, p * np.log(safe), 0.0), axis=-1)
    jacobian = p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]
    return {
        "max_weight": p.max(axis=-1),
        "entropy": entropy,
        "grad_norm": np.sqrt(np.sum(jacobian**2, axis=(-2, -1))),
        "keys_over_1pct": np.sum(p >= SIGNAL_WEIGHT, axis=-1).astype(float),
    }


def softmax_peakedness(
    d_ks, n_keys: int = 16, n_queries: int = 500, seed: int = 0, scales=SCALES
) -> dict[str, dict[str, np.ndarray]]:
    """Mean :func:`softmax_statistics` of random score rows, for each d_k and each scale.

    For each d_k, ``n_queries`` random queries each score ``n_keys`` random keys
    (unit-variance entries); the *same* raw scores are multiplied by
    ``scale_factor(d_k, scale)`` for every scale and soft-maxed with :func:`helpers.softmax`.

    Returns
    -------
    dict
        ``result[scale][stat]`` is an ndarray of shape ``(len(d_ks),)``, for ``stat`` in
        ``"max_weight"``, ``"entropy"``, ``"grad_norm"``, ``"keys_over_1pct"`` (see
        :func:`softmax_statistics`) and ``"raw_grad_norm"``, averaged over the queries.
        ``"raw_grad_norm"`` is the Frobenius norm of the Jacobian of the weights with respect
        to the *raw* scores q·k, before the scale: ``scale_factor(d_k, scale) * grad_norm``.
        It is what the gradient reaching q, k and the weights feeding them goes through, so
        the paper's 1/√d_k shrinks it even though it keeps ``grad_norm`` up.
    """
    d_ks = _check_d_ks(d_ks)
    n_keys = whole_number(n_keys, "n_keys", minimum=1)
    n_queries = whole_number(n_queries, "n_queries", minimum=1)
    if isinstance(scales, str) or not np.iterable(scales):
        raise ArgumentTypeError(f"scales must be a list of scale names from {SCALES}")
    for scale in scales:
        _check_scale_name(scale, "scales")  # validates the names before any work
    rng = np.random.default_rng(whole_number(seed, "seed"))
    names = ("max_weight", "entropy", "grad_norm", "keys_over_1pct", "raw_grad_norm")
    means = {scale: {name: [] for name in names} for scale in scales}
    for d_k in d_ks:
        scores = random_dot_products(int(d_k), n_queries, n_keys, rng)  # (n_queries, n_keys)
        for scale in scales:
            factor = scale_factor(int(d_k), scale)
            weights = softmax(scores * factor, axis=-1)
            stats = softmax_statistics(weights)
            stats["raw_grad_norm"] = factor * stats["grad_norm"]  # chain rule through the scale
            for name, values in stats.items():
                means[scale][name].append(float(values.mean()))
    return {
        scale: {name: np.array(values) for name, values in stats.items()}
        for scale, stats in means.items()
    }


def row_weights(q: np.ndarray, K: np.ndarray, scale: str = "sqrt") -> tuple[np.ndarray, np.ndarray]:
    """One query's scaled scores against the rows of K, and their softmax.

    Parameters
    ----------
    q : ndarray, shape (d_k,)
        The query.
    K : ndarray, shape (n_k, d_k)
        The keys.
    scale : {"none", "sqrt", "linear"}

    Returns
    -------
    scores : ndarray, shape (n_k,)
        ``K @ q * scale_factor(d_k, scale)``.
    weights : ndarray, shape (n_k,)
        ``softmax(scores)``.
    """
    q, K = as_float_array(q, "q"), as_float_array(K, "K")
    require_finite(q, "q")
    require_finite(K, "K")
    if q.ndim != 1 or K.ndim != 2 or K.shape[1] != q.shape[0]:
        raise ValueError(
            f"row_weights needs q of shape (d_k,) and K of shape (n_k, d_k); got q {q.shape} "
            f"and K {K.shape}"
        )
    scores = K @ q * scale_factor(q.shape[0], scale)  # (n_k,)
    return scores, softmax(scores)


def _score_rows(scores) -> np.ndarray:
    """``scores`` as finite float rows ``(n_q, n_k)`` with at least one key, or an error."""
    scores = as_float_array(scores, "scores", min_ndim=2)
    if scores.size == 0:
        raise ValueError(f"scores must hold at least one row and one key, got shape {scores.shape}")
    require_finite(scores, "scores")
    return scores


def mean_row_entropy(scores: np.ndarray, c: float) -> float:
    """Mean entropy, in nats, of the rows of ``softmax(c * scores)``; scores ``(n_q, n_k)``,
    ``c >= 0`` (0: flat rows)."""
    c = 0.0 if isinstance(c, (int, float)) and c == 0 else positive_scale(c, "c")
    with np.errstate(over="ignore"):
        scaled = c * _score_rows(scores)
    if not np.all(np.isfinite(scaled)):
        raise ValueError(f"c * scores overflows (c={c!r}): use a smaller c or smaller scores")
    p = softmax(scaled, axis=-1)
    return float(np.mean(-np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=-1)))


def entropy_scale(scores: np.ndarray, target: float) -> float:
    """The scale c > 0 at which the rows of ``softmax(c * scores)`` have mean entropy ``target``.

    Lesson 03's challenge (``scale_for_entropy``) asks for this function; the lesson calls this
    one so that its last cell runs before the learner has an answer.

    Parameters
    ----------
    scores : ndarray, shape (n_q, n_k)
        Rows of scores, not all equal within a row.
    target : float
        A mean entropy in nats, strictly between 0 (one-hot) and the entropy at c = 0
        (log n_k, flat).

    Raises
    ------
    ValueError
        If the target is out of that range, or the scores contain NaN or inf.
    """
    scores = _score_rows(scores)
    target = positive_scale(target, "target")
    flat = mean_row_entropy(scores, 0.0)
    if scores.shape[-1] < 2:
        raise ValueError(
            f"scores must have at least 2 keys per row (shape {scores.shape}): with one key "
            "every row is one-hot at any scale"
        )
    if not 0 < target < flat:
        raise ValueError(
            f"target must lie between 0 (one-hot rows) and {flat:.4f} nats (flat rows of these "
            f"scores), got {target!r}"
        )
    lo, hi = 0.0, 1.0  # the mean entropy falls as c grows from 0 (flat) towards one-hot
    while mean_row_entropy(scores, hi) > target:
        if hi > 1e12:
            raise ValueError(
                f"no scale reaches a mean entropy as low as {target!r} nats: are the scores "
                "of each row all equal (a flat row stays flat at any scale)?"
            )
        lo, hi = hi, 2 * hi
    for _ in range(80):  # bisection
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean_row_entropy(scores, mid) > target else (lo, mid)
    return (lo + hi) / 2
