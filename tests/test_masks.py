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


# ---------------------------------------------------------------------------------------------
# Lesson 05's conventions box: what each library means by its mask, and the shapes it takes.


def _lesson05_prose() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "solutions" / "05_causal_masking.py").read_text(
        encoding="utf-8"
    )
    return " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))


def test_the_conventions_box_names_hugging_face_flax_and_multihead_attentions_shapes():
    prose = _lesson05_prose()
    assert "Hugging Face `attention_mask`" in prose and "1: a token to attend to" in prose
    assert "`flax.linen.dot_product_attention(mask=...)`" in prose
    assert "(b \\cdot h, n_q, n_k)" in prose and "a 4-D mask is refused" in prose
    assert "need_weights=True" in prose  # nn.MultiheadAttention's NaN row depends on it


def _batch(rng, b=3, h=2, n=5, d_k=4, lengths=(5, 3, 1)):
    Q, K, V = (rng.standard_normal((b, h, n, d_k)) for _ in range(3))
    both = helpers.padding_mask(np.array(lengths), n)[:, None, None, :] & helpers.causal_mask(n)
    return Q, K, V, both  # both: (b, 1, n, n), True = may attend


def _identity_mha(torch, h, d_k):
    mha = torch.nn.MultiheadAttention(h * d_k, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # identity projections: its heads are the course's heads
        mha.in_proj_weight.copy_(torch.eye(h * d_k).repeat(3, 1))
        mha.out_proj.weight.copy_(torch.eye(h * d_k))
    return mha


def test_a_course_mask_goes_to_torch_as_the_lesson_says():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    b, h, n, d_k = 3, 2, 5, 4
    Q, K, V, both = _batch(np.random.default_rng(0), b, h, n, d_k)
    out, A = helpers.scaled_dot_product_attention(Q, K, V, mask=both)
    tQ, tK, tV = (torch.from_numpy(M) for M in (Q, K, V))
    sdpa = F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=torch.from_numpy(both))
    np.testing.assert_allclose(sdpa.numpy(), out, atol=1e-12)
    mha = _identity_mha(torch, h, d_k)
    x = [torch.from_numpy(helpers.combine_heads(M)) for M in (Q, K, V)]  # (b, n, h * d_k)
    flat = np.broadcast_to(~both, (b, h, n, n)).reshape(b * h, n, n)  # row s*h + a: sentence s
    _, w = mha(*x, attn_mask=torch.from_numpy(flat), average_attn_weights=False)
    np.testing.assert_allclose(w.detach().numpy(), A, atol=1e-12)
    causal, padding = ~helpers.causal_mask(n), ~helpers.padding_mask(np.array([5, 3, 1]), n)
    _, w = mha(*x, attn_mask=torch.from_numpy(causal), key_padding_mask=torch.from_numpy(padding),
               average_attn_weights=False)  # fmt: skip
    np.testing.assert_allclose(w.detach().numpy(), A, atol=1e-12)
    with pytest.raises((AssertionError, RuntimeError)):  # the (b, 1, n, n) layout is refused
        mha(*x, attn_mask=torch.from_numpy(~both))


def test_a_row_with_no_allowed_key_numpy_nan_sdpa_zeros_multihead_nan_with_weights():
    torch = pytest.importorskip("torch")
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 5):
        pytest.skip("F.scaled_dot_product_attention returned NaN here before PyTorch 2.5")
    F = torch.nn.functional
    b, h, n, d_k = 3, 2, 5, 4
    Q, K, V, both = _batch(np.random.default_rng(1), b, h, n, d_k)
    no_key = both & helpers.padding_mask(np.array([5, 3, 1]), n)[:, None, :, None]
    tQ, tK, tV = (torch.from_numpy(M) for M in (Q, K, V))
    sdpa = F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=torch.from_numpy(no_key))
    assert torch.all(sdpa[2, :, 1:] == 0) and torch.all(torch.isfinite(sdpa))
    mha = _identity_mha(torch, h, d_k)
    x = [torch.from_numpy(helpers.combine_heads(M)) for M in (Q, K, V)]
    flat = torch.from_numpy(np.broadcast_to(~no_key, (b, h, n, n)).reshape(b * h, n, n))
    out, w = mha(*x, attn_mask=flat, average_attn_weights=False)
    assert torch.all(torch.isnan(w[2, :, 1:])) and torch.all(torch.isnan(out[2, 1:]))
    assert torch.all(mha(*x, attn_mask=flat, need_weights=False)[0][2, 1:] == 0)
    with np.errstate(invalid="ignore"):  # NumPy: 0/0
        row = np.full(4, -np.inf)
        assert np.all(np.isnan(np.exp(row - row.max()) / np.exp(row - row.max()).sum()))
