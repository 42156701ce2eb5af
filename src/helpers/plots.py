"""Figures for the lessons: labelled heatmaps in a colour-blind-safe map (matplotlib only)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["plot_heatmap", "MASKED_GREY", "DIVERGING_CMAP"]

MASKED_GREY = "#bdbdbd"  # masked cells: visibly not part of the colour scale
# Signed matrices (Q, K, V, scores): ColorBrewer's RdBu, colour-blind safe, white at 0.
DIVERGING_CMAP = "RdBu_r"


def plot_heatmap(
    M,
    row_labels=None,
    col_labels=None,
    *,
    ax=None,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    cmap: str = "viridis",
    masked=None,
    annotate: bool | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    fmt: str = "{:.2f}",
    signed: bool = False,
):
    """Draw matrix ``M`` as a heatmap with labelled axes and a colour bar; returns the image.

    ``masked`` (boolean, same shape) marks cells to paint grey instead of coloured, e.g. the
    future keys under a causal mask. ``annotate`` writes each value in its cell (default: on for
    matrices of at most 10 x 10). ``signed=True`` is for matrices whose sign matters (Q, K, V,
    scores): a diverging map centred on 0, limits symmetric unless ``vmin``/``vmax`` are given.
    """
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError(f"plot_heatmap needs a 2-D matrix, got shape {M.shape}")
    if signed:
        cmap = DIVERGING_CMAP if cmap == "viridis" else cmap
        finite = np.abs(M[np.isfinite(M)])
        limit = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        vmin = -limit if vmin is None else vmin
        vmax = limit if vmax is None else vmax
    if ax is None:
        _, ax = plt.subplots(figsize=(0.55 * M.shape[1] + 2.2, 0.45 * M.shape[0] + 1.4))
    data = np.ma.masked_array(M, mask=np.zeros_like(M, bool) if masked is None else masked)
    colour_map = plt.get_cmap(cmap).with_extremes(bad=MASKED_GREY)
    image = ax.imshow(data, cmap=colour_map, vmin=vmin, vmax=vmax, aspect="auto")
    for axis_labels, set_ticks, set_labels, size in (
        (col_labels, ax.set_xticks, ax.set_xticklabels, M.shape[1]),
        (row_labels, ax.set_yticks, ax.set_yticklabels, M.shape[0]),
    ):
        if axis_labels is not None:
            if len(axis_labels) != size:
                raise ValueError(f"{len(axis_labels)} labels for an axis of length {size}")
            set_ticks(range(size))
            set_labels(axis_labels)
    if col_labels is not None:
        ax.tick_params(
            axis="x", labelrotation=45 if max(map(len, col_labels), default=0) > 3 else 0
        )
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if annotate is None:
        annotate = M.shape[0] <= 10 and M.shape[1] <= 10
    if annotate:
        lo, hi = image.get_clim()
        for (i, j), value in np.ndenumerate(M):
            if data.mask is not np.ma.nomask and data.mask[i, j]:
                continue
            position = (value - lo) / (hi - lo + 1e-12)
            # On a diverging map both ends are dark and the middle is light.
            bright = 0.25 < position < 0.75 if signed else position > 0.6
            ax.text(
                j,
                i,
                fmt.format(value),
                ha="center",
                va="center",
                fontsize=8,
                color="black" if bright else "white",
            )
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return image
