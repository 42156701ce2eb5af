"""Predictions: a question answered before a widget or figure shows the answer.

``checks.<name>.check("fall")``: explained whichever way the learner answered, so a wrong guess
teaches as much as a right one. Results carry the same ids as exercise checks
(:mod:`helpers.checks.exercise`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from . import record, timelimit  # the time limit is read at call time (tests may lower it)
from .calling import in_known_state
from .exercise import Checked, being_graded, deferred, log_for_grading
from .messages import type_name
from .results import CheckResult, Text
from .withheld import BUILD_NOTE, is_withheld


class Prediction(Checked):
    """A question asked *before* a widget answers it: ``checks.<name>.check("fall")``.

    The learner's copy sets the guess to None (``guess = None  ### ANSWER`` in the source), which
    counts as "not attempted yet". Either way the learner answers, the result explains why, so
    a wrong guess teaches as much as a right one.

    Parameters
    ----------
    name : str
        Stable id, e.g. ``"temperature_prediction"``.
    question : str
        The question, as the lesson asks it.
    answer : str or float
        The right choice (one of ``choices``) or the right number.
    explanation : str
        Why that is the answer; shown whichever way the learner answered.
    choices : list of str, optional
        The allowed answers (case and surrounding spaces ignored). Omit for a number.
    wrong : dict, optional
        For a choice: ``{choice: what that guess overlooks}``, shown before the explanation.
    rtol : float
        For a number: the relative tolerance within which the guess counts as right.
    stars : int
        Predictions are ★ unless said otherwise.
    """

    signature = "a prediction"

    def __init__(
        self,
        name: str,
        question: str,
        answer: str | float,
        explanation: str,
        choices: list[str] | None = None,
        wrong: dict[str, str] | None = None,
        rtol: float = 0.1,
        stars: int = 1,
    ):
        if choices is not None and not is_withheld(answer) and answer not in choices:
            raise ValueError(f"{name}: answer {answer!r} is not one of the choices {choices}")
        self.name, self.question, self.answer = name, question, answer
        self.explanation, self.choices = explanation, choices
        self.wrong, self.rtol, self.stars = wrong or {}, rtol, stars
        self.title = f"predict: {question}"

    def __repr__(self) -> str:
        options = f" ({' / '.join(self.choices)})" if self.choices else " (a number)"
        return f"<prediction {self.name}: {self.question}{options}: .check(your_guess)>"

    def check(self, guess: Any) -> CheckResult:
        """Compare the guess with the answer and explain. Never raises."""
        record.answers[self.name] = guess  # what make grade checks, from its own process
        if being_graded():
            result = deferred(self)
            log_for_grading(result, self.lesson)
            return result
        try:
            result = in_known_state(self._check, (guess,), timelimit.CHECK_TIME_LIMIT_SECONDS)
        except BaseException as bug:  # e.g. a guess whose __str__ or __float__ raises or hangs
            result = self._result(False, f"could not read your guess ({type_name(bug)})", "bad")
        log_for_grading(result, self.lesson)
        return result

    def _result(self, passed: bool | None, message: str, mistake: str | None = None):
        return dataclasses.replace(super()._result(passed, message, mistake), prediction=True)

    def _check(self, guess: Any) -> CheckResult:
        if guess is None or guess is Ellipsis:
            return self._result(
                None, f"make your guess first: {self.question} Then run this cell again."
            )
        if self.choices is not None:
            if not isinstance(guess, str):
                return self._result(
                    False,
                    f"answer with one of {', '.join(map(repr, self.choices))} (a string); got "
                    f"{type(guess).__name__}",
                    "not_a_choice",
                )
            picked = guess.strip().lower()
            if picked not in [c.lower() for c in self.choices]:
                return self._result(
                    False,
                    f"answer with one of {', '.join(map(repr, self.choices))}; got {guess[:40]!r}",
                    "not_a_choice",
                )
            if is_withheld(self.answer):
                return self._recorded(repr(picked))
            if picked == str(self.answer).lower():
                return self._result(True, f"{self.answer!r}. {_sentences(self.explanation)}")
            overlooked = _sentences(self.wrong.get(picked, ""))
            return self._result(
                False,
                f"you predicted {picked!r}; the answer is {self.answer!r}. "
                + " ".join(filter(None, (overlooked, _sentences(self.explanation)))),
                "picked_" + re.sub(r"[^a-z0-9]+", "_", picked).strip("_"),
            )
        if isinstance(guess, bool) or not isinstance(guess, (int, float, np.integer, np.floating)):
            return self._result(
                False, f"answer with a number; got {type(guess).__name__}", "not_a_number"
            )
        value = float(guess)
        if not np.isfinite(value):
            return self._result(False, f"answer with a finite number; got {value}", "not_a_number")
        if is_withheld(self.answer):
            return self._recorded(f"{value:.3g}")
        target = float(self.answer)
        if abs(value - target) <= self.rtol * abs(target):
            return self._result(True, f"about {target:.3g}. {_sentences(self.explanation)}")
        direction = "too high" if value > target else "too low"
        return self._result(
            False,
            f"you predicted {value:.3g}, {direction}; the answer is about {target:.3g}. "
            f"{_sentences(self.explanation)}",
            direction.replace(" ", "_"),
        )

    def _recorded(self, guess: str) -> CheckResult:
        """The graded build's result: the guess is read, not judged (the answer is withheld)."""
        result = self._result(
            None,
            f"your guess {guess} is recorded. Run the widget or figure below to see what "
            f"happens; {BUILD_NOTE}",
        )
        return dataclasses.replace(result, graded_later=True)

    def hint(self, level: int = 1) -> Text:
        return Text("Hint", "run the widget or figure below after you guess; then explain it.")

    def solution(self) -> Text:
        if is_withheld(self.answer):
            return Text(
                f"Answer to {self.name}", f"The answers are not part of this copy: {BUILD_NOTE}"
            )
        return Text(f"Answer to {self.name}", f"{self.answer}: {self.explanation}")


def is_wrong_guess(mistake: str) -> bool:
    """Whether a prediction's mistake id (``"name.too_high"``) is a guess that was read and is
    not what happens, as opposed to no guess or one that is not a choice or a number: the ids
    :meth:`Prediction._check` gives, for a grader's completion credit."""
    tail = mistake.rpartition(".")[2]
    return tail.startswith("picked_") or tail in ("too_high", "too_low")


def _sentences(text: str) -> str:
    """``text`` as it goes after another sentence: a capital first letter and a full stop at
    the end (the explanations and wrong-choice texts are joined one after another)."""
    text = text.strip()
    if not text:
        return ""
    if re.match(r"(?:a|[a-z]{2,})[\s,;:]", text):  # a word, not a symbol ("q · k", "d_k")
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?)" else text + "."
