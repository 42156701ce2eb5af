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


# ------------------------------------------------------------ issue 12: errors that name it


@pytest.mark.parametrize(
    "args, error, words",
    [((8, 2.0), TypeError, r"n_heads must be a whole number \(an int\), got 2.0 .*division //"),
     ((8.0, 2), TypeError, r"d_model must be a whole number \(an int\), got 8.0"),
     ((None, 2), TypeError, "d_model must be a whole number.*None"),
     ((8, None), TypeError, "n_heads must be a whole number.*None"),
     ((8, "2"), TypeError, "n_heads must be a whole number.*'2'"),
     ((8, True), TypeError, r"n_heads must be a whole number, got True \(a bool\)"),
     ((8, 0), ValueError, "n_heads must be at least 1, got n_heads=0"),
     ((8, 3), ValueError, "d_model=8 must be a positive multiple of n_heads=3")],
)  # fmt: skip
def test_seeded_projections_names_the_argument(args, error, words):
    with pytest.raises(error, match=words):
        helpers.seeded_projections(*args)


@pytest.mark.parametrize(
    "n_heads, error, words",
    [(2.0, TypeError, r"n_heads must be a whole number \(an int\), got 2.0.*//"),
     (None, TypeError, "n_heads must be a whole number.*None"),
     ("2", TypeError, "n_heads must be a whole number.*'2'"),
     (True, TypeError, r"n_heads must be a whole number, got True \(a bool\)"),
     (-2, ValueError, "n_heads must be at least 1")],
)  # fmt: skip
def test_split_heads_names_n_heads(n_heads, error, words):
    with pytest.raises(error, match=words):
        helpers.split_heads(np.ones((3, 8)), n_heads)


@pytest.mark.parametrize(
    "call, words",
    [(lambda: helpers.token_embeddings(None), r"tokens must be a list of strings .*got NoneType"),
     (lambda: helpers.token_embeddings(123), "tokens must be a list of strings .*got int"),
     (lambda: helpers.token_embeddings(["the", 3]), r"tokens\[1\] is int 3"),
     (lambda: helpers.token_embeddings("the cat"), "got one string; use tokenize"),
     (lambda: helpers.token_embeddings(["the"], d_model=8.0), "d_model must be a whole number"),
     (lambda: helpers.token_embeddings(["the"], seed="0"), "seed must be a whole number"),
     (lambda: helpers.build_Z(None), "tokens must be a list of strings .*got NoneType"),
     (lambda: helpers.tokenize(None), "text must be a string, got NoneType"),
     (lambda: helpers.sinusoidal_positional_encoding(6.0, 8), "n_positions must be a whole"),
     (lambda: helpers.sinusoidal_positional_encoding(6, None), "d_model must be a whole")],
)  # fmt: skip
def test_embedding_helpers_name_the_argument(call, words):
    with pytest.raises(TypeError, match=words):
        call()


def test_tokens_may_be_a_tuple_or_an_array_of_strings():
    tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
    expected = helpers.token_embeddings(tokens)
    np.testing.assert_array_equal(helpers.token_embeddings(tuple(tokens)), expected)
    np.testing.assert_array_equal(helpers.token_embeddings(np.array(tokens)), expected)


def test_tokenize_keeps_unicode_words_whole():
    assert helpers.tokenize("Le café, naïve!") == ["le", "café", ",", "naïve", "!"]
    assert helpers.tokenize("cafe\u0301") == ["café"]  # a combining accent: normalised (NFC)
    assert helpers.tokenize("Straße über 猫") == ["straße", "über", "猫"]
    assert helpers.tokenize("don't stop_it") == ["don't", "stop", "_", "it"]  # as before


def test_tokenize_drops_lone_surrogates_and_joins_pairs():
    assert helpers.tokenize("the cat \ud83d sat") == ["the", "cat", "sat"]
    assert helpers.tokenize("a \ud83d\ude00 b") == ["a", "😀", "b"]
    helpers.build_Z(helpers.tokenize("the cat \ud83d sat"))  # no UnicodeEncodeError


def test_ascii_words_keep_their_vectors():
    """The Unicode tokenizer changes nothing for ASCII sentences (crc32 of the same bytes)."""
    import zlib

    row = np.random.default_rng([0, zlib.crc32(b"cat")]).standard_normal(helpers.D_MODEL)
    np.testing.assert_array_equal(helpers.token_embeddings(["cat"])[0], row)
