"""The attention explorer's widgets: its controls and the layers its pictures go into.

:func:`build_parts` makes them and lays them out, and returns them by name as
:class:`ExplorerParts`; it wires nothing to the explorer (no observers: the explorer,
:class:`helpers.explorer.widget.AttentionExplorer`, observes ``parts.…`` itself) and draws nothing
(the pictures' layers start empty). The only link it makes is the token row's ``followers``:
what the token row moves in the browser with the query (the Stacks, the table), so that a
token pick is answered in the browser.

The CSS classes (``attention-explorer``, ``explorer-head``, ...), the layout and the names
are what the browser tests, the accessibility audit and the browser modules
(:mod:`helpers.front`) rely on.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import ipywidgets as widgets
import numpy as np
from ipywidgets.widgets.widget_string import HTMLStyle

from .._validate import ArgumentTypeError
from ..front import MapPreview, PressedStates, Slider, TableView, TokenRow
from ..live import slider

__all__ = [
    "ExplorerParts", "TEMPERATURES", "TEMPERATURE_RANGE", "build_parts", "causal_look", "shown",
    "valid_temperature",
]  # fmt: skip

# The temperature slider's values: each 1.33 to 1.67 times the one before, from 0.1 to 10,
# with 1 (the paper's scaled dot product) among them.
TEMPERATURES = (0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0)
TEMPERATURE_RANGE = (TEMPERATURES[0], TEMPERATURES[-1])


def valid_temperature(t) -> float:
    """``t`` as one of the slider's ``TEMPERATURES`` (as a float), or a clear error."""
    shown = ", ".join(f"{v:g}" for v in TEMPERATURES)
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Real):
        raise ArgumentTypeError(
            f"temperature must be one of the slider's values ({shown}), got {t!r} of type "
            f"{type(t).__name__}"[:300]
        )
    t = float(t)
    for value in TEMPERATURES:  # 0.30000000000000004 is 0.3
        if math.isclose(t, value, rel_tol=1e-9):
            return value
    raise ValueError(f"temperature must be one of the slider's values ({shown}), got {t!r}")


def causal_look(on: bool) -> dict[str, str]:
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


def shown(stack: widgets.Stack) -> str:
    """The value of the Stack's child on screen ("" when none is)."""
    i = stack.selected_index
    return "" if i is None else stack.children[i].value


@dataclass(frozen=True)
class ExplorerParts:
    """An explorer's widgets (:attr:`AttentionExplorer.parts`). ``widget``: the whole explorer
    (CSS class ``attention-explorer``). Controls: ``text`` (the sentence box), ``tokens`` (the
    token row and message, a :class:`~helpers.front.TokenRow`), ``layer`` (None with
    one layer), ``head``, ``causal``, ``temperature``, ``table`` (the table view, a
    :class:`~helpers.front.TableView`) and ``controls_box`` (the row of layer, head,
    causal and temperature). Pictures: ``heatmap`` (a grid of three stacked layers:
    ``heatmap_map``, ``heatmap_axes`` and ``query_layers``, a Stack with one child per query),
    ``bars`` (``bars_axes`` under ``bar_values``, a Stack). ``followers``: what the token row
    moves in the browser with the query (the Stacks and the table). ``preview``: every map's
    bottom layer, held in the browser for the head and layer buttons (a
    :class:`~helpers.front.MapPreview`, not shown)."""

    text: widgets.Text
    tokens: TokenRow
    layer: widgets.ToggleButtons | None
    head: widgets.ToggleButtons
    causal: widgets.ToggleButton
    temperature: Slider
    table: TableView
    controls_box: widgets.HBox
    heatmap: widgets.GridBox
    heatmap_map: widgets.HTML
    heatmap_axes: widgets.HTML
    query_layers: widgets.Stack
    bars: widgets.GridBox
    bars_axes: widgets.HTML
    bar_values: widgets.Stack
    preview: MapPreview
    widget: widgets.VBox
    # Each Stack's children come from a pool that only grows (to the longest sentence), so a
    # new sentence reuses them; they share one layout and one style (fewer widgets).
    _pools: tuple = field(default_factory=lambda: ([], []), init=False, repr=False)
    _child_look: dict = field(
        default_factory=lambda: {"layout": widgets.Layout(), "style": HTMLStyle()},
        init=False,
        repr=False,
    )

    def __post_init__(self):
        self.tokens.followers = list(self.followers)

    @property
    def stacks(self) -> tuple[widgets.Stack, widgets.Stack]:
        """The Stacks that switch with the query in the browser."""
        return (self.query_layers, self.bar_values)

    @property
    def followers(self) -> tuple[tuple[widgets.Widget, str], ...]:
        """What the token row moves in the browser with the query (its ``followers``):
        (widget, trait name) pairs."""
        return (*((stack, "selected_index") for stack in self.stacks), (self.table, "index"))

    def fit_stacks(self, n: int) -> None:
        """Give each Stack ``n`` children (empty until drawn), from its pool."""
        for stack, pool in zip(self.stacks, self._pools):
            pool.extend(widgets.HTML(**self._child_look) for _ in range(n - len(pool)))
            stack.children = tuple(pool[:n])


def _head_and_layer(n_layers: int, n_heads: int, layer: int, head: int):
    """The head buttons, and the layer buttons where there are layers (else None)."""
    # Many heads, or layers too: short labels ("head 10" does not fit 12 in a row).
    short = n_layers > 1 or n_heads > 4
    head_control = widgets.ToggleButtons(
        options=[(str(a) if short else f"head {a}", a) for a in range(n_heads)],
        value=head,
        description="head" if short else "",
        tooltips=[f"head {a} of h = {n_heads}: its own W_Q, W_K, W_V" for a in range(n_heads)],
        style={"button_width": "40px" if short else "72px", "description_width": "40px"}
        if short
        else {"button_width": "72px"},
    )
    head_control.add_class("explorer-head")
    layer_control = None
    if n_layers > 1:
        layer_control = widgets.ToggleButtons(
            options=[(str(k), k) for k in range(n_layers)],
            value=layer,
            description="layer",
            tooltips=[f"layer {k} of 0..{n_layers - 1}" for k in range(n_layers)],
            style={"button_width": "40px", "description_width": "40px"},
        )
        layer_control.add_class("explorer-layer")
    return head_control, layer_control


def _heatmap(query_layers: widgets.Stack):
    """The heatmap's grid cell and its map and axes layers (``query_layers`` on top)."""
    # The heatmap is three pictures of one size stacked in one grid cell, each sent to the
    # browser only when it changed: the map (cells and numbers: head, mask, temperature), the
    # axes (labels, colour bar) and, on top, the selected query's label and row outline (the
    # Stack). In Chromium an update's time to new pixels grows with the bytes it sends and the
    # SVG nodes the page must lay out again: a new head sends the map, not the rest.
    heatmap_map = widgets.HTML()
    heatmap_axes = widgets.HTML()
    layers = (heatmap_map, heatmap_axes, query_layers)
    for picture, name in zip(layers, ("map", "axes", "query")):
        picture.add_class(f"explorer-heatmap-{name}")
        picture.layout.grid_area = "heatmap"
    # The top layer only as tall as the rows (not stretched over the cell), so that the keys'
    # labels below it, in the axes layer, still show their hover titles.
    query_layers.layout.align_self = "flex-start"
    heatmap = widgets.GridBox(layers, layout=widgets.Layout(grid_template_areas='"heatmap"'))
    heatmap.add_class("explorer-heatmap")
    return heatmap, heatmap_map, heatmap_axes


def _bars(bar_values: widgets.Stack):
    """The bar chart's grid cell and its axes layer (``bar_values`` on top)."""
    # The bar chart likewise: its axes (the sentence) under its bars (every click).
    bars_axes = widgets.HTML()
    bars_axes.add_class("explorer-bars-axes")
    bar_values.add_class("explorer-bars-values")
    bar_values.layout.align_self = "flex-start"  # down to the zero line only
    for picture in (bars_axes, bar_values):
        picture.layout.grid_area = "bars"
    bars = widgets.GridBox(
        (bars_axes, bar_values), layout=widgets.Layout(grid_template_areas='"bars"')
    )
    bars.add_class("explorer-bars")
    return bars, bars_axes


def _layout(text, tokens, table, heatmap, bars, preview, controls: list, fixed_causal,
            fixed_temperature):  # fmt: skip
    """The explorer's page: the sentence, the token row, the controls (those the model does not
    fix: ``controls`` is layer, head, mask, temperature), the table, the pictures."""
    _, _, causal_control, temperature_control = controls
    # What the model fixes (an encoder's mask, a trained model's scale) is not a control.
    if fixed_causal is not None:
        causal_control.layout.display = "none"
    if fixed_temperature is not None:
        temperature_control.layout.display = "none"
    controls_box = widgets.HBox(
        [control for control in controls if control is not None],
        layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
    )
    widget = widgets.VBox(
        [
            text,
            tokens,
            controls_box,
            table,
            widgets.HBox(
                [heatmap, bars],
                layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"),
            ),
            preview,
            PressedStates(layout=widgets.Layout(display="none")),  # which button is pressed, said
        ]
    )
    widget.add_class("attention-explorer")
    return controls_box, widget


def build_parts(
    n_layers: int,
    n_heads: int,
    layer: int,
    head: int,
    causal: bool,
    temperature: float,
    fixed_causal: bool | None = None,
    fixed_temperature: float | None = None,
) -> ExplorerParts:
    """The explorer's widgets for a model of ``n_layers`` x ``n_heads`` maps, its controls set
    to ``layer``, ``head``, ``causal`` and ``temperature``; what the model fixes
    (``fixed_causal``, ``fixed_temperature`` not None) is hidden. Nothing is observed."""
    text = widgets.Text(
        description="sentence",
        placeholder="type a sentence and press Enter",
        continuous_update=False,
        layout=widgets.Layout(width="420px", max_width="100%"),  # 200 % zoom: fits
    )
    text.add_class("explorer-text")
    # A token pick never waits for the kernel. Each query's pictures (its row's outline, its
    # bars) are one child of a Stack, and the token row sets the Stacks' selected_index in the
    # browser (its followers), so a pick shows the child that is already there; the token row
    # holds every query's message and switches it itself. The kernel only hears which query is
    # shown, once, after the browser painted it (jslinks sent one message per Stack, and the
    # kernel's answers to them delayed the paint: helpers/front/token_row.js). The
    # token row is a small browser module (helpers.front): a radio group with arrow
    # keys, and the message as a live region that screen readers announce.
    tokens = TokenRow()
    query_layers = widgets.Stack()
    bar_values = widgets.Stack()
    # The weights as a table, for anyone who cannot see the colours; its selected row follows
    # the token row in the browser too.
    table = TableView()
    table.layout.width = "100%"
    head_control, layer_control = _head_and_layer(n_layers, n_heads, layer, head)
    causal_control = widgets.ToggleButton(
        value=causal, layout=widgets.Layout(width="156px"), **causal_look(causal)
    )
    causal_control.add_class("explorer-causal")
    # The course's slider (helpers.live.slider): named, keyboard-driven, says "T = 0.5"; its
    # − and + buttons step without dragging. The explorer's preview holds the current map at
    # every temperature, so a move draws the map at once (map_preview.js).
    temperature_control = slider(
        "temperature", TEMPERATURES, value=valid_temperature(temperature), text="T = {:g}"
    )
    temperature_control.add_class("explorer-temperature")
    heatmap, heatmap_map, heatmap_axes = _heatmap(query_layers)
    bars, bars_axes = _bars(bar_values)

    # A head or layer change never waits for the kernel's new map either: the browser holds
    # every map (the preview, which shows nothing) and draws the one a button asks for (the
    # kernel then sends it again, with its bars and words). Lesson 04: 51 ms from a head click
    # to new pixels when it waited, against 26 ms for a do-nothing widget's round trip.
    preview = MapPreview(n_heads=n_heads, layout=widgets.Layout(display="none"))

    controls = [layer_control, head_control, causal_control, temperature_control]
    controls_box, widget = _layout(text, tokens, table, heatmap, bars, preview, controls,
                                   fixed_causal, fixed_temperature)  # fmt: skip
    return ExplorerParts(
        text=text,
        tokens=tokens,
        layer=layer_control,
        head=head_control,
        causal=causal_control,
        temperature=temperature_control,
        table=table,
        controls_box=controls_box,
        heatmap=heatmap,
        heatmap_map=heatmap_map,
        heatmap_axes=heatmap_axes,
        query_layers=query_layers,
        bars=bars,
        bars_axes=bars_axes,
        bar_values=bar_values,
        preview=preview,
        widget=widget,
    )
