"""Lesson 04's answers, generated from solutions/04_softmax_and_attention.py by `make notebooks`
(tools/build_lessons.py): do not edit. Edit the lesson's solution regions and ### ANSWER lines."""

import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)  # (..., n_k): shift each row, nothing overflows
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)  # keepdims: divide each row by its own sum


def attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (..., n_q, n_k); K.T flips ALL axes
    scores = scores - scores.max(axis=-1, keepdims=True)  # each row its own max
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)  # each row sums to 1
    output = weights @ V  # (..., n_q, d_v): @ treats the leading axes as a batch
    return output, weights


def zero_temperature_attention(Q, K, V):
    scores = Q @ K.T  # (n_q, n_k); a positive scale does not change which key is on top
    top = scores == scores.max(axis=-1, keepdims=True)  # the keys tied for the row's max
    weights = top / top.sum(axis=-1, keepdims=True)  # exp((s - s_max)/T) -> 1 on ties, 0 else
    return weights @ V, weights


cat_at_temperature_10 = "fall"


# The order in which the lesson asks them (checks.catalogue()'s, lesson 00's list).
ASKED = ("softmax", "attention", "cat_at_temperature_10", "zero_temperature_attention",)
