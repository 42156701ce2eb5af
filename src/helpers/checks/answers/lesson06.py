"""Lesson 06's answers, generated from solutions/06_cross_attention_and_heads.py by `make notebooks`
(tools/build_lessons.py): do not edit. Edit the lesson's solution regions and ### ANSWER lines."""

import numpy as np

import helpers


def cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    Q = X_q @ W_Q  # (b, n_q, d_k): queries from the decoder's side
    K = X_kv @ W_K  # (b, n_k, d_k): keys and values from the encoder's
    V = X_kv @ W_V  # (b, n_k, d_v)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (b, n_q, n_k)
    real = np.arange(K.shape[-2]) < np.asarray(kv_lengths)[:, None]  # (b, n_k): not padding
    scores = np.where(real[:, None, :], scores, -np.inf)  # same mask for every query
    weights = helpers.softmax(scores, axis=-1)  # (b, n_q, n_k): padded keys get 0
    return weights @ V, weights  # (b, n_q, d_v), (b, n_q, n_k)


def multi_head_attention(X, W_Q, W_K, W_V, W_O):
    heads, weights = [], []
    for a in range(W_Q.shape[0]):  # h heads, each with its own projections
        Q, K, V = X @ W_Q[a], X @ W_K[a], X @ W_V[a]  # (..., n, d_k), (..., n, d_v)
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., n, n); not K.T
        A = helpers.softmax(scores, axis=-1)  # (..., n, n)
        heads.append(A @ V)  # head a: (..., n, d_v)
        weights.append(A)
    concat = np.concatenate(heads, axis=-1)  # (..., n, h * d_v): first head first
    return concat @ W_O, np.stack(weights, axis=-3)  # (..., n, d_model), (..., h, n, n)


def multi_query_attention(X, W_Q, W_K, W_V, W_O):
    K, V = X @ W_K, X @ W_V  # (..., n, d_k), (..., n, d_v): computed once, shared by every head
    K, V = K[..., None, :, :], V[..., None, :, :]  # (..., 1, n, d): a head axis that broadcasts
    Q = np.einsum("...nd,hdk->...hnk", X, W_Q)  # (..., h, n, d_k): only the queries are per head
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., h, n, n)
    A = helpers.softmax(scores, axis=-1)
    heads = A @ V  # (..., h, n, d_v)
    concat = np.concatenate([heads[..., a, :, :] for a in range(W_Q.shape[0])], axis=-1)
    return concat @ W_O, A  # (..., n, d_model), (..., h, n, n)


cross_attention_shape = "4x6"


# The order in which the lesson asks them (checks.catalogue()'s, lesson 00's list).
ASKED = ("cross_attention_shape", "cross_attention", "multi_head_attention", "multi_query_attention",)
