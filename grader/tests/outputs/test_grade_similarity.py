"""Answers that look alike (issue 34, section 4): copies made with the edits a copier makes
first are reported with their source; independent correct answers are not; answers equal to
the course's own solution are left out. The class: ``tests/support/copy_class.py``."""

from __future__ import annotations

import itertools

import pytest
from course_grader.outputs import similarity as stores
from course_grader.outputs.similarity import THRESHOLD, alike_pairs, blind, similarity
from support import copy_class
from support.hostile_answers import chain, flat

from helpers import checks

EXERCISES = [checks.softmax, checks.attention]


@pytest.mark.parametrize(
    "exercise, edit",
    [(ex, edit) for ex, copies in copy_class.COPIES.items() for edit in copies],
)
def test_each_kind_of_copy_scores_at_the_threshold_or_above(exercise, edit):
    source, copied = copy_class.COPIES[exercise][edit]
    original = copy_class.INDEPENDENT[exercise][source]
    assert similarity(copied, original, exercise) >= THRESHOLD, edit


@pytest.mark.parametrize("exercise", list(copy_class.INDEPENDENT))
def test_independent_answers_stay_below_the_threshold(exercise):
    answers = copy_class.INDEPENDENT[exercise]
    scores = {(a, b): similarity(answers[a], answers[b], exercise)
              for a, b in itertools.combinations(answers, 2)}  # fmt: skip
    assert max(scores.values()) < THRESHOLD, scores


def test_a_class_with_planted_copies_reports_them_and_nothing_else():
    """The whole path the grader takes (alike_pairs), with the students named as in a class:
    s1 .. s7 wrote their own answers, copyN copied one of them, sol handed in the course's
    answer renamed (left out)."""
    answers: dict[str, dict[str, str]] = {}
    family: dict[str, str] = {}  # student -> whose answer it is (per exercise, below)
    expected = set()
    for exercise in copy_class.INDEPENDENT:
        for student, source in copy_class.INDEPENDENT[exercise].items():
            answers.setdefault(student, {})[exercise] = source
        for n, (source, copied) in enumerate(copy_class.COPIES[exercise].values()):
            student = f"copy{n + 1}"
            answers.setdefault(student, {})[exercise] = copied
            family[(exercise, student)] = source
            expected.add((exercise, *sorted((source, student), key=stores.student_order)))
    answers.setdefault("sol", {})["softmax"] = copy_class.LIKE_THE_SOLUTION["softmax"]
    pairs, as_course = alike_pairs(answers, EXERCISES)
    found = {(exercise, a, b) for exercise, a, b, _ in pairs}
    assert expected <= found, expected - found
    for exercise, a, b in found - expected:
        # Beyond the planted pairs, only two copies of the same answer may be alike.
        assert a.startswith("copy") and b.startswith("copy"), (exercise, a, b)
        assert family[(exercise, a)] == family[(exercise, b)], (exercise, a, b)
    assert "sol" in as_course["softmax"]  # the course's answer, renamed and commented, is named
    assert all(not (a == "sol" or b == "sol") for _, a, b, _ in pairs)
    # Listed in natural order (s2 before s10), each pair's names too.
    assert all(stores.student_order(a) < stores.student_order(b) for _, a, b, _ in pairs)


def test_the_name_blind_pass_sees_through_the_edits_themselves():
    """The normalisations one by one: an extracted expression, an append loop, a new name."""
    a = "def f(x):\n    y = np.exp(x)\n    return y / 2"
    b = "def f(x):\n    return np.exp(x) / 2"
    assert blind(a, "f") == blind(b, "f")
    loop = (
        "def f(x):\n    out = []\n    for r in x:\n        e = r + 1\n        out.append(e * 2)\n"
        "    return out"
    )
    comprehension = "def f(x):\n    return [(r + 1) * 2 for r in x]"
    assert blind(loop, "f") == blind(comprehension, "f")
    renamed = "def f(values):\n    arr = np.asarray(values)\n    return arr.sum() + arr.max()"
    original = "def f(x):\n    x = np.asarray(x)\n    return x.sum() + x.max()"
    assert blind(renamed, "f") == blind(original, "f")
    assert blind("def f(:", "f") is None


def test_the_store_of_an_earlier_run_still_gives_the_same_pairs(tmp_path):
    answers = {s: {"attention": src} for s, src in copy_class.INDEPENDENT["attention"].items()}
    answers["copy1"] = {"attention": copy_class.COPIES["attention"]["extracted_helper"][1]}
    store: dict = {"digest": "this run"}
    full = alike_pairs(answers, [checks.attention], store)
    stores.save_store(store, tmp_path)
    again = stores.load_store(tmp_path, "this run")
    assert again["exercises"]["attention"]["pairs"]  # the pairs were kept, with the subtrees
    assert alike_pairs(answers, [checks.attention], again) == full
    assert ("attention", "copy1", "s1") in {p[:3] for p in full[0]}


@pytest.mark.parametrize("make, n", [(chain, 90), (chain, 1200), (flat, 90), (flat, 6000)])
def test_hostile_answers_neither_crash_nor_stall_the_comparison(make, n):
    """Red team (issue 33): a chain of single-use names (put back, they nest past any recursion
    limit: the class's grading crashed) and thousands of single-use names (the comparison grew
    with their square: hours). Either is compared, or left out of the name-blind pass. How the
    time grows with n: benchmarks/bench_hostile_answers.py."""
    source = make(n)
    subtrees = blind(source, "scaled_scores")
    pairs, _ = alike_pairs({"a": {"scaled_scores": source}, "b": {"scaled_scores": source}},
                           [checks.scaled_scores])  # fmt: skip
    assert ("scaled_scores", "a", "b", 1.0) in pairs  # the same answer twice: still found
    assert subtrees is None or len(subtrees) > 0
