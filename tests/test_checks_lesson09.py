"""Lesson 09's checks accept every correct implementation and name each catalogued mistake."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import checks
from helpers.checks.lesson09 import _plant, _previous_head_mistakes, _random_attention
from helpers.pretrained import attention_distance as helpers_attention_distance
from helpers.pretrained import head_offset_score as helpers_head_offset_score

# --------------------------------------------------------------------------- head_offset_score

offset_check = checks.head_offset_score.check


def offset_loops(A, offset):
    A = np.asarray(A)
    n = A.shape[-1]
    out = np.zeros(A.shape[:-2])
    for index in np.ndindex(*A.shape[:-2]):
        weights = [A[index][i, i + offset] for i in range(n) if 0 <= i + offset < n]
        out[index] = sum(weights) / len(weights)
    return out


def offset_fancy_indexing(A, offset):
    n = A.shape[-1]
    i = np.arange(max(0, -offset), min(n, n - offset))
    return A[..., i, i + offset].mean(axis=-1)


def offset_eye_mask(A, offset):
    n = A.shape[-1]
    mask = np.eye(n, k=offset)
    return (A * mask).sum(axis=(-2, -1)) / mask.sum()


def offset_trace(A, offset):
    n = A.shape[-1]
    return np.trace(A, offset, axis1=-2, axis2=-1) / (n - abs(offset))


@pytest.mark.parametrize(
    "answer",
    [
        offset_loops,
        offset_fancy_indexing,
        offset_eye_mask,
        offset_trace,
    ],
)
def test_head_offset_score_accepts_correct_implementations(answer):
    result = offset_check(answer)
    assert result.passed is True, result.message
    assert result.exercise == "head_offset_score" and result.mistake is None


def diag(A, k):
    return np.diagonal(A, k, axis1=-2, axis2=-1)


OFFSET_MISTAKES = {
    "wrong_direction": (lambda A, o: diag(A, -o).mean(-1), "offset places to the right"),
    "wraps_around": (
        lambda A, o: np.roll(A, -o, axis=-1).diagonal(0, -2, -1).mean(-1),
        "wrap around the ends",
    ),
    "divides_by_n": (lambda A, o: diag(A, o).sum(-1) / A.shape[-1], "divided by n"),
    "sum_not_mean": (lambda A, o: diag(A, o).sum(-1), "that is the sum"),
    "ignores_offset": (lambda A, o: diag(A, 0).mean(-1), "main diagonal"),
    "diagonal_of_first_axes": (lambda A, o: np.diagonal(A, o).mean(-1), "axis1=-2, axis2=-1"),
    "max_not_mean": (lambda A, o: diag(A, o).max(-1), "the largest weight"),
    "averaged_over_heads": (lambda A, o: diag(A, o).mean(), "one number, the mean over every map"),
}


@pytest.mark.parametrize("mistake", sorted(OFFSET_MISTAKES))
def test_head_offset_score_names_each_mistake(mistake):
    answer, words = OFFSET_MISTAKES[mistake]
    result = offset_check(answer)
    assert result.passed is False, result.message
    assert result.mistake == f"head_offset_score.{mistake}", result
    assert words in result.message, result.message


def test_head_offset_score_stub_and_hard_coded_answers():
    def stub(A, offset):
        raise NotImplementedError

    assert offset_check(stub).passed is None
    assert offset_check(lambda A, offset: 0.5).passed is False
    assert len(checks.head_offset_score._hints) >= 3 and checks.head_offset_score.stars == 2


# ----------------------------------------------------------------- most_previous_token_head

head_check = checks.most_previous_token_head.check


def head_loops(attentions):
    layers, heads = attentions[0].shape[:2]
    best, where = -1.0, None
    for k in range(layers):
        for a in range(heads):
            total = 0.0
            for A in attentions:
                n = A.shape[-1]
                total += sum(A[k, a, i, i - 1] for i in range(1, n)) / (n - 1)
            if total / len(attentions) > best:
                best, where = total / len(attentions), (k, a)
    return where


def head_with_own_offset_score(attentions):
    # The learner's own head_offset_score from Exercise 1 is their code: allowed.
    mean = np.mean([offset_fancy_indexing(A, -1) for A in attentions], axis=0)
    return np.unravel_index(np.argmax(mean), mean.shape)  # a tuple of NumPy integers


def head_float32_copies(attentions):
    stack = [np.array(A, dtype=np.float32) for A in attentions]  # copies, in float32
    mean = np.mean([np.diagonal(A, -1, -2, -1).mean(-1, dtype=np.float64) for A in stack], axis=0)
    layer, head = divmod(int(np.argmax(mean)), mean.shape[1])
    return [layer, head]  # a list


def head_as_array(attentions):
    total = sum(np.trace(A, -1, axis1=-2, axis2=-1) / (A.shape[-1] - 1) for A in attentions)
    return np.argwhere(total == total.max())[0]  # an array [layer, head]


@pytest.mark.parametrize(
    "answer",
    [head_loops, head_with_own_offset_score, head_as_array, head_float32_copies],
)
def test_most_previous_token_head_accepts_correct_implementations(answer):
    result = head_check(answer)
    assert result.passed is True, result.message


def scores(attentions, offset):
    return np.mean([diag(A, offset).mean(-1) for A in attentions], axis=0)


def argmax2(M):
    return tuple(int(v) for v in np.unravel_index(np.argmax(M), M.shape))


def right(attentions):
    return argmax2(scores(attentions, -1))


HEAD_MISTAKES = {
    "next_token": (lambda As: argmax2(scores(As, 1)), "next"),
    "self_token": (lambda As: argmax2(scores(As, 0)), "token itself"),
    "least": (
        lambda As: np.unravel_index(np.argmin(scores(As, -1)), scores(As, -1).shape),
        "argmin",
    ),
    "first_sentence_only": (lambda As: argmax2(diag(As[0], -1).mean(-1)), "first sentence only"),
    "head_layer_swapped": (lambda As: right(As)[::-1], "(head, layer)"),
    "one_based": (lambda As: tuple(v + 1 for v in right(As)), "counted from 1"),
    "flat_index": (lambda As: int(np.argmax(scores(As, -1))), "np.unravel_index"),
}


@pytest.mark.parametrize("mistake", sorted(HEAD_MISTAKES))
def test_most_previous_token_head_names_each_mistake(mistake):
    answer, words = HEAD_MISTAKES[mistake]
    result = head_check(answer)
    assert result.passed is False, result.message
    assert result.mistake == f"most_previous_token_head.{mistake}", result
    assert words in result.message, result.message


def test_most_previous_token_head_may_not_be_assembled_from_the_helper_shown_above_it():
    # helpers.pretrained.head_offset_score is printed just above the exercise: NumPy only.
    def head_with_helpers(attentions):
        mean = np.mean([helpers_head_offset_score(A, -1) for A in attentions], axis=0)
        return np.unravel_index(np.argmax(mean), mean.shape)

    result = head_check(head_with_helpers)
    assert result.mistake == "most_previous_token_head.calls_helper", result
    assert checks.most_previous_token_head.allowed == ()
    assert checks.head_offset_score.allowed == () == checks.attention_distance.allowed


def test_most_previous_token_head_other_answers():
    def stub(attentions):
        raise NotImplementedError

    assert head_check(stub).passed is None
    assert head_check(lambda As: (0, 0)).passed is False
    assert head_check(lambda As: "layer 0").mistake == "most_previous_token_head.not_a_pair"
    assert head_check(lambda As: None).mistake == "most_previous_token_head.returned_none"


def test_planted_decoys_give_distinct_answers():
    rng = np.random.default_rng(0)
    for _ in range(20):
        attentions = _plant(rng, 4, 6, [6, 8, 11])
        for A in attentions:
            np.testing.assert_allclose(A.sum(-1), 1)
        answer, mistakes = _previous_head_mistakes(attentions)
        planted_right = right(attentions)
        assert answer == planted_right
        assert mistakes["next_token"][0] != answer and mistakes["self_token"][0] != answer


# --------------------------------------------------------------------------- attention_distance

distance_check = checks.attention_distance.check


def distance_loops(A):
    A = np.asarray(A)
    n = A.shape[-1]
    out = np.zeros(A.shape[:-2])
    for index in np.ndindex(*A.shape[:-2]):
        out[index] = np.mean([sum(A[index][i, j] * abs(i - j) for j in range(n)) for i in range(n)])
    return out


def distance_einsum(A):
    n = A.shape[-1]
    D = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return np.einsum("...ij,ij->...", A, D) / n


def distance_by_diagonals(A):
    n = A.shape[-1]
    total = sum(abs(k) * np.trace(A, k, axis1=-2, axis2=-1) for k in range(-n + 1, n))
    return total / n


@pytest.mark.parametrize(
    "answer",
    [
        distance_loops,
        distance_einsum,
        distance_by_diagonals,
    ],
)
def test_attention_distance_accepts_correct_implementations(answer):
    result = distance_check(answer)
    assert result.passed is True, result.message


def ij(A):
    n = A.shape[-1]
    return np.arange(n)[:, None], np.arange(n)[None, :]


DISTANCE_MISTAKES = {
    "signed_distance": (lambda A: (A * np.subtract(*ij(A))).sum(-1).mean(-1), "absolute value"),
    "ignores_weights": (
        lambda A: np.full(A.shape[:-2], np.abs(np.subtract(*ij(A))).mean()),
        "do not depend on the weights",
    ),
    "squared_distance": (lambda A: (A * np.subtract(*ij(A)) ** 2).sum(-1).mean(-1), "(i - j)^2"),
    "summed_queries": (lambda A: (A * np.abs(np.subtract(*ij(A)))).sum((-2, -1)), "summed"),
    "key_position": (lambda A: (A * ij(A)[1]).sum(-1).mean(-1), "mean key position"),
    "normalised_by_n": (
        lambda A: (A * np.abs(np.subtract(*ij(A)))).sum(-1).mean(-1) / A.shape[-1],
        "divided by n",
    ),
}


@pytest.mark.parametrize("mistake", sorted(DISTANCE_MISTAKES))
def test_attention_distance_names_each_mistake(mistake):
    answer, words = DISTANCE_MISTAKES[mistake]
    result = distance_check(answer)
    assert result.passed is False, result.message
    assert result.mistake == f"attention_distance.{mistake}", result
    assert words in result.message, result.message


def test_attention_distance_gives_its_formula_so_it_is_one_star():
    # The lesson states sum_j A_ij |i - j| averaged over the queries: applying it is a ★.
    source = (Path(__file__).parents[1] / "solutions" / "09_real_model.py").read_text("utf-8")
    assert r"\sum_j A_{ij}\,|i - j|" in source and "Challenge ★★★" not in source
    assert checks.attention_distance.stars == 1
    assert checks.attention_distance.lesson == "09"


def test_random_attention_rows_sum_to_one():
    A = _random_attention(np.random.default_rng(1), (2, 3, 5, 5))
    np.testing.assert_allclose(A.sum(-1), 1)


# --------------------------------------------------------------------------- the prediction


def test_sink_prediction_explains_either_way():
    p = checks.sink_prediction
    assert p.check("most").passed is True
    wrong = p.check("few")
    assert wrong.passed is False and wrong.mistake == "sink_prediction.picked_few"
    assert p.check(None).passed is None


def test_every_lesson_09_exercise_has_three_hints_and_stars():
    lesson = [e for e in checks.catalogue() if e.lesson == "09"]
    names = {e.name for e in lesson}
    assert {"head_offset_score", "most_previous_token_head", "attention_distance"} <= names
    for exercise in lesson:
        if isinstance(exercise, checks.Exercise):
            assert len(exercise._hints) >= 3 and exercise.stars in (1, 2, 3)


@pytest.mark.parametrize("guess", ["few", "some"])
def test_sink_prediction_wrong_choices_read_as_whole_sentences(guess):
    message = checks.sink_prediction.check(guess).message
    overlooked = checks.sink_prediction.wrong[guess]
    # Each text is whole sentences: a capital first, a full stop last, no comma left hanging.
    assert overlooked[0].isupper() and overlooked.endswith("."), overlooked
    assert overlooked in message
    assert not re.search(r",\s*$|,\s+[A-Z]", overlooked), overlooked
    assert not re.search(r",\s+The count", message), message  # the old run-on
    after_answer = re.split(r"the answer is '?most'?\. ", message, maxsplit=1)[1]
    sentences = re.split(r"(?<=\.)\s+", after_answer)
    assert all(s[0].isupper() and s.endswith(".") for s in sentences), sentences


def test_sink_prediction_is_asked_before_any_trained_weight_is_printed():
    source = (Path(__file__).parents[1] / "solutions" / "09_real_model.py").read_text("utf-8")
    asked = source.index("checks.sink_prediction.check(")
    assert asked < source.index("row = trace.attention[0, :, cat]")  # Reason 2's table
    assert asked < source.index("AttentionGrid(")


# --------------------------------------------------------------------------- the sweep table
# tests/test_checks_sweep.py runs these on seeded draws: every correct style passes on every
# draw, every named mistake is named right on >= 99 % of draws.


def offset_float32_copy(A, offset):
    A = np.asarray(A, dtype=np.float64).copy()  # a copy of the input, as many answers make
    n = A.shape[-1]
    rows = range(max(0, -offset), min(n, n - offset))
    return np.stack([A[..., i, i + offset] for i in rows], axis=-1).astype(np.float32).mean(-1)


def distance_float32(A):
    A = np.array(A, dtype=np.float32)
    n = A.shape[-1]
    positions = np.arange(n, dtype=np.float32)
    return (A * np.abs(positions[:, None] - positions)).sum(-1).mean(-1)


SWEEP = {
    "head_offset_score": {
        "correct": [
            offset_loops,
            offset_fancy_indexing,
            offset_eye_mask,
            offset_trace,
            offset_float32_copy,
        ],
        "mistakes": {
            **{name: answer for name, (answer, _) in OFFSET_MISTAKES.items()},
            "calls_helper": lambda A, offset: helpers_head_offset_score(A, offset),
        },
    },
    "most_previous_token_head": {
        "correct": [head_loops, head_with_own_offset_score, head_as_array, head_float32_copies],
        "mistakes": {
            **{name: answer for name, (answer, _) in HEAD_MISTAKES.items()},
            "not_a_pair": lambda As: "layer 0",
            "returned_none": lambda As: None,
            "calls_helper": lambda As: argmax2(
                np.mean([helpers_head_offset_score(A, -1) for A in As], axis=0)
            ),
        },
    },
    "attention_distance": {
        "correct": [distance_loops, distance_einsum, distance_by_diagonals, distance_float32],
        "mistakes": {
            **{name: answer for name, (answer, _) in DISTANCE_MISTAKES.items()},
            "calls_helper": lambda A: helpers_attention_distance(A),
        },
    },
}


def test_every_exercise_prompt_of_lesson_09_is_a_markdown_cell():
    # Exercise 3's prompt once fell into the code cell above it, as comments.
    notebook = json.loads(
        (Path(__file__).parents[1] / "solutions" / "09_real_model.ipynb").read_text("utf-8")
    )
    headings = [
        (cell["cell_type"], line)
        for cell in notebook["cells"]
        for line in "".join(cell["source"]).splitlines()
        if "### Exercise" in line
    ]
    assert len(headings) == 3, headings
    assert all(kind == "markdown" for kind, _ in headings), headings
