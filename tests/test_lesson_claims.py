"""What lessons 00-09 say where an expert's read (issue 34, section 1) found them wrong or
unsupported: each test states what the lesson says now, and, where that rests on a number, that
the lesson prints it."""

from __future__ import annotations

import pytest
from support import ROOT

SOLUTIONS = ROOT / "solutions"


def source(lesson: str) -> str:
    return next(SOLUTIONS.glob(f"{lesson}_*.py")).read_text()


@pytest.mark.parametrize("lesson", ["02", "03", "04", "05", "06"])
def test_no_lesson_points_to_a_text_the_learner_never_gets(lesson):
    """A rule, not a sentence: the lessons send the learner to other lessons and to papers,
    never to a lesson page or text the course does not hold."""
    text = source(lesson).lower()
    for phrase in ("the lesson text", "lesson page", "the lesson's claim"):
        assert phrase not in text, f"lesson {lesson}: {phrase!r}"


def test_lesson_00_s_question_is_the_course_s_own():
    assert "(The question is ours; the Transformer paper" in source("00")


def test_the_advantages_are_the_papers_three_counts():
    """Section 4 of Vaswani et al.: parallel computation, path length, computation per layer
    (attention the cheaper only while n < d)."""
    assert "the path a signal travels" in source("00") and "$n < d$" in source("00")
    text = source("02")
    for count in ("**parallel computation**", "**path length**", "**computation per layer**"):
        assert count in text
    assert "$n < d$" in text


def test_the_spread_of_the_scores_is_measured_against_d_k():
    text = source("03")
    assert "the **spread** of the dot products grows with $d_k$" in text
    assert 'print(" d_k   Var(q·k)   Var(q·k)/d_k   Var(q·k/√d_k)")' in text


def test_autoregression_is_the_factorisation_the_mask_is_for_training():
    text = source("05")
    assert "an RNN language model is\n# autoregressive with no mask" in text
    assert "What the mask adds is that **training**" in text


def test_mqa_and_gqa_are_a_different_model_that_takes_uptraining():
    text = source("07")
    assert "it is a different architecture" in text and "uptraining" in text


@pytest.mark.parametrize("lesson", ["01", "04"])
def test_order_without_positions_is_said_of_attention_with_no_mask(lesson):
    text = source(lesson)
    assert "Haviv et al. 2022" in text and "Kazemnejad et al. 2023" in text


def test_lesson_09_prints_what_its_sentences_rest_on():
    text = source("09")
    assert 'print("learned: troughs' in text
    assert "carry shorter vectors than the words" in text
    assert "the largest weight any switching head gives either noun" in text
