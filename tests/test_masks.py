"""helpers.padding_mask: True = a real token that may be attended; bad input named clearly."""

from __future__ import annotations

import numpy as np
import pytest

import helpers
from helpers.masks import padding_mask


def test_each_row_is_true_exactly_on_the_real_tokens():
    mask = padding_mask([3, 1, 4], 4)
    assert mask.dtype == bool and mask.shape == (3, 4)
    assert mask.astype(int).tolist() == [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]]


def test_it_is_exported_from_helpers():
    assert helpers.padding_mask is padding_mask


@pytest.mark.parametrize(
    "lengths, n", [([], 5), ([0, 0], 3), ([2], 2), (np.array([5, 2], np.int32), 6), ((1, 2), 0 + 2)]
)
def test_edge_cases(lengths, n):
    mask = padding_mask(lengths, n)
    assert mask.shape == (len(lengths), n)
    assert mask.sum(axis=1).tolist() == list(lengths)


def test_a_key_padding_mask_broadcasts_over_queries_and_heads_in_attention():
    rng = np.random.default_rng(0)
    b, h, n, d_k = 3, 2, 5, 4
    Q, K, V = (rng.normal(size=(b, h, n, d_k)) for _ in range(3))
    lengths = np.array([5, 2, 3])
    keys = padding_mask(lengths, n)[:, None, None, :]  # (b, 1, 1, n)
    out, weights = helpers.scaled_dot_product_attention(Q, K, V, mask=keys)
    assert weights.shape == (b, h, n, n)
    for s, length in enumerate(lengths):
        assert np.all(weights[s, :, :, length:] == 0.0)  # padded keys get exactly 0
        alone, _ = helpers.scaled_dot_product_attention(
            Q[s, :, :length], K[s, :, :length], V[s, :, :length]
        )
        assert np.allclose(out[s, :, :length], alone)  # real tokens: as if unpadded


@pytest.mark.parametrize(
    "lengths, n, error, words",
    [
        ([1, 2], 2.0, TypeError, "n must be a whole number"),
        ([1, 2], True, TypeError, "n must be a whole number"),
        ([1, 2], None, TypeError, "n must be a whole number"),
        ([1, 2], "3", TypeError, "n must be a whole number"),
        ([0], -1, ValueError, "n must be at least 0"),
        ([1.0, 2.0], 3, TypeError, "lengths must hold whole numbers"),
        ([True, False], 3, TypeError, "lengths must hold whole numbers"),
        (["a"], 3, TypeError, "lengths must hold whole numbers"),
        (None, 3, TypeError, "lengths must hold whole numbers"),
        ([[1, 2]], 3, ValueError, "lengths must be 1-D"),
        (4, 3, ValueError, "lengths must be 1-D"),
        ([1, 4], 3, ValueError, r"lengths\[1\] = 4 is outside 0..n"),
        ([-1], 3, ValueError, r"lengths\[0\] = -1 is outside"),
        ([[1], [1, 2]], 3, TypeError, "lengths"),
    ],
)
def test_bad_input_names_the_argument(lengths, n, error, words):
    with pytest.raises(error, match=words):
        padding_mask(lengths, n)
