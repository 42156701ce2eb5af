"""Seeded Q/K/V projections and the head split, for the running example (pure NumPy)."""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array, whole_number

__all__ = ["seeded_projections", "split_heads", "combine_heads"]


def seeded_projections(d_model: int, n_heads: int = 1, seed: int = 0) -> dict[str, np.ndarray]:
    """Random ``W_Q, W_K, W_V`` of shape ``(n_heads, d_model, d_k)`` and ``W_O (d_model, d_model)``.

    ``d_k = d_model // n_heads``. Entries are normal with variance ``1/d_model``, so the
    projections of a unit-variance X have roughly unit-variance entries too. A stand-in for
    learned weights: seeded, not trained.

    Raises
    ------
    ValueError
        If ``d_model`` or ``n_heads`` is not a positive whole number (``2.0`` too: it usually
        comes from ``d_model / d_k``; use ``//``), ``n_heads`` does not divide ``d_model``, or
        ``seed`` is not a non-negative whole number.
    """
    d_model = whole_number(d_model, "d_model", minimum=1)
    n_heads = whole_number(n_heads, "n_heads", minimum=1)
    seed = whole_number(seed, "seed")
    if d_model % n_heads:
        raise ValueError(
            f"d_model={d_model} must be a positive multiple of n_heads={n_heads} "
            "(each head gets d_k = d_model / h columns)"
        )
    d_k = d_model // n_heads
    rng = np.random.default_rng(seed)
    std = 1.0 / np.sqrt(d_model)
    W = {name: rng.normal(0.0, std, (n_heads, d_model, d_k)) for name in ("W_Q", "W_K", "W_V")}
    W["W_O"] = rng.normal(0.0, std, (d_model, d_model))
    return W


def split_heads(X: np.ndarray, n_heads: int) -> np.ndarray:
    """``(..., n, d_model)`` -> ``(..., n_heads, n, d_k)``.

    Head a (``head`` in code, 0-based) gets the block of columns ``a*d_k : (a+1)*d_k``.

    Raises
    ------
    ValueError
        If ``X`` is not an array of numbers with at least 2 dimensions, ``n_heads`` is not a
        positive whole number (``2.0`` too: use ``//``), or it does not divide d_model.
    """
    X = as_float_array(X, "X", min_ndim=2)
    n_heads = whole_number(n_heads, "n_heads", minimum=1)
    *lead, n, d_model = X.shape
    if d_model % n_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by n_heads={n_heads}: X's last dimension "
            "must split into h heads of d_k = d_model / h whole columns"
        )
    d_k = d_model // n_heads
    return np.swapaxes(X.reshape(*lead, n, n_heads, d_k), -3, -2)


def combine_heads(H: np.ndarray) -> np.ndarray:
    """Inverse of :func:`split_heads`: ``(..., h, n, d_k)`` -> ``(..., n, h*d_k)``, concatenated."""
    H = as_float_array(H, "H", min_ndim=3)
    *lead, h, n, d_k = H.shape
    return np.swapaxes(H, -3, -2).reshape(*lead, n, h * d_k)
