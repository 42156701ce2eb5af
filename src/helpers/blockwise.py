"""What attention costs, and blockwise attention with an online softmax (pure NumPy).

Naive attention builds the whole ``(n_q, n_k)`` score matrix, so its memory grows as n².
:func:`blockwise_attention` visits the keys one block at a time and keeps, for every query,
only a running maximum ``m``, a running sum ``l`` (ℓ) of exponentials and a running,
un-normalised output ``acc``. When a new block raises a row's maximum, the old sum and output
are rescaled by ``exp(m_old - m_new)``; at the end ``acc / l`` is exactly
``softmax(Q K^T * scale) V``. Only one ``(n_q, block_size)`` tile of scores exists at a time:
memory O(n · block) instead of O(n²). This is the idea behind FlashAttention (Dao et al. 2022),
which also tiles the queries and keeps the tiles in fast on-chip memory.

:func:`online_softmax_steps` yields the state after every block, so a lesson can print
``m``, ``l`` and the partial output as they evolve; :func:`blockwise_attention` runs it to
the end. :func:`score_matrix_bytes` says how many bytes the naive weights occupy.

Letters as in lesson 07: ``m`` and ``l`` (ℓ) the running max and sum, i a query position, j a
key position; in the shape comments ``b`` is the block size (keys per block) and ``r`` the
number of query rows a block updates.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ._validate import check_qkv, overflow_error, whole_number

__all__ = ["BlockStep", "online_softmax_steps", "blockwise_attention", "score_matrix_bytes"]


@dataclass(frozen=True)
class BlockStep:
    """The running state of the online softmax after the keys ``start:stop`` were folded in.

    Attributes
    ----------
    block : int
        Index of the key block just processed (0, 1, ...).
    start, stop : int
        The key positions of that block, ``K[..., start:stop, :]``.
    m : ndarray, shape (..., n_q)
        Running maximum of each query's scores over the keys seen so far.
    l : ndarray, shape (..., n_q)
        Running sum of ``exp(score - m)`` over the keys seen so far (ℓ in the papers).
    acc : ndarray, shape (..., n_q, d_v)
        Running sum of ``exp(score - m) * v`` (un-normalised output).
    """

    block: int
    start: int
    stop: int
    m: np.ndarray
    l: np.ndarray
    acc: np.ndarray

    @property
    def output(self) -> np.ndarray:
        """``acc / l``: attention over the keys seen so far, shape ``(..., n_q, d_v)``."""
        return self.acc / self.l[..., None]


def _check_inputs(Q, K, V, block_size, causal, scale):
    """Validate like :func:`helpers.scaled_dot_product_attention`, plus the block size."""
    Q, K, V, scale = check_qkv(Q, K, V, scale)  # also: the leading dimensions broadcast
    block_size = whole_number(block_size, "block_size", minimum=1)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    dtype = np.result_type(Q, K, V)
    return Q, K, V, lead, dtype, scale


def online_softmax_steps(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    block_size: int = 128,
    causal: bool = False,
    scale: float | None = None,
) -> Iterator[BlockStep]:
    """Fold the keys into an online softmax one block at a time, yielding the state after each.

    For key block ``b`` with scores ``S_b = Q K_b^T * scale`` (shape ``(..., n_q, block)``)::

        m_new = max(m, rowmax(S_b))
        l     = l * exp(m - m_new) + rowsum(exp(S_b - m_new))
        acc   = acc * exp(m - m_new) + exp(S_b - m_new) @ V_b

    Parameters
    ----------
    Q, K, V, block_size, causal, scale
        As in :func:`blockwise_attention`.

    Yields
    ------
    BlockStep
        ``m (..., n_q)``, ``l (..., n_q)``, ``acc (..., n_q, d_v)`` after each block; its
        ``output`` is the attention over the keys seen so far. The arrays are copies, so a
        step can be kept (for the fast path see :func:`blockwise_attention`).
    """
    Q, K, V, lead, dtype, scale = _check_inputs(Q, K, V, block_size, causal, scale)
    for block, start, stop, m, l, acc in _fold_blocks(Q, K, V, block_size, causal, scale):
        yield BlockStep(block, start, stop, m.copy(), l.copy(), acc.copy())


def _fold_blocks(Q, K, V, block_size, causal, scale):
    """The online softmax on validated input; updates ``m, l, acc`` in place, block by block.

    Yields ``(block, start, stop, m, l, acc)`` after each block; the arrays are the live
    state (the next block overwrites them), which keeps the extra memory to one score tile
    plus a few ``(..., n_q, d_v)`` arrays.
    """
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    dtype = np.result_type(Q, K, V)
    n_q, n_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    m = np.full((*lead, n_q), -np.inf, dtype=dtype)  # (..., n_q) running max
    l = np.zeros((*lead, n_q), dtype=dtype)  # (..., n_q) running sum of exp(score - m)
    acc = np.zeros((*lead, n_q, d_v), dtype=dtype)  # (..., n_q, d_v) running sum of exp * v
    query_pos = np.arange(n_q)
    for block, start in enumerate(range(0, n_k, block_size)):
        stop = min(start + block_size, n_k)
        K_b, V_b = K[..., start:stop, :], V[..., start:stop, :]  # (..., b, d_k), (..., b, d_v)
        # Causal (query i sees keys 0..i): queries before `start` see nothing of this block,
        # so only rows start: take part. Key 0 is in block 0, so every row's m is finite
        # after the first block and exp(m - m_new) below never meets -inf - (-inf).
        rows = slice(start, None) if causal else slice(None)
        # One (..., r, b) tile of scores, updated in place: the only score memory there is.
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
            scores = np.matmul(Q[..., rows, :], np.swapaxes(K_b, -1, -2))  # (..., r, b)
            scores *= scale
        if causal:
            future = np.arange(start, stop)[None, :] > query_pos[rows, None]  # (r, b)
            np.copyto(scores, -np.inf, where=future)
        m_rows = m[..., rows]  # a view: writing to it updates m
        m_new = np.maximum(m_rows, scores.max(axis=-1))  # (..., r)
        if not np.isfinite(m_new).all():
            # Every row has a finite score in every tile it sees (causal: key `start` <= row),
            # so a non-finite maximum means Q K^T * scale overflowed. Say so, as the plain
            # function does, instead of letting exp(inf - inf) turn the output into NaN.
            bad = [int(i) for i in np.argwhere(~np.isfinite(m_new))[0]]
            bad[-1] += start if causal else 0
            raise overflow_error(tuple(bad), scores.dtype)
        correction = np.exp(m_rows - m_new)  # (..., r); 0 on the first block
        scores -= m_new[..., None]
        p = np.exp(scores, out=scores)  # (..., r, b) = exp(S_b - m_new); masked entries -> 0
        m_rows[...] = m_new
        l_rows, acc_rows = l[..., rows], acc[..., rows, :]  # views
        l_rows *= correction
        l_rows += p.sum(axis=-1)
        acc_rows *= correction[..., None]
        acc_rows += np.matmul(p, V_b)
        del scores, p  # free the tile before the caller looks at this step
        yield block, start, stop, m, l, acc


def blockwise_attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    block_size: int = 128,
    causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    """``softmax(Q K^T * scale) V`` without ever holding the ``(n_q, n_k)`` score matrix.

    Same result as ``helpers.scaled_dot_product_attention(Q, K, V, mask, scale)[0]`` (to
    rounding: about 1e-15 in float64), with peak extra memory about
    ``n_q * block_size`` scores instead of ``n_q * n_k``.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
        One query per row.
    K : array_like, shape (..., n_k, d_k)
        One key per row; its last dimension must equal Q's.
    V : array_like, shape (..., n_k, d_v)
        One value per key.
    block_size : int
        How many keys to process at a time (the last block may be shorter).
    causal : bool
        If True, query i attends to keys 0..i only: the mask ``np.tril(ones((n_q, n_k)))``,
        which for ``n_q == n_k`` is ``helpers.causal_mask(n)`` (True = may attend).
    scale : float, optional
        Multiplies the scores; defaults to ``1 / sqrt(d_k)``.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)
        The attention output. The weights are never formed, so none are returned.

    Raises
    ------
    ValueError
        On arrays with fewer than 2 dimensions, mismatched d_k or n_k, no keys, leading
        dimensions that do not broadcast, NaN or inf in the input, scores that overflow (as
        :func:`helpers.scaled_dot_product_attention` does: never a silent NaN), a
        ``block_size`` that is not a positive whole number, a non-boolean ``causal``, or a bad
        ``scale``. Each message names the argument at fault.
    """
    Q, K, V, lead, dtype, scale = _check_inputs(Q, K, V, block_size, causal, scale)
    if Q.shape[-2] == 0:
        return np.zeros((*lead, 0, V.shape[-1]), dtype=dtype)
    for *_, l, acc in _fold_blocks(Q, K, V, block_size, causal, scale):  # noqa: B007
        pass  # the state is updated in place; only the final one matters
    acc /= l[..., None]
    return acc


def score_matrix_bytes(n: int, h: int = 1, batch: int = 1, dtype=np.float32) -> int:
    """Bytes needed to store the attention weights of one layer: ``batch * h * n * n * itemsize``.

    Parameters
    ----------
    n : int
        Sequence length (queries = keys = n, self-attention).
    h : int
        Number of heads; each head has its own ``(n, n)`` matrix.
    batch : int
        Number of sequences processed together.
    dtype : numpy dtype, type or name
        E.g. ``np.float32`` (4 bytes per number), ``"float16"`` (2), ``np.float64`` (8).

    Returns
    -------
    int
        The number of bytes (a Python int, exact even for very long contexts).
    """
    for name, value in (("n", n), ("h", h), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")
    try:
        itemsize = np.dtype(dtype).itemsize
    except TypeError:
        raise ValueError(f"dtype {dtype!r} is not a NumPy dtype (try np.float32)") from None
    return int(batch) * int(h) * int(n) * int(n) * itemsize
