"""Lesson 09 exercises: measure what trained heads do.

* ``head_offset_score(A, offset)`` ★★: the mean weight a query puts on the key ``offset``
  places away, for one map ``(n, n)`` or a stack ``(..., n, n)`` (one score per map).
* ``most_previous_token_head(attentions)`` ★: over a list of sentences' attention stacks
  ``(layers, heads, n_s, n_s)``, the ``(layer, head)`` whose previous-token score, averaged
  over the sentences, is highest.
* ``attention_distance(A)`` ★: how far a head looks, in tokens (the lesson gives the formula,
  so it is an exercise in applying it, not a ★★★ design question).

Every check runs on fresh random attention (rows summing to 1), never on the lesson's model.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .answers import lesson09 as answers
from .compare import as_result_array, close, compare
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction
from .scores import check_scores_per_map

# ----------------------------------------------------------------------------------------------
# helpers for the checks


def _random_attention(rng, shape, sharpness: float = 2.0) -> np.ndarray:
    """Random weights of ``shape`` (..., n, n), each row a softmax (sums to 1)."""
    scores = sharpness * rng.standard_normal(shape)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _diagonal(A, offset):
    return np.diagonal(A, offset, axis1=-2, axis2=-1)  # (..., n - |offset|): A[i, i + offset]


# ----------------------------------------------------------------------------------------------
# head_offset_score(A, offset)


def _offset_mistakes(A, offset, what):
    n = A.shape[-1]
    wrapped = A[..., np.arange(n), (np.arange(n) + offset) % n]  # A[i, (i + offset) % n]
    diag = _diagonal(A, offset)
    return {
        named(
            "wrong_direction",
            f"{what}: your scores are those of offset {-offset}: A[i, i + offset] is the key "
            f"offset places to the right of query i (offset -1 = the token before).",
        ): _diagonal(A, -offset).mean(-1),
        named(
            "wraps_around",
            f"{what}: your scores wrap around the ends (like np.roll): the first queries have no "
            "key offset places away and must be left out, not paired with the other end.",
        ): wrapped.mean(-1),
        named(
            "divides_by_n",
            f"{what}: you divided by n; only n - |offset| queries have a key offset places away, "
            "so the mean divides by n - |offset|.",
        ): diag.sum(-1) / n,
        named(
            "sum_not_mean",
            f"{what}: that is the sum of the weights A[i, i + offset]; the score is their mean.",
        ): diag.sum(-1),
        named(
            "ignores_offset",
            f"{what}: your scores are the main diagonal's (offset 0) whatever the offset; use the "
            "diagonal offset places away (np.diagonal(A, offset, ...)).",
        ): _diagonal(A, 0).mean(-1),
        named(
            "max_not_mean",
            f"{what}: that is the largest weight on that diagonal; the score is the mean.",
        ): diag.max(-1),
    }


def _distinguishing_attention(rng, shape, offset, what, tries: int = 100):
    """Random attention maps on which every named mistake that differs from the right answer
    also differs from every other one (a tiny corner weight made wraps_around read as
    divides_by_n), so the mistake named is the one made."""
    for _ in range(tries):
        A = _random_attention(rng, shape)
        right = answers.head_offset_score(A, offset)
        values = [v for v in _offset_mistakes(A, offset, what).values() if not close(v, right)]
        if all(not close(a, b) for k, a in enumerate(values) for b in values[k + 1 :]):
            return A
    return A


def _diagonal_of_first_axes(A, offset, value, what):
    """``np.diagonal(A, offset)`` without ``axis1=-2, axis2=-1`` runs along the first two axes
    of a stack (layers and heads), not along each map: name that, not only its shape."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short first axis gives an empty diagonal: NaN means
        along_first = np.diagonal(A, offset)  # (n, n, ...): A[i, i + offset, ...]
        candidates = [along_first.mean(axis=-1), along_first.mean()]
    try:
        got = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return
    for wrong in candidates:
        if got.shape == wrong.shape and np.all(np.isfinite(wrong)) and np.allclose(got, wrong):
            raise Mistake(
                named(
                    "diagonal_of_first_axes",
                    f"{what}: you took np.diagonal(A, offset) without saying which axes: on a "
                    f"stack of maps it runs along the first two axes (here {A.shape[:2]}), not "
                    "along each (n, n) map. Pass axis1=-2, axis2=-1: np.diagonal(A, offset, "
                    "axis1=-2, axis2=-1) has shape (..., n - |offset|).",
                )
            )


def _grade_head_offset_score(call):
    rng = fresh_rng()
    n = int(rng.integers(6, 11))
    layers, heads = int(rng.integers(2, 4)), int(rng.integers(3, 6))
    cases = [
        ("one map", (n, n), -1, np.float64),
        ("a model's stack (layers, heads, n, n)", (layers, heads, n, n), 2, np.float64),
        ("a layer's heads (h, n, n), float32", (heads, n, n), -3, np.float32),
        ("offset 0 (the token itself)", (heads, n, n), 0, np.float64),
        ("the last possible offset", (n, n), n - 1, np.float64),
    ]
    for label, shape, offset, dtype in cases:
        what = f"head_offset_score(A of shape {shape}, offset={offset}) on {label}"
        A = _distinguishing_attention(rng, shape, offset, what).astype(dtype)
        expected = answers.head_offset_score(A.astype(float), offset)
        value = call(A, offset)
        if len(shape) > 2:
            _diagonal_of_first_axes(A.astype(float), offset, value, what)
        check_scores_per_map(
            value,
            A,
            expected,
            what,
            _offset_mistakes(A.astype(float), offset, what),
            f"{what}: the scores are not the mean of A[i, i + offset] over the queries that "
            "have such a key.",
            one_number="averaged_over_heads",
            advice=": take the mean over the last axis only",
        )
    return (
        "your scores match on fresh random attention: one map and stacks (layers, heads), "
        "offsets before, after and 0, the farthest offset, float32 too."
    )


head_offset_score = Exercise(
    name="head_offset_score",
    ready_made="helpers.pretrained.heads.head_offset_score",
    allowed=(),  # NumPy only: helpers.pretrained.head_offset_score is the answer
    signature="head_offset_score(A, offset)",
    grade=_grade_head_offset_score,
    reference=answers.head_offset_score,
    stars=2,
    title="mean weight on the token offset places away, for one map or a stack of maps",
    hints=[
        "Write it for one (n, n) map first: which entries A[i, j] have j = i + offset, and "
        "for which i does that key exist (0 <= i + offset < n)?",
        "Those entries form one diagonal of the map: offset 0 is the main one, offset -1 the "
        "one just below it. Average them. For a stack (..., n, n) do the same for each map: "
        "the result has shape (...).",
        "np.diagonal(A, offset, axis1=-2, axis2=-1) gives shape (..., n - |offset|): return "
        "its .mean(axis=-1).",
    ],
)


# ----------------------------------------------------------------------------------------------
# most_previous_token_head(attentions)


def _argmax2(M):
    return tuple(int(i) for i in np.unravel_index(np.argmax(M), M.shape))


def _plant(rng, layers, heads, lengths):
    """Random attention for each sentence with planted heads: previous-token (the answer),
    next-token, self, one that looks back only in the first sentence, one that never does."""
    cells = rng.permutation([(k, a) for k in range(layers) for a in range(heads)])
    P, N, S, F, Z = (tuple(int(v) for v in c) for c in cells[:5])
    attentions = []
    for s, n in enumerate(lengths):
        A = _random_attention(rng, (layers, heads, n, n), sharpness=1.0)

        def blend(cell, offset, amount, A=A, n=n):
            target = np.eye(n, k=offset)
            empty = target.sum(axis=1) == 0  # a first (or last) query has no such key:
            target[empty] = np.eye(n)[empty]  # it looks at itself
            A[cell] = amount * target + (1 - amount) * A[cell]

        blend(P, -1, 0.55)
        blend(N, 1, 0.75)
        blend(S, 0, 0.75)
        if s == 0:
            blend(F, -1, 0.95)
        A[Z] *= 1 - np.eye(n, k=-1)  # no weight at all on the previous token...
        A[Z] /= A[Z].sum(axis=-1, keepdims=True)  # ...rows renormalised
        attentions.append(A)
    return attentions


def _previous_head_mistakes(attentions):
    right = answers.most_previous_token_head(attentions)
    layer, head = right
    heads = attentions[0].shape[1]

    def mean_score(offset):
        return np.mean([_diagonal(A, offset).mean(-1) for A in attentions], axis=0)

    return right, {
        "next_token": (
            _argmax2(mean_score(1)),
            "that is the most *next*-token head (offset +1); the previous token of query i is "
            "key i - 1 (offset -1).",
        ),
        "self_token": (
            _argmax2(mean_score(0)),
            "that head looks at the token itself (offset 0); the previous token is offset -1.",
        ),
        "least": (
            tuple(
                int(i) for i in np.unravel_index(np.argmin(mean_score(-1)), mean_score(-1).shape)
            ),
            "that is the head with the *lowest* previous-token score: argmax, not argmin.",
        ),
        "first_sentence_only": (
            _argmax2(_diagonal(attentions[0], -1).mean(-1)),
            "that head wins in the first sentence only; average each head's score over all the "
            "sentences.",
        ),
        "head_layer_swapped": (
            (head, layer),
            "you returned (head, layer); return (layer, head), as in attention[layer, head].",
        ),
        "one_based": (
            (layer + 1, head + 1),
            "you counted from 1; return 0-based indices, as in attention[layer, head].",
        ),
        "flat_index": (
            layer * heads + head,
            "you returned the flat index of np.argmax; turn it into (layer, head) with "
            "np.unravel_index(index, shape).",
        ),
    }


def _as_pair(value, what):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if value is None:
        raise Mistake(
            f"{what} returned None; did you forget the `return` statement?", "returned_none"
        )
    try:
        pair = tuple(value)
    except TypeError:
        raise Mistake(
            f"{what} returned a {type(value).__name__}; return the pair (layer, head)",
            "not_a_pair",
        ) from None
    if len(pair) != 2 or not all(
        isinstance(v, numbers.Integral) or (isinstance(v, np.ndarray) and v.ndim == 0) for v in pair
    ):
        raise Mistake(f"{what} returned {value!r}; return two whole numbers (layer, head)",
                      "not_a_pair")  # fmt: skip
    return tuple(int(v) for v in pair)


def _grade_most_previous_token_head(call):
    rng = fresh_rng()
    for _case in range(3):
        for _ in range(100):  # until every catalogued mistake gives its own answer
            layers, heads = int(rng.integers(3, 6)), int(rng.integers(5, 9))
            lengths = [int(v) for v in rng.choice(np.arange(6, 13), size=3, replace=False)]
            attentions = _plant(rng, layers, heads, lengths)
            right, mistakes = _previous_head_mistakes(attentions)
            answers = [right] + [a for a, _ in mistakes.values()]
            if len(set(answers)) == len(answers):
                break
        shapes = ", ".join(str(A.shape) for A in attentions)
        what = f"most_previous_token_head on {len(attentions)} sentences of shapes {shapes}"
        got = _as_pair(call([A.copy() for A in attentions]), what)
        if got == right:
            continue
        for mistake_id, (answer, message) in mistakes.items():
            if got == answer:
                raise Mistake(named(mistake_id, f"{what} returned {got}: {message}"))
        raise Mistake(
            f"{what} returned {got}; expected {right}, the (layer, head) with the highest "
            "previous-token score (offset -1) averaged over the sentences."
        )
    return (
        "you find the previous-token head on fresh random models (3 to 5 layers, 5 to 8 heads, "
        "sentences of different lengths), past decoys that look next, at themselves, or back "
        "in one sentence only."
    )


most_previous_token_head = Exercise(
    name="most_previous_token_head",
    # NumPy only: helpers.pretrained.head_offset_score (shown above it) assembles the answer in
    # one line; the learner's own head_offset_score from Exercise 1 is their code, and allowed.
    allowed=(),
    signature="most_previous_token_head(attentions)",
    grade=_grade_most_previous_token_head,
    reference=answers.most_previous_token_head,
    stars=1,
    title="find the (layer, head) that looks most at the previous token",
    hints=[
        "For each sentence's attention (layers, heads, n, n), compute every head's "
        "previous-token score at once, as in Exercise 1 (your head_offset_score(A, -1)): shape "
        "(layers, heads).",
        "Stack those arrays (one per sentence) and take the mean over the sentences: one "
        "(layers, heads) table. The answer is the position of its largest entry.",
        "mean = np.mean([np.diagonal(A, -1, axis1=-2, axis2=-1).mean(axis=-1) for A in "
        "attentions], axis=0); layer, head = np.unravel_index(np.argmax(mean), mean.shape); "
        "return int(layer), int(head)",
    ],
)


# ----------------------------------------------------------------------------------------------
# attention_distance(A)


def _distance_mistakes(A, what):
    n = A.shape[-1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    lead = A.shape[:-2]
    return {
        named(
            "signed_distance",
            f"{what}: you used i - j (or j - i) without the absolute value, so looking back and "
            "looking ahead cancel out; the distance is |i - j|.",
        ): (A * (i - j)).sum(-1).mean(-1),
        named(
            "signed_distance",
            f"{what}: you used j - i without the absolute value, so looking back and looking "
            "ahead cancel out; the distance is |i - j|.",
        ): (A * (j - i)).sum(-1).mean(-1),
        named(
            "ignores_weights",
            f"{what}: your distances do not depend on the weights: weight each |i - j| by A[i, j].",
        ): np.broadcast_to(np.abs(i - j).mean(), lead),
        named(
            "squared_distance",
            f"{what}: you used (i - j)^2; the distance in tokens is |i - j|.",
        ): (A * (i - j) ** 2).sum(-1).mean(-1),
        named(
            "summed_queries",
            f"{what}: you summed over the queries; take the mean over them (one number per "
            "map that does not grow with n).",
        ): (A * np.abs(i - j)).sum(-1).sum(-1),
        named(
            "key_position",
            f"{what}: that is the mean key position sum_j A[i, j] j, not the distance "
            "from the query |i - j|.",
        ): (A * j).sum(-1).mean(-1),
        named(
            "normalised_by_n",
            f"{what}: you divided by n; return the distance in tokens.",
        ): (A * np.abs(i - j)).sum(-1).mean(-1) / n,
    }


def _grade_attention_distance(call):
    rng = fresh_rng()
    n = int(rng.integers(5, 12))
    heads = int(rng.integers(2, 6))
    cases = [
        ("one map", (n, n), np.float64),
        ("a stack (layers, heads, n, n)", (2, heads, n, n), np.float64),
        ("float32 heads", (heads, n + 3, n + 3), np.float32),
    ]
    for label, shape, dtype in cases:
        A = _random_attention(rng, shape).astype(dtype)
        what = f"attention_distance(A of shape {shape}) on {label}"
        expected = answers.attention_distance(A.astype(float))
        got = as_result_array(call(A), what, expected.shape)
        compare(
            got,
            expected,
            _distance_mistakes(A.astype(float), what),
            f"{what}: the result is not the mean over queries of sum_j A[i, j] |i - j|.",
            name="distance",
        )
    # A head that only looks one token back is at distance 1 (the first query looks at itself).
    m = int(rng.integers(5, 10))
    back = np.eye(m, k=-1)
    back[0, 0] = 1.0
    got = as_result_array(call(back), "attention_distance(a previous-token head)", ())
    if not np.isclose(got, (m - 1) / m):
        raise Mistake(
            f"attention_distance of a head that looks one token back (n={m}) is {(m - 1) / m:.3f}"
            f" (every query but the first at distance 1); yours gave {float(got):.3f}."
        )
    return (
        "your distances match on fresh random maps and stacks, float32 too, and a pure "
        "previous-token head comes out at (n - 1)/n tokens."
    )


attention_distance = Exercise(
    name="attention_distance",
    ready_made="helpers.pretrained.heads.attention_distance",
    allowed=(),  # NumPy only: helpers.pretrained.attention_distance is the answer
    signature="attention_distance(A)",
    grade=_grade_attention_distance,
    reference=answers.attention_distance,
    stars=1,
    title="how far a head looks, in tokens, for any stack of maps",
    hints=[
        "For one query i, the weights A[i, :] are a probability distribution over the keys j; "
        "the expected distance is sum_j A[i, j] |i - j|. Then average over the queries.",
        "Build the (n, n) matrix of distances once with broadcasting: positions[:, None] - "
        "positions[None, :], then np.abs. It broadcasts against A of shape (..., n, n).",
        "distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]); return (A * "
        "distance).sum(axis=-1).mean(axis=-1)",
    ],
)


# ----------------------------------------------------------------------------------------------
# Prediction before the grid of 72 maps

sink_prediction = Prediction(
    name="sink_prediction",
    question=(
        "In how many of the model's 72 heads do most tokens put their largest weight on [CLS] "
        "or [SEP] rather than on an ordinary word: 'few' (under 12), 'some' (12 to 36) or "
        "'most' (over 36)?"
    ),
    answer=answers.sink_prediction,
    choices=["few", "some", "most"],
    wrong={
        "few": (
            "It is tempting to expect a trained head to look at words, since they carry the "
            "meaning. Many heads instead put their weight on [CLS] or [SEP], two tokens that "
            "every sentence has."
        ),
        "some": (
            "More heads than that do it: only a few heads let most tokens weigh a word the most."
        ),
    },
    explanation=(
        "The count printed under the grid, over a set of sentences, is well over 36: in most of "
        "this model's heads, most tokens give [CLS] or [SEP] more weight than any word. Such "
        "tokens are called attention sinks. Section 4 measures how much weight they take, and "
        "how little of what a head adds comes from them."
    ),
)
