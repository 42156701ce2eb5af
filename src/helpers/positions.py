"""The paper's sinusoidal positional encodings (Vaswani et al. 2017, section 3.5)."""

from __future__ import annotations

import numpy as np

from ._validate import whole_number

__all__ = ["sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(n_positions: int, d_model: int) -> np.ndarray:
    """The ``(n_positions, d_model)`` matrix of sinusoidal positional encodings.

    Interleaved, as in the paper::

        PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
        PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

    Column pair ``(2i, 2i+1)`` turns at one frequency; the frequencies fall geometrically from
    1 (columns 0-1, fastest) to about 1/10000 (the last pair, slowest).

    Raises
    ------
    ValueError
        If ``n_positions`` is not a whole number >= 0, or ``d_model`` is not a positive even
        whole number (``8.0`` is refused too: use ``//`` or ``int``).
    """
    n_positions = whole_number(n_positions, "n_positions")
    d_model = whole_number(d_model, "d_model", minimum=1)
    if d_model % 2:
        raise ValueError(
            f"d_model must be a positive even number (sin/cos come in pairs), got d_model={d_model}"
        )
    pos = np.arange(n_positions)[:, None]  # (n, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, d_model/2)
    angles = pos / np.power(10000.0, two_i / d_model)  # (n, d_model/2)
    pe = np.empty((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
