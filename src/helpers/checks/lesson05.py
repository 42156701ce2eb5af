"""Lesson 05 exercises: the causal mask, attention with a boolean mask (True = may attend), the
lesson 04's NumPy cell made causal, padding masks and batched masked attention, a prediction about
what the mask does to an allowed weight, and the ★★★ challenge ``decode_step`` (a KV cache)."""

from __future__ import annotations

import numpy as np

from .answers import lesson05 as answers
from .compare import as_result_array, as_result_pair, close, compare, raw_softmax, unpack_pair
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import LearnerError, Mistake, named
from .prediction import Prediction

# ----------------------------------------------------------------------------------------------
# causal_mask(n)


def _as_mask(value, what: str, n: int | tuple[int, ...]) -> tuple[np.ndarray, bool]:
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
        got, is_bool = _as_mask(raw, what, n)
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


def _unpack(value, what: str, out_shape: tuple, w_shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The learner's ``(output, weights)`` as float arrays, with the usual slips named."""
    return as_result_pair(unpack_pair(value, what, out_shape, w_shape), what, out_shape, w_shape)


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
        ("a causal mask", n, n, 1.0, answers.causal_mask(n), np.float64),
        ("a random, non-causal mask", n_q, n_k, 1.0, random_mask, np.float64),
        ("one token", 1, 1, 1.0, np.ones((1, 1), bool), np.float64),
        ("large scores", n, n, 30.0, answers.causal_mask(n), np.float64),
        ("float32 inputs", n, n, 1.0, answers.causal_mask(n), np.float32),
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
            (nq, d_v),
            (nq, nk),
        )
        ref_out, ref_w = answers.masked_attention(Q, K, V, mask)
        if label == "large scores" and not np.all(np.isfinite(got_w)):
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
    if value is None:
        raise Mistake(f"{what} returned None; end the function with `return A, out`.",
                      "returned_none")  # fmt: skip
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        shape = np.shape(value) if isinstance(value, np.ndarray) else None
        raise Mistake(
            f"{what} returned {f'one array of shape {shape}' if shape else type(value).__name__}"
            "; return both: `return A, out` (the weights (3, 3), then the output (3, 4)).",
            "returned_one",
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
        got, is_bool = _as_mask(raw, what, (len(L), m))
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
        out, w = _unpack(value, what, (bb, nn, d_v), (bb, nn, nn))
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


# ----------------------------------------------------------------------------------------------
# ★★★ decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V): one step of generation with a KV cache.


_DECODE_MISTAKES = {
    "attends_before_append": "your output attends to the keys before this token only: append "
    "the new key and value first, then attend, so the token also sees itself (j <= i).",
    "only_new_token": "your output is the new token's own value: it attended to its own key "
    "only. It must attend to every cached key plus its own.",
    "first_key_only": "all the weight goes to key 0: did you take row 0 of a causal mask for "
    "the new query? The new token is the *last* row: it may see every key in the cache.",
    "unscaled": "the scores are not scaled: divide q . k by sqrt(d_k).",
    "mean_of_values": "your output is the plain mean of the cached values: the weights must "
    "come from a softmax of the scores q . k / sqrt(d_k).",
    "key_as_query": "you scored the keys against the new token's key; the query is x_t @ W_Q.",
}


def _grade_decode_step(call):
    rng = fresh_rng()
    # The prompt's run decodes steps 2..n-1. About one draw in 50 makes two answers agree
    # there (weights near one-hot on the new token: key_as_query gives only_new_token's v_t),
    # so that the check would name the wrong mistake: draw again.
    for _ in range(100):
        n, d_model, d_k, d_v = int(rng.integers(6, 9)), 5, 3, 4
        X = rng.normal(size=(n, d_model))
        W_Q, W_K, W_V = (rng.normal(size=(d_model, d)) / np.sqrt(d_model) for d in (d_k, d_k, d_v))
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        full = answers.masked_attention(Q, K, V, answers.causal_mask(n))[0]  # (n, d_v)
        if all(_distinct([full[t], *_decode_mistakes(Q, K, V, t).values()]) for t in range(2, n)):
            break
    deferred = None
    for p, label in ((2, "after a prompt of 2 tokens"), (0, "from an empty cache")):
        try:
            _decode_run(call, X, (W_Q, W_K, W_V), (Q, K, V), full, p, label)
        except LearnerError as error:
            # An answer that cannot continue a prompt's cache (say, one that caches x_t itself)
            # may still show a nameable mistake from an empty cache: look there first.
            if p == 0:
                raise
            deferred = error
    if deferred is not None:
        raise deferred
    return (
        "token by token, your decode_step gives every row of the causal full pass, from an "
        "empty cache and after a prompt, and its cache grows by one key and value per step: "
        "nothing is recomputed."
    )


def _decode_mistakes(Q, K, V, t: int) -> dict[str, np.ndarray]:
    """What each named mistake's decode_step returns at step t (none at t = 0: with one key,
    every rule gives v_0)."""
    if t == 0:
        return {}
    q, d_k = Q[t], K.shape[1]
    return {
        "attends_before_append": raw_softmax(K[:t] @ q / np.sqrt(d_k)) @ V[:t],
        "only_new_token": V[t],
        "first_key_only": V[0],
        "unscaled": raw_softmax(K[: t + 1] @ q) @ V[: t + 1],
        "mean_of_values": V[: t + 1].mean(axis=0),
        "key_as_query": raw_softmax(K[: t + 1] @ K[t] / np.sqrt(d_k)) @ V[: t + 1],
    }


def _distinct(outputs: list[np.ndarray]) -> bool:
    """No two of ``outputs`` are close enough for the check to mistake one for another."""
    return not any(close(a, b) for i, a in enumerate(outputs) for b in outputs[i + 1 :])


def _decode_run(call, X, weights, qkv, full, p: int, label: str) -> None:
    """Decode tokens p..n-1 one at a time, feeding back the cache each step returns."""
    W_Q, W_K, W_V = weights
    Q, K, V = qkv
    n, d_model = X.shape
    d_k, d_v = K.shape[1], V.shape[1]
    K_cache, V_cache = K[:p].copy(), V[:p].copy()
    for t in range(p, n):
        what = f"decode_step at step t = {t} ({label}; K_cache {K_cache.shape})"
        value = call(X[t].copy(), K_cache.copy(), V_cache.copy(), W_Q, W_K, W_V)
        if value is None or not isinstance(value, (tuple, list)) or len(value) != 3:
            raise Mistake(
                f"{what} returned {type(value).__name__}; return three values: "
                "`return out_t, K_cache, V_cache`.",
                "returned_one" if value is not None else "returned_none",
            )
        out_t, new_K, new_V = value
        new_K = np.asarray(new_K, dtype=float)
        new_V = np.asarray(new_V, dtype=float)
        if new_K.shape == (t, d_k) or new_V.shape == (t, d_v):
            raise Mistake(
                f"{what}: the returned cache still holds {t} rows; append the new token's "
                "key (x_t @ W_K) and value (x_t @ W_V), so step t returns t + 1 rows.",
                "cache_not_grown",
            )
        if new_K.shape == (t + 1, d_model) or new_V.shape == (t + 1, d_model):
            raise Mistake(
                f"{what}: your cache holds the tokens x_t themselves ({d_model} wide); it "
                "holds their keys x_t @ W_K and values x_t @ W_V, so that no key or value is "
                "ever recomputed.",
                "cache_holds_x",
            )
        new_K = as_result_array(new_K, what, (t + 1, d_k), part="K_cache")
        new_V = as_result_array(new_V, what, (t + 1, d_v), part="V_cache")
        if not (close(new_K, K[: t + 1]) and close(new_V, V[: t + 1])):
            raise Mistake(
                f"{what}: the returned cache should be the old cache with this token's key "
                "and value appended as the last row: K_cache[:t] unchanged, "
                "K_cache[t] = x_t @ W_K (and the same for V with W_V).",
                "cache_contents",
            )
        K_cache, V_cache = new_K, new_V  # the next step gets the cache this one returned
        if np.shape(out_t) == (1, d_v):
            row = as_result_array(np.asarray(out_t)[0], what, (d_v,), part="out_t")
            right = "its numbers are right, but it" if close(row, full[t]) else "it"
            raise Mistake(
                named(
                    "out_t_shape",
                    f"{what}: out_t has shape (1, {d_v}): {right} should be the new token's "
                    f"output vector, shape ({d_v},), as the cache rows are. A query made from "
                    "x_t[None, :] keeps that extra axis: take row 0 of the result, or use x_t "
                    "@ W_Q as a vector.",
                )
            )
        out_t = as_result_array(out_t, what, (d_v,), part="out_t")
        known = _decode_mistakes(Q, K, V, t)
        compare(
            out_t,
            full[t],
            {named(how, f"{what}: {_DECODE_MISTAKES[how]}"): w for how, w in known.items()},
            f"{what}: out_t differs from row {t} of the causal full pass.",
            "out_t",
        )


decode_step = Exercise(
    name="decode_step",
    # causal_mask too: the prompt asks which mask the step needs; with it allowed,
    # its row 0 is named as the mistake it is (first_key_only), and its last row passes.
    allowed=("helpers.softmax", "helpers.scaled_dot_product_attention", "helpers.causal_mask"),
    signature="decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V)",
    grade=_grade_decode_step,
    reference=answers.decode_step,
    stars=3,
    title="challenge: one step of generation with a KV cache, equal to the causal full pass",
    hints=[
        "At step t the new token x_t (d_model,) needs its query, key and value. Its key and "
        "value join the cache; its query is used once, right now. Which keys may the new "
        "token attend to under the causal rule j <= t?",
        "All of them: the cache holds tokens 0..t-1, and with the new key appended, exactly "
        "the keys j <= t. So no mask is needed. Append first (np.vstack or np.concatenate), "
        "then a stable softmax of K_cache @ q / sqrt(d_k).",
        "q = x_t @ W_Q; K_cache = np.vstack([K_cache, x_t @ W_K]); V_cache = np.vstack([V_cache, "
        "x_t @ W_V]); s = K_cache @ q / np.sqrt(len(q)); w = np.exp(s - s.max()); w /= w.sum(); "
        "return w @ V_cache, K_cache, V_cache",
    ],
)
