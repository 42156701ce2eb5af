"""The induction model's hand-written backward pass, and its check against finite differences.

:func:`loss_and_grads` runs :func:`.model.forward` and backpropagates the cross-entropy through
every layer by hand (the trainer's step); :func:`gradient_check` compares it with central finite
differences on sampled entries of every parameter (tests/test_induction.py).
"""

from __future__ import annotations

import numpy as np

__all__ = ["loss_and_grads", "gradient_check"]

from ..training import cross_entropy
from .model import (
    PARAM_NAMES,
    Cache,
    apply_rope,
    forward,
    merge_heads,
    rope_tables,
    split_batch_heads,
)


def loss_and_grads(
    params: dict[str, np.ndarray],
    tokens: np.ndarray,
    targets: np.ndarray,
    n_heads: int,
    positions: str = "learned",
    position_scale: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], Cache]:
    """Mean cross-entropy against ``targets (b, n)`` (``-1`` = no target), its gradient, the cache.

    Backpropagation, one line per forward line, from the top (``c = 1 / sqrt(d_head)``)::

        dW_U = x_L^T dlogits                 dx = dlogits W_U^T
        layer l, from the last:
          dW_O = Z^T dx                      dZ = dx W_O^T, split into heads
          dA = dZ V^T                        dV = A^T dZ
          dS = A * (dA - rowsum(dA * A))     (lesson 08's softmax_backward; masked: dS = 0)
          dQ = c dS K                        dK = c dS^T Q
          dW_Q = x_l^T dQ, dW_K = x_l^T dK, dW_V = x_l^T dV      (heads merged back)
          dx = dx + dQ W_Q^T + dK W_K^T + dV W_V^T              (the residual adds dx itself)
        dW_E[t] += dx at every position holding token t;  dW_pos[:n] = dx summed over the batch

    With RoPE, Q and K in the cache are the rotated ones: dQ and dK above are rotated back
    (the rotation's transpose) before the lines that use W_Q and W_K. ALiBi's bias is a
    constant: nothing changes. Without learned positions, dW_pos stays 0. ``position_scale``
    multiplies RoPE's positions, as in :func:`forward` (fine-tuning with position
    interpolation).
    """
    cache = forward(params, tokens, n_heads, positions=positions, position_scale=position_scale)
    loss, dlogits = cross_entropy(cache.logits, targets)  # (b, n, vocab)
    dlogits = dlogits.astype(cache.logits.dtype, copy=False)
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_model = params["W_U"].shape[0]
    scale = 1.0 / np.sqrt(d_model // n_heads)
    grads["W_U"] = cache.x[-1].reshape(-1, d_model).T @ dlogits.reshape(-1, dlogits.shape[-1])
    dx = dlogits @ params["W_U"].T  # (b, n, d_model)
    for layer in reversed(range(params["W_Q"].shape[0])):
        x, A = cache.x[layer], cache.A[layer]
        Q, K, V = cache.Q[layer], cache.K[layer], cache.V[layer]
        flat_x = x.reshape(-1, d_model)
        grads["W_O"][layer] = cache.Z[layer].reshape(-1, d_model).T @ dx.reshape(-1, d_model)
        dZ = split_batch_heads(dx @ params["W_O"][layer].T, n_heads)  # (b, h, n, d_head)
        dA = dZ @ np.swapaxes(V, -1, -2)  # (b, h, n, n)
        dV = np.swapaxes(A, -1, -2) @ dZ  # (b, h, n, d_head)
        # Lesson 08's softmax_backward, written out to stay in the training dtype (float32).
        dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (b, h, n, n)
        dQ = dS @ K * scale
        dK = np.swapaxes(dS, -1, -2) @ Q * scale
        if positions == "rope":
            tables = rope_tables(tokens.shape[1], d_model // n_heads, dQ.dtype, position_scale)
            dQ, dK = apply_rope(dQ, *tables, sign=-1.0), apply_rope(dK, *tables, sign=-1.0)
        dx = dx.copy()
        for name, d in (("W_Q", dQ), ("W_K", dK), ("W_V", dV)):
            d = merge_heads(d)  # (b, n, d_model)
            grads[name][layer] = flat_x.T @ d.reshape(-1, d_model)
            dx += d @ params[name][layer].T
    # dW_E[t] = the sum of dx over the positions holding token t: a one-hot matrix product
    # (ten times faster than np.add.at here).
    one_hot = np.zeros((tokens.size, params["W_E"].shape[0]), dtype=dx.dtype)
    one_hot[np.arange(tokens.size), tokens.reshape(-1)] = 1.0
    grads["W_E"] = one_hot.T @ dx.reshape(-1, d_model)
    if positions == "learned":
        grads["W_pos"][: tokens.shape[1]] = dx.sum(axis=0)
    return loss, grads, cache


def gradient_check(
    params: dict[str, np.ndarray],
    tokens: np.ndarray,
    targets: np.ndarray,
    n_heads: int,
    eps: float = 1e-6,
    entries: int = 20,
    seed: int = 0,
    positions: str = "learned",
    position_scale: float = 1.0,
) -> dict[str, float]:
    """Relative error between :func:`loss_and_grads` and central finite differences.

    For ``entries`` randomly chosen entries of every weight array (all of them if it has
    fewer), ``(loss(w + eps) - loss(w - eps)) / (2 eps)`` against the hand-written gradient;
    per array ``||g - g_num|| / (||g|| + ||g_num||)`` over those entries: about 1e-8 or smaller
    when the backward pass is right (float64), of order 1 when a term is missing.
    """
    _, grads, _ = loss_and_grads(params, tokens, targets, n_heads, positions, position_scale)
    rng = np.random.default_rng(seed)
    errors = {}
    for name in PARAM_NAMES:
        size = params[name].size
        picks = rng.choice(size, size=min(entries, size), replace=False)
        analytic, numerical = [], []
        for flat in picks:
            index = np.unravel_index(flat, params[name].shape)
            shifted = {key: value.copy() for key, value in params.items()}
            shifted[name][index] += eps
            plus = loss_and_grads(shifted, tokens, targets, n_heads, positions, position_scale)[0]
            shifted[name][index] -= 2 * eps
            minus = loss_and_grads(shifted, tokens, targets, n_heads, positions, position_scale)[0]
            numerical.append((plus - minus) / (2 * eps))
            analytic.append(grads[name][index])
        analytic, numerical = np.array(analytic), np.array(numerical)
        denominator = np.linalg.norm(analytic) + np.linalg.norm(numerical)
        errors[name] = float(np.linalg.norm(analytic - numerical) / max(denominator, 1e-300))
    return errors
