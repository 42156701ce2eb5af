"""An exercise cannot be passed by calling the course helper that is its answer ready-made.

Each answer below delegates to the helper (adapting the arguments where the helper's signature
differs); the check must refuse it with the mistake id ``calls_helper`` and name the helper.
"""

import numpy as np
import pytest

import helpers
from helpers import blockwise as helpers_blockwise
from helpers import checks, masks, rope, scaling, training
from helpers.checks import policy
from helpers.pretrained import heads


def _blockwise(Q, K, V, block_size, *rest):
    return helpers.blockwise_attention(Q, K, V, block_size=block_size)


def _batched_masked(Q, K, V, lengths, causal):
    # Allowed: the padding and causal masks. Not allowed: attention with a mask, ready-made.
    mask = masks.padding_mask(lengths, K.shape[-2])[:, None, :]  # (b, 1, n_k)
    if causal:
        mask = mask & helpers.causal_mask(K.shape[-2])
    return helpers.scaled_dot_product_attention(Q, K, V, mask=mask)


DELEGATING = {
    "scale_for_entropy": lambda scores, target: scaling.entropy_scale(scores, target),
    "rope_rotate": lambda X, positions: rope.rotate(X, positions),
    "alibi_bias": lambda n, slopes: rope.alibi_bias(n, len(slopes)),
    "positional_encoding": lambda n, d: helpers.sinusoidal_positional_encoding(n, d),
    "head_slices": lambda M, h: helpers.split_heads(M, h),
    "softmax": lambda z, *rest: helpers.softmax(z),
    "attention": lambda Q, K, V: helpers.scaled_dot_product_attention(Q, K, V),
    "causal_mask": lambda n: helpers.causal_mask(n),
    "masked_attention": lambda Q, K, V, mask: helpers.scaled_dot_product_attention(
        Q, K, V, mask=mask
    ),
    "padding_mask": lambda lengths, n: masks.padding_mask(lengths, n),
    "batched_masked_attention": _batched_masked,
    "multi_head_attention": lambda X, W_Q, W_K, W_V, W_O: helpers.multi_head_attention(
        X, W_Q, W_K, W_V, W_O
    ),
    "score_matrix_bytes": lambda n, h, batch, dtype: helpers_blockwise.score_matrix_bytes(
        n, h, batch, dtype
    ),
    "blockwise_attention": _blockwise,
    "softmax_backward": lambda A, dA: training.softmax_backward(A, dA),
    "head_offset_score": lambda A, offset: heads.head_offset_score(A, offset),
    "attention_distance": lambda A: heads.attention_distance(A),
}


def test_every_exercise_with_a_ready_made_helper_is_covered_here():
    # Each exercise that declares the helper that is its answer (the two challenges' helpers
    # have other signatures: helpers.blockwise_attention returns no tiles, loss_and_grads takes
    # the parameters dict, so a delegating answer would fail anyway; they declare none).
    exercises = [e for e in checks.catalogue() if isinstance(e, checks.Exercise)]
    assert set(DELEGATING) == {e.name for e in exercises if e.ready_made}
    for exercise in exercises:
        if exercise.ready_made:
            policy.resolve(exercise.ready_made)  # raises if there is no such helper


@pytest.mark.parametrize("name", sorted(DELEGATING))
def test_calling_the_ready_made_helper_is_refused_and_named(name):
    exercise = getattr(checks, name)
    result = exercise.check(DELEGATING[name])
    assert result.passed is not True
    if result.mistake != f"{name}.calls_helper":
        # Only an answer whose adapted arguments fail before the helper runs may end otherwise;
        # none of these should.
        pytest.fail(f"{name}: {result.mistake}: {result.message}")
    assert "calls helpers." in result.message and "Write it yourself" in result.message
    assert "This one may use:" in result.message


def test_the_exercises_own_helpers_from_earlier_lessons_stay_allowed():
    # attention may use helpers.softmax (lesson 04's first exercise), just not the whole answer.
    def attention(Q, K, V):
        A = helpers.softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
        return A @ V, A

    result = checks.attention.check(attention)
    assert result.passed is True, result.message
