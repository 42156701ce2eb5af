"""Multi-head attention in pure NumPy, built on :func:`scaled_dot_product_attention`.

``h`` heads run side by side, head a with its own projections W^Q_a, W^K_a, W^V_a; their
outputs are concatenated back to ``h * d_v`` columns and mixed by ``W_O``:

    head_a = Attention(X_q W^Q_a, X_kv W^K_a, X_kv W^V_a),   a = 1 .. h
    MultiHead = concat(head_1, ..., head_h) W_O

In code the heads are counted from 0: ``W_Q[head]`` for ``head in range(h)``.

Self-attention is ``X_kv = X_q`` (the default); cross-attention passes another sequence.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_bool_mask, as_float_array, require_finite
from .attention import scaled_dot_product_attention
from .projections import combine_heads

__all__ = ["multi_head_attention", "head_projections"]


def head_projections(
    X: np.ndarray, W: np.ndarray, name: str = "W", x_name: str = "X"
) -> np.ndarray:
    """Project ``X`` with every head's matrix: ``(..., n, d_model)`` x ``(h, d_model, d)``.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
        The sequence to project.
    W : array_like, shape (h, d_model, d)
        One ``(d_model, d)`` projection per head, e.g. ``seeded_projections(...)["W_Q"]``.
    name, x_name : str
        The names of ``W`` and ``X`` in error messages.

    Returns
    -------
    ndarray, shape (..., h, n, d)
        ``out[..., head, :, :] = X @ W[head]``.

    Raises
    ------
    ValueError
        If ``X`` or ``W`` is not a finite array of numbers, ``W`` is not 3-D, its rows do not
        match ``X``'s ``d_model``, or the product overflows.
    """
    X = as_float_array(X, x_name, min_ndim=2)
    require_finite(X, x_name)
    W = as_float_array(W, name)
    require_finite(W, name)
    if W.ndim != 3:
        raise ValueError(
            f"{name} must have shape (h, d_model, d): one projection per head; got {W.shape}"
        )
    if W.shape[1] != X.shape[-1]:
        raise ValueError(
            f"{name} has shape {W.shape}, so it expects d_model={W.shape[1]}, but {x_name} has "
            f"d_model={X.shape[-1]} (its last dimension)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.matmul(X[..., None, :, :], W)  # (..., 1, n, d_model) @ (h, d_model, d)
    if not np.isfinite(out).all():
        raise ValueError(
            f"{x_name} @ {name} overflowed to inf/NaN in {out.dtype}; scale {x_name} or {name} down"
        )
    return out


def _checked_heads(Q, K, V, W_Q, W_K, W_O) -> np.ndarray:
    """``W_O`` as a float array, once the heads agree on h and d_k and ``W_O`` fits them."""
    heads = {"W_Q": Q.shape[-3], "W_K": K.shape[-3], "W_V": V.shape[-3]}
    if len(set(heads.values())) != 1:
        raise ValueError(f"W_Q, W_K and W_V must have the same number of heads h, got {heads}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"W_Q has shape {np.shape(W_Q)} and W_K {np.shape(W_K)}: their last dimension "
            f"d_k must match for Q K^T (got {Q.shape[-1]} and {K.shape[-1]})"
        )
    W_O = as_float_array(W_O, "W_O", min_ndim=2)
    require_finite(W_O, "W_O")
    h, d_v = V.shape[-3], V.shape[-1]
    if W_O.ndim != 2 or W_O.shape[0] != h * d_v:
        raise ValueError(
            f"W_O has shape {W_O.shape} but the {h} concatenated heads have h * d_v = "
            f"{h} * {d_v} = {h * d_v} columns; W_O needs shape ({h * d_v}, d_out)"
        )
    return W_O


def _head_mask(mask, wanted: tuple, kv_name: str) -> np.ndarray:
    """The mask as booleans for every head, (..., 1, n_q, n_k), once it broadcasts to
    ``wanted`` = (..., n_q, n_k)."""
    mask = as_bool_mask(mask)
    try:
        if mask.ndim < 2:
            raise ValueError
        np.broadcast_to(mask, wanted)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} does not fit the queries and keys: it must "
            f"broadcast to {wanted} = (..., n_q, n_k), with n_q = {wanted[-2]} rows of "
            f"X_q and n_k = {wanted[-1]} rows of {kv_name}"
        ) from None
    mask = mask[..., None, :, :]  # one mask for every head: (..., 1, n_q, n_k)
    return mask


def multi_head_attention(
    X_q: np.ndarray,
    W_Q: np.ndarray,
    W_K: np.ndarray,
    W_V: np.ndarray,
    W_O: np.ndarray,
    mask: np.ndarray | None = None,
    X_kv: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``concat(head_1, ..., head_h) W_O``, each head a scaled dot-product attention.

    Parameters
    ----------
    X_q : array_like, shape (..., n_q, d_model)
        The sequence the queries come from (and keys/values too, for self-attention).
    W_Q, W_K : array_like, shape (h, d_model, d_k)
        Per-head query and key projections.
    W_V : array_like, shape (h, d_model, d_v)
        Per-head value projections.
    W_O : array_like, shape (h * d_v, d_out)
        The output projection applied to the concatenated heads (``d_out`` is usually
        ``d_model``).
    mask : array_like of bool, optional
        Broadcastable to ``(..., n_q, n_k)`` (the leading dimensions of ``X_q``, not ``h``):
        one mask shared by every head. **True = may attend**, e.g. ``causal_mask(n)``.
    X_kv : array_like, shape (..., n_k, d_model), optional
        The sequence keys and values come from. ``None`` (default) means ``X_q``:
        self-attention. Another sequence gives cross-attention.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_out)
        The heads' outputs, concatenated and projected by ``W_O``.
    weights : ndarray, shape (..., h, n_q, n_k)
        Every head's attention weights; each row sums to 1.

    Raises
    ------
    ValueError
        If the heads disagree on ``h``, ``W_O`` does not have ``h * d_v`` rows, the mask does
        not broadcast to ``(..., n_q, n_k)``, plus everything
        :func:`scaled_dot_product_attention` rejects. Each message names your argument
        (``X_q``, ``X_kv``, ``W_Q`` ... ``mask``), not an internal array.

    Examples
    --------
    >>> import helpers
    >>> Z = helpers.build_Z(helpers.tokenize(helpers.RUNNING_SENTENCE))  # (6, 8)
    >>> out, A = multi_head_attention(Z, **helpers.seeded_projections(8, n_heads=2))
    >>> out.shape, A.shape
    ((6, 8), (2, 6, 6))
    """
    kv_name = "X_q" if X_kv is None else "X_kv"
    X_kv = X_q if X_kv is None else X_kv
    Q = head_projections(X_q, W_Q, "W_Q", "X_q")  # (..., h, n_q, d_k)
    K = head_projections(X_kv, W_K, "W_K", kv_name)  # (..., h, n_k, d_k)
    V = head_projections(X_kv, W_V, "W_V", kv_name)  # (..., h, n_k, d_v)
    W_O = _checked_heads(Q, K, V, W_Q, W_K, W_O)
    lead_q, lead_kv = Q.shape[:-3], K.shape[:-3]  # the user's leading (batch) dimensions
    try:
        lead = np.broadcast_shapes(lead_q, lead_kv)
    except ValueError:
        raise ValueError(
            f"the leading (batch) dimensions of X_q {lead_q} and X_kv {lead_kv} do not broadcast"
        ) from None
    if mask is not None:
        mask = _head_mask(mask, (*lead, Q.shape[-2], K.shape[-2]), kv_name)
    try:
        head_out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)  # (..., h, n_q, d_v)
    except ValueError as error:  # overflow, or a query row the mask leaves empty
        raise ValueError(
            f"{error} (in multi_head_attention: Q = X_q @ W_Q[head], K = {kv_name} @ W_K[head]; "
            "the row index is (..., head, i))"
        ) from None
    return combine_heads(head_out) @ W_O, weights
