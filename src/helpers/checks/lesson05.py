"""Lesson 05 exercises: the causal mask, and attention with a boolean mask (True = may attend)."""

from __future__ import annotations

import numpy as np

from ._core import (
    Exercise,
    Mistake,
    as_result_array,
    close,
    compare,
    fresh_rng,
    unpack_pair,
)

# ----------------------------------------------------------------------------------------------
# causal_mask(n)


def _reference_causal_mask(n):
    # True on and below the diagonal: query i may attend to keys 0, 1, ..., i.
    return np.tril(np.ones((n, n), dtype=bool))


def _as_mask(value, what: str, n: int) -> tuple[np.ndarray, bool]:
    """The learner's mask as a boolean (n, n) pattern, and whether it was boolean to begin with."""
    if value is None:
        raise Mistake(f"{what} returned None; did you forget the `return` statement?")
    if isinstance(value, tuple):
        raise Mistake(f"{what} returned a tuple of {len(value)}; it should return one array")
    arr = np.asarray(value)
    if arr.shape != (n, n):
        raise Mistake(f"{what} returned shape {arr.shape}, expected ({n}, {n})")
    if arr.dtype == bool:
        return arr, True
    if np.issubdtype(arr.dtype, np.floating) and _is_additive_mask(arr):
        raise Mistake(
            f"{what} returned a float mask of 0 and {np.min(arr):g}: that's the additive mask "
            "M that lesson 05 adds to the scores (0 = may attend, -inf = blocked). This "
            "exercise wants the boolean mask (True = may attend), e.g. "
            "np.tril(np.ones((n, n), dtype=bool))."
        )
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isin(arr, (0, 1))):
        raise Mistake(
            f"{what} returned an array of dtype {arr.dtype} holding values other than 0 and 1; "
            "a mask holds True (may attend) and False (blocked)"
        )
    return arr.astype(bool), False


def _is_additive_mask(arr: np.ndarray) -> bool:
    """True for a float array of 0 and -inf (or a large negative stand-in such as -1e9)."""
    with np.errstate(invalid="ignore"):
        blocked = arr != 0
        return bool(blocked.any()) and bool(np.all(arr[blocked] <= -1e4))


def _grade_causal_mask(call):
    rng = fresh_rng()
    for n in (int(rng.integers(3, 12)), 1, 64):
        what = f"causal_mask({n})"
        raw = call(n)
        got, is_bool = _as_mask(raw, what, n)
        expected = _reference_causal_mask(n)
        if np.array_equal(got, expected):
            if not is_bool:
                raise Mistake(
                    f"{what} has the right pattern, but dtype {np.asarray(raw).dtype}: make "
                    "it boolean (e.g. np.ones((n, n), dtype=bool)). With 0/1 numbers, "
                    "np.where(mask, ...) still works but ~mask gives -1 and -2 instead of "
                    "flipping True/False, and scaled_dot_product_attention rejects it."
                )
            continue
        ones = np.ones((n, n), dtype=bool)
        known = [
            (
                np.triu(ones),
                "upper triangle",
                f"{what} is True in the upper triangle: query i may see keys i, i+1, ..., the "
                "future. Rows are queries and columns are keys, so query i may attend to keys "
                "j <= i: the lower triangle (np.tril).",
            ),
            (
                np.tril(ones, k=-1),
                "diagonal left out",
                f"{what} leaves the diagonal out: each token may attend to itself (j <= i, not "
                "j < i). Without it row 0 has no key at all and its softmax is 0/0 = NaN.",
            ),
            (
                np.triu(ones, k=1),
                "inverted",
                f"{what} is inverted: it is True on the blocked future keys. In this course (and "
                "PyTorch's boolean attn_mask) True = may attend; flip it with ~ or use np.tril.",
            ),
            (
                ones,
                "all True",
                f"{what} is True everywhere, so nothing is blocked; the future keys (j > i) must "
                "be False.",
            ),
        ]
        for wrong, _, message in known:
            if np.array_equal(got, wrong):
                raise Mistake(message)
        first = tuple(int(i) for i in np.argwhere(got != expected)[0])
        raise Mistake(
            f"{what} differs from the causal mask at row {first[0]}, column {first[1]}: it "
            f"should be True exactly where column <= row (query i may attend to keys 0..i)."
        )
    return "your mask is True on and below the diagonal, boolean, for n = 1 up to n = 64."


causal_mask = Exercise(
    name="causal_mask",
    signature="causal_mask(n)",
    grade=_grade_causal_mask,
    reference=_reference_causal_mask,
    hints=[
        "Row i is query i, column j is key j. Query i may attend to key j when j <= i. Which "
        "triangle of the matrix is that, and does it include the diagonal?",
        "np.tril keeps the lower triangle and the diagonal of a matrix and zeroes the rest. "
        "Start from a boolean matrix of ones: np.ones((n, n), dtype=bool).",
        "return np.tril(np.ones((n, n), dtype=bool))",
    ],
)


# ----------------------------------------------------------------------------------------------
# masked_attention(Q, K, V, mask)


def _reference_masked_attention(Q, K, V, mask):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (n_q, n_k)
    scores = np.where(mask, scores, -np.inf)  # blocked keys get -inf BEFORE the softmax
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable: exp never overflows
    weights = np.exp(scores)  # exp(-inf) = 0: blocked keys get weight exactly 0
    weights = weights / weights.sum(axis=-1, keepdims=True)  # (n_q, n_k), rows sum to 1
    return weights @ V, weights  # (n_q, d_v), (n_q, n_k)


def _softmax_nan_ok(s, axis=-1):
    """Softmax that lets NaN through (to reproduce what a wrong answer returns)."""
    with np.errstate(all="ignore"):
        s = s - np.max(s, axis=axis, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=axis, keepdims=True)


def _variant_weights(Q, K, V, mask, how: str) -> np.ndarray:
    """The weights a particular wrong answer computes (NaN where it would produce NaN)."""
    d_k, d_v = Q.shape[-1], V.shape[-1]
    scale = {"no_scale": 1.0, "scale_dk": 1.0 / d_k, "scale_dv": 1.0 / np.sqrt(d_v)}.get(
        how, 1.0 / np.sqrt(d_k)
    )
    s = Q @ K.T * scale
    with np.errstate(all="ignore"):
        if how == "after_no_renorm":
            return _softmax_nan_ok(s) * mask
        if how == "after_renorm":  # right in exact arithmetic; underflows on huge scores
            w = _softmax_nan_ok(s) * mask
            return w / w.sum(axis=-1, keepdims=True)
        if how == "times_zero":
            return _softmax_nan_ok(s * mask)
        if how == "no_mask":
            return _softmax_nan_ok(s)
        if how == "inverted":
            return _softmax_nan_ok(np.where(mask, -np.inf, s))
        if how == "own_causal":
            return _softmax_nan_ok(np.where(np.tril(np.ones(mask.shape, bool)), s, -np.inf))
        if how == "axis0":
            return _softmax_nan_ok(np.where(mask, s, -np.inf), axis=0)
        return _softmax_nan_ok(np.where(mask, s, -np.inf))  # the scale variants


_WEIGHT_MISTAKES = {
    "after_no_renorm": "you masked after the softmax without renormalising: the surviving "
    "weights of each row no longer sum to 1. Either put -inf in the blocked scores before the "
    "softmax, or divide each masked row by its new sum.",
    "times_zero": "you 'masked' by multiplying the blocked scores by 0. A score of 0 is not "
    "'no attention': exp(0) = 1, so blocked keys still get weight. Put -inf there instead "
    "(np.where(mask, scores, -np.inf)), since exp(-inf) = 0.",
    "no_mask": "your weights ignore the mask: the blocked keys (mask False) get weight. Set "
    "their scores to -inf before the softmax.",
    "inverted": "you blocked the True positions and kept the False ones; True = may attend. Use "
    "np.where(mask, scores, -np.inf).",
    "own_causal": "you built your own causal mask instead of using the `mask` argument; the "
    "check passes a mask that is not causal. Use the mask you are given.",
    "axis0": "your softmax normalises each column (axis=0); each query's row must sum to 1, "
    "so normalise along the keys: axis=-1.",
    "no_scale": "the scores are not scaled: divide Q @ K.T by sqrt(d_k) before the softmax.",
    "scale_dk": "the scores are divided by d_k; the paper divides by sqrt(d_k).",
    "scale_dv": "the scores are divided by sqrt(d_v) (V's width); the scale uses d_k, the width "
    "of Q and K.",
}


def _finite_fill(Q, K, mask, got) -> float | None:
    """The finite value c that ``got`` looks filled with, softmax(where(mask, scores, c)).

    With a fill c, a blocked weight over an allowed weight in the same row is exp(c - s_a), so
    each non-zero blocked weight gives one estimate c = log(w_blocked / w_a) + s_a (s_a: the
    allowed key's score, taken at the row's largest allowed weight, the most precise). The
    estimates must agree, and the softmax with that c must reproduce ``got``. None otherwise.
    """
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    estimates = []
    with np.errstate(all="ignore"):
        for row, keep, w in zip(s, mask, got):
            if keep.all() or not keep.any():
                continue
            a = np.flatnonzero(keep)[np.argmax(w[keep])]
            blocked = w[~keep]
            blocked = blocked[blocked > 1e-307]  # subnormal below that: too few digits to trust
            if w[a] > 0:
                estimates.extend(np.log(blocked / w[a]) + row[a])
    if not estimates:
        return None
    fill = float(np.median(estimates))
    agree = np.allclose(estimates, fill, rtol=1e-3, atol=0.05)
    if agree and close(got, _softmax_nan_ok(np.where(mask, s, fill))):
        return fill
    return None


def _generic_weights_message(what: str, got: np.ndarray, mask: np.ndarray) -> str:
    """Say what is visibly wrong with a weight matrix that matches no catalogued mistake."""
    with np.errstate(all="ignore"):
        if np.all(np.isfinite(got)) and np.any(np.abs(got[~mask]) > 1e-9):
            return (
                f"{what}: some blocked keys (mask False) get non-zero weight; they must get "
                "exactly 0."
            )
        if np.all(np.isfinite(got)) and not np.allclose(got.sum(axis=-1), 1.0, atol=1e-5):
            return f"{what}: the rows of your weights do not sum to 1 (softmax over axis=-1)."
    return (
        f"{what}: your weights differ from softmax(Q @ K.T / sqrt(d_k)) with -inf where the "
        "mask is False."
    )


def _unpack(value, what: str, n_q: int, n_k: int, d_v: int) -> tuple[np.ndarray, np.ndarray]:
    """The learner's ``(output, weights)``, with the usual slips named."""
    out, weights = unpack_pair(value, what, (n_q, d_v), (n_q, n_k))
    out = as_result_array(out, what, (n_q, d_v), part="output")
    weights = as_result_array(weights, what, (n_q, n_k), part="weights")
    return out, weights


def _grade_masked_attention(call):
    rng = fresh_rng()
    d_k = int(rng.integers(2, 7))
    # d_v != d_k and sqrt(d_v) != d_k, so each wrong scale shows as itself.
    d_v = int(rng.choice([m for m in range(d_k + 1, d_k + 4) if m != d_k**2]))
    # All shapes distinct, so a swapped or missing return value is recognised by its shape.
    n = int(rng.choice([m for m in range(4, 10) if m != d_v]))
    n_q, n_k = int(rng.integers(2, 7)), int(rng.choice([m for m in range(7, 11) if m != d_v]))
    random_mask = rng.random((n_q, n_k)) < 0.5
    random_mask[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every row keeps a key
    random_mask[0, -1] = True  # query 0 may see the last key: this mask is not causal
    cases = [
        ("a causal mask", n, n, 1.0, _reference_causal_mask(n), np.float64),
        ("a random, non-causal mask", n_q, n_k, 1.0, random_mask, np.float64),
        ("one token", 1, 1, 1.0, np.ones((1, 1), bool), np.float64),
        ("large scores", n, n, 30.0, _reference_causal_mask(n), np.float64),
        ("float32 inputs", n, n, 1.0, _reference_causal_mask(n), np.float32),
    ]
    for label, nq, nk, size, mask, dtype in cases:
        Q = rng.standard_normal((nq, d_k)) * size
        K = rng.standard_normal((nk, d_k)) * size
        if label == "large scores":
            # The last query scores key 0 at exactly 1000 (an unstable exp overflows), and
            # query 0 scores the blocked last key at 5000 (masking late underflows).
            Q[-1] = 1000 * np.sqrt(d_k) * K[0] / (K[0] @ K[0])
            K[-1] = 5000 * np.sqrt(d_k) * Q[0] / (Q[0] @ Q[0])
        V = rng.standard_normal((nk, d_v))
        what = f"masked_attention on {label} (Q {Q.shape}, K {K.shape}, V {V.shape})"
        got_out, got_w = _unpack(
            call(Q.astype(dtype), K.astype(dtype), V.astype(dtype), mask.copy()),
            what,
            nq,
            nk,
            d_v,
        )
        ref_out, ref_w = _reference_masked_attention(Q, K, V, mask)
        if label == "large scores" and not np.all(np.isfinite(got_w)):
            late = _variant_weights(Q, K, V, mask, "after_renorm")
            if np.array_equal(np.isnan(late), np.isnan(got_w)):
                raise Mistake(
                    f"{what}: your weights contain NaN. You mask after the softmax and "
                    "renormalise: exact in theory, but here a blocked key's score is so large "
                    "that every allowed weight underflows to 0 and the renormalisation is 0/0. "
                    "Put -inf in the blocked scores before the softmax instead."
                )
            raise Mistake(
                f"{what}: your weights contain NaN or inf. With scores in the hundreds, "
                "np.exp overflows to inf and inf/inf = NaN. Subtract each row's maximum score "
                "before np.exp (softmax does not change), as helpers.softmax does."
            )
        leaked = np.all(np.isfinite(got_w)) and np.any(got_w[~mask] != 0)
        fill = _finite_fill(Q, K, mask, got_w) if leaked else None
        if fill is not None and round(fill) != 0:  # a fill of 0 is the "times_zero" mistake
            raise Mistake(
                f"{what}: your blocked scores were filled with a finite value (≈ {fill:.3g}), "
                f"so blocked keys still get weight: exp({fill:.3g}) is small but not 0. Use "
                "-np.inf (exp(-inf) = 0 exactly), or a value so negative that exp underflows "
                "to 0, such as -1e9."
            )
        known = {
            f"{what}: {message}": _variant_weights(Q, K, V, mask, how)
            for how, message in _WEIGHT_MISTAKES.items()
        }
        compare(got_w, ref_w, known, _generic_weights_message(what, got_w, mask))
        if leaked:  # close to the reference, but a blocked key kept a sliver of weight
            raise Mistake(
                f"{what}: blocked keys get weight up to {np.max(np.abs(got_w[~mask])):.1e} "
                "instead of exactly 0. Put -np.inf in their scores before the softmax."
            )
        transposed_use = {}
        if nq == nk:
            message = f"{what}: your weights are right but the output is weights.T @ V."
            transposed_use[message] = ref_w.T @ V
        compare(
            got_out,
            ref_out,
            transposed_use,
            f"{what}: your weights are right, but the output is not weights @ V.",
        )
    return (
        "your masked attention matches on a causal mask, a random non-causal mask, one token, "
        "scores in the hundreds and float32 inputs; blocked keys get exactly 0."
    )


masked_attention = Exercise(
    name="masked_attention",
    signature="masked_attention(Q, K, V, mask)",
    grade=_grade_masked_attention,
    reference=_reference_masked_attention,
    hints=[
        "Compute the scaled scores Q @ K.T / sqrt(d_k) as in lesson 03. Then, BEFORE the "
        "softmax, replace every score where mask is False by -inf.",
        "np.where(mask, scores, -np.inf) keeps the allowed scores and puts -inf elsewhere. "
        "Then a stable softmax over each row (subtract the row max, exp, divide by the row "
        "sum): exp(-inf) = 0, so blocked keys get weight exactly 0.",
        "scores = np.where(mask, Q @ K.T / np.sqrt(Q.shape[-1]), -np.inf); "
        "scores = scores - scores.max(axis=-1, keepdims=True); weights = np.exp(scores); "
        "weights = weights / weights.sum(axis=-1, keepdims=True); return weights @ V, weights",
    ],
)
