"""Lesson 02 exercises: the fused Q/K/V projection, the head split, and the ★★★ bilinear form."""

from __future__ import annotations

import numpy as np

from .answers import lesson02 as answers
from .compare import as_result_array, close, compare, unpack_returns
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import LearnerError, Mistake, named
from .prediction import Prediction

# ----------------------------------------------------------------------------------------------
# ★ project_qkv(X, W_qkv) -> (Q, K, V): one fused matrix [W_Q | W_K | W_V], any leading axes


def _three_arrays(value, what: str, fused_shape: tuple) -> tuple:
    """The learner's return value as a (Q, K, V) triple, or a Mistake that says why not."""
    if isinstance(value, np.ndarray) and value.shape == fused_shape:
        raise Mistake(
            f"{what} returned one array of shape {value.shape}: that is X @ W_qkv, all three "
            "projections side by side. Cut its last axis into three blocks of d_out columns "
            "and return them: `return Q, K, V`.",
            "fused_only",
        )
    return unpack_returns(value, what, ("Q", "K", "V"))


def _grade_project_qkv(call):
    rng = fresh_rng()
    d_head = int(rng.integers(3, 7))  # a block narrower than d_model, as for one head
    d_model = int(rng.integers(d_head + 1, 3 * d_head))  # d_head < d_model < 3 d_head
    # n: a multiple of 3, so splitting the tokens "works", and never d_model, so a weight
    # block (d_model, d_out) cannot pass for a projection (n, d_out).
    n = 3 * int(rng.choice([m for m in (2, 3, 4) if 3 * m != d_model]))
    b = int(rng.integers(2, 5))
    cases = [((n, d_model), d_head), ((b, n, d_model), d_head), ((2, b, n, d_model), d_model)]
    for shape, d_out in cases:
        X = rng.standard_normal(shape)
        d_in = shape[-1]
        W = rng.normal(0, d_in**-0.5, (d_in, 3 * d_out))  # [W_Q | W_K | W_V]
        lead, rows = shape[:-1], shape[-2]
        what = f"project_qkv(X {X.shape}, W_qkv {W.shape})"
        blocks = {name: X @ W[:, k * d_out : (k + 1) * d_out] for k, name in enumerate("QKV")}
        triple = _three_arrays(call(X, W), what, (*lead, 3 * d_out))
        for k, name in enumerate("QKV"):
            value = triple[k]
            shape_got = np.shape(value) if isinstance(value, np.ndarray) else None
            if shape_got == X.shape and close(value, X):
                raise Mistake(
                    f"{what}: your {name} is X itself. {name} = X @ W_{name}: the projection is "
                    f"what turns the token's content into a {_ROLE[name]}.",
                    "x_itself",
                )
            if shape_got == (*shape[:-2], rows // 3, 3 * d_out):
                raise Mistake(
                    f"{what}: your {name} has shape {shape_got}: you cut the tokens axis into "
                    "three. Q, K and V are three blocks of columns, the last axis: slice with "
                    "[..., a:b] or split with axis=-1, which is the last axis however many "
                    "leading axes X has.",
                    "split_tokens",
                )
            if shape_got == (d_in, d_out):
                raise Mistake(
                    f"{what}: your {name} has shape {shape_got}, the shape of a weight block. "
                    f"Cutting W_qkv gives W_{name}; the projection is X @ W_{name}.",
                    "weight_blocks",
                )
            if shape_got == (*lead, d_in) and d_in != d_out and k == 0:
                raise Mistake(
                    f"{what}: your Q has {d_in} = d_model columns. Each block of W_qkv is "
                    f"d_out = W_qkv.shape[-1] // 3 = {d_out} columns wide, which need not be "
                    "d_model.",
                    "blocks_of_d_model",
                )
            got = as_result_array(value, what, (*lead, d_out), part=name)
            mistakes = {}
            for other in "QKV".replace(name, ""):
                mistakes[
                    named(
                        "wrong_order",
                        f"{what}: your {name} is the {_ORDINAL[other]} block of X @ W_qkv, "
                        f"which is {other}. The fused matrix holds W_Q first, then W_K, then "
                        "W_V.",
                    )
                ] = blocks[other]
            mistakes[
                named(
                    "interleaved",
                    f"{what}: your {name} took every third column of X @ W_qkv. The three "
                    "blocks are contiguous: Q is columns 0 to d_out - 1, K the next d_out, V "
                    "the last d_out.",
                )
            ] = (X @ W)[..., k::3]
            compare(
                got,
                blocks[name],
                mistakes,
                f"{what}: your {name} differs from X @ W_{name}, the {_ORDINAL[name]} block of "
                "d_out columns of X @ W_qkv.",
            )
    return (
        "Q, K and V match the three blocks of X @ W_qkv on fresh inputs: one matrix, two and "
        "three leading axes. One product instead of three is how GPT-2 (nanoGPT's c_attn) "
        "computes them."
    )


_ROLE = {"Q": "query", "K": "key", "V": "value"}
_ORDINAL = {"Q": "first", "K": "second", "V": "third"}

project_qkv = Exercise(
    name="project_qkv",
    allowed=(),
    signature="project_qkv(X, W_qkv)",
    grade=_grade_project_qkv,
    reference=answers.project_qkv,
    hints=[
        "W_qkv is W_Q, W_K and W_V side by side: shape (d_model, 3 * d_out), each block "
        "d_out columns wide. X @ W_qkv gives all three projections side by side too, one row "
        "per token.",
        "d_out = W_qkv.shape[-1] // 3. Q is the first d_out columns of X @ W_qkv, K the next "
        "d_out, V the last d_out. Index the last axis with `...` so any leading axes of X pass "
        "through.",
        "QKV = X @ W_qkv; d_out = W_qkv.shape[-1] // 3; return QKV[..., :d_out], "
        "QKV[..., d_out:2*d_out], QKV[..., 2*d_out:]  (or np.split(QKV, 3, axis=-1))",
    ],
    stars=1,
    title="Q, K and V from one fused weight matrix [W_Q | W_K | W_V], any leading axes",
)


# ----------------------------------------------------------------------------------------------
# ★★ head_slices(M, h) -> (..., h, n, d_k)


def _shape_of(value) -> tuple[int, ...] | None:
    """The shape of an array or a list of equal blocks; None for anything else (ragged, None)."""
    if not isinstance(value, (np.ndarray, list, tuple)):
        return None
    try:
        return np.shape(np.asarray(value, dtype=float))
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
        return None


def _head_cases(rng):
    # h is never 2 and d_k never 4 (the running example's), and d_model = h * d_k is a multiple
    # of 4 but not 8, so answers with either size hard-coded run and show a telling shape.
    h = int(rng.choice([3, 5]))
    d_k = int(rng.choice([8, 12]))
    n = h * int(rng.integers(2, 4))  # divisible by h, so splitting the rows "works"
    b = int(rng.choice([2, 4]))  # never h, so a misplaced head axis shows in the shape
    return [((n, h * d_k), h), ((6, 8), 2), ((b, n, h * d_k), h), ((2, b, 5, 3 * d_k), 3)]


def _head_slices_shape(value, what: str, lead: tuple, n: int, d_model: int, h: int,
                       expected: np.ndarray) -> None:  # fmt: skip
    """An answer of a shape that names its mistake (rows split, the head axis not moved, ...),
    or one that does not allow for batch axes in front."""
    d_k = d_model // h
    got_shape = _shape_of(value)
    wrong_shapes = {
        (*lead, h, n // h, d_model): (
            "split_rows",
            "you split the rows (tokens) into groups. Heads split the columns: every head "
            "sees every token, through its own d_k columns.",
        ),
        (*lead, n, h, d_k): (
            "head_axis_not_moved",
            "you reshaped to (..., n, h, d_k) but did not move the head axis in front of "
            "the tokens axis. Swap the last-but-one two axes: np.swapaxes(..., -3, -2).",
        ),
        (*lead, h, d_k, n): (
            "block_transposed",
            "each head's block is transposed. A head keeps one row per token: (n, d_k).",
        ),
        (*lead, 2, n, d_model // 2): (
            "h_hard_coded",
            "it looks like h = 2 is hard-coded (the running example's). Use the h you are "
            f"given (here h = {h}).",
        ),
        (*lead, d_model // 4, n, 4): (
            "d_k_hard_coded",
            "it looks like d_k = 4 is hard-coded (the running example's). Compute it: "
            f"d_k = d_model // h = {d_model} // {h} = {d_k}.",
        ),
    }
    if lead:
        wrong_shapes[(h, *lead, n, d_k)] = (
            "head_axis_before_batch",
            "the head axis went in front of the batch axes. Batch axes stay in front: "
            "(..., h, n, d_k), e.g. np.stack(blocks, axis=-3), not axis=0.",
        )
        wrong_shapes[(n, *lead, h, d_k)] = (
            "batch_axis_moved",
            "you swapped the first two axes; with a batch axis in front those are the "
            "batch and the tokens, not the tokens and the heads. Swap the axes counted "
            "from the end: np.swapaxes(..., -3, -2).",
        )
    if got_shape != expected.shape and got_shape in wrong_shapes and n % h == 0:
        mistake, why = wrong_shapes[got_shape]
        raise Mistake(
            f"{what} returned shape {got_shape}, expected (..., h, n, d_k) = "
            f"{expected.shape}: {why}",
            mistake,
        )
    if lead and got_shape is not None and got_shape != expected.shape:
        raise Mistake(
            f"{what} returned shape {got_shape}, expected (..., h, n, d_k) = "
            f"{expected.shape}: your head_slices does not allow for a batch axis in front. "
            "With M of shape (b, n, d_model), M.shape[0] is the batch size b, not n: read "
            "n and d_model from the end (M.shape[-2:]) and move only the last axes.",
            "only_2d",
        )


def _grade_head_slices(call):
    rng = fresh_rng()
    for shape, h in _head_cases(rng):
        *lead, n, d_model = shape
        lead = tuple(lead)
        d_k = d_model // h
        M = rng.standard_normal(shape)
        what = f"head_slices(M {M.shape}, h={h})"
        expected = answers.head_slices(M, h)
        try:
            value = call(M, h)
        except LearnerError as error:
            if not lead:
                raise
            which = "one leading axis" if len(lead) == 1 else "two leading axes"
            raise Mistake(
                f"your head_slices works on a single (n, d_model) matrix but not with {which}. "
                "Read n and d_model from the last two axes (M.shape[-2:]) and move only the "
                "last axes (np.swapaxes(..., -3, -2)), so any batch axes in front pass through "
                f"untouched.\nWhat happened: {error}",
                "only_2d",
            ) from None
        _head_slices_shape(value, what, lead, n, d_model, h, expected)
        got = as_result_array(value, what, expected.shape)
        compare(
            got,
            expected,
            {
                named(
                    "reshaped_straight",
                    f"{what}: you reshaped M straight to (..., h, n, d_k). That cuts M's memory "
                    "in order, so a head gets pieces of several rows. Reshape to "
                    "(..., n, h, d_k) first, then move the head axis in front of the tokens.",
                ): M.reshape(*lead, h, n, d_k),
                named(
                    "interleaved",
                    f"{what}: head a got every h-th column (a, a+h, ...). Heads take contiguous "
                    "blocks: head a gets columns a*d_k to (a+1)*d_k - 1.",
                ): np.moveaxis(M.reshape(*lead, n, d_k, h), -1, -3),
            },
            f"{what} differs from the expected split: block a should be M[..., a*d_k:(a+1)*d_k].",
        )
    return (
        "your heads match: block a is columns a·d_k to (a+1)·d_k - 1, on fresh sizes, h = 2, "
        "and with one and two batch axes in front."
    )


head_slices = Exercise(
    name="head_slices",
    ready_made="helpers.split_heads",
    allowed=(),  # NumPy only: helpers.split_heads is the answer
    signature="head_slices(M, h)",
    grade=_grade_head_slices,
    reference=answers.head_slices,
    hints=[
        "M has shape (..., n, d_model) with d_model = h * d_k: maybe just (n, d_model), maybe "
        "(b, n, d_model) for a batch of b sentences. Head a owns a block of d_k neighbouring "
        "columns; every head keeps all n rows. Count axes from the end so the batch axes never "
        "matter.",
        "d_k = M.shape[-1] // h. Head a is M[..., a*d_k:(a+1)*d_k], shape (..., n, d_k). Stack "
        "the h blocks on a new axis in front of the tokens (np.stack(..., axis=-3)), or reshape "
        "to (..., n, h, d_k) and swap the axes -3 and -2.",
        "*lead, n, d_model = M.shape; d_k = d_model // h; "
        "return np.swapaxes(M.reshape(*lead, n, h, d_k), -3, -2)",
    ],
    stars=2,
    title="split (..., n, d_model) into h heads, (..., h, n, d_k), any leading batch axes",
)


# ----------------------------------------------------------------------------------------------
# Prediction: does the RNN carry the nudge to position 5 undiminished?

rnn_nudge_fades = Prediction(
    name="rnn_nudge_fades",
    question=(
        "Nudge token 0 and run the toy RNN. By the time its state reaches position 5 ('mat'), "
        "has the change grown, or shrunk, compared with the change at position 0?"
    ),
    answer=answers.rnn_nudge_fades,
    choices=["grown", "shrunk"],
    wrong={
        "grown": "The nudge enters only once, at position 0, and then travels only through "
        "the state. Each step multiplies it by W_rnn, whose entries of variance 1/d keep a "
        "vector's length about the same on average, and passes it through tanh, whose slope "
        "is at most 1 and below 1 wherever the state is not near 0: nothing amplifies it, and "
        "the tanh damps it."
    },
    explanation=(
        "The nudge enters only at position 0; from there it reaches position 5 only through "
        "r_1, r_2, r_3, r_4, one multiplication by W_rnn and one tanh per step; in this "
        "seeded RNN each of those steps shrinks it. Attention instead lets position 5 read token 0 "
        "directly, in one step. The next cell prints every step."
    ),
)


# ----------------------------------------------------------------------------------------------
# ★★★ head_bilinear_form(W_Q, W_K, b_Q, b_K) -> (h, d_model + 1, d_model + 1)
#
# With biases, q_i = x_i W^Q_a + b^Q_a and k_j = x_j W^K_a + b^K_a. Appending a 1 to each row,
# x~ = [x, 1], the score is one bilinear form again: q_i . k_j = x~_i B~_a x~_j^T with
#   B~_a = [[W^Q_a W^K_a^T,  W^Q_a b^K_a^T],
#           [b^Q_a W^K_a^T,  b^Q_a . b^K_a]]  =  [W^Q_a; b^Q_a] [W^K_a; b^K_a]^T,
# so its rank is at most d_k; and its last column (x_i W^Q_a b^K_a^T + b^Q_a . b^K_a) does not
# depend on the key, so it cancels in the softmax: b^K never changes the attention weights.


def _bilinear_blocks(main, query_only, key_only, constant):
    """Assemble (h, d+1, d+1) from the four blocks: x_i-x_j, x_i alone, x_j alone, neither."""
    top = np.concatenate([main, query_only[..., :, None]], axis=-1)  # (h, d, d + 1)
    bottom = np.concatenate([key_only, constant[:, None]], axis=-1)[:, None, :]  # (h, 1, d + 1)
    return np.concatenate([top, bottom], axis=-2)


def _bilinear_shape(value, what: str, h: int, d_model: int, d_k: int) -> None:
    """A B~ of a shape that names its mistake (no bias terms, the inner product, ...)."""
    D = d_model + 1
    shape = np.shape(value) if isinstance(value, np.ndarray) else None
    shapes = {
        (h, d_model, d_model): (
            "no_bias_terms",
            "a d_model x d_model matrix per head pairs x_i with x_j only, so it has no room "
            "for the terms the biases add. Multiply out (x_i W^Q_a + b^Q_a) · (x_j W^K_a + "
            "b^K_a): some of its terms hold only one of x_i, x_j, one holds neither. The "
            "1 appended to each row is what carries them: the extra row and column.",
        ),
        (h, d_k, d_k): (
            "inner_product",
            "a d_k x d_k matrix per head sits between two d_k-vectors, q_i and k_j; B~_a "
            "must sit between the two rows x~_i and x~_j, which have d_model + 1 entries.",
        ),
        (h, d_model, d_k): (
            "elementwise",
            "that still has the d_k axis. The score sums over the d_k entries of q_i and "
            "k_j; that sum has to happen inside B~_a, leaving (d_model + 1, d_model + 1).",
        ),
        (D, D): (
            "summed_heads",
            "one matrix for all heads. Each head has its own weights and biases, and so its "
            "own B~_a: keep the head axis in front, (h, d_model + 1, d_model + 1).",
        ),
    }
    if shape in shapes and shape != (h, D, D):
        mistake, why = shapes[shape]
        raise Mistake(
            f"{what} returned shape {shape}, expected (h, d_model + 1, d_model + 1) = "
            f"{(h, D, D)}: {why}",
            mistake,
        )


def _bilinear_mistakes(W_Q, W_K, b_Q, b_K, expected, what: str) -> dict:
    """What each catalogued wrong B~ would be for these weights and biases."""
    h, d_k = W_Q.shape[0], W_Q.shape[-1]
    KT = lambda A: np.swapaxes(A, -1, -2)  # noqa: E731
    main = W_Q @ KT(W_K)  # (h, d, d)
    query_only = np.einsum("adk,ak->ad", W_Q, b_K)  # x_i W_Q b_K^T: (h, d)
    key_only = np.einsum("adk,ak->ad", W_K, b_Q)  # b_Q W_K^T x_j^T: (h, d)
    constant = np.sum(b_Q * b_K, axis=-1)  # (h,)
    zero_d, zero_h = np.zeros_like(query_only), np.zeros(h)
    return {
        named(
            "missing_constant",
            f"{what}: entry [a, -1, -1] is 0 in yours. It is what the score gets "
            "from 1 times 1: the term of (x_i W^Q_a + b^Q_a) · (x_j W^K_a + b^K_a) in "
            "which neither x_i nor x_j appears.",
        ): _bilinear_blocks(main, query_only, key_only, zero_h),
        named(
            "missing_query_only_term",
            f"{what}: your last column is 0 apart from its corner. That column meets "
            "x_i on one side and the 1 of x~_j on the other: it holds the term with "
            "x_i but no x_j.",
        ): _bilinear_blocks(main, zero_d, key_only, constant),
        named(
            "missing_key_only_term",
            f"{what}: your last row is 0 apart from its corner. That row meets the 1 "
            "of x~_i on one side and x_j on the other: it holds the term with x_j but "
            "no x_i.",
        ): _bilinear_blocks(main, query_only, zero_d, constant),
        named(
            "cross_terms_swapped",
            f"{what}: your last row and last column hold each other's terms. The "
            "column meets x_i, so it carries the term in which x_i appears (through "
            "W^Q_a); the row meets x_j (through W^K_a).",
        ): _bilinear_blocks(main, key_only, query_only, constant),
        named(
            "one_first",
            f"{what}: you put the appended 1 first, x~ = [1, x]. The question puts it "
            "last, x~ = [x, 1]: the bias terms go in the last row and column.",
        ): np.roll(expected, 1, axis=(1, 2)),
        named(
            "keys_first",
            f"{what}: each head's matrix is transposed: with yours, x~_i B x~_jᵀ "
            "scores key i against query j. The query's side (x~_i) is the rows.",
        ): KT(expected),
        named(
            "query_twice",
            f"{what}: you used the query's weights and bias on both sides. The key "
            "side goes through W_K and b_K.",
        ): answers.head_bilinear_form(W_Q, W_Q, b_Q, b_Q),
        named(
            "scaled",
            f"{what}: you divided by √d_k. The question asks for the raw scores "
            "q_i · k_j; the 1/√d_k scale of lesson 03 comes on top.",
        ): expected / np.sqrt(d_k),
        named(
            "summed_heads",
            f"{what}: every head got the same matrix, the sum over all heads. Each "
            "head a has its own weights and biases.",
        ): np.broadcast_to(expected.sum(0), expected.shape),
    }


def _grade_bilinear(call):
    rng = fresh_rng()
    cases = [(int(rng.integers(3, 5)), int(rng.integers(2, 5))), (1, 3), (2, 4)]
    for h, d_k in cases:
        d_model = h * d_k + (1 if h == 1 else 0)  # d_model > d_k, as for any head
        W_Q, W_K = (rng.normal(0, d_model**-0.5, (h, d_model, d_k)) for _ in range(2))
        b_Q, b_K = (rng.normal(0, 0.5, (h, d_k)) for _ in range(2))
        what = (
            f"head_bilinear_form(W_Q {W_Q.shape}, W_K {W_K.shape}, b_Q {b_Q.shape}, "
            f"b_K {b_K.shape})"
        )
        value = call(W_Q, W_K, b_Q, b_K)
        D = d_model + 1
        _bilinear_shape(value, what, h, d_model, d_k)
        got = as_result_array(value, what, (h, D, D))
        expected = answers.head_bilinear_form(W_Q, W_K, b_Q, b_K)
        compare(
            got,
            expected,
            _bilinear_mistakes(W_Q, W_K, b_Q, b_K, expected, what),
            f"{what}: x~_i B~[a] x~_jᵀ should equal (x_i W^Q_a + b^Q_a) · (x_j W^K_a + b^K_a) "
            "for every x_i, x_j, with x~ = [x, 1].",
        )
    # The two questions the lesson asks next (the largest rank, the entries that cannot change
    # the weights) are left to the learner: the cell after the check measures them.
    return (
        "each head's scores are x~_i B~_a x~_jᵀ with x~ = [x, 1], for every x_i and x_j, with "
        "one matrix per head. Now answer the lesson's two questions from your B~_a before you "
        "run the next cell."
    )


head_bilinear_form = Exercise(
    name="head_bilinear_form",
    allowed=(),
    signature="head_bilinear_form(W_Q, W_K, b_Q, b_K)",
    grade=_grade_bilinear,
    reference=answers.head_bilinear_form,
    hints=[
        "Multiply out one score of head a: (x_i W^Q_a + b^Q_a) · (x_j W^K_a + b^K_a) has four "
        "terms. Sort them by which rows they hold: x_i and x_j, x_i only, x_j only, neither. "
        "In x~_i B~ x~_jᵀ with x~ = [x, 1], the top-left d_model x d_model block meets x_i and "
        "x_j, the last column meets x_i and a 1, the last row a 1 and x_j, the corner 1 and 1.",
        "Write a dot product as a row times a column: (x_i W)(x_j W')ᵀ = x_i [W W'ᵀ] x_jᵀ, "
        "using (AB)ᵀ = BᵀAᵀ. Shorter still: x~ [W; b] = x W + b, where [W; b] is W with the "
        "row b appended under it. Then both sides are plain products with x~.",
        "W_Q1 = np.concatenate([W_Q, b_Q[:, None, :]], axis=1)  (h, d_model + 1, d_k), the "
        "same for W_K1; return W_Q1 @ np.swapaxes(W_K1, -1, -2). Blocks: W_Q W_Kᵀ, column "
        "W_Q b_Kᵀ, row b_Q W_Kᵀ, corner b_Q · b_K.",
    ],
    stars=3,
    title="challenge: each head's scores, biases included, as one matrix B~_a; its rank, and "
    "which of its entries the softmax ignores",
)
