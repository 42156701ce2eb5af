"""Lesson 06 exercises: cross-attention over padded sources, multi-head attention in general.

- ``cross_attention_shape`` (prediction): the weights of 4 queries over 6 keys are 4 x 6.
- ``cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths)`` (★★): a batch of decoder
  sequences attending to a batch of encoder sequences padded to one length.
- ``multi_head_attention(X, W_Q, W_K, W_V, W_O)`` (★★): any leading batch axes, d_v != d_k.
- ``multi_query_attention(X, W_Q, W_K, W_V, W_O)`` (★★★): h query heads sharing one K and V,
  any leading batch axes.

Notation: h heads, one head indexed by a (code: ``head``); d_k = d_model / h in the paper.
"""

from __future__ import annotations

import numpy as np

from .answers import lesson06 as answers
from .compare import as_result_pair, compare, raw_softmax, unpack_pair
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import LearnerError, Mistake, named
from .prediction import Prediction


def _swap(a):
    return np.swapaxes(a, -1, -2)


def _call_batched(call, args, what):
    """Call the answer; name the classic slip of ``K.T`` on a batch (it reverses every axis)."""
    try:
        return call(*args)
    except LearnerError as error:
        text = str(error)
        if "matmul" in text:  # a product of batched arrays whose axes do not line up
            raise Mistake(
                named(
                    "dot_t_on_batch",
                    f"{what}: a matrix product failed on this batch. If your code transposes "
                    "with .T: on a batch, .T reverses *every* axis, so K.T is (d_k, n, b), not "
                    "(b, d_k, n). Swap only the last two: np.swapaxes(K, -1, -2) (or "
                    f"K.transpose(0, 2, 1)).\n{text}",
                )
            ) from None
        raise


cross_attention_shape = Prediction(
    name="cross_attention_shape",
    question="The decoder side has 4 tokens (the queries), the encoder side 6 (the keys and "
    "values). What shape is the cross-attention weight matrix: '4x6', '6x4', '6x6' or '4x4'?",
    answer=answers.cross_attention_shape,
    choices=["4x6", "6x4", "6x6", "4x4"],
    explanation="One row per query (4 French tokens), one column per key (6 English tokens): "
    "Q K^T is (4, d_k) @ (d_k, 6) = (4, 6). The output has one row per query too: (4, d_v).",
    wrong={
        "6x4": "The rows are the queries, which come from the decoder's 4 tokens; the keys "
        "are the columns.",
        "6x6": "That is self-attention on the English sentence; here the queries come from "
        "the other sequence.",
        "4x4": "That is self-attention on the French sentence; the keys come from the 6 "
        "English tokens.",
    },
)


# ----------------------------------------------------------------------------------------------
# cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths)


def _cross(X_q, X_kv, W_Q, W_K, W_V, lengths, how=""):
    """Cross-attention over padded sources, possibly done wrong in the way ``how`` names."""
    Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
    d_k, n_k = Q.shape[-1], K.shape[-2]
    scale = {"unscaled": 1.0, "scale_d_model": 1 / np.sqrt(X_q.shape[-1])}.get(
        how, 1 / np.sqrt(d_k)
    )
    s = Q @ _swap(K) * scale
    positions = np.arange(n_k)
    real = {
        "off_by_one": positions <= lengths[:, None],
        "inverted_mask": positions >= lengths[:, None],
    }.get(how, positions < lengths[:, None])  # (b, n_k)
    if how in ("no_padding_mask", "zeroed_after_softmax"):
        w = raw_softmax(s)
        if how == "zeroed_after_softmax":
            w = w * real[:, None, :]
    else:
        w = raw_softmax(np.where(real[:, None, :], s, -np.inf))
    return w @ V, w


_CROSS_MISTAKES = {
    "no_padding_mask": "the padded keys get weight: the encoder's sequence s has only "
    "kv_lengths[s] real tokens; set the scores of the keys at positions >= kv_lengths[s] to "
    "-inf before the softmax.",
    "zeroed_after_softmax": "you set the padded keys' weights to 0 after the softmax, so the "
    "rows no longer sum to 1. Mask the scores before the softmax (-inf), so it shares the "
    "weight among the real keys only.",
    "off_by_one": "your mask lets each query see one padded key too: the real keys of "
    "sequence s are the positions 0 .. kv_lengths[s] - 1, so keep positions < kv_lengths[s], "
    "not <=.",
    "inverted_mask": "your mask is the wrong way round: it keeps the padding and hides the "
    "real keys. Real keys are the positions < kv_lengths[s].",
    "unscaled": "the scores are not scaled; divide Q K^T by sqrt(d_k).",
    "scale_d_model": "the scores are divided by sqrt(d_model); the scale uses d_k, the width "
    "of the queries and keys.",
}


def _unpack_cross(value, what, inputs, shapes):
    """The learner's ``(output, weights)``, with role swaps and transposes named first."""
    X_q, X_kv, W_Q, W_K, W_V, lengths = inputs
    b, n_q, n_k, d_v = shapes
    out, weights = unpack_pair(value, what, (b, n_q, d_v), (b, n_q, n_k))
    w = np.asarray(weights, dtype=float) if isinstance(weights, np.ndarray) else None
    if w is not None and w.shape == (b, n_k, n_q):
        if np.allclose(w, _swap(_cross(X_q, X_kv, W_Q, W_K, W_V, lengths)[1]), atol=1e-5):
            raise Mistake(
                named("transposed", f"{what}: your weights are transposed: shape {w.shape}, "
                      f"expected (b, n_q, n_k) = {(b, n_q, n_k)}: one row per query.")
            )  # fmt: skip
        raise Mistake(
            named(
                "roles_swapped",
                f"{what}: your weights have shape {w.shape}: one row per X_kv token ({n_k}) "
                f"instead of one per query ({n_q}). The roles are swapped: queries come from "
                "X_q (X_q @ W_Q), keys and values from X_kv (X_kv @ W_K, X_kv @ W_V).",
            )
        )
    if w is not None and w.shape == (b, n_q, n_q):
        raise Mistake(
            named(
                "self_attention",
                f"{what}: your weights have shape {w.shape}, (n_q, n_q): your keys come from "
                "X_q, which makes this self-attention on X_q. In cross-attention the keys and "
                "values come from the other sequence: X_kv @ W_K and X_kv @ W_V.",
            )
        )
    return as_result_pair((out, weights), what, (b, n_q, d_v), (b, n_q, n_k))


def _grade_cross_attention(call):
    rng = fresh_rng()
    while True:  # distinct sizes, so that a swapped role or a transposed result shows
        d_model, d_k, d_v = (int(rng.integers(3, 9)) for _ in range(3))
        n_q, n_k, b = int(rng.integers(2, 5)), int(rng.integers(6, 9)), int(rng.integers(2, 4))
        if len({d_model, d_k, d_v, n_q, n_k, b}) == 6 and d_k * d_k != d_model:
            break
    lengths = rng.integers(2, n_k - 1, size=b)  # every source has 2+ padded keys...
    lengths[0] = n_k  # ...except the first, which fills the whole length
    cases = [
        (f"a batch of {b} sources of lengths {lengths.tolist()} padded to n_k={n_k}", n_q, lengths,
         np.float64),
        ("one query per sequence", 1, lengths, np.float64),
        (f"float32 inputs, lengths {lengths[::-1].tolist()}", n_q, lengths[::-1].copy(),
         np.float32),
    ]  # fmt: skip
    for label, nq, lens, dtype in cases:
        X_q = rng.standard_normal((b, nq, d_model))
        X_kv = rng.standard_normal((b, n_k, d_model))
        W_Q, W_K = (rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(2))
        W_V = rng.standard_normal((d_model, d_v)) / np.sqrt(d_model)
        inputs = (X_q, X_kv, W_Q, W_K, W_V, lens)
        what = (
            f"cross_attention on {label} (X_q {X_q.shape}, X_kv {X_kv.shape}, d_k={d_k}, d_v={d_v})"
        )
        value = _call_batched(call, (*(a.astype(dtype) for a in inputs[:5]), lens.copy()), what)
        got_out, got_w = _unpack_cross(value, what, inputs, (b, nq, n_k, d_v))
        ref_out, ref_w = answers.cross_attention(*inputs)
        known = {
            named(how, f"{what}: {message}"): _cross(*inputs, how=how)[1]
            for how, message in _CROSS_MISTAKES.items()
        }
        compare(
            got_w,
            ref_w,
            known,
            f"{what}: your weights differ from softmax((X_q W_Q)(X_kv W_K)^T / sqrt(d_k)) "
            "with the padded keys masked.",
            name="weights",
        )
        compare(
            got_out,
            ref_out,
            {},
            f"{what}: your weights are right, but the output is not weights @ (X_kv @ W_V).",
            name="output",
        )
    return (
        "your cross-attention matches: queries from X_q, keys and values from X_kv, padded "
        "keys weighted exactly 0 and every row summing to 1, on a fresh batch of sources of "
        "different lengths, one query and float32 inputs."
    )


cross_attention = Exercise(
    name="cross_attention",
    allowed=("helpers.softmax", "helpers.scaled_dot_product_attention", "helpers.padding_mask"),
    signature="cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths)",
    grade=_grade_cross_attention,
    reference=answers.cross_attention,
    hints=[
        "The lesson's cross-attention, for a batch: Q from X_q, K and V from X_kv, scores "
        "(b, n_q, n_k). New is the padding: sequence s of X_kv has only kv_lengths[s] real "
        "tokens; the rest are filler that no query may attend to.",
        "Build a boolean (b, n_k) array of real keys, np.arange(n_k) < kv_lengths[:, None], "
        "give it a query axis, real[:, None, :], and set the other scores to -inf before the "
        "softmax (np.where). Batched transpose: np.swapaxes(K, -1, -2), not K.T.",
        "Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V; s = Q @ np.swapaxes(K, -1, -2) / "
        "np.sqrt(Q.shape[-1]); real = np.arange(K.shape[-2]) < kv_lengths[:, None]; "
        "w = helpers.softmax(np.where(real[:, None, :], s, -np.inf), axis=-1); return w @ V, w",
    ],
    stars=2,
    title="batched cross-attention whose source sentences are padded to one length",
)


# ----------------------------------------------------------------------------------------------
# multi_head_attention(X, W_Q, W_K, W_V, W_O): any leading axes, d_v may differ from d_k


def _heads(X, W_Q, W_K, W_V, scale="sqrt_dk", shared=False):
    """Every head's (output, weights): (..., h, n, d_v), (..., h, n, n); possibly done wrong."""
    if shared:
        W_Q, W_K, W_V = (np.broadcast_to(W[:1], W.shape) for W in (W_Q, W_K, W_V))
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)
    K = np.einsum("...nd,hdk->...hnk", X, W_K)
    V = np.einsum("...nd,hdk->...hnk", X, W_V)
    factor = {"sqrt_dk": 1 / np.sqrt(Q.shape[-1]), "none": 1.0,
              "sqrt_d_model": 1 / np.sqrt(X.shape[-1])}[scale]  # fmt: skip
    A = raw_softmax(Q @ _swap(K) * factor)
    return A @ V, A


def _concat(heads):
    """(..., h, n, d_v) -> (..., n, h * d_v), head 1 first."""
    return np.concatenate([heads[..., a, :, :] for a in range(heads.shape[-3])], axis=-1)


def _mha_weight_mistakes(X, W_Q, W_K, W_V, what: str) -> dict[str, np.ndarray]:
    return {
        named("unscaled", f"{what}: the scores are not scaled; divide each head's Q K^T by "
              "sqrt(d_k) before the softmax."): _heads(X, W_Q, W_K, W_V, scale="none")[1],
        named("scale_d_model", f"{what}: the scores are divided by sqrt(d_model); each head "
              "works in d_k = d_model / h dimensions, so the scale is 1 / sqrt(d_k), with d_k "
              "the width of one head's queries."): _heads(X, W_Q, W_K, W_V, "sqrt_d_model")[1],
        named("shared_projections", f"{what}: every head has the same weights: you used one "
              "head's projections (W_Q[0], W_K[0], W_V[0]) for all of them. Head a uses its "
              "own W_Q[a], W_K[a], W_V[a]."): _heads(X, W_Q, W_K, W_V, shared=True)[1],
    }  # fmt: skip


def _mha_output_mistakes(X, W_Q, W_K, W_V, W_O, what: str) -> dict[str, np.ndarray]:
    heads, _ = _heads(X, W_Q, W_K, W_V)  # (..., h, n, d_v), right
    h, n, d_v = heads.shape[-3:]
    concat = _concat(heads)  # (..., n, h * d_v)
    mistakes = {
        named("heads_reversed", f"{what}: the heads are concatenated in the wrong order: the "
              "first head's columns come first, [head_1 | head_2 | ... | head_h], then "
              "@ W_O."): _concat(heads[..., ::-1, :, :]) @ W_O,
        named("reshape_without_transpose", f"{what}: you reshaped the (..., h, n, d_v) heads "
              "straight to (..., n, h * d_v). That reads them in memory order, so row i gets "
              "pieces of other tokens' rows. Put the heads side by side for each token: "
              "np.concatenate(heads, axis=-1), or move the head axis next to d_v first "
              "(np.swapaxes(heads, -3, -2)) and then reshape."): (
            heads.reshape(*heads.shape[:-3], n, h * d_v) @ W_O),
        named("averaged_heads", f"{what}: your output is the correct one divided by h = {h}: "
              "you averaged the heads' contributions. Multi-head attention concatenates the "
              "heads, and W_O mixes them; nothing is averaged."): concat @ W_O / h,
    }  # fmt: skip
    if concat.shape[-1] == W_O.shape[-1]:  # only then can W_O be forgotten unnoticed
        mistakes[
            named("no_w_o", f"{what}: you forgot W_O. The concatenated heads are (n, h * d_v), "
                  "but the output is concat @ W_O, which lets every output dimension draw on "
                  "every head.")
        ] = concat  # fmt: skip
    return mistakes


def _unpack_mha(value, what: str, lead, h: int, n: int, d_model: int, d_v: int, expected_w):
    """The learner's ``(output, weights)``, with the usual slips named by their shapes."""
    out, weights = unpack_pair(value, what, (*lead, n, d_model), (*lead, h, n, n))
    out_shape, w_shape = np.shape(out), np.shape(weights)
    if h > 1 and w_shape == (*lead, n, n):
        w = np.asarray(weights, dtype=float)
        if np.allclose(w, expected_w.mean(axis=-3), rtol=1e-4, atol=1e-5):
            raise Mistake(
                named("weights_averaged", f"{what}: your weights are the average over the "
                      f"heads, shape (..., n, n); return every head's weights, stacked: shape "
                      f"(..., h, n, n) = {(*lead, h, n, n)}.")
            )  # fmt: skip
        raise Mistake(
            named("one_head_weights", f"{what}: your weights have shape {w_shape}, one head's; "
                  f"return every head's weights, stacked: shape (..., h, n, n) = "
                  f"{(*lead, h, n, n)} (np.stack(weights, axis=-3)).")
        )  # fmt: skip
    if lead and w_shape == (h, *lead, n, n):
        raise Mistake(
            named("head_axis_first", f"{what}: your weights have shape {w_shape}: the head axis "
                  f"is in front of the batch axes. Stack the heads just before (n, n): "
                  f"np.stack(weights, axis=-3), shape {(*lead, h, n, n)}.")
        )  # fmt: skip
    if h > 1 and out_shape == (*lead, n, d_v):
        raise Mistake(
            named("output_one_head_width", f"{what}: your output has shape (..., n, d_v) = "
                  f"{out_shape}, one head's width: did you average (or add up) the heads? "
                  "Concatenate them side by side, np.concatenate(heads, axis=-1), to get "
                  f"(..., n, h * d_v) = {(*lead, n, h * d_v)}, then multiply by W_O.")
        )  # fmt: skip
    if h > 1 and out_shape in ((*lead, h * n, d_v), (*lead, h * n, d_model)):
        raise Mistake(
            named("heads_as_rows", f"{what}: your output has shape {out_shape}: you stacked "
                  "the heads as extra rows (as if they were more tokens). Each token keeps one "
                  "row; put the heads side by side along the columns: np.concatenate(heads, "
                  "axis=-1), then @ W_O.")
        )  # fmt: skip
    return as_result_pair((out, weights), what, (*lead, n, d_model), (*lead, h, n, n))


def _grade_multi_head_attention(call):
    from ..multihead import multi_head_attention as _course_mha

    rng = fresh_rng()
    while True:  # sizes whose wrong layouts all have different shapes
        h, d_k, n = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(3, 9))
        d_v, b = int(rng.integers(2, 6)), int(rng.integers(2, 4))
        d_model = h * d_k
        if len({h, d_k, n, d_model, d_v, b, h * d_v}) == 7 and d_k * d_k != d_model:
            break
    cases = [
        (f"{h} heads, d_v = d_k", (), n, h, d_k, d_k, np.float64),
        (f"a batch of {b} sentences, d_v = {d_v} != d_k = {d_k}", (b,), n, h, d_k, d_v,
         np.float64),
        ("two batch axes, one head", (2, b), 5, 1, 6, 6, np.float64),
        ("one token", (b,), 1, h, d_k, d_v, np.float64),
        ("float32 inputs", (b,), n, h, d_k, d_k, np.float32),
    ]  # fmt: skip
    for label, lead, n_, h_, d_k_, d_v_, dtype in cases:
        d_model_ = h_ * d_k_
        X = rng.standard_normal((*lead, n_, d_model_))
        W_Q, W_K = (rng.standard_normal((h_, d_model_, d_k_)) / np.sqrt(d_model_)
                    for _ in range(2))  # fmt: skip
        W_V = rng.standard_normal((h_, d_model_, d_v_)) / np.sqrt(d_model_)
        W_O = rng.standard_normal((h_ * d_v_, d_model_)) / np.sqrt(h_ * d_v_)
        what = (f"multi_head_attention on {label} (X {X.shape}, W_Q {W_Q.shape}, W_V "
                f"{W_V.shape}, W_O {W_O.shape})")  # fmt: skip
        ref_out, ref_w = _course_mha(X, W_Q, W_K, W_V, W_O)
        value = _call_batched(call, tuple(a.astype(dtype) for a in (X, W_Q, W_K, W_V, W_O)), what)
        got_out, got_w = _unpack_mha(value, what, lead, h_, n_, d_model_, d_v_, ref_w)
        compare(
            got_w,
            ref_w,
            _mha_weight_mistakes(X, W_Q, W_K, W_V, what),
            f"{what}: your weights differ from each head's softmax(Q_a K_a^T / sqrt(d_k)), "
            "with Q_a = X @ W_Q[a], K_a = X @ W_K[a], stacked to (..., h, n, n).",
            name="weights",
        )
        compare(
            got_out,
            ref_out,
            _mha_output_mistakes(X, W_Q, W_K, W_V, W_O, what),
            f"{what}: your weights are right, but the output is not "
            "concat(head_1, ..., head_h) @ W_O, with head_a = weights[..., a, :, :] @ "
            "(X @ W_V[a]).",
            name="output",
        )
    return (
        "your multi-head attention matches helpers.multi_head_attention: every head with its own "
        "projections, concatenated in order and mixed by W_O, on fresh sizes, batches with one "
        "and two leading axes, d_v != d_k, one head, one token and float32 inputs."
    )


multi_head_attention = Exercise(
    name="multi_head_attention",
    ready_made="helpers.multi_head_attention",
    allowed=("helpers.softmax", "helpers.scaled_dot_product_attention"),
    signature="multi_head_attention(X, W_Q, W_K, W_V, W_O)",
    grade=_grade_multi_head_attention,
    reference=answers.multi_head_attention,
    hints=[
        "Loop over the heads a (h = W_Q.shape[0]). Head a is ordinary attention with its own "
        "projections: Q = X @ W_Q[a], K = X @ W_K[a], V = X @ W_V[a]; @ works on any leading "
        "axes of X. Keep each head's output (..., n, d_v) and weights (..., n, n).",
        "With leading axes, K.T would reverse *every* axis: use np.swapaxes(K, -1, -2). Put "
        "the head outputs side by side, first head first: np.concatenate(heads, axis=-1) is "
        "(..., n, h * d_v); multiply by W_O. Stack the weights just before (n, n): "
        "np.stack(weights, axis=-3).",
        "for a in range(h): Q, K, V = X @ W_Q[a], X @ W_K[a], X @ W_V[a]; "
        "A = helpers.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1); "
        "heads.append(A @ V); weights.append(A). Then return np.concatenate(heads, axis=-1) "
        "@ W_O, np.stack(weights, axis=-3)",
    ],
    stars=2,
    title="multi-head attention for any leading batch axes and d_v != d_k",
)


# ----------------------------------------------------------------------------------------------
# multi_query_attention(X, W_Q, W_K, W_V, W_O): the ★★★ challenge, any leading batch axes


def _mqa(X, W_Q, W_K, W_V, W_O, how=""):
    """Multi-query attention, possibly done wrong in the way ``how`` names (any leading axes)."""
    K, V = X @ W_K, X @ W_V  # (..., n, d_k), (..., n, d_v)
    W = np.broadcast_to(W_Q[:1], W_Q.shape) if how == "one_query_head" else W_Q
    Q = np.einsum("...nd,hdk->...hnk", X, W)  # (..., h, n, d_k)
    scale = {"unscaled": 1.0, "scale_d_model": 1 / np.sqrt(X.shape[-1])}.get(
        how, 1 / np.sqrt(Q.shape[-1])
    )
    A = raw_softmax(Q @ _swap(K[..., None, :, :]) * scale)  # (..., h, n, n)
    heads = A @ V[..., None, :, :]  # (..., h, n, d_v)
    h, n, d_v = heads.shape[-3:]
    concat = _concat(heads)
    out = {
        "no_w_o": concat,
        "heads_reversed": _concat(heads[..., ::-1, :, :]) @ W_O,
        "reshape_without_transpose": heads.reshape(*heads.shape[:-3], n, h * d_v) @ W_O,
        "averaged_heads": concat @ W_O / h,
    }.get(how, concat @ W_O)
    return out, A


_MQA_WEIGHT_MISTAKES = {
    "one_query_head": "every head has the same weights: you used W_Q[0] for all of them. In "
    "multi-query attention only K and V are shared; each head a keeps its own queries, "
    "X @ W_Q[a].",
    "unscaled": "the scores are not scaled; divide each head's Q_a K^T by sqrt(d_k).",
    "scale_d_model": "the scores are divided by sqrt(d_model); the scale is 1 / sqrt(d_k), with "
    "d_k the width of one head's queries and of the shared keys (W_K.shape[-1]).",
}
_MQA_OUTPUT_MISTAKES = {
    "no_w_o": "you forgot W_O: the output is concat(head_1, ..., head_h) @ W_O.",
    "heads_reversed": "the heads are concatenated in the wrong order: the first head's "
    "columns come first.",
    "reshape_without_transpose": "you reshaped the (..., h, n, d_v) heads straight to "
    "(..., n, h * d_v), which mixes tokens; concatenate along the last axis instead.",
    "averaged_heads": "your output is the correct one divided by h: the heads are "
    "concatenated and mixed by W_O, not averaged.",
}


def _unpack_mqa(value, what: str, lead, h: int, n: int, d_model: int):
    out, weights = unpack_pair(value, what, (*lead, n, d_model), (*lead, h, n, n))
    w_shape = np.shape(weights)
    if n > 1 and w_shape == (*lead, n, n):
        raise Mistake(
            named("one_head_weights", f"{what}: your weights have shape {w_shape}, one head's; "
                  f"return every head's, stacked: (..., h, n, n) = {(*lead, h, n, n)}.")
        )  # fmt: skip
    if lead and w_shape == (h, *lead, n, n) and lead != (h,):
        raise Mistake(
            named("head_axis_first", f"{what}: your weights have shape {w_shape}: the head axis "
                  "is in front of the batch axes. Put it just before (n, n): shape "
                  f"{(*lead, h, n, n)}.")
        )  # fmt: skip
    return as_result_pair((out, weights), what, (*lead, n, d_model), (*lead, h, n, n))


def _mqa_sizes(rng: np.random.Generator):
    """h, d_k, n, b with every wrong layout and every wrong scale telling itself apart."""
    while True:
        h, d_k, n = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(3, 8))
        b = int(rng.integers(2, 5))
        d_model = h * d_k
        if len({h, d_k, n, d_model, b}) == 5 and d_k * d_k != d_model:
            return h, d_k, n, b


def _grade_multi_query_attention(call):
    rng = fresh_rng()
    h, d_k, n, b = _mqa_sizes(rng)
    d_model = h * d_k
    cases = [
        (f"{h} query heads, one sentence", (), n, np.float64),
        (f"a batch of {b} sentences", (b,), n, np.float64),
        (f"a batch of {h} sentences, as many as heads", (h,), n, np.float64),
        ("two batch axes", (2, b), n, np.float64),
        ("one token", (b,), 1, np.float64),
        ("float32 inputs", (b,), n, np.float32),
    ]
    for label, lead, n_, dtype in cases:
        X = rng.standard_normal((*lead, n_, d_model))
        W_Q = rng.standard_normal((h, d_model, d_k)) / np.sqrt(d_model)
        W_K, W_V = (rng.standard_normal((d_model, d_k)) / np.sqrt(d_model) for _ in range(2))
        W_O = rng.standard_normal((h * d_k, d_model)) / np.sqrt(h * d_k)
        inputs = (X, W_Q, W_K, W_V, W_O)
        what = (f"multi_query_attention on {label} (X {X.shape}, W_Q {W_Q.shape}, W_K "
                f"{W_K.shape}, W_V {W_V.shape}, W_O {W_O.shape})")  # fmt: skip
        try:
            value = _call_batched(call, tuple(a.astype(dtype) for a in inputs), what)
        except LearnerError as error:
            if lead and "could not be broadcast" in str(error):
                # The learner's own error (with the line that failed) first; then what the
                # shapes must be, without writing the answer.
                raise Mistake(
                    named(
                        "no_head_axis",
                        f"{what}: a product failed to broadcast. {error}\nWith batch axes, the "
                        f"queries are (..., h, n, d_k) = {(*lead, h, n_, d_k)} and the shared K "
                        f"and V (..., n, d_k) = {(*lead, n_, d_k)}: K and V need an axis of "
                        "length 1 where the queries have their heads, to broadcast against "
                        "them. (If the failing product is X @ W_Q: matmul lines X's batch axes "
                        "up with W_Q's head axis; the heads need an axis of their own in X.)",
                    )
                ) from None
            raise
        out, weights = _unpack_mqa(value, what, lead, h, n_, d_model)
        ref_out, ref_w = answers.multi_query_attention(*inputs)
        known_w = {named(k, f"{what}: {m}"): _mqa(*inputs, how=k)[1]
                   for k, m in _MQA_WEIGHT_MISTAKES.items()}  # fmt: skip
        compare(
            weights,
            ref_w,
            known_w,
            f"{what}: your weights differ from softmax(Q_a K^T / sqrt(d_k)) with "
            "Q_a = X @ W_Q[a] and the shared K = X @ W_K of the same sentence, stacked to "
            "(..., h, n, n).",
            name="weights",
        )
        known_out = {named(k, f"{what}: {m}"): _mqa(*inputs, how=k)[0]
                     for k, m in _MQA_OUTPUT_MISTAKES.items()}  # fmt: skip
        compare(out, ref_out, known_out, f"{what}: your weights are right, but the output is "
                "not concat(head_1, ..., head_h) @ W_O with head_a = A_a @ (X @ W_V).",
                name="output")  # fmt: skip
    return (
        "your multi-query attention matches: h query heads sharing one key and one value "
        "projection per sentence, concatenated and mixed by W_O, for one sentence, batches "
        "with one and two leading axes (also as many sentences as heads), one token and "
        "float32."
    )


multi_query_attention = Exercise(
    name="multi_query_attention",
    allowed=("helpers.softmax", "helpers.scaled_dot_product_attention"),
    signature="multi_query_attention(X, W_Q, W_K, W_V, W_O)",
    grade=_grade_multi_query_attention,
    reference=answers.multi_query_attention,
    hints=[
        "Compute K = X @ W_K and V = X @ W_V once: every head of a sentence uses the same keys "
        "and values, (..., n, d_k) and (..., n, d_v), with no head axis. Only the queries are "
        "per head: Q_a = X @ W_Q[a], or all at once np.einsum('...nd,hdk->...hnk', X, W_Q), "
        "(..., h, n, d_k).",
        "To score (..., h, n, d_k) queries against (..., n, d_k) keys, give the keys a head "
        "axis of size 1 that broadcasts over the h heads: K[..., None, :, :]. Without it, "
        "np.matmul lines K's last batch axis up with the head axis. Scale by sqrt(d_k), a "
        "softmax along the last axis, then A @ V[..., None, :, :] is (..., h, n, d_v).",
        "K, V = X @ W_K, X @ W_V; Q = np.einsum('...nd,hdk->...hnk', X, W_Q); "
        "A = helpers.softmax(Q @ np.swapaxes(K[..., None, :, :], -1, -2) / "
        "np.sqrt(K.shape[-1]), axis=-1); heads = A @ V[..., None, :, :]; "
        "concat = np.concatenate([heads[..., a, :, :] for a in range(len(W_Q))], axis=-1); "
        "return concat @ W_O, A",
    ],
    stars=3,
    title="challenge: multi-query attention, h query heads sharing one key and value, batched",
)
