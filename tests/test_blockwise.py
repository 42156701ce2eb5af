"""Blockwise attention with an online softmax gives naive attention's output, in less memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers
from helpers.blockwise import blockwise_attention, online_softmax_steps, score_matrix_bytes


def naive(Q, K, V, causal=False, scale=None):
    mask = np.tril(np.ones((Q.shape[-2], K.shape[-2]), dtype=bool)) if causal else None
    return helpers.scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)[0]


@settings(max_examples=60, deadline=None)
@given(
    n_q=st.integers(1, 40),
    n_k=st.integers(1, 40),
    d_k=st.integers(1, 9),
    d_v=st.integers(1, 9),
    heads=st.integers(1, 3),
    block_size=st.integers(1, 50),
    causal=st.booleans(),
    spread=st.sampled_from([0.1, 1.0, 10.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_blockwise_equals_naive_for_random_shapes_and_blocks(
    n_q, n_k, d_k, d_v, heads, block_size, causal, spread, seed
):
    rng = np.random.default_rng(seed)
    Q = rng.normal(0, spread, (heads, n_q, d_k))
    K = rng.normal(0, spread, (heads, n_k, d_k))
    V = rng.normal(size=(heads, n_k, d_v))
    got = blockwise_attention(Q, K, V, block_size=block_size, causal=causal)
    expected = naive(Q, K, V, causal)
    assert got.shape == expected.shape == (heads, n_q, d_v)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_causal_blockwise_equals_naive_with_helpers_causal_mask():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 2, 4, 33, 8))  # batch 2, h = 4, n = 33, d_k = 8
    expected = helpers.scaled_dot_product_attention(Q, K, V, mask=helpers.causal_mask(33))[0]
    for block_size in (1, 5, 16, 33, 100):
        got = blockwise_attention(Q, K, V, block_size=block_size, causal=True)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_large_scores_do_not_overflow():
    """Scores of +-1000 would overflow a plain exp; the running max keeps them safe."""
    rng = np.random.default_rng(1)
    Q, K = rng.normal(0, 30, (2, 50, 4))
    V = rng.normal(size=(50, 3))
    got = blockwise_attention(Q, K, V, block_size=7)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, naive(Q, K, V), rtol=0, atol=1e-12)


def test_custom_scale_matches_naive():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(3, 12, 4))
    np.testing.assert_allclose(
        blockwise_attention(Q, K, V, block_size=5, scale=0.3),
        naive(Q, K, V, scale=0.3),
        rtol=0,
        atol=1e-12,
    )


def test_float32_stays_float32_and_close():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(3, 64, 16)).astype(np.float32)
    got = blockwise_attention(Q, K, V, block_size=16)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got, naive(Q.astype(float), K.astype(float), V.astype(float)), rtol=1e-5, atol=1e-5
    )


def test_leading_dimensions_broadcast_like_naive():
    rng = np.random.default_rng(4)
    Q = rng.normal(size=(2, 3, 10, 4))  # (batch, h, n_q, d_k)
    K, V = rng.normal(size=(2, 10, 4))  # shared by every batch and head
    np.testing.assert_allclose(
        blockwise_attention(Q, K, V, block_size=3), naive(Q, K, V), rtol=0, atol=1e-12
    )


def test_steps_track_running_max_sum_and_partial_output():
    """After block b, the state is exactly the softmax over the keys seen so far."""
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 6, 4))
    steps = list(online_softmax_steps(Q, K, V, block_size=4))
    assert [(s.block, s.start, s.stop) for s in steps] == [(0, 0, 4), (1, 4, 6)]
    scores = Q @ K.T / 2.0  # 1/sqrt(d_k) with d_k = 4
    for step in steps:
        seen = scores[:, : step.stop]
        np.testing.assert_allclose(step.m, seen.max(axis=1), rtol=0, atol=1e-15)
        np.testing.assert_allclose(
            step.l, np.exp(seen - step.m[:, None]).sum(axis=1), rtol=1e-14, atol=0
        )
        np.testing.assert_allclose(
            step.output, naive(Q, K[: step.stop], V[: step.stop]), rtol=0, atol=1e-12
        )


def test_peak_memory_grows_with_block_not_with_n_squared():
    rng = np.random.default_rng(6)
    n, d_k, block = 1024, 16, 64
    Q, K, V = rng.normal(size=(3, n, d_k))

    def peak(fn):
        tracemalloc.start()
        fn()
        peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak_bytes

    naive_peak = peak(lambda: naive(Q, K, V))
    block_peak = peak(lambda: blockwise_attention(Q, K, V, block_size=block))
    assert naive_peak > n * n * 8  # at least one float64 score matrix
    assert block_peak < 10 * n * block * 8  # a few tiles and the running state, no n x n
    assert block_peak * 10 < naive_peak


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(Q=np.ones((3, 4)), K=np.ones((3, 5)), V=np.ones((3, 2))), "d_k=4 but K has d_k=5"),
        (dict(Q=np.ones((3, 4)), K=np.ones((3, 4)), V=np.ones((2, 2))), "n_k=3 positions but V"),
        (dict(Q=np.ones((3, 4)), K=np.ones((0, 4)), V=np.ones((0, 2))), "no positions"),
        (dict(Q=np.ones(4), K=np.ones((3, 4)), V=np.ones((3, 2))), "at least 2 dimensions"),
        (dict(Q=np.full((3, 4), np.nan), K=np.ones((3, 4)), V=np.ones((3, 2))), "NaN/inf"),
        (
            dict(Q=np.ones((3, 4)), K=np.ones((3, 4)), V=np.ones((3, 2)), block_size=0),
            "block_size must be at least 1",
        ),
        (
            dict(Q=np.ones((3, 4)), K=np.ones((3, 4)), V=np.ones((3, 2)), block_size=2.5),
            "whole number",
        ),
        (
            dict(Q=np.ones((3, 4)), K=np.ones((3, 4)), V=np.ones((3, 2)), causal="yes"),
            "causal must be True or False",
        ),
        (
            dict(Q=np.ones((3, 4)), K=np.ones((3, 4)), V=np.ones((3, 2)), scale=-1.0),
            "scale must be a finite positive",
        ),
        (
            dict(Q=np.ones((2, 3, 4)), K=np.ones((5, 3, 4)), V=np.ones((5, 3, 2))),
            "do not broadcast",
        ),
    ],
)
def test_bad_input_raises_a_value_error_that_names_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        blockwise_attention(**kwargs)


def test_score_matrix_bytes_counts_batch_heads_n_squared_and_itemsize():
    assert score_matrix_bytes(100_000) == 4 * 10**10  # one float32 head: 40 GB
    assert score_matrix_bytes(1024, h=8, batch=2, dtype="float64") == 2 * 8 * 1024**2 * 8
    assert score_matrix_bytes(10, h=2, batch=3, dtype=np.float16) == 3 * 2 * 100 * 2
    assert isinstance(score_matrix_bytes(np.int64(5)), int)
    with pytest.raises(ValueError, match="n must be a non-negative whole number"):
        score_matrix_bytes(-1)
    with pytest.raises(ValueError, match="not a NumPy dtype"):
        score_matrix_bytes(4, dtype="float33")


# ------------------------------------------------------------ issue 12: never a silent NaN


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_overflowing_scores_raise_the_same_clear_error_as_the_plain_function(causal, dtype):
    rng = np.random.default_rng(3)
    Q, K, V = (rng.standard_normal((5, 4)) for _ in range(3))
    big = 1e200 if dtype == np.float64 else 1e20
    Qb, Kb, Vb = (Q * big).astype(dtype), (K * big).astype(dtype), V.astype(dtype)
    mask = helpers.causal_mask(5) if causal else None
    with pytest.raises(ValueError) as plain:
        helpers.scaled_dot_product_attention(Qb, Kb, Vb, mask=mask)
    with pytest.raises(ValueError) as blockwise:
        blockwise_attention(Qb, Kb, Vb, block_size=2, causal=causal)
    for info in (plain, blockwise):
        assert f"overflowed to inf/NaN in {np.dtype(dtype)}" in str(info.value)
        assert ("compute in float64" in str(info.value)) == (dtype != np.float64)
    with pytest.raises(ValueError, match="overflowed"):
        list(online_softmax_steps(Qb, Kb, Vb, block_size=2, causal=causal))


def test_the_overflow_error_names_the_query_row_in_a_later_causal_block():
    Q = np.ones((6, 2))
    Q[4] = 1e200  # only query 4 overflows; with causal blocks of 2 it sits in rows 4: of block 2
    K = np.full((6, 2), 1e200)
    with pytest.raises(ValueError, match=r"query row \(4,\)"):
        blockwise_attention(Q, K, np.ones((6, 2)), block_size=2, causal=True)


@pytest.mark.parametrize(
    "block_size, error, words",
    [(2.0, TypeError, r"block_size must be a whole number \(an int\).*//"),
     (True, TypeError, "block_size must be a whole number, got True"),
     (0, ValueError, "block_size must be at least 1, got block_size=0"),
     ("2", TypeError, "block_size must be a whole number.*'2'")],
)  # fmt: skip
def test_block_size_errors_name_block_size(block_size, error, words):
    Q = np.ones((3, 2))
    with pytest.raises(error, match=words):
        blockwise_attention(Q, Q, Q, block_size=block_size)
