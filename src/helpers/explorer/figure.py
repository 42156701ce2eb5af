"""The attention explorer as a static matplotlib figure: what a notebook shows without a kernel
(GitHub, nbviewer, a saved notebook in JupyterLab) and the explorer's PNG fallback
(:meth:`helpers.explorer.widget.AttentionExplorer.static_png`). It draws the same state as the SVG
drawing (:class:`helpers.explorer.drawing.ExplorerDrawing`), with the same colours and marks.
"""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..attention import causal_mask
from ..plots import plot_heatmap
from .colours import HEX, HIGHLIGHT, MASKED_MARK_COLOUR, MASKED_MARKER, colour_index
from .drawing import ExplorerDrawing, short_label, word_label

__all__ = ["static_figure"]


def static_figure(drawing: ExplorerDrawing, dpi: int = 90) -> Figure:
    """The explorer's state drawn by matplotlib: the heatmap on the left (the selected query's
    row outlined), the query's bars on the right (masked keys marked on the zero line); what
    :meth:`helpers.explorer.widget.AttentionExplorer.static_png` saves."""
    state = drawing.state
    n = len(state.tokens)
    size = min(max(0.5 * n + 1.5, 3.5), 9.0)
    width, height = 2 * size + 1.6, size + 0.9
    fig = Figure(figsize=(width, height), dpi=dpi)  # fixed margins: a layout engine
    FigureCanvasAgg(fig)  # would draw the figure twice
    fig.subplots_adjust(
        left=1.0 / width, right=1 - 0.3 / width, bottom=0.8 / height, top=1 - 0.4 / height
    )
    heat_ax, bar_ax = fig.subplots(1, 2, width_ratios=[1.15, 1], gridspec_kw={"wspace": 0.3})
    if n == 0:
        for ax in (heat_ax, bar_ax):
            ax.set_axis_off()
        heat_ax.text(0.5, 0.5, "no tokens: type a sentence", ha="center", va="center")
    else:
        short = [short_label(t) for t in state.tokens]
        labels = short if n <= 32 else [t if i % 4 == 0 else "" for i, t in enumerate(short)]
        masked = ~causal_mask(n) if state.causal else None
        plot_heatmap(
            state.weights,
            labels,
            labels,
            ax=heat_ax,
            vmin=0,
            vmax=1,
            masked=masked,
            annotate=n <= 8,
            title=drawing.map_title(),
            xlabel="key",
            ylabel="query",
        )
        heat_ax.add_patch(
            Rectangle((-0.5, state.query - 0.5), n, 1, fill=False, ec=HIGHLIGHT, lw=2.5)
        )
        row = state.weights[state.query]
        colours = [HEX[i] for i in colour_index(row)]
        seen = state.query + 1 if state.causal else n  # keys 0..seen-1 take part
        bar_ax.bar(np.arange(seen), row[:seen], color=colours[:seen], edgecolor="#444444", lw=0.5)
        future = np.arange(seen, n)
        if len(future):
            # A masked key's weight is exactly 0: no bar, a marker on the zero line.
            bar_ax.plot(
                future,
                np.zeros(len(future)),
                linestyle="none",
                marker=MASKED_MARKER,
                markersize=9,
                markeredgewidth=1.8,
                color=MASKED_MARK_COLOUR,
                clip_on=False,
                zorder=3,
                label="masked (future) key: weight exactly 0",
            )
            bar_ax.legend(loc="upper right", fontsize=8)
        bar_ax.set_ylim(0, 1)
        bar_ax.set_xticks(np.arange(n), labels, rotation=45 if n > 6 else 0)
        bar_ax.set_xlabel("key")
        bar_ax.set_ylabel("attention weight")
        query = word_label(state.tokens[state.query])
        bar_ax.set_title(f"query {query!r} (position {state.query})")
        if n <= 12:
            for j, w in enumerate(row[:seen]):
                bar_ax.text(j, w + 0.02, f"{w:.2f}", ha="center", fontsize=8)
            for j in future:
                bar_ax.text(j, 0.035, "0", ha="center", fontsize=8, color=MASKED_MARK_COLOUR)
    return fig
