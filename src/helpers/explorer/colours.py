"""The attention explorer's colours and marks, shared by its SVG drawing, its heatmap cells' PNG
and its static matplotlib figure (and lesson 09's grid thumbnails).

The colour scale is viridis, fixed at [0, 1] (weights are probabilities), so heads, masks and
temperatures can be compared by colour; masked cells are grey. ``tests/test_colour_vision.py``
checks the colours stay apart under colour-vision deficiency.
"""

from __future__ import annotations

import struct
import zlib

import matplotlib
import numpy as np

from ..plots import BLACK_TEXT_FROM, MASKED_GREY

__all__ = [
    "HEX",
    "HIGHLIGHT",
    "HIGHLIGHT_TEXT",
    "MASKED_INDEX",
    "MASKED_MARKER",
    "MASKED_MARK_COLOUR",
    "PALETTE",
    "TEXT_ON",
    "colour_index",
    "palette_png",
]

HIGHLIGHT = "#f03b20"  # the selected query's row and button: visible on every viridis colour
# The selected query's label, text on the page's white: HIGHLIGHT's red darkened to 5.6:1 (WCAG
# AA asks 4.5:1 of 12 px text; HIGHLIGHT itself is 3.9:1), so it still reads as that red.
HIGHLIGHT_TEXT = "#c62a12"
# A masked key in the bar chart: no bar (its weight is exactly 0), this marker on the zero line.
MASKED_MARKER = "x"
MASKED_MARK_COLOUR = "#555555"

# The colour scale is fixed at [0, 1] (weights are probabilities), so heads, masks and
# temperatures can be compared by colour. Palette index 0..254 = viridis, 255 = masked grey.
N_COLOURS = 255
MASKED_INDEX = 255
_VIRIDIS = (matplotlib.colormaps["viridis"](np.linspace(0, 1, N_COLOURS))[:, :3] * 255).round()
_GREY_RGB = [int(MASKED_GREY[i : i + 2], 16) for i in (1, 3, 5)]
PALETTE = np.vstack([_VIRIDIS, _GREY_RGB]).astype(np.uint8)  # (256, 3)
HEX = [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in PALETTE]

# Text on a cell: black from weight BLACK_TEXT_FROM (0.44) up, white below, as plot_heatmap's
# numbers: at least 4.5:1 on every colour (tests/test_colour_vision.py). A switch at 0.55 left
# white on the middle greens at 3.4:1.
TEXT_ON = [
    "#000000" if i / (N_COLOURS - 1) >= BLACK_TEXT_FROM else "#ffffff" for i in range(N_COLOURS)
]


def colour_index(weights: np.ndarray) -> np.ndarray:
    """Weights in [0, 1] -> palette indices 0..254 (uint8)."""
    return np.clip(np.rint(weights * (N_COLOURS - 1)), 0, N_COLOURS - 1).astype(np.uint8)


def palette_png(indices: np.ndarray) -> bytes:
    """A palette PNG (colour type 3, 8 bit) of a ``(height, width)`` uint8 index image.

    Written by hand (the PNG format is four chunks: header, palette, zlib data, end) because
    it is faster than Pillow here, and an update waits for it: ``benchmarks/bench_explorer.py``
    measured the heatmap's cells at 75 against 133 us (n = 6 tokens, 264 x 264 pixels) and 227
    against 455 us (n = 64, 384 x 384) on a quiet run; over six runs on the shared 2-core
    machine Pillow took 1.0-2.6 times as long at n = 6 and 0.9-2.0 times at n = 64. Same
    pixels, same zlib level 1: the compression is the same zlib call, and Pillow spends the
    difference on building the image object, the palette and its plugin machinery. Pillow is
    used where it is the simpler tool (:mod:`helpers.live` encodes RGBA frames).
    """
    height, width = indices.shape
    raw = np.zeros((height, width + 1), dtype=np.uint8)  # filter byte 0 ("None") per row
    raw[:, 1:] = indices

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)),
            chunk(b"PLTE", PALETTE.tobytes()),
            chunk(b"IDAT", zlib.compress(raw.tobytes(), 1)),
            chunk(b"IEND", b""),
        ]
    )
