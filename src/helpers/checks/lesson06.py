"""Lesson 06 exercises: cross-attention, and splitting a projection into heads."""

from __future__ import annotations

import numpy as np

from ._core import Exercise, Mistake, as_result_array, compare, fresh_rng

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
    if value is None:
        raise Mistake(f"{what} returned None; did you forget `return output, weights`?")
    if not isinstance(value, (tuple, list)):
        shape = np.shape(value) if isinstance(value, np.ndarray) else None
        only = {(n_q, d_v): "only the output", (n_q, n_k): "only the weights"}.get(shape)
        if only:
            raise Mistake(f"{what} returned {only}; return both: `return output, weights`.")
        raise Mistake(
            f"{what} returned a {type(value).__name__}; it should return a pair `output, weights`."
        )
    if len(value) != 2:
        raise Mistake(f"{what} returned {len(value)} values; return two: `output, weights`.")
    out, weights = value
    shapes = (np.shape(out), np.shape(weights))
    if shapes == ((n_q, n_k), (n_q, d_v)):
        raise Mistake(f"{what} returned (weights, output); the order is `output, weights`.")
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
            f"{what}'s weights are transposed: shape {np.shape(weights)}, expected ({n_q}, "
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
    out = as_result_array(out, f"{what}'s output", (n_q, d_v))
    weights = as_result_array(weights, f"{what}'s weights", (n_q, n_k))
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
# split_heads(X, h)


def _reference_split_heads(X, h):
    n, d_model = X.shape
    d_k = d_model // h
    # (n, d_model) -> (n, h, d_k): each row's columns cut into h blocks of d_k;
    # then move the head axis to the front: (h, n, d_k). Head j gets columns j*d_k:(j+1)*d_k.
    return X.reshape(n, h, d_k).transpose(1, 0, 2)


def _grade_split_heads(call):
    rng = fresh_rng()
    while True:  # sizes whose wrong layouts all have different shapes
        h, d_k, m = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(2, 4))
        n, d_model = h * m, h * d_k
        if len({h, d_k, n, d_model, m}) == 5:
            break
    cases = [
        (n, d_model, h, np.float64),
        (5, 8, 1, np.float64),
        (3, 6, 6, np.float64),
        (n, d_model, h, np.float32),
    ]
    for n, d_model, h, dtype in cases:
        d_k = d_model // h
        X = rng.standard_normal((n, d_model))
        what = f"split_heads(X of shape {X.shape}, h={h})"
        value = call(X.astype(dtype), h)
        expected = _reference_split_heads(X, h)
        if value is not None and not isinstance(value, tuple):
            shape = np.shape(value)
            named = {
                (n, h, d_k): f"{what} returned shape (n, h, d_k) = {(n, h, d_k)}: the columns are "
                "cut into heads, but the head axis is not in front yet. Move it with "
                ".transpose(1, 0, 2) to get (h, n, d_k).",
                (h, d_k, n): f"{what} returned shape (h, d_k, n) = {(h, d_k, n)}: each head is "
                "transposed. Every head holds one row per token: (h, n, d_k).",
            }
            if h > 1 and n % h == 0:
                named[(h, n // h, d_model)] = (
                    f"{what} returned shape {(h, n // h, d_model)}: you gave each head a block of "
                    "rows (tokens). A head keeps every token and takes a block of columns "
                    "(features): head j gets X[:, j*d_k:(j+1)*d_k]."
                )
            if shape in named and shape != expected.shape:
                raise Mistake(named[shape])
        got = as_result_array(value, what, expected.shape)
        compare(
            got,
            expected,
            {
                f"{what}: you reshaped X straight to (h, n, d_k) without a transpose. That "
                "reads the numbers in memory order, so 'head 0' gets the first rows' features, "
                "not the first d_k columns of every row. Reshape to (n, h, d_k) first, then "
                "transpose(1, 0, 2).": X.reshape(h, n, d_k),
                f"{what}: your heads take every h-th column (a stride) instead of a contiguous "
                "block: head j must get columns j*d_k to (j+1)*d_k - 1. Reshape to (n, h, d_k), "
                "not (n, d_k, h).": X.reshape(n, d_k, h).transpose(2, 0, 1),
            },
            f"{what}: head j must be X[:, j*d_k:(j+1)*d_k], stacked into shape (h, n, d_k).",
        )
    return (
        "your split gives head j the columns j*d_k:(j+1)*d_k of every token, shape (h, n, d_k), "
        "on fresh sizes, h = 1, d_k = 1 and float32."
    )


split_heads = Exercise(
    name="split_heads",
    signature="split_heads(X, h)",
    grade=_grade_split_heads,
    reference=_reference_split_heads,
    hints=[
        "Head j keeps every token (every row) and takes its own block of d_k = d_model / h "
        "columns: X[:, j*d_k:(j+1)*d_k]. Stack those h blocks along a new first axis.",
        "A loop works: np.stack([X[:, j*d_k:(j+1)*d_k] for j in range(h)]). Without a loop: "
        "X.reshape(n, h, d_k) cuts each row into h blocks; the head axis is then axis 1, so "
        "move it to the front.",
        "n, d_model = X.shape; d_k = d_model // h; return X.reshape(n, h, d_k).transpose(1, 0, 2)",
    ],
)
