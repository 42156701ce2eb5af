"""helpers.induction.probes: the fresh-sequence generators and the one-token copier's floor."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.induction import load
from helpers.induction.probes import (
    back_to_back,
    copier_loss,
    measure,
    position_losses,
    three_copies,
    two_segments,
)


def test_the_copier_by_hand():
    # a b a c a b: at the second "a" (position 2) one earlier "a", followed by "b": the next
    # token is "c", never seen after "a": infinite; at the third "a" (position 4) "a" was
    # followed by "b" and "c": the next is "b", probability 1/2.
    tokens = np.array([[0, 1, 0, 2, 0, 1]])
    at_4 = np.zeros((1, 6), dtype=bool)
    at_4[0, 4] = True
    assert copier_loss(tokens, at_4, 3) == pytest.approx(np.log(2))
    at_2 = np.zeros((1, 6), dtype=bool)
    at_2[0, 2] = True
    assert copier_loss(tokens, at_2, 3) == np.inf
    first = np.zeros((1, 6), dtype=bool)
    first[0, 1] = True  # "b" has not occurred before: uniform
    assert copier_loss(tokens, first, 3) == pytest.approx(np.log(3))


@pytest.mark.parametrize("make", [back_to_back, two_segments, three_copies])
def test_every_marked_position_is_followed_as_in_an_earlier_copy(make):
    tokens, is_repeat = make(np.random.default_rng(0), 200, 32, 64)
    assert tokens.shape == is_repeat.shape == (200, 32) and not is_repeat[:, -1].any()
    for s, i in zip(*np.nonzero(is_repeat)):
        row = tokens[s]
        followers = row[1 : i + 1][row[:i] == row[i]]
        assert row[i + 1] in followers  # so the copier's loss is finite
    assert np.isfinite(copier_loss(tokens, is_repeat, 64))
    # tokens with replacement: chance recurrences outside the copies too
    assert any(len(set(row)) < 32 - is_repeat[s].sum() - 2 for s, row in enumerate(tokens))


def test_bad_arguments_say_what_is_wrong():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n must be at least 28"):
        back_to_back(rng, 4, 20, 64)
    with pytest.raises(ValueError, match="batch must be a whole number"):
        two_segments(rng, 0, 32, 64)
    with pytest.raises(ValueError, match="no position is marked"):
        copier_loss(np.zeros((1, 4), int), np.zeros((1, 4), bool), 64)
    with pytest.raises(ValueError, match="last position"):
        copier_loss(np.zeros((1, 4), int), np.ones((1, 4), bool), 64)


def test_position_losses_are_the_models_cross_entropy():
    model = load()
    tokens = np.random.default_rng(1).integers(0, 64, (3, 12))
    losses = position_losses(model, tokens)
    assert losses.shape == (3, 11)
    targets = np.full_like(tokens, -1)  # model.loss: a target per position, -1 for none
    targets[:, :-1] = tokens[:, 1:]
    assert losses.mean() == pytest.approx(model.loss(tokens, targets), rel=1e-5)


def test_three_copies_marks_two_later_copies():
    tokens, is_repeat = three_copies(np.random.default_rng(3), 300, 32, 64)
    for s in range(300):
        runs = np.diff(np.concatenate([[0], is_repeat[s].astype(int), [0]]))
        assert (runs == 1).sum() == 2  # two marked stretches: the second and third copies
        L = int(is_repeat[s].sum() // 2) + 1
        assert 5 <= L <= 9


def test_measure_sorts_every_position_into_one_kind():
    model = load()
    tokens, is_repeat = back_to_back(np.random.default_rng(4), 64, 32, 64)
    m = measure(model, tokens, is_repeat)
    nll = position_losses(model, tokens)
    # first occurrences: the next token never occurred before; by hand for one sequence
    row, losses = tokens[0], nll[0]
    new = [i for i in range(31) if not is_repeat[0, i] and row[i + 1] not in row[: i + 1]]
    assert new and set(m) == {"repeat", "copier", "first", "chance", "first_ratio"}
    one = measure(model, tokens[:1], is_repeat[:1])
    assert one["first"] == pytest.approx(np.mean(losses[new]), rel=1e-12)
    assert m["repeat"] == pytest.approx(nll[is_repeat[:, :-1]].mean(), rel=1e-12)
    assert m["first_ratio"] == pytest.approx(m["first"] / np.log(64))
    assert m["copier"] == copier_loss(tokens, is_repeat, 64)
