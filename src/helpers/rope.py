"""Position inside the dot product: rotary embeddings (RoPE) and linear biases (ALiBi).

Lesson 01 adds a position vector to each token's embedding; most language models since 2021
put position into the attention scores instead (lesson 11):

* :func:`rotate` (RoPE, Su et al. 2021): each query and key is rotated by angles proportional
  to its position, pair of dimensions by pair of dimensions, so that ``rotate(q, m) ·
  rotate(k, n)`` depends on the positions only through ``m - n``. Two conventions pair the
  dimensions differently. The **rotate-half** one of GPT-NeoX and Llama (the default here)
  pairs dimension ``i`` with ``i + d/2``; the **interleaved** one of the RoFormer paper pairs
  ``2i`` with ``2i + 1``. Pair ``i`` turns by ``position * base ** (-2 i / d)`` in both, so
  the two are the same rotation with the dimensions permuted (``interleaved=True``).
* :func:`alibi_slopes`, :func:`alibi_bias` (ALiBi, Press et al. 2022): no rotation and no
  position vector; each head adds ``-m_h * (i - j)`` to the score of query ``i`` and key
  ``j <= i``, with a fixed slope ``m_h`` per head (a geometric sequence starting at
  ``2 ** (-8 / h)``; for a number of heads that is not a power of two, the rule of Press et
  al.'s released code: the paper trains only powers of two).
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import ArgumentTypeError, as_float_array, require_finite, whole_number

__all__ = ["rotate", "frequencies", "alibi_slopes", "alibi_bias"]


def frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """The ``d / 2`` angular frequencies of RoPE: pair ``i`` turns by ``base ** (-2 i / d)``
    radians per position, from 1 (pair 0) down to nearly ``1 / base``."""
    d = whole_number(d, "d", minimum=2)
    if d % 2:
        raise ValueError(f"d must be even (dimensions are rotated in pairs), got {d}")
    base = _base(base)
    return base ** (-np.arange(0, d, 2) / d)


def rotate(X, positions=None, base: float = 10000.0, interleaved: bool = False) -> np.ndarray:
    """Rotate ``X (..., n, d)`` by RoPE: row ``t`` turned by angles ``positions[t] *
    frequencies(d, base)``, one angle per pair of dimensions.

    ``positions``: default ``0 .. n-1``; integers or real numbers (position interpolation
    scales them), broadcastable to ``(..., n)``. ``interleaved``: pair dimension ``2i`` with
    ``2i + 1`` (RoFormer) instead of ``i`` with ``i + d/2`` (GPT-NeoX, Llama). Returns a new
    float array (float32 stays float32); norms are kept, row by row.
    """
    X = as_float_array(X, "X", min_ndim=2)
    require_finite(X, "X")
    n, d = X.shape[-2], X.shape[-1]
    if d % 2:
        raise ValueError(f"X's last dimension d must be even (pairs are rotated), got shape "
                         f"{X.shape}")  # fmt: skip
    if isinstance(interleaved, (bool, np.bool_)) is False:
        raise ArgumentTypeError(f"interleaved must be True or False, got {interleaved!r}")
    if positions is None:
        positions = np.arange(n, dtype=np.float64)
    else:
        positions = as_float_array(positions, "positions")
        require_finite(positions, "positions")
        try:
            np.broadcast_shapes(positions.shape, X.shape[:-1])
        except ValueError:
            raise ValueError(
                f"positions of shape {positions.shape} do not fit X of shape {X.shape}: one "
                f"position per row, broadcastable to {X.shape[:-1]}"
            ) from None
    angles = np.asarray(positions, dtype=np.float64)[..., None] * frequencies(d, base)
    cos, sin = np.cos(angles).astype(X.dtype), np.sin(angles).astype(X.dtype)
    if interleaved:
        first, second = X[..., 0::2], X[..., 1::2]
    else:
        first, second = X[..., : d // 2], X[..., d // 2 :]
    turned_first, turned_second = turn(first, second, cos, sin)
    out = np.empty(np.broadcast_shapes(X.shape, turned_first.shape[:-1] + (d,)), dtype=X.dtype)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = turned_first, turned_second
    else:
        out[..., : d // 2], out[..., d // 2 :] = turned_first, turned_second
    return out


def turn(first: np.ndarray, second: np.ndarray, cos: np.ndarray, sin: np.ndarray):
    """Each pair (``first[..., i]``, ``second[..., i]``) turned by the angle whose cosine and
    sine are given (no checks: :func:`rotate` and lesson 10's model call it)."""
    return first * cos - second * sin, first * sin + second * cos


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope ``m_h`` for each of ``n_heads`` heads, as Press et al.'s code computes
    them: for ``h`` a power of two, ``2 ** (-8 / h)`` to the powers ``1 .. h``; otherwise the
    slopes of the power of two below ``h``, then every other slope of twice that power."""
    n_heads = whole_number(n_heads, "n_heads", minimum=1)

    def power_of_two(h: int) -> list[float]:
        start = 2.0 ** (-8.0 / h)
        return [start ** (i + 1) for i in range(h)]

    if n_heads & (n_heads - 1) == 0:
        return np.array(power_of_two(n_heads))
    below = 2 ** math.floor(math.log2(n_heads))
    extra = alibi_slopes(2 * below)[0::2][: n_heads - below]
    return np.concatenate([power_of_two(below), extra])


def alibi_bias(n: int, n_heads: int) -> np.ndarray:
    """``(n_heads, n, n)``: ``-m_h * (i - j)`` for query ``i`` and key ``j <= i``, ``-inf``
    above the diagonal (ALiBi is used with the causal mask). Add it to the scores before the
    softmax."""
    n = whole_number(n, "n", minimum=1)
    slopes = alibi_slopes(n_heads)
    distance = np.arange(n)[:, None] - np.arange(n)[None, :]  # i - j
    bias = -slopes[:, None, None] * distance
    return np.where(distance >= 0, bias, -np.inf)


def _base(base) -> float:
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, (int, float, np.number)):
        raise ArgumentTypeError(f"base must be a number > 1, got {base!r}")
    base = float(base)
    if not math.isfinite(base) or base <= 1:
        raise ValueError(f"base must be a finite number > 1 (RoPE uses 10000), got {base}")
    return base
