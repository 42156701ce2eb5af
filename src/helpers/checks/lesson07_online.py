"""Lesson 07 exercise: ``online_softmax_update(m, l, acc, scores, V_block)`` (★★), one step of
the online softmax (FlashAttention's running max ``m``, sum ``l`` and weighted sum ``acc``)."""

from __future__ import annotations

import numpy as np

from .answers import lesson07 as answers
from .compare import as_result_array, compare, unpack_returns
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named

# ----------------------------------------------------------------------------------------------
# online_softmax_update(m, l, acc, scores, V_block)


def _update_wrong(m, l, acc, scores, V_block, how):
    """One update step done wrong in the way ``how`` names (the catalogue of mistakes)."""
    with np.errstate(all="ignore"):
        blockmax = scores.max(axis=-1)
        m_new = np.maximum(m, blockmax)
        if how == "nan_on_masked_row":  # right, but without the -inf guard
            c, p = np.exp(m - m_new), np.exp(scores - m_new[:, None])
            return m_new, l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        shift = np.where(np.isneginf(m_new), 0.0, m_new)
        c, p = np.exp(m - shift), np.exp(scores - shift[:, None])
        new_l, new_acc = l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        if how == "forgot_rescale_l":
            return m_new, l + p.sum(-1), new_acc
        if how == "forgot_rescale_acc":
            return m_new, new_l, acc + p @ V_block
        if how == "forgot_rescale_both":
            return m_new, l + p.sum(-1), acc + p @ V_block
        if how == "inverted_correction":
            c = np.exp(shift - m)
            return m_new, l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        if how == "block_max":
            c, p = np.exp(m - blockmax), np.exp(scores - blockmax[:, None])
            return blockmax, l * c + p.sum(-1), acc * c[:, None] + p @ V_block
        if how == "m_not_updated":
            return m, new_l, new_acc
        if how == "exp_old_max":
            p = np.exp(scores - m[:, None])
            return m_new, l + p.sum(-1), acc + p @ V_block
        if how == "normalised_acc":
            return m_new, new_l, new_acc / new_l[:, None]
        if how == "no_max_subtracted":
            p = np.exp(scores)
            return m_new, l + p.sum(-1), acc + p @ V_block
    raise ValueError(how)


_UPDATE_MISTAKES = {
    "nan_on_masked_row": "rows whose keys are all masked (-inf) so far come back as NaN: with "
    "m = -inf and m_new = -inf, exp(m - m_new) is exp(-inf - (-inf)) = exp(NaN). Such a row "
    "must keep m = -inf, l = 0 and acc = 0: where m_new is still -inf, subtract 0 instead of "
    "m_new.",
    "forgot_rescale_l": "you rescale acc but not l: when a block raises a row's max, the l "
    "summed so far was computed with the old m and must be multiplied by exp(m_old - m_new) "
    "too, like acc.",
    "forgot_rescale_acc": "you rescale l but not acc: acc was summed with the old m, so when "
    "the max rises it must be multiplied by exp(m_old - m_new) too (one factor per row: "
    "correction[:, None]).",
    "forgot_rescale_both": "neither l nor acc is rescaled: both were summed with the old m; "
    "when a block raises a row's max, multiply both by exp(m_old - m_new) before adding the "
    "new block.",
    "inverted_correction": "your correction is exp(m_new - m_old), which is >= 1; it must "
    "shrink what was summed with the old, smaller max: exp(m_old - m_new) <= 1.",
    "block_max": "your m is this block's max, not the running max. m must be "
    "max(m, scores.max(axis=-1)): with only the block's max, exp(m_old - m_block) grows "
    "without bound when an earlier block had the larger scores (it overflows to inf above "
    "709).",
    "m_not_updated": "you return the old m: l and acc are now sums of exp(s - m_new), so the "
    "m you return must be m_new, or the next step rescales by the wrong amount.",
    "exp_old_max": "you take exp(scores - m) with the old m and never rescale: on the first "
    "block m is -inf, so exp(scores + inf) is inf. Compute m_new first, then exp(scores - "
    "m_new), and rescale l and acc by exp(m_old - m_new).",
    "normalised_acc": "your acc is divided by l: acc must stay the un-normalised sum of "
    "exp(s - m) @ V, so later blocks can be added to it; divide by l only once, at the very "
    "end (acc / l[:, None]).",
    "no_max_subtracted": "you take exp(scores) without subtracting the max: the sums are right "
    "only while the scores are small, and exp overflows to inf above 709. Subtract m_new "
    "inside the exp and rescale l and acc by exp(m_old - m_new).",
}


def _close3(got, want) -> bool:
    return all(
        np.shape(g) == np.shape(w)
        and np.allclose(np.asarray(g, float), w, rtol=1e-4, atol=1e-5, equal_nan=True)
        for g, w in zip(got, want)
    )


def _unpack_state(value, what, n_q, d_v):
    """The learner's ``(m, l, acc)`` as float arrays of the right shapes, or a Mistake."""
    value = unpack_returns(
        value, what, ("m_new", "l", "acc"), wrong_count="not_a_triple", hint=" (the new state)"
    )
    parts = []
    for part, shape, value_part in zip(("m", "l", "acc"), ((n_q,), (n_q,), (n_q, d_v)), value):
        parts.append(as_result_array(value_part, what, shape, part=part))
    return tuple(parts)


def _state_case(rng, n_q, b, d_v):
    """A running state after some keys (finite m, l > 0) and a new block of scores.

    Half the rows get a new block with a larger max (so the state must be rescaled), half a
    smaller one (m stays), so every catalogued mistake changes the result.
    """
    old_scores = rng.normal(0, 1.5, (n_q, 5))
    m = old_scores.max(axis=-1)
    p_old = np.exp(old_scores - m[:, None])
    V_old = rng.standard_normal((5, d_v))
    l, acc = p_old.sum(-1), p_old @ V_old
    scores = rng.normal(0, 1.5, (n_q, b))
    up = np.arange(n_q) % 2 == 0
    scores[up] += (
        m[up, None] - scores[up].max(-1, keepdims=True) + rng.uniform(0.5, 2, (up.sum(), 1))
    )
    scores[~up] += (
        m[~up, None] - scores[~up].max(-1, keepdims=True) - rng.uniform(0.5, 2, ((~up).sum(), 1))
    )
    return m, l, acc, scores, rng.standard_normal((b, d_v))


def _grade_update(call):
    rng = fresh_rng()
    while True:  # distinct sizes, so that a misplaced axis shows in the shapes
        n_q, b, d_v = int(rng.integers(4, 9)), int(rng.integers(2, 7)), int(rng.integers(2, 7))
        if len({n_q, b, d_v}) == 3:
            break

    # 1. One step from a running state: the rescaling must be right.
    m, l, acc, scores, V_b = _state_case(rng, n_q, b, d_v)
    what = (
        f"online_softmax_update(m, l, acc, scores, V_block) from a running state (n_q={n_q}, "
        f"b={b}, d_v={d_v}; half the rows get a larger max)"
    )
    got = _unpack_state(call(m, l, acc, scores, V_b), what, n_q, d_v)
    want = answers.online_softmax_update(m, l, acc, scores, V_b)
    _compare_state(got, want, (m, l, acc, scores, V_b), what)

    # 2. The first block, from m = -inf, l = 0, acc = 0, with rows whose keys are all masked.
    scores = rng.normal(0, 2, (n_q, b))
    scores[0] = -np.inf  # row 0 sees none of these keys (a causal mask, a padded block)
    scores[1, : b // 2] = -np.inf  # row 1 sees some
    start = (np.full(n_q, -np.inf), np.zeros(n_q), np.zeros((n_q, d_v)))
    V_b = rng.standard_normal((b, d_v))
    what = (
        "online_softmax_update on the first block (m = -inf, l = 0, acc = 0; row 0's "
        "scores all -inf, masked)"
    )
    got = _unpack_state(call(*start, scores, V_b), what, n_q, d_v)
    _compare_state(
        got, answers.online_softmax_update(*start, scores, V_b), (*start, scores, V_b), what
    )

    # 3. A whole run over blocks of keys: acc / l is attention, even for large scores.
    for label, spread, dtype in (
        ("scores up to about 800", 400.0, np.float64),
        ("float32 inputs", 1.0, np.float32),
    ):
        n_k = int(rng.integers(7, 14))
        scores = (rng.standard_normal((n_q, n_k)) * spread).astype(dtype)
        V = rng.standard_normal((n_k, d_v)).astype(dtype)
        state = (np.full(n_q, -np.inf, dtype), np.zeros(n_q, dtype), np.zeros((n_q, d_v), dtype))
        cuts = [0, *sorted(rng.choice(np.arange(1, n_k), 2, replace=False)), n_k]
        what = (
            f"online_softmax_update over {len(cuts) - 1} blocks of keys {cuts} "
            f"(n_q={n_q}, n_k={n_k}, {label})"
        )
        for start_k, stop_k in zip(cuts[:-1], cuts[1:]):
            state = _unpack_state(
                call(*state, scores[:, start_k:stop_k], V[start_k:stop_k]), what, n_q, d_v
            )
        s = scores.astype(float)
        weights = np.exp(s - s.max(-1, keepdims=True))
        expected = weights / weights.sum(-1, keepdims=True) @ V.astype(float)
        with np.errstate(all="ignore"):
            output = state[2] / state[1][:, None]
        compare(
            output,
            expected,
            {},
            f"{what}: the final acc / l[:, None] is not softmax(scores) @ V.",
            name="output",
        )
    return (
        "your update rescales l and acc by exp(m_old - m_new), keeps masked rows at "
        "(-inf, 0, 0), and acc / l after the last block equals softmax(scores) @ V, for "
        "scores up to about 800 and in float32, on fresh sizes and block cuts."
    )


def _compare_state(got, want, inputs, what):
    if _close3(got, want):
        return
    for how, message in _UPDATE_MISTAKES.items():
        wrong = _update_wrong(*inputs, how)
        if _close3(want, wrong):  # this mistake makes no difference on this case
            continue
        if _close3(got, wrong):
            raise Mistake(named(how, f"{what}: {message}"))
    if _close3((got[1], got[0], got[2]), want):
        raise Mistake(
            named(
                "swapped_m_l",
                f"{what}: you returned l, m, acc; return m first: `return m_new, l, acc`.",
            )
        )
    for part, g, w in zip(("m", "l", "acc"), got, want):
        compare(
            g, w, {}, f"{what}: your {part} is not what one online-softmax step gives.", name=part
        )


online_softmax_update = Exercise(
    name="online_softmax_update",
    allowed=(),  # NumPy only: helpers.blockwise folds blocks the same way
    signature="online_softmax_update(m, l, acc, scores, V_block)",
    grade=_grade_update,
    reference=answers.online_softmax_update,
    hints=[
        "Three steps per block: the new running max m_new (per row), the factor that corrects "
        "what was summed with the old max, then add this block's exponentials. All of it row "
        "by row: m and l are (n_q,), scores (n_q, b).",
        "m_new = np.maximum(m, scores.max(axis=-1)); correction = np.exp(m - m_new); "
        "p = np.exp(scores - m_new[:, None]). l and acc are both multiplied by the correction "
        "(acc with correction[:, None]) before this block's p.sum(axis=-1) and p @ V_block are "
        "added.",
        "Where m_new is still -inf (a row whose keys are all masked), subtract 0 instead: "
        "shift = np.where(np.isneginf(m_new), 0.0, m_new); correction = np.exp(m - shift); "
        "p = np.exp(scores - shift[:, None]); return m_new, l * correction + p.sum(-1), "
        "acc * correction[:, None] + p @ V_block",
    ],
    stars=2,
    title="one step of the online softmax: rescale the running max, sum and output",
)
