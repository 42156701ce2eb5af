"""Seeded Q/K/V projections and the head split, for the running example (pure NumPy)."""

from __future__ import annotations

import numpy as np

from ._validate import as_float_array

__all__ = ["seeded_projections", "split_heads", "combine_heads"]


def seeded_projections(d_model: int, n_heads: int = 1, seed: int = 0) -> dict[str, np.ndarray]:
    """Random ``W_Q, W_K, W_V`` of shape ``(n_heads, d_model, d_k)`` and ``W_O (d_model, d_model)``.

    ``d_k = d_model // n_heads``. Entries are normal with variance ``1/d_model``, so the
    projections of a unit-variance X have roughly unit-variance entries too. A stand-in for
    learned weights: seeded, not trained.
    """
    if n_heads <= 0 or d_model <= 0 or d_model % n_heads:
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

    Head j gets the block of columns ``j*d_k : (j+1)*d_k``.
    """
    X = as_float_array(X, "X", min_ndim=2)
    *lead, n, d_model = X.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    d_k = d_model // n_heads
    return np.swapaxes(X.reshape(*lead, n, n_heads, d_k), -3, -2)


def combine_heads(H: np.ndarray) -> np.ndarray:
    """Inverse of :func:`split_heads`: ``(..., h, n, d_k)`` -> ``(..., n, h*d_k)``, concatenated."""
    H = as_float_array(H, "H", min_ndim=3)
    *lead, h, n, d_k = H.shape
    return np.swapaxes(H, -3, -2).reshape(*lead, n, h * d_k)
