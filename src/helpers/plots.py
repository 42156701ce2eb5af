"""Figures for the lessons: labelled heatmaps in a colour-blind-safe map (matplotlib only),
shown with a text alternative (:func:`show_figure`)."""

from __future__ import annotations

import base64
import html

import matplotlib.pyplot as plt
import numpy as np
from IPython.core.pylabtools import print_figure
from IPython.display import display

__all__ = [
    "plot_heatmap",
    "show_figure",
    "image_bundle",
    "heatmap_alt",
    "MASKED_GREY",
    "DIVERGING_CMAP",
]

MASKED_GREY = "#bdbdbd"  # masked cells: visibly not part of the colour scale
# Signed matrices (Q, K, V, scores): ColorBrewer's RdBu, colour-blind safe, white at 0.
DIVERGING_CMAP = "RdBu_r"
# Cell numbers on viridis: black from this fraction of the range up, white below. Both have a
# contrast of at least 4.5:1 there (WCAG AA for small text): white 4.5:1 at 0.44, falling
# above; black 4.6:1 at 0.44, rising above (relative luminance of matplotlib's viridis).
BLACK_TEXT_FROM = 0.44


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
            bright = 0.25 < position < 0.75 if signed else position >= BLACK_TEXT_FROM
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


def image_bundle(png: bytes, alt: str) -> dict:
    """A display bundle that shows PNG bytes with ``alt`` as their text alternative.

    JupyterLab 4 ignores an ``alt`` in an ``image/png`` output's metadata (its image renderer
    sets only width and height), so the picture is also given as ``text/html``: an ``<img>``
    with an ``alt`` attribute, which JupyterLab, nbviewer and nbconvert's HTML render first.
    ``image/png`` stays for renderers without HTML; ``text/plain`` is the sentence itself.
    """
    if not alt or not alt.strip():
        raise ValueError("a figure needs a text alternative: say what it shows and its number")
    data = base64.b64encode(png).decode("ascii")
    return {
        "text/html": f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">',
        "image/png": data,
        "text/plain": alt,
    }


def show_figure(fig, alt: str) -> None:
    """Display matplotlib figure ``fig`` as a PNG with text alternative ``alt``, then close it.

    Use it where a lesson would call ``plt.show()``. ``alt`` says what the figure shows and the
    number that matters ("weights of 'cat' over 6 keys; highest on 'mat', 0.41"), computed from
    the data the figure draws. The PNG is rendered as the inline backend would (tight bounding
    box, the figure's dpi), and the figure is closed so it is not shown a second time.
    """
    png = print_figure(fig, "png", bbox_inches="tight")
    plt.close(fig)
    display(image_bundle(png, alt), raw=True, metadata={"image/png": {"alt": alt}})


def heatmap_alt(
    M,
    row_labels,
    col_labels,
    what: str,
    *,
    rows: str = "query",
    cols: str = "key",
    masked=None,
    fmt: str = "{:.2f}",
) -> str:
    """One sentence describing a heatmap of ``M``: what it is, its size, where its extremes are.

    ``what`` names the matrix ("attention weights A, head 0"); ``rows``/``cols`` name the axes.
    Masked cells (``masked`` True) are counted and left out of the extremes.
    """
    M = np.asarray(M, dtype=float)
    hidden = np.zeros(M.shape, bool) if masked is None else np.asarray(masked, bool)
    shown = np.where(hidden, np.nan, M)
    hi = np.unravel_index(np.nanargmax(shown), M.shape)
    lo = np.unravel_index(np.nanargmin(shown), M.shape)

    def cell(ij) -> str:
        i, j = ij
        return f"{fmt.format(M[i, j])} ({rows} {row_labels[i]!r}, {cols} {col_labels[j]!r})"

    sentence = (
        f"Heatmap of {what}: {M.shape[0]} rows ({rows}) by {M.shape[1]} columns ({cols}); "
        f"largest {cell(hi)}, smallest {cell(lo)}"
    )
    if hidden.any():
        sentence += f"; {int(hidden.sum())} cells masked (grey)"
    return sentence + "."
