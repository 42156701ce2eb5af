"""Scaled dot-product attention, softmax and the causal mask, in pure NumPy.

Conventions (the same in every lesson):

* shapes follow the paper: ``Q (..., n_q, d_k)``, ``K (..., n_k, d_k)``, ``V (..., n_k, d_v)``;
  query position i, key position j;
* a boolean mask says **True = may attend** (query i may use key j where ``mask[i, j]``);
* masked weights are exactly 0, and bad input raises an error that names the argument.

The mask convention is the one of PyTorch's ``torch.nn.functional.scaled_dot_product_attention``,
whose boolean ``attn_mask`` is documented as "a value of True indicates that the element
*should* take part in attention". PyTorch's modules use the **opposite** convention:
for ``nn.MultiheadAttention``'s boolean ``attn_mask`` "a True value indicates that the
corresponding position is not allowed to attend", its ``key_padding_mask`` True means "the
corresponding key value will be ignored", and ``nn.Transformer``'s masks say the same
("positions with True are not allowed to attend"). To pass one of our masks to those
modules, pass ``~mask``. (PyTorch 2.13's docstrings; float masks are added to the scores in all
of them.)
"""

from __future__ import annotations

import numpy as np

from ._validate import (
    ArgumentTypeError,
    as_bool_mask,
    as_float_array,
    check_qkv,
    overflow_error,
    whole_number,
)

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
        If ``x`` holds NaN or ``+inf``, has no entries along ``axis``, a slice along ``axis``
        is entirely ``-inf``, or ``axis`` does not exist.
    TypeError
        If ``x`` does not hold real numbers or ``axis`` is not an int (the error is
        also a ValueError, see :class:`helpers._validate.ArgumentTypeError`).
    """
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("softmax needs x with at least 1 dimension, got a scalar")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise ArgumentTypeError(
            f"axis must be a whole number such as -1 (the last axis), got {axis!r} of type "
            f"{type(axis).__name__}"
        )
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(
            f"axis={axis} does not exist: x has shape {x.shape}, so axis must be in "
            f"{-x.ndim}..{x.ndim - 1}"
        )
    if x.shape[axis] == 0:
        raise ValueError(
            f"x has no entries along axis {axis} (shape {x.shape}); a softmax needs at least "
            "one score to give the weight to"
        )
    if np.isnan(x).any() or np.isposinf(x).any():
        raise ValueError("x contains NaN or +inf; softmax scores must be finite (or -inf)")
    x_max = np.max(x, axis=axis, keepdims=True)
    if np.isneginf(x_max).any():
        raise ValueError(
            f"x has a slice along axis {axis} that is entirely -inf, so no entry can take any "
            "weight"
        )
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(n: int) -> np.ndarray:
    """Boolean ``(n, n)`` mask, True on and below the diagonal: query i may attend to keys 0..i.

    Raises
    ------
    ValueError
        If ``n`` is negative or not a whole number (``2.0`` too: use ``//`` or ``int``).
    """
    n = whole_number(n, "n")
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
        weight exactly 0. Every query row must keep at least one True. Same convention as
        ``torch.nn.functional.scaled_dot_product_attention``'s boolean ``attn_mask``; the
        opposite of ``torch.nn.MultiheadAttention``'s (see the module docstring).
    scale : float, optional
        Multiplies the scores; defaults to ``1 / sqrt(d_k)``. One finite positive real
        number (not a bool, a string or an array).

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
        Each row a convex combination of the rows of V.
    weights : ndarray, shape (..., n_q, n_k)
        The attention weights; every row sums to 1.

    Raises
    ------
    ValueError
        On arrays with fewer than 2 dimensions, mismatched d_k or n_k, leading (batch/head)
        dimensions that do not broadcast, a mask that does not broadcast or leaves a query
        row with no key, NaN or inf in the input, scores that overflow, or a scale that is
        not a finite positive number. Each message names the argument at fault.
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
        mask = _broadcast_mask(mask, scores.shape)
        np.putmask(scores, ~mask, -np.inf)
    if n_q == 0:
        return np.matmul(scores, V), scores
    # The softmax, in place on the score buffer (the n x n matrix is the big allocation, so it
    # is made once). The inputs are finite, so only a row maximum can be -inf (a row with no
    # key left by the mask) or +inf/NaN (scores that overflowed): checking n_q maxima suffices.
    row_max = np.max(scores, axis=-1, keepdims=True)
    if not np.isfinite(row_max).all():
        if mask is not None and not mask.any(axis=-1).all():
            empty = tuple(int(i) for i in np.argwhere(~mask.any(axis=-1))[0])
            raise ValueError(
                f"mask leaves query row {empty} with no key it may attend to; every query "
                "needs at least one True in its row"
            )
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(row_max[..., 0]))[0])
        raise overflow_error(bad, scores.dtype)
    scores -= row_max
    np.exp(scores, out=scores)
    scores /= np.sum(scores, axis=-1, keepdims=True)
    weights = scores
    return np.matmul(weights, V), weights


def _broadcast_mask(mask: np.ndarray, scores_shape: tuple[int, ...]) -> np.ndarray:
    """Check a boolean mask against the score shape and broadcast it."""
    mask = as_bool_mask(mask)
    try:
        mask = np.broadcast_to(mask, scores_shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} (..., n_q, n_k)"
        ) from None
    return mask
