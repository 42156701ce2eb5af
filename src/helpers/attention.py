"""Scaled dot-product attention, softmax and the causal mask, in pure NumPy.

Conventions (the same in every lesson):

* shapes follow the paper: ``Q (..., n_q, d_k)``, ``K (..., n_k, d_k)``, ``V (..., n_k, d_v)``;
* a boolean mask says **True = may attend** (PyTorch's boolean ``attn_mask``);
* masked weights are exactly 0, and bad input raises a ``ValueError`` that names the sizes.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, check_qkv

__all__ = ["softmax", "causal_mask", "scaled_dot_product_attention"]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Subtracting the row maximum first means ``exp`` never sees a positive number, so it
    cannot overflow; the result is the same because softmax is shift-invariant.

    Parameters
    ----------
    x : array_like
        Finite scores (logits), any shape. ``-inf`` entries are allowed (they get weight 0)
        as long as every slice along ``axis`` keeps at least one finite entry.
    axis : int
        The axis that sums to 1.

    Raises
    ------
    ValueError
        If ``x`` holds NaN or ``+inf``, or a slice along ``axis`` is entirely ``-inf``.
    """
    x = as_float_array(x, "x")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("softmax input contains NaN or +inf; scores must be finite (or -inf)")
    if x.ndim == 0:
        raise ValueError("softmax needs at least a 1-D array, got a scalar")
    x_max = np.max(x, axis=axis, keepdims=True)
    if np.isneginf(x_max).any():
        raise ValueError(
            "softmax: a slice along the axis is entirely -inf, so no entry can take any weight"
        )
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(n: int) -> np.ndarray:
    """Boolean ``(n, n)`` mask, True on and below the diagonal: query i may attend to keys 0..i.

    Raises
    ------
    ValueError
        If ``n`` is negative or not a whole number.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"causal_mask needs a whole number of positions, got {n!r}")
    if n < 0:
        raise ValueError(f"causal_mask needs n >= 0, got n={n}")
    return np.tril(np.ones((n, n), dtype=bool))


def scaled_dot_product_attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(Q K^T * scale) V``, batched over any leading dimensions.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
        One query per row.
    K : array_like, shape (..., n_k, d_k)
        One key per row; its last dimension must equal Q's.
    V : array_like, shape (..., n_k, d_v)
        One value per key.
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)``. **True = may attend**; False positions get
        weight exactly 0. Every query row must keep at least one True.
    scale : float, optional
        Multiplies the scores; defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
        Each row a convex combination of the rows of V.
    weights : ndarray, shape (..., n_q, n_k)
        The attention weights; every row sums to 1.

    Raises
    ------
    ValueError
        On arrays with fewer than 2 dimensions, mismatched d_k or n_k, a mask that does
        not broadcast or leaves a query row with no key, NaN or inf in the input, or a
        scale that is not a finite positive number.
    """
    Q, K, V, scale = check_qkv(Q, K, V, scale)
    n_q = Q.shape[-2]

    # Scores that overflow become inf and are reported below with a ValueError, so NumPy's own
    # overflow warning would only repeat it.
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.matmul(Q, np.swapaxes(K, -1, -2))  # (..., n_q, n_k)
        scores *= scale
    if mask is not None:
        # -inf before the softmax: exp(-inf) = 0, so masked weights are exactly zero.
        np.putmask(scores, ~_broadcast_mask(mask, scores.shape), -np.inf)
    if n_q == 0:
        return np.matmul(scores, V), scores
    # The softmax, in place on the score buffer (the n x n matrix is the big allocation, so it
    # is made once). The inputs are finite, so only a row maximum can be -inf (a row with no
    # key left by the mask) or +inf/NaN (scores that overflowed): checking n_q maxima suffices.
    row_max = np.max(scores, axis=-1, keepdims=True)
    if not np.isfinite(row_max).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(row_max[..., 0]))[0])
        if np.isneginf(row_max).any():
            raise ValueError(
                f"mask leaves query row {bad} with no key it may attend to; every query needs "
                "at least one True in its row"
            )
        raise ValueError(
            f"the scores of query row {bad} overflowed to inf/NaN in {scores.dtype}; scale the "
            "inputs down (or use float64)"
        )
    scores -= row_max
    np.exp(scores, out=scores)
    scores /= np.sum(scores, axis=-1, keepdims=True)
    weights = scores
    return np.matmul(weights, V), weights


def _broadcast_mask(mask: np.ndarray, scores_shape: tuple[int, ...]) -> np.ndarray:
    """Check a boolean mask against the score shape and broadcast it."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(
            f"mask must be boolean (True = may attend), got dtype {mask.dtype}; "
            "use e.g. mask.astype(bool) or causal_mask(n)"
        )
    try:
        mask = np.broadcast_to(mask, scores_shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} (..., n_q, n_k)"
        ) from None
    return mask
