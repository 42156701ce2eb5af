"""The course's slider (helpers.live.slider): its value, its words, and bad input."""

from __future__ import annotations

import pytest
import traitlets

from helpers.explorer_front import Slider
from helpers.live import slider


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
    ],
)
def test_bad_arguments_get_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        slider(**kwargs)


def test_its_repr_says_what_it_is_and_no_address():
    s = slider("d_k", [1, 4, 16], value=4, text="d_k = {}")
    assert repr(s) == "Slider(description='d_k', value=4, 3 options: 'd_k = 1' .. 'd_k = 16')"
