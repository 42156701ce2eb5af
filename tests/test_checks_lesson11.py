"""Lesson 11's checks accept every correct implementation and name each catalogued mistake."""

from __future__ import annotations

import numpy as np
import pytest

import helpers
from helpers import checks, rope
from helpers.checks import draws

# ------------------------------------------------------------------------------ rope_rotate


def rope_loops(X, positions):
    X = np.asarray(X, dtype=float)
    d = X.shape[-1]
    out = X.copy()
    for index in np.ndindex(*X.shape[:-1]):
        t = index[-1]
        for i in range(d // 2):
            a = positions[t] * 10000.0 ** (-2 * i / d)
            x1, x2 = X[index][i], X[index][i + d // 2]
            out[index][i] = x1 * np.cos(a) - x2 * np.sin(a)
            out[index][i + d // 2] = x1 * np.sin(a) + x2 * np.cos(a)
    return out


def rope_complex(X, positions):
    # pair i as one complex number x_i + i x_{i + d/2}, turned by multiplying with e^{i a}
    d = X.shape[-1]
    z = X[..., : d // 2] + 1j * X[..., d // 2 :]
    angles = np.outer(positions, 1.0 / 10000 ** (np.arange(d // 2) * 2 / d))
    turned = z * np.exp(1j * angles)
    return np.concatenate([turned.real, turned.imag], axis=-1)


def rope_matrix(X, positions):
    # each row times its own block rotation matrix (as lesson 01's M_k), in float32
    X = np.asarray(X, dtype=np.float32)
    n, d = X.shape[-2], X.shape[-1]
    out = np.empty_like(X)
    for t in range(n):
        R = np.zeros((d, d), dtype=np.float32)
        for i in range(d // 2):
            a = positions[t] / 10000 ** (2 * i / d)
            j = i + d // 2
            R[i, i], R[i, j], R[j, i], R[j, j] = np.cos(a), np.sin(a), -np.sin(a), np.cos(a)
        out[..., t, :] = X[..., t, :] @ R
    return out


def rope_rotate_half_trick(X, positions):
    d = X.shape[-1]
    angles = np.asarray(positions)[:, None] * np.power(10000.0, -np.arange(0, d, 2) / d)
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1)
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1)
    rotated_half = np.concatenate([-X[..., d // 2 :], X[..., : d // 2]], axis=-1)
    return X * cos + rotated_half * sin  # the Hugging Face form


def _angles(positions, d, exponent=2.0):
    return np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (
        -exponent * np.arange(d // 2) / d
    )


def _turn_halves(X, angles):
    X = np.asarray(X, dtype=float)
    d = X.shape[-1]
    x1, x2 = X[..., : d // 2], X[..., d // 2 :]
    return np.concatenate(
        [x1 * np.cos(angles) - x2 * np.sin(angles), x1 * np.sin(angles) + x2 * np.cos(angles)], -1
    )


def _rope_wrong(**kw):
    def answer(X, positions):
        return _turn_halves(np.asarray(X, float), _angles(positions, X.shape[-1], **kw))

    return answer


def rope_interleaved(X, positions):
    X = np.asarray(X, dtype=float)
    a = _angles(positions, X.shape[-1])
    out = np.empty_like(X)
    out[..., 0::2] = X[..., 0::2] * np.cos(a) - X[..., 1::2] * np.sin(a)
    out[..., 1::2] = X[..., 0::2] * np.sin(a) + X[..., 1::2] * np.cos(a)
    return out


def rope_backwards(X, positions):
    return _turn_halves(np.asarray(X, float), -_angles(positions, X.shape[-1]))


def rope_one_frequency(X, positions):
    d = X.shape[-1]
    return _turn_halves(np.asarray(X, float), np.outer(positions, np.ones(d // 2)))


def rope_from_one(X, positions):
    return _turn_halves(np.asarray(X, float), _angles(np.asarray(positions) + 1, X.shape[-1]))


# ------------------------------------------------------------------------------- alibi_bias


def alibi_loops(n, slopes):
    out = np.full((len(slopes), n, n), -np.inf)
    for h, m in enumerate(slopes):
        for i in range(n):
            for j in range(i + 1):
                out[h, i, j] = -m * (i - j)
    return out


def alibi_tril(n, slopes):
    distance = np.tril(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
    bias = -np.asarray(slopes, dtype=np.float32)[:, None, None] * distance
    bias[:, ~np.tril(np.ones((n, n), dtype=bool))] = -np.inf
    return bias


def alibi_einsum(n, slopes):
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    bias = -np.einsum("h,ij->hij", np.asarray(slopes, float), (i - j).astype(float))
    return np.where(j <= i, bias, -np.inf)


def alibi_plus(n, slopes):
    return -alibi_loops(n, slopes) * np.where(np.isinf(alibi_loops(n, slopes)), -1, 1)


def alibi_no_mask(n, slopes):
    d = np.subtract.outer(np.arange(n), np.arange(n))
    return -np.asarray(slopes)[:, None, None] * d


def alibi_zero_above(n, slopes):
    return np.where(np.isinf(alibi_loops(n, slopes)), 0.0, alibi_loops(n, slopes))


def alibi_masks_diagonal(n, slopes):
    out = alibi_loops(n, slopes)
    out[:, np.arange(n), np.arange(n)] = -np.inf
    return out


def alibi_heads_last(n, slopes):
    return np.moveaxis(alibi_loops(n, slopes), 0, -1)


# ------------------------------------------------------------------------- rope_decode_step


def decode_with_helpers(q, k, v, K_cache, V_cache, position):
    q_rot = rope.rotate(q[:, None], [position])[:, 0]
    k_rot = rope.rotate(k[:, None], [position])[:, 0]
    K_new = np.concatenate([K_cache, k_rot[:, None]], axis=1)
    V_new = np.concatenate([V_cache, v[:, None]], axis=1)
    scores = np.einsum("hd,htd->ht", q_rot, K_new) / np.sqrt(q.shape[-1])
    return np.einsum("ht,htd->hd", helpers.softmax(scores), V_new), K_new, V_new


def decode_loops(q, k, v, K_cache, V_cache, position):
    h, d = q.shape
    q_rot, k_rot = (
        rope_loops(q[:, None], [position])[:, 0],
        rope_loops(k[:, None], [position])[:, 0],
    )
    K_new = np.concatenate([K_cache, k_rot[:, None]], axis=1)
    V_new = np.concatenate([V_cache, v[:, None]], axis=1)
    out = np.zeros((h, d))
    for head in range(h):
        s = [q_rot[head] @ K_new[head, t] / np.sqrt(d) for t in range(K_new.shape[1])]
        w = np.exp(np.array(s) - max(s))
        w /= w.sum()
        out[head] = w @ V_new[head]
    return out, K_new, V_new


def decode_float32(q, k, v, K_cache, V_cache, position):
    q, k, v, K_cache, V_cache = (
        np.asarray(a, dtype=np.float32) for a in (q, k, v, K_cache, V_cache)
    )
    q_rot = rope_complex(q[:, None], [position])[:, 0].astype(np.float32)
    k_rot = rope_complex(k[:, None], [position])[:, 0].astype(np.float32)
    K_new = np.concatenate([K_cache, k_rot[:, None]], axis=1)
    V_new = np.concatenate([V_cache, v[:, None]], axis=1)
    scores = (K_new @ q_rot[:, :, None])[..., 0] / np.float32(np.sqrt(q.shape[-1]))
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return (w[:, None] @ V_new)[:, 0], K_new, V_new


def _decode_variant(
    q,
    k,
    v,
    K_cache,
    V_cache,
    position,
    rotate_q=True,
    rotate_k=True,
    rerotate=False,
    scale=True,
    self_key=True,
):
    q_rot = rope.rotate(q[:, None], [position])[:, 0] if rotate_q else q
    k_rot = rope.rotate(k[:, None], [position])[:, 0] if rotate_k else k
    cache = rope.rotate(K_cache, [position] * K_cache.shape[1]) if rerotate else K_cache
    K_new = np.concatenate([cache, k_rot[:, None]], axis=1)
    V_new = np.concatenate([V_cache, v[:, None]], axis=1)
    keys, values = (K_new, V_new) if self_key else (cache, V_cache)
    scores = np.einsum("hd,htd->ht", q_rot, keys) / (np.sqrt(q.shape[-1]) if scale else 1.0)
    return np.einsum("ht,htd->hd", helpers.softmax(scores), values)


def _decode_wrong(**kw):
    def answer(q, k, v, K_cache, V_cache, position):
        out = _decode_variant(q, k, v, K_cache, V_cache, position, **kw)
        rot = rope.rotate(k[:, None], [position])[:, 0] if kw.get("rotate_k", True) else k
        cache = K_cache
        if kw.get("rerotate"):
            cache = rope.rotate(K_cache, [position] * K_cache.shape[1])
        return (
            out,
            np.concatenate([cache, rot[:, None]], 1),
            np.concatenate([V_cache, v[:, None]], 1),
        )

    return answer


def decode_no_tuple(q, k, v, K_cache, V_cache, position):
    return decode_with_helpers(q, k, v, K_cache, V_cache, position)[0]


SWEEP = {
    "rope_rotate": {
        "correct": [rope_loops, rope_complex, rope_matrix, rope_rotate_half_trick],
        "mistakes": {
            "interleaved": rope_interleaved,
            "backwards": rope_backwards,
            "exponent_i": _rope_wrong(exponent=1.0),
            "one_frequency": rope_one_frequency,
            "positions_from_one": rope_from_one,
            "unchanged": lambda X, positions: X,
        },
    },
    "alibi_bias": {
        "correct": [alibi_loops, alibi_tril, alibi_einsum],
        "mistakes": {
            "plus_sign": alibi_plus,
            "no_mask": alibi_no_mask,
            "zero_above": alibi_zero_above,
            "masks_diagonal": alibi_masks_diagonal,
            "heads_last": alibi_heads_last,
        },
    },
    "rope_decode_step": {
        "correct": [decode_with_helpers, decode_loops, decode_float32],
        "mistakes": {
            "rerotates_cache": _decode_wrong(rerotate=True),
            "key_not_rotated": _decode_wrong(rotate_k=False),
            "query_not_rotated": _decode_wrong(rotate_q=False),
            "unscaled": _decode_wrong(scale=False),
            "without_itself": _decode_wrong(self_key=False),
            "not_three": decode_no_tuple,
        },
    },
}


@pytest.mark.parametrize("name", sorted(SWEEP))
def test_correct_answers_pass(name):
    for answer in SWEEP[name]["correct"]:
        result = getattr(checks, name).check(answer)
        assert result.passed is True, f"{answer.__name__}: {result}"


@pytest.mark.parametrize(
    "name, mistake", [(n, m) for n, table in SWEEP.items() for m in table["mistakes"]]
)
def test_each_mistake_is_named(name, mistake):
    result = getattr(checks, name).check(SWEEP[name]["mistakes"][mistake])
    assert result.passed is False and result.mistake == f"{name}.{mistake}", str(result)


def test_calling_the_helper_is_refused():
    result = checks.rope_rotate.check(lambda X, positions: rope.rotate(X, positions))
    assert result.passed is False and "helpers.rope.rotate" in result.message
    result = checks.alibi_bias.check(lambda n, slopes: rope.alibi_bias(n, len(slopes)))
    assert result.passed is False


def test_the_references_agree_with_the_helpers_and_a_full_forward_pass():
    rng = np.random.default_rng(0)
    X, positions = rng.standard_normal((3, 5, 8)), np.array([0, 2, 3, 9, 40])
    np.testing.assert_allclose(
        checks.rope_rotate.reference(X, positions), rope.rotate(X, positions), atol=1e-12
    )
    slopes = rope.alibi_slopes(8)
    np.testing.assert_array_equal(checks.alibi_bias.reference(6, slopes), rope.alibi_bias(6, 8))
    # the decode step's output is the last row of causal RoPE attention over the whole sequence
    h, n, d = 2, 7, 6
    Q, K, V = (rng.standard_normal((h, n, d)) for _ in range(3))
    Qr, Kr = rope.rotate(Q), rope.rotate(K)
    scores = Qr @ np.swapaxes(Kr, -1, -2) / np.sqrt(d)
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    full = helpers.softmax(scores) @ V
    out, K_new, _ = checks.rope_decode_step.reference(
        Q[:, -1], K[:, -1], V[:, -1], Kr[:, :-1], V[:, :-1], n - 1
    )
    np.testing.assert_allclose(out, full[:, -1], atol=1e-12)
    np.testing.assert_allclose(K_new, Kr, atol=1e-12)


def test_the_checks_draw_new_cases_each_time():
    with draws.seeded_draws(1):
        first = checks.rope_rotate.check(rope_loops)
    assert first.passed is True
