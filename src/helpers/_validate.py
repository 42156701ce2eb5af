"""Input checks shared by the math modules: turn bad input into an error that teaches.

Every check names the argument at fault, as the caller spelled it. A value of the right kind
that cannot work (a negative size, NaN, shapes that do not fit) raises ``ValueError``. A value
of the wrong kind (a string where a number belongs, ``True`` for a count, ``2.0`` for a number
of heads) raises :class:`ArgumentTypeError`, which is a ``TypeError`` *and* a ``ValueError``:
Python's convention says TypeError, and the course has always promised that bad input raises
ValueError, so ``except ValueError`` and ``except TypeError`` both catch it.
"""

from __future__ import annotations

import numbers

import numpy as np


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (both a ``TypeError`` and a ``ValueError``)."""


def as_float_array(x, name: str, min_ndim: int = 0) -> np.ndarray:
    """``x`` as a float ndarray (float32 stays float32), or an error naming ``name``."""
    if x is None:
        raise ArgumentTypeError(f"{name} is None; it must be an array of numbers")
    if isinstance(x, (str, bytes)):
        raise ArgumentTypeError(f"{name} must be an array of numbers, got the string {_clip(x)}")
    try:
        arr = np.asarray(x)
    except Exception:  # ragged lists and the like
        raise ValueError(
            f"{name} could not be read as an array of numbers; are its rows of different "
            f"lengths? got {_clip(x)}"
        ) from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ArgumentTypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ArgumentTypeError(f"{name} must be real, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions (..., n, d), got shape {arr.shape}"
        )
    return arr


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """``mask`` as a boolean ndarray (True = may attend), or an error naming ``name``."""
    try:
        arr = np.asarray(mask)
    except Exception:  # ragged lists and the like
        raise ValueError(
            f"{name} could not be read as an array of True/False; are its rows of different "
            f"lengths? got {_clip(mask)}"
        ) from None
    if arr.dtype != bool:
        raise ArgumentTypeError(
            f"{name} must be boolean (True = may attend), got dtype {arr.dtype}; "
            "use e.g. causal_mask(n), padding_mask(lengths, n) or an array of True/False"
        )
    return arr


def require_finite(arr: np.ndarray, name: str) -> None:
    """Raise if ``arr`` holds NaN or inf, saying how many and where the first one is."""
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN/inf value(s), the first at index {first}; "
            "attention needs finite inputs"
        )


def whole_number(value, name: str, minimum: int = 0) -> int:
    """``value`` as a Python int >= ``minimum``, or an error naming ``name``.

    ``2.0`` is refused, not rounded: it usually comes from ``/`` where ``//`` was meant
    (``h = d_model / d_k``), and the message says so. ``True`` is refused too: it is a bool,
    not a count.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be a whole number, got {bool(value)} (a bool)")
    if not isinstance(value, (int, np.integer)):
        hint = ""
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            hint = f"; use int({name}) or integer division // (a / b is always a float)"
        raise ArgumentTypeError(
            f"{name} must be a whole number (an int), got {_clip(value)} of type "
            f"{type(value).__name__}{hint}"
        )
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {name}={int(value)}")
    return int(value)


def positive_scale(scale, name: str = "scale") -> float:
    """A finite positive real number as a Python float, or an error naming ``name``.

    A Python float keeps float32 inputs in float32 (NEP 50). One-element arrays are refused
    too: a scale is one number.
    """
    if isinstance(scale, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be a number, got {bool(scale)} (a bool)")
    if isinstance(scale, np.ndarray) and scale.ndim == 0:
        scale = scale[()]
    if isinstance(scale, (complex, np.complexfloating)):
        raise ArgumentTypeError(f"{name} must be a real number, got the complex number {scale!r}")
    if not isinstance(scale, numbers.Real):
        raise ArgumentTypeError(
            f"{name} must be one real number (e.g. 0.5), got {_clip(scale)} of type "
            f"{type(scale).__name__}"
        )
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {name}={scale!r}")
    return scale


def overflow_error(row: tuple[int, ...], dtype) -> ValueError:
    """The error for scores that overflowed to inf/NaN in query row ``row``."""
    advice = "scale Q and K (or the scale) down"
    if np.dtype(dtype) != np.float64:
        advice += ", or compute in float64"
    return ValueError(
        f"the scores Q K^T * scale of query row {row} overflowed to inf/NaN in "
        f"{np.dtype(dtype)}: {advice}"
    )


def check_qkv(Q, K, V, scale) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Q, K, V as finite float arrays of matching sizes, and the scale (default 1/sqrt(d_k)).

    The checks every attention function shares; each failure names the argument and the
    sizes or values at fault. The scale comes back as a Python float, which keeps float32
    inputs in float32 (NEP 50).
    """
    Q = as_float_array(Q, "Q", min_ndim=2)
    K = as_float_array(K, "K", min_ndim=2)
    V = as_float_array(V, "V", min_ndim=2)
    for name, arr in (("Q", Q), ("K", K), ("V", V)):
        require_finite(arr, name)
    d_k, d_k_of_K = Q.shape[-1], K.shape[-1]
    if d_k != d_k_of_K:
        raise ValueError(
            f"Q has d_k={d_k} but K has d_k={d_k_of_K}; their last dimensions must match "
            "for Q @ K^T"
        )
    n_k = K.shape[-2]
    if V.shape[-2] != n_k:
        raise ValueError(
            f"K holds n_k={n_k} positions but V holds {V.shape[-2]}; each key needs exactly "
            "one value (K.shape[-2] must equal V.shape[-2])"
        )
    if n_k == 0:
        raise ValueError("K and V hold no positions (n_k=0); each query needs a key to attend to")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) dimensions of Q {Q.shape[:-2]}, K {K.shape[:-2]} and "
            f"V {V.shape[:-2]} do not broadcast (Q, K, V have shapes {Q.shape}, {K.shape}, "
            f"{V.shape})"
        ) from None
    if scale is None:
        scale = 1.0 / np.sqrt(d_k) if d_k > 0 else 1.0
    return Q, K, V, positive_scale(scale)


def _clip(value, limit: int = 60):
    """``repr(value)`` for a message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
