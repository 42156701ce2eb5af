"""The attention math: the lesson text's worked example, the invariants, and the errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from helpers import causal_mask, scaled_dot_product_attention, softmax

# The lesson text's "Build it yourself" cell, printed values (np.round(..., 3)).
LESSON_WEIGHTS = np.array([[0.452, 0.369, 0.179], [0.744, 0.117, 0.139], [0.818, 0.099, 0.083]])
LESSON_OUTPUT = np.array(
    [
        [-0.275, -0.698, -0.833, 0.551],
        [-0.654, -1.274, -0.911, 0.802],
        [-0.742, -1.385, -0.952, 0.879],
    ]
)


def lesson_qkv():
    """Q, K, V exactly as the lesson text builds them, from its own seed."""
    rng = np.random.RandomState(0)  # what np.random.seed(0) + np.random.randn use
    X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    Wq, Wk, Wv = (rng.randn(4, 4) * 0.5 for _ in range(3))
    return X @ Wq, X @ Wk, X @ Wv


def test_reproduces_the_lesson_texts_build_it_yourself_numbers():
    out, A = scaled_dot_product_attention(*lesson_qkv())
    np.testing.assert_array_equal(np.round(A, 3), LESSON_WEIGHTS)
    np.testing.assert_array_equal(np.round(out, 3), LESSON_OUTPUT)
    np.testing.assert_array_equal(np.round(A.sum(axis=1), 3), [1.0, 1.0, 1.0])


def reference_attention(Q, K, V, mask=None):
    """Loops, one query at a time: the definition, written the slow way."""
    d_k = Q.shape[-1]
    out = np.zeros((Q.shape[0], V.shape[1]))
    weights = np.zeros((Q.shape[0], K.shape[0]))
    for i, q in enumerate(Q):
        keys = [j for j in range(K.shape[0]) if mask is None or mask[i, j]]
        s = np.array([q @ K[j] / np.sqrt(d_k) for j in keys])
        e = np.exp(s - s.max())
        for w, j in zip(e / e.sum(), keys):
            weights[i, j] = w
            out[i] += w * V[j]
    return out, weights


shapes = st.tuples(st.integers(1, 7), st.integers(1, 7), st.integers(1, 6), st.integers(1, 6))


@st.composite
def qkv(draw, max_abs=10.0):
    n_q, n_k, d_k, d_v = draw(shapes)
    elements = st.floats(-max_abs, max_abs, allow_nan=False, allow_infinity=False)
    return (
        draw(arrays(np.float64, (n_q, d_k), elements=elements)),
        draw(arrays(np.float64, (n_k, d_k), elements=elements)),
        draw(arrays(np.float64, (n_k, d_v), elements=elements)),
    )


@given(qkv())
def test_matches_the_loop_definition(qkv_arrays):
    out, weights = scaled_dot_product_attention(*qkv_arrays)
    ref_out, ref_weights = reference_attention(*qkv_arrays)
    np.testing.assert_allclose(weights, ref_weights, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-9)


@given(qkv())
def test_rows_sum_to_one_and_output_is_a_convex_combination_of_values(qkv_arrays):
    Q, K, V = qkv_arrays
    out, weights = scaled_dot_product_attention(Q, K, V)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12)
    # each output coordinate lies between the smallest and largest value in that column
    assert np.all(out <= V.max(axis=0) + 1e-9) and np.all(out >= V.min(axis=0) - 1e-9)


@given(qkv(), st.randoms(use_true_random=False))
def test_masked_weights_are_exactly_zero(qkv_arrays, random):
    Q, K, V = qkv_arrays
    mask = np.array([[random.random() < 0.5 for _ in range(len(K))] for _ in range(len(Q))])
    mask[np.arange(len(Q)), [random.randrange(len(K)) for _ in range(len(Q))]] = True
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert np.all(weights[~mask] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out, reference_attention(Q, K, V, mask)[0], atol=1e-9)


@settings(max_examples=50)
@given(st.integers(2, 8), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_masked_future_tokens_do_not_change_earlier_outputs(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    out, _ = scaled_dot_product_attention(X, X, X, mask=causal_mask(n))
    t = int(rng.integers(1, n))  # perturb positions t.. (the future of every i < t)
    X2 = X.copy()
    X2[t:] = rng.normal(scale=100.0, size=(n - t, d))
    out2, _ = scaled_dot_product_attention(X2, X2, X2, mask=causal_mask(n))
    assert np.array_equal(out[:t], out2[:t])  # bit-identical, not just close


@given(qkv(), st.randoms(use_true_random=False))
def test_permutation_equivariance_without_positions(qkv_arrays, random):
    Q, K, V = qkv_arrays
    p_q = np.array(random.sample(range(len(Q)), len(Q)))
    p_k = np.array(random.sample(range(len(K)), len(K)))
    out, weights = scaled_dot_product_attention(Q, K, V)
    out_p, weights_p = scaled_dot_product_attention(Q[p_q], K[p_k], V[p_k])
    np.testing.assert_allclose(out_p, out[p_q], atol=1e-9)
    np.testing.assert_allclose(weights_p, weights[p_q][:, p_k], atol=1e-12)


@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 5), st.integers(1, 8)),
        elements=st.floats(-1e8, 1e8, allow_nan=False),
    )
)
def test_softmax_is_finite_and_normalised_for_logits_up_to_1e8(x):
    p = softmax(x)
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)


def test_large_scores_give_finite_attention():
    Q = np.array([[1e4, -1e4], [3e3, 2e3]])
    out, weights = scaled_dot_product_attention(Q, Q * 1e4, np.eye(2))
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))


def test_batched_heads_equal_one_call_per_head():
    rng = np.random.default_rng(1)
    Q, K, V = (
        rng.normal(size=(2, 3, 5, 4)),
        rng.normal(size=(2, 3, 6, 4)),
        rng.normal(size=(2, 3, 6, 2)),
    )
    mask = rng.random((5, 6)) < 0.7
    mask[:, 0] = True
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert out.shape == (2, 3, 5, 2) and weights.shape == (2, 3, 5, 6)
    for b in range(2):
        for h in range(3):
            o, w = scaled_dot_product_attention(Q[b, h], K[b, h], V[b, h], mask=mask)
            np.testing.assert_allclose(out[b, h], o, atol=1e-12)
            np.testing.assert_allclose(weights[b, h], w, atol=1e-12)


def test_scale_defaults_to_one_over_sqrt_d_k_and_can_be_set():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(3, 16)), rng.normal(size=(4, 16)), rng.normal(size=(4, 2))
    _, default = scaled_dot_product_attention(Q, K, V)
    _, explicit = scaled_dot_product_attention(Q, K, V, scale=0.25)
    np.testing.assert_allclose(default, explicit, atol=1e-15)
    _, unscaled = scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(unscaled, softmax(Q @ K.T), atol=1e-12)


def test_float32_stays_float32():
    rng = np.random.default_rng(3)
    Q = rng.normal(size=(4, 8)).astype(np.float32)
    out, weights = scaled_dot_product_attention(Q, Q, Q)
    assert out.dtype == np.float32 and weights.dtype == np.float32


def test_causal_mask_is_lower_triangle_with_diagonal():
    m = causal_mask(4)
    assert m.dtype == bool and m.shape == (4, 4)
    assert np.array_equal(m, np.array([[j <= i for j in range(4)] for i in range(4)]))
    assert causal_mask(0).shape == (0, 0)


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda: scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2))),
            ["d_k=4", "d_k=5"],
        ),
        (
            lambda: scaled_dot_product_attention(np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 2))),
            ["n_k=5", "6"],
        ),
        (
            lambda: scaled_dot_product_attention(np.ones(4), np.ones((3, 4)), np.ones((3, 2))),
            ["Q", "2 dimensions", "(4,)"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), mask=np.ones((2, 2), bool)
            ),
            ["(2, 2)", "(3, 3)"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), mask=np.array([[1, 0, 0]] * 3)
            ),
            ["boolean", "int"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.ones((2, 4)),
                np.ones((3, 4)),
                np.ones((3, 2)),
                mask=np.array([[True, False, False], [False] * 3]),
            ),
            ["row (1,)", "no key"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.array([[1.0, np.nan]]), np.ones((3, 2)), np.ones((3, 2))
            ),
            ["Q contains 1 NaN/inf", "(0, 1)"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.ones((3, 2)), np.ones((3, 2)), np.full((3, 2), np.inf)
            ),
            ["V contains 6 NaN/inf"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), scale=-1.0
            ),
            ["scale", "-1.0"],
        ),
        (
            lambda: scaled_dot_product_attention(np.ones((3, 2)), np.ones((0, 2)), np.ones((0, 2))),
            ["n_k=0"],
        ),
        (
            lambda: scaled_dot_product_attention(
                np.full((2, 2), 1e30, np.float32),
                np.full((3, 2), 1e30, np.float32),
                np.ones((3, 2)),
            ),
            ["overflowed", "float32"],
        ),
        (lambda: softmax(np.array([[1.0, np.nan]])), ["NaN"]),
        (lambda: softmax(np.array([[-np.inf, -np.inf]])), ["entirely -inf"]),
        (lambda: causal_mask(-2), ["n=-2"]),
        (lambda: causal_mask(2.5), ["2.5"]),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_sizes_or_values(call, words):
    with pytest.raises(ValueError) as error:
        call()
    for word in words:
        assert word in str(error.value), (word, str(error.value))


# ------------------------------------------------------------ issue 12: errors that name it

RNG = np.random.default_rng(12)
Q3, K3, V3 = (RNG.standard_normal((2, 3, 4)) for _ in range(3))  # (b, n, d_k)


def test_batch_shapes_that_do_not_broadcast_name_q_k_v_and_their_shapes():
    K_bad = RNG.standard_normal((3, 3, 4))  # 3 sequences against Q's 2
    with pytest.raises(
        ValueError, match=r"leading \(batch/head\) dimensions of Q \(2,\), K \(3,\)"
    ):
        scaled_dot_product_attention(Q3, K_bad, K_bad)
    with pytest.raises(ValueError, match=r"V \(3,\) do not broadcast"):
        scaled_dot_product_attention(Q3, K3, RNG.standard_normal((3, 3, 4)))


@pytest.mark.parametrize(
    "scale, words",
    [
        ("0.5", "scale must be one real number.*str"),
        (np.array([0.5, 0.5]), "scale must be one real number.*ndarray"),
        ([0.5], "scale must be one real number.*list"),
        (0.5 + 1j, "scale must be a real number, got the complex"),
        (np.complex128(0.5), "scale must be a real number"),
        (True, r"scale must be a number, got True \(a bool\)"),
        (np.True_, r"scale must be a number, got .*True \(a bool\)"),
    ],
)
def test_a_scale_that_is_not_one_real_number_is_a_type_error_naming_scale(scale, words):
    with pytest.raises(TypeError, match=words):
        scaled_dot_product_attention(Q3, K3, V3, scale=scale)
    with pytest.raises(ValueError, match=words):  # the course's promise: bad input, ValueError
        scaled_dot_product_attention(Q3, K3, V3, scale=scale)


def test_scale_accepts_numpy_scalars_and_zero_dimensional_arrays():
    expected = scaled_dot_product_attention(Q3, K3, V3, scale=0.5)[1]
    for scale in (np.float32(0.5), np.float64(0.5), np.array(0.5), 1 / 2):
        np.testing.assert_allclose(
            scaled_dot_product_attention(Q3, K3, V3, scale=scale)[1], expected
        )


def test_overflow_suggests_float64_only_when_the_input_is_not_already_float64():
    big = 1e200
    with pytest.raises(ValueError, match="overflowed to inf/NaN in float64") as info:
        scaled_dot_product_attention(Q3 * big, K3 * big, V3)
    assert "float64:" in str(info.value) and "compute in float64" not in str(info.value)
    assert "scale Q and K" in str(info.value)
    Q32, K32 = (Q3 * 1e20).astype(np.float32), (K3 * 1e20).astype(np.float32)
    with pytest.raises(ValueError, match="in float32: .*or compute in float64"):
        scaled_dot_product_attention(Q32, K32, V3.astype(np.float32))


def test_a_mask_row_left_empty_is_reported_as_the_mask_not_as_overflow():
    mask = np.ones((3, 3), bool)
    mask[1] = False
    with pytest.raises(ValueError, match=r"mask leaves query row \(0, 1\)"):
        scaled_dot_product_attention(Q3, K3, V3, mask=mask)


@pytest.mark.parametrize(
    "x, axis, error, words",
    [
        (np.array([]), -1, ValueError, r"x has no entries along axis -1 \(shape \(0,\)\)"),
        (np.zeros((3, 0)), 1, ValueError, "x has no entries along axis 1"),
        (np.zeros((2, 3)), 1.5, TypeError, "axis must be a whole number.*1.5.*float"),
        (np.zeros((2, 3)), "rows", TypeError, "axis must be a whole number.*'rows'"),
        (np.zeros((2, 3)), True, TypeError, "axis must be a whole number.*True.*bool"),
        (np.zeros((2, 3)), 2, ValueError, r"axis=2 does not exist: x has shape \(2, 3\)"),
        (np.zeros((2, 3)), -3, ValueError, "axis=-3 does not exist"),
        (None, -1, TypeError, "x is None"),
        ("abc", -1, TypeError, "x must be an array of numbers, got the string"),
        (np.array([1.0, np.nan]), -1, ValueError, "x contains NaN"),
    ],
)
def test_softmax_errors_name_x_or_axis(x, axis, error, words):
    with pytest.raises(error, match=words):
        softmax(x, axis=axis)


def test_softmax_of_rows_with_no_columns_along_another_axis_is_empty_not_an_error():
    assert softmax(np.zeros((0, 3)), axis=-1).shape == (0, 3)


@pytest.mark.parametrize(
    "n, words",
    [(4.0, r"n must be a whole number \(an int\), got 4.0 .*integer division //"),
     (True, r"n must be a whole number, got True \(a bool\)"),
     ("4", "n must be a whole number.*'4'"),
     (-1, "n must be at least 0, got n=-1")],
)  # fmt: skip
def test_causal_mask_names_n(n, words):
    with pytest.raises(ValueError, match=words):
        causal_mask(n)


def test_the_docstring_states_both_pytorch_mask_conventions():
    import helpers.attention

    doc = " ".join(helpers.attention.__doc__.split())
    assert 'True indicates that the element *should* take part in attention"' in doc
    assert (
        '"a True value indicates that the corresponding position is not allowed to attend"' in doc
    )
    assert "pass ``~mask``" in doc


def test_our_mask_is_torch_sdpas_attn_mask_and_the_inverse_of_multihead_attentions():
    """Runs where PyTorch is installed (it is not a course dependency)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((1, 4, 8)) for _ in range(3))
    mask = causal_mask(4)
    ours, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    tQ, tK, tV = (torch.from_numpy(a) for a in (Q, K, V))
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        tQ, tK, tV, attn_mask=torch.from_numpy(mask)
    )
    np.testing.assert_allclose(sdpa.numpy(), ours, atol=1e-12)
    mha = torch.nn.MultiheadAttention(8, 1, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # identity projections, so MHA's weights are plain attention's
        mha.in_proj_weight.copy_(torch.eye(8).repeat(3, 1))
        mha.out_proj.weight.copy_(torch.eye(8))
        _, mha_weights = mha(tQ, tK, tV, attn_mask=torch.from_numpy(~mask))  # True = blocked
    np.testing.assert_allclose(mha_weights.numpy(), weights, atol=1e-12)
