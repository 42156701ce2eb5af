"""The attention explorer's drawing: its state as SVG, words and a table.

:class:`ExplorerState` is what an explorer shows (tokens and their axis labels, the weights,
the query, which map, what the learner may change); :class:`ExplorerDrawing` turns one state
into strings: the heatmap's three SVG layers (map, axes, selected query), the bar chart's two,
the message of each query and the table view's HTML. It holds no widget and sends nothing
(tests draw a state without any): which string goes to which widget, and when, is
:class:`helpers.explorer.widget.AttentionExplorer`'s business. The same state as a matplotlib figure
is :func:`helpers.explorer.figure.static_figure`; the colours and marks both use are
:mod:`helpers.explorer.colours`.

**Why SVG.** Redrawing a matplotlib figure per click costs 55-136 ms. The heatmap's cells are
SVG squares up to ``RECT_TOKENS`` tokens, above it one small palette PNG built in NumPy
(:func:`helpers.explorer.colours.palette_png`, which says why not Pillow); labels, numbers,
highlight and bars are SVG text and rectangles.
"""

from __future__ import annotations

import base64
import functools
import html
import math
from dataclasses import dataclass

import numpy as np

from ..attention import causal_mask
from ..plots import MASKED_GREY, heatmap_alt
from .colours import (
    HEX,
    HIGHLIGHT,
    HIGHLIGHT_TEXT,
    MASKED_INDEX,
    MASKED_MARK_COLOUR,
    TEXT_ON,
    colour_index,
    palette_png,
)

# Up to this many tokens the heatmap's cells are SVG squares, drawn with the rest of the SVG;
# above it, one palette PNG. In Chromium a click on lesson 04's explorer took 28 ms to new
# pixels with the PNG (its decode costs a frame) against 12 ms for a do-nothing widget.
RECT_TOKENS = 24
_FONT = "font-family:sans-serif"
LABEL_CHARS = 12  # longer tokens are shortened to 11 characters and "…" on the axes
# Longer tokens are shortened to 39 characters and "…" everywhere text shows them (buttons,
# hover titles, figure titles, messages, alt text); the math keeps the whole word. A pasted
# 100,000-character word would otherwise go into every one of them (static_png took 10-19 s).
WORD_CHARS = 40


def short_label(token: str, limit: int = LABEL_CHARS) -> str:
    """``token`` cut to ``limit`` characters, the last one "…", if it is longer."""
    return token if len(token) <= limit else token[: limit - 1] + "…"


def word_label(token: str) -> str:
    """``token`` as text shows it: at most ``WORD_CHARS`` characters."""
    return short_label(token, WORD_CHARS)


def axis_label(token: str) -> str:
    """A token as an SVG axis label: escaped and shortened (the word, up to ``WORD_CHARS``
    characters, in a ``<title>``, which the browser shows on hover)."""
    if len(token) <= LABEL_CHARS:
        return _esc(token)
    return f"<title>{_esc(word_label(token))}</title>{_esc(short_label(token))}"


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


@dataclass(frozen=True, eq=False)
class ExplorerState:
    """What an explorer shows: all its drawing reads.

    ``tokens`` (at most 64) and their axis ``labels`` (escaped, shortened: :func:`axis_label`;
    made from the tokens when not given), the ``(n, n)`` ``weights`` shown (rows = query,
    columns = key), the selected ``query``, which map (``layer``, ``head``, ``causal``,
    ``temperature``), how many layers the model has (``n_layers``: the layer is named only
    when there are several) and whether the learner may change the mask and the temperature
    (``mask_control``, ``temperature_control``: the words then say them).
    """

    tokens: tuple[str, ...]
    weights: np.ndarray
    query: int = 0
    layer: int = 0
    head: int = 0
    causal: bool = False
    temperature: float = 1.0
    n_layers: int = 1
    mask_control: bool = True
    temperature_control: bool = True
    labels: tuple[str, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "tokens", tuple(self.tokens))
        if self.labels is None:
            object.__setattr__(self, "labels", tuple(axis_label(t) for t in self.tokens))

    @property
    def map_key(self) -> tuple:
        """Which map is shown: (layer, head, causal, temperature)."""
        return (self.layer, self.head, self.causal, self.temperature)


class ExplorerDrawing:
    """The pictures and words of one :class:`ExplorerState`: SVG layers, messages, the table's
    HTML, the static figure; strings (and a Figure), no widgets.

    ``cache`` (optional) is a dict the caller keeps for one sentence: the geometry is made once
    and kept there, and each map's cells and bottom layer are drawn once and kept there by
    :attr:`ExplorerState.map_key` (the explorer gives a new dict with each sentence).
    """

    def __init__(self, state: ExplorerState, cache: dict | None = None):
        self.state = state
        self._cache = {} if cache is None else cache

    @functools.cached_property
    def _mask(self) -> np.ndarray:
        return causal_mask(len(self.state.tokens))

    @functools.cached_property
    def _label_len(self) -> int:
        """The longest axis label's length in characters (at most ``LABEL_CHARS``)."""
        return min(max((len(t) for t in self.state.tokens), default=0), LABEL_CHARS)

    def top_key_text(self) -> str:
        """'; its largest weight, 0.50, is on key 'mat' (position 5)': the number that matters."""
        state = self.state
        if not len(state.weights):
            return ""
        row = state.weights[state.query]
        key = int(np.argmax(row))
        return (
            f"; its largest weight, {row[key]:.2f}, is on key {word_label(state.tokens[key])!r} "
            f"(position {key})"
        )

    def describe(self, query: int) -> str:
        """What the message says of query ``query``: where it looks, its largest weight, and
        which map this is (so the message changes with the head, the mask, the temperature)."""
        state = self.state
        n = len(state.tokens)
        token = word_label(state.tokens[query])
        row = state.weights[query]
        top = int(np.argmax(row))
        if state.causal:
            where = (
                "only to itself (it is the first token)"
                if query == 0
                else f"across itself and the {query} token{'s' * (query > 1)} before it"
            )
        else:
            where = f"across all {n} token{'s' * (n > 1)}"
        return (
            f'"{token}" (position {query}) distributes its attention {where}, most to '
            f'"{word_label(state.tokens[top])}" ({row[top]:.2f}); {self.view_words()}. Brighter '
            "cell = more attention. Click a token, or use the arrow keys in the token row, to "
            "switch."
        )

    def view_words(self) -> str:
        """Which map is shown, in words: "head 0, no mask, temperature 1", "layer 2, head 5",
        "layer 1, head 0, causal mask" (what the source fixes is not said, unless a mask)."""
        state = self.state
        parts = [f"layer {state.layer}"] if state.n_layers > 1 else []
        parts.append(f"head {state.head}")
        if state.mask_control:
            parts.append("causal mask" if state.causal else "no mask")
        elif state.causal:
            parts.append("causal mask")
        if state.temperature_control:
            parts.append(f"temperature {state.temperature:g}")
        return ", ".join(parts)

    def table_html(self) -> str:
        """The weights as an HTML table (the table view): a caption, one column header per
        key and one row header per query, each cell the weight to 2 decimals ("masked" where
        the causal mask hides the key); the selected query's row has ``aria-current``."""
        state = self.state
        if not state.tokens:
            return '<p class="explorer-table">No tokens, no table: type a sentence.</p>'
        words = [_esc(f"{word_label(t)} ({i})") for i, t in enumerate(state.tokens)]
        parts = [
            '<table class="explorer-table"><caption>Attention weights, '
            f"{_esc(self.view_words())}: one row per query token, one column per key token "
            "(position in brackets); each row sums to 1.</caption>"
            '<thead><tr><td class="explorer-table-corner">query \\ key</td>',
            *(f'<th scope="col">{word}</th>' for word in words),
            "</tr></thead><tbody>",
        ]
        for i, row in enumerate(state.weights):
            current = ' aria-current="true"' if i == state.query else ""
            parts.append(f'<tr data-query="{i}"{current}><th scope="row">{words[i]}</th>')
            parts.extend(
                "<td>masked</td>" if state.causal and j > i else f"<td>{w:.2f}</td>"
                for j, w in enumerate(row)
            )
            parts.append("</tr>")
        parts.append("</tbody></table>")
        return "".join(parts)

    def _cell_size(self) -> int:
        n = max(len(self.state.tokens), 1)
        return int(min(44, max(6, 300 // n)))

    def _cells_uri(self) -> str:
        """The heatmap's cells as an n x n palette PNG data URI (one pixel per weight; the SVG
        scales it up, pixelated), cached per map."""
        state = self.state
        key = ("png", *state.map_key)
        uri = self._cache.get(key)
        if uri is None:
            indices = colour_index(state.weights)  # (n, n)
            if state.causal:
                indices[~self._mask] = MASKED_INDEX
            uri = "data:image/png;base64," + base64.b64encode(palette_png(indices)).decode("ascii")
            self._cache[key] = uri
        return uri

    def _cells_svg(self, left: float, top: float, cell: int) -> str:
        """The heatmap's cells: one square each up to RECT_TOKENS tokens, else the PNG."""
        state = self.state
        n = len(state.tokens)
        if n > RECT_TOKENS:
            return (
                f'<image x="{left}" y="{top}" width="{n * cell}" height="{n * cell}" '
                f'style="image-rendering:pixelated" href="{self._cells_uri()}"/>'
            )
        key = ("squares", *state.map_key, left, top, cell)
        cells = self._cache.get(key)
        if cells is None:
            indices = colour_index(state.weights)  # (n, n)
            if state.causal:
                indices[~self._mask] = MASKED_INDEX
            # One path per colour, a square per cell: a third of the bytes of one <rect> per
            # cell, and the bytes are what a click waits for.
            squares: dict[int, list[str]] = {}
            for i, row in enumerate(indices.tolist()):  # Python ints: faster than NumPy's
                y = top + i * cell
                for j, index in enumerate(row):
                    squares.setdefault(index, []).append(
                        f"M{left + j * cell} {y}h{cell}v{cell}h-{cell}z"
                    )
            cells = self._cache[key] = (
                '<g class="explorer-cells" shape-rendering="crispEdges">'
                + "".join(f'<path fill="{HEX[k]}" d="{"".join(d)}"/>' for k, d in squares.items())
                + "</g>"
            )
        return cells

    def _label_step(self, cell: int, font: int) -> int:
        return max(1, math.ceil((font + 2) / cell))

    def _key_geometry(self) -> dict | None:
        """What the heatmap and the bar chart share: one column per key (``cell`` pixels wide,
        ``grid`` in all), labelled every ``step`` keys below, rotated when crowded, in ``bottom``
        pixels; None if there are no tokens."""
        n = len(self.state.tokens)
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

    def _per_sentence(self, name: str, make):
        """``make()``, kept in the cache under ``name``: for what depends on the sentence (its
        tokens and labels) only, not on the map, such as the geometry."""
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]

    def heatmap_geometry(self) -> dict | None:
        """Where everything goes in the heatmap (shared by its three layers); None if empty.
        Made once per sentence (lesson 09's grid draws 72 maps of one sentence)."""
        return self._per_sentence("heatmap geometry", self._heatmap_geometry)

    def _heatmap_geometry(self) -> dict | None:
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
                self.state.labels[j], g["left"] + (j + 0.5) * g["cell"], y, g["font"], g["rotate"]
            )
            for j in range(0, g["n"], g["step"])
        )

    def _map_label(self) -> str:
        """The heatmap in words (its SVG's aria-label): what, how big, where the extremes are."""
        state = self.state
        words = [word_label(t) for t in state.tokens]
        mask = "causal mask on" if state.causal else "no mask"
        what = f"attention weights of head {state.head}, {mask}, temperature {state.temperature:g}"
        hidden = ~causal_mask(len(words)) if state.causal else None
        return heatmap_alt(state.weights, words, words, what, masked=hidden)

    def _bars_label(self, query: int) -> str:
        """One query's bar chart in words (its SVG's aria-label): every key's weight."""
        words = [word_label(t) for t in self.state.tokens]
        row = self.state.weights[query]
        return f"Weights of query {words[query]!r} (position {query}) over the keys: " + ", ".join(
            f"{word} {w:.2f}" for word, w in zip(words, row)
        )

    def map_svg(self, g: dict | None) -> str:
        """The bottom layer: title, cells, their numbers (and the masked key's legend); made
        once per map and sentence (``g`` is the sentence's geometry), so that going back to a
        map (lesson 09's grid) only sends it."""
        if g is None:
            return (
                f'<svg width="300" height="60" style="{_FONT}"><text x="10" y="35" '
                'font-size="14" fill="#555">no tokens to show</text></svg>'
            )
        key = ("map", *self.state.map_key)
        svg = self._cache.get(key)
        if svg is None:
            svg = self._cache[key] = self._draw_map_svg(g)
        return svg

    def _draw_map_svg(self, g: dict) -> str:
        state = self.state
        left, top, cell = g["left"], g["top"], g["cell"]
        parts = [
            self._layer_open(
                g,
                f'{self._layer_attribute} data-head="{state.head}" '
                f'data-causal="{int(state.causal)}" '
                f'data-temperature="{state.temperature:g}" data-n="{g["n"]}" role="img" '
                f'aria-label="{html.escape(self._map_label())}"',
            ),
            f'<text x="{left}" y="16" font-size="13" font-weight="bold">{self.map_title()}</text>',
            self._cells_svg(left, top, cell),
        ]
        # The numbers, when the cells are big enough to hold them (white unless said black).
        if cell >= 30:
            parts.append(
                '<g font-size="10" text-anchor="middle" dominant-baseline="middle" fill="#fff">'
            )
            indices = colour_index(state.weights).tolist()
            for i, row in enumerate(state.weights.tolist()):
                y = top + i * cell + cell / 2
                for j, w in enumerate(row[: i + 1] if state.causal else row):
                    black = ' fill="#000"' if TEXT_ON[indices[i][j]] == "#000000" else ""
                    x = left + j * cell + cell / 2
                    parts.append(f'<text x="{x:.1f}" y="{y:.1f}"{black}>{w:.2f}</text>')
            parts.append("</g>")
        if state.causal:
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
        return f' data-layer="{self.state.layer}"' if self.state.n_layers > 1 else ""

    def map_title(self) -> str:
        state = self.state
        layer = f"layer {state.layer}, " if state.n_layers > 1 else ""
        return f"{layer}head {state.head}: rows = query, columns = key"

    def axes_svg(self, g: dict | None) -> str:
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
            parts.append(f'<text x="{left - 6}" y="{y:.1f}">{self.state.labels[i]}</text>')
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

    def query_svg(self, g: dict | None, query: int) -> str:
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
            width = 0.7 * font * len(html.unescape(self.state.labels[query])) + 4
            x = max(left - 6 - width, 22)  # clear of the "query (row)" title
            parts.append(
                f'<rect x="{x:.1f}" y="{y - font / 2 - 1:.1f}" width="{left - 4 - x:.1f}" '
                f'height="{font + 2}" fill="#fff"/><text x="{left - 6}" y="{y:.1f}" '
                f'font-size="{font}" text-anchor="end" dominant-baseline="middle" '
                f'font-weight="bold" fill="{HIGHLIGHT_TEXT}">{self.state.labels[query]}</text>'
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
            f'<stop offset="{k / 10:.1f}" stop-color="{HEX[round((1 - k / 10) * 254)]}"/>'
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

    def bars_geometry(self) -> dict | None:
        """Where everything goes in the bar chart (shared by its two layers); None if empty.
        Made once per sentence."""
        return self._per_sentence("bars geometry", self._bars_geometry)

    def _bars_geometry(self) -> dict | None:
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

    def bars_axes_svg(self, g: dict | None) -> str:
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

    def bars_values_svg(self, g: dict | None, query: int) -> str:
        """The bar chart's top layer for query ``query``, down to the zero line (the keys'
        labels under it keep their hover titles): its title, bars, numbers, masked keys."""
        state = self.state
        if g is None:
            return ""
        left, top, plot_h, cell, n = g["left"], g["top"], g["plot_h"], g["cell"], g["n"]
        row = state.weights[query]
        indices = colour_index(row)
        token = state.labels[query]
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
        seen = query + 1 if state.causal else n  # keys 0..seen-1 take part
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
                f'height="{bar:.1f}" fill="{HEX[indices[j]]}"/>'
            )
            if cell >= 30:
                inside = bar > plot_h - 14  # no room above a tall bar: write inside it
                y = top + plot_h - bar + (12 if inside else -4)
                colour = TEXT_ON[indices[j]] if inside else "#000000"
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
