"""Lesson 09's widgets: the 72 attention maps of a real model, and the explorer on one of them.

* :class:`RealAttentionExplorer`: lesson 04's :class:`~helpers.explorer.widget.AttentionExplorer`
  (token buttons, your own sentence, the bar chart, the same SVG drawing) on the weights of
  all-MiniLM-L6-v2, with a layer selector beside the head selector. The encoder has no causal
  mask and the model was trained at temperature 1, so those two controls are hidden.
* :class:`AttentionGrid`: a layer x head grid of all 6 x 12 maps for the sentence; a click on a
  map opens it in the explorer below (and the explorer's controls move the grid's highlight).
* :func:`plot_attention_grid`: the same grid as a matplotlib figure (one image, fast).

The weights come from :func:`helpers.pretrained.load_minilm`'s forward pass (the course's
``scaled_dot_product_attention`` with a head axis); this module only draws them. A new sentence
costs one forward pass (~10-30 ms); picking a map or a token only draws.
"""

from __future__ import annotations

import base64
import io

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..front import GridPicker
from ..live import show as _show_live
from ..pretrained import MiniLM, load_minilm
from .colours import colour_index, palette_png
from .sources import MiniLMWeights
from .widget import AttentionExplorer

__all__ = ["AttentionGrid", "RealAttentionExplorer", "grid_mosaic", "plot_attention_grid"]

SELECTED = "#f03b20"  # the explorer's highlight colour


class RealAttentionExplorer(AttentionExplorer):
    """The attention explorer on all-MiniLM-L6-v2: one (layer, head) map at a time.

    Lesson 04's explorer with the model's weights (:class:`helpers.explorer.sources.
    MiniLMWeights`): the same drawing, a layer selector beside the head selector, no causal or
    temperature control (the source fixes both).

    Parameters
    ----------
    sentence : str
        Any English text; WordPiece tokens with ``[CLS]`` and ``[SEP]``, at most 64 shown
        (the model then runs on the first 63 and ``[SEP]``).
    layer, head : int
        Which map to show, counted from 0 as in ``attention[layer, head]`` (0..5, 0..11).
    query : int
        The selected query position.
    model : MiniLM, optional
        Defaults to :func:`helpers.pretrained.load_minilm`.
    """

    def __init__(
        self,
        sentence: str = "the cat sat on the mat",
        layer: int = 0,
        head: int = 0,
        query: int = 1,
        model: MiniLM | None = None,
    ):
        self.model = model if model is not None else load_minilm()
        source = MiniLMWeights(self.model)
        super().__init__(sentence, query=query, source=source, layer=layer, head=head)
        self.widget.add_class("real-attention-explorer")

    @property
    def trace(self):
        """The forward pass of the sentence shown (:class:`helpers.pretrained.Trace`)."""
        return self.source.trace

    def alt_text(self) -> str:
        """A one-sentence description of the current picture."""
        tokens, query = self.tokens, self.query
        return (
            f"Attention explorer on all-MiniLM-L6-v2: layer {self.layer}, head {self.head}, "
            f"over {len(tokens)} tokens; heatmap with rows = query, columns = key, and the "
            f"weights of query {tokens[query]!r} (position {query}) as bars"
            f"{self.drawing().top_key_text()}."
        )


# ---------------------------------------------------------------------- the grid of 72 maps


def _thumbnail_uri(weights: np.ndarray) -> str:
    """One map as a tiny palette PNG (one pixel per weight; the browser scales it up)."""
    png = palette_png(colour_index(weights))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


class AttentionGrid:
    """Every head of every layer for one sentence; pick a map to open it in the explorer.

    ``grid.widget`` holds the 6 x 12 grid (rows = layers, columns = heads; each cell the
    (n, n) map, rows = query, columns = key, same colour scale 0..1) above a
    :class:`RealAttentionExplorer` (``grid.explorer``). The grid is a keyboard grid
    (:class:`helpers.front.GridPicker`): a click, or the arrow keys and Enter, picks a
    map; the picked one is outlined at once, in the browser.
    """

    def __init__(
        self,
        sentence: str = "the cat sat on the mat",
        layer: int = 0,
        head: int = 0,
        query: int = 1,
        model: MiniLM | None = None,
        cell_px: int = 56,
    ):
        self.explorer = RealAttentionExplorer(sentence, layer, head, query, model)
        self.n_layers, self.n_heads = self.explorer.n_layers, self.explorer.n_heads
        # The grid (public: tests and benchmarks read it; a pick in the browser sets selected).
        self.picker = GridPicker(
            n_layers=self.n_layers,
            n_heads=self.n_heads,
            cell_px=cell_px,
            label=(
                f"attention maps: rows are layers 0 to {self.n_layers - 1}, columns are heads "
                f"0 to {self.n_heads - 1}; arrow keys move, Enter opens a map in the explorer"
            ),
            selected=[layer, head],
            maps_from=self.explorer.parts.preview,  # the explorer's maps, drawn on a pick
        )
        self.picker.observe(self._picked, names="selected")
        self._caption = widgets.HTML()
        self._selected = (-1, -1)
        self._sentence_key: tuple | None = None  # the tokens the thumbnails were made for
        self.explorer.on_change(self._sync)
        self._sync()
        self.widget = widgets.VBox([self._caption, self.picker, self.explorer.widget])
        self.widget.add_class("real-model-grid")

    def select(self, layer: int, head: int) -> None:
        """Open map (layer, head) in the explorer (what a pick in the grid does)."""
        self.explorer.select(layer, head)

    @property
    def selected(self) -> tuple[int, int]:
        return self._selected

    def show(self) -> None:
        """The live grid and explorer, with :func:`plot_attention_grid` as the static picture."""
        ex = self.explorer
        fig = plot_attention_grid(ex.trace.attention, ex.tokens, selected=self._selected)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        _show_live(self.widget, buffer.getvalue(), alt=self.alt_text())

    def alt_text(self) -> str:
        layer, head = self._selected
        return (
            f"A 6 x 12 grid of all-MiniLM-L6-v2's attention maps for {len(self.explorer.tokens)} "
            f"tokens (rows = layers 0-5, columns = heads 0-11); layer {layer}, head {head} is "
            "open in the explorer."
        )

    # ------------------------------------------------------------------ drawing

    def _picked(self, change) -> None:
        """A map was picked in the browser (which has outlined it already)."""
        layer, head = change["new"]
        if (layer, head) != (self.explorer.layer, self.explorer.head):
            self.explorer.select(layer, head, in_browser=True)

    def _sync(self) -> None:
        """Match the thumbnails to the explorer's sentence and the outline to its map.

        The 72 thumbnails and the caption are sent again only when the sentence changed; a pick
        sends ``selected`` (nothing, when the browser picked it: it has that value already).
        """
        ex = self.explorer
        sentence_key = tuple(ex.tokens)
        if self._sentence_key != sentence_key:
            self._sentence_key = sentence_key
            self.picker.thumbnails = [_thumbnail_uri(A) for _, A in _maps(ex.trace.attention)]
            self._caption.value = (
                f'<div style="font-family:sans-serif"><b>all {self.n_layers * self.n_heads} '
                f"attention maps</b> of all-MiniLM-L6-v2 for {len(ex.tokens)} tokens (rows = "
                "layers 0-5, columns = heads 0-11; in each map rows = query, columns = key, "
                "colour 0 to 1 as below). Click one, or Tab to the grid, move with the arrow "
                "keys and press Enter, to open it in the explorer (outlined).</div>"
            )
        selected = (ex.layer, ex.head)
        if selected != self._selected:
            self.picker.selected = list(selected)
            self._selected = selected


def _maps(attention: np.ndarray):
    for k in range(attention.shape[0]):
        for a in range(attention.shape[1]):
            yield (k, a), attention[k, a]


# ---------------------------------------------------------------------- the static figure


def grid_mosaic(attention: np.ndarray, gap: int = 1) -> np.ndarray:
    """The (layers, heads, n, n) maps tiled into one image with NaN gaps between them."""
    layers, heads, n, _ = attention.shape
    tile = n + gap
    mosaic = np.full((layers * tile - gap, heads * tile - gap), np.nan)
    for k in range(layers):
        for a in range(heads):
            mosaic[k * tile : k * tile + n, a * tile : a * tile + n] = attention[k, a]
    return mosaic


def plot_attention_grid(
    attention: np.ndarray,
    tokens: list[str],
    selected: tuple[int, int] | None = None,
    title: str = "",
    dpi: int = 90,
) -> Figure:
    """All (layers x heads) maps in one figure: rows = layers, columns = heads; inside each
    map rows = query, columns = key (the tokens in order), colour 0 to 1 (viridis)."""
    layers, heads, n, _ = attention.shape
    gap = max(1, n // 8)
    fig = Figure(figsize=(12, 6.6), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    image = ax.imshow(
        grid_mosaic(attention, gap), cmap="viridis", vmin=0, vmax=1, interpolation="nearest"
    )
    tile = n + gap
    ax.set_xticks([a * tile + (n - 1) / 2 for a in range(heads)], [f"{a}" for a in range(heads)])
    ax.set_yticks([k * tile + (n - 1) / 2 for k in range(layers)], [f"{k}" for k in range(layers)])
    ax.set_xlabel("head (each small map: rows = query, columns = key)")
    ax.set_ylabel("layer")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if selected is not None and selected[0] >= 0:
        from matplotlib.patches import Rectangle

        k, a = selected
        ax.add_patch(
            Rectangle(
                (a * tile - 0.9, k * tile - 0.9), n + 0.8, n + 0.8, fill=False, ec=SELECTED, lw=2
            )
        )
    ax.set_title(
        title
        or f"all-MiniLM-L6-v2: the {layers * heads} attention maps for "
        f"{' '.join(tokens) if len(tokens) <= 14 else f'{len(tokens)} tokens'}",
        fontsize=11,
    )
    fig.colorbar(image, ax=ax, shrink=0.7, label="attention weight")
    return fig
