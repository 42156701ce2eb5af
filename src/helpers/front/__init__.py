"""The course's front end: small browser modules (anywidget) where ipywidgets has no control,
for the explorer and the lessons' sliders.

* :class:`TokenRow`: the token row (a radio group with arrow keys, Home and End) and the
  message line (``role="status"``, ``aria-live="polite"``). A pick moves its ``followers``
  (the Stacks that hold each query's pictures) in the browser, so it never waits for the
  kernel.
* :class:`TableView`: a "table view" toggle and the weights as an HTML table.
* :class:`GridPicker`: lesson 09's layer x head grid of maps, a keyboard grid (``role="grid"``).
* :class:`Slider`: a named, keyboard-driven slider that says its value in words (the lessons'
  sliders, through :func:`helpers.live.slider`).
* :class:`PressedStates`: shows nothing; tells a screen reader which ipywidgets toggle buttons
  around it are pressed (``aria-pressed``).
* :class:`MapPreview`: every map of the explorer, held in the browser, so that a click on its
  head or layer buttons (or a pick in the grid) draws the map without waiting for the kernel.

Each class is a few traits; the JavaScript beside this file (``*.js``, ``*.css``) draws them and
handles the keys. The contract their DOM keeps (roles, names, keys) is what the browser tests
check (``tests/browser``).
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import ipywidgets as widgets
import traitlets as t

__all__ = ["GridPicker", "MapPreview", "PressedStates", "Slider", "TableView", "TokenRow"]

_HERE = Path(__file__).parent


def _source(name: str, *shared: str) -> str:
    """The text of file ``name`` beside this one, after the ``shared`` files it uses (an
    anywidget module is one file: no imports between them)."""
    return "\n".join((_HERE / part).read_text(encoding="utf-8") for part in (*shared, name))


class TokenRow(anywidget.AnyWidget):
    """One button per token (``tokens``), ``index`` the selected one (None when empty), and the
    message line: ``note`` then ``messages[index]``.

    ``followers``: (widget, trait name) pairs that a pick in the browser sets to the picked
    index there, at once, without sending them to the kernel; the kernel hears of the pick
    through ``index`` alone (a moment later: after the browser painted it) and is expected to
    set its copies of the followers itself, without sending them back."""

    _esm = _source("token_row.js", "after_paint.js")
    _css = _source("token_row.css")
    tokens = t.List(t.Unicode()).tag(sync=True)
    index = t.Int(None, allow_none=True).tag(sync=True)
    followers = t.List(t.Tuple(t.Instance(widgets.Widget), t.Unicode())).tag(
        sync=True, **widgets.widget_serialization
    )
    messages = t.List(t.Unicode()).tag(sync=True)
    note = t.Unicode("").tag(sync=True)
    label = t.Unicode("query token").tag(sync=True)

    @property
    def message(self) -> str:
        """The message line's text, as the browser shows it."""
        i = self.index
        shown = self.messages[i] if i is not None and 0 <= i < len(self.messages) else ""
        return " ".join(part for part in (self.note, shown) if part)


class TableView(anywidget.AnyWidget):
    """A toggle button (``label``, pressed when ``open``) over ``table`` (HTML); the row whose
    ``data-query`` is ``index`` gets ``aria-current="true"`` in the browser."""

    _esm = _source("table_view.js")
    _css = _source("table_view.css")
    table = t.Unicode("").tag(sync=True)
    pressed = t.Bool(False).tag(sync=True)
    index = t.Int(None, allow_none=True).tag(sync=True)
    label = t.Unicode("table view").tag(sync=True)


class MapPreview(anywidget.AnyWidget):
    """Shows nothing: holds the explorer's ``maps`` (its heatmap's bottom layer for every
    (layer, head), row by row, ``n_heads`` a row, as ``AttentionExplorer.map_svg_of`` draws
    them) for the sentence, mask and temperature shown. A click on the explorer's head or
    layer buttons puts the asked-for map into its heatmap at once, in the browser; the buttons
    tell the kernel as before, which sends the same map with its bars and words. Until that
    answer arrives the explorer is marked pending (class ``explorer-pending``): its bars and
    message, still the previous map's, are dimmed and ``aria-busy``; after a second, a line
    under the message (a live region) says it waits for the kernel."""

    _esm = _source("map_preview.js", "pending.js")
    _css = _source("map_preview.css")
    maps = t.List(t.Unicode()).tag(sync=True)
    n_heads = t.Int(1).tag(sync=True)
    # The map shown at every value of the explorer's temperature slider (empty where the model
    # fixes the temperature): a move of the slider draws its map at once.
    temperature_maps = t.List(t.Unicode()).tag(sync=True)
    # For a page with no kernel only (the course's website; empty in a live notebook): every
    # state's pictures, words and table, keyed by explorer.preview.offline_key ("states"), the
    # slider's temperatures as keys have them, the causal toggle's looks, and the explorer's
    # widgets the browser sets from them (``offline_parts``, by their names in ExplorerParts):
    # a click then draws the whole state with no kernel.
    offline = t.Dict().tag(sync=True)
    offline_parts = t.Dict(value_trait=t.Instance(widgets.Widget)).tag(
        sync=True, **widgets.widget_serialization
    )


class PressedStates(anywidget.AnyWidget):
    """Shows nothing: every ipywidgets toggle button in the same output (``ToggleButtons``'
    buttons, a ``ToggleButton``) gets ``aria-pressed``, kept equal to whether it is pressed.
    ipywidgets 8 marks a pressed button with a CSS class only, which a screen reader does not
    hear. Put one in the box that holds the buttons (:func:`helpers.live.pressed_states`)."""

    _esm = _source("pressed_states.js")


class GridPicker(anywidget.AnyWidget):
    """A keyboard grid of ``n_layers`` x ``n_heads`` maps (``thumbnails``: image URIs, row by
    row); ``selected`` = [layer, head] is the picked one, set by the browser on a click, Enter
    or Space, and by the kernel when the explorer shows another map.

    ``maps_from`` (optional): the explorer's :class:`MapPreview`, whose ``maps`` (every
    cell's map layer, row by row) a pick in the browser puts into the explorer's heatmap at
    once, before the kernel answers (it sends the same map).

    A pick in the browser moves the outline there and sends the kernel one custom message,
    ``{"pick": [layer, head]}``, not a state update: a state update makes the kernel send an
    echo of it back before anything else (ipywidgets' ``echo_update``), one more message ahead
    of the new map on the way to the screen. The kernel sets ``selected`` from it without
    sending it back (as it applies a state update from the browser), so observers of
    ``selected`` hear a browser pick as before.
    """

    _esm = _source("attention_grid.js", "after_paint.js", "pending.js")
    _css = _source("attention_grid.css")
    n_layers = t.Int(1).tag(sync=True)
    n_heads = t.Int(1).tag(sync=True)
    cell_px = t.Int(56).tag(sync=True)
    thumbnails = t.List(t.Unicode()).tag(sync=True)
    maps_from = t.Instance(MapPreview, allow_none=True).tag(
        sync=True, **widgets.widget_serialization
    )
    selected = t.List(t.Int(), default_value=[0, 0], minlen=2, maxlen=2).tag(sync=True)
    label = t.Unicode("attention maps").tag(sync=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.on_msg(self._on_pick)

    def _on_pick(self, _widget, content, _buffers) -> None:
        """A pick in the browser: ``selected`` as the browser has it already (not sent back)."""
        pick = content.get("pick") if isinstance(content, dict) else None
        if not (
            isinstance(pick, list)
            and len(pick) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in pick)
        ):
            return  # not a pick (anywidget's own messages come here too)
        with self._lock_property(selected=pick), self.hold_trait_notifications():
            self.selected = pick


def _set_quietly(widget: widgets.Widget, **values) -> None:
    """Set traits of ``widget`` that the browser already shows, without sending them back.

    ipywidgets does not send a trait whose new value its property lock holds (that is how it
    applies the browser's own updates); the lock in place (the browser update being applied
    now) is kept and restored."""
    saved = widget._property_lock
    widget._property_lock = {**saved, **values}
    try:
        for name, value in values.items():
            setattr(widget, name, value)
    finally:
        widget._property_lock = saved


class Slider(anywidget.AnyWidget):
    """A slider over ``options`` that a keyboard moves and a screen reader names and reads
    (``slider.js``): a native range input with a ``<label>`` (``description``), its value said
    in words (``labels[index]``, e.g. "d_k = 64"), and "−"/"+" buttons beside it.

    ``value`` is ``options[index]``, in Python only (the browser knows the index and the
    labels); observe ``"value"`` as with an ipywidgets slider. Build it with
    :func:`helpers.live.slider`.

    The browser sends one index at a time: the next waits until the kernel has run the
    observers of the last and confirmed it (``drawn``), so a drag never queues a backlog of
    redraws and the last value always wins.
    """

    _esm = _source("slider.js")
    _css = _source("slider.css")
    index = t.Int(0).tag(sync=True)
    labels = t.List(t.Unicode()).tag(sync=True)
    description = t.Unicode("").tag(sync=True)
    disabled = t.Bool(False).tag(sync=True)
    drawn = t.Int(0).tag(sync=True)  # counts the indices the kernel has handled
    # What the last move drew, in words, for a screen reader (a visually hidden status line):
    # the lesson sets it in its observer, e.g. "n = 4 tokens give 16 query-key pairs".
    status = t.Unicode("").tag(sync=True)
    # Pictures held in the browser (:meth:`helpers.live.LiveFigure.film`): one PNG per option
    # and its text alternative. A move then shows its picture in ``image`` at once, in the
    # browser, and says its text in the status line, without waiting for the kernel; the kernel
    # sets its own copies when the move reaches it (not sent back). Empty: the lesson's
    # observers draw each move (lesson 00's sentence).
    # (Or one text per option for a Label, ``hold_texts``.)
    pictures = t.List(t.Union([t.Bytes(), t.Unicode()])).tag(sync=True)
    alts = t.List(t.Unicode()).tag(sync=True)
    image = t.Instance(widgets.DOMWidget, allow_none=True).tag(
        sync=True, **widgets.widget_serialization
    )
    options = t.List()
    value = t.Any()

    def __repr__(self) -> str:
        # What a notebook prints for it where widgets do not show (and nbval compares): no
        # object address, which differs at every run.
        ends = f"{self.labels[0]!r} .. {self.labels[-1]!r}" if self.labels else "none"
        return (
            f"Slider(description={self.description!r}, value={self.value!r}, "
            f"{len(self.options)} options: {ends})"
        )

    @t.validate("index")
    def _valid_index(self, proposal):
        index = proposal["value"]
        if not 0 <= index < len(self.options):
            raise t.TraitError(
                f"{self.description or 'slider'}: index {index} is not in 0 .. "
                f"{len(self.options) - 1}"
            )
        return index

    def hold_pictures(self, image: widgets.Image, pictures: list[bytes], alts: list[str]) -> None:
        """Hand the browser one picture per option (PNG bytes) and its text alternative, shown
        in ``image`` (its value and tooltip) the moment the slider moves there; ``image`` shows
        the current option's at once."""
        if len(pictures) != len(self.options) or len(alts) != len(self.options):
            raise ValueError(
                f"{self.description or 'slider'}: {len(pictures)} pictures and {len(alts)} "
                f"text alternatives for {len(self.options)} options: one each"
            )
        if not all(isinstance(alt, str) and alt.strip() for alt in alts):
            raise ValueError(
                f"{self.description or 'slider'}: every picture needs a text alternative"
            )
        with self.hold_sync():
            self.image, self.pictures, self.alts = image, list(pictures), list(alts)
        image.value = pictures[self.index]
        if isinstance(image, widgets.Image):  # a picture's text alternative: its title
            image.tooltip = alts[self.index]

    def hold_texts(self, label: widgets.Label, texts: list[str], said: list[str] | None = None):
        """Like :meth:`hold_pictures` for a sentence: one text per option, shown in ``label``
        the moment the slider moves there (no kernel on the way); ``said`` (default: the
        texts) is what the status line says of each."""
        if not all(isinstance(text, str) for text in texts):
            raise ValueError(f"{self.description or 'slider'}: every text must be a str")
        self.hold_pictures(label, texts, list(texts) if said is None else said)

    def _follow_browser(self, i: int) -> None:
        """With pictures held: the image, its text alternative and the status line at option
        ``i``. A move made in the browser shows them there already: the kernel sets its copies
        without sending them back."""
        if not self.pictures or self.image is None or i >= len(self.pictures):
            return
        picture, alt = self.pictures[i], self.alts[i]
        image = {"value": picture}
        if isinstance(self.image, widgets.Image):
            image["tooltip"] = alt
        if self._property_lock.get("index") == i:  # the browser's move: it shows it already
            _set_quietly(self.image, **image)
            _set_quietly(self, status=alt)
        else:  # set in Python: the browser learns of it from here
            for name, value in image.items():
                setattr(self.image, name, value)
            self.status = alt

    @t.observe("index")
    def _index_moved(self, change):
        self._follow_browser(change["new"])
        try:
            self.value = self.options[change["new"]]  # runs the lesson's observers of "value"
        finally:  # even if one of them failed: the browser must not wait for ever
            self.drawn += 1  # tells the browser it may send the next index

    @t.validate("value")
    def _valid_value(self, proposal):
        if proposal["value"] not in self.options:
            shown = f" ({self.labels[0]} .. {self.labels[-1]})" if self.labels else ""
            raise t.TraitError(
                f"{self.description or 'slider'}: {proposal['value']!r} is not one of its "
                f"values{shown}"
            )
        return proposal["value"]

    @t.observe("value")
    def _value_set(self, change):
        self.index = self.options.index(change["new"])
