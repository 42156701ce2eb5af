"""helpers.induction.probes: the fresh-sequence generators and the one-token copier's floor."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.induction import load
from helpers.induction.probes import (
    SuffixPredictor,
    back_to_back,
    copier_loss,
    measure,
    position_losses,
    three_copies,
    two_matches,
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


def _suffix_features_by_hand(tokens, longest):
    """The longest earlier match ending at each position and the share of its followers that
    are the true next token, written out position by position (no shared code)."""
    b, n = tokens.shape
    k_all, hit_all = np.zeros((b, n - 1), int), np.zeros((b, n - 1))
    for s in range(b):
        row = list(tokens[s])
        for i in range(n - 1):
            best, followers = 0, []
            for k in range(1, longest + 1):
                if i - k + 1 < 0:
                    break
                ends = [
                    j for j in range(k - 1, i) if row[j - k + 1 : j + 1] == row[i - k + 1 : i + 1]
                ]
                if not ends:
                    break
                best, followers = k, [row[j + 1] for j in ends]
            k_all[s, i] = best
            if best:
                hit_all[s, i] = np.mean([f == row[i + 1] for f in followers])
    return k_all, hit_all


def test_the_suffix_predictor_against_a_written_out_version():
    rng = np.random.default_rng(5)
    fit = back_to_back(rng, 300, 24, 16, lengths=(4, 8))[
        0
    ]  # a small vocabulary: many chance matches
    predictor = SuffixPredictor(fit, 16)
    tokens = back_to_back(rng, 40, 24, 16, lengths=(4, 8))[0]
    k, hit = _suffix_features_by_hand(tokens, 4)
    np.testing.assert_array_equal(predictor._features(tokens)[0], k)
    np.testing.assert_allclose(predictor._features(tokens)[1], hit)
    expected = np.full(k.shape, np.log(16))
    for length, share in predictor.share.items():
        expected = np.where(k == length, -np.log(share * hit + (1 - share) / 16), expected)
    np.testing.assert_allclose(predictor.losses(tokens), expected)
    # each share is the maximum-likelihood mix on the fitting data (to the grid's step)
    k_fit, hit_fit = _suffix_features_by_hand(fit, 4)
    for length, share in predictor.share.items():
        at = hit_fit[k_fit == length]
        best = max(np.linspace(0.001, 0.999, 999),
                   key=lambda p: np.log(p * at + (1 - p) / 16).sum())  # fmt: skip
        assert share == pytest.approx(best, abs=1e-9)


def test_the_suffix_predictor_is_not_told_where_copies_are():
    # two sequences that differ only in what follows: its loss at the shared positions is the same
    rng = np.random.default_rng(6)
    predictor = SuffixPredictor(back_to_back(rng, 200, 32, 64)[0], 64)
    a = rng.integers(0, 64, (1, 32))
    b = a.copy()
    b[0, -1] = (a[0, -1] + 1) % 64
    np.testing.assert_array_equal(predictor.losses(a)[0, :-1], predictor.losses(b)[0, :-1])


@pytest.mark.parametrize("seed", range(5))
def test_two_matches_builds_what_it_says(seed):
    n, q = 32, [20, 13, 30, 24, 17][seed]  # the default, the extremes and two more
    tokens, keys, older = two_matches(np.random.default_rng(seed), 100, n, 64, query=q)
    two, _, _ = two_matches(np.random.default_rng(seed), 100, n, 64, keep="two", query=q)
    one, _, _ = two_matches(np.random.default_rng(seed), 100, n, 64, keep="one", query=q)
    assert 20 < older.sum() < 80
    for s in range(100):
        row = tokens[s]
        b, a = row[q - 1], row[q]
        match, other = keys[s] - 1  # the two earlier `a`s
        assert a != b and sorted(np.nonzero(row == a)[0]) == sorted([match, other, q])
        assert sorted(np.nonzero(row == b)[0]) == [match - 1, q - 1]
        assert row[other - 1] != b and row[match + 1] != row[other + 1]
        assert older[s] == (match < other)
        # each match at least 6 before the query and 6 apart, as copies are in training
        assert q - max(match, other) >= 6 and abs(match - other) >= 6 and min(match, other) >= 1
        # the controls: the same sequence with one earlier `a` replaced by neither a nor b
        for control, gone in ((two, other), (one, match)):
            differs = np.nonzero(control[s] != row)[0]
            assert list(differs) == [gone] and control[s, gone] not in (a, b)
    default, _, _ = two_matches(np.random.default_rng(seed), 3, n, 64)
    assert all((row == row[20]).sum() == 3 for row in default)  # query 20 by default


def test_two_matches_refuses_bad_arguments():
    with pytest.raises(ValueError, match="keep"):
        two_matches(np.random.default_rng(0), 2, 32, 64, keep="all")
    with pytest.raises(ValueError, match="vocab_size"):
        two_matches(np.random.default_rng(0), 2, 32, 4)
    with pytest.raises(ValueError, match="n must be"):
        two_matches(np.random.default_rng(0), 2, 10, 64)
    for bad in (12, 31, 2.0, True):
        with pytest.raises(ValueError, match="query"):
            two_matches(np.random.default_rng(0), 2, 32, 64, query=bad)


def test_the_shipped_model_matches_two_tokens_in_attention_and_prediction():
    # lesson 10, section 6: on inputs where a one-token and a two-token match disagree
    model, n, q = load(), 32, 20
    tokens, keys, _ = two_matches(np.random.default_rng(8), 400, n, 64, query=q)
    ran, rows = model.run(tokens), np.arange(400)
    weights = ran.A[1][:, :, q]  # (400, heads, n)
    on_two, on_one = weights[rows, :, keys[:, 0]].mean(0), weights[rows, :, keys[:, 1]].mean(0)
    assert np.all(on_two > 2 * on_one)
    logits = ran.logits[:, q]
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    p_two = probs[rows, tokens[rows, keys[:, 0]]].mean()
    p_one = probs[rows, tokens[rows, keys[:, 1]]].mean()
    assert p_two > 0.6 and p_two > 10 * p_one


def test_the_suffix_predictor_refuses_bad_tokens():
    predictor = SuffixPredictor(back_to_back(np.random.default_rng(0), 20, 32, 64)[0], 64)
    for bad in (
        np.full((2, 8), 64),
        np.full((2, 8), -1),
        np.zeros((2, 8)) + 0.5,
        np.zeros((2, 1), int),
    ):
        with pytest.raises(ValueError, match="tokens"):
            predictor.losses(bad)
    with pytest.raises(ValueError, match="vocab_size"):
        SuffixPredictor(np.zeros((2, 8), int), 0)
    with pytest.raises(ValueError, match="longest"):
        SuffixPredictor(np.zeros((2, 8), int), 64, longest=0)
