"""Lesson 05 exercises, continued: padding masks (``padding_mask``) and batched masked attention
(``batched_masked_attention``, padding and causal at once, for (b, n, d) inputs)."""

from __future__ import annotations

import numpy as np

from .answers import lesson05 as answers
from .compare import compare, raw_softmax
from .draws import fresh_rng
from .exercise import Exercise
from .lesson05 import as_mask, unpack_attention
from .mistakes import LearnerError, Mistake, named

# ----------------------------------------------------------------------------------------------
# padding_mask(lengths, n): boolean (b, n), True = a real token that may be attended.


def _padding_variants(lengths: np.ndarray, n: int) -> dict[str, np.ndarray]:
    j = np.arange(n)[None, :]
    L = lengths[:, None]
    return {
        "inverted": j >= L,
        "includes_first_pad": j <= L,
        "drops_last_token": j < L - 1,
        "left_padded": j >= n - L,
        "all_true": np.ones((len(lengths), n), bool),
        "one_length": np.broadcast_to(j < lengths[0], (len(lengths), n)),
    }


_PADDING_MISTAKES = {
    "inverted": "your mask is True on the padding and False on the real tokens: inverted. "
    "True = a real token that may be attended (the course's and F.scaled_dot_product_attention's "
    "convention; nn.MultiheadAttention's key_padding_mask uses True = padding).",
    "includes_first_pad": "each row has one True too many: position lengths[s] is the first "
    "padding position (positions are 0-based), so the real tokens are j < lengths[s], not "
    "j <= lengths[s].",
    "drops_last_token": "each row has one True too few: a sentence of length L holds positions "
    "0 .. L - 1, so True where j < L, not j < L - 1.",
    "left_padded": "your True entries sit at the end of each row: that is left padding. Here "
    "the sentences are padded on the right: the real tokens come first, positions 0 .. L - 1.",
    "all_true": "your mask is True everywhere: it ignores the lengths, so padding would be "
    "attended. Row s is True only for its first lengths[s] positions.",
    "one_length": "every row uses the first sentence's length; row s needs its own length "
    "lengths[s] (compare np.arange(n) with lengths[:, None]).",
}


def _grade_padding_mask(call):
    rng = fresh_rng()
    n = int(rng.integers(5, 10))
    b = int(rng.choice([m for m in range(3, 6) if m != n]))
    lengths = rng.integers(1, n + 1, size=b)
    lengths[0], lengths[-1] = n, max(1, n - 3)  # one full sentence, one clearly padded
    lengths = rng.permutation(lengths)
    if lengths[0] == n:  # keep sentence 0 padded, so "every row uses lengths[0]" shows
        lengths[[0, int(np.argmin(lengths))]] = lengths[[int(np.argmin(lengths)), 0]]
    cases = [
        (lengths, n),
        (np.array([n - 1]), n),  # one sentence
        (np.array([2, 0, n]), n),  # an empty sentence: a row of False
    ]
    for L, m in cases:
        what = f"padding_mask(lengths={L.tolist()}, n={m})"
        raw = call(L, m)
        got, is_bool = as_mask(raw, what, (len(L), m))
        expected = answers.padding_mask(L, m)
        if np.array_equal(got, expected):
            if not is_bool:
                raise Mistake(
                    f"{what} has the right pattern, but dtype {np.asarray(raw).dtype}: make it "
                    "boolean (np.arange(n) < ... already is). scaled_dot_product_attention "
                    "rejects a 0/1 mask, and ~mask on integers gives -1 and -2.",
                    "not_boolean",
                )
            continue
        for how, wrong in _padding_variants(L, m).items():
            if np.array_equal(got, wrong):
                raise Mistake(f"{what}: {_PADDING_MISTAKES[how]}", how)
        s, j = (int(i) for i in np.argwhere(got != expected)[0])
        raise Mistake(
            f"{what} differs at row {s}, position {j}: it should be True exactly where "
            f"j < lengths[s] (here lengths[{s}] = {L[s]})."
        )
    return (
        "your mask is True exactly on each sentence's real tokens (j < lengths[s]), boolean, "
        "for a batch, a single sentence and an empty one."
    )


padding_mask = Exercise(
    name="padding_mask",
    ready_made="helpers.masks.padding_mask",
    allowed=(),
    signature="padding_mask(lengths, n)",
    grade=_grade_padding_mask,
    reference=answers.padding_mask,
    stars=1,
    title="the boolean padding mask (b, n) of a batch of sentences of different lengths",
    hints=[
        "Row s is sentence s; position j is real when j < lengths[s], padding otherwise. "
        "The result is boolean, shape (len(lengths), n).",
        "Compare every position with every length at once: np.arange(n) has shape (n,); "
        "lengths[:, None] has shape (b, 1); comparing them broadcasts to (b, n).",
        "return np.arange(n)[None, :] < np.asarray(lengths)[:, None]",
    ],
)


# ----------------------------------------------------------------------------------------------
# batched_masked_attention(Q, K, V, lengths, causal): padding + causal, for (b, n, d) inputs.


def _batched_variants(Q, K, lengths, causal) -> dict[str, np.ndarray]:
    b, n, d_k = Q.shape
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    real = np.arange(n)[None, :] < lengths[:, None]
    tril = np.tril(np.ones((n, n), dtype=bool))
    keys = real[:, None, :]
    causal_part = tril if causal else True

    def sm(mask, scores=s):
        return raw_softmax(np.where(mask, scores, -np.inf))

    variants = {
        "ignores_padding": sm(np.broadcast_to(causal_part, s.shape)),
        "masks_padded_queries": sm(keys & real[:, :, None] & causal_part),
        "padding_on_query_axis": sm(real[:, :, None] & causal_part),
        "times_zero": raw_softmax(s * (keys & causal_part)),
        "unscaled": sm(keys & causal_part, s * np.sqrt(d_k)),
        "includes_first_pad": sm(
            (np.arange(n)[None, :] <= lengths[:, None])[:, None, :] & causal_part
        ),  # fmt: skip
        "one_length": sm((np.arange(n) < lengths[0])[None, None, :] & causal_part),
    }
    right = sm(keys & causal_part)
    variants["zeroed_padded_rows"] = right * real[:, :, None]
    if causal:
        variants["ignores_causal"] = sm(keys)
    else:
        variants["always_causal"] = sm(keys & tril)
    return variants


_BATCHED_MISTAKES = {
    "ignores_padding": "padded keys get weight: every query must ignore the padding positions "
    "j >= lengths[s] of its own sentence. Combine the padding mask with the causal one.",
    "ignores_causal": "with causal=True, queries still see later keys: combine (&) the padding "
    "mask with the causal mask np.tril(...).",
    "always_causal": "with causal=False, your weights are causal anyway: apply the causal mask "
    "only when causal is True.",
    "masks_padded_queries": "the padded query rows are NaN: you blocked the padding on the query "
    "axis too, so a padded row has no key left and its softmax is 0/0. Block padded *keys* "
    "only (mask[:, None, :]): a padded query row then attends to its sentence's real tokens, "
    "and its output is simply ignored later.",
    "padding_on_query_axis": "your padding mask runs along the query axis (mask[:, :, None]): "
    "real queries still see padded keys, and padded query rows are blocked entirely (NaN). "
    "The padding belongs on the key axis: real[:, None, :], shape (b, 1, n).",
    "times_zero": "you multiplied blocked scores by 0 instead of setting them to -inf: "
    "exp(0) = 1, so padded and future keys still get weight.",
    "unscaled": "the scores are not scaled: divide Q K^T by sqrt(d_k).",
    "includes_first_pad": "each sentence also attends to its first padding position: real "
    "tokens are j < lengths[s], not j <= lengths[s].",
    "one_length": "every sentence uses the first sentence's length: each example s of the "
    "batch needs its own padding mask row, lengths[s].",
    "zeroed_padded_rows": "you zeroed the padded query rows. This exercise leaves them as "
    "computed: a padded query attends to its sentence's real tokens (a finite row, summing to "
    "1), and whatever reads the output later ignores those rows.",
}


def _grade_batched_masked_attention(call):
    rng = fresh_rng()
    b, n, d_k, d_v = 3, int(rng.integers(5, 8)), int(rng.integers(2, 5)), 5
    if n == d_v:
        n += 1
    lengths = np.array([max(2, n - 3), n, 1])[[0, *rng.permutation([1, 2])]]  # 0 is padded
    cases = [
        (False, b, n, d_k, lengths, np.float64),
        (True, b, n, d_k, lengths, np.float64),
        (True, b, n, d_k, lengths, np.float32),
        (True, 4, 4, 4, np.array([4, 2, 3, 1]), np.float64),  # b = n = d_k: K.T runs, wrongly
    ]
    for causal, bb, nn, dk, L, dtype in cases:
        Q, K = rng.normal(size=(bb, nn, dk)), rng.normal(size=(bb, nn, dk))
        V = rng.normal(size=(bb, nn, d_v))
        what = (
            f"batched_masked_attention(Q {Q.shape}, K, V {V.shape}, lengths={L.tolist()}, "
            f"causal={causal})"
        )
        try:
            value = call(Q.astype(dtype), K.astype(dtype), V.astype(dtype), L.copy(), causal)
        except LearnerError as error:
            if ".T" in str(error):
                raise Mistake(
                    f"{what}: K.T reverses every axis of a batch (b, n, d_k) -> (d_k, n, b); "
                    "swap only the last two: np.swapaxes(K, -1, -2).\n" + str(error),
                    "transpose_all_axes",
                ) from None
            raise
        out, w = unpack_attention(value, what, (bb, nn, d_v), (bb, nn, nn))
        ref_out, ref_w = answers.batched_masked_attention(Q, K, V, L, causal)
        known = {
            named(how, f"{what}: {_BATCHED_MISTAKES[how]}"): wrong
            for how, wrong in _batched_variants(Q, K, L, causal).items()
        }
        KT = K.T
        if Q.shape[0] == Q.shape[-1] == Q.shape[-2]:
            flipped = Q @ KT / np.sqrt(dk)
            mask = (np.arange(nn)[None, :] < L[:, None])[:, None, :] & np.tril(
                np.ones((nn, nn), bool)
            )
            known[
                named(
                    "transpose_all_axes",
                    f"{what}: K.T reverses every axis of a batch (b, n, d_k) -> (d_k, n, b); "
                    "swap only the last two: np.swapaxes(K, -1, -2).",
                )
            ] = raw_softmax(np.where(mask, flipped, -np.inf))
        compare(
            w,
            ref_w,
            known,
            f"{what}: your weights differ from softmax(Q K^T / sqrt(d_k)) with -inf where a key "
            "is padding (or, with causal=True, in the future).",
            "weights",
        )
        compare(out, ref_out, {}, f"{what}: your weights are right, but the output is not "
                "weights @ V.", "output")  # fmt: skip
    return (
        "your batched attention matches with and without the causal mask, in float32, and "
        "with b = n = d_k: padded keys get weight 0, and each padded query row attends to its "
        "sentence's real tokens."
    )


batched_masked_attention = Exercise(
    name="batched_masked_attention",
    ready_made="helpers.scaled_dot_product_attention",
    allowed=("helpers.softmax", "helpers.causal_mask", "helpers.padding_mask"),
    signature="batched_masked_attention(Q, K, V, lengths, causal)",
    grade=_grade_batched_masked_attention,
    reference=answers.batched_masked_attention,
    stars=2,
    title="a batch of padded sentences: padding mask and causal mask combined, (b, n, d)",
    hints=[
        "Two masks, both True = may attend: the padding mask of each sentence (which keys are "
        "real) and, if causal, the (n, n) causal mask. A key may be attended only if both say "
        "so: combine them with &.",
        "padding_mask(lengths, n) is (b, n); index it as [:, None, :] to get (b, 1, n), one "
        "row of allowed keys per sentence, the same for every query. & with the (n, n) causal "
        "mask broadcasts to (b, n, n). Then Q @ np.swapaxes(K, -1, -2) / sqrt(d_k), -inf where "
        "the mask is False, a stable softmax along axis=-1, weights @ V.",
        "real = np.arange(n)[None, :] < lengths[:, None]; mask = real[:, None, :]; "
        "if causal: mask = mask & np.tril(np.ones((n, n), dtype=bool)); "
        "scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k), -np.inf); "
        "then the stable softmax and return weights @ V, weights",
    ],
)
