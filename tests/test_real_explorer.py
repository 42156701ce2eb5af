"""Lesson 09's widgets: the grid of 72 maps and the explorer on real weights (no browser)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers.pretrained import load_minilm
from helpers.real_explorer import (
    AttentionGrid,
    RealAttentionExplorer,
    grid_mosaic,
    plot_attention_grid,
)


@pytest.fixture(scope="module")
def grid() -> AttentionGrid:
    return AttentionGrid("the cat sat on the mat", layer=0, head=2, query=2, model=load_minilm())


def test_the_grid_has_one_cell_per_layer_and_head(grid):
    assert len(grid._cells) == 6 and all(len(row) == 12 for row in grid._cells)
    assert grid.selected == (0, 2)
    assert "grid-selected" in grid._cells[0][2]._dom_classes
    assert ".grid-cell.grid-selected{outline" in grid._style.value


def test_picking_a_map_opens_it_in_the_explorer(grid):
    grid.select(3, 1)
    ex = grid.explorer
    assert (ex.layer, ex.head, grid.selected) == (3, 1, (3, 1))
    _, _, attention = load_minilm().forward("the cat sat on the mat")
    np.testing.assert_allclose(ex.weights, attention[3, 1], atol=1e-6)
    assert 'data-layer="3"' in ex._heatmap_html and "layer 3, head 1" in ex._heatmap_html
    assert "grid-selected" in grid._cells[3][1]._dom_classes
    assert "grid-selected" not in grid._cells[0][2]._dom_classes


def test_the_explorers_own_controls_move_the_grid(grid):
    grid.explorer.set_layer(5)
    grid.explorer.set_head(11)
    assert grid.selected == (5, 11)
    assert grid.explorer._layer_control.value == 5


def test_a_click_on_the_layer_and_head_buttons_moves_the_grid(grid):
    grid.explorer._layer_control.value = 2  # what a click in the browser does
    grid.explorer._head_control.value = 7
    assert grid.selected == (2, 7) and (grid.explorer.layer, grid.explorer.head) == (2, 7)
    assert [label for label, _ in grid.explorer._head_control.options][:3] == ["0", "1", "2"]
    row = grid.explorer._controls_box.children  # the layer buttons beside the head buttons
    assert row[:2] == (grid.explorer._layer_control, grid.explorer._head_control)


def test_a_new_sentence_redraws_every_thumbnail(grid):
    before = grid._style.value
    grid.explorer.set_sentence("The animal didn't cross the street because it was too tired.")
    assert grid._style.value != before and grid._style.value.count("background-image") == 72
    assert grid.explorer.tokens[0] == "[CLS]" and grid.explorer.tokens[-1] == "[SEP]"
    grid.explorer.set_sentence("the cat sat on the mat")


def test_long_text_is_cut_to_64_tokens_and_says_so():
    ex = RealAttentionExplorer("word " * 100, model=load_minilm())
    assert len(ex.tokens) == 64 and ex.tokens[-1] == "[SEP]"
    assert "102 tokens" in ex.message
    np.testing.assert_allclose(ex.weights.sum(axis=1), 1, atol=1e-5)


def test_no_causal_mask_and_no_temperature_on_the_encoder():
    ex = RealAttentionExplorer(model=load_minilm())
    with pytest.raises(ValueError, match="encoder"):
        ex.set_causal(True)
    with pytest.raises(ValueError, match="fixed"):
        ex.set_temperature(2.0)
    with pytest.raises(ValueError, match="layer 6 does not exist"):
        ex.set_layer(6)
    assert ex._causal_control.layout.display == "none"


def test_static_grid_figure():
    attention = load_minilm().forward("the cat sat on the mat")[2]
    mosaic = grid_mosaic(attention, gap=1)
    assert mosaic.shape == (6 * 9 - 1, 12 * 9 - 1)
    np.testing.assert_array_equal(mosaic[:8, :8], attention[0, 0])
    assert np.isnan(mosaic[8]).all()
    fig = plot_attention_grid(attention, ["t"] * 8, selected=(1, 2))
    assert fig.axes[0].get_ylabel() == "layer"


def test_in_a_kernel_a_click_on_the_grid_moves_the_buttons_a_moment_after_the_map():
    """With an event loop running (a kernel), a map clicked in the grid is sent first, the
    buttons and the outline after; picked from code, everything moves at once."""
    import asyncio

    from helpers.explorer import AFTER_PAINT_S

    grid = AttentionGrid(model=load_minilm())

    async def pick() -> tuple:
        grid._cells[4][5].click()  # what a click in the browser does
        at_once = (grid.explorer.head, grid.explorer._head_control.value, grid.selected)
        await asyncio.sleep(2 * AFTER_PAINT_S)
        later = (grid.explorer._head_control.value, grid.selected)
        grid.select(1, 3)
        return at_once, later, (grid.explorer._head_control.value, grid.selected)

    at_once, later, from_code = asyncio.run(pick())
    assert at_once == (5, 0, (0, 0))  # the map moved, the buttons not yet
    assert later == (5, (4, 5))
    assert from_code == (3, (1, 3))


def test_short_sentences_draw_cells_as_squares_long_ones_as_a_picture():
    ex = RealAttentionExplorer("the cat sat on the mat", model=load_minilm())
    svg = ex._heatmap_html
    assert "<image" not in svg and len(re.findall(r"M[\d.]+ [\d.]+h", svg)) == 8 * 8
    ex.set_sentence("word " * 30)  # 32 tokens: more than RECT_TOKENS
    assert "<image" in ex._heatmap_html
