"""Multi-head attention: h separate attentions, concatenated, projected by W_O."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers
from helpers.multihead import head_projections, multi_head_attention


def running_example(n_heads=2, seed=0):
    Z = helpers.build_Z(helpers.tokenize(helpers.RUNNING_SENTENCE))  # (6, 8)
    return Z, helpers.seeded_projections(helpers.D_MODEL, n_heads, seed)


def loop_reference(X_q, X_kv, W, mask=None):
    """One head at a time, with the single-head function, then concat and W_O."""
    outs, weights = [], []
    for head in range(W["W_Q"].shape[0]):
        o, a = helpers.scaled_dot_product_attention(
            X_q @ W["W_Q"][head], X_kv @ W["W_K"][head], X_kv @ W["W_V"][head], mask=mask
        )
        outs.append(o)
        weights.append(a)
    return np.concatenate(outs, axis=-1) @ W["W_O"], np.stack(weights)


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
def test_multi_head_equals_one_attention_per_head_then_concat_and_W_O(n_heads):
    Z, W = running_example(n_heads)
    out, A = multi_head_attention(Z, **W)
    ref_out, ref_A = loop_reference(Z, Z, W)
    assert out.shape == (6, 8) and A.shape == (n_heads, 6, 6)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, ref_A, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0)


def test_one_big_projection_split_into_column_blocks_equals_per_head_projections():
    Z, W = running_example(2)
    W_Q_big = np.concatenate(list(W["W_Q"]), axis=1)  # (d_model, h*d_k)
    np.testing.assert_allclose(helpers.split_heads(Z @ W_Q_big, 2), head_projections(Z, W["W_Q"]))


def test_cross_attention_takes_queries_from_one_sequence_and_keys_values_from_the_other():
    Z, W = running_example(2)
    X_q = helpers.build_Z(["le", "chat", "s'est", "assis"])  # (4, 8)
    out, A = multi_head_attention(X_q, **W, X_kv=Z)
    assert out.shape == (4, 8) and A.shape == (2, 4, 6)
    ref_out, ref_A = loop_reference(X_q, Z, W)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, ref_A, rtol=1e-12, atol=1e-12)


def test_causal_mask_is_shared_by_every_head():
    Z, W = running_example(2)
    out, A = multi_head_attention(Z, **W, mask=helpers.causal_mask(6))
    assert np.all(A[:, ~helpers.causal_mask(6)] == 0)
    ref_out, _ = loop_reference(Z, Z, W, mask=helpers.causal_mask(6))
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)


def test_batched_inputs_match_one_sequence_at_a_time():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3, 5, 8))
    W = helpers.seeded_projections(8, 2, seed=1)
    mask = helpers.causal_mask(5)
    out, A = multi_head_attention(X, **W, mask=mask)
    assert out.shape == (3, 5, 8) and A.shape == (3, 2, 5, 5)
    for b in range(3):
        o, a = multi_head_attention(X[b], **W, mask=mask)
        np.testing.assert_allclose(out[b], o, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(A[b], a, rtol=1e-12, atol=1e-12)


def test_errors_name_the_mismatched_sizes():
    Z, W = running_example(2)
    with pytest.raises(ValueError, match="d_model=8"):
        multi_head_attention(Z[:, :6], **W)
    with pytest.raises(ValueError, match=r"h \* d_v = 2 \* 4 = 8"):
        multi_head_attention(Z, W["W_Q"], W["W_K"], W["W_V"], W["W_O"][:6])
    with pytest.raises(ValueError, match="one projection per head"):
        multi_head_attention(Z, W["W_Q"][0], W["W_K"], W["W_V"], W["W_O"])
    with pytest.raises(ValueError, match="same number of heads"):
        multi_head_attention(Z, W["W_Q"][:1], W["W_K"], W["W_V"], W["W_O"])


# ---------------------------------------------------------------------------------------------
# Properties (hypothesis): the claims lessons 05 and 06 make, on random inputs.


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 9),
    h=st.sampled_from([1, 2, 4]),
    p=st.integers(0, 8),
    seed=st.integers(0, 2**32 - 1),
    size=st.sampled_from([1.0, 100.0]),
)
def test_masked_future_tokens_do_not_change_earlier_outputs(n, h, p, seed, size):
    p = min(p, n)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 8))
    W = helpers.seeded_projections(8, h, seed=seed % 1000)
    X_new = X.copy()
    X_new[p:] = rng.normal(0.0, size, size=(n - p, 8))  # any future at all
    mask = helpers.causal_mask(n)
    out, _ = multi_head_attention(X, **W, mask=mask)
    out_new, _ = multi_head_attention(X_new, **W, mask=mask)
    assert np.array_equal(out[:p], out_new[:p])  # bit for bit, not just close


@settings(max_examples=40, deadline=None)
@given(
    n_q=st.integers(1, 7),
    n_k=st.integers(1, 7),
    h=st.sampled_from([1, 2, 4, 8]),
    seed=st.integers(0, 2**32 - 1),
)
def test_cross_attention_rows_are_convex_combinations_of_the_other_sequence(n_q, n_k, h, seed):
    rng = np.random.default_rng(seed)
    X_q, X_kv = rng.standard_normal((n_q, 8)), rng.standard_normal((n_k, 8))
    W = helpers.seeded_projections(8, h, seed=seed % 1000)
    out, A = multi_head_attention(X_q, **W, X_kv=X_kv)
    assert out.shape == (n_q, 8) and A.shape == (h, n_q, n_k)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(A >= 0)
    # Changing the query side's other rows never changes a query's own row.
    X_q2 = X_q.copy()
    X_q2[1:] += 5.0
    out2, _ = multi_head_attention(X_q2, **W, X_kv=X_kv)
    np.testing.assert_array_equal(out2[0], out[0])


# ------------------------------------------------------------ issue 12: errors that name it


def test_nan_in_x_names_the_users_argument_not_an_internal_array():
    Z, W = running_example()
    X = Z.copy()
    X[2, 3] = np.nan
    with pytest.raises(
        ValueError, match=r"^X_q contains 1 NaN/inf value\(s\), the first at index \(2, 3\)"
    ):
        multi_head_attention(X, **W)
    with pytest.raises(ValueError, match=r"^X_kv contains 1 NaN/inf"):
        multi_head_attention(Z, **W, X_kv=X)
    W_bad = dict(W, W_K=W["W_K"].copy())
    W_bad["W_K"][1, 0, 0] = np.inf
    with pytest.raises(
        ValueError, match=r"^W_K contains 1 NaN/inf value\(s\), the first at index \(1, 0, 0\)"
    ):
        multi_head_attention(Z, **W_bad)


def test_a_wrong_shaped_mask_is_reported_with_its_shape_and_the_users_sizes():
    Z, W = running_example()  # n = 6
    with pytest.raises(ValueError) as info:
        multi_head_attention(Z, **W, mask=helpers.causal_mask(5))
    message = str(info.value)
    assert message.startswith("mask of shape (5, 5) does not fit")
    assert "(6, 6) = (..., n_q, n_k)" in message and "n_q = 6 rows of X_q" in message
    assert "(1, 6, 6)" not in message and "(2, 6, 6)" not in message  # no internal head axis
    with pytest.raises(ValueError, match="mask of shape \\(6,\\) does not fit"):
        multi_head_attention(Z, **W, mask=np.ones(6, bool))
    with pytest.raises(ValueError, match="mask must be boolean"):
        multi_head_attention(Z, **W, mask=np.ones((6, 6)))


def test_overflowing_projections_name_x_and_w():
    Z, W = running_example()
    with pytest.raises(ValueError, match=r"X_q @ W_Q overflowed to inf/NaN in float64"):
        multi_head_attention(Z * 1e10, **dict(W, W_Q=W["W_Q"] * 1e300))  # 1e310 > 1.8e308


def test_overflowing_scores_say_where_they_come_from():
    Z, W = running_example()
    with pytest.raises(
        ValueError, match=r"overflowed.*in multi_head_attention: Q = X_q @ W_Q\[head\]"
    ):
        multi_head_attention(Z * 1e160, **W)


def test_batch_dimensions_of_x_q_and_x_kv_that_do_not_broadcast_are_named():
    Z, W = running_example()
    with pytest.raises(
        ValueError, match=r"leading \(batch\) dimensions of X_q \(2,\) and X_kv \(3,\)"
    ):
        multi_head_attention(np.stack([Z, Z]), **W, X_kv=np.stack([Z, Z, Z]))
