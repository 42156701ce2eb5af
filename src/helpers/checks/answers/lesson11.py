"""Lesson 11's answers, generated from solutions/11_position_today.py by `make notebooks`
(tools/build_lessons.py): do not edit. Edit the lesson's solution regions and ### ANSWER lines."""

import numpy as np

import helpers
from helpers.rope import rotate


def rope_rotate(X, positions):
    d = X.shape[-1]
    angles = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    x1, x2 = X[..., : d // 2], X[..., d // 2 :]
    cos, sin = np.cos(angles), np.sin(angles)
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def alibi_bias(n, slopes):
    distance = np.arange(n)[:, None] - np.arange(n)[None, :]  # (n, n): i - j
    return np.where(distance >= 0, -np.asarray(slopes)[:, None, None] * distance, -np.inf)


def rope_decode_step(q, k, v, K_cache, V_cache, position):
    q_rot = rotate(q[:, None, :], [position])[:, 0]  # (h, d): turned at its own position
    k_rot = rotate(k[:, None, :], [position])[:, 0]
    K_new = np.concatenate([K_cache, k_rot[:, None, :]], axis=1)  # cached rotated, once
    V_new = np.concatenate([V_cache, v[:, None, :]], axis=1)
    scores = np.einsum("hd,htd->ht", q_rot, K_new) / np.sqrt(q.shape[-1])
    return np.einsum("ht,htd->hd", helpers.softmax(scores), V_new), K_new, V_new


shift_prediction = "RoPE, ALiBi and none"
length_prediction = "0.5 to 2"


# The order in which the lesson asks them (checks.catalogue()'s, lesson 00's list).
ASKED = ("shift_prediction", "rope_rotate", "alibi_bias", "length_prediction", "rope_decode_step",)
