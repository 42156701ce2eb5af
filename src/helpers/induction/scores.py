"""Per-head scores of lesson 10's model on :func:`~helpers.induction.task.repeat_task`'s
sequences:

* previous-token score: the mean weight a query puts on the key just before it;
* induction score: for the queries of a later copy, the weight on the keys just *after* the
  earlier occurrences of the query's token (on a segment of length L repeated right after
  itself: the diagonal at offset -L + 1);
* duplicate-token score: for the same queries, the weight on the earlier occurrences of the
  query's token itself, the other way a first layer can help find the match.

A score is a hint; what a head does is measured by intervening on it (:mod:`.circuits`).
"""

from __future__ import annotations

import numpy as np

from .task import Repeats

__all__ = ["head_scores", "previous_token_score", "induction_score"]


def head_scores(attention: np.ndarray, data: Repeats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per head: ``(previous_token, induction, duplicate_token)``, each ``(n_layers, n_heads)``.

    ``attention (b, n_layers, n_heads, n, n)`` on ``data``'s sequences. Previous-token: the mean
    over the batch and the queries 1..n-1 of ``A[i, i - 1]``. Induction: the mean over the
    queries ``i`` of every copy after the first of the weight on the keys just after the
    earlier occurrences of its token (``A[i, i - D + 1]`` for a copy D positions earlier; a
    segment of length L repeated right after itself: the diagonal at offset -L + 1). Duplicate
    token: the same queries, the weight on the earlier occurrences themselves (``A[i, i - D]``).
    """
    previous = np.diagonal(attention, -1, axis1=-2, axis2=-1).mean(axis=(0, -1))
    query_id, batch_index, rows, keys = [], [], [], []
    queries = 0
    for s in range(len(data.tokens)):
        L, starts = data.length[s], data.starts[s, : data.count[s]]
        for c in range(1, len(starts)):
            q = np.arange(starts[c], starts[c] + L)
            for e in range(c):
                query_id.append(queries + np.arange(L))
                batch_index.append(np.full(L, s))
                rows.append(q)
                keys.append(q - (starts[c] - starts[e]) + 1)
            queries += L
    batch_index, rows, keys = map(np.concatenate, (batch_index, rows, keys))
    induction = attention[batch_index, :, :, rows, keys].sum(axis=0) / queries
    duplicate = attention[batch_index, :, :, rows, keys - 1].sum(axis=0) / queries
    return previous, induction, duplicate


def previous_token_score(A: np.ndarray) -> np.ndarray:
    """Mean weight on the previous token, ``A[i, i - 1]`` over the queries 1..n-1: one score per
    map of ``A (..., n, n)`` (lesson 10's exercise 1)."""
    A = _attention_stack(A)
    return np.diagonal(A, -1, axis1=-2, axis2=-1).mean(axis=-1)


def induction_score(A: np.ndarray, L: int) -> np.ndarray:
    """On a sequence whose token i equals token i - L (a segment of length L repeated), the mean
    weight ``A[i, i - L + 1]`` over the queries ``i = L .. n - 1``: one score per map of
    ``A (..., n, n)`` (lesson 10's exercise 2)."""
    A = _attention_stack(A)
    n = A.shape[-1]
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or not 1 <= L < n:
        raise ValueError(f"L must be a whole number in 1 .. n - 1 = {n - 1}, got {L!r}")
    queries = np.arange(L, n)
    return A[..., queries, queries - L + 1].mean(axis=-1)


def _attention_stack(A) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2:
        raise ValueError(f"A must be attention maps (..., n, n) with n >= 2, got {A.shape}")
    return A
