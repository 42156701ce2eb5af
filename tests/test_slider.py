"""The course's slider (helpers.live.slider): its value, its words, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets

from helpers.front import PressedStates, Slider
from helpers.live import LiveFigure, pressed_states, slider

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_value_is_the_option_at_the_index_and_each_option_has_its_words():
    s = slider("d_k", [1, 4, 16, 64], value=16, text="d_k = {}")
    assert isinstance(s, Slider)
    assert (s.index, s.value, s.description) == (2, 16, "d_k")
    assert s.labels == ["d_k = 1", "d_k = 4", "d_k = 16", "d_k = 64"]
    assert slider("n", [4096, 8192], text="n = {:,} tokens").labels[1] == "n = 8,192 tokens"
    steps = slider("training step", [0, 10, 300], text=lambda s: f"step {s} of 300")
    assert steps.value == 0 and steps.labels[1] == "step 10 of 300"


def test_a_move_from_the_browser_runs_the_observers_then_says_it_was_drawn():
    s = slider("position", range(8), value=0)
    seen = []
    s.observe(lambda change: seen.append((change["new"], s.drawn)), names="value")
    drawn = s.drawn
    s.index = 5  # what the browser sends
    assert s.value == 5 and seen == [(5, drawn)]  # observers ran before `drawn` moved
    assert s.drawn == drawn + 1  # the browser may now send the next index
    s.value = 2  # set from Python: the browser's index follows
    assert s.index == 2 and s.drawn == drawn + 2


def test_a_failing_observer_still_frees_the_browser():
    s = slider("position", range(4))

    def broken(change):
        raise RuntimeError("the lesson's redraw failed")

    s.observe(broken, names="value")
    drawn = s.drawn
    with pytest.raises(RuntimeError):
        s.index = 3
    assert s.drawn == drawn + 1


def test_a_value_or_index_outside_the_options_is_refused_and_changes_nothing():
    s = slider("d_k", [1, 4, 16], value=4, text="d_k = {}")
    with pytest.raises(traitlets.TraitError, match=r"d_k: 5 is not one of its values \(d_k = 1"):
        s.value = 5
    with pytest.raises(traitlets.TraitError, match=r"index 3 is not in 0 \.\. 2"):
        s.index = 3
    assert (s.index, s.value) == (1, 4)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"description": "", "options": [1]}, "needs a description"),
        ({"description": "n", "options": []}, "options is empty"),
        ({"description": "n", "options": [1, 1]}, "repeat a value"),
        ({"description": "n", "options": [1, 2], "value": 3}, "value 3 is not one of"),
        ({"description": "n", "options": [1, 2], "text": "n"}, "exactly one {}"),
        ({"description": "n", "options": [1, 2], "text": "{} and {}"}, "exactly one {}"),
        ({"description": "n", "options": [1, 2], "text": 3}, "format string or a function"),
        # the lesson's own format or function failing: which option, and why
        ({"description": "n", "options": ["a"], "text": "{:,}"}, r"option 'a' failed: ValueError"),
        (
            {"description": "n", "options": [0, 1], "text": lambda v: 1 / v},
            r"option 0 failed: Zero",
        ),
    ],
)
def test_bad_arguments_get_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        slider(**kwargs)


def test_its_repr_says_what_it_is_and_no_address():
    s = slider("d_k", [1, 4, 16], value=4, text="d_k = {}")
    assert repr(s) == "Slider(description='d_k', value=4, 3 options: 'd_k = 1' .. 'd_k = 16')"


def filmed(options=(1, 4, 16, 64)):
    """A slider over ``options`` and a figure whose one line shows the option's value."""
    s = slider("d_k", list(options), value=options[1], text="d_k = {}")
    live = LiveFigure(figsize=(2, 1.5), dpi=40)
    ax = live.figure.subplots()
    ax.set(xlim=(0, 70), ylim=(0, 1))
    (line,) = ax.plot([0, 0], [0, 1])
    drawn = []

    def draw(d):
        drawn.append(d)
        line.set_xdata([d, d])
        return f"a line at d_k = {d}"

    return s, live, line, draw, drawn


def test_film_holds_one_picture_per_option_and_shows_the_current_one():
    s, live, line, draw, drawn = filmed()
    live.film(s, draw)
    assert len(s.pictures) == 4 and all(p.startswith(PNG) for p in s.pictures)
    assert len(set(s.pictures)) == 4  # each option its own picture
    assert s.alts == [f"a line at d_k = {d}" for d in (1, 4, 16, 64)]
    assert s.image is live.image
    assert live.image.value == s.pictures[1] and live.image.tooltip == "a line at d_k = 4"
    assert list(line.get_xdata()) == [4, 4]  # the figure is left at the slider's value
    drawn.clear()
    live.film(s, draw)  # the same key: the pictures are kept, not drawn again
    assert drawn == [4]


def test_a_new_key_films_again_and_an_old_key_comes_back_without_drawing():
    s, live, line, draw, drawn = filmed()
    live.film(s, draw, key="a")
    first = list(s.pictures)
    live.film(s, draw, key="b")
    assert len(drawn) == 2 * (4 + 1)
    drawn.clear()
    live.film(s, draw, key="a")
    assert drawn == [4] and s.pictures == first


def test_a_move_from_the_browser_sets_the_kernels_copies_without_sending_them_back():
    s, live, line, draw, drawn = filmed()
    live.film(s, draw)
    sent = []
    for widget in (s, live.image):
        widget._send = lambda msg, buffers=None, w=widget: sent.append((w, msg))
    s.set_state({"index": 3})  # what the browser sends: it shows picture 3 already
    assert (s.value, live.image.value, live.image.tooltip) == (64, s.pictures[3], s.alts[3])
    assert s.status == s.alts[3]
    updates = [(w, m["state"]) for w, m in sent if m.get("method") == "update"]
    assert updates == [(s, {"drawn": s.drawn})], updates  # only "drawn", nothing sent back
    sent.clear()
    s.value = 16  # set in Python: the browser learns of the picture from here
    names = {
        name
        for w, m in sent
        if m.get("method") == "update"
        for name in [*m["state"], *(path[0] for path in m.get("buffer_paths", []))]
    }  # a picture goes as a binary buffer, outside "state"
    assert {"index", "status", "value", "tooltip"} <= names, names
    assert live.image.value == s.pictures[2]


def test_film_refuses_a_draw_without_words_and_hold_pictures_a_wrong_count():
    s, live, line, draw, drawn = filmed()
    with pytest.raises(ValueError, match=r"draw\(1\) must return the picture's text"):
        live.film(s, lambda d: None)
    with pytest.raises(ValueError, match="2 pictures and 2 text alternatives for 4 options"):
        s.hold_pictures(live.image, [PNG, PNG], ["a", "b"])
    with pytest.raises(ValueError, match="every picture needs a text alternative"):
        s.hold_pictures(live.image, [PNG] * 4, ["a", "", "c", "d"])
    assert s.pictures == []  # nothing half-set


def test_filmed_pictures_are_small_palette_pngs():
    s, live, line, draw, drawn = filmed()
    live.film(s, draw)
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(s.pictures[0]))
    assert image.mode == "P" and image.size == (80, 60)
    assert np.asarray(image.convert("RGB")).std() > 0  # not blank


def test_pressed_states_shows_nothing():
    widget = pressed_states()
    assert isinstance(widget, PressedStates) and widget.layout.display == "none"


def test_held_texts_go_into_a_label_and_its_kernel_copy_follows_quietly():
    import ipywidgets

    s = slider("number of tokens", range(1, 4), value=2)
    label = ipywidgets.Label()
    s.hold_texts(label, ["one", "two", "three"], said=["1 pair", "4 pairs", "9 pairs"])
    assert label.value == "two" and s.alts == ["1 pair", "4 pairs", "9 pairs"]
    assert not label.tooltip  # a sentence is its own text: no title
    sent = []
    for widget in (s, label):
        widget._send = lambda msg, buffers=None, w=widget: sent.append((w, msg))
    s.set_state({"index": 2})  # the browser's move: it shows "three" already
    assert (label.value, s.status) == ("three", "9 pairs")
    assert [w for w, m in sent if m.get("method") == "update"] == [s]  # "drawn" only
    with pytest.raises(ValueError, match="every text must be a str"):
        s.hold_texts(label, ["one", 2, "three"])
