"""The attention explorer: every control combination draws, and what it draws is the math's."""

from __future__ import annotations

import base64
import html
import re
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers
from helpers.explorer import drawing, sources
from helpers.explorer.controls import build_parts, shown
from helpers.explorer.drawing import ExplorerDrawing, ExplorerState
from helpers.explorer.widget import MAX_TOKENS, TEMPERATURE_RANGE, TEMPERATURES, AttentionExplorer

TOKENS = helpers.tokenize(helpers.RUNNING_SENTENCE)


def reference_weights(tokens, head, causal, temperature, n_heads=2, seed=0, d_model=8):
    """The weights the explorer must show, computed straight from the helpers' math."""
    Z = helpers.build_Z(tokens, d_model, seed)
    W = helpers.seeded_projections(d_model, n_heads, seed)
    d_k = d_model // n_heads
    Q, K, V = (Z @ W[name][head] for name in ("W_Q", "W_K", "W_V"))
    mask = helpers.causal_mask(len(tokens)) if causal else None
    return helpers.scaled_dot_product_attention(
        Q, K, V, mask=mask, scale=1 / (np.sqrt(d_k) * temperature)
    )[1]


def decode_heatmap_png(svg: str) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The palette-index image and palette of the heatmap's cells, and the image's size."""
    match = re.search(
        r'<image x="[\d.]+" y="[\d.]+" width="(\d+)" height="(\d+)"[^>]*'
        r'href="data:image/png;base64,([^"]+)"',
        svg,
    )
    assert match, "the heatmap has no embedded PNG of its cells"
    png = base64.b64decode(match.group(3))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(
            kind + data
        )
        chunks[kind] = chunks.get(kind, b"") + data
        pos += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour_type) == (8, 3)
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, width + 1)
    assert (raw[:, 0] == 0).all()
    palette = np.frombuffer(chunks[b"PLTE"], np.uint8).reshape(-1, 3)
    return raw[:, 1:], palette, float(match.group(1)), float(match.group(2))


def shown_cell_colours(ex: AttentionExplorer) -> np.ndarray:
    """The RGB colour at the centre of each heatmap cell, as the browser would paint it: the
    fills of the cell rectangles (short sentences) or the pixels of the cell PNG (long ones)."""
    n = len(ex.tokens)
    cells = re.search(r'<g class="explorer-cells"[^>]*>(.*?)</g>', ex.heatmap_svg)
    if cells:  # one path per colour, one square "M<x> <y>h..." per cell
        squares = [
            (float(x), float(y), fill)
            for fill, d in re.findall(r'<path fill="#([0-9a-f]{6})" d="([^"]*)"/>', cells.group(1))
            for x, y in re.findall(r"M([\d.]+) ([\d.]+)h", d)
        ]
        assert len(squares) == n * n, f"{len(squares)} cell squares for {n} tokens"
        xs, ys = sorted({x for x, _, _ in squares}), sorted({y for _, y, _ in squares})
        assert len(xs) == len(ys) == n, "the squares do not form an n x n grid"
        rgb = np.zeros((n, n, 3))
        for x, y, fill in squares:
            rgb[ys.index(y), xs.index(x)] = [int(fill[k : k + 2], 16) for k in (0, 2, 4)]
        return rgb
    indices, palette, _, _ = decode_heatmap_png(ex.heatmap_svg)
    cell = indices.shape[0] / n
    centres = ((np.arange(n) + 0.5) * cell).astype(int)
    return palette[indices[np.ix_(centres, centres)]]


def expected_cell_colours(weights: np.ndarray, causal: bool) -> np.ndarray:
    import matplotlib

    # 255 viridis levels at 8 bits per channel: what a PNG can hold.
    rgb = (matplotlib.colormaps["viridis"](np.linspace(0, 1, 255))[:, :3] * 255).round()
    colours = rgb[np.clip(np.rint(weights * 254), 0, 254).astype(int)]
    if causal:
        grey = [int(helpers.plots.MASKED_GREY[i : i + 2], 16) for i in (1, 3, 5)]
        colours[~helpers.causal_mask(len(weights))] = grey
    return colours


# ------------------------------------------------------------------------------------ math


def test_default_shows_the_running_sentence_head_0_query_cat():
    ex = AttentionExplorer()
    assert ex.tokens == TOKENS
    assert (ex.head, ex.query, ex.causal, ex.temperature) == (0, 1, False, 1.0)
    np.testing.assert_allclose(ex.weights, reference_weights(TOKENS, 0, False, 1.0), atol=1e-12)


@pytest.mark.parametrize("head", [0, 1])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("temperature", [TEMPERATURE_RANGE[0], 1.0, TEMPERATURE_RANGE[1]])
def test_every_control_combination_shows_scaled_dot_product_attention(head, causal, temperature):
    ex = AttentionExplorer()
    ex.set_head(head)
    ex.set_causal(causal)
    ex.set_temperature(temperature)
    expected = reference_weights(TOKENS, head, causal, temperature)
    for i, token in enumerate(TOKENS):
        ex.select_query(i)
        np.testing.assert_allclose(ex.weights, expected, atol=1e-12)
        assert ex.query == i
        # The pixels shown are the weights' colours, masked cells grey.
        np.testing.assert_allclose(shown_cell_colours(ex), expected_cell_colours(expected, causal))
        # The bar chart and the message follow the query.
        assert f'data-query="{i}"' in ex.bars_svg
        assert f'query "{token}" (position {i})' in ex.bars_svg
        assert f'"{token}" (position {i})' in ex.message
        assert f'data-head="{head}"' in ex.heatmap_svg
        assert f'data-causal="{int(causal)}"' in ex.heatmap_svg


def test_the_widget_controls_drive_the_same_state_as_the_methods():
    ex = AttentionExplorer()
    ex.parts.head.value = 1
    ex.parts.causal.value = True
    ex.parts.temperature.value = 0.5
    ex.parts.tokens.index = 4  # a click on the fifth token button, as the browser sends it
    assert (ex.head, ex.causal, ex.temperature, ex.query) == (1, True, 0.5, 4)
    np.testing.assert_allclose(ex.weights, reference_weights(TOKENS, 1, True, 0.5), atol=1e-12)
    ex.parts.text.value = "a dog ran"
    assert ex.tokens == ["a", "dog", "ran"]
    assert ex.query == 2  # clipped to the last token of the shorter sentence
    np.testing.assert_allclose(
        ex.weights, reference_weights(["a", "dog", "ran"], 1, True, 0.5), atol=1e-12
    )


def test_a_pick_in_the_browser_sends_no_query_index_back(monkeypatch):
    """The browser already moved the Stacks and the table (the token row's followers). If the
    kernel sent its index back, a busy kernel handling an older pick would undo a newer one made
    meanwhile (seen in the browser: 'sat' checked after ArrowRight, End, Home)."""
    import ipywidgets

    ex = AttentionExplorer()
    sent = []
    monkeypatch.setattr(
        ipywidgets.Widget, "_send", lambda self, msg, buffers=None: sent.append((self, msg))
    )
    ex.parts.tokens.index = 4  # as the browser's update sets it
    assert ex.query == 4 and f'"{TOKENS[4]}" (position 4)' in ex.message
    assert f'query "{TOKENS[4]}" (position 4)' in ex.bars_svg  # the kernel's copies follow
    echoed = [
        (type(widget).__name__, sorted(msg.get("state", {})))
        for widget, msg in sent
        if widget is not ex.parts.tokens and {"selected_index", "index"} & set(msg.get("state", {}))
    ]
    assert echoed == [], echoed
    ex.select_query(1)  # from code, the browser must be told
    assert any("selected_index" in msg.get("state", {}) for _, msg in sent)


def test_the_methods_move_the_controls():
    ex = AttentionExplorer()
    ex.set_head(1)
    ex.set_causal(True)
    ex.set_temperature(2.0)
    ex.set_sentence("the dog sat")
    ex.select_query(2)
    assert ex.parts.head.value == 1
    assert ex.parts.causal.value is True
    assert ex.parts.temperature.value == 2.0
    assert ex.parts.text.value == "the dog sat"
    assert ex.parts.tokens.index == 2
    assert [stack.selected_index for stack in ex.parts.stacks] == [2, 2]
    assert ex.parts.table.index == 2


def test_rows_sum_to_one_and_masked_weights_are_exactly_zero():
    ex = AttentionExplorer(causal=True)
    np.testing.assert_allclose(ex.weights.sum(axis=1), 1.0)
    assert (ex.weights[np.triu_indices(len(TOKENS), k=1)] == 0).all()


def test_temperature_flattens_or_sharpens_the_distribution():
    ex = AttentionExplorer()

    def entropy(t):
        ex.set_temperature(t)
        A = ex.weights
        return -(A * np.log(A)).sum(axis=1)  # (n,): one per query

    cold, paper, hot = entropy(TEMPERATURE_RANGE[0]), entropy(1.0), entropy(TEMPERATURE_RANGE[1])
    assert (cold < paper).all() and (paper < hot).all()
    assert (hot > 0.99 * np.log(len(TOKENS))).all()  # nearly uniform at the hot end


def test_unknown_words_get_seeded_embeddings():
    ex = AttentionExplorer("Quantum zebras dance!")
    assert ex.tokens == ["quantum", "zebras", "dance", "!"]
    np.testing.assert_allclose(ex.weights, reference_weights(ex.tokens, 0, False, 1.0))


# ------------------------------------------------------------------------ edge cases


def test_one_token_sentence_attends_fully_to_itself():
    ex = AttentionExplorer("hello", query=3)
    assert ex.tokens == ["hello"] and ex.query == 0
    for causal in (False, True):
        ex.set_causal(causal)
        np.testing.assert_array_equal(ex.weights, [[1.0]])
        assert shown_cell_colours(ex).shape == (1, 1, 3)
        assert "only to itself" in ex.message if causal else "all 1 token" in ex.message
    assert ex.static_png().startswith(b"\x89PNG")


def test_empty_sentence_shows_a_message_not_a_traceback():
    ex = AttentionExplorer()
    ex.set_sentence("   ")
    assert ex.tokens == [] and ex.weights.shape == (0, 0)
    assert "empty" in ex.message
    assert "no tokens" in ex.heatmap_svg
    assert ex.parts.tokens.tokens == [] and ex.parts.tokens.index is None
    assert [len(stack.children) for stack in ex.parts.stacks] == [0, 0]
    assert "empty" in ex.parts.tokens.note and ex.parts.tokens.messages == []
    assert ex.parts.tokens.message == ex.message
    for action in (lambda: ex.set_head(1), lambda: ex.set_causal(True)):
        action()
    ex.set_temperature(3.0)
    assert ex.static_png().startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="it has 0 tokens"):
        ex.select_query(0)
    ex.set_sentence("the cat")  # and it recovers
    assert ex.tokens == ["the", "cat"]
    np.testing.assert_allclose(ex.weights, reference_weights(["the", "cat"], 1, True, 3.0))


def test_long_sentence_is_truncated_to_64_tokens_and_says_so():
    text = " ".join(f"w{i}" for i in range(80))
    ex = AttentionExplorer(text, query=70)
    assert len(ex.tokens) == MAX_TOKENS == 64
    assert ex.query == 63
    assert "80 tokens" in ex.message and "first 64" in ex.message
    np.testing.assert_allclose(ex.weights, reference_weights(ex.tokens, 0, False, 1.0))
    np.testing.assert_allclose(shown_cell_colours(ex), expected_cell_colours(ex.weights, False))
    assert len(ex.parts.tokens.tokens) == len(ex.parts.tokens.messages) == 64
    assert [len(stack.children) for stack in ex.parts.stacks] == [64, 64]
    assert "first 64" in ex.parts.tokens.note
    ex.set_causal(True)
    np.testing.assert_allclose(shown_cell_colours(ex), expected_cell_colours(ex.weights, True))
    assert ex.static_png(dpi=30).startswith(b"\x89PNG")
    ex.set_sentence("the cat sat")
    assert "first 64" not in ex.message


def test_bad_values_raise_errors_that_teach():
    ex = AttentionExplorer()
    with pytest.raises(ValueError, match=r"head 2 does not exist: this explorer has heads 0..1"):
        ex.set_head(2)
    with pytest.raises(ValueError, match=r"query 6 is not a position .* 6 tokens"):
        ex.select_query(6)
    for t in (0, 0.37, 11, float("nan")):
        with pytest.raises(
            ValueError,
            match=r"temperature must be one of the slider's values "
            r"\(0\.1, 0\.15, .*, 10\), got",
        ):
            ex.set_temperature(t)
    assert ex.temperature == 1.0  # unchanged
    ex.set_temperature(0.1 + 0.2)  # 0.30000000000000004: the slider's 0.3
    assert ex.temperature == 0.3 and ex.parts.temperature.value == 0.3
    with pytest.raises(ValueError, match="multiple of n_heads=3"):
        AttentionExplorer(n_heads=3)
    with pytest.raises(ValueError, match="must be a string"):
        ex.set_sentence(None)


def test_the_causal_toggle_says_whether_the_mask_is_on():
    ex = AttentionExplorer()
    toggle = ex.parts.causal
    assert (toggle.description, toggle.icon) == ("causal mask: off", "eye")
    toggle.value = True  # a click in the browser
    assert ex.causal and (toggle.description, toggle.icon) == ("causal mask: on", "eye-slash")
    assert "earlier tokens only" in toggle.tooltip
    ex.set_causal(False)  # from code
    assert not toggle.value and toggle.description == "causal mask: off"
    assert AttentionExplorer(causal=True).parts.causal.description == "causal mask: on"


def rotated_labels(svg: str) -> list[tuple[float, int, str]]:
    """(x, font size, text) of every rotated key label in an SVG picture."""
    return [
        (float(x), int(font), text)
        for x, font, text in re.findall(
            r'<text x="([\d.]+)" y="[\d.]+" font-size="(\d+)" text-anchor="end" '
            r'dominant-baseline="middle" transform="rotate\(-60[^"]*">(.*?)</text>',
            svg,
        )
    ]


def test_long_words_are_shortened_on_the_axes_and_fit_in_the_bar_chart():
    long_word = "supercalifragilisticexpialidocious"
    ex = AttentionExplorer(f"{long_word} antidisestablishmentarianism is long")
    labels = rotated_labels(ex.bars_svg)
    assert labels, "with words this long the key labels are rotated"
    first = labels[0][2]
    assert first == f"<title>{long_word}</title>supercalifr…"  # 12 characters, full on hover
    for x, font, text in labels:
        shown = re.sub(r"<title>.*?</title>", "", text)
        assert len(shown) <= drawing.LABEL_CHARS
        # A label rotated by 60 degrees reaches half its length left of its anchor: inside.
        assert x - 0.5 * 0.62 * font * len(shown) >= 0, f"{shown!r} is cut off on the left"
    assert ">supercalifr…</text>" in ex.heatmap_svg  # the heatmap's rows too
    assert ex.tokens[0] == long_word  # the buttons and the math keep the whole word
    assert ex.parts.tokens.tokens[0] == long_word


def test_html_escapes_tokens():
    ex = AttentionExplorer("a < b & c")
    assert "<text" in ex.heatmap_svg and ">&lt;<" in ex.heatmap_svg
    assert ">&amp;<" in ex.bars_svg


# ------------------------------------------------------------------ speed and structure


def test_a_click_reuses_the_cached_projections_and_weights(monkeypatch):
    ex = AttentionExplorer()
    calls = []
    for name in ("build_Z", "scaled_dot_product_attention"):
        original = getattr(sources, name)
        monkeypatch.setattr(
            sources,
            name,
            lambda *a, _o=original, _n=name, **k: calls.append(_n) or _o(*a, **k),
        )
    for i in range(len(TOKENS)):
        ex.select_query(i)
    assert calls == []
    cells_of_head_0 = ex.heatmap_svg
    # Head 1's map was drawn with the sentence (the browser holds every head's); the browser
    # now gets it at every other temperature of the slider too: no new Z, no projection.
    ex.set_head(1)
    assert calls == ["scaled_dot_product_attention"] * (len(TEMPERATURES) - 1)
    calls.clear()
    ex.set_head(0)  # weights and cell rectangles served from the cache
    assert calls == [] and ex.heatmap_svg == cells_of_head_0
    ex.set_temperature(2.0)  # every head's map at 2, for the browser: computed already
    ex.set_head(1)
    assert calls == []
    ex.set_causal(True)  # every head's map with the mask, and head 1's at every temperature
    assert calls == ["scaled_dot_product_attention"] * (ex.n_heads + len(TEMPERATURES) - 1)


def test_css_classes_the_browser_tests_rely_on():
    ex = AttentionExplorer()
    assert "attention-explorer" in ex.widget._dom_classes
    for control, css in [
        (ex.parts.heatmap, "explorer-heatmap"),
        (ex.parts.bars, "explorer-bars"),
        (ex.parts.causal, "explorer-causal"),
        (ex.parts.head, "explorer-head"),
        (ex.parts.temperature, "explorer-temperature"),
        (ex.parts.text, "explorer-text"),
    ]:
        assert css in control._dom_classes

    def descendants(w):
        yield w
        for child in getattr(w, "children", ()):
            yield from descendants(child)

    inside = set(map(id, descendants(ex.widget)))
    parts = ex.parts
    assert {id(parts.heatmap), id(parts.bars), id(parts.tokens), id(parts.text)} <= inside


def test_show_displays_the_widget_with_a_static_png(monkeypatch):
    shown = []
    monkeypatch.setattr(helpers.live, "display", lambda obj, **kw: shown.append((obj, kw)))
    ex = AttentionExplorer(causal=True, query=2)
    ex.show()
    ((bundle, kwargs),) = shown
    assert kwargs.get("raw") is True
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert "causal mask" in bundle["text/plain"] and "'sat'" in bundle["text/plain"]


@pytest.mark.parametrize(
    "sentence, causal, query", [("the cat sat on the mat", True, 5), ("x", False, 0), ("", True, 0)]
)
def test_static_png_draws_the_edge_cases(sentence, causal, query):
    ex = AttentionExplorer(sentence, causal=causal, query=query)
    png = ex.static_png(dpi=40)
    assert png.startswith(b"\x89PNG") and len(png) > 1000


# ------------------------------------------------------------------ any sequence of actions


@settings(max_examples=25, deadline=None)
@given(
    words=st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat", "zebra", "!", "42"]),
                   max_size=9),
    actions=st.lists(
        st.one_of(
            st.tuples(st.just("head"), st.integers(0, 1)),
            st.tuples(st.just("causal"), st.booleans()),
            st.tuples(st.just("temperature"), st.sampled_from(TEMPERATURES)),
            st.tuples(st.just("query"), st.integers(0, 8)),
        ),
        max_size=8,
    ),
)  # fmt: skip
def test_any_sequence_of_actions_shows_the_math(words, actions):
    ex = AttentionExplorer(" ".join(words))
    for kind, value in actions:
        if kind == "head":
            ex.set_head(value)
        elif kind == "causal":
            ex.set_causal(value)
        elif kind == "temperature":
            ex.set_temperature(value)
        elif value < len(ex.tokens):
            ex.select_query(value)
    if not words:
        assert ex.weights.shape == (0, 0) and "empty" in ex.message
        return
    expected = reference_weights(ex.tokens, ex.head, ex.causal, ex.temperature)
    np.testing.assert_allclose(ex.weights, expected, atol=1e-12)
    np.testing.assert_allclose(ex.weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(shown_cell_colours(ex), expected_cell_colours(expected, ex.causal))
    assert f'data-query="{ex.query}"' in ex.bars_svg


# ------------------------------------------------------------ issue 12: masked keys and text


def masked_marks(svg: str) -> list[int]:
    return [int(j) for j in re.findall(r'<g class="masked-key" data-key="(\d+)">', svg)]


def bar_rects(svg: str) -> list[tuple[float, float]]:
    """(y, height) of the bars: the rects of the bars' group (the grid lines are lines)."""
    group = re.search(r'<g class="explorer-bar-rects"[^>]*>(.*?)</g>', svg)
    return [
        (float(y), float(h))
        for y, h in re.findall(
            r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" fill="#[0-9a-f]+"',
            group.group(1) if group else "",
        )
    ]


@pytest.mark.parametrize("query", [0, 2, 5])
def test_masked_keys_are_drawn_at_zero_with_a_marker_not_as_full_bars(query):
    ex = AttentionExplorer(causal=True, query=query)
    svg = ex.bars_svg
    n = len(TOKENS)
    assert masked_marks(svg) == list(range(query + 1, n))  # one cross per future key
    assert len(bar_rects(svg)) == query + 1  # bars only for the keys that take part
    assert f'fill="{helpers.plots.MASKED_GREY}"' not in svg  # no grey full-height bar
    assert ("masked (future) key: weight exactly 0" in svg) == (query < n - 1)
    zero_line = 60 + 200  # top + plot height: the crosses sit on it
    for j in masked_marks(svg):
        path = re.search(rf'data-key="{j}"><path d="M([\d.]+) ([\d.]+)L[\d.]+ ([\d.]+)', svg)
        assert abs((float(path.group(2)) + float(path.group(3))) / 2 - zero_line) < 0.2
    ex.set_causal(False)
    assert masked_marks(ex.bars_svg) == [] and len(bar_rects(ex.bars_svg)) == n


def test_the_static_figure_draws_masked_keys_at_zero_with_a_marker():
    ex = AttentionExplorer(causal=True, query=2)
    bar_ax = ex.static_figure(dpi=40).axes[1]
    heights = [patch.get_height() for patch in bar_ax.patches]
    np.testing.assert_allclose(heights, ex.weights[2, :3])  # bars for keys 0..2 only
    (marks,) = [line for line in bar_ax.lines if line.get_marker() == "x"]
    np.testing.assert_array_equal(marks.get_xdata(), [3, 4, 5])
    np.testing.assert_array_equal(marks.get_ydata(), [0, 0, 0])
    assert "weight exactly 0" in bar_ax.get_legend().get_texts()[0].get_text()
    np.testing.assert_array_equal(ex.weights[2, 3:], 0.0)  # what the marker claims
    no_mask = AttentionExplorer(causal=False, query=2).static_figure(dpi=40).axes[1]
    assert len(no_mask.patches) == 6 and no_mask.get_legend() is None


def test_a_lone_surrogate_is_dropped_and_leaves_the_explorer_consistent():
    ex = AttentionExplorer()
    ex.set_sentence("the cat \ud83d sat")
    assert ex.tokens == ["the", "cat", "sat"]
    assert ex.weights.shape == (3, 3) and len(ex.parts.tokens.tokens) == 3
    assert ex.parts.text.value == "the cat  sat"  # what the browser gets: valid Unicode
    ex.parts.text.value.encode("utf-8")
    ex.static_png(dpi=30)
    ex2 = AttentionExplorer("a \ud83d\ude00 b")  # a surrogate *pair* is one character
    assert ex2.tokens == ["a", "😀", "b"]


def test_the_text_box_with_a_lone_surrogate_updates_everything():
    ex = AttentionExplorer()
    ex.parts.text.value = "x \udc00 y z"  # as if typed in the browser
    assert ex.tokens == ["x", "y", "z"] and ex.weights.shape == (3, 3)
    assert 'data-n="3"' in ex.heatmap_svg


def test_a_failed_sentence_change_leaves_the_previous_sentence_whole():
    ex = AttentionExplorer()
    with pytest.raises(TypeError, match="sentence must be a string"):
        ex.set_sentence(123)
    assert ex.tokens == TOKENS and ex.weights.shape == (6, 6)
    assert ex.parts.text.value == helpers.RUNNING_SENTENCE


def test_a_huge_word_is_capped_in_titles_buttons_and_alt_text():
    # Its speed (10-19 s when the whole word went into the title): benchmarks/bench_explorer.py.
    word = "a" * 100_000
    ex = AttentionExplorer(f"the {word} sat", causal=True, query=1)
    assert ex.tokens[1] == word  # the math keeps the whole word
    cap = drawing.WORD_CHARS
    assert len(ex.alt_text()) < 300 and "a" * cap not in ex.alt_text()
    assert len(ex.message) < 300
    assert len(ex.parts.tokens.tokens[1]) == cap
    assert all(len(message) < 300 for message in ex.parts.tokens.messages)
    assert len(ex.heatmap_svg) + len(ex.bars_svg) < 20_000
    fig = ex.static_figure(dpi=40)
    png = ex.static_png(dpi=40)
    assert len(fig.axes[1].get_title()) < 80 and png.startswith(b"\x89PNG")


def test_accented_words_are_one_token():
    ex = AttentionExplorer("le café est prêt")
    assert ex.tokens == ["le", "café", "est", "prêt"]
    assert ">café<" in ex.heatmap_svg


def test_the_token_row_shows_the_words_as_they_are():
    """The token row (a radio group drawn in the browser) gets the words; the browser names
    each button by its word and position, so a repeated word needs no mark."""
    ex = AttentionExplorer("the cat saw the dog and the bird")
    assert ex.parts.tokens.tokens == ex.tokens
    assert ex.parts.tokens.label == "query token"
    assert ex.parts.tokens.index == ex.query == 1


def test_every_query_has_its_pictures_in_the_stacks_and_the_browser_switches_them():
    """The browser switches between queries itself: the token row sets the two Stacks'
    selected_index and the table's index there (its followers, sent to the browser as widget
    references), and child i of each Stack is query i's."""
    ex = AttentionExplorer(causal=True)
    ex.set_head(1)
    targets = [(stack, "selected_index") for stack in ex.parts.stacks]
    targets.append((ex.parts.table, "index"))
    assert ex.parts.tokens.followers == targets
    sent = ex.parts.tokens.get_state()["followers"]
    assert sent == [[f"IPY_MODEL_{w.model_id}", name] for w, name in targets]
    for i, token in enumerate(ex.tokens):
        assert f'"{token}" (position {i})' in ex.parts.tokens.messages[i]
        for stack in (ex.parts.query_layers, ex.parts.bar_values):
            assert f'data-query="{i}"' in stack.children[i].value
        ex.select_query(i)
        assert f'"{token}" (position {i})' in ex.message
        assert ex.message == ex.parts.tokens.message  # what the browser shows
        assert ex.parts.bar_values.children[i].value in ex.bars_svg
    # One Layout and one Style for all the children: fewer widgets in a saved notebook.
    children = [child for stack in ex.parts.stacks for child in stack.children]
    assert len({id(child.layout) for child in children}) == 1
    assert len({id(child.style) for child in children}) == 1


def test_a_new_sentence_reuses_the_stacks_children():
    ex = AttentionExplorer("a b c d e f g h")
    first = [list(stack.children) for stack in ex.parts.stacks]
    ex.set_sentence("a b c")
    ex.set_sentence("one two three four five six seven eight")
    assert [list(stack.children) for stack in ex.parts.stacks] == first  # the same widgets


def test_a_token_click_in_the_browser_sends_no_picture_and_computes_nothing(monkeypatch):
    ex = AttentionExplorer()
    pictures = [ex.parts.heatmap_map, ex.parts.heatmap_axes, ex.parts.bars_axes] + [
        child for stack in ex.parts.stacks for child in stack.children
    ]
    before = [picture.value for picture in pictures]
    sent = []
    for picture in pictures:
        picture.observe(lambda change: sent.append(change), names="value")
    monkeypatch.setattr(sources, "scaled_dot_product_attention", None)  # not called
    ex.parts.tokens.index = 4  # what the browser sends after a click on "the" (the second)
    assert ex.query == 4 and sent == []
    assert [picture.value for picture in pictures] == before
    assert [stack.selected_index for stack in ex.parts.stacks] == [4, 4]
    assert ex.parts.tokens.message == ex.message and '"the" (position 4)' in ex.message
    assert 'data-query="4"' in ex.heatmap_svg


def test_a_change_in_the_browser_draws_the_query_on_screen_first_and_the_others_later():
    """With an event loop running (a kernel), a head picked in the browser sends the map and
    the query on screen at once, the other queries' pictures after AFTER_PAINT_S. Called from
    code, everything is drawn at once (a notebook saved after the cell holds every picture)."""
    import asyncio

    from helpers.explorer.preview import AFTER_PAINT_S

    ex = AttentionExplorer(query=3)
    other = ex.parts.bar_values.children[5]
    before = other.value

    async def pick_head_1_in_the_browser() -> tuple:
        ex.parts.head.value = 1
        at_once = ('data-head="1"' in ex.heatmap_svg, ex.bars_svg, other.value)
        await asyncio.sleep(2 * AFTER_PAINT_S)
        return at_once, other.value

    (map_moved, bars_at_once, other_at_once), other_later = asyncio.run(
        pick_head_1_in_the_browser()
    )
    assert map_moved and other_at_once == before and other_later != before
    assert bars_at_once == ex.bars_svg  # the query on screen was drawn at once
    twin = AttentionExplorer(query=3)
    twin.set_head(1)  # from code, inside a loop or not: at once
    assert twin.parts.bar_values.children[5].value == other_later


def test_the_browser_holds_every_heads_map_as_the_explorer_draws_it(monkeypatch):
    """The preview holds each head's map layer, maps[head], as set_head(head) draws it, for
    the mask, temperature and sentence shown; a new mask, temperature or sentence sends them
    again, before the map on screen (so the browser never draws a head from older maps than
    the map it shows); a new head or query sends none of them."""
    import ipywidgets

    ex = AttentionExplorer(n_heads=4)
    preview = ex.parts.preview
    assert preview.n_heads == 4 and preview.layout.display == "none"
    sent = []
    monkeypatch.setattr(
        ipywidgets.Widget, "_send", lambda self, msg, buffers=None: sent.append((self, msg))
    )
    changes = [
        lambda: None,
        lambda: ex.set_causal(True),
        lambda: ex.set_temperature(0.5),
        lambda: ex.set_sentence("the dog ran to the big red ball"),
    ]
    for change in changes:
        sent.clear()
        change()
        order = [w for w, msg in sent if {"maps", "value"} & set(msg.get("state", {}))]
        if sent:
            assert order.index(preview) < order.index(ex.parts.heatmap_map), order
        assert len(preview.maps) == 4 and len(set(preview.maps)) == 4
        for head in (2, 0, 3, 1):
            sent.clear()
            ex.set_head(head)
            assert preview.maps[head] == ex.parts.heatmap_map.value
            assert f'data-head="{head}"' in preview.maps[head]
            # (its own map at every temperature, yes: temperature_maps)
            resent = [msg for w, msg in sent if w is preview and "maps" in msg.get("state", {})]
            assert not resent, "a new head sent the heads' maps"
    assert "explorer-heatmap-map .widget-html-content" in preview._esm  # pending.js
    assert 'addEventListener("click", onClick, true)' in preview._esm
    empty = AttentionExplorer(sentence="")
    assert empty.parts.preview.maps == ["", ""]  # nothing to draw: the browser leaves it


def test_the_heatmap_is_three_stacked_layers_each_sent_only_when_it_changed():
    """A new head changes the map; only a new sentence changes the axes; the query layer on
    top (the selected row's outline and label) is only as tall as the rows."""
    ex = AttentionExplorer()
    map_, axes, query = ex.parts.heatmap.children
    assert query is ex.parts.query_layers
    assert ex.parts.heatmap.layout.grid_template_areas == '"heatmap"'
    assert {layer.layout.grid_area for layer in (map_, axes, query)} == {"heatmap"}
    before = [map_.value, axes.value]
    ex.set_head(1)
    assert map_.value != before[0] and axes.value == before[1]
    ex.set_sentence("a different sentence")
    assert axes.value != before[1]
    # The top layer covers the rows only: the keys' labels below keep their hover titles.
    assert query.layout.align_self == "flex-start"
    top = shown(query)
    assert len(top) < 1000  # the outline and one label
    height = int(re.search(r'height="(\d+)"', top).group(1))
    assert height < int(re.search(r'height="(\d+)"', axes.value).group(1))


def test_heatmap_and_bars_are_named_for_screen_readers():
    """The map's SVG is an image named by its numbers; each query's bars name every weight;
    the decorative layers (axes, the selected row's outline) are hidden from the tree."""
    ex = AttentionExplorer(sentence="the cat sat on the mat", n_heads=2, seed=0, query=1)
    ex.set_causal(True)
    label = re.search(r'<svg[^>]*role="img"[^>]*aria-label="([^"]*)"', ex.parts.heatmap_map.value)
    assert label, "the heatmap's SVG has no role and label"
    text = html.unescape(label.group(1))
    w = ex.weights
    i, j = np.unravel_index(np.argmax(np.where(w > 0, w, -1)), w.shape)
    assert "head 0, causal mask on" in text and f"largest {w[i, j]:.2f}" in text
    assert "15 cells masked" in text
    bars = [child.value for child in ex.parts.bar_values.children[: len(ex.tokens)]]
    query_label = html.unescape(re.search(r'aria-label="([^"]*)"', bars[1]).group(1))
    assert query_label.startswith("Weights of query 'cat' (position 1) over the keys: the ")
    assert f"cat {w[1, 1]:.2f}" in query_label
    assert 'aria-hidden="true"' in ex.parts.heatmap_axes.value


# ---------------------------------------------------------------------- the accessible surface
# (issue 19; /work/coord/A11Y_CONTRACT.md: the DOM is checked by the browser tests, the values
# the browser draws it from are checked here)


def test_the_message_changes_with_the_query_head_mask_temperature_and_sentence():
    ex = AttentionExplorer(n_heads=2, query=1)
    seen = {ex.message}

    def changed(action):
        action()
        assert ex.message not in seen, f"the message did not change: {ex.message}"
        assert ex.message == ex.parts.tokens.message
        seen.add(ex.message)

    changed(lambda: ex.select_query(2))
    changed(lambda: ex.set_head(1))
    changed(lambda: ex.set_causal(True))
    changed(lambda: ex.set_temperature(0.1))
    changed(lambda: ex.set_temperature(10.0))
    changed(lambda: ex.set_sentence("the dog ran"))
    assert "head 1, causal mask, temperature 10" in ex.message
    row = ex.weights[ex.query]
    top = int(np.argmax(row))
    assert f'most to "{ex.tokens[top]}" ({row[top]:.2f})' in ex.message


@pytest.mark.parametrize("causal", [False, True])
def test_one_message_per_query_each_naming_its_token_and_largest_weight(causal):
    ex = AttentionExplorer("the cat sat on the mat", causal=causal)
    messages = ex.parts.tokens.messages
    assert len(messages) == len(ex.tokens)
    for i, message in enumerate(messages):
        row = ex.weights[i]
        top = int(np.argmax(row))
        assert message.startswith(f'"{ex.tokens[i]}" (position {i})')
        assert f'most to "{ex.tokens[top]}" ({row[top]:.2f})' in message
        assert "arrow keys" in message
        if causal:
            assert top <= i


def table_cells(table: str) -> list[list[str]]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table)
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in rows]


@pytest.mark.parametrize(
    "sentence, causal, temperature",
    [
        ("the cat sat on the mat", False, 1.0),
        ("the cat sat on the mat", True, 0.1),
        ("cat", True, 10.0),  # one token
        (" ".join(f"w{i}" for i in range(32)), True, 1.0),  # 32 tokens
    ],
)
def test_the_table_view_holds_every_weight_with_row_and_column_headers(
    sentence, causal, temperature
):
    ex = AttentionExplorer(sentence, causal=causal, temperature=temperature, query=1)
    assert ex.parts.table.table == ""  # closed: nothing sent
    ex.parts.table.pressed = True  # what the "table view" button does in the browser
    table = ex.parts.table.table
    assert table == ex.table_html()
    n = len(ex.tokens)
    caption = re.search(r"<caption>(.*?)</caption>", table).group(1)
    mask = "causal mask" if causal else "no mask"
    assert f"head 0, {mask}, temperature {temperature:g}" in caption
    assert table.count('<th scope="col">') == n and table.count('<th scope="row">') == n
    cells = table_cells(table)
    assert len(cells) == n + 1 and all(len(row) == n + 1 for row in cells)
    assert cells[0][1:] == [f"{token} ({j})" for j, token in enumerate(ex.tokens)]
    for i, row in enumerate(cells[1:]):
        assert row[0] == f"{ex.tokens[i]} ({i})"
        for j, cell in enumerate(row[1:]):
            if causal and j > i:
                assert cell == "masked"
            else:
                assert cell == f"{ex.weights[i, j]:.2f}"
    current = re.findall(r'<tr data-query="(\d+)" aria-current="true">', table)
    assert current == [str(ex.query)]
    ex.set_head(1)  # open: the table follows the map
    assert "head 1" in ex.parts.table.table and ex.parts.table.table == ex.table_html()
    ex.parts.table.pressed = False
    assert ex.parts.table.table == ""


def test_the_table_escapes_the_words_and_an_empty_sentence_has_none():
    ex = AttentionExplorer("<b> & cat")
    assert ex.tokens == ["<", "b", ">", "&", "cat"]
    table = ex.table_html()
    assert '<th scope="col">&lt; (0)</th>' in table and '<th scope="row">&amp; (3)</th>' in table
    assert "< (0)" not in table and "& (3)" not in table
    ex.set_sentence("")
    assert "<table" not in ex.table_html() and "No tokens" in ex.table_html()


def test_the_front_end_modules_are_shipped_with_the_package():
    """The token row's and the table's browser code travel as the widgets' _esm and _css, read
    from files beside the module (package data); the token row's after the shared
    after_paint.js it uses."""
    from importlib import resources

    from helpers import front

    ex = AttentionExplorer()
    files = resources.files(front)
    read = lambda name: files.joinpath(name).read_text(encoding="utf-8")  # noqa: E731
    for widget, name, shared in [
        (ex.parts.tokens, "token_row", ["after_paint.js"]),
        (ex.parts.table, "table_view", []),
        (ex.parts.preview, "map_preview", ["pending.js"]),
    ]:
        assert widget._esm == "\n".join(read(part) for part in [*shared, f"{name}.js"])
        assert widget._css == read(f"{name}.css")
        assert "export default" in widget._esm
    assert 'role", "radiogroup"' in ex.parts.tokens._esm
    assert 'aria-live", "polite"' in ex.parts.tokens._esm


def test_the_drawing_takes_a_state_and_needs_no_widget():
    """ExplorerDrawing draws an ExplorerState into strings: no explorer, no widget."""
    weights = np.array([[1.0, 0.0], [0.25, 0.75]])
    state = ExplorerState(tokens=("the", "cat"), weights=weights, query=1, head=1, causal=True)
    drawing = ExplorerDrawing(state)
    svg = drawing.map_svg(drawing.heatmap_geometry())
    assert 'data-head="1"' in svg and 'data-causal="1"' in svg and ">0.75</text>" in svg
    assert ">0.00</text>" not in svg  # the masked cell (query 0, key 1) has no number
    assert drawing.describe(1).startswith(
        '"cat" (position 1) distributes its attention across itself and the 1 token before '
        'it, most to "cat" (0.75); head 1, causal mask, temperature 1.'
    )
    table = drawing.table_html()
    assert "<td>masked</td>" in table and '<tr data-query="1" aria-current="true">' in table
    assert 'data-query="1"' in drawing.query_svg(drawing.heatmap_geometry(), 1)


def test_the_explorer_draws_its_state():
    ex = AttentionExplorer(n_heads=2, query=2)
    ex.set_head(1)
    state = ex.state
    assert (state.tokens, state.query, state.head) == (tuple(ex.tokens), 2, 1)
    drawing = ExplorerDrawing(state)
    assert ex.heatmap_svg.startswith(drawing.map_svg(drawing.heatmap_geometry()))
    assert ex.table_html() == drawing.table_html()
    assert ex.message.endswith(drawing.describe(2))
    with pytest.raises(ValueError, match="read-only"):
        state.weights[0, 0] = 1.0  # the state shares the explorer's weights: not writable


def test_the_geometry_is_made_once_per_sentence():
    """Where things go depends on the sentence only: every map of it (lesson 09's grid draws
    72) shares one geometry; a new sentence gets its own."""
    ex = AttentionExplorer(n_heads=4)
    heatmap, bars = ex.drawing().heatmap_geometry(), ex.drawing().bars_geometry()
    ex.set_head(3)
    ex.set_causal(True)
    assert ex.drawing().heatmap_geometry() is heatmap and ex.drawing().bars_geometry() is bars
    ex.set_sentence("a longer sentence than the running example's, with a few more tokens")
    again = ex.drawing().heatmap_geometry()
    assert again is not heatmap and again["n"] == len(ex.tokens) != heatmap["n"]
    assert ExplorerDrawing(ex.state).heatmap_geometry() == again  # made afresh: the same


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_heads": 3},
        {"n_heads": 0},
        {"n_heads": 2.0},
        {"d_model": 0},
        {"d_model": 8.0},
        {"seed": -1},
        {"seed": True},
    ],
)
def test_bad_model_sizes_get_seeded_projections_own_errors(kwargs):
    """The explorer leaves d_model, n_heads and seed to seeded_projections (checked once):
    the same error, word for word."""
    args = {"d_model": 8, "n_heads": 2, "seed": 0} | kwargs
    with pytest.raises((TypeError, ValueError)) as expected:
        helpers.seeded_projections(args["d_model"], args["n_heads"], args["seed"])
    with pytest.raises(expected.type) as got:
        AttentionExplorer(**args)
    assert str(got.value) == str(expected.value)


def test_a_source_that_is_not_a_weight_source_is_refused_with_what_it_lacks():
    class HalfSource:  # a model wrapper that forgot most of the protocol
        n_layers, n_heads, d_k = 1, 2, 4

        def load(self, text):
            raise AssertionError("never called: the explorer checks the source first")

    with pytest.raises(
        TypeError, match=r"HalfSource has no fixed_causal, fixed_temperature, weights"
    ):
        AttentionExplorer(source=HalfSource())


def test_build_parts_makes_the_widgets_alone():
    """The controls are built without an explorer: set to the values asked, what the model
    fixes hidden, the token row told what follows the query, nothing drawn yet."""
    parts = build_parts(6, 12, 4, 5, False, 1.0, fixed_causal=False, fixed_temperature=1.0)
    assert (parts.layer.value, parts.head.value) == (4, 5)
    assert [label for label, _ in parts.head.options] == [str(a) for a in range(12)]
    assert parts.controls_box.children == (parts.layer, parts.head, parts.causal, parts.temperature)
    assert parts.causal.layout.display == parts.temperature.layout.display == "none"
    assert parts.tokens.followers == [*parts.followers]  # what a pick moves in the browser
    assert parts.heatmap_map.value == "" and parts.query_layers.children == ()
    parts.fit_stacks(3)
    assert [len(stack.children) for stack in parts.stacks] == [3, 3]
    one = build_parts(1, 2, 0, 1, True, 0.5)
    assert one.layer is None and one.head.options == (("head 0", 0), ("head 1", 1))
    assert one.causal.description == "causal mask: on" and one.temperature.value == 0.5
    assert one.widget.children[:4] == (one.text, one.tokens, one.controls_box, one.table)


def test_the_preview_holds_the_map_shown_at_every_temperature():
    """What a move of the temperature slider draws in the browser before the kernel answers:
    for each of its values, the same map the explorer then shows at that temperature."""
    ex = AttentionExplorer(n_heads=2, causal=True)
    ex.set_head(1)
    maps = ex.parts.preview.temperature_maps
    assert len(maps) == len(TEMPERATURES) == len(ex.parts.temperature.options)
    for index, t in enumerate(TEMPERATURES):
        ex.parts.temperature.index = index  # what the slider sends
        assert ex.temperature == t
        assert ex.parts.heatmap_map.value == maps[index]
        assert f'data-temperature="{t:g}"' in maps[index]
    ex.set_causal(False)  # another mask (or head, layer, sentence): every temperature again
    assert ex.parts.preview.temperature_maps != maps
    shown = ex.parts.preview.temperature_maps[TEMPERATURES.index(ex.temperature)]
    assert shown == ex.parts.heatmap_map.value


def _offline_states_match_the_explorer_moved_there(ex):
    """Every state the explorer holds for a page with no kernel is what it shows once its own
    controls are moved there: the map, each query's bars and message, the table."""
    from helpers.explorer.preview import offline_key

    held = ex.parts.preview.offline
    states = held["states"]
    fixed = ex.source.fixed_causal, ex.source.fixed_temperature
    masks = (False, True) if fixed[0] is None else (fixed[0],)
    temperatures = TEMPERATURES if fixed[1] is None else (fixed[1],)
    assert len(states) == ex.n_layers * ex.n_heads * len(masks) * len(temperatures)
    ex.parts.table.pressed = True
    for layer in range(ex.n_layers):
        for head in range(ex.n_heads):
            for causal in masks:
                for t in temperatures:
                    ex.select(layer, head)
                    if fixed[0] is None:
                        ex.set_causal(causal)
                    if fixed[1] is None:
                        ex.set_temperature(t)
                    state = states[offline_key(ex.n_layers, layer, head, causal, t)]
                    assert state["map"] == ex.parts.heatmap_map.value
                    assert state["table"] == ex.parts.table.table
                    assert state["messages"] == ex.parts.tokens.messages
                    bars = [child.value for child in ex.parts.bar_values.children]
                    assert state["bars"] == bars
    assert held["temperatures"] == [f"{t:g}" for t in TEMPERATURES]
    assert held["looks"]["1"]["description"] == "causal mask: on"
    parts = ex.parts.preview.offline_parts
    assert parts["heatmap_map"] is ex.parts.heatmap_map and parts["tokens"] is ex.parts.tokens


def test_for_a_page_with_no_kernel_the_explorer_holds_every_state(monkeypatch):
    monkeypatch.setenv("COURSE_STATIC_PAGE", "1")
    ex = AttentionExplorer(n_heads=2, causal=True, query=2)
    _offline_states_match_the_explorer_moved_there(ex)


def test_the_trained_models_explorers_hold_every_state_too(monkeypatch):
    """Lessons 09 and 10: six layers and twelve heads of a fixed mask and scale, or two and four
    of the causal model: every map, none at another mask or temperature."""
    from helpers.explorer.induction import InductionExplorer

    monkeypatch.setenv("COURSE_STATIC_PAGE", "1")
    ex = InductionExplorer("ab. ab.", layer=1, head=2, query=4)
    assert ex.n_layers == 2 and ex.n_heads == 4
    _offline_states_match_the_explorer_moved_there(ex)
    key = next(iter(ex.parts.preview.offline["states"]))
    assert key.startswith("0|0|1|"), key  # layer, head, the model's causal mask, its scale


def test_a_live_kernel_never_holds_every_state(monkeypatch):
    """In a notebook with a kernel, the kernel draws each state when asked: nothing is sent."""
    monkeypatch.delenv("COURSE_STATIC_PAGE", raising=False)
    ex = AttentionExplorer(n_heads=2)
    ex.set_head(1)
    assert ex.parts.preview.offline == {} and ex.parts.preview.offline_parts == {}


def test_a_new_sentence_holds_its_own_states(monkeypatch):
    monkeypatch.setenv("COURSE_STATIC_PAGE", "1")
    ex = AttentionExplorer(n_heads=2)
    before = ex.parts.preview.offline
    ex.set_sentence("a dog ran")
    after = ex.parts.preview.offline["states"]
    assert after != before["states"]
    assert all(len(state["messages"]) == 3 for state in after.values())
    ex.set_sentence("")  # nothing to hold, nor the previous sentence's states
    assert ex.parts.preview.offline == {}
