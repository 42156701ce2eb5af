"""Measures of what an attention head does, for lesson 09 (pure NumPy).

Each takes attention weights ``A`` of shape ``(..., n, n)`` (rows = query i, columns = key j,
rows summing to 1), e.g. one head's map, a layer's ``(h, n, n)`` or the model's
``(6, 12, n, n)``, and returns one number per map, shape ``(...)``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "attention_distance",
    "head_offset_score",
    "special_token_weight",
    "weighted_value_norms",
]


def head_offset_score(A: np.ndarray, offset: int) -> np.ndarray:
    """Mean weight a query puts on the key ``offset`` places away: mean over i of A[i, i+offset].

    ``offset = -1``: the previous token; ``+1``: the next; ``0``: itself. The mean runs over the
    ``n - |offset|`` queries that have such a key. Needs ``|offset| < n``.
    """
    A = np.asarray(A)
    n = A.shape[-1]
    if A.ndim < 2 or A.shape[-2] != n:
        raise ValueError(f"A must have shape (..., n, n), got {A.shape}")
    if not -n < offset < n:
        raise ValueError(f"offset {offset} has no key in a sequence of n={n} tokens")
    return np.diagonal(A, offset, axis1=-2, axis2=-1).mean(axis=-1)


def special_token_weight(A: np.ndarray, positions: list[int]) -> np.ndarray:
    """Mean (over queries) of the total weight on the keys at ``positions`` (e.g. [CLS], [SEP])."""
    A = np.asarray(A)
    return A[..., :, positions].sum(axis=-1).mean(axis=-1)


def attention_distance(A: np.ndarray) -> np.ndarray:
    """Mean over queries of sum_j A[i, j] |i - j|: how far, in tokens, a head looks on average."""
    A = np.asarray(A)
    n = A.shape[-1]
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])  # (n, n): |i - j|
    return (A * distance).sum(axis=-1).mean(axis=-1)


def weighted_value_norms(A: np.ndarray, V: np.ndarray, W_O: np.ndarray) -> np.ndarray:
    """``||A[i, j] v_j W^O_a||``: the length of what key j adds to query i's output, per head.

    Head a's output for query i, once through ``W^O``, is ``sum_j A[i, j] v_j W^O_a``, where
    ``W^O_a`` is the head's ``d_k`` rows of ``W^O``; key j's term has length
    ``A[i, j] * ||v_j W^O_a||``: its weight times the length of what it carries (Kobayashi et
    al., 2020, "Attention is Not Only a Weight", the norm ``||alpha f(x)||``).

    Parameters
    ----------
    A : array, shape (..., n, n)
        Attention weights, rows = query i, columns = key j.
    V : array, shape (..., n, d_k)
        The values of the same heads (bias included, as the model computes them).
    W_O : array, shape (..., d_k, d_model)
        Each head's rows of the output matrix ``W^O`` (``x @ W_O`` convention).

    Returns
    -------
    ndarray, shape (..., n, n)
    """
    A, V, W_O = np.asarray(A), np.asarray(V), np.asarray(W_O)
    carried = np.linalg.norm(V @ W_O, axis=-1)  # (..., n): ||v_j W^O_a|| for every key j
    return A * carried[..., None, :]
