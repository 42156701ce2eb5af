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


def test_the_scale_does_not_enlarge_the_gradient_reaching_q_dot_k_it_spreads_it_over_keys():
    """Lesson 03's "which gradient gets small?", measured as the lesson states it (issue 17).

    With respect to the softmax's own input the unscaled Jacobian is the smaller one (the
    paper's "we suspect"); with respect to the raw q·k the scale's factor 1/√d_k makes the
    scaled one smaller. What the scale changes is how many keys keep a weight of at least 1 %.
    """
    d_ks = 2 ** np.arange(10)
    stats = scaling.softmax_peakedness(d_ks, n_keys=16, n_queries=500, seed=0)  # the lesson's
    none, sqrt = stats["none"], stats["sqrt"]
    for at in (6, 9):  # d_k = 64, 512
        assert none["grad_norm"][at] < sqrt["grad_norm"][at]
        assert sqrt["raw_grad_norm"][at] < none["raw_grad_norm"][at]
        np.testing.assert_allclose(
            sqrt["raw_grad_norm"][at], sqrt["grad_norm"][at] / np.sqrt(d_ks[at])
        )
        assert none["keys_over_1pct"][at] < 3 < 14 < sqrt["keys_over_1pct"][at]
    # the numbers lesson 03 prints beside its sentences
    assert f"{none['grad_norm'][6]:.3f} {sqrt['grad_norm'][6]:.3f}" == "0.183 0.304"
    assert f"{sqrt['raw_grad_norm'][6]:.3f} {none['raw_grad_norm'][6]:.3f}" == "0.038 0.183"
    assert f"{sqrt['raw_grad_norm'][9]:.3f} {none['raw_grad_norm'][9]:.3f}" == "0.014 0.071"
    assert f"{none['keys_over_1pct'][6]:.2f} {none['keys_over_1pct'][9]:.2f}" == "2.46 1.40"
    assert f"{sqrt['keys_over_1pct'][6]:.2f}" == "14.62"


def test_lesson_03_measures_what_the_scale_does_to_the_gradient():
    """The false sentence of issue 17: the gradient w.r.t. the raw q·k is *smaller* scaled."""
    from pathlib import Path

    source = (Path(__file__).parents[1] / "solutions" / "03_scores_and_scaling.py").read_text()
    assert "raw_grad_norm" in source and "keys_over_1pct" in source


def test_keys_over_1pct_counts_the_keys_that_get_a_learning_signal():
    stats = scaling.softmax_statistics(np.array([[0.995, 0.005, 0, 0], [0.25] * 4]))
    np.testing.assert_array_equal(stats["keys_over_1pct"], [1.0, 4.0])


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


def test_entropy_scale_reaches_the_target_mean_entropy():
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((6, 9)) * 0.03  # small scores: the target needs c > 10
    target = 0.4 * np.log(9)
    c = scaling.entropy_scale(scores, target)
    assert c > 10
    assert abs(scaling.mean_row_entropy(scores, c) - target) < 1e-9
    with pytest.raises(ValueError, match="target must lie between 0"):
        scaling.entropy_scale(scores, np.log(9) + 0.1)
