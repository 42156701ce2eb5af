"""Positional encodings, the running sentence's embeddings, and Z."""

import math

import numpy as np
import pytest

import helpers


def test_positional_encoding_follows_the_papers_interleaved_formula():
    PE = helpers.sinusoidal_positional_encoding(50, 16)
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert PE[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-12)
            assert PE[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-12)


def test_positional_encoding_offsets_are_rotations():
    """PE[pos + k] is a fixed rotation of PE[pos] in each sin/cos pair, whatever pos."""
    PE = helpers.sinusoidal_positional_encoding(40, 8)
    k = 5
    for i in range(4):
        w = 1 / 10000 ** (2 * i / 8)
        R = np.array([[math.cos(k * w), -math.sin(k * w)], [math.sin(k * w), math.cos(k * w)]])
        for pos in (0, 3, 20):
            np.testing.assert_allclose(
                PE[pos + k, 2 * i : 2 * i + 2], PE[pos, 2 * i : 2 * i + 2] @ R, atol=1e-12
            )


@pytest.mark.parametrize(
    "args, words",
    [
        ((5, 7), ["even", "d_model=7"]),
        ((5, 0), ["d_model=0"]),
        ((-1, 8), ["n_positions=-1"]),
        ((3.0, 8), ["whole number", "3.0"]),
    ],
)
def test_positional_encoding_rejects_bad_sizes(args, words):
    with pytest.raises(ValueError) as error:
        helpers.sinusoidal_positional_encoding(*args)
    for word in words:
        assert word in str(error.value)


def test_the_two_the_tokens_share_an_embedding_but_not_a_row_of_Z():
    tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
    assert tokens == ["the", "cat", "sat", "on", "the", "mat"]
    E = helpers.token_embeddings(tokens)
    Z = helpers.build_Z(tokens)
    assert E.shape == Z.shape == (6, helpers.D_MODEL)
    assert np.array_equal(E[0], E[4]) and not np.array_equal(Z[0], Z[4])
    PE = helpers.sinusoidal_positional_encoding(6, helpers.D_MODEL)
    np.testing.assert_allclose(Z[4] - Z[0], PE[4] - PE[0], atol=1e-12)


def test_embeddings_are_seeded_and_work_for_any_word():
    a = helpers.token_embeddings(["zebra", "the"])
    b = helpers.token_embeddings(["the", "zebra"])
    np.testing.assert_array_equal(a[0], b[1])
    assert not np.array_equal(
        helpers.token_embeddings(["the"], seed=1), helpers.token_embeddings(["the"])
    )
    assert helpers.token_embeddings([]).shape == (0, helpers.D_MODEL)


def test_tokenize_splits_words_and_punctuation():
    assert helpers.tokenize("The cat, sat.") == ["the", "cat", ",", "sat", "."]
    with pytest.raises(ValueError, match="string"):
        helpers.tokenize(["the"])


def test_split_and_combine_heads_are_inverse():
    X = np.arange(2 * 6 * 8, dtype=float).reshape(2, 6, 8)
    H = helpers.split_heads(X, 2)
    assert H.shape == (2, 2, 6, 4)
    np.testing.assert_array_equal(H[:, 1], X[..., 4:])  # head 1 = the second block of columns
    np.testing.assert_array_equal(helpers.combine_heads(H), X)
    with pytest.raises(ValueError, match="d_model=8 is not divisible by n_heads=3"):
        helpers.split_heads(X, 3)


def test_seeded_projections_have_the_head_shapes():
    W = helpers.seeded_projections(8, n_heads=2, seed=0)
    assert W["W_Q"].shape == (2, 8, 4) and W["W_O"].shape == (8, 8)
    np.testing.assert_array_equal(W["W_K"], helpers.seeded_projections(8, 2, seed=0)["W_K"])
    with pytest.raises(ValueError, match="multiple of n_heads=3"):
        helpers.seeded_projections(8, n_heads=3)
