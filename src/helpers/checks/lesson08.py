"""Lesson 08 exercises: gradients through attention, checked against finite differences.

- ``softmax_backward(A, dA)`` (★★): the gradient through a row-wise softmax,
  ``dS = A * (dA - rowsum(dA * A))``, for ``A`` of shape ``(..., n_q, n_k)``.
- ``attention_backward(Q, K, V, dO)`` (★★★ challenge): ``(dQ, dK, dV)`` of
  ``softmax(Q K^T / sqrt(d_k)) V``.

Both are checked on fresh random inputs against central finite differences of the scalar
``L = sum(upstream * output)``, whose gradient with respect to the output is the upstream one.
"""

from __future__ import annotations

import numpy as np

from .answers import lesson08 as answers
from .compare import as_result_array, compare, raw_softmax, unpack_returns
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named

EPS = 1e-6


# ----------------------------------------------------------------------------------------------
# softmax_backward(A, dA)


def _finite_difference_softmax(S, dA, eps=EPS):
    """dL/dS for L = sum(dA * softmax(S)), one entry at a time (central differences)."""
    grad = np.zeros_like(S)
    for index in np.ndindex(S.shape):
        plus, minus = S.copy(), S.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = ((dA * raw_softmax(plus)).sum() - (dA * raw_softmax(minus)).sum()) / (2 * eps)
    return grad


def _softmax_backward_mistakes(A, dA, what) -> dict:
    square = A.shape[-1] == A.shape[-2]
    rowsum = (dA * A).sum(-1, keepdims=True)
    # None of these messages gives the whole formula (that is the last hint's job): each one
    # points at the term that is missing or wrong, in the words of the lesson's Jacobian
    # d a_j / d s_k = a_j (delta_jk - a_k).
    wrong = {
        "identity": (
            dA,
            "your dS equals dA: the softmax is not the identity. Each weight depends on every "
            "score of its row: apply the lesson's Jacobian d a_j / d s_k = a_j (delta_jk - a_k) "
            "(chain rule: dS_k = sum_j dA_j d a_j / d s_k), then simplify it.",
        ),
        "no_row_sum": (
            A * dA,
            "your dS is A * dA: that is only the delta_jk part of the Jacobian. A weight also "
            "moves when the *other* scores of its row move (the -a_j a_k part): you dropped "
            "the subtraction of the row's weighted sum of dA.",
        ),
        "forgot_a_factor": (
            dA - rowsum,
            "you subtract the row's weighted sum of dA, but your dS lacks the outer factor: in "
            "the Jacobian a_j (delta_jk - a_k) every term carries a weight, so dS_k is "
            "multiplied by a_k.",
        ),
        "sum_without_a": (
            A * (dA - dA.sum(-1, keepdims=True)),
            "the row sum you subtract adds up dA alone; in the chain rule each dA_j comes with "
            "its weight a_j (from the -a_j a_k part of the Jacobian): weigh dA by A before "
            "summing the row.",
        ),
        "sign_flipped": (
            A * (rowsum - dA),
            "the sign is flipped: raising score k raises its own weight (the diagonal of the "
            "Jacobian is positive), so dS_k grows with dA_k; the row's weighted sum is what is "
            "subtracted.",
        ),
        "diagonal_only": (
            A * (1 - A) * dA,
            "A * (1 - A) * dA is only the diagonal of each row's Jacobian (d a_k / d s_k); the "
            "off-diagonal terms -a_j a_k couple the entries of a row, so every dS_k also "
            "collects something from the other dA_j of its row.",
        ),
        "column_sum": (
            A * (dA - (dA * A).sum(-2, keepdims=True)),
            "you summed over the "
            "queries (axis=-2, a column); the softmax runs along each row, so sum "
            "over the keys: axis=-1, keepdims=True.",
        ),
        "whole_sum": (
            A * (dA - (dA * A).sum()),
            "you summed dA * A over the whole array; each "
            "row is its own softmax: sum over axis=-1 with keepdims=True.",
        ),
    }
    if square:  # without keepdims the row sums broadcast along the wrong axis
        wrong["no_keepdims"] = (
            A * (dA - (dA * A).sum(-1)[..., None, :]),
            "rowsum(dA * A) lost its axis: (dA * A).sum(axis=-1) has shape (..., n_q) and "
            "broadcasts along the rows instead of down them. Use keepdims=True (or [..., None]).",
        )
    return {named(how, f"{what}: {message}"): value for how, (value, message) in wrong.items()}


def _grade_softmax_backward(call):
    rng = fresh_rng()
    while True:
        n_q, n_k = int(rng.integers(2, 6)), int(rng.integers(3, 7))
        if n_q != n_k:
            break
    n, b = int(rng.integers(3, 6)), int(rng.integers(2, 4))
    causal = np.tril(np.ones((n, n), dtype=bool))
    cases = [
        (f"A ({n}, {n}) of a self-attention", (n, n), None, np.float64),
        (f"a batch of causal weights A ({b}, {n}, {n}), zeros above the diagonal", (b, n, n),
         causal, np.float64),
        (f"A ({n_q}, {n_k}) = softmax of fresh scores", (n_q, n_k), None, np.float64),
        ("one key per row (A all ones)", (n_q, 1), None, np.float64),
        (f"float32 A ({n_q}, {n_k})", (n_q, n_k), None, np.float32),
    ]  # fmt: skip
    for label, shape, mask, dtype in cases:
        S = rng.normal(0, 1.5, shape)
        if mask is not None:
            S = np.where(mask, S, -np.inf)
        A, dA = raw_softmax(S), rng.standard_normal(shape)
        # Central differences; a masked score (-inf) stays -inf when nudged: its gradient is 0.
        numerical = _finite_difference_softmax(S, dA)
        what = f"softmax_backward(A, dA) on {label}"
        got = as_result_array(call(A.astype(dtype), dA.astype(dtype)), what, shape)
        compare(
            got,
            numerical,
            _softmax_backward_mistakes(A, dA, what),
            f"{what}: your dS differs from the finite-difference gradient of sum(dA * softmax(S)).",
            name="dS",
        )
    return (
        "your softmax_backward matches central finite differences of sum(dA * softmax(S)) on "
        "fresh square and rectangular scores, a batch of causal weights (masked entries get "
        "0), one key per row and float32."
    )


softmax_backward = Exercise(
    name="softmax_backward",
    ready_made="helpers.training.softmax_backward",
    allowed=(),  # NumPy only: helpers.training.softmax_backward is this answer
    signature="softmax_backward(A, dA)",
    grade=_grade_softmax_backward,
    reference=answers.softmax_backward,
    hints=[
        "Work on one row first: a = softmax(s), and the lesson's Jacobian d a_j / d s_k = "
        "a_j (delta_jk - a_k). The chain rule gives ds_k = sum_j da_j * d a_j / d s_k.",
        "Split the sum: sum_j da_j a_j delta_jk = da_k a_k, and sum_j da_j a_j a_k = a_k * "
        "(sum_j da_j a_j). So ds_k = a_k (da_k - rowsum), with one number rowsum = sum_j "
        "da_j a_j per row.",
        "return A * (dA - (dA * A).sum(axis=-1, keepdims=True))",
    ],
    stars=2,
    title="the gradient through a row-wise softmax, checked by finite differences",
)


# ----------------------------------------------------------------------------------------------
# attention_backward(Q, K, V, dO) -> (dQ, dK, dV): the ★★★ challenge


def _attention(Q, K, V):
    return raw_softmax(Q @ K.T / np.sqrt(Q.shape[-1])) @ V


def _finite_difference_attention(Q, K, V, dO, eps=EPS):
    grads = []
    for which in range(3):
        arrays = [Q, K, V]
        grad = np.zeros_like(arrays[which])
        for index in np.ndindex(grad.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[which][index] += eps
            minus[which][index] -= eps
            diff = (dO * _attention(*plus)).sum() - (dO * _attention(*minus)).sum()
            grad[index] = diff / (2 * eps)
        grads.append(grad)
    return tuple(grads)


def _attention_backward_wrong(Q, K, V, dO, how):
    c = 1 / np.sqrt(Q.shape[-1])
    A = raw_softmax(Q @ K.T * c)
    dA = dO @ V.T
    dV = A.T @ dO
    dS = A * (dA - (dA * A).sum(-1, keepdims=True))
    if how == "softmax_skipped":
        dS = dA
    if how == "no_row_sum":
        dS = A * dA
    factor = {"forgot_scale": 1.0, "scale_inverted": np.sqrt(Q.shape[-1])}.get(how, c)
    dQ, dK = dS @ K * factor, dS.T @ Q * factor
    if how == "dv_not_transposed":
        dV = A @ dO
    if how == "dk_not_transposed":
        dK = dS @ Q * c
    if how == "dq_dk_swapped":
        dQ, dK = dK, dQ
    return dQ, dK, dV


_ATTENTION_MISTAKES = {
    "forgot_scale": "dQ and dK lack the scale: S = Q K^T * c with c = 1/sqrt(d_k), so "
    "dQ = c dS K and dK = c dS^T Q.",
    "scale_inverted": "dQ and dK are multiplied by sqrt(d_k); the forward pass multiplies the "
    "scores by c = 1/sqrt(d_k), so the backward pass does too.",
    "softmax_skipped": "you passed dA straight through as dS, as if the softmax were the "
    "identity: go through the softmax's backward pass, dS = softmax_backward(A, dA) (your "
    "Exercise 1).",
    "no_row_sum": "your dS is A * dA: the softmax's gradient also subtracts each row's "
    "weighted sum of dA; dS = softmax_backward(A, dA) (your Exercise 1).",
    "dv_not_transposed": "dV = A @ dO has the right shape only when n_q = n_k; O = A V gives "
    "dV = A^T dO: key j collects the gradient of every query that read it.",
    "dk_not_transposed": "dK = c dS Q mixes queries into keys the wrong way round; S = c Q K^T "
    "gives dK = c dS^T Q (one row per key).",
    "dq_dk_swapped": "dQ and dK are swapped: return dQ, dK, dV in that order.",
}


def _grade_attention_backward(call):
    rng = fresh_rng()
    while True:
        n, d_k, d_v = int(rng.integers(3, 6)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
        n_q, n_k = int(rng.integers(2, 5)), int(rng.integers(5, 8))
        if len({n, d_k, d_v}) == 3 and len({n_q, n_k, d_k, d_v}) == 4:
            break
    cases = [
        (f"self-attention sizes (n_q = n_k = {n})", n, n, np.float64),
        (f"cross-attention sizes (n_q = {n_q}, n_k = {n_k})", n_q, n_k, np.float64),
        ("float32 inputs", n, n, np.float32),
    ]
    for label, nq, nk, dtype in cases:
        Q, K = rng.standard_normal((nq, d_k)), rng.standard_normal((nk, d_k))
        V, dO = rng.standard_normal((nk, d_v)), rng.standard_normal((nq, d_v))
        what = f"attention_backward(Q, K, V, dO) on {label}, d_k={d_k}, d_v={d_v}"
        value = unpack_returns(
            call(*(a.astype(dtype) for a in (Q, K, V, dO))), what, ("dQ", "dK", "dV"),
            wrong_count="not_a_triple", hint=" (the three gradients)",
        )  # fmt: skip
        shapes = {"dQ": Q.shape, "dK": K.shape, "dV": V.shape}
        got = [as_result_array(v, what, shapes[p], part=p) for p, v in zip(shapes, value)]
        expected = _finite_difference_attention(Q, K, V, dO)
        if all(np.allclose(g, e, rtol=1e-4, atol=1e-5) for g, e in zip(got, expected)):
            continue
        for how, message in _ATTENTION_MISTAKES.items():
            try:
                wrong = _attention_backward_wrong(Q, K, V, dO, how)
            except ValueError:  # this slip cannot even be computed at these sizes
                continue
            if all(np.shape(w) == np.shape(g) for w, g in zip(wrong, got)) and all(
                np.allclose(g, w, rtol=1e-4, atol=1e-5) for g, w in zip(got, wrong)
            ):
                raise Mistake(named(how, f"{what}: {message}"))
        for part, g, e in zip(shapes, got, expected):
            compare(g, e, {}, f"{what}: your {part} differs from finite differences of "
                    "sum(dO * attention(Q, K, V)).", name=part)  # fmt: skip
    return (
        "your dQ, dK and dV match central finite differences of sum(dO * softmax(Q K^T / "
        "sqrt(d_k)) V) for self- and cross-attention sizes and float32 inputs."
    )


attention_backward = Exercise(
    name="attention_backward",
    # The forward pass and the softmax's backward pass (Exercise 1) may come from the course;
    # dQ, dK, dV are the challenge (helpers.training.loss_and_grads computes them).
    allowed=(
        "helpers.softmax",
        "helpers.scaled_dot_product_attention",
        "helpers.training.softmax_backward",
    ),
    signature="attention_backward(Q, K, V, dO)",
    grade=_grade_attention_backward,
    reference=answers.attention_backward,
    hints=[
        "Redo the forward pass, keeping what the backward pass needs: c = 1/sqrt(d_k), "
        "S = c Q K^T, A = softmax(S), O = A V. Then walk back through the three lines.",
        "O = A V gives dA = dO V^T and dV = A^T dO; the softmax gives dS = softmax_backward(A, "
        "dA). For the last line, one score S_ij = c q_i . k_j touches only query row i and key "
        "row j: q_i collects c dS_ij k_j over the keys j (a row of dS times K), and k_j "
        "collects c dS_ij q_i over the queries i (a column of dS, so dS^T).",
        "c = 1 / np.sqrt(Q.shape[-1]); A = helpers.softmax(Q @ K.T * c); dA = dO @ V.T; "
        "dV = A.T @ dO; dS = A * (dA - (dA * A).sum(-1, keepdims=True)); return dS @ K * c, "
        "dS.T @ Q * c, dV",
    ],
    stars=3,
    title="challenge: the attention backward pass for Q, K and V, by finite differences",
)
