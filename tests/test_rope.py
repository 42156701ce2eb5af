"""helpers.rope (issue 35): RoPE's rotation in both conventions against the formula written out
element by element, the relative property, and ALiBi's slopes against the paper's code."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.rope import alibi_bias, alibi_slopes, frequencies, rotate


def _by_hand(X, positions, base=10000.0, interleaved=False):
    """The formula, one pair at a time: pair i of row t turned by positions[t] * base^(-2i/d)."""
    n, d = X.shape
    out = np.empty_like(X, dtype=float)
    for t in range(n):
        for i in range(d // 2):
            angle = positions[t] * base ** (-2 * i / d)
            a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + d // 2)
            out[t, a] = X[t, a] * math.cos(angle) - X[t, b] * math.sin(angle)
            out[t, b] = X[t, a] * math.sin(angle) + X[t, b] * math.cos(angle)
    return out


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("d", [2, 8, 64])
def test_rotate_matches_the_formula_in_both_conventions(d, interleaved):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((7, d))
    positions = rng.uniform(-3, 50, 7)  # real positions (interpolation), negative too
    got = rotate(X, positions, interleaved=interleaved)
    np.testing.assert_allclose(got, _by_hand(X, positions, interleaved=interleaved),
                               rtol=0, atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(rotate(X), _by_hand(X, np.arange(7.0)), rtol=0, atol=1e-12)


def test_the_interleaved_convention_is_the_same_rotation_with_dimensions_permuted():
    rng = np.random.default_rng(0)
    d = 16
    X = rng.standard_normal((5, d))
    # Half layout (0..7 | 8..15) -> interleaved layout (0, 8, 1, 9, ...).
    to_interleaved = np.stack([np.arange(d // 2), np.arange(d // 2, d)], axis=1).ravel()
    half = rotate(X)
    interleaved = rotate(X[:, to_interleaved], interleaved=True)
    np.testing.assert_allclose(interleaved, half[:, to_interleaved], rtol=0, atol=1e-13)


def test_scores_depend_on_the_distance_only_and_norms_are_kept():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 32))
    for m, n in [(0, 0), (5, 2), (40, 17), (3, 9)]:
        ref = rotate(q[None], [m]) @ rotate(k[None], [n]).T
        for shift in (1, 7, 100, 2.5):
            moved = rotate(q[None], [m + shift]) @ rotate(k[None], [n + shift]).T
            assert abs(moved - ref).max() < 1e-12, (m, n, shift)
    X = rng.standard_normal((3, 10, 32))
    np.testing.assert_allclose(np.linalg.norm(rotate(X), axis=-1), np.linalg.norm(X, axis=-1),
                               rtol=1e-13)  # fmt: skip


def test_positions_broadcast_and_float32_stays_float32():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((2, 4, 6, 8))  # (batch, heads, n, d)
    per_sequence = np.array([[0, 1, 2, 3, 4, 5], [10, 11, 12, 13, 14, 15]])[:, None, :]
    got = rotate(X, per_sequence)
    np.testing.assert_allclose(got[1, 3], rotate(X[1, 3], np.arange(10, 16)), atol=1e-13)
    assert rotate(X.astype(np.float32)).dtype == np.float32
    assert frequencies(8)[0] == 1.0 and np.isclose(frequencies(8)[-1], 1e4 ** (-6 / 8))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rotate(np.ones((3, 5))), "even"),
        (lambda: rotate(np.ones(4)), "at least 2 dimensions"),
        (lambda: rotate([[1.0, np.nan]]), "NaN"),
        (lambda: rotate(np.ones((3, 4)), [0, 1]), "do not fit"),
        (lambda: rotate(np.ones((3, 4)), base=1.0), "base"),
        (lambda: rotate(np.ones((3, 4)), base="10000"), "base"),
        (lambda: rotate(np.ones((3, 4)), interleaved="yes"), "interleaved"),
        (lambda: rotate("abc"), "string"),
        (lambda: alibi_slopes(0), "n_heads"),
        (lambda: alibi_bias(4, 2.0), "n_heads"),
    ],
)
def test_bad_input_says_what_to_fix(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _press_et_al(n):
    """The ALiBi authors' get_slopes (fairseq's transformer.py), transcribed."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + _press_et_al(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])  # fmt: skip


@pytest.mark.parametrize("h", [1, 2, 3, 4, 6, 8, 12, 16, 20])
def test_alibi_slopes_are_the_papers(h):
    np.testing.assert_allclose(alibi_slopes(h), _press_et_al(h), rtol=1e-15)
    if h == 8:
        np.testing.assert_allclose(alibi_slopes(8), 0.5 ** np.arange(1, 9))


def test_alibi_bias_is_minus_slope_times_distance_below_the_diagonal():
    bias = alibi_bias(5, 4)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 5, 5)
    assert bias[2, 4, 1] == -slopes[2] * 3 and bias[0, 3, 3] == 0.0
    assert np.isneginf(bias[1, 1, 2]) and np.isneginf(np.triu(bias[3], 1)[0, 4])
