"""Lesson 05 exercises: the causal mask, attention with a boolean mask (True = may attend),
lesson 04's NumPy cell made causal, and a prediction about what the mask does to an allowed
weight. The lesson's padding masks and batched masked attention are in :mod:`.lesson05_padding`,
its ★★★ challenge ``decode_step`` (a KV cache) in :mod:`.lesson05_decoding`."""

from __future__ import annotations

import numpy as np

from .answers import lesson05 as answers
from .compare import (
    as_result_array,
    as_result_pair,
    close,
    compare,
    raw_softmax,
    unpack_pair,
    unpack_returns,
)
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction

# ----------------------------------------------------------------------------------------------
# causal_mask(n)


def as_mask(value, what: str, n: int | tuple[int, ...]) -> tuple[np.ndarray, bool]:
    """The learner's mask as a boolean pattern of shape (n, n) (or the given shape), and whether
    it was boolean to begin with."""
    shape = (n, n) if isinstance(n, int) else tuple(n)
    if value is None:
        raise Mistake(
            f"{what} returned None; did you forget the `return` statement?", "returned_none"
        )
    if isinstance(value, tuple):
        raise Mistake(
            f"{what} returned a tuple of {len(value)}; it should return one array", "tuple"
        )
    try:
        arr = np.asarray(value)
    except Exception:
        raise Mistake(
            f"{what} returned a {type(value).__name__}, not an array", "not_numbers"
        ) from None
    if arr.shape != shape:
        if arr.ndim == 2 and arr.shape[::-1] == shape and shape[0] != shape[1]:
            raise Mistake(
                f"{what} returned shape {arr.shape}, expected {shape}: it looks transposed",
                "transposed",
            )
        raise Mistake(f"{what} returned shape {arr.shape}, expected {shape}", "wrong_shape")
    if arr.dtype == bool:
        return arr, True
    if np.issubdtype(arr.dtype, np.floating) and _is_additive_mask(arr):
        raise Mistake(
            f"{what} returned a float mask of 0 and {np.min(arr):g}: that's the additive mask "
            "M that lesson 05 adds to the scores (0 = may attend, -inf = blocked). This "
            "exercise wants the boolean mask (True = may attend), of dtype bool.",
            "additive_mask",
        )
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isin(arr, (0, 1))):
        raise Mistake(
            f"{what} returned an array of dtype {arr.dtype} holding values other than 0 and 1; "
            "a mask holds True (may attend) and False (blocked)",
            "not_01",
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
        got, is_bool = as_mask(raw, what, n)
        expected = answers.causal_mask(n)
        if np.array_equal(got, expected):
            if not is_bool:
                raise Mistake(
                    f"{what} has the right pattern, but dtype {np.asarray(raw).dtype}: make "
                    "it boolean (e.g. np.ones((n, n), dtype=bool)). With 0/1 numbers, "
                    "np.where(mask, ...) still works but ~mask gives -1 and -2 instead of "
                    "flipping True/False, and scaled_dot_product_attention rejects it.",
                    "not_boolean",
                )
            continue
        ones = np.ones((n, n), dtype=bool)
        known = [
            (
                np.triu(ones),
                "upper_triangle",
                f"{what} is True in the upper triangle: query i may see keys i, i+1, ..., the "
                "future. Rows are queries and columns are keys, so query i may attend to keys "
                "j <= i: the lower triangle (np.tril).",
            ),
            (
                np.tril(ones, k=-1),
                "diagonal_left_out",
                f"{what} leaves the diagonal out: each token may attend to itself (j <= i, not "
                "j < i). Without it row 0 has no key at all and its softmax is 0/0 = NaN.",
            ),
            (
                np.triu(ones, k=1),
                "inverted",
                f"{what} is inverted: it is True on the blocked future keys. In this course (and "
                "in PyTorch's F.scaled_dot_product_attention) True = may attend; flip it with ~ "
                "or use np.tril. (nn.MultiheadAttention's boolean masks mean the opposite.)",
            ),
            (
                ones,
                "all_true",
                f"{what} is True everywhere, so nothing is blocked; the future keys (j > i) must "
                "be False.",
            ),
        ]
        for wrong, mistake_id, message in known:
            if np.array_equal(got, wrong):
                raise Mistake(message, mistake_id)
        first = tuple(int(i) for i in np.argwhere(got != expected)[0])
        raise Mistake(
            f"{what} differs from the causal mask at row {first[0]}, column {first[1]}: it "
            f"should be True exactly where column <= row (query i may attend to keys 0..i)."
        )
    return "your mask is True on and below the diagonal, boolean, for n = 1 up to n = 64."


causal_mask = Exercise(
    name="causal_mask",
    ready_made="helpers.causal_mask",
    allowed=(),
    signature="causal_mask(n)",
    grade=_grade_causal_mask,
    reference=answers.causal_mask,
    stars=1,
    title="the boolean causal mask for any n",
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


def _variant_weights(Q, K, V, mask, how: str) -> np.ndarray:
    """The weights a particular wrong answer computes (NaN where it would produce NaN)."""
    d_k, d_v = Q.shape[-1], V.shape[-1]
    scale = {"no_scale": 1.0, "scale_dk": 1.0 / d_k, "scale_dv": 1.0 / np.sqrt(d_v)}.get(
        how, 1.0 / np.sqrt(d_k)
    )
    s = Q @ K.T * scale
    with np.errstate(all="ignore"):
        if how == "after_no_renorm":
            return raw_softmax(s) * mask
        if how == "after_renorm":  # right in exact arithmetic; underflows on huge scores
            w = raw_softmax(s) * mask
            return w / w.sum(axis=-1, keepdims=True)
        if how == "times_zero":
            return raw_softmax(s * mask)
        if how == "no_mask":
            return raw_softmax(s)
        if how == "inverted":
            return raw_softmax(np.where(mask, -np.inf, s))
        if how == "own_causal":
            return raw_softmax(np.where(np.tril(np.ones(mask.shape, bool)), s, -np.inf))
        if how == "axis0":
            return raw_softmax(np.where(mask, s, -np.inf), axis=0)
        return raw_softmax(np.where(mask, s, -np.inf))  # the scale variants


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
    if agree and close(got, raw_softmax(np.where(mask, s, fill))):
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


def unpack_attention(
    value, what: str, out_shape: tuple, w_shape: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """The learner's ``(output, weights)`` as float arrays, with the usual slips named."""
    return as_result_pair(unpack_pair(value, what, out_shape, w_shape), what, out_shape, w_shape)


def _masked_attention_cases(rng) -> tuple[int, int, list]:
    """d_k, d_v and the cases: (label, n_q, n_k, score size, mask, dtype)."""
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
        ("a causal mask", n, n, 1.0, answers.causal_mask(n), np.float64),
        ("a random, non-causal mask", n_q, n_k, 1.0, random_mask, np.float64),
        ("one token", 1, 1, 1.0, np.ones((1, 1), bool), np.float64),
        ("large scores", n, n, 30.0, answers.causal_mask(n), np.float64),
        ("float32 inputs", n, n, 1.0, answers.causal_mask(n), np.float32),
    ]
    return d_k, d_v, cases


def _not_finite(what: str, Q, K, V, mask, got_w) -> None:
    """Weights with NaN or inf on scores in the thousands: masking after the softmax (which
    underflows to 0/0) or an exp without the row max (which overflows)."""
    late = _variant_weights(Q, K, V, mask, "after_renorm")
    if np.array_equal(np.isnan(late), np.isnan(got_w)):
        raise Mistake(
            f"{what}: your weights contain NaN. You mask after the softmax and "
            "renormalise: exact in theory, but here a blocked key's score is so large "
            "that every allowed weight underflows to 0 and the renormalisation is 0/0. "
            "Put -inf in the blocked scores before the softmax instead.",
            "after_renorm_underflow",
        )
    raise Mistake(
        f"{what}: your weights contain NaN or inf. With scores in the hundreds, "
        "np.exp overflows to inf and inf/inf = NaN. Subtract each row's maximum score "
        "before np.exp (softmax does not change), as helpers.softmax does.",
        "overflow",
    )


def _grade_masked_attention(call):
    rng = fresh_rng()
    d_k, d_v, cases = _masked_attention_cases(rng)
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
        got_out, got_w = unpack_attention(
            call(Q.astype(dtype), K.astype(dtype), V.astype(dtype), mask.copy()),
            what,
            (nq, d_v),
            (nq, nk),
        )
        ref_out, ref_w = answers.masked_attention(Q, K, V, mask)
        if label == "large scores" and not np.all(np.isfinite(got_w)):
            _not_finite(what, Q, K, V, mask, got_w)
        leaked = np.all(np.isfinite(got_w)) and np.any(got_w[~mask] != 0)
        fill = _finite_fill(Q, K, mask, got_w) if leaked else None
        if fill is not None and round(fill) != 0:  # a fill of 0 is the "times_zero" mistake
            raise Mistake(
                f"{what}: your blocked scores were filled with a finite value (≈ {fill:.3g}), "
                f"so blocked keys still get weight: exp({fill:.3g}) is small but not 0. Use "
                "-np.inf (exp(-inf) = 0 exactly), or a value so negative that exp underflows "
                "to 0, such as -1e9.",
                "finite_fill",
            )
        known = {
            named(how, f"{what}: {message}"): _variant_weights(Q, K, V, mask, how)
            for how, message in _WEIGHT_MISTAKES.items()
        }
        compare(got_w, ref_w, known, _generic_weights_message(what, got_w, mask))
        if leaked:  # close to the reference, but a blocked key kept a sliver of weight
            raise Mistake(
                f"{what}: blocked keys get weight up to {np.max(np.abs(got_w[~mask])):.1e} "
                "instead of exactly 0. Put -np.inf in their scores before the softmax.",
                "not_exactly_zero",
            )
        transposed_use = {}
        if nq == nk:
            message = named(
                "output_transposed_weights",
                f"{what}: your weights are right but the output is weights.T @ V.",
            )
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
    ready_made="helpers.scaled_dot_product_attention",
    allowed=("helpers.softmax", "helpers.causal_mask"),
    signature="masked_attention(Q, K, V, mask)",
    grade=_grade_masked_attention,
    reference=answers.masked_attention,
    stars=2,
    title="attention with any boolean mask, vectorised (True = may attend)",
    hints=[
        "The lesson's loop handled the causal mask, whose allowed keys are a prefix. Here any "
        "key may be blocked. Compute the scaled scores Q @ K.T / sqrt(d_k) as in lesson 03; "
        "then, BEFORE the softmax, give every blocked score (mask False) the value -inf.",
        "np.where(mask, scores, -np.inf) keeps the allowed scores and puts -inf elsewhere. "
        "Then a stable softmax over each row (subtract the row max, exp, divide by the row "
        "sum): exp(-inf) = 0, so blocked keys get weight exactly 0.",
        "scores = np.where(mask, Q @ K.T / np.sqrt(Q.shape[-1]), -np.inf); "
        "scores = scores - scores.max(axis=-1, keepdims=True); weights = np.exp(scores); "
        "weights = weights / weights.sum(axis=-1, keepdims=True); return weights @ V, weights",
    ],
)


# ----------------------------------------------------------------------------------------------
# causal_build_it(seed): lesson 04's "Build it yourself" cell, made causal, as a function of its
# seed.

_BUILD_IT_X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])


def _build_it_parts(seed: int):
    """Q, K, V and the unmasked scores of the lesson's cell for ``seed`` (global state kept)."""
    state = np.random.get_state()
    try:
        np.random.seed(seed)
        Wq, Wk, Wv = (np.random.randn(4, 4) * 0.5 for _ in range(3))
    finally:
        np.random.set_state(state)
    Q, K, V = _BUILD_IT_X @ Wq, _BUILD_IT_X @ Wk, _BUILD_IT_X @ Wv
    return Q, K, V, Q @ K.T / 2.0


def _build_it_variants(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(A, out) of the usual wrong versions of the cell."""
    _, _, V, s = _build_it_parts(seed)
    tril = np.tril(np.ones((3, 3), dtype=bool))
    full = raw_softmax(s)
    causal = raw_softmax(np.where(tril, s, -np.inf))
    late = full * tril
    variants = {
        "no_mask": full,
        "upper_triangle": raw_softmax(np.where(np.triu(tril.T), s, -np.inf)),
        "diagonal_left_out": raw_softmax(np.where(np.tril(tril, k=-1), s, -np.inf)),
        "after_no_renorm": late,
        "times_zero": raw_softmax(s * tril),
    }
    out = {how: (A, A @ V) for how, A in variants.items()}
    out["out_from_unmasked"] = (causal, full @ V)
    return out


_BUILD_IT_MISTAKES = {
    "no_mask": "this is the cell unchanged: no mask, so row 0 ('the' of lesson 04's X) "
    "still gives weight to tokens 1 and 2, its future. Add the causal mask before the "
    "softmax.",
    "upper_triangle": "your mask keeps the upper triangle (np.triu): each row attends to itself "
    "and the *future*, and the last row only to itself. Rows are queries, columns keys: keep "
    "j <= i, np.tril.",
    "diagonal_left_out": "row 0 is NaN: your mask leaves the diagonal out (j < i), so token 0 "
    "may attend to nothing and its softmax is 0/0. Each token may attend to itself: j <= i.",
    "after_no_renorm": "your row sums are below 1: you zeroed the future weights after the "
    "softmax without renormalising. Put -inf in the blocked scores before the softmax.",
    "times_zero": "you multiplied the blocked scores by 0: exp(0) = 1, so row 0 still gives "
    "weight to the future. Put -np.inf there (np.where(mask, scores, -np.inf)).",
    "out_from_unmasked": "your weights are right, but out still comes from the unmasked weights: "
    "compute out = A @ V after masking.",
}


def _unpack_build_it(value, what: str):
    value = unpack_returns(
        value, what, ("A", "out"), hint=" (the weights (3, 3), then the output (3, 4))"
    )
    if np.shape(value[0]) == (3, 4) and np.shape(value[1]) == (3, 3):
        raise Mistake(f"{what} returned (out, A); the order is `return A, out`.", "swapped_pair")
    A = as_result_array(value[0], what, (3, 3), part="weights A")
    out = as_result_array(value[1], what, (3, 4), part="output out")
    return A, out


def _grade_causal_build_it(call):
    rng = fresh_rng()
    state = np.random.get_state()  # the learner's function reseeds NumPy's global generator
    try:
        for seed in (0, int(rng.integers(1, 2**31 - 1))):
            what = f"causal_build_it({seed})"
            A, out = _unpack_build_it(call(seed), what)
            ref_A, ref_out = answers.causal_build_it(seed)
            if not (close(A, ref_A) and close(out, ref_out)):
                for how, (wrong_A, wrong_out) in _build_it_variants(seed).items():
                    nan_same = np.array_equal(np.isnan(A), np.isnan(wrong_A))
                    if nan_same and close(np.nan_to_num(A), np.nan_to_num(wrong_A)):
                        if how != "out_from_unmasked" or close(out, wrong_out):
                            raise Mistake(f"{what}: {_BUILD_IT_MISTAKES[how]}", how)
                if seed != 0 and close(A, answers.causal_build_it(0)[0]):
                    raise Mistake(
                        f"{what} gives the numbers of seed 0: use the seed argument, "
                        "np.random.seed(seed), so that Wq, Wk and Wv are drawn from it.",
                        "ignores_seed",
                    )
            compare(A, ref_A, {}, f"{what}: the weights A differ from the causal ones.", "A")
            sums = np.asarray(A).sum(axis=1)
            compare(sums, ref_A.sum(axis=1), {}, f"{what}: the row sums differ from 1.", "sums")
            compare(
                out,
                ref_out,
                {},
                f"{what}: the weights are right, but out differs from A @ V.",
                "out",
            )
            if seed == 0 and not np.allclose(A[0], [1.0, 0.0, 0.0]):
                raise Mistake(f"{what}: row 0 should be [1, 0, 0].")
    finally:
        np.random.set_state(state)
    return (
        "every printed number matches, for seed 0 and a fresh seed: the weights (row 0 is "
        "[1, 0, 0]), the row sums (all 1) and the output."
    )


causal_build_it = Exercise(
    name="causal_build_it",
    allowed=("helpers.softmax", "helpers.causal_mask"),
    signature="causal_build_it(seed)",
    grade=_grade_causal_build_it,
    reference=answers.causal_build_it,
    stars=1,
    title="lesson 04's NumPy cell made causal (row 0 becomes [1, 0, 0])",
    hints=[
        "Start from lesson 04's cell: np.random.seed(seed), the same X, Wq, Wk and Wv "
        "drawn in the same order. One thing changes: before the softmax, the scores of the "
        "future keys (column j > row i) must not count.",
        "Build the 3 x 3 causal mask (True on and below the diagonal, np.tril) and replace "
        "the blocked scores by -np.inf before the softmax; then A = softmax(scores) and "
        "out = A @ V as before. Return A, out.",
        "mask = np.tril(np.ones((3, 3), dtype=bool)); scores = np.where(mask, scores, -np.inf); "
        "A = softmax(scores); out = A @ V; return A, out",
    ],
)


# ----------------------------------------------------------------------------------------------
# The prediction asked before the lesson computes its first masked weights.

allowed_weight_with_mask = Prediction(
    name="allowed_weight_with_mask",
    question=(
        "Without a mask, query 'sat' gives key 'cat' some weight. With the causal mask, 'sat' "
        "may attend to 'the', 'cat' and itself only. Does its weight on 'cat' rise, fall or "
        "stay the same?"
    ),
    answer=answers.allowed_weight_with_mask,
    choices=["rise", "fall", "stay"],
    explanation=(
        "The mask gives the future keys the score -inf, so their terms exp(-inf) = 0 leave the "
        "softmax's denominator. The numerator exp(s_cat) is unchanged and the denominator is "
        "smaller, so the weight on 'cat' rises; so do the weights on 'the' and 'sat', all by the "
        "same factor: the three allowed keys now share the whole budget of 1."
    ),
    wrong={
        "stay": "The mask does not just zero the future weights and leave the rest: each row "
        "must still sum to 1, and the allowed keys take over the weight the future had.",
        "fall": "No allowed key loses anything: the blocked keys only drop out of the "
        "denominator, which can only shrink.",
    },
)
