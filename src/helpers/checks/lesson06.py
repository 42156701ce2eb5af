"""Lesson 06 exercises: cross-attention, and multi-head attention (h heads, concat, W_O)."""

from __future__ import annotations

import numpy as np

from ._core import Exercise, Mistake, as_result_array, compare, fresh_rng, unpack_pair

# ----------------------------------------------------------------------------------------------
# cross_attention(X_q, X_kv, W_Q, W_K, W_V)


def _reference_cross_attention(X_q, X_kv, W_Q, W_K, W_V):
    Q = X_q @ W_Q  # (n_q, d_k): the queries come from one sequence...
    K = X_kv @ W_K  # (n_k, d_k): ...the keys and values from the other
    V = X_kv @ W_V  # (n_k, d_v)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (n_q, n_k)
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax over each row
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)  # (n_q, n_k), rows sum to 1
    return weights @ V, weights  # (n_q, d_v), (n_q, n_k)


def _attend(X_q, X_kv, W_Q, W_K, W_V, scale="sqrt_dk", axis=-1):
    """Attention with queries from X_q and keys/values from X_kv, possibly done wrong."""
    Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V
    d_k, d_model = Q.shape[-1], X_q.shape[-1]
    factor = {
        "sqrt_dk": 1 / np.sqrt(d_k),
        "none": 1.0,
        "dk": 1 / d_k,
        "sqrt_d_model": 1 / np.sqrt(d_model),
    }[scale]
    s = Q @ K.T * factor
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    weights = e / e.sum(axis=axis, keepdims=True)
    return weights @ V, weights


def _grade_cross_attention(call):
    rng = fresh_rng()
    # Distinct sizes, so that a swapped role or a transposed result shows in the shapes.
    while True:
        d_model, d_k, d_v = (int(rng.integers(3, 9)) for _ in range(3))
        n_q, n_k = int(rng.integers(2, 6)), int(rng.integers(6, 10))
        sizes = (d_model, d_k, d_v, n_q, n_k)
        if len(set(sizes)) == 5 and d_k * d_k != d_model:
            break
    cases = [
        ("queries from a shorter sequence", n_q, n_k, np.float64),
        ("one query", 1, n_k, np.float64),
        ("float32 inputs", n_q, n_k, np.float32),
    ]
    for label, nq, nk, dtype in cases:
        X_q = rng.standard_normal((nq, d_model))
        X_kv = rng.standard_normal((nk, d_model))
        W_Q = rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
        W_K = rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
        W_V = rng.standard_normal((d_model, d_v)) / np.sqrt(d_model)
        what = (
            f"cross_attention on {label} (X_q {X_q.shape}, X_kv {X_kv.shape}, d_k={d_k}, d_v={d_v})"
        )
        value = call(*(a.astype(dtype) for a in (X_q, X_kv, W_Q, W_K, W_V)))
        ref_out, ref_w = _reference_cross_attention(X_q, X_kv, W_Q, W_K, W_V)
        got_out, got_w = _unpack_cross(value, what, (X_q, X_kv, W_Q, W_K, W_V), nq, nk, d_v)
        known = {
            f"{what}: the scores are not scaled; divide Q @ K.T by sqrt(d_k).": _attend(
                X_q, X_kv, W_Q, W_K, W_V, scale="none"
            )[1],
            f"{what}: the scores are divided by d_k; the paper divides by sqrt(d_k).": _attend(
                X_q, X_kv, W_Q, W_K, W_V, scale="dk"
            )[1],
            f"{what}: the scores are divided by sqrt(d_model); the scale uses d_k, the width "
            "of the queries and keys.": _attend(X_q, X_kv, W_Q, W_K, W_V, scale="sqrt_d_model")[1],
            f"{what}: your softmax normalises each column (axis=0); each query's row of "
            "weights must sum to 1 (axis=-1).": _attend(X_q, X_kv, W_Q, W_K, W_V, axis=0)[1],
        }
        if nq == 1:  # one query: a softmax over axis 0 gives all ones, not the row softmax
            known.pop(next(k for k in known if "axis=0" in k))
        compare(
            got_w,
            ref_w,
            known,
            f"{what}: your weights differ from softmax((X_q W_Q)(X_kv W_K)^T / sqrt(d_k)).",
        )
        compare(
            got_out,
            ref_out,
            {},
            f"{what}: your weights are right, but the output is not weights @ (X_kv @ W_V).",
        )
    return (
        "your cross-attention matches: queries from X_q, keys and values from X_kv, an "
        "(n_q, n_k) weight matrix, on fresh sizes, one query and float32 inputs."
    )


def _unpack_cross(value, what, inputs, n_q, n_k, d_v):
    """The learner's ``(output, weights)``, with the usual slips named, role swaps first."""
    X_q, X_kv, W_Q, W_K, W_V = inputs
    out, weights = unpack_pair(value, what, (n_q, d_v), (n_q, n_k))
    shapes = (np.shape(out), np.shape(weights))
    swapped_out, swapped_w = _attend(X_kv, X_q, W_Q, W_K, W_V)  # Q from X_kv; K, V from X_q
    if shapes == (swapped_out.shape, swapped_w.shape) and np.allclose(
        np.asarray(weights, float), swapped_w, rtol=1e-4, atol=1e-5
    ):
        raise Mistake(
            f"{what}: the roles are swapped. Your queries come from X_kv and your keys and values "
            f"from X_q, so you get one row per X_kv token ({n_k}) instead of one per query "
            f"({n_q}). Queries: X_q @ W_Q; keys and values: X_kv @ W_K, X_kv @ W_V."
        )
    self_w = _attend(X_q, X_q, W_Q, W_K, W_V)[1]  # self-attention on X_q
    if np.shape(weights) == self_w.shape and np.allclose(
        np.asarray(weights, float), self_w, rtol=1e-4, atol=1e-5
    ):
        raise Mistake(
            f"{what}: your keys and values come from X_q, which makes this self-attention on "
            "X_q. In cross-attention the keys and values come from the other sequence: "
            "X_kv @ W_K and X_kv @ W_V."
        )
    ref_w = _reference_cross_attention(X_q, X_kv, W_Q, W_K, W_V)[1]
    if np.shape(weights) == (n_k, n_q) and np.allclose(
        np.asarray(weights, float), ref_w.T, rtol=1e-4, atol=1e-5
    ):
        raise Mistake(
            f"{what}: your weights are transposed: shape {np.shape(weights)}, expected ({n_q}, "
            f"{n_k}) = (queries, keys)."
        )
    mixed_keys = ref_w @ (X_kv @ W_K)  # (n_q, d_k): the keys mixed instead of the values
    if np.shape(out) == mixed_keys.shape and np.allclose(
        np.asarray(out, float), mixed_keys, rtol=1e-4, atol=1e-5
    ):
        raise Mistake(
            f"{what}: your output mixes the keys (weights @ K). Keys are only for matching; "
            "the output mixes the values: weights @ (X_kv @ W_V)."
        )
    out = as_result_array(out, what, (n_q, d_v), part="output")
    weights = as_result_array(weights, what, (n_q, n_k), part="weights")
    return out, weights


cross_attention = Exercise(
    name="cross_attention",
    signature="cross_attention(X_q, X_kv, W_Q, W_K, W_V)",
    grade=_grade_cross_attention,
    reference=_reference_cross_attention,
    hints=[
        "Same attention as lesson 04, except for where Q, K and V come from: the queries from "
        "one sequence (X_q), the keys and values from the other (X_kv).",
        "Q = X_q @ W_Q is (n_q, d_k); K = X_kv @ W_K is (n_k, d_k); V = X_kv @ W_V is "
        "(n_k, d_v). The scores Q @ K.T / sqrt(d_k) are (n_q, n_k): one row per query. Softmax "
        "each row, then multiply by V.",
        "Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V; s = Q @ K.T / np.sqrt(Q.shape[-1]); "
        "s = s - s.max(axis=-1, keepdims=True); w = np.exp(s); w = w / w.sum(axis=-1, "
        "keepdims=True); return w @ V, w",
    ],
)


# ----------------------------------------------------------------------------------------------
# multi_head_attention(X, W_Q, W_K, W_V, W_O)


def _reference_multi_head_attention(X, W_Q, W_K, W_V, W_O):
    heads, weights = [], []
    for j in range(W_Q.shape[0]):  # head j has its own W_Q[j], W_K[j], W_V[j]
        Q, K, V = X @ W_Q[j], X @ W_K[j], X @ W_V[j]  # (n, d_k), (n, d_k), (n, d_v)
        scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (n, n)
        scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax over each row
        A = np.exp(scores)
        A = A / A.sum(axis=-1, keepdims=True)  # (n, n), rows sum to 1
        heads.append(A @ V)  # head_j: (n, d_v)
        weights.append(A)
    concat = np.concatenate(heads, axis=-1)  # (n, h * d_v): [head_0 | head_1 | ...]
    return concat @ W_O, np.stack(weights)  # (n, d_model), (h, n, n)


def _heads(X, W_Q, W_K, W_V, scale="sqrt_dk", shared=False):
    """Every head's (output, weights), stacked: (h, n, d_v), (h, n, n); possibly done wrong."""
    h = W_Q.shape[0]
    picks = [0] * h if shared else range(h)
    Q = np.stack([X @ W_Q[j] for j in picks])  # (h, n, d_k)
    K = np.stack([X @ W_K[j] for j in picks])
    V = np.stack([X @ W_V[j] for j in picks])
    factor = {"sqrt_dk": 1 / np.sqrt(Q.shape[-1]), "none": 1.0,
              "sqrt_d_model": 1 / np.sqrt(X.shape[-1])}[scale]  # fmt: skip
    s = Q @ np.swapaxes(K, -1, -2) * factor
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A


def _mha_weight_mistakes(X, W_Q, W_K, W_V, what: str) -> dict[str, np.ndarray]:
    return {
        f"{what}: the scores are not scaled; divide each head's Q @ K.T by sqrt(d_k) before "
        "the softmax.": _heads(X, W_Q, W_K, W_V, scale="none")[1],
        f"{what}: the scores are divided by sqrt(d_model); each head works in d_k = d_model / h "
        "dimensions, so the scale is 1 / sqrt(d_k), with d_k the width of one head's "
        "queries.": _heads(X, W_Q, W_K, W_V, scale="sqrt_d_model")[1],
        f"{what}: every head has the same weights: you used one head's projections (W_Q[0], "
        "W_K[0], W_V[0]) for all of them. Head j uses its own W_Q[j], W_K[j], "
        "W_V[j].": _heads(X, W_Q, W_K, W_V, shared=True)[1],
    }


def _mha_output_mistakes(X, W_Q, W_K, W_V, W_O, what: str) -> dict[str, np.ndarray]:
    heads, _ = _heads(X, W_Q, W_K, W_V)  # (h, n, d_v), right
    h, n, d_v = heads.shape
    concat = np.concatenate(list(heads), axis=-1)  # (n, h * d_v)
    return {
        f"{what}: you forgot W_O. The concatenated heads are (n, h * d_v) = (n, d_model) too, "
        "but the output is concat @ W_O, which lets every output dimension draw on every "
        "head.": concat,
        f"{what}: the heads are concatenated in the wrong order: head 0's columns come first, "
        "[head_0 | head_1 | ... | head_(h-1)], then @ W_O.": (
            np.concatenate(list(heads[::-1]), axis=-1) @ W_O
        ),
        f"{what}: you reshaped the (h, n, d_v) heads straight to (n, h * d_v). That reads them "
        "in memory order, so row i gets pieces of other tokens' rows. Put the heads side by "
        "side for each token: np.concatenate(heads, axis=-1), or move the head axis next to "
        "d_v first (transpose(1, 0, 2)) and then reshape.": heads.reshape(n, h * d_v) @ W_O,
        f"{what}: your output is the correct one divided by h = {h}: you averaged the heads' "
        "contributions. Multi-head attention concatenates the heads, and W_O mixes them; "
        "nothing is averaged.": concat @ W_O / h,
    }


def _unpack_mha(value, what: str, h: int, n: int, d_model: int, d_v: int, expected_w):
    """The learner's ``(output, weights)``, with the usual slips named by their shapes."""
    out, weights = unpack_pair(value, what, (n, d_model), (h, n, n))
    out_shape, w_shape = np.shape(out), np.shape(weights)
    if h > 1 and w_shape == (n, n):
        w = np.asarray(weights, dtype=float)
        if np.allclose(w, expected_w.mean(axis=0), rtol=1e-4, atol=1e-5):
            raise Mistake(
                f"{what}: your weights are the average over the heads, shape (n, n); return "
                f"every head's weights, stacked: shape (h, n, n) = {(h, n, n)}."
            )
        raise Mistake(
            f"{what}: your weights have shape {w_shape}, one head's; return every head's "
            f"weights, stacked: shape (h, n, n) = {(h, n, n)} (np.stack)."
        )
    if h > 1 and out_shape == (n, d_v):
        raise Mistake(
            f"{what}: your output has shape (n, d_v) = {(n, d_v)}, one head's width: did you "
            "average (or add up) the heads? Concatenate them side by side, np.concatenate(heads, "
            f"axis=-1), to get (n, h * d_v) = {(n, h * d_v)}, then multiply by W_O."
        )
    if h > 1 and out_shape in ((h * n, d_v), (h * n, d_model)):
        raise Mistake(
            f"{what}: your output has shape {out_shape}: you stacked the heads as extra rows "
            "(axis=0), as if they were more tokens. Each token keeps one row; put the heads "
            "side by side along the columns: np.concatenate(heads, axis=-1), then @ W_O."
        )
    out = as_result_array(out, what, (n, d_model), part="output")
    weights = as_result_array(weights, what, (h, n, n), part="weights")
    return out, weights


def _grade_multi_head_attention(call):
    from ..multihead import multi_head_attention as _course_mha

    rng = fresh_rng()
    while True:  # sizes whose wrong layouts all have different shapes
        h, d_k, n = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(3, 9))
        d_model = h * d_k
        if len({h, d_k, n, d_model}) == 4 and d_k * d_k != d_model:
            break
    cases = [
        (f"{h} heads", n, h, d_k, np.float64),
        ("one head", 5, 1, 6, np.float64),
        ("one token", 1, h, d_k, np.float64),
        ("float32 inputs", n, h, d_k, np.float32),
    ]
    for label, n_, h_, d_k_, dtype in cases:
        d_model_ = h_ * d_k_
        X = rng.standard_normal((n_, d_model_))
        W_Q, W_K, W_V = (rng.standard_normal((h_, d_model_, d_k_)) / np.sqrt(d_model_)
                         for _ in range(3))  # fmt: skip
        W_O = rng.standard_normal((d_model_, d_model_)) / np.sqrt(d_model_)
        what = f"multi_head_attention on {label} (X {X.shape}, W_Q {W_Q.shape}, W_O {W_O.shape})"
        ref_out, ref_w = _course_mha(X, W_Q, W_K, W_V, W_O)
        value = call(*(a.astype(dtype) for a in (X, W_Q, W_K, W_V, W_O)))
        got_out, got_w = _unpack_mha(value, what, h_, n_, d_model_, d_k_, ref_w)
        compare(
            got_w,
            ref_w,
            _mha_weight_mistakes(X, W_Q, W_K, W_V, what),
            f"{what}: your weights differ from each head's softmax(Q_j K_j^T / sqrt(d_k)), "
            "with Q_j = X @ W_Q[j], K_j = X @ W_K[j], stacked to (h, n, n).",
        )
        compare(
            got_out,
            ref_out,
            _mha_output_mistakes(X, W_Q, W_K, W_V, W_O, what),
            f"{what}: your weights are right, but the output is not "
            "concat(head_0, ..., head_(h-1)) @ W_O, with head_j = weights[j] @ (X @ W_V[j]).",
        )
    return (
        "your multi-head attention matches helpers.multi_head_attention: every head with its own "
        "projections, concatenated in order and mixed by W_O, on fresh sizes, one head, one "
        "token and float32 inputs."
    )


multi_head_attention = Exercise(
    name="multi_head_attention",
    signature="multi_head_attention(X, W_Q, W_K, W_V, W_O)",
    grade=_grade_multi_head_attention,
    reference=_reference_multi_head_attention,
    hints=[
        "Loop over the heads j = 0 .. h-1 (h = W_Q.shape[0]). Head j is ordinary attention "
        "with its own projections: Q = X @ W_Q[j], K = X @ W_K[j], V = X @ W_V[j]. Keep each "
        "head's output (n, d_v) and weights (n, n).",
        "Put the head outputs side by side, head 0 first: np.concatenate(heads, axis=-1) is "
        "(n, h * d_v) = (n, d_model). Multiply by W_O. Stack the weights with np.stack: "
        "(h, n, n).",
        "for j in range(h): Q, K, V = X @ W_Q[j], X @ W_K[j], X @ W_V[j]; "
        "A = helpers.softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1); heads.append(A @ V); "
        "weights.append(A). Then return np.concatenate(heads, axis=-1) @ W_O, "
        "np.stack(weights)",
    ],
)
