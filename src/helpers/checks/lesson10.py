"""Lesson 10 exercises: measure and explain the induction circuit of a causal model.

* ``previous_token_score(A)`` ★: the mean weight a query puts on the key just before it, one
  score per map of a stack ``(..., n, n)``.
* ``induction_score(A, L)`` ★★: on a sequence whose token i equals token i - L (a segment of
  length L repeated), the mean weight that the queries of the repeats put on the key just after
  the earlier occurrence of their token: ``A[i, i - L + 1]`` for ``i = L .. n - 1``.
* ``induction_qk(W_E, W_V, W_O, W_Q, W_K)`` ★★★ (the challenge): compose the previous-token
  head's ``W_OV = W_V W_O`` with the induction head's ``W_QK``: the ``(vocab, vocab)`` score
  that a query holding token a gives a key whose *previous* token is b.

Every check runs on fresh random causal attention or random weights, never on the lesson's
model.
"""

from __future__ import annotations

import numpy as np

from .answers import lesson10 as answers
from .compare import as_result_array, compare
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction
from .scores import check_scores_per_map

# ----------------------------------------------------------------------------------------------
# helpers for the checks


def _random_causal_attention(rng, shape, sharpness: float = 2.0) -> np.ndarray:
    """Random causal weights of ``shape`` (..., n, n): each row a softmax over keys 0..i."""
    n = shape[-1]
    scores = sharpness * rng.standard_normal(shape)
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _diagonal(A, offset):
    return np.diagonal(A, offset, axis1=-2, axis2=-1)  # (..., n - |offset|): A[i, i + offset]


# ----------------------------------------------------------------------------------------------
# previous_token_score(A)


def _previous_mistakes(A, what):
    n = A.shape[-1]
    mistakes = {
        named(
            "next_token",
            f"{what}: your scores are those of the *next* token (A[i, i + 1]); in a causal map "
            "that diagonal is all zeros. The previous token of query i is key i - 1.",
        ): _diagonal(A, 1).mean(-1),
        named(
            "self_token",
            f"{what}: your scores are the weight each query puts on itself (A[i, i]); the "
            "previous token is one place to the left, key i - 1.",
        ): _diagonal(A, 0).mean(-1),
        named(
            "divides_by_n",
            f"{what}: you divided by n (or paired query 0 with the last key, like np.roll, "
            "which is 0 in a causal map); only the n - 1 queries 1 .. n - 1 have a previous "
            "token, so the mean is over n - 1 of them.",
        ): _diagonal(A, -1).sum(-1) / n,
        named(
            "sum_not_mean",
            f"{what}: that is the sum of the weights A[i, i - 1]; the score is their mean.",
        ): _diagonal(A, -1).sum(-1),
    }
    return mistakes


def _grade_previous_token_score(call):
    rng = fresh_rng()
    n = int(rng.integers(6, 13))
    heads = int(rng.integers(2, 6))
    cases = [
        ("one map", (n, n), np.float64),
        ("a model's stack (layers, heads, n, n)", (2, heads, n, n), np.float64),
        ("a batch of models (batch, layers, heads, n, n), float32", (3, 2, heads, n + 2, n + 2),
         np.float32),
    ]  # fmt: skip
    for label, shape, dtype in cases:
        A = _random_causal_attention(rng, shape).astype(dtype)
        what = f"previous_token_score(A of shape {shape}) on {label}"
        expected = answers.previous_token_score(A.astype(float))
        check_scores_per_map(
            call(A),
            A,
            expected,
            what,
            _previous_mistakes(A.astype(float), what),
            f"{what}: the scores are not the mean of A[i, i - 1] over the queries 1 .. n - 1.",
            one_number="one_number",
            advice=": the mean over the queries only",
        )
    # A pure previous-token head scores exactly 1.
    m = int(rng.integers(4, 9))
    back = np.eye(m, k=-1)
    back[0, 0] = 1.0
    got = as_result_array(call(back), "previous_token_score(a pure previous-token head)", ())
    if not np.isclose(got, 1.0):
        raise Mistake(
            f"previous_token_score of a head that always looks one token back (n={m}) must be "
            f"1 (query 0, which has no token before it, does not count); yours gave "
            f"{float(got):.3f}."
        )
    return (
        "your scores match on fresh random causal maps: one map, a model's stack and a batch "
        "of them (float32 too), and a pure previous-token head scores 1."
    )


previous_token_score = Exercise(
    name="previous_token_score",
    allowed=(),
    signature="previous_token_score(A)",
    grade=_grade_previous_token_score,
    reference=answers.previous_token_score,
    stars=1,
    title="mean weight on the previous token, one score per map of a stack",
    hints=[
        "Query i's previous token is key i - 1; query 0 has none. So the score of one map is "
        "the mean of A[1, 0], A[2, 1], ..., A[n - 1, n - 2].",
        "Those entries are one diagonal of the map, the one just below the main diagonal. For "
        "a stack (..., n, n) take that diagonal of every map and average over its last axis.",
        "np.diagonal(A, -1, axis1=-2, axis2=-1) has shape (..., n - 1): return its .mean(axis=-1).",
    ],
)


# ----------------------------------------------------------------------------------------------
# induction_score(A, L)


def _induction_mistakes(A, L, what):
    n = A.shape[-1]
    q = np.arange(L, n)
    return {
        named(
            "duplicate_token",
            f"{what}: your scores are the weight on the earlier occurrence of the query's own "
            "token (key i - L); an induction head looks at the token *after* it, key i - L + 1, "
            "whose value is the token to predict.",
        ): A[..., q, q - L].mean(-1),
        named(
            "includes_end_of_first_copy",
            f"{what}: your mean includes query L - 1 (and key 0): that query is the last token "
            "of the first copy, it has no earlier occurrence. Only the queries L .. n - 1 of "
            "the repeat count.",
        ): _diagonal(A, -(L - 1)).mean(-1),
        named(
            "two_after",
            f"{what}: you looked two tokens after the earlier occurrence (key i - L + 2); the "
            "next token is one after it, key i - L + 1.",
        ): A[..., q[:-1], q[:-1] - L + 2].mean(-1),
        named(
            "divides_by_n",
            f"{what}: you divided by n; only the n - L queries of the repeat count, so the mean "
            "is over n - L of them.",
        ): A[..., q, q - L + 1].sum(-1) / n,
        named(
            "sum_not_mean",
            f"{what}: that is the sum of the weights A[i, i - L + 1]; the score is their mean.",
        ): A[..., q, q - L + 1].sum(-1),
        named(
            "previous_token",
            f"{what}: that is the previous-token score (A[i, i - 1]); the induction head looks "
            "L - 1 tokens back, just after the earlier copy of the query's token.",
        ): _diagonal(A, -1).mean(-1),
    }


def _grade_induction_score(call):
    rng = fresh_rng()
    cases = []
    for label, lead, dtype in (
        ("one map", (), np.float64),
        ("a model's stack (layers, heads, n, n)", (2, int(rng.integers(2, 6))), np.float64),
        ("float32 heads (h, n, n)", (int(rng.integers(2, 5)),), np.float32),
    ):
        L = int(rng.integers(3, 9))
        n = int(rng.integers(2 * L, 3 * L + 1))  # the segment, repeated, and a part of it again
        cases.append((label, lead + (n, n), L, dtype))
    for label, shape, L, dtype in cases:
        A = _random_causal_attention(rng, shape).astype(dtype)
        what = f"induction_score(A of shape {shape}, L={L}) on {label}"
        expected = answers.induction_score(A.astype(float), L)
        check_scores_per_map(
            call(A, L),
            A,
            expected,
            what,
            _induction_mistakes(A.astype(float), L, what),
            f"{what}: the scores are not the mean of A[i, i - L + 1] over the queries "
            "i = L .. n - 1.",
            one_number="one_number",
        )
    # A perfect induction head on a repeated segment scores exactly 1.
    L = int(rng.integers(3, 8))
    n = 2 * L
    perfect = np.zeros((n, n))
    perfect[np.arange(n), np.arange(n)] = 1.0  # the first copy looks at itself...
    perfect[L:] = 0.0
    perfect[np.arange(L, n), np.arange(L, n) - L + 1] = 1.0  # ...the repeat at the next token
    got = as_result_array(call(perfect, L), "induction_score(a perfect induction head)", ())
    if not np.isclose(got, 1.0):
        raise Mistake(
            f"induction_score of a perfect induction head (L={L}, n={n}: every query of the "
            f"repeat puts all its weight on key i - L + 1) must be 1; yours gave {float(got):.3f}."
        )
    return (
        "your scores match on fresh random causal maps, stacks and float32 heads, with repeats "
        "of different lengths L (some sequences repeat part of the segment a third time), and "
        "a perfect induction head scores 1."
    )


induction_score = Exercise(
    name="induction_score",
    allowed=(),
    signature="induction_score(A, L)",
    grade=_grade_induction_score,
    reference=answers.induction_score,
    stars=2,
    title="mean weight on the token after the earlier occurrence, in a repeat of length L",
    hints=[
        "The sequence repeats with period L: token i equals token i - L for every i >= L. So "
        "the queries that have an earlier occurrence are i = L .. n - 1, and query i's "
        "earlier occurrence is at i - L.",
        "An induction head looks at the token just *after* the earlier occurrence: key "
        "i - L + 1. The score is the mean of A[..., i, i - L + 1] over i = L .. n - 1 (not "
        "the whole diagonal: query L - 1 has no earlier copy).",
        "q = np.arange(L, n); return A[..., q, q - L + 1].mean(axis=-1)",
    ],
)


# ----------------------------------------------------------------------------------------------
# induction_qk(W_E, W_V, W_O, W_Q, W_K): the challenge


def _qk_mistakes(W_E, W_V, W_O, W_Q, W_K, what):
    c = 1.0 / np.sqrt(W_Q.shape[1])
    queries, keys = W_E @ W_Q, W_E @ W_V @ W_O @ W_K
    return {
        named(
            "unscaled",
            f"{what}: the scores are not scaled; attention divides q . k by sqrt(d_head).",
        ): queries @ keys.T,
        named(
            "query_key_swapped",
            f"{what}: your matrix is transposed: row a must be the query's token, column b "
            "the key's previous token ([a, b] = q_a . k_b).",
        ): c * keys @ queries.T,
        named(
            "skips_previous_head",
            f"{what}: your keys come straight from the embedding (W_E W_K), so they hold the "
            "key's own token: that finds the earlier copy itself (a duplicate-token score). The "
            "key must hold its *previous* token, moved there by the layer-0 head: W_E W_V W_O.",
        ): c * queries @ (W_E @ W_K).T,
        named(
            "ov_on_query_side",
            f"{what}: you put the previous-token head on the query side (W_E W_V W_O W_Q): the "
            "query holds its own token, the key holds the token before it.",
        ): c * (W_E @ W_V @ W_O @ W_Q) @ (W_E @ W_K).T,
    }


def _grade_induction_qk(call):
    rng = fresh_rng()
    for label, dtype in (("float64 weights", np.float64), ("float32 weights", np.float32)):
        vocab = int(rng.integers(5, 12))
        d_model = int(rng.integers(6, 13))
        d_head = int(rng.integers(2, 6))
        if d_head == vocab:
            d_head -= 1
        W_E = rng.standard_normal((vocab, d_model))
        W_V, W_Q, W_K = (rng.standard_normal((d_model, d_head)) / np.sqrt(d_model)
                         for _ in range(3))  # fmt: skip
        W_O = rng.standard_normal((d_head, d_model)) / np.sqrt(d_head)
        args = [M.astype(dtype) for M in (W_E, W_V, W_O, W_Q, W_K)]
        what = (
            f"induction_qk(W_E {W_E.shape}, W_V {W_V.shape}, W_O {W_O.shape}, W_Q {W_Q.shape}, "
            f"W_K {W_K.shape}) with {label}"
        )
        exact = [M.astype(float) for M in args]
        expected = answers.induction_qk(*exact)
        got = as_result_array(call(*[M.copy() for M in args]), what, expected.shape)
        compare(
            got,
            expected,
            _qk_mistakes(*exact, what),
            f"{what}: entry [a, b] is not the scaled score between a query holding token a and "
            "a key whose previous token is b.",
            name="scores",
        )
    return (
        "your matrix matches on fresh random weights of several sizes (float32 too): row a "
        "the query's token through W_Q, column b the key's previous token through the "
        "previous-token head's W_V W_O and then W_K, divided by sqrt(d_head)."
    )


induction_qk = Exercise(
    name="induction_qk",
    allowed=(),
    signature="induction_qk(W_E, W_V, W_O, W_Q, W_K)",
    grade=_grade_induction_qk,
    reference=answers.induction_qk,
    stars=3,
    title="challenge: compose the previous-token head's W_OV with the induction head's W_QK",
    hints=[
        "Follow one token through each side. The query at position i holds (mostly) its own "
        "token a: its query vector is the embedding row W_E[a] times W_Q. The key at position "
        "j must know the token *before* it, b, which the layer-0 head copied there.",
        "The layer-0 head copies W_E[b] into position j as W_E[b] W_V W_O (its OV circuit: "
        "value, then output). The induction head reads that with W_K. Do it for every token at "
        "once: rows of W_E are the tokens.",
        "queries = W_E @ W_Q; keys = W_E @ W_V @ W_O @ W_K; return queries @ keys.T / "
        "np.sqrt(W_Q.shape[1])",
    ],
)


# ----------------------------------------------------------------------------------------------
# Predictions

phase_prediction = Prediction(
    name="phase_prediction",
    question=(
        "Training on sequences with a repeat, how does the loss on the repeated tokens fall: "
        "'steadily' (a little every step) or 'suddenly' (slowly for a while, then a drop of "
        "more than a nat within a few dozen steps)?"
    ),
    answer=answers.phase_prediction,
    choices=["steadily", "suddenly"],
    wrong={
        "steadily": (
            "It is tempting to expect gradient descent to improve a little at every step. Here "
            "the loss on repeats falls slowly for a couple of hundred steps, then by about two "
            "nats within fifty: the rows printed around the black line."
        ),
    },
    explanation=(
        "The curve shows a slow stretch, then a drop: a phase change (Olsson et al. 2022 report "
        "one early in the training of every model with more than one layer). The "
        "previous-token and induction scores rise in the same window, and the lesson measures "
        "how much the model depends on its previous-token head before and after the drop."
    ),
)

ablation_prediction = Prediction(
    name="ablation_prediction",
    question=(
        "Mean-ablate the layer-0 previous-token head (its output replaced by its average). The "
        "loss on the repeats, 0.3 nats or so with the whole model, becomes: 'below 0.5', "
        "'0.5 to 2', or 'above 2' nats?"
    ),
    answer=answers.ablation_prediction,
    choices=["below 0.5", "0.5 to 2", "above 2"],
    wrong={
        "below 0.5": (
            "It is tempting to think that one head among eight is too small to matter, or that "
            "the others cover for it. The induction heads find the match through what this head "
            "wrote; the next cells measure how much of the loss comes back without it."
        ),
        "0.5 to 2": (
            "More than that: the induction heads depend on this one head. Without it they no "
            "longer find the match (their scores are printed below)."
        ),
    },
    explanation=(
        "The printed ablation: without the previous-token head the loss on repeats is above 2 "
        "nats. Not all the way back to log 64: the cells below measure what is left."
    ),
)

composition_prediction = Prediction(
    name="composition_prediction",
    question=(
        "The layer-1 heads read the previous-token head's output through their queries, keys "
        "and values. Which path does the copying need most: 'queries', 'keys' or 'values'?"
    ),
    answer=answers.composition_prediction,
    choices=["queries", "keys", "values"],
    wrong={
        "queries": (
            "The query holds the current token itself, from the embedding: it does not need "
            "another head to know it. The table shows that the queries use the previous token "
            "too, but less."
        ),
        "values": (
            "The value says what to copy: the token at the key's own position, which is in the "
            "embedding there already. What needs the previous-token head is *finding* the "
            "position: a key must say which token came before it."
        ),
    },
    explanation=(
        "Keys: a key must say which token came before it, so that the query holding the same "
        "token finds it (K-composition, Elhage et al. 2021). Patching the previous-token head "
        "out of the keys alone costs more than out of the queries, and out of the values "
        "almost nothing; neither path alone costs what the whole ablation does."
    ),
)
