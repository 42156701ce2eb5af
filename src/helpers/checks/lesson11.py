"""Lesson 11 exercises: position inside the dot product.

* ``rope_rotate(X, positions)`` ★★: rotate each row of ``X (..., n, d)`` by RoPE at its
  position, in the rotate-half convention (dimension i paired with i + d/2, pair i turned by
  ``position * 10000 ** (-2 i / d)``).
* ``alibi_bias(n, slopes)`` ★: ALiBi's ``(h, n, n)`` bias, ``-m_h (i - j)`` for keys
  ``j <= i`` and ``-inf`` above the diagonal.
* ``rope_decode_step(q, k, v, K_cache, V_cache, position)`` ★★★ (the challenge): one step of
  generation with RoPE and a KV cache: the new key is cached already rotated.

Every check runs on fresh random inputs; the references are written out here, apart from
:mod:`helpers.rope`, so that a check and the helper it teaches are not one piece of code.
"""

from __future__ import annotations

import numpy as np

from .answers import lesson11 as answers
from .compare import as_result_array, compare, raw_softmax
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction

# ----------------------------------------------------------------------------------------------
# rope_rotate(X, positions)


def _angles(positions, d, base=10000.0, exponent=2.0):
    """``(..., n, d / 2)``: position times each pair's frequency ``base ** (-exponent i / d)``."""
    i = np.arange(d // 2)
    return np.asarray(positions, dtype=float)[..., None] * base ** (-exponent * i / d)


def _rotate_half(X, angles):
    half = X.shape[-1] // 2
    x1, x2 = X[..., :half], X[..., half:]
    cos, sin = np.cos(angles), np.sin(angles)
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def _rope_mistakes(X, positions, what):
    d = X.shape[-1]
    interleaved = np.empty_like(X)
    x1, x2 = X[..., 0::2], X[..., 1::2]
    a = _angles(positions, d)
    interleaved[..., 0::2] = x1 * np.cos(a) - x2 * np.sin(a)
    interleaved[..., 1::2] = x1 * np.sin(a) + x2 * np.cos(a)
    return {
        named(
            "interleaved",
            f"{what}: you paired dimension 2i with 2i + 1 (the RoFormer paper's interleaved "
            "layout). This exercise uses the rotate-half layout of GPT-NeoX and Llama: "
            "dimension i with i + d/2 (the first half against the second).",
        ): interleaved,
        named(
            "backwards",
            f"{what}: the sin terms have the wrong sign: you turned every pair by -angle. A "
            "turn by a maps (x1, x2) to (x1 cos a - x2 sin a, x1 sin a + x2 cos a).",
        ): _rotate_half(X, -a),
        named(
            "exponent_i",
            f"{what}: the frequencies are off: pair i turns by position * 10000^(-2i/d), with "
            "2i in the exponent, not i.",
        ): _rotate_half(X, _angles(positions, d, exponent=1.0)),
        named(
            "one_frequency",
            f"{what}: every pair turns by the same angle; pair i has its own frequency, "
            "10000^(-2i/d), from 1 (pair 0) down to nearly 1/10000.",
        ): _rotate_half(X, np.asarray(positions, dtype=float)[..., None] * np.ones(d // 2)),
        named(
            "positions_from_one",
            f"{what}: your rows are rotated as if at positions + 1; use the positions given "
            "(the first token of a sequence is at position 0 and is not rotated).",
        ): _rotate_half(X, _angles(np.asarray(positions) + 1, d)),
    }


def _grade_rope_rotate(call):
    rng = fresh_rng()
    n, half = int(rng.integers(4, 10)), int(rng.integers(2, 9))
    cases = [
        ("one sequence, positions 0 .. n-1", (n, 2 * half), np.arange(n), np.float64),
        ("heads (h, n, d), positions from 7 on (a later chunk)",
         (int(rng.integers(2, 5)), n, 2 * half + 2), 7 + np.arange(n), np.float64),
        ("float32, positions out of order", (n + 1, 2 * half), rng.permutation(n + 1) * 3,
         np.float32),
        ("d = 64, long positions", (3, 64), np.array([0, 500, 4000]), np.float64),
    ]  # fmt: skip
    for label, shape, positions, dtype in cases:
        X = rng.standard_normal(shape).astype(dtype)
        what = f"rope_rotate(X of shape {shape}, positions {list(positions)}) on {label}"
        expected = answers.rope_rotate(X.astype(float), positions)
        got = as_result_array(call(X.copy(), positions.copy()), what, expected.shape)
        if np.allclose(got, X, atol=1e-6):
            raise Mistake(f"{what} returned X unchanged: every row but position 0's must turn.",
                          "unchanged")  # fmt: skip
        compare(got, expected, _rope_mistakes(X.astype(float), positions, what),
                f"{what}: the rows are not X turned pair by pair (dimension i with i + d/2) by "
                "position * 10000^(-2i/d).", name="rotated X")  # fmt: skip
    return (
        "your rotation matches on fresh random vectors: one sequence, heads at later "
        "positions, float32 with positions in any order, and d = 64 far along: pairs (i, i + "
        "d/2), each turned by position * 10000^(-2i/d)."
    )


rope_rotate = Exercise(
    name="rope_rotate",
    allowed=(),  # NumPy only: helpers.rope.rotate is the answer
    ready_made="helpers.rope.rotate",
    signature="rope_rotate(X, positions)",
    grade=_grade_rope_rotate,
    reference=answers.rope_rotate,
    stars=2,
    title="rotate queries or keys by their positions (rotate-half RoPE)",
    hints=[
        "Split the last axis in two halves, x1 = X[..., :d//2] and x2 = X[..., d//2:]: "
        "dimension i and dimension i + d/2 form pair i, a point in a plane.",
        "Pair i turns by angle = position * 10000 ** (-2 * i / d), i = 0 .. d/2 - 1: one "
        "angle per row and pair, shape (..., n, d/2), e.g. positions[:, None] * freq[None, :].",
        "A turn by angle a: (x1 cos a - x2 sin a, x1 sin a + x2 cos a). Return "
        "np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).",
    ],
)


# ----------------------------------------------------------------------------------------------
# alibi_bias(n, slopes)


def _alibi_mistakes(n, slopes, what):
    slopes = np.asarray(slopes, dtype=float)
    distance = np.arange(n)[:, None] - np.arange(n)[None, :]
    linear = -slopes[:, None, None] * distance
    return {
        named(
            "plus_sign",
            f"{what}: your bias grows with distance; ALiBi *lowers* the score of a key by "
            "m_h for every step back: -m_h (i - j), never positive.",
        ): np.where(distance >= 0, -linear, -np.inf),
        named(
            "no_mask",
            f"{what}: the keys after the query (j > i) get finite numbers; ALiBi is used with "
            "the causal mask: -inf there.",
        ): linear,
        named(
            "zero_above",
            f"{what}: the keys after the query (j > i) get 0, so the softmax would let the "
            "query see the future; they must be -inf.",
        ): np.where(distance >= 0, linear, 0.0),
        named(
            "heads_last",
            f"{what}: the heads are on the last axis, (n, n, h); they come first: (h, n, n), "
            "one (n, n) map per head.",
        ): np.moveaxis(np.where(distance >= 0, linear, -np.inf), 0, -1),
        named(
            "masks_diagonal",
            f"{what}: the diagonal is -inf: a query may read its own key (distance 0, bias 0).",
        ): np.where(distance > 0, linear, -np.inf),
    }


def _grade_alibi_bias(call):
    rng = fresh_rng()
    h = int(rng.integers(2, 6))
    cases = [
        ("random slopes", int(rng.integers(3, 9)), rng.uniform(0.05, 1.0, h)),
        ("the paper's slopes for 8 heads", int(rng.integers(4, 8)), 2.0 ** -np.arange(1, 9)),
        ("one head, n = 1", 1, np.array([0.5])),
    ]
    for label, n, slopes in cases:
        what = f"alibi_bias({n}, slopes of {len(slopes)} heads) with {label}"
        expected = answers.alibi_bias(n, slopes)
        value = call(n, slopes.copy())
        if np.shape(value) == (n, n, len(slopes)) and n != len(slopes) and n > 1:
            raise Mistake(f"{what} has shape (n, n, h); the heads come first: (h, n, n), "
                          "one (n, n) map per head.", "heads_last")  # fmt: skip
        got = as_result_array(value, what, expected.shape)
        compare(got, expected, _alibi_mistakes(n, slopes, what),
                f"{what}: entry [h, i, j] must be -slopes[h] * (i - j) for j <= i and -inf "
                "for j > i.", name="bias")  # fmt: skip
    return (
        "your bias matches for random slopes, the paper's eight and a single position: "
        "-m_h (i - j) on and below the diagonal, -inf above it, one map per head."
    )


alibi_bias = Exercise(
    name="alibi_bias",
    allowed=(),  # NumPy only: helpers.rope.alibi_bias is the answer
    ready_made="helpers.rope.alibi_bias",
    signature="alibi_bias(n, slopes)",
    grade=_grade_alibi_bias,
    reference=answers.alibi_bias,
    stars=1,
    title="ALiBi's bias: a penalty proportional to distance, one slope per head",
    hints=[
        "Query i and key j are i - j positions apart. A (n, n) table of i - j: "
        "np.arange(n)[:, None] - np.arange(n)[None, :].",
        "Each head h multiplies that distance by -slopes[h]: broadcast slopes to (h, 1, 1).",
        "np.where(distance >= 0, -slopes[:, None, None] * distance, -np.inf)",
    ],
)


# ----------------------------------------------------------------------------------------------
# rope_decode_step(q, k, v, K_cache, V_cache, position): the challenge


def _decode_variant(q, k, v, K_cache, V_cache, position, *, rotate_q=True, rotate_k=True,
                    rerotate=False, scale=True, self_key=True):  # fmt: skip
    d = q.shape[-1]
    q_rot = answers.rope_rotate(q[:, None], [position])[:, 0] if rotate_q else q
    k_rot = answers.rope_rotate(k[:, None], [position])[:, 0] if rotate_k else k
    cache = answers.rope_rotate(K_cache, [position] * K_cache.shape[1]) if rerotate else K_cache
    K_new = np.concatenate([cache, k_rot[:, None]], axis=1)
    V_new = np.concatenate([V_cache, v[:, None]], axis=1)
    keys, values = (K_new, V_new) if self_key else (cache, V_cache)
    scores = np.einsum("hd,htd->ht", q_rot, keys) / (np.sqrt(d) if scale else 1.0)
    return np.einsum("ht,htd->hd", raw_softmax(scores), values)


def _grade_rope_decode_step(call):
    rng = fresh_rng()
    for label, dtype in (("float64", np.float64), ("float32", np.float32)):
        h, t, d = int(rng.integers(1, 4)), int(rng.integers(2, 9)), 2 * int(rng.integers(2, 6))
        # A whole sequence, unrotated; its first t keys rotated at their positions: the cache
        # (tests/test_checks_lesson11.py checks the reference against a full forward pass).
        Q, K, V = (rng.standard_normal((h, t + 1, d)) for _ in range(3))
        K_cache = answers.rope_rotate(K[:, :t], np.arange(t))
        q, k, v = Q[:, t], K[:, t], V[:, t]
        args = [a.astype(dtype) for a in (q, k, v, K_cache, V[:, :t])]
        what = (f"rope_decode_step(q {q.shape}, k, v, K_cache {K_cache.shape}, V_cache, "
                f"position={t}) in {label}")  # fmt: skip
        exact = [a.astype(float) for a in args]
        value = call(*[a.copy() for a in args], t)  # first: a stub or a slip shows as such
        out, K_new, V_new = answers.rope_decode_step(*exact, t)
        if not isinstance(value, tuple) or len(value) != 3:
            raise Mistake(f"{what} must return three things, (output, K_cache, V_cache): the "
                          "new token's output (h, d) and both caches with the new token "
                          "appended.", "not_three")  # fmt: skip
        got_K = as_result_array(value[1], what, K_new.shape, part="new K_cache")
        got_V = as_result_array(value[2], what, V_new.shape, part="new V_cache")
        if not np.allclose(got_K[:, :t], exact[3], atol=1e-5):
            raise Mistake(f"{what}: the keys already in the cache changed. They were rotated "
                          "at their own positions when they were cached; rotating them again "
                          "would make each score depend on that key's own position, not on "
                          "the distance to the new token.", "rerotates_cache")  # fmt: skip
        compare(got_K[:, t], K_new[:, t], {
            named("key_not_rotated", f"{what}: the new key is cached unrotated; turn it at its "
                  "position first (the cache holds rotated keys)."): exact[1],
        }, f"{what}: the new key in the cache is not k rotated at position {t}.",
            name="new key")  # fmt: skip
        compare(got_V, V_new, {}, f"{what}: the new V_cache must be V_cache with v appended "
                "(values are never rotated).", name="V_cache")  # fmt: skip
        got = as_result_array(value[0], what, out.shape, part="output")
        compare(got, out, {
            named("query_not_rotated", f"{what}: the query is not rotated; turn it at its "
                  f"position ({t}) like the key, so that each score depends on the distance."):
                _decode_variant(*exact, t, rotate_q=False),
            named("unscaled", f"{what}: the scores are not divided by sqrt(d)."):
                _decode_variant(*exact, t, scale=False),
            named("without_itself", f"{what}: the new query must attend to its own key too "
                  "(append first, then attend to the whole cache)."):
                _decode_variant(*exact, t, self_key=False),
        }, f"{what}: the output is not the softmax of the rotated query against every cached "
            "key, itself included, times the values.", name="output")  # fmt: skip
    return (
        "your step matches a full forward pass at the last position (float32 too): the new "
        "query and key turned at their position, the key cached rotated, the old keys "
        "untouched."
    )


rope_decode_step = Exercise(
    name="rope_decode_step",
    allowed=("helpers.rope.rotate", "helpers.softmax"),  # the rotation, not the step
    signature="rope_decode_step(q, k, v, K_cache, V_cache, position)",
    grade=_grade_rope_decode_step,
    reference=answers.rope_decode_step,
    stars=3,
    title="challenge: one decoding step with RoPE and a KV cache",
    hints=[
        "The cache holds every earlier key already rotated at its own position. The new token "
        "is at `position`: rotate its query and its key there (helpers.rope.rotate takes "
        "X of shape (h, 1, d) and positions [position]).",
        "Append the rotated key to K_cache and v to V_cache along axis 1 (np.concatenate with "
        "k_rot[:, None]). Never rotate the cached keys again.",
        "scores = np.einsum('hd,htd->ht', q_rot, K_new) / np.sqrt(d); weights = softmax(scores); "
        "output = np.einsum('ht,htd->hd', weights, V_new); return output, K_new, V_new",
    ],
)


# ----------------------------------------------------------------------------------------------
# Predictions

shift_prediction = Prediction(
    name="shift_prediction",
    question=(
        "Put three tokens in front of a sentence. With which ways of giving positions do the "
        "scores between the sentence's own words stay exactly the same: 'only RoPE', 'RoPE "
        "and ALiBi', 'RoPE, ALiBi and none', or 'all four' (sinusoidal encodings added to the "
        "embeddings too)?"
    ),
    answer=answers.shift_prediction,
    choices=["only RoPE", "RoPE and ALiBi", "RoPE, ALiBi and none", "all four"],
    wrong={
        "only RoPE": (
            "ALiBi's penalty depends on i - j only, and with no positions at all a score "
            "depends on the two tokens only: neither sees the shift."
        ),
        "RoPE and ALiBi": (
            "With no positions at all, a score is q . k of the two tokens' embeddings: nothing "
            "in it knows where they are, so nothing changes."
        ),
        "all four": (
            "An added encoding changes each word's vector, z = e + PE[position]; shifted, "
            "every word gets another PE and every score changes."
        ),
    },
    explanation=(
        "RoPE's scores depend on the distance m - n (the rotations cancel up to it), ALiBi adds "
        "-m_h (i - j), and without positions nothing depends on where a token is; so all three "
        "give the same scores between the sentence's words. The additive encoding does not: "
        "each word's vector changes with its absolute position. (The attention *weights* of "
        "every scheme change a little: the softmax now also spreads over the three new keys.)"
    ),
)

length_prediction = Prediction(
    name="length_prediction",
    question=(
        "Lesson 10's model, trained on 32 tokens with RoPE, reads 128 tokens with the copy "
        "placed after position 32. Its loss on the repeated tokens, 0.3 nats or so at 32 "
        "tokens, becomes: 'below 0.5', '0.5 to 2', or 'above 2' nats?"
    ),
    answer=answers.length_prediction,
    choices=["below 0.5", "0.5 to 2", "above 2"],
    wrong={
        "below 0.5": (
            "A RoPE score depends only on the two tokens and their distance, but at 128 tokens "
            "each query meets many more keys, some at distances it never saw, and together "
            "they take weight from the right key."
        ),
        "above 2": (
            "It degrades, but does not forget how to copy: the distance the previous-token head "
            "needs, 1, is one it saw millions of times (the table below)."
        ),
    },
    explanation=(
        "The table: the loss rises past the training length but stays well below a uniform "
        "guess; the previous-token head, which needs distance 1 only, survives; the induction "
        "heads put less weight on the right key: the many far keys, scored like ordinary near "
        "ones, dilute it (measured below)."
    ),
)
