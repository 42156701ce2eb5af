"""Lesson 05's answers, generated from solutions/05_causal_masking.py by `make notebooks`
(tools/build_lessons.py): do not edit. Edit the lesson's solution regions and ### ANSWER lines."""

import numpy as np


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))  # lower triangle and the diagonal


def masked_attention(Q, K, V, mask):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (n_q, n_k)
    scores = np.where(mask, scores, -np.inf)  # blocked keys: -inf BEFORE the softmax
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable: exp never overflows
    weights = np.exp(scores)  # exp(-inf) = 0
    weights = weights / weights.sum(axis=-1, keepdims=True)  # (n_q, n_k), rows sum to 1
    return weights @ V, weights  # (n_q, d_v), (n_q, n_k)


def causal_build_it(seed=0):
    np.random.seed(seed)
    X = np.array([[1.0, 0.0, 1.0, 0.0],
                  [0.0, 1.0, 0.0, 1.0],
                  [1.0, 1.0, 0.0, 0.0]])
    d_model, d_k = 4, 4
    Wq = np.random.randn(d_model, d_k) * 0.5
    Wk = np.random.randn(d_model, d_k) * 0.5
    Wv = np.random.randn(d_model, d_k) * 0.5
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.T / np.sqrt(d_k)
    mask = np.tril(np.ones((3, 3), dtype=bool))  # True = may attend: j <= i
    scores = np.where(mask, scores, -np.inf)  # the future gets -inf before the softmax
    z = scores - scores.max(axis=-1, keepdims=True)
    A = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    out = A @ V
    return A, out


def padding_mask(lengths, n):
    positions = np.arange(n)  # (n,)
    return positions[None, :] < np.asarray(lengths)[:, None]  # (b, n): True on real tokens


def batched_masked_attention(Q, K, V, lengths, causal):
    b, n, d_k = Q.shape
    real = np.arange(n)[None, :] < np.asarray(lengths)[:, None]  # (b, n): real tokens
    mask = real[:, None, :]  # (b, 1, n): padded KEYS blocked, for every query row
    if causal:
        mask = mask & np.tril(np.ones((n, n), dtype=bool))  # (b, n, n): and the future
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (b, n, n)
    scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)  # every row keeps a key: no NaN
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights  # (b, n, d_v), (b, n, n)


def decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    q = x_t @ W_Q  # (d_k,): the new token's query, used once
    K_cache = np.vstack([K_cache, x_t @ W_K])  # (t + 1, d_k): its key joins the cache
    V_cache = np.vstack([V_cache, x_t @ W_V])  # (t + 1, d_v)
    s = K_cache @ q / np.sqrt(q.shape[-1])  # (t + 1,): every key so far, itself included
    w = np.exp(s - s.max())
    w = w / w.sum()  # no mask: the cache holds only j <= t
    return w @ V_cache, K_cache, V_cache


allowed_weight_with_mask = "rise"


# The order in which the lesson asks them (checks.catalogue()'s, lesson 00's list).
ASKED = ("causal_mask", "allowed_weight_with_mask", "masked_attention", "causal_build_it", "padding_mask", "batched_masked_attention", "decode_step",)
