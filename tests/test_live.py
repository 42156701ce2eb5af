"""LiveFigure renders once per refresh, keeps its first layout, and show() leaves a PNG."""

from unittest import mock

import numpy as np

from helpers.live import LiveFigure, show
from helpers.plots import plot_heatmap

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def make_live():
    live = LiveFigure(figsize=(3, 2))
    ax = live.figure.subplots()
    image = plot_heatmap(np.eye(3), ["a", "b", "c"], ["x", "y", "z"], ax=ax)
    return live, image


def test_refresh_sends_new_png_bytes_and_freezes_the_layout():
    live, image = make_live()
    live.refresh()
    first = bytes(live.image.value)
    assert first.startswith(PNG_SIGNATURE)
    assert live.figure.get_layout_engine() is None  # laid out once, then kept
    image.set_data(np.ones((3, 3)) - np.eye(3))
    live.refresh()
    assert bytes(live.image.value) != first


def test_show_reuses_the_last_render_and_offers_a_static_png():
    live, _ = make_live()
    live.refresh()
    with mock.patch.object(live, "_render", side_effect=AssertionError("rendered twice")):
        with mock.patch("helpers.live.display") as display:
            show(live.image, live, alt="a 3 by 3 heatmap")
    bundle = display.call_args.args[0]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == "a 3 by 3 heatmap"
    import base64

    assert base64.b64decode(bundle["image/png"]).startswith(PNG_SIGNATURE)
