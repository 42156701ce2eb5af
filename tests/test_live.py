"""LiveFigure renders once per refresh, keeps its first layout, and show() leaves a PNG."""

from unittest import mock

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers.live import LiveFigure, show
from helpers.plots import heatmap_alt, plot_heatmap, show_figure

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


def make_animated_live():
    live = LiveFigure(figsize=(3, 2))
    ax = live.figure.subplots()
    ax.set(xlim=(0, 4), ylim=(0, 4))
    (line,) = ax.plot([0, 1], [0, 1], color="black")
    live.animate([line, ax.title])
    return live, ax, line


def test_animated_artists_are_redrawn_on_a_kept_background():
    live, ax, line = make_animated_live()
    with mock.patch.object(live.figure.canvas, "draw", wraps=live.figure.canvas.draw) as draw:
        live.refresh()
        first = bytes(live.image.value)
        line.set_data([0, 4], [4, 0])
        ax.set_title("moved")
        live.refresh()
    assert draw.call_count == 1  # the background was drawn once, then reused
    assert first.startswith(PNG_SIGNATURE)
    assert bytes(live.image.value) != first


def test_a_blitted_picture_equals_a_full_redraw():
    live, ax, line = make_animated_live()
    live.refresh()
    line.set_data([0, 4], [4, 0])
    live.refresh()
    blitted = bytes(live.image.value)
    again, ax2, line2 = make_animated_live()
    line2.set_data([0, 4], [4, 0])
    again.refresh()  # first refresh: a full draw of the same state
    assert blitted == bytes(again.image.value)


def test_a_new_background_key_redraws_the_axes():
    live, ax, _ = make_animated_live()
    live.refresh(background=4)
    small = bytes(live.image.value)
    ax.set_ylim(0, 8)  # the ticks change: a different background
    live.refresh(background=8)
    assert bytes(live.image.value) != small
    ax.set_ylim(0, 4)
    live.refresh(background=4)
    assert bytes(live.image.value) == small


def test_a_picture_key_resends_the_kept_png_without_drawing():
    live, _ = make_live()
    live.refresh(key="a")
    first = bytes(live.image.value)
    live.refresh(key="b")
    with mock.patch.object(live, "_render", side_effect=AssertionError("drew again")):
        live.refresh(key="a")
    assert bytes(live.image.value) == first


def test_show_names_the_live_image_and_the_static_picture(monkeypatch):
    """The live figure's <img> gets the alt text as its title (a NamedImage's tooltip, which
    ipywidgets 8.1.9 can only display with a description), the static PNG an <img alt>."""
    shown = []
    monkeypatch.setattr("helpers.live.display", lambda bundle, **kw: shown.append((bundle, kw)))
    live = LiveFigure(figsize=(2, 2))
    live.figure.subplots().plot([0, 1])
    live.refresh()
    show(widgets.VBox([live.image]), live, alt="a line from 0 to 1")
    assert live.image.tooltip == "a line from 0 to 1"
    assert live.image.get_state()["description"] == ""
    ((bundle, kw),) = shown
    assert 'alt="a line from 0 to 1"' in bundle["text/html"]
    assert bundle["text/plain"] == "a line from 0 to 1"
    with pytest.raises(ValueError, match="text alternative"):
        show(live.image, live, alt=" ")


def test_show_figure_gives_the_png_its_text_alternative_and_closes_the_figure(monkeypatch):
    shown = []
    monkeypatch.setattr("helpers.plots.display", lambda bundle, **kw: shown.append(bundle))
    M = np.array([[0.2, 0.8], [0.6, 0.4]])
    fig, ax = plt.subplots()
    plot_heatmap(M, ["a", "b"], ["x", "y"], ax=ax)
    alt = heatmap_alt(M, ["a", "b"], ["x", "y"], "weights")
    assert alt == (
        "Heatmap of weights: 2 rows (query) by 2 columns (key); largest 0.80 (query 'a', key "
        "'y'), smallest 0.20 (query 'a', key 'x')."
    )
    show_figure(fig, alt)
    (bundle,) = shown
    assert f'alt="{alt}"'.replace("'", "&#x27;") in bundle["text/html"]
    assert bundle["text/html"].startswith('<img src="data:image/png;base64,')
    assert not plt.fignum_exists(fig.number)
