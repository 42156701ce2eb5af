"""Input checks shared by the math modules: turn bad input into a ValueError that teaches."""

from __future__ import annotations

import numpy as np


def as_float_array(x, name: str, min_ndim: int = 0) -> np.ndarray:
    """``x`` as a float ndarray (float32 stays float32), or a ValueError naming ``name``."""
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions (..., n, d), got shape {arr.shape}"
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


def check_qkv(Q, K, V, scale: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Q, K, V as finite float arrays of matching sizes, and the scale (default 1/sqrt(d_k)).

    The checks every attention function shares; each failure is a ValueError naming the sizes
    or values at fault. The scale comes back as a Python float, which keeps float32 inputs in
    float32 (NEP 50).
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
    if scale is None:
        scale = 1.0 / np.sqrt(d_k) if d_k > 0 else 1.0
    elif not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite positive number, got {scale!r}")
    return Q, K, V, float(scale)
