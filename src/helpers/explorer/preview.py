"""What the explorer sends the browser beyond the state on screen, so that the browser can
switch by itself, and when: every head's map (a head or layer button), every temperature's map (the
slider), and, on a page with no kernel (the course's website), every state the controls reach.
:class:`PreviewStates` is a part of :class:`.widget.AttentionExplorer`; front/map_preview.js
reads what it sends. :func:`after_paint` sends the rest of a click's
pictures a moment after the one on screen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from .controls import TEMPERATURES, causal_look

__all__ = ["STATIC_PAGE", "PreviewStates", "offline_key", "after_paint"]

# Set to "1" by `make site` (tools/build_site.py) as it runs the lessons: each explorer then holds
# every state in the page, which has no kernel to draw them.
STATIC_PAGE = "COURSE_STATIC_PAGE"


def offline_key(n_layers: int, layer: int, head: int, causal: bool, temperature: float) -> str:
    """A state's key in the preview's ``offline`` states: the map's data- attributes (layer,
    head, causal, temperature) joined by "|", as map_preview.js reads them off a map."""
    return "|".join(
        (str(layer) if n_layers > 1 else "", str(head), str(int(causal)), f"{temperature:g}")
    )


class PreviewStates:
    """The explorer's previews (its ``parts.preview``), kept for the state it is in."""

    def _send_every_map(self) -> None:
        """Every (layer, head)'s map layer to the browser (the preview), when the sentence,
        mask or temperature changed: a head or layer button draws its map from them."""
        key = (self._causal, self._temperature)
        if key == self._preview_key:
            return
        self._preview_key = key
        self.parts.preview.maps = [
            self.map_svg_of(k, a) for k in range(self.n_layers) for a in range(self.n_heads)
        ]

    def _send_every_temperature(self) -> None:
        """The map shown, at every temperature of the slider, to the browser (the preview),
        when the sentence, layer, head or mask changed: a move of the temperature slider draws
        its map from them. None where the model fixes the temperature (no slider)."""
        if self.source.fixed_temperature is not None:
            return
        key = (self._layer, self._head, self._causal)
        if key == self._temperatures_key:
            return
        self._temperatures_key = key
        self.parts.preview.temperature_maps = [
            self._map_svg(self._layer, self._head, self._causal, t) for t in TEMPERATURES
        ]

    def _states(self) -> Iterator[tuple[int, int, bool, float]]:
        """Every (layer, head, causal, temperature) the controls can reach for this sentence."""
        fixed_causal, fixed_temperature = self.source.fixed_causal, self.source.fixed_temperature
        masks = (False, True) if fixed_causal is None else (fixed_causal,)
        temperatures = TEMPERATURES if fixed_temperature is None else (self._temperature,)
        for layer in range(self.n_layers):
            for head in range(self.n_heads):
                for causal in masks:
                    for temperature in temperatures:
                        yield layer, head, causal, temperature

    def _send_every_state(self) -> None:
        """For a page with no kernel (the course's website, ``COURSE_STATIC_PAGE=1``): every
        state's map, bars, messages and table, once per sentence, in the preview's ``offline``;
        the browser then switches head, layer, mask and temperature itself (map_preview.js).
        The axes (the sentence's labels, the colour bar) are the same in every state: not held.
        A live kernel never needs them (it draws each state when asked), so it never sends them.
        """
        if self._every_state_sent:
            return
        self._every_state_sent = True
        if not self._tokens:  # nothing to switch between
            self.parts.preview.offline = {}
            return
        states = {}
        n = len(self._tokens)
        for key in self._states():
            drawing = self._drawing_at(*key)
            geometry, bars = drawing.heatmap_geometry(), drawing.bars_geometry()
            states[offline_key(self.n_layers, *key)] = {
                "map": drawing.map_svg(geometry),
                "bars": [drawing.bars_values_svg(bars, i) for i in range(n)],
                "messages": [drawing.describe(i) for i in range(n)],
                "table": drawing.table_html(),
            }
        parts = self.parts
        preview = parts.preview
        with preview.hold_sync():
            preview.offline = {
                "states": states,
                "temperatures": [f"{t:g}" for t in TEMPERATURES],
                "looks": {str(int(on)): causal_look(on) for on in (False, True)},
            }
            preview.offline_parts = {
                name: part
                for name in (
                    "heatmap_map", "bar_values", "tokens", "table", "causal", "head", "layer",
                )
                if (part := getattr(parts, name)) is not None
            }  # fmt: skip


AFTER_PAINT_S = 0.03


def after_paint(callback) -> None:
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
