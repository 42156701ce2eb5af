"""Boolean attention masks for batches: which positions of each padded sentence are real.

The course's convention everywhere: **True = may attend** (a real token), False = blocked
(padding). That is the convention of PyTorch's ``F.scaled_dot_product_attention``; PyTorch's
``nn.MultiheadAttention`` (``attn_mask`` and ``key_padding_mask``) uses the opposite one, True =
not allowed. Pure NumPy.
"""

from __future__ import annotations

import numpy as np

from ._validate import ArgumentTypeError, whole_number

__all__ = ["padding_mask"]


def padding_mask(lengths, n: int) -> np.ndarray:
    """Boolean ``(b, n)`` mask of a batch of ``b`` sentences padded to ``n`` positions.

    ``mask[s, j]`` is True when position ``j`` of sentence ``s`` is a real token
    (``j < lengths[s]``) that may be attended, False on the padding after it. Use it on the key
    axis, ``mask[:, None, :]`` (shape ``(b, 1, n)``, or ``(b, 1, 1, n)`` with heads), so that it
    broadcasts over the queries (and heads) of ``scaled_dot_product_attention``.

    Parameters
    ----------
    lengths : array_like of int, shape (b,)
        The real length of each sentence, ``0 <= lengths[s] <= n``.
    n : int
        The padded length: every sentence of the batch holds ``n`` positions.

    Returns
    -------
    ndarray of bool, shape (b, n)

    Raises
    ------
    TypeError
        If ``n`` is not a whole number (a bool or a float such as 4.0 included), or
        ``lengths`` does not hold whole numbers (an ``ArgumentTypeError``, also a
        ``ValueError``).
    ValueError
        If ``n`` is negative, ``lengths`` is not 1-D, or a length is negative or above ``n``.
    """
    n = whole_number(n, "padding_mask: n")
    try:
        arr = np.asarray(lengths)
    except Exception:  # ragged lists and the like
        raise ArgumentTypeError(
            "padding_mask: lengths must be a flat list or 1-D array of whole numbers, one per "
            f"sentence; got {type(lengths).__name__} {str(lengths)[:60]}"
        ) from None
    if arr.shape == (0,):  # an empty batch: np.asarray([]) is float64, but there is no length
        arr = arr.astype(int)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ArgumentTypeError(
            "padding_mask: lengths must hold whole numbers (one length per sentence), got "
            f"dtype {arr.dtype}"
        )
    if arr.ndim != 1:
        raise ValueError(
            f"padding_mask: lengths must be 1-D, one length per sentence (b,), got shape "
            f"{arr.shape}"
        )
    bad = (arr < 0) | (arr > n)
    if bad.any():
        s = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"padding_mask: lengths[{s}] = {int(arr[s])} is outside 0..n = 0..{n}; a sentence "
            "padded to n positions holds at most n real tokens"
        )
    return np.arange(n) < arr[:, None]  # (1, n) against (b, 1) -> (b, n)
