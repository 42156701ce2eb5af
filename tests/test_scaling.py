"""helpers.scaling: the measurements behind lesson 03's "why divide by √d_k"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import scaling, softmax

D_KS = [1, 4, 16, 64, 256]


def test_unscaled_dot_product_variance_grows_like_d_k():
    var = scaling.dot_product_variance(D_KS, n_samples=4000, seed=0)
    slope = np.polyfit(np.log(D_KS), np.log(var), 1)[0]
    assert abs(slope - 1) < 0.05
    np.testing.assert_allclose(var / np.array(D_KS), 1.0, rtol=0.15)


def test_scaled_dot_product_variance_stays_near_one():
    var = scaling.dot_product_variance(D_KS, n_samples=4000, seed=0, scale="sqrt")
    np.testing.assert_allclose(var, 1.0, rtol=0.15)


def test_dividing_by_d_k_shrinks_the_variance_like_one_over_d_k():
    var = scaling.dot_product_variance(D_KS, n_samples=4000, seed=0, scale="linear")
    np.testing.assert_allclose(var * np.array(D_KS), 1.0, rtol=0.15)


def test_without_the_scale_softmax_saturates_and_its_gradient_shrinks():
    stats = scaling.softmax_peakedness([1, 512], n_keys=16, n_queries=300, seed=1)
    none, sqrt, linear = stats["none"], stats["sqrt"], stats["linear"]
    assert none["max_weight"][1] > 0.9  # nearly one-hot
    assert none["grad_norm"][1] < 0.5 * sqrt["grad_norm"][1]
    assert 0.15 < sqrt["max_weight"][1] < 0.35  # the same range as at d_k = 1
    assert abs(sqrt["entropy"][1] - sqrt["entropy"][0]) < 0.2
    assert linear["max_weight"][1] < 0.1  # too much scaling: nearly flat (1/16 = 0.0625)


def test_softmax_statistics_of_one_hot_and_uniform_rows():
    stats = scaling.softmax_statistics(np.array([[1.0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]]))
    np.testing.assert_allclose(stats["max_weight"], [1.0, 0.25])
    np.testing.assert_allclose(stats["entropy"], [0.0, np.log(4)])
    assert stats["grad_norm"][0] == 0.0  # one-hot: the softmax no longer responds
    assert stats["grad_norm"][1] > 0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=8))
def test_grad_norm_is_the_norm_of_the_finite_difference_jacobian(z):
    z = np.array(z)
    p = softmax(z)
    eps = 1e-6
    J = np.stack(
        [(softmax(z + eps * e) - softmax(z - eps * e)) / (2 * eps) for e in np.eye(len(z))]
    )
    got = scaling.softmax_statistics(p)["grad_norm"]
    np.testing.assert_allclose(got, np.linalg.norm(J), atol=1e-6)


def test_row_weights_match_the_attention_function():
    from helpers import scaled_dot_product_attention

    rng = np.random.default_rng(0)
    q, K = rng.standard_normal(8), rng.standard_normal((5, 8))
    scores, weights = scaling.row_weights(q, K, "sqrt")
    _, A = scaled_dot_product_attention(q[None], K, np.eye(5))
    np.testing.assert_allclose(scores, K @ q / np.sqrt(8))
    np.testing.assert_allclose(weights, A[0])
    _, flat = scaling.row_weights(q, K, "linear")
    _, peaked = scaling.row_weights(q, K, "none")
    assert flat.max() < weights.max() < peaked.max()


def test_row_weights_survive_huge_unscaled_scores():
    q = np.full(512, 3.0)
    K = np.random.default_rng(0).standard_normal((8, 512)) * 3
    scores, weights = scaling.row_weights(q, K, "none")
    assert np.abs(scores).max() > 100  # exp(100) would overflow float32
    assert np.all(np.isfinite(weights)) and np.isclose(weights.sum(), 1)


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: scaling.scale_factor(0, "sqrt"), "d_k must be at least 1, got d_k=0"),
        (lambda: scaling.scale_factor(4, "log"), "scale must be one of"),
        (lambda: scaling.row_weights(np.ones(3), np.ones((5, 4))), "q of shape (d_k,)"),
        (lambda: scaling.softmax_peakedness([4], scales=("half",)), "scales must be one of"),
        (lambda: scaling.scale_factor(4, np.array([])), "scale must be one of the names"),
        (lambda: scaling.scale_factor(4.0, "sqrt"), "d_k must be a whole number"),
        (lambda: scaling.dot_product_variance([4, 2.0]), "d_ks[1] must be a whole number"),
        (lambda: scaling.dot_product_variance(None), "d_ks must be a list"),
        (lambda: scaling.random_dot_products(4, 2, 3, rng=0), "rng must be a numpy"),
        (lambda: scaling.random_dot_products(4, -2, 3, np.random.default_rng()), "n_queries"),
        (lambda: scaling.softmax_statistics([[np.nan, 1.0]]), "weights contains 1 NaN"),
        (lambda: scaling.row_weights("abc", np.ones((5, 4))), "q must be an array of numbers"),
    ],
)
def test_bad_input_raises_a_teaching_error(call, text):
    with pytest.raises(ValueError, match=None) as info:
        call()
    assert text in str(info.value)
