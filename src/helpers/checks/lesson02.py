"""Lesson 02 exercises: the Q/K/V projections, and splitting a projection into heads."""

from __future__ import annotations

import numpy as np

from ._core import Exercise, Mistake, as_result_array, compare, fresh_rng

# ----------------------------------------------------------------------------------------------
# project_qkv(X, W_Q, W_K, W_V) -> (Q, K, V)


def _reference_project_qkv(X, W_Q, W_K, W_V):
    Q = X @ W_Q  # (n, d_k): one query per token
    K = X @ W_K  # (n, d_k): one key per token
    V = X @ W_V  # (n, d_v): one value per token
    return Q, K, V


def _three_arrays(value, what: str) -> tuple:
    """The learner's return value as a (Q, K, V) triple, or a Mistake that says why not."""
    if value is None:
        raise Mistake(f"{what} returned None; did you forget `return Q, K, V`?")
    if isinstance(value, np.ndarray):
        raise Mistake(
            f"{what} returned one array of shape {value.shape}; return the three projections "
            "as a tuple: `return Q, K, V`"
        )
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        size = f" of {len(value)}" if isinstance(value, (tuple, list)) else ""
        raise Mistake(
            f"{what} returned a {type(value).__name__}{size}; it should return three arrays, "
            "`return Q, K, V`"
        )
    return tuple(value)


def _grade_project_qkv(call):
    rng = fresh_rng()
    n = int(rng.integers(3, 8))
    d_model = n + int(rng.integers(1, 5))  # n != d_model, so a transposed result shows
    d_k = int(rng.integers(2, d_model))  # a head-sized projection, d_k < d_model
    cases = [(n, d_model, d_model), (n + 1, d_model, d_k), (1, d_model, d_k)]
    for n, d_model, d_out in cases:
        X = rng.standard_normal((n, d_model))
        W = {name: rng.normal(0, d_model**-0.5, (d_model, d_out)) for name in "QKV"}
        what = f"project_qkv(X {X.shape}, W_Q, W_K, W_V of shape {(d_model, d_out)})"
        triple = _three_arrays(call(X, W["Q"], W["K"], W["V"]), what)
        for name, value in zip("QKV", triple):
            shape = np.shape(value) if isinstance(value, np.ndarray) else None
            if shape == (d_out, n) and n != d_out:
                raise Mistake(
                    f"{what}: your {name} has shape {shape}, expected {(n, d_out)}: it looks "
                    f"transposed. {name} = X @ W_{name} keeps one row per token."
                )
            got = as_result_array(value, what, (n, d_out), part=name)
            mistakes = {
                f"{what}: your {name} is X itself. {name} = X @ W_{name}: the projection is what "
                f"turns the token's content into a {_ROLE[name]}.": X,
            }
            for other in "QKV".replace(name, ""):
                mistakes[
                    f"{what}: your {name} equals X @ W_{other}, so the weights are swapped. "
                    f"Each projection has its own matrix: {name} = X @ W_{name}."
                ] = X @ W[other]
            if d_out == d_model:
                mistakes[
                    f"{what}: your {name} equals X @ W_{name}ᵀ. Use W_{name} as it is: its shape "
                    "(d_model, d_k) already maps a d_model row to a d_k row."
                ] = X @ W[name].T
            compare(
                got,
                X @ W[name],
                mistakes,
                f"{what}: your {name} differs from X @ W_{name}.",
            )
    return (
        "Q, K and V match X @ W_Q, X @ W_K and X @ W_V on fresh inputs, with square and "
        "head-sized (d_model, d_k) weights."
    )


_ROLE = {"Q": "query", "K": "key", "V": "value"}

project_qkv = Exercise(
    name="project_qkv",
    signature="project_qkv(X, W_Q, W_K, W_V)",
    grade=_grade_project_qkv,
    reference=_reference_project_qkv,
    hints=[
        "All three come from the same X, each through its own weight matrix. X holds one row "
        "per token, shape (n, d_model); each W has shape (d_model, d_k).",
        "A row of X times a (d_model, d_k) matrix gives a row of d_k numbers; for all rows at "
        "once use the matrix product X @ W. Return the three results as a tuple.",
        "Q = X @ W_Q; K = X @ W_K; V = X @ W_V; return Q, K, V",
    ],
)


# ----------------------------------------------------------------------------------------------
# head_slices(M, h) -> (h, n, d_k)


def _reference_head_slices(M, h):
    n, d_model = M.shape
    d_k = d_model // h
    # head j gets columns j*d_k ... (j+1)*d_k - 1
    return np.stack([M[:, j * d_k : (j + 1) * d_k] for j in range(h)])  # (h, n, d_k)


def _shape_of(value) -> tuple[int, ...] | None:
    """The shape of an array or a list of equal blocks; None for anything else (ragged, None)."""
    if not isinstance(value, (np.ndarray, list, tuple)):
        return None
    try:
        return np.shape(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        return None


def _grade_head_slices(call):
    rng = fresh_rng()
    # h is never 2 and d_k never 4 (the running example's), and d_model = h * d_k is a multiple
    # of 4 but not 8, so answers with either size hard-coded run and show a telling shape.
    h = int(rng.choice([3, 5]))
    d_k = int(rng.choice([8, 12]))
    n = h * int(rng.integers(2, 4))  # divisible by h, so splitting the rows "works"
    cases = [(n, h, d_k), (6, 2, 4), (5, 1, 3)]
    for n, h, d_k in cases:
        d_model = h * d_k
        M = rng.standard_normal((n, d_model))
        what = f"head_slices(M {M.shape}, h={h})"
        expected = _reference_head_slices(M, h)
        value = call(M, h)
        shape = _shape_of(value)
        wrong_shapes = {
            (h, n // h, d_model): "you split the rows (tokens) into groups. Heads split the "
            "columns: every head sees every token, through its own d_k columns.",
            (n, h, d_k): "you reshaped to (n, h, d_k) but did not move the head axis to the "
            "front. Swap the first two axes: .transpose(1, 0, 2).",
            (h, d_k, n): "each head's block is transposed. A head keeps one row per token: "
            "(n, d_k).",
            (2, n, d_model // 2): "it looks like h = 2 is hard-coded (the running example's). "
            f"Use the h you are given (here h = {h}).",
            (d_model // 4, n, 4): "it looks like d_k = 4 is hard-coded (the running example's). "
            f"Compute it: d_k = d_model // h = {d_model} // {h} = {d_k}.",
        }
        if shape != (h, n, d_k) and shape in wrong_shapes and n % h == 0:
            raise Mistake(
                f"{what} returned shape {shape}, expected (h, n, d_k) = {(h, n, d_k)}: "
                + wrong_shapes[shape]
            )
        got = as_result_array(value, what, (h, n, d_k))
        compare(
            got,
            expected,
            {
                f"{what}: you reshaped M straight to (h, n, d_k). That cuts M's memory in "
                "order, so a head gets pieces of several rows. Reshape to (n, h, d_k) first, "
                "then move the head axis to the front.": M.reshape(h, n, d_k),
                f"{what}: head j got every h-th column (j, j+h, ...). Heads take contiguous "
                "blocks: head j gets columns j*d_k to (j+1)*d_k - 1.": M.reshape(
                    n, d_k, h
                ).transpose(2, 0, 1),
            },
            f"{what} differs from the expected split: block j should be M[:, j*d_k:(j+1)*d_k].",
        )
    return (
        "your heads match: block j is columns j·d_k to (j+1)·d_k - 1, on fresh sizes, h = 2 "
        "and h = 1."
    )


head_slices = Exercise(
    name="head_slices",
    signature="head_slices(M, h)",
    grade=_grade_head_slices,
    reference=_reference_head_slices,
    hints=[
        "M has shape (n, d_model) with d_model = h * d_k. Head j owns a block of d_k "
        "neighbouring columns; every head keeps all n rows.",
        "d_k = M.shape[1] // h. Head j is M[:, j*d_k:(j+1)*d_k], shape (n, d_k). Stack the h "
        "blocks along a new first axis with np.stack, or reshape to (n, h, d_k) and transpose.",
        "n, d_model = M.shape; d_k = d_model // h; return M.reshape(n, h, d_k).transpose(1, 0, 2)",
    ],
)
