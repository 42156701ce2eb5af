"""The attention explorer's state and wiring: :class:`AttentionExplorer`.

The lesson text's interactive figure, for lessons 04-06. A heatmap of one head's attention
weights over a sentence (rows = query, columns = key), a row of token buttons that pick the
query whose distribution is drawn as a bar chart beside it, a head selector, a causal-mask
toggle, a temperature slider and a text box for your own sentence::

    from helpers.explorer import AttentionExplorer
    ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=2, query=1)
    ex.show()

The explorer is these parts, one module each of :mod:`helpers.explorer`:

* **state and wiring** (this module, ``widget``): the sentence, layer, head, mask, temperature
  and query, what a control's move does, and which picture goes to which widget when;
* **widgets** (:mod:`helpers.explorer.controls`): :func:`~helpers.explorer.controls.build_parts`
  makes the controls and the pictures' layers, laid out, as
  :class:`~helpers.explorer.controls.ExplorerParts` (:attr:`AttentionExplorer.parts`);
* **weights** (:mod:`helpers.explorer.sources`): a weight source, by default the course's
  math (``build_Z`` -> ``seeded_projections`` -> per-head ``scaled_dot_product_attention``,
  ``causal_mask`` when the toggle is on, scale ``1 / (sqrt(d_k) * temperature)``); lessons 09
  and 10 pass their trained models' sources;
* **drawing** (:mod:`helpers.explorer.drawing`): :class:`~helpers.explorer.drawing.ExplorerDrawing`
  takes an :class:`~helpers.explorer.drawing.ExplorerState` (:attr:`AttentionExplorer.state`)
  and returns its SVG layers, words, table and figure, no widget involved;
* and the browser modules (:mod:`helpers.front`): the token row with its arrow keys
  and live message, the table view, lesson 09's grid.

**Why it is fast.** The per-head Q, K, V are computed once per sentence, the weights once per
map, the cells once per weight matrix. A token pick never waits for the kernel: every query's
row outline and bars are already in the browser, one child of an ``ipywidgets.Stack`` each,
its message in the token row, and the token row switches the Stacks itself, in the browser
(its ``followers``); the kernel hears of the pick after it is painted.
``benchmarks/bench_explorer.py`` measures the kernel's side against the
matplotlib way; the browser tests time a click to new pixels.

**Readable without a kernel.** :meth:`AttentionExplorer.show` puts a matplotlib PNG of the
current state in the same output as the widget (see :func:`helpers.live.show`).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace

import ipywidgets as widgets
import numpy as np

from .._validate import ArgumentTypeError, whole_number
from ..embeddings import D_MODEL, RUNNING_SENTENCE
from ..live import show as _show_live
from .controls import (
    TEMPERATURE_RANGE,
    TEMPERATURES,
    ExplorerParts,
    build_parts,
    causal_look,
    shown,
    valid_temperature,
)
from .drawing import ExplorerDrawing, ExplorerState, axis_label, word_label
from .figure import static_figure
from .preview import STATIC_PAGE, PreviewStates, after_paint
from .sources import MAX_TOKENS, SeededWeights, check_source

__all__ = ["AttentionExplorer", "ExplorerParts", "MAX_TOKENS", "TEMPERATURES", "TEMPERATURE_RANGE"]


def _index(value, size: int, what: str) -> int:
    """``value`` as a layer or head number in 0..size-1, or a clear error."""
    value = whole_number(value, what)
    if not 0 <= value < size:
        raise ValueError(f"{what} {value} does not exist: this explorer has {what}s 0..{size - 1}")
    return int(value)


class AttentionExplorer(PreviewStates):
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
        Divides the scores: scale = 1 / (sqrt(d_k) * temperature). One of the slider's
        ``TEMPERATURES`` (0.1, 0.15, ..., 7, 10); 1 is the paper's scaled dot product.
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
    parts : ExplorerParts
        Its widgets by name (its controls and its pictures' layers): what tests, benchmarks
        and a new view (docs/CONTRIBUTING.md) may read; ``widget`` holds them.
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
        if source is None:  # the course's own math on seeded projections (they check them)
            source = SeededWeights(d_model, n_heads, seed)
        if not isinstance(causal, (bool, np.bool_)):
            raise ArgumentTypeError(f"causal must be True or False, got {causal!r}")
        self.source = check_source(source)
        self.n_layers, self.n_heads, self.d_k = source.n_layers, source.n_heads, source.d_k
        self.d_model, self.seed = self.n_heads * self.d_k, getattr(source, "seed", None)
        self._layer = _index(layer, self.n_layers, "layer")
        self._head = _index(head, self.n_heads, "head")
        fixed = source.fixed_causal
        self._causal = bool(causal) if fixed is None else fixed
        self._temperature = valid_temperature(
            temperature if source.fixed_temperature is None else source.fixed_temperature
        )
        self._listeners: list = []
        self._query = 0
        self._holding = False  # True while the code (not the user) moves a control
        self._in_browser_event = False  # True while a control moved in the browser is handled
        self._every_query_due = False  # the other queries' pictures are waiting for a paint
        self.parts = build_parts(
            self.n_layers, self.n_heads, self._layer, self._head, self._causal,
            self._temperature, source.fixed_causal, source.fixed_temperature,
        )  # fmt: skip
        self.widget = self.parts.widget
        self._wire_controls()
        sentence = self._load_sentence(sentence)
        self._move(self.parts.text, "value", sentence)
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
    def scale(self) -> float:
        """The factor on the scores: ``1 / (sqrt(d_k) * temperature)``."""
        return 1.0 / (math.sqrt(self.d_k) * self._temperature)

    @property
    def message(self) -> str:
        """The text of the message line (plain text)."""
        parts = [self._note(), self.drawing().describe(self._query) if self._tokens else ""]
        return " ".join(part for part in parts if part)

    def select_query(self, query: int) -> None:
        """Show the distribution of query position ``query`` (what a click on its token does:
        there the browser switches the pictures itself: :attr:`ExplorerParts.followers`)."""
        self._set_query(query)
        self._show_query()

    def set_head(self, head: int) -> None:
        """Show head ``head`` (0 .. n_heads - 1; h = n_heads is the number of heads)."""
        self._head = _index(head, self.n_heads, "head")
        self._move(self.parts.head, "value", self._head)
        self._redraw()
        self._notify()

    def set_layer(self, layer: int) -> None:
        """Show layer ``layer`` (0 .. n_layers - 1), same head."""
        self._layer = _index(layer, self.n_layers, "layer")
        if self.parts.layer is not None:
            self._move(self.parts.layer, "value", self._layer)
        self._redraw()
        self._notify()

    def select(self, layer: int, head: int, *, in_browser: bool = False) -> None:
        """Show map (layer, head) with one redraw (what a pick in lesson 09's grid does).

        ``in_browser``: the pick was made in the browser (the grid has painted the map): the
        pictures are sent at once and the layer and head buttons (and the grid's outline) a
        moment later (:func:`.preview.after_paint`), so the browser draws the new map first.
        """
        with self._browser_event() if in_browser else nullcontext():
            self._layer = _index(layer, self.n_layers, "layer")
            self._head = _index(head, self.n_heads, "head")
            self._redraw()
            if self._in_browser_event:
                after_paint(self._show_selection)
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
        with self.parts.causal.hold_sync():  # value, label and icon: one message
            self._move(self.parts.causal, "value", self._causal)
            for name, value in causal_look(self._causal).items():
                setattr(self.parts.causal, name, value)
        self._redraw()

    def set_temperature(self, temperature: float) -> None:
        """Divide the scores by ``temperature`` too: below 1 sharper, above 1 flatter."""
        fixed = self.source.fixed_temperature
        if fixed is not None and float(temperature) != fixed:
            raise ValueError(self.source.temperature_error)
        self._temperature = valid_temperature(temperature)
        self._move(self.parts.temperature, "value", self._temperature)
        self._redraw()

    def set_sentence(self, sentence: str) -> None:
        """Tokenize ``sentence`` and show its attention (what typing in the box does)."""
        query = self._query
        sentence = self._load_sentence(sentence)  # raises before changing anything, or loads all
        self._move(self.parts.text, "value", sentence)  # as loaded (valid Unicode)
        self._set_query(query, clip=True)
        self._redraw()
        self._notify()

    def show(self) -> None:
        """Display the live widget, with a static PNG of the current state as its fallback."""
        _show_live(self.widget, self.static_png(), alt=self.alt_text())

    # ------------------------------------------------------------------ what it shows

    def alt_text(self) -> str:
        """A one-sentence description of the current picture (the output's text/plain)."""
        if not self._tokens:
            return "Attention explorer: no tokens to show (the sentence is empty)."
        mask = "with the causal mask" if self._causal else "without a mask"
        return (
            f"Attention explorer: head {self._head} of {self.n_heads}, {mask}, temperature "
            f"{self._temperature:g}, over {len(self._tokens)} tokens; heatmap with rows = query, "
            f"columns = key, and the weights of query {word_label(self._tokens[self._query])!r} "
            f"(position {self._query}) as bars{self.drawing().top_key_text()}."
        )

    def static_figure(self, dpi: int = 90):
        """The figure :meth:`static_png` saves: heatmap on the left, the query's bars right
        (a matplotlib Figure, :func:`helpers.explorer.figure.static_figure`)."""
        return static_figure(self.drawing(), dpi)

    def table_html(self) -> str:
        """The weights as an HTML table (the table view's), with row and column headers."""
        return self.drawing().table_html()

    @property
    def state(self) -> ExplorerState:
        """What the explorer shows now, as the drawing takes it (its weights read-only)."""
        return ExplorerState(
            tokens=self._tokens,
            weights=self._weights,
            query=self._query,
            layer=self._layer,
            head=self._head,
            causal=self._causal,
            temperature=self._temperature,
            n_layers=self.n_layers,
            mask_control=self.source.fixed_causal is None,
            temperature_control=self.source.fixed_temperature is None,
            labels=self._labels,
        )

    def drawing(self) -> ExplorerDrawing:
        """The drawing of the state now (its per-map strings kept for this sentence)."""
        return ExplorerDrawing(self.state, self._drawing_cache)

    def map_svg_of(self, layer: int, head: int) -> str:
        """The heatmap's bottom layer (cells and numbers) for map (layer, head) of this
        sentence, mask and temperature: what the explorer shows after ``select(layer, head)``
        (lesson 09's grid holds all of them in the browser, so that a pick is drawn at once)."""
        layer = _index(layer, self.n_layers, "layer")
        head = _index(head, self.n_heads, "head")
        return self._map_svg(layer, head, self._causal, self._temperature)

    def _map_svg(self, layer: int, head: int, causal: bool, temperature: float) -> str:
        """The map layer of (layer, head) with this mask and temperature, for this sentence."""
        if not self._tokens:
            return ""
        drawing = self._drawing_at(layer, head, causal, temperature)
        return drawing.map_svg(drawing.heatmap_geometry())

    def _drawing_at(self, layer: int, head: int, causal: bool, temperature: float):
        """The drawing of map (layer, head) with this mask and temperature, for this sentence
        (the query shown), its per-map strings kept with the explorer's."""
        weights = self._weights_of(layer, head, causal, temperature)[1]
        state = replace(
            self.state,
            layer=layer,
            head=head,
            causal=causal,
            temperature=temperature,
            weights=weights,
        )
        return ExplorerDrawing(state, self._drawing_cache)

    def static_png(self, dpi: int = 90) -> bytes:
        """The current state drawn by matplotlib (labels, colour bar, bars), as PNG bytes."""
        buffer = io.BytesIO()
        self.static_figure(dpi).savefig(buffer, format="png")
        return buffer.getvalue()

    # ------------------------------------------------------------------ state

    def _load_sentence(self, text: str) -> str:
        """Load the text into the weight source (its per-sentence work, once), then keep its
        tokens. The source raises before changing anything, so an error leaves the previous
        sentence in place, whole. Returns the text as loaded (for the sentence box)."""
        loaded = self.source.load(text)
        tokens = loaded.tokens
        self._tokens = tokens
        self._text_note = loaded.note
        self._labels = tuple(axis_label(t) for t in tokens)  # escaped, shortened
        self._weights_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._drawing_cache: dict = {}  # the drawing's, for this sentence
        self._preview_key: tuple | None = None  # (causal, temperature) of the preview's maps
        self._every_state_sent = False  # a page with no kernel: every state, once a sentence
        self._temperatures_key: tuple | None = None  # (layer, head, causal) of its others
        self._set_token_options()
        return loaded.text

    def _compute_weights(self) -> None:
        if not self._tokens:
            self._output, self._weights = np.zeros((0, self.d_k)), np.zeros((0, 0))
            return
        self._output, self._weights = self._weights_of(
            self._layer, self._head, self._causal, self._temperature
        )

    def _weights_of(self, *key) -> tuple[np.ndarray, np.ndarray]:
        """(output, weights) of map ``key`` = (layer, head, causal, temperature), computed
        once per sentence; the weights read-only (a state shares them)."""
        if key not in self._weights_cache:
            output, weights = self.source.weights(*key)
            weights = np.asarray(weights)
            weights.flags.writeable = False
            self._weights_cache[key] = (output, weights)
        return self._weights_cache[key]

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

    def _wire_controls(self) -> None:
        """Call the explorer when a control moves in the browser."""
        parts = self.parts
        parts.tokens.observe(self._from_browser(self._clicked), names="index")
        parts.table.observe(self._table_toggled, names="pressed")
        for control, setter in [
            (parts.layer, self.set_layer),
            (parts.head, self.set_head),
            (parts.causal, self.set_causal),
            (parts.temperature, self.set_temperature),
            (parts.text, self.set_sentence),
        ]:
            if control is not None:
                control.observe(self._from_browser(setter), names="value")

    def _set_token_options(self) -> None:
        """One token button per token (the sentence changed)."""
        with self._holding_events():
            self.parts.tokens.tokens = [word_label(token) for token in self._tokens]

    def _table_toggled(self, change) -> None:
        """The table view was opened (draw the table) or closed (send nothing more)."""
        self.parts.table.table = self.table_html() if change["new"] else ""

    def _clicked(self, index) -> None:
        """A token was picked in the browser, which already shows that query: the token row
        moved its followers (the Stacks and the table) there, without telling the kernel.

        The kernel's copies are updated without sending them back (ipywidgets' own property
        lock, as when it applies a browser update). Sending them made a race: with the kernel
        busy, the browser queues several picks; the kernel, handling the first, sent that older
        index to the Stacks, which moved the token row back to it (the keyboard walk in the
        browser tests saw 'sat' checked after ArrowRight, End, Home).
        """
        if index is None:
            return
        self._set_query(index)
        for control, name in self.parts.followers:
            with control._lock_property(**{name: self._query}), self._holding_events():
                setattr(control, name, self._query)

    def _show_selection(self) -> None:
        """Move the layer and head buttons to the map shown, and tell the listeners."""
        if self.parts.layer is not None:
            self._move(self.parts.layer, "value", self._layer)
        self._move(self.parts.head, "value", self._head)
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
        drawn at once and the others a moment later (:func:`.preview.after_paint`), so that the
        browser paints the new pictures first. Called from code, everything is drawn at once, so
        that a notebook saved after the cell holds every picture.
        """
        self._compute_weights()
        drawing, parts = self.drawing(), self.parts
        geometry, bars = drawing.heatmap_geometry(), drawing.bars_geometry()
        self._send_every_map()  # before the map: the browser draws the next one from them
        self._send_every_temperature()
        if os.environ.get(STATIC_PAGE) == "1":
            self._send_every_state()
        parts.heatmap_map.value = drawing.map_svg(geometry)
        parts.heatmap_axes.value = drawing.axes_svg(geometry)
        parts.bars_axes.value = drawing.bars_axes_svg(bars)
        n = len(self._tokens)
        parts.fit_stacks(n)  # drawn below, before they are shown
        if not self._in_browser_event:
            self._draw_every_query()
        elif n:
            self._draw_query(drawing, self._query, geometry, bars)
            if not self._every_query_due:
                self._every_query_due = True
                after_paint(self._draw_every_query)
        if not n:  # no pictures to wait for: the message now
            self._send_messages()
        if parts.table.pressed:
            parts.table.table = drawing.table_html()
        self._show_query()

    def _draw_query(self, drawing, i: int, geometry: dict | None, bars: dict | None) -> None:
        """Query ``i``'s row outline and bars, into its Stacks' children."""
        self.parts.query_layers.children[i].value = drawing.query_svg(geometry, i)
        self.parts.bar_values.children[i].value = drawing.bars_values_svg(bars, i)

    def _draw_every_query(self) -> None:
        """Every query's pictures, as the state is now (the one on screen is unchanged, so not
        sent again)."""
        self._every_query_due = False
        drawing = self.drawing()
        geometry, bars = drawing.heatmap_geometry(), drawing.bars_geometry()
        for i in range(len(self._tokens)):
            self._draw_query(drawing, i, geometry, bars)
        self._send_messages(drawing)

    def _send_messages(self, drawing: ExplorerDrawing | None = None) -> None:
        """The message line's text for every query (after a pick in the browser, with the
        other queries' pictures: the new map is painted first, the words a moment later)."""
        drawing = drawing or self.drawing()
        with self.parts.tokens.hold_sync():  # one message to the browser
            self.parts.tokens.note = self._note()
            self.parts.tokens.messages = [drawing.describe(i) for i in range(len(self._tokens))]

    def _show_query(self) -> None:
        """Select the query in the token row, the Stacks and the table (in the browser, a pick
        has already done so: then nothing is sent)."""
        index = self._query if self._tokens else None
        self._move(self.parts.tokens, "index", index)
        for control, name in self.parts.followers:
            setattr(control, name, index)

    def _note(self) -> str:
        """What the message says of the sentence as a whole ("" when nothing)."""
        if not self._tokens:
            return "The sentence is empty: type one (for example 'the cat sat on the mat')."
        return self._text_note

    @property
    def heatmap_svg(self) -> str:
        """The heatmap's three SVG layers (map, axes, selected query) as one string, as the
        browser shows them now."""
        parts = self.parts
        return parts.heatmap_map.value + parts.heatmap_axes.value + shown(parts.query_layers)

    @property
    def bars_svg(self) -> str:
        """The bar chart's two SVG layers (axes, the selected query's bars) as one string, as
        the browser shows them now."""
        return self.parts.bars_axes.value + shown(self.parts.bar_values)
