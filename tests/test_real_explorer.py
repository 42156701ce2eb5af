"""Lesson 09's widgets: the grid of 72 maps and the explorer on real weights (no browser)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers.explorer.grid import (
    AttentionGrid,
    RealAttentionExplorer,
    grid_mosaic,
    plot_attention_grid,
)
from helpers.pretrained import load_minilm


@pytest.fixture(scope="module")
def grid() -> AttentionGrid:
    return AttentionGrid("the cat sat on the mat", layer=0, head=2, query=2, model=load_minilm())


def test_the_grid_has_one_cell_per_layer_and_head(grid):
    picker = grid.picker
    assert (picker.n_layers, picker.n_heads) == (6, 12) and len(picker.thumbnails) == 72
    assert all(uri.startswith("data:image/png;base64,") for uri in picker.thumbnails)
    assert grid.selected == (0, 2) and picker.selected == [0, 2]
    assert "rows are layers 0 to 5, columns are heads 0 to 11" in picker.label
    assert "grid-selected" in picker._css and 'role", "grid"' in picker._esm


def test_picking_a_map_opens_it_in_the_explorer(grid):
    grid.select(3, 1)
    ex = grid.explorer
    assert (ex.layer, ex.head, grid.selected) == (3, 1, (3, 1))
    _, _, attention = load_minilm().forward("the cat sat on the mat")
    np.testing.assert_allclose(ex.weights, attention[3, 1], atol=1e-6)
    assert 'data-layer="3"' in ex.heatmap_svg and "layer 3, head 1" in ex.heatmap_svg
    assert grid.picker.selected == [3, 1]  # the browser moves the outline to it


def test_the_explorers_own_controls_move_the_grid(grid):
    grid.explorer.set_layer(5)
    grid.explorer.set_head(11)
    assert grid.selected == (5, 11)
    assert grid.explorer.parts.layer.value == 5


def test_a_click_on_the_layer_and_head_buttons_moves_the_grid(grid):
    grid.explorer.parts.layer.value = 2  # what a click in the browser does
    grid.explorer.parts.head.value = 7
    assert grid.selected == (2, 7) and (grid.explorer.layer, grid.explorer.head) == (2, 7)
    assert [label for label, _ in grid.explorer.parts.head.options][:3] == ["0", "1", "2"]
    row = grid.explorer.parts.controls_box.children  # the layer buttons beside the head buttons
    assert row[:2] == (grid.explorer.parts.layer, grid.explorer.parts.head)


def test_a_new_sentence_redraws_every_thumbnail(grid):
    before = list(grid.picker.thumbnails)
    grid.explorer.set_sentence("The animal didn't cross the street because it was too tired.")
    after = grid.picker.thumbnails
    assert len(after) == 72 and all(new != old for new, old in zip(after, before))
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
    assert ex.parts.causal.layout.display == "none"


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

    from helpers.explorer.preview import AFTER_PAINT_S

    grid = AttentionGrid(model=load_minilm())

    async def pick() -> tuple:
        grid.picker.selected = [4, 5]  # what a click (or Enter) in the browser sends
        at_once = (grid.explorer.head, grid.explorer.parts.head.value, grid.selected)
        await asyncio.sleep(2 * AFTER_PAINT_S)
        later = (grid.explorer.parts.head.value, grid.selected)
        grid.select(1, 3)
        return at_once, later, (grid.explorer.parts.head.value, grid.selected)

    at_once, later, from_code = asyncio.run(pick())
    assert at_once == (5, 0, (0, 0))  # the map moved, the buttons not yet
    assert later == (5, (4, 5))
    assert from_code == (3, (1, 3))


def test_a_pick_in_the_browser_is_one_custom_message_and_is_not_sent_back(monkeypatch):
    """The browser sends {"pick": [layer, head]} (no state update, so no echo ahead of the
    map); the kernel opens that map and keeps ``selected`` without sending it back."""
    grid = AttentionGrid(model=load_minilm())
    sent = []
    monkeypatch.setattr(grid.picker.comm, "send", lambda data=None, **kw: sent.append(data))

    def from_browser(content) -> None:
        data = {"method": "custom", "content": content}
        grid.picker.comm.handle_msg({"content": {"data": data}, "buffers": []})

    from_browser({"pick": [4, 5]})
    assert (grid.explorer.layer, grid.explorer.head, grid.selected) == (4, 5, (4, 5))
    assert grid.picker.selected == [4, 5]
    assert not [d for d in sent if "selected" in d.get("state", {})], sent
    from_browser({"pick": "4,5"})  # not a pick: ignored
    from_browser({"other": 1})
    assert (grid.explorer.layer, grid.explorer.head) == (4, 5)
    assert "model.send({ pick: [k, a] })" in grid.picker._esm


def test_the_grid_draws_a_pick_from_the_maps_the_explorer_holds_in_the_browser():
    """The grid reads the explorer's preview (``maps_from``): its maps[layer * 12 + head] is
    the heatmap's map layer after select(layer, head) (the browser shows it at a pick, before
    the kernel sends the same string), for this sentence and for a new one. The 72 maps are
    sent once, by the explorer, not by the grid too."""
    grid = AttentionGrid(model=load_minilm())
    preview = grid.explorer.parts.preview
    assert grid.picker.maps_from is preview and not hasattr(grid.picker, "maps")
    for sentence in (None, "a new sentence, longer than the first one"):
        if sentence:
            grid.explorer.set_sentence(sentence)
        assert len(preview.maps) == 6 * 12
        for layer, head in [(0, 0), (4, 5), (5, 11), (2, 3)]:
            grid.select(layer, head)
            shown = grid.explorer.parts.heatmap_map.value
            assert preview.maps[layer * 12 + head] == shown
            assert f'data-layer="{layer}" data-head="{head}"' in shown
    assert "target.innerHTML = svg" in grid.picker._esm  # pending.js, shared with the preview
    assert 'mapsModel.get("maps")' in grid.picker._esm


def test_short_sentences_draw_cells_as_squares_long_ones_as_a_picture():
    ex = RealAttentionExplorer("the cat sat on the mat", model=load_minilm())
    svg = ex.heatmap_svg
    assert "<image" not in svg and len(re.findall(r"M[\d.]+ [\d.]+h", svg)) == 8 * 8
    ex.set_sentence("word " * 30)  # 32 tokens: more than RECT_TOKENS
    assert "<image" in ex.heatmap_svg


def test_the_message_and_the_table_name_the_layer_and_head(grid):
    ex = grid.explorer
    grid.select(2, 5)
    assert "layer 2, head 5" in ex.message and ex.message == ex.parts.tokens.message
    before = ex.message
    grid.select(4, 5)
    assert ex.message != before and "layer 4, head 5" in ex.message
    assert all("layer 4, head 5" in m for m in ex.parts.tokens.messages)
    table = ex.table_html()
    assert "<caption>Attention weights, layer 4, head 5:" in table and "masked" not in table
    assert table.count('<th scope="row">') == len(ex.tokens)


def test_the_static_figure_names_the_layer_and_head(grid):
    grid.select(1, 7)
    fig = grid.explorer.static_figure(dpi=40)
    assert fig.axes[0].get_title() == "layer 1, head 7: rows = query, columns = key"


def test_lesson_10s_explorer_is_causal_from_its_first_picture_and_names_its_layer():
    from helpers import induction
    from helpers.explorer.induction import InductionExplorer

    untrained = induction.InductionModel(induction.init_params(64, 64, 4, 32, seed=3), n_heads=4)
    ex = InductionExplorer("ab ab", layer=1, head=2, query=0, model=untrained)
    assert ex.causal and "only to itself" in ex.message and "layer 1, head 2, causal" in ex.message
    assert 'data-causal="1"' in ex.heatmap_svg
    table = ex.table_html()
    assert "layer 1, head 2, causal mask" in table and table.count("<td>masked</td>") == 10
    title = ex.static_figure(dpi=40).axes[0].get_title()
    assert title == "layer 1, head 2: rows = query, columns = key"
