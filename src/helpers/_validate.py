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
