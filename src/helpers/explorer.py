"""The attention explorer: click a token, see where it looks.

The lesson text's interactive figure, for lessons 04-06. A heatmap of one head's attention
weights over a sentence (rows = query, columns = key), a row of token buttons that pick the
query whose distribution is drawn as a bar chart beside it, a head selector, a causal-mask
toggle, a temperature box and a text box for your own sentence::

    from helpers.explorer import AttentionExplorer
    ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=2, query=1)
    ex.show()

The weights come from the course's math, never from code of its own:
``build_Z`` -> ``seeded_projections`` -> per-head ``scaled_dot_product_attention`` (with
``causal_mask`` when the toggle is on), at scale ``1 / (sqrt(d_k) * temperature)``.

**Why it is fast.** Redrawing a matplotlib figure per click costs 55-136 ms. Here the two
pictures are SVG in ``ipywidgets.HTML``: the heatmap's cells are one small palette PNG built
in NumPy (a viridis look-up table, ``zlib``; see :func:`_palette_png` for why not Pillow), the
labels, numbers, highlight and bar chart are SVG text and rectangles. The per-head Q, K, V
are computed once per sentence, the weights once per (head, mask, temperature), the cell PNG
once per weight matrix. A click on a token never waits for the kernel: every query's row
outline, bars and message are already in the browser, one child of an ``ipywidgets.Stack``
each, and the token buttons' index is linked to the Stacks in the browser (``jslink``).
``benchmarks/bench_explorer.py`` measures the kernel's side against the matplotlib way; the
browser tests time a click to new pixels.

**Readable without a kernel.** :meth:`AttentionExplorer.show` puts a matplotlib PNG of the
current state in the same output as the widget (see :func:`helpers.live.show`).
"""

from __future__ import annotations

import asyncio
import base64
import html
import io
import math
import numbers
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import ipywidgets as widgets
import matplotlib
import numpy as np
from ipywidgets.widgets.widget_string import HTMLStyle
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ._validate import ArgumentTypeError, whole_number
from .attention import causal_mask
from .embeddings import D_MODEL, RUNNING_SENTENCE
from .explorer_front import TableView, TokenRow
from .explorer_weights import MAX_TOKENS, SeededWeights
from .live import show as _show_live
from .plots import MASKED_GREY, heatmap_alt, plot_heatmap

__all__ = ["AttentionExplorer", "ExplorerParts", "MAX_TOKENS", "TEMPERATURE_RANGE"]

# Up to this many tokens the heatmap's cells are SVG squares, drawn with the rest of the SVG;
# above it, one palette PNG. In Chromium a click on lesson 04's explorer took 28 ms to new
# pixels with the PNG (its decode costs a frame) against 12 ms for a do-nothing widget.
RECT_TOKENS = 24
TEMPERATURE_RANGE = (0.1, 10.0)  # the temperature box's limits
HIGHLIGHT = "#f03b20"  # the selected query's row and button: visible on every viridis colour
# A masked key in the bar chart: no bar (its weight is exactly 0), this marker on the zero line.
MASKED_MARKER = "x"
MASKED_MARK_COLOUR = "#555555"

# The colour scale is fixed at [0, 1] (weights are probabilities), so heads, masks and
# temperatures can be compared by colour. Palette index 0..254 = viridis, 255 = masked grey.
_N_COLOURS = 255
_MASKED_INDEX = 255
_VIRIDIS = (matplotlib.colormaps["viridis"](np.linspace(0, 1, _N_COLOURS))[:, :3] * 255).round()
_GREY_RGB = [int(MASKED_GREY[i : i + 2], 16) for i in (1, 3, 5)]
_PALETTE = np.vstack([_VIRIDIS, _GREY_RGB]).astype(np.uint8)  # (256, 3)
_HEX = [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in _PALETTE]
# Text on a cell: black on the bright end of viridis, white on the dark end.
_TEXT_ON = ["#000000" if i > 0.55 * _N_COLOURS else "#ffffff" for i in range(_N_COLOURS)]
_FONT = "font-family:sans-serif"
LABEL_CHARS = 12  # longer tokens are shortened to 11 characters and "…" on the axes
# Longer tokens are shortened to 39 characters and "…" everywhere text shows them (buttons,
# hover titles, figure titles, messages, alt text); the math keeps the whole word. A pasted
# 100,000-character word would otherwise go into every one of them (static_png took 10-19 s).
WORD_CHARS = 40


def _short(token: str, limit: int = LABEL_CHARS) -> str:
    """``token`` cut to ``limit`` characters, the last one "…", if it is longer."""
    return token if len(token) <= limit else token[: limit - 1] + "…"


def _word(token: str) -> str:
    """``token`` as text shows it: at most ``WORD_CHARS`` characters."""
    return _short(token, WORD_CHARS)


def _axis_label(token: str) -> str:
    """A token as an SVG axis label: escaped and shortened (the word, up to ``WORD_CHARS``
    characters, in a ``<title>``, which the browser shows on hover)."""
    if len(token) <= LABEL_CHARS:
        return _esc(token)
    return f"<title>{_esc(_word(token))}</title>{_esc(_short(token))}"


def _causal_look(on: bool) -> dict[str, str]:
    """The causal toggle's label, icon and tooltip for its state."""
    if on:
        return {
            "description": "causal mask: on",
            "icon": "eye-slash",
            "tooltip": "on: each token attends to itself and earlier tokens only (click: off)",
        }
    return {
        "description": "causal mask: off",
        "icon": "eye",
        "tooltip": "off: each token attends to every token, future ones too (click: on)",
    }


def _colour_index(weights: np.ndarray) -> np.ndarray:
    """Weights in [0, 1] -> palette indices 0..254 (uint8)."""
    return np.clip(np.rint(weights * (_N_COLOURS - 1)), 0, _N_COLOURS - 1).astype(np.uint8)


def _palette_png(indices: np.ndarray) -> bytes:
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
            chunk(b"PLTE", _PALETTE.tobytes()),
            chunk(b"IDAT", zlib.compress(raw.tobytes(), 1)),
            chunk(b"IEND", b""),
        ]
    )


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


# What a weight source has (helpers.explorer_weights says what each means).
_SOURCE_NEEDS = (
    "n_layers", "n_heads", "d_k", "fixed_causal", "fixed_temperature", "load", "weights"
)  # fmt: skip


def _index(value, size: int, what: str) -> int:
    """``value`` as a layer or head number in 0..size-1, or a clear error."""
    value = whole_number(value, what)
    if not 0 <= value < size:
        raise ValueError(f"{what} {value} does not exist: this explorer has {what}s 0..{size - 1}")
    return int(value)


@dataclass(frozen=True)
class ExplorerParts:
    """An explorer's widgets (:attr:`AttentionExplorer.parts`). Controls: ``text`` (the
    sentence box), ``tokens`` (the token row and message, a
    :class:`~helpers.explorer_front.TokenRow`), ``layer`` (None with one layer), ``head``,
    ``causal``, ``temperature``, ``table`` (the table view, a
    :class:`~helpers.explorer_front.TableView`) and ``controls_box`` (the row of layer, head,
    causal and temperature). Pictures: ``heatmap`` (a grid of three stacked layers:
    ``heatmap_map``, ``heatmap_axes`` and ``query_layers``, a Stack with one child per query),
    ``bars`` (``bars_axes`` under ``bar_values``, a Stack). ``links``: the browser-side links
    from the token row's index to the Stacks and the table."""

    text: widgets.Text
    tokens: TokenRow
    layer: widgets.ToggleButtons | None
    head: widgets.ToggleButtons
    causal: widgets.ToggleButton
    temperature: widgets.BoundedFloatText
    table: TableView
    controls_box: widgets.HBox
    heatmap: widgets.GridBox
    heatmap_map: widgets.HTML
    heatmap_axes: widgets.HTML
    query_layers: widgets.Stack
    bars: widgets.GridBox
    bars_axes: widgets.HTML
    bar_values: widgets.Stack
    links: tuple

    @property
    def stacks(self) -> tuple[widgets.Stack, widgets.Stack]:
        """The Stacks that switch with the query in the browser."""
        return (self.query_layers, self.bar_values)


class AttentionExplorer:
    """Interactive heatmap + bar chart of one sentence's self-attention weights.

    Parameters
    ----------
    sentence : str
        The text to tokenize (``helpers.tokenize``); words outside the toy vocabulary get
        seeded embeddings too. Empty text shows a message; past ``MAX_TOKENS`` (64) tokens the
        sentence is truncated and the message says so.
    n_heads : int
        h, the number of heads; must divide ``d_model`` (d_k = d_model / h).
    causal : bool
        Start with the causal mask on (query i may attend to keys 0..i only).
    temperature : float
        Divides the scores: scale = 1 / (sqrt(d_k) * temperature). Within
        ``TEMPERATURE_RANGE`` (0.1 to 10); 1 is the paper's scaled dot product.
    seed : int
        Seed of the token embeddings and of ``W_Q, W_K, W_V`` (seeded, not trained).
    query : int
        The selected query position (clipped to the sentence length).
    d_model : int
        Width of Z; ``helpers.D_MODEL`` (8) by default.

    Attributes
    ----------
    widget : ipywidgets.VBox
        The explorer (CSS class ``attention-explorer``).
    tokens : list of str
        The tokens shown (at most 64).
    weights : ndarray, shape (n, n)
        The weight matrix shown: ``scaled_dot_product_attention(Q_h, K_h, V_h, mask, scale)[1]``.
    """

    def __init__(
        self,
        sentence: str = RUNNING_SENTENCE,
        n_heads: int = 2,
        causal: bool = False,
        temperature: float = 1.0,
        seed: int = 0,
        query: int = 1,
        d_model: int = D_MODEL,
        *,
        source=None,
        layer: int = 0,
        head: int = 0,
    ):
        if source is None:  # the course's own math on seeded projections
            n_heads = whole_number(n_heads, "n_heads", minimum=1)
            d_model = whole_number(d_model, "d_model", minimum=1)
            seed = whole_number(seed, "seed")
            if d_model % n_heads:
                raise ValueError(
                    f"d_model={d_model} must be a positive multiple of n_heads={n_heads} "
                    "(each head gets d_k = d_model / h columns)"
                )
            source = SeededWeights(int(d_model), int(n_heads), int(seed))
        if not isinstance(causal, (bool, np.bool_)):
            raise ArgumentTypeError(f"causal must be True or False, got {causal!r}")
        missing = [name for name in _SOURCE_NEEDS if not hasattr(source, name)]
        if missing:
            raise ArgumentTypeError(
                f"source must be a weight source (see helpers.explorer_weights): "
                f"{type(source).__name__} has no {', '.join(missing)}"
            )
        self.source = source
        self.n_layers, self.n_heads, self.d_k = source.n_layers, source.n_heads, source.d_k
        self.d_model, self.seed = self.n_heads * self.d_k, getattr(source, "seed", None)
        self._layer = _index(layer, self.n_layers, "layer")
        self._head = _index(head, self.n_heads, "head")
        fixed = source.fixed_causal
        self._causal = bool(causal) if fixed is None else fixed
        self._temperature = self._valid_temperature(
            temperature if source.fixed_temperature is None else source.fixed_temperature
        )
        self._listeners: list = []
        self._query = 0
        self._holding = False  # True while the code (not the user) moves a control
        self._in_browser_event = False  # True while a control moved in the browser is handled
        self._every_query_due = False  # the other queries' pictures are waiting for a paint
        self._build_controls()
        sentence = self._load_sentence(sentence)
        self._move(self._text_control, "value", sentence)
        self._set_query(query, clip=True)
        self._redraw()

    # ------------------------------------------------------------------ public API

    @property
    def tokens(self) -> list[str]:
        """The tokens shown, at most ``MAX_TOKENS``."""
        return list(self._tokens)

    @property
    def weights(self) -> np.ndarray:
        """The ``(n, n)`` weight matrix shown (rows = query, columns = key); a copy."""
        return self._weights.copy()

    @property
    def output(self) -> np.ndarray:
        """The head's output ``A V_h``, shape ``(n, d_k)``."""
        return self._output.copy()

    @property
    def query(self) -> int:
        return self._query

    @property
    def head(self) -> int:
        return self._head

    @property
    def layer(self) -> int:
        """The layer shown (always 0 for a one-layer source such as the seeded model's)."""
        return self._layer

    @property
    def causal(self) -> bool:
        return self._causal

    @property
    def temperature(self) -> float:
        return self._temperature

    @property
    def parts(self) -> ExplorerParts:
        """The explorer's widgets by name (its controls and its pictures' layers): what tests,
        benchmarks and a new view (docs/CONTRIBUTING.md) may read; ``widget`` holds them."""
        return ExplorerParts(
            text=self._text_control,
            tokens=self._token_control,
            layer=self._layer_control,
            head=self._head_control,
            causal=self._causal_control,
            temperature=self._temperature_control,
            table=self._table_control,
            controls_box=self._controls_box,
            heatmap=self._heatmap,
            heatmap_map=self._heatmap_map,
            heatmap_axes=self._heatmap_axes,
            query_layers=self._query_layers,
            bars=self._bars,
            bars_axes=self._bars_axes,
            bar_values=self._bar_values,
            links=tuple(self._links),
        )

    @property
    def scale(self) -> float:
        """The factor on the scores: ``1 / (sqrt(d_k) * temperature)``."""
        return 1.0 / (math.sqrt(self.d_k) * self._temperature)

    @property
    def message(self) -> str:
        """The text of the message line (plain text)."""
        parts = [self._note(), self._describe(self._query) if self._tokens else ""]
        return " ".join(part for part in parts if part)

    def select_query(self, query: int) -> None:
        """Show the distribution of query position ``query`` (what a click on its token does:
        there the browser switches the pictures itself, see ``_build_controls``)."""
        self._set_query(query)
        self._show_query()

    def set_head(self, head: int) -> None:
        """Show head ``head`` (0 .. n_heads - 1; h = n_heads is the number of heads)."""
        self._head = _index(head, self.n_heads, "head")
        self._move(self._head_control, "value", self._head)
        self._redraw()
        self._notify()

    def set_layer(self, layer: int) -> None:
        """Show layer ``layer`` (0 .. n_layers - 1), same head."""
        self._layer = _index(layer, self.n_layers, "layer")
        if self._layer_control is not None:
            self._move(self._layer_control, "value", self._layer)
        self._redraw()
        self._notify()

    def select(self, layer: int, head: int) -> None:
        """Show map (layer, head) with one redraw (what a pick in lesson 09's grid does).

        After a pick in the browser, the pictures are sent at once and the layer and head
        buttons (and the grid's outline) a moment later (:func:`_after_paint`), so the browser
        draws the new map first.
        """
        self._layer = _index(layer, self.n_layers, "layer")
        self._head = _index(head, self.n_heads, "head")
        self._redraw()
        if self._in_browser_event:
            _after_paint(self._show_selection)
        else:
            self._show_selection()

    def on_change(self, callback) -> None:
        """Call ``callback()`` after the sentence, layer or head changed."""
        self._listeners.append(callback)

    def set_causal(self, causal: bool) -> None:
        """Mask the future (True) or let every query see every key (False)."""
        if not isinstance(causal, (bool, np.bool_)):
            raise ArgumentTypeError(f"causal must be True or False, got {causal!r}"[:200])
        if self.source.fixed_causal is not None and bool(causal) != self.source.fixed_causal:
            raise ValueError(self.source.causal_error)
        self._causal = bool(causal)
        with self._causal_control.hold_sync():  # value, label and icon: one message
            self._move(self._causal_control, "value", self._causal)
            for name, value in _causal_look(self._causal).items():
                setattr(self._causal_control, name, value)
        self._redraw()

    def set_temperature(self, temperature: float) -> None:
        """Divide the scores by ``temperature`` too: below 1 sharper, above 1 flatter."""
        fixed = self.source.fixed_temperature
        if fixed is not None and float(temperature) != fixed:
            raise ValueError(self.source.temperature_error)
        self._temperature = self._valid_temperature(temperature)
        self._move(self._temperature_control, "value", self._temperature)
        self._redraw()

    def set_sentence(self, sentence: str) -> None:
        """Tokenize ``sentence`` and show its attention (what typing in the box does)."""
        query = self._query
        sentence = self._load_sentence(sentence)  # raises before changing anything, or loads all
        self._move(self._text_control, "value", sentence)  # as loaded (valid Unicode)
        self._set_query(query, clip=True)
        self._redraw()
        self._notify()

    def show(self) -> None:
        """Display the live widget, with a static PNG of the current state as its fallback."""
        _show_live(self.widget, self.static_png(), alt=self.alt_text())

    # ------------------------------------------------------------------ the static figure

    def alt_text(self) -> str:
        """A one-sentence description of the current picture (the output's text/plain)."""
        if not self._tokens:
            return "Attention explorer: no tokens to show (the sentence is empty)."
        mask = "with the causal mask" if self._causal else "without a mask"
        return (
            f"Attention explorer: head {self._head} of {self.n_heads}, {mask}, temperature "
            f"{self._temperature:g}, over {len(self._tokens)} tokens; heatmap with rows = query, "
            f"columns = key, and the weights of query {_word(self._tokens[self._query])!r} "
            f"(position {self._query}) as bars{self._top_key_text()}."
        )

    def _top_key_text(self) -> str:
        """'; its largest weight, 0.50, is on key 'mat' (position 5)': the number that matters."""
        if not len(self._weights):
            return ""
        row = self._weights[self._query]
        key = int(np.argmax(row))
        return (
            f"; its largest weight, {row[key]:.2f}, is on key {_word(self._tokens[key])!r} "
            f"(position {key})"
        )

    def static_png(self, dpi: int = 90) -> bytes:
        """The current state drawn by matplotlib (labels, colour bar, bars), as PNG bytes."""
        buffer = io.BytesIO()
        self.static_figure(dpi).savefig(buffer, format="png")
        return buffer.getvalue()

    def static_figure(self, dpi: int = 90) -> Figure:
        """The figure :meth:`static_png` saves: heatmap on the left, the query's bars right."""
        n = len(self._tokens)
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
            short = [_short(t) for t in self._tokens]
            labels = short if n <= 32 else [t if i % 4 == 0 else "" for i, t in enumerate(short)]
            masked = ~causal_mask(n) if self._causal else None
            plot_heatmap(
                self._weights,
                labels,
                labels,
                ax=heat_ax,
                vmin=0,
                vmax=1,
                masked=masked,
                annotate=n <= 8,
                title=self._map_title(),
                xlabel="key",
                ylabel="query",
            )
            heat_ax.add_patch(
                Rectangle((-0.5, self._query - 0.5), n, 1, fill=False, ec=HIGHLIGHT, lw=2.5)
            )
            row = self._weights[self._query]
            colours = [_HEX[i] for i in _colour_index(row)]
            seen = self._query + 1 if self._causal else n  # keys 0..seen-1 take part
            bar_ax.bar(
                np.arange(seen), row[:seen], color=colours[:seen], edgecolor="#444444", lw=0.5
            )
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
            bar_ax.set_title(f"query {_word(self._tokens[self._query])!r} (position {self._query})")
            if n <= 12:
                for j, w in enumerate(row[:seen]):
                    bar_ax.text(j, w + 0.02, f"{w:.2f}", ha="center", fontsize=8)
                for j in future:
                    bar_ax.text(j, 0.035, "0", ha="center", fontsize=8, color=MASKED_MARK_COLOUR)
        return fig

    # ------------------------------------------------------------------ state

    @staticmethod
    def _valid_temperature(t) -> float:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Real):
            raise ArgumentTypeError(
                f"temperature must be a number between {TEMPERATURE_RANGE[0]} and "
                f"{TEMPERATURE_RANGE[1]}, got {t!r} of type {type(t).__name__}"[:300]
            )
        t = float(t)
        low, high = TEMPERATURE_RANGE
        if math.isfinite(t) and low * (1 - 1e-9) <= t <= high * (1 + 1e-9):
            t = min(max(t, low), high)  # a limit may arrive as 0.09999999999999999
        if not math.isfinite(t) or not low <= t <= high:
            raise ValueError(f"temperature must be between {low} and {high}, got {t!r}")
        return t

    def _load_sentence(self, text: str) -> str:
        """Load the text into the weight source (its per-sentence work, once), then keep its
        tokens. The source raises before changing anything, so an error leaves the previous
        sentence in place, whole. Returns the text as loaded (for the sentence box)."""
        loaded = self.source.load(text)
        tokens = loaded.tokens
        self._tokens = tokens
        self._text_note = loaded.note
        self._labels = [_axis_label(t) for t in tokens]  # escaped, shortened
        self._label_len = min(max((len(t) for t in tokens), default=0), LABEL_CHARS)
        self._mask = causal_mask(len(tokens))
        self._weights_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._png_cache: dict[tuple, str] = {}
        self._set_token_options()
        return loaded.text

    @property
    def _map_key(self) -> tuple:
        """Which map is shown: (layer, head, causal, temperature)."""
        return (self._layer, self._head, self._causal, self._temperature)

    def _compute_weights(self) -> None:
        if not self._tokens:
            self._output, self._weights = np.zeros((0, self.d_k)), np.zeros((0, 0))
            return
        key = self._map_key
        if key not in self._weights_cache:
            self._weights_cache[key] = self.source.weights(*key)
        self._output, self._weights = self._weights_cache[key]

    def _set_query(self, i, clip: bool = False) -> None:
        n = len(self._tokens)
        i = whole_number(i, "query")  # a token position
        if clip:
            i = min(max(int(i), 0), max(n - 1, 0))
        elif not 0 <= i < n:
            raise ValueError(
                f"query {i} is not a position of this sentence: it has {n} tokens (0..{n - 1})"
            )
        self._query = int(i)

    # ------------------------------------------------------------------ controls

    @contextmanager
    def _holding_events(self) -> Iterator[None]:
        self._holding, before = True, self._holding
        try:
            yield
        finally:
            self._holding = before

    def _move(self, control: widgets.Widget, name: str, value) -> None:
        """Set a control from code without it calling back into the explorer."""
        with self._holding_events():
            setattr(control, name, value)

    def _build_controls(self) -> None:
        self._text_control = widgets.Text(
            description="sentence",
            placeholder="type a sentence and press Enter",
            continuous_update=False,
            layout=widgets.Layout(width="420px"),
        )
        self._text_control.add_class("explorer-text")
        # A token pick never waits for the kernel. Each query's pictures (its row's outline,
        # its bars) are one child of a Stack, and the token row's index is linked to the
        # Stacks' selected_index in the browser (jslink), so a pick shows the child that is
        # already there; the token row holds every query's message and switches it itself.
        # The kernel only hears which query is shown. The token row is a small browser module
        # (helpers.explorer_front): a radio group with arrow keys, and the message as a live
        # region that screen readers announce.
        self._token_control = TokenRow()
        self._query_layers = widgets.Stack()
        self._bar_values = widgets.Stack()
        self._stacks = (self._query_layers, self._bar_values)
        # The weights as a table, for anyone who cannot see the colours; its selected row
        # follows the token row in the browser too.
        self._table_control = TableView()
        self._table_control.layout.width = "100%"
        self._links = [
            widgets.jslink((self._token_control, "index"), (target, name))
            for target, name in [
                *((stack, "selected_index") for stack in self._stacks),
                (self._table_control, "index"),
            ]
        ]
        # Each Stack's children come from a pool that only grows (to the longest sentence), so
        # a new sentence reuses them; they share one layout and one style (fewer widgets).
        self._pools: list[list[widgets.HTML]] = [[] for _ in self._stacks]
        self._child_look = {"layout": widgets.Layout(), "style": HTMLStyle()}
        # Many heads, or layers too: short labels ("head 10" does not fit 12 in a row).
        short = self.n_layers > 1 or self.n_heads > 4
        self._head_control = widgets.ToggleButtons(
            options=[(str(a) if short else f"head {a}", a) for a in range(self.n_heads)],
            value=self._head,
            description="head" if short else "",
            tooltips=[
                f"head {a} of h = {self.n_heads}: its own W_Q, W_K, W_V"
                for a in range(self.n_heads)
            ],
            style={"button_width": "40px" if short else "72px", "description_width": "40px"}
            if short
            else {"button_width": "72px"},
        )
        self._head_control.add_class("explorer-head")
        self._layer_control = None
        if self.n_layers > 1:
            self._layer_control = widgets.ToggleButtons(
                options=[(str(k), k) for k in range(self.n_layers)],
                value=self._layer,
                description="layer",
                tooltips=[f"layer {k} of 0..{self.n_layers - 1}" for k in range(self.n_layers)],
                style={"button_width": "40px", "description_width": "40px"},
            )
            self._layer_control.add_class("explorer-layer")
            self._layer_control.observe(self._from_browser(self.set_layer), names="value")
        self._causal_control = widgets.ToggleButton(
            value=self._causal, layout=widgets.Layout(width="156px"), **_causal_look(self._causal)
        )
        self._causal_control.add_class("explorer-causal")
        low, high = TEMPERATURE_RANGE
        # A number box, not a slider: ipywidgets' slider handle has no accessible name (axe's
        # aria-input-field-name), while this <input> is named by its description's <label>.
        # Its arrow keys and spin buttons step by 0.1; any value in the range may be typed.
        self._temperature_control = widgets.BoundedFloatText(
            value=self._temperature,
            min=low,
            max=high,
            step=0.1,
            description="temperature",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="190px"),
            continuous_update=True,
        )
        self._temperature_control.add_class("explorer-temperature")
        # The heatmap is three pictures of one size stacked in one grid cell, each sent to the
        # browser only when it changed: the map (cells and numbers: head, mask, temperature),
        # the axes (labels, colour bar) and, on top, the selected query's label and row outline
        # (the Stack). In Chromium an update's time to new pixels grows with the bytes it sends
        # and the SVG nodes the page must lay out again: a new head sends the map, not the rest.
        self._heatmap_map = widgets.HTML()
        self._heatmap_axes = widgets.HTML()
        layers = (self._heatmap_map, self._heatmap_axes, self._query_layers)
        for layer, name in zip(layers, ("map", "axes", "query")):
            layer.add_class(f"explorer-heatmap-{name}")
            layer.layout.grid_area = "heatmap"
        # The top layer only as tall as the rows (not stretched over the cell), so that the keys'
        # labels below it, in the axes layer, still show their hover titles.
        self._query_layers.layout.align_self = "flex-start"
        self._heatmap = widgets.GridBox(
            layers, layout=widgets.Layout(grid_template_areas='"heatmap"')
        )
        self._heatmap.add_class("explorer-heatmap")
        # The bar chart likewise: its axes (the sentence) under its bars (every click).
        self._bars_axes = widgets.HTML()
        self._bars_axes.add_class("explorer-bars-axes")
        self._bar_values.add_class("explorer-bars-values")
        self._bar_values.layout.align_self = "flex-start"  # down to the zero line only
        for layer in (self._bars_axes, self._bar_values):
            layer.layout.grid_area = "bars"
        self._bars = widgets.GridBox(
            (self._bars_axes, self._bar_values),
            layout=widgets.Layout(grid_template_areas='"bars"'),
        )
        self._bars.add_class("explorer-bars")

        self._token_control.observe(self._from_browser(self._clicked), names="index")
        self._table_control.observe(self._table_toggled, names="pressed")
        self._head_control.observe(self._from_browser(self.set_head), names="value")
        self._causal_control.observe(self._from_browser(self.set_causal), names="value")
        self._temperature_control.observe(self._from_browser(self.set_temperature), names="value")
        self._text_control.observe(self._from_browser(self.set_sentence), names="value")

        # What the source fixes (an encoder's mask, a trained model's scale) is not a control.
        if self.source.fixed_causal is not None:
            self._causal_control.layout.display = "none"
        if self.source.fixed_temperature is not None:
            self._temperature_control.layout.display = "none"
        self._controls_box = widgets.HBox(
            [
                *([self._layer_control] if self._layer_control is not None else []),
                self._head_control,
                self._causal_control,
                self._temperature_control,
            ],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.widget = widgets.VBox(
            [
                self._text_control,
                self._token_control,
                self._controls_box,
                self._table_control,
                widgets.HBox(
                    [self._heatmap, self._bars],
                    layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"),
                ),
            ]
        )
        self.widget.add_class("attention-explorer")

    def _set_token_options(self) -> None:
        """One token button per token (the sentence changed)."""
        with self._holding_events():
            self._token_control.tokens = [_word(token) for token in self._tokens]

    def _table_toggled(self, change) -> None:
        """The table view was opened (draw the table) or closed (send nothing more)."""
        self._table_control.table = self.table_html() if change["new"] else ""

    def _clicked(self, index) -> None:
        """A token button was clicked in the browser, which already shows that query."""
        if index is not None:
            self._set_query(index)
            self._show_query()

    def _picked_in_browser(self, layer: int, head: int) -> None:
        """A map was picked in lesson 09's grid (in the browser)."""
        with self._browser_event():
            self.select(layer, head)

    def _show_selection(self) -> None:
        """Move the layer and head buttons to the map shown, and tell the listeners."""
        if self._layer_control is not None:
            self._move(self._layer_control, "value", self._layer)
        self._move(self._head_control, "value", self._head)
        self._notify()

    def _notify(self) -> None:
        for callback in self._listeners:
            callback()

    def _from_browser(self, setter):
        """An observer that calls ``setter(new value)`` when a control moved in the browser
        (not when the code moved it, see :meth:`_move`)."""

        def on_change(change):
            if not self._holding:
                with self._browser_event():
                    setter(change["new"])

        return on_change

    @contextmanager
    def _browser_event(self) -> Iterator[None]:
        self._in_browser_event, before = True, self._in_browser_event
        try:
            yield
        finally:
            self._in_browser_event = before

    # ------------------------------------------------------------------ drawing

    def _redraw(self) -> None:
        """Draw the state: the map, the axes, and each query's pictures.

        Each assignment is one message to the browser, handled in order, and none at all when
        the value did not change. After a control moved in the browser, the query on screen is
        drawn at once and the others a moment later (:func:`_after_paint`), so that the browser
        paints the new pictures first. Called from code, everything is drawn at once, so that
        a notebook saved after the cell holds every picture.
        """
        self._compute_weights()
        geometry, bars = self._heatmap_geometry(), self._bars_geometry()
        self._heatmap_map.value = self._map_svg(geometry)
        self._heatmap_axes.value = self._axes_svg(geometry)
        self._bars_axes.value = self._bars_axes_svg(bars)
        n = len(self._tokens)
        for stack, pool in zip(self._stacks, self._pools):
            pool.extend(widgets.HTML(**self._child_look) for _ in range(n - len(pool)))
            stack.children = tuple(pool[:n])  # drawn below, before they are shown
        if not self._in_browser_event:
            self._draw_every_query()
        elif n:
            self._draw_query(self._query, geometry, bars)
            if not self._every_query_due:
                self._every_query_due = True
                _after_paint(self._draw_every_query)
        with self._token_control.hold_sync():  # the message line: one message to the browser
            self._token_control.note = self._note()
            self._token_control.messages = [self._describe(i) for i in range(n)]
        if self._table_control.pressed:
            self._table_control.table = self.table_html()
        self._show_query()

    def _draw_query(self, i: int, geometry: dict | None, bars: dict | None) -> None:
        """Query ``i``'s row outline and bars, into its Stacks' children."""
        self._query_layers.children[i].value = self._query_svg(geometry, i)
        self._bar_values.children[i].value = self._bars_values_svg(bars, i)

    def _draw_every_query(self) -> None:
        """Every query's pictures, as the state is now (the one on screen is unchanged, so not
        sent again)."""
        self._every_query_due = False
        geometry, bars = self._heatmap_geometry(), self._bars_geometry()
        for i in range(len(self._tokens)):
            self._draw_query(i, geometry, bars)

    def _show_query(self) -> None:
        """Select the query in the token row, the Stacks and the table (in the browser, a pick
        has already done so: then nothing is sent)."""
        index = self._query if self._tokens else None
        self._move(self._token_control, "index", index)
        for stack in self._stacks:
            stack.selected_index = index
        self._table_control.index = index

    def _note(self) -> str:
        """What the message says of the sentence as a whole ("" when nothing)."""
        if not self._tokens:
            return "The sentence is empty: type one (for example 'the cat sat on the mat')."
        return self._text_note

    def _describe(self, query: int) -> str:
        """What the message says of query ``query``: where it looks, its largest weight, and
        which map this is (so the message changes with the head, the mask, the temperature)."""
        n = len(self._tokens)
        token = _word(self._tokens[query])
        row = self._weights[query]
        top = int(np.argmax(row))
        if self._causal:
            where = (
                "only to itself (it is the first token)"
                if query == 0
                else f"across itself and the {query} token{'s' * (query > 1)} before it"
            )
        else:
            where = f"across all {n} token{'s' * (n > 1)}"
        return (
            f'"{token}" (position {query}) distributes its attention {where}, most to '
            f'"{_word(self._tokens[top])}" ({row[top]:.2f}); {self._view_words()}. Brighter '
            "cell = more attention. Click a token, or use the arrow keys, to switch."
        )

    def _view_words(self) -> str:
        """Which map is shown, in words: "head 0, no mask, temperature 1", "layer 2, head 5",
        "layer 1, head 0, causal mask" (what the source fixes is not said, unless a mask)."""
        parts = [f"layer {self._layer}"] if self.n_layers > 1 else []
        parts.append(f"head {self._head}")
        if self.source.fixed_causal is None:
            parts.append("causal mask" if self._causal else "no mask")
        elif self._causal:
            parts.append("causal mask")
        if self.source.fixed_temperature is None:
            parts.append(f"temperature {self._temperature:g}")
        return ", ".join(parts)

    def table_html(self) -> str:
        """The weights as an HTML table (the table view): a caption, one column header per
        key and one row header per query, each cell the weight to 2 decimals ("masked" where
        the causal mask hides the key); the selected query's row has ``aria-current``."""
        if not self._tokens:
            return '<p class="explorer-table">No tokens, no table: type a sentence.</p>'
        words = [_esc(f"{_word(t)} ({i})") for i, t in enumerate(self._tokens)]
        parts = [
            '<table class="explorer-table"><caption>Attention weights, '
            f"{_esc(self._view_words())}: one row per query token, one column per key token "
            "(position in brackets); each row sums to 1.</caption>"
            '<thead><tr><td class="explorer-table-corner">query \\ key</td>',
            *(f'<th scope="col">{word}</th>' for word in words),
            "</tr></thead><tbody>",
        ]
        for i, row in enumerate(self._weights):
            current = ' aria-current="true"' if i == self._query else ""
            parts.append(f'<tr data-query="{i}"{current}><th scope="row">{words[i]}</th>')
            parts.extend(
                "<td>masked</td>" if self._causal and j > i else f"<td>{w:.2f}</td>"
                for j, w in enumerate(row)
            )
            parts.append("</tr>")
        parts.append("</tbody></table>")
        return "".join(parts)

    def _cell_size(self) -> int:
        n = max(len(self._tokens), 1)
        return int(min(44, max(6, 300 // n)))

    def _cells_uri(self) -> str:
        """The heatmap's cells as an n x n palette PNG data URI (one pixel per weight; the SVG
        scales it up, pixelated), cached per map."""
        key = ("png", *self._map_key)
        uri = self._png_cache.get(key)
        if uri is None:
            indices = _colour_index(self._weights)  # (n, n)
            if self._causal:
                indices[~self._mask] = _MASKED_INDEX
            uri = "data:image/png;base64," + base64.b64encode(_palette_png(indices)).decode("ascii")
            self._png_cache[key] = uri
        return uri

    def _cells_svg(self, left: float, top: float, cell: int) -> str:
        """The heatmap's cells: one square each up to RECT_TOKENS tokens, else the PNG."""
        n = len(self._tokens)
        if n > RECT_TOKENS:
            return (
                f'<image x="{left}" y="{top}" width="{n * cell}" height="{n * cell}" '
                f'style="image-rendering:pixelated" href="{self._cells_uri()}"/>'
            )
        key = ("squares", *self._map_key, left, top, cell)
        cells = self._png_cache.get(key)
        if cells is None:
            indices = _colour_index(self._weights)  # (n, n)
            if self._causal:
                indices[~self._mask] = _MASKED_INDEX
            # One path per colour, a square per cell: a third of the bytes of one <rect> per
            # cell, and the bytes are what a click waits for.
            squares: dict[int, list[str]] = {}
            for (i, j), index in np.ndenumerate(indices):
                squares.setdefault(int(index), []).append(
                    f"M{left + j * cell} {top + i * cell}h{cell}v{cell}h-{cell}z"
                )
            cells = self._png_cache[key] = (
                '<g class="explorer-cells" shape-rendering="crispEdges">'
                + "".join(f'<path fill="{_HEX[k]}" d="{"".join(d)}"/>' for k, d in squares.items())
                + "</g>"
            )
        return cells

    def _label_step(self, cell: int, font: int) -> int:
        return max(1, math.ceil((font + 2) / cell))

    @property
    def heatmap_svg(self) -> str:
        """The heatmap's three SVG layers (map, axes, selected query) as one string, as the
        browser shows them now."""
        return self._heatmap_map.value + self._heatmap_axes.value + _shown(self._query_layers)

    @property
    def bars_svg(self) -> str:
        """The bar chart's two SVG layers (axes, the selected query's bars) as one string, as
        the browser shows them now."""
        return self._bars_axes.value + _shown(self._bar_values)

    def _key_geometry(self) -> dict | None:
        """What the heatmap and the bar chart share: one column per key (``cell`` pixels wide,
        ``grid`` in all), labelled every ``step`` keys below, rotated when crowded, in ``bottom``
        pixels; None if there are no tokens."""
        n = len(self._tokens)
        if n == 0:
            return None
        cell = self._cell_size()
        font = 12 if cell >= 20 else 9
        longest = self._label_len
        rotate = n > 1 and 0.62 * font * longest > cell - 2
        return {
            "n": n, "cell": cell, "font": font, "step": self._label_step(cell, font),
            "grid": n * cell, "rotate": rotate,
            "bottom": (int(0.5 * font * longest) + 10 if rotate else font + 8) + 18,
        }  # fmt: skip

    def _heatmap_geometry(self) -> dict | None:
        """Where everything goes in the heatmap (shared by its three layers); None if empty."""
        g = self._key_geometry()
        if g is None:
            return None
        left, top, grid = 30 + int(0.62 * g["font"] * self._label_len) + 6, 28, g["grid"]
        cbar_x, cbar_len = left + grid + 14, max(grid, 160)
        return g | {
            "left": left, "top": top, "cbar_x": cbar_x, "cbar_len": cbar_len,
            "width": max(cbar_x + 52, left + 260),
            "height": top + max(grid + g["bottom"], cbar_len + 28),
        }  # fmt: skip

    @staticmethod
    def _layer_open(g: dict, attributes: str = "", height: float | None = None) -> str:
        """The opening <svg> tag of one layer: ``g``'s size (or ``height``), the course font."""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{g["width"]}" '
            f'height="{g["height"] if height is None else height}" style="{_FONT}"{attributes}>'
        )

    def _key_labels(self, g: dict, y: float) -> str:
        """The keys' labels, centred under their columns, from ``y`` down."""
        return "".join(
            _key_label(
                self._labels[j], g["left"] + (j + 0.5) * g["cell"], y, g["font"], g["rotate"]
            )
            for j in range(0, g["n"], g["step"])
        )

    def _map_label(self) -> str:
        """The heatmap in words (its SVG's aria-label): what, how big, where the extremes are."""
        words = [_word(t) for t in self._tokens]
        mask = "causal mask on" if self._causal else "no mask"
        what = f"attention weights of head {self._head}, {mask}, temperature {self._temperature:g}"
        hidden = ~causal_mask(len(words)) if self._causal else None
        return heatmap_alt(self._weights, words, words, what, masked=hidden)

    def _bars_label(self, query: int) -> str:
        """One query's bar chart in words (its SVG's aria-label): every key's weight."""
        words = [_word(t) for t in self._tokens]
        row = self._weights[query]
        return f"Weights of query {words[query]!r} (position {query}) over the keys: " + ", ".join(
            f"{word} {w:.2f}" for word, w in zip(words, row)
        )

    def _map_svg(self, g: dict | None) -> str:
        """The bottom layer: title, cells, their numbers (and the masked key's legend)."""
        if g is None:
            return (
                f'<svg width="300" height="60" style="{_FONT}"><text x="10" y="35" '
                'font-size="14" fill="#555">no tokens to show</text></svg>'
            )
        left, top, cell = g["left"], g["top"], g["cell"]
        parts = [
            self._layer_open(
                g,
                f'{self._layer_attribute} data-head="{self._head}" '
                f'data-causal="{int(self._causal)}" '
                f'data-temperature="{self._temperature:g}" data-n="{g["n"]}" role="img" '
                f'aria-label="{html.escape(self._map_label())}"',
            ),
            f'<text x="{left}" y="16" font-size="13" font-weight="bold">{self._map_title()}</text>',
            self._cells_svg(left, top, cell),
        ]
        # The numbers, when the cells are big enough to hold them (white unless said black).
        if cell >= 30:
            parts.append(
                '<g font-size="10" text-anchor="middle" dominant-baseline="middle" fill="#fff">'
            )
            indices = _colour_index(self._weights)
            for (i, j), w in np.ndenumerate(self._weights):
                if self._causal and j > i:
                    continue
                black = ' fill="#000"' if _TEXT_ON[indices[i, j]] == "#000000" else ""
                x, y = left + j * cell + cell / 2, top + i * cell + cell / 2
                parts.append(f'<text x="{x:.1f}" y="{y:.1f}"{black}>{w:.2f}</text>')
            parts.append("</g>")
        if self._causal:
            x, y = g["cbar_x"], top + g["cbar_len"]
            parts.append(
                f'<rect x="{x}" y="{y + 8}" width="12" height="10" fill="{MASKED_GREY}"/>'
                f'<text x="{x + 16}" y="{y + 13}" font-size="10" '
                'dominant-baseline="middle">masked</text>'
            )
        parts.append("</svg>")
        return "".join(parts)

    @property
    def _layer_attribute(self) -> str:
        return f' data-layer="{self._layer}"' if self.n_layers > 1 else ""

    def _map_title(self) -> str:
        layer = f"layer {self._layer}, " if self.n_layers > 1 else ""
        return f"{layer}head {self._head}: rows = query, columns = key"

    def _axes_svg(self, g: dict | None) -> str:
        """The middle layer: the keys' labels, the axis titles and the colour bar."""
        if g is None:
            return ""
        left, top, grid, cell = g["left"], g["top"], g["grid"], g["cell"]
        parts = [
            self._layer_open(g, ' aria-hidden="true"'),  # labels: the map's aria-label says it
            self._key_labels(g, top + grid + 4),
            f'<g font-size="{g["font"]}" text-anchor="end" dominant-baseline="middle">',
        ]
        for i in range(0, g["n"], g["step"]):
            y = top + i * cell + cell / 2
            parts.append(f'<text x="{left - 6}" y="{y:.1f}">{self._labels[i]}</text>')
        parts.append("</g>")
        parts.append(
            f'<text x="12" y="{top + grid / 2:.1f}" font-size="12" text-anchor="middle" '
            f'transform="rotate(-90 12 {top + grid / 2:.1f})">query (row)</text>'
            f'<text x="{left + grid / 2:.1f}" y="{top + grid + g["bottom"] - 4}" font-size="12" '
            'text-anchor="middle">key (column)</text>'
        )
        parts.append(self._colour_bar(g["cbar_x"], top, g["cbar_len"]))
        parts.append("</svg>")
        return "".join(parts)

    def _query_svg(self, g: dict | None, query: int) -> str:
        """The top layer, as tall as the rows, for query ``query``: its row's outline and, when
        its row is labelled, its label in bold on white over the axes layer's."""
        if g is None:
            return ""
        left, top, cell, font = g["left"], g["top"], g["cell"], g["font"]
        # The selected row's outline and label: drawn over the map, which names it in words.
        parts = [
            self._layer_open(
                g, f' data-query="{query}" aria-hidden="true"', height=top + g["grid"] + 5
            )
        ]
        if query % g["step"] == 0:
            y = top + query * cell + cell / 2
            width = 0.7 * font * len(html.unescape(self._labels[query])) + 4
            x = max(left - 6 - width, 22)  # clear of the "query (row)" title
            parts.append(
                f'<rect x="{x:.1f}" y="{y - font / 2 - 1:.1f}" width="{left - 4 - x:.1f}" '
                f'height="{font + 2}" fill="#fff"/><text x="{left - 6}" y="{y:.1f}" '
                f'font-size="{font}" text-anchor="end" dominant-baseline="middle" '
                f'font-weight="bold" fill="{HIGHLIGHT}">{self._labels[query]}</text>'
            )
        # The outline: 3 px of the highlight between 1 px of black outside and 1 px of white
        # inside, so that one of them stands out on every colour (WCAG 1.4.11, 3:1), whatever
        # the colour vision.
        y, grid = top + query * cell, g["grid"]
        parts.append(
            f'<rect x="{left - 3.5}" y="{y - 3.5}" width="{grid + 7}" height="{cell + 7}" '
            'fill="none" stroke="#000" stroke-width="1"/>'
            f'<rect x="{left - 1.5}" y="{y - 1.5}" width="{grid + 3}" height="{cell + 3}" '
            f'fill="none" stroke="{HIGHLIGHT}" stroke-width="3"/>'
            f'<rect x="{left + 0.5}" y="{y + 0.5}" width="{grid - 1}" height="{cell - 1}" '
            'fill="none" stroke="#fff" stroke-width="1"/></svg>'
        )
        return "".join(parts)

    def _colour_bar(self, x: float, top: float, length: float) -> str:
        stops = "".join(
            f'<stop offset="{k / 10:.1f}" stop-color="{_HEX[round((1 - k / 10) * 254)]}"/>'
            for k in range(11)
        )
        ticks = "".join(
            f'<text x="{x + 16}" y="{top + (1 - v) * length:.1f}" font-size="10" '
            f'dominant-baseline="middle">{v:g}</text>'
            for v in (0, 0.25, 0.5, 0.75, 1)
        )
        return (
            f'<defs><linearGradient id="explorer-viridis" x1="0" y1="0" x2="0" y2="1">{stops}'
            f'</linearGradient></defs><rect x="{x}" y="{top}" width="12" height="{length}" '
            f'fill="url(#explorer-viridis)" stroke="#444" stroke-width="0.5"/>{ticks}'
        )

    def _bars_geometry(self) -> dict | None:
        """Where everything goes in the bar chart (shared by its two layers); None if empty."""
        g = self._key_geometry()
        if g is None:
            return None
        # A rotated label reaches 0.5 * its length to the left of its column's centre: room.
        reach = int(0.5 * 0.62 * g["font"] * self._label_len - g["cell"] / 2) + 6
        left, top, plot_h = max(44, reach if g["rotate"] else 0), 60, 200
        return g | {
            "left": left, "top": top, "plot_h": plot_h,
            "width": max(left + g["grid"] + 16, 300), "height": top + plot_h + g["bottom"],
        }  # fmt: skip

    def _bars_axes_svg(self, g: dict | None) -> str:
        """The bar chart's bottom layer: grid lines, ticks, the keys' labels, the axes."""
        if g is None:
            return ""
        left, top, plot_h, grid = g["left"], g["top"], g["plot_h"], g["grid"]
        ticks = (0, 0.25, 0.5, 0.75, 1)
        parts = [self._layer_open(g, ' aria-hidden="true"'), '<g stroke="#ddd">']  # bars name it
        for v in ticks:
            y = top + (1 - v) * plot_h
            parts.append(f'<line x1="{left}" x2="{left + grid}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append('</g><g font-size="10" text-anchor="end" dominant-baseline="middle">')
        for v in ticks:
            parts.append(f'<text x="{left - 4}" y="{top + (1 - v) * plot_h:.1f}">{v:g}</text>')
        parts.append("</g>")
        parts.append(self._key_labels(g, top + plot_h + 4))
        parts.append(
            f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#444"/>'
            f'<line x1="{left}" x2="{left + grid}" y1="{top + plot_h}" y2="{top + plot_h}" '
            f'stroke="#444"/><text x="{left + grid / 2:.1f}" y="{g["height"] - 4}" '
            'font-size="12" text-anchor="middle">key</text></svg>'
        )
        return "".join(parts)

    def _bars_values_svg(self, g: dict | None, query: int) -> str:
        """The bar chart's top layer for query ``query``, down to the zero line (the keys'
        labels under it keep their hover titles): its title, bars, numbers, masked keys."""
        if g is None:
            return ""
        left, top, plot_h, cell, n = g["left"], g["top"], g["plot_h"], g["cell"], g["n"]
        row = self._weights[query]
        indices = _colour_index(row)
        token = self._labels[query]
        parts = [
            self._layer_open(
                g,
                f' data-query="{query}" role="img" '
                f'aria-label="{html.escape(self._bars_label(query))}"',
                height=top + plot_h + 6,
            ),
            f'<text x="4" y="16" font-size="13" font-weight="bold">query "{token}" '
            f"(position {query})</text>",
            f'<text x="4" y="33" font-size="12">its weights over the keys (sum = {row.sum():.2f})'
            "</text>",
        ]
        seen = query + 1 if self._causal else n  # keys 0..seen-1 take part
        if seen < n:
            parts.append(
                f'<g class="masked-legend">{_cross(10, 46, 4)}<text x="20" y="46" '
                'font-size="11" dominant-baseline="middle" fill="#444">masked (future) key: '
                "weight exactly 0</text></g>"
            )
        gap = 0.15 * cell if cell >= 8 else 0
        bars, numbers, masked_marks = [], [], []  # the marks last, on top of the zero line
        for j, w in enumerate(row):
            x = left + j * cell + gap
            if j >= seen:
                # A masked key's weight is exactly 0: no bar, a cross on the zero line.
                xc = left + j * cell + cell / 2
                mark = _cross(xc, top + plot_h, max(2.5, min(5.0, 0.2 * cell)))
                if cell >= 30:
                    mark += (
                        f'<text x="{xc:.1f}" y="{top + plot_h - 10}" font-size="10" fill="#444" '
                        'text-anchor="middle">0</text>'
                    )
                masked_marks.append(f'<g class="masked-key" data-key="{j}">{mark}</g>')
                continue
            bar = w * plot_h  # the bar's height in pixels
            bars.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - bar:.1f}" width="{cell - 2 * gap:.1f}" '
                f'height="{bar:.1f}" fill="{_HEX[indices[j]]}"/>'
            )
            if cell >= 30:
                inside = bar > plot_h - 14  # no room above a tall bar: write inside it
                y = top + plot_h - bar + (12 if inside else -4)
                colour = _TEXT_ON[indices[j]] if inside else "#000000"
                numbers.append(
                    f'<text x="{left + j * cell + cell / 2:.1f}" y="{y:.1f}" fill="{colour}">'
                    f"{w:.2f}</text>"
                )
        parts.append(
            f'<g class="explorer-bar-rects" stroke="#444" stroke-width="0.5">{"".join(bars)}</g>'
            f'<g font-size="10" text-anchor="middle">{"".join(numbers)}</g>'
        )
        parts.extend(masked_marks)
        parts.append("</svg>")
        return "".join(parts)


def _shown(stack: widgets.Stack) -> str:
    """The value of the Stack's child on screen ("" when none is)."""
    i = stack.selected_index
    return "" if i is None else stack.children[i].value


AFTER_PAINT_S = 0.03


def _after_paint(callback) -> None:
    """Run ``callback`` ``AFTER_PAINT_S`` later when a kernel's event loop runs, else now.

    A click changes the pictures (what the learner looks at) and, besides, text and buttons.
    Sent together, the browser re-renders them all before it paints the new pictures; sent a
    moment later, the pictures come first. The callback reads the state when it runs, so a
    quicker second click is never undone.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no event loop (a script, a test): nothing to wait for
        callback()
        return
    loop.call_later(AFTER_PAINT_S, callback)


def _cross(x: float, y: float, r: float) -> str:
    """An SVG "×" of half-width ``r`` centred on ``(x, y)``: the mark of a masked key."""
    return (
        f'<path d="M{x - r:.1f} {y - r:.1f}L{x + r:.1f} {y + r:.1f}M{x - r:.1f} {y + r:.1f}'
        f'L{x + r:.1f} {y - r:.1f}" stroke="{MASKED_MARK_COLOUR}" stroke-width="1.8" '
        'fill="none"/>'
    )


def _key_label(token: str, x: float, y: float, font: int, rotate: bool) -> str:
    """SVG text for one key's label under a column (rotated when the labels are crowded)."""
    if rotate:
        return (
            f'<text x="{x:.1f}" y="{y}" font-size="{font}" text-anchor="end" '
            f'dominant-baseline="middle" transform="rotate(-60 {x:.1f} {y})">{token}</text>'
        )
    return (
        f'<text x="{x:.1f}" y="{y + font}" font-size="{font}" text-anchor="middle">{token}</text>'
    )
