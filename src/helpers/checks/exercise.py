"""One exercise: :class:`Exercise` knows its reference answer (the lesson's, generated into
:mod:`helpers.checks.answers`), its hints and a ``grade`` function that calls the learner's
answer on fresh inputs; ``check`` never raises. A stub (``NotImplementedError``) means "not
attempted yet", unless it came from another of the learner's functions that the answer calls
(then that one is named); any other exception, a wrong type, or a time-out is reported.

When the environment variable ``HELPERS_GRADE_LOG`` names a file (make grade's kernel), ``check``
gives no verdict (the grader checks every answer from its own process after the last cell) and
appends one record of what it was given (:mod:`helpers.checks.record`).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import textwrap
from collections.abc import Callable
from typing import Any

from . import record, timelimit
from .calling import LocalAnswer, in_known_state
from .draws import CheckState, this_check
from .messages import calls_a_stub_message, late_note, safe_str, type_name
from .mistakes import LearnerError, Mistake, TimeLimit
from .policy import refusal
from .results import CheckResult, Text
from .withheld import BUILD_NOTE, ReferenceWithheld, is_withheld, made

# The record each check leaves for make grade, its variables, writer and reader: record.


class Checked:
    """What exercises and predictions share: a stable ``name`` (the result's ``exercise`` id)
    and the lesson it belongs to (set by :mod:`helpers.checks`)."""

    name: str
    lesson: str = ""
    heading: str = ""  # as the lesson titles it, "Exercise 2 ★★" (set by helpers.checks)

    def _result(self, passed: bool | None, message: str, mistake: str | None = None):
        """A result of this check; ``mistake`` gets the exercise prefix (``softmax.<id>``)."""
        return CheckResult(
            passed, message, self.name, f"{self.name}.{mistake}" if mistake else None
        )


class Exercise(Checked):
    """One exercise: ``check(answer)``, ``hint(level)``, ``solution()``.

    Parameters
    ----------
    name : str
        The function name the learner defines, e.g. ``"softmax"``.
    signature : str
        How it is called, shown in messages, e.g. ``"softmax(z)"``.
    grade : callable
        ``grade(call) -> str``: tests the answer through ``call(*args)`` (which runs the
        learner's function under the time limit), raises :class:`Mistake` with a message on a
        wrong answer, and returns the success message.
    reference : callable
        The lesson's answer, ``helpers.checks.answers.lessonNN.<name>`` (generated from the
        lesson's solution region); its source is what ``solution()`` shows.
    hints : list of str
        Progressive hints, the last nearly the answer.
    stars : int
        1 apply, 2 generalise, 3 derive or design (the ★★★ challenges).
    title : str
        One line for lesson 00's list of exercises; defaults to the signature.
    allowed : tuple of str
        The course helpers the answer may call, as public dotted names (``"helpers.softmax"``);
        ``"helpers.pretrained.*"`` allows a whole module or subpackage. A call from the
        learner's code into any other function of the ``helpers`` package is refused (mistake
        id ``calls_helper``), so the exercise cannot be passed by delegating to the course; the
        lesson states the same list on the exercise's ``*May use:*`` line. ``()``: NumPy only.
    ready_made : str
        The course helper that *is* this answer, if the course ships one (``"helpers.softmax"``),
        as a dotted public name: the exercise cannot allow it, and the tests make sure an answer
        that delegates to it is refused.

    ``lesson`` (``"04"``) is set by :mod:`helpers.checks` from the module that defines it.
    """

    def __init__(
        self,
        name: str,
        signature: str,
        grade: Callable[[Callable[..., Any]], str],
        reference: Callable[..., Any],
        hints: list[str],
        stars: int = 1,
        title: str = "",
        allowed: tuple[str, ...] = (),
        ready_made: str = "",
    ):
        self.name, self.signature = name, signature
        self._grade, self.reference, self._hints = grade, reference, hints
        self.stars, self.title = stars, title or signature
        if isinstance(allowed, str):
            raise TypeError(f"{name}: allowed is a tuple of dotted names, not one string")
        self.allowed = tuple(allowed)
        if ready_made and ready_made in self.allowed:
            raise ValueError(f"{name}: {ready_made} is the answer ready-made; it cannot be allowed")
        self.ready_made = ready_made

    def __repr__(self) -> str:
        return f"<exercise {self.signature}: .check(answer), .hint(level), .solution()>"

    def check(self, answer: Any) -> CheckResult:
        """Grade ``answer`` (the learner's function). Never raises."""
        record.answers[self.name] = answer  # what make grade checks, from its own process
        result = deferred(self) if being_graded() else self._check(answer)
        log_for_grading(result, self.lesson)
        return result

    def _check(self, answer: Any) -> CheckResult:
        if not callable(answer):
            return self._result(
                False,
                f"pass the function itself, e.g. check({self.name}); got "
                f"{type_name(answer)} instead of a function",
                "not_a_function",
            )
        return self.verdict(LocalAnswer(answer, self.signature, self.allowed))

    def verdict(self, answer: LocalAnswer, limit: float | None = None) -> CheckResult:
        """The check of a callable answer reached through ``answer``: in this process
        (:class:`LocalAnswer`) or, when grading, in the student's kernel from the grader's own
        process (:class:`course_grader.isolation.remote.RemoteAnswer`), where nothing the
        notebook did to this module can change the verdict. ``limit``: seconds for the whole check
        (default :data:`timelimit.CHECK_TIME_LIMIT_SECONDS`)."""
        limit = timelimit.CHECK_TIME_LIMIT_SECONDS if limit is None else limit
        refused = answer.refused()
        if refused is not None:  # the answer *is* a helper or a check's answer, not a call
            refused_call = refusal(self.signature, *refused, self.allowed)
            return self._result(False, safe_str(refused_call), refused_call.id)
        state = CheckState()
        failure: BaseException | None = None
        caller, calls = answer.caller(), [0]
        withheld_before = made()
        if is_withheld(self.reference):  # the graded build: how far the answer got counts

            def counted(*args):
                calls[0] += 1
                return answer_caller(*args)

            answer_caller, caller = caller, counted
        try:
            with this_check(state, self.name, answer.draw):
                message = in_known_state(self._grade, (caller,), limit)
        except NotImplementedError as stub:
            raiser = answer.stub_raiser(stub)
            if raiser is None:  # the answer itself is still the stub
                return self._result(
                    None,
                    f"{self.signature} still raises NotImplementedError; replace that line "
                    "with your answer and run the cell again",
                )
            return self._result(
                False, calls_a_stub_message(self.name, raiser, self.allowed), "calls_unfinished"
            )
        except BaseException as outcome:
            failure = outcome
        # One time-out result, whichever limit ran out. The answer's own (one call's limit):
        # whatever the check went on to conclude (a verdict, a mistake, the check's own limit),
        # that is the cause. Else the check's own limit, though every call returned in time.
        if state.timed_out is not None or isinstance(failure, TimeLimit):
            if state.timed_out is not None:
                message = safe_str(state.timed_out)
            else:
                message = (
                    f"checking {self.signature} did not finish within {limit:g} s, though each "
                    "call of your function returned in time: something your answer returned "
                    "(an object whose conversion to an array, e.g. its __array__, never ends?) "
                    f"kept the check busy.{late_note(failure.late)}{failure.still_running}"
                )
            return self._result(False, message, "timeout")
        if isinstance(failure, (Mistake, LearnerError)):
            # Room for a message that quotes the learner's own error and line in full.
            return self._result(False, safe_str(failure, 1500), failure.id)
        if isinstance(failure, ReferenceWithheld):
            return self._graded_later(calls[0])
        if failure is not None:
            # A bug in the checker must not look like the learner's fault.
            return self._result(
                False,
                f"the checker itself failed ({type_name(failure)}: {safe_str(failure)})",
                "checker_failed",
            )
        if made() != withheld_before:  # it passed without using a withheld answer: no verdict
            return self._graded_later(calls[0])
        if not isinstance(message, str):
            message = "your answer passes every test."
        return self._result(True, message)

    def _graded_later(self, calls: int) -> CheckResult:
        """The graded build's result once the check needs the lesson's answer: no verdict."""
        if calls:
            done = (
                f"{self.signature} passes the public part of this check: it runs on the check's "
                "cases, and none of the mistakes the check can name without the lesson's answer "
                "showed. Whether it is right is for the grader: "
            )
        else:
            done = (
                f"this check compares {self.signature} with the lesson's answer from its first "
                "test, so it has no public part here: "
            )
        return dataclasses.replace(self._result(None, done + BUILD_NOTE), graded_later=True)

    @property
    def hint_count(self) -> int:
        """How many hints there are; the last, ``hint(hint_count)``, is nearly the answer."""
        return len(self._hints)

    def hint(self, level: int = 1) -> Text:
        """Hint number ``level`` (1 = gentlest); the last one is nearly the answer (in the graded
        build, :data:`~helpers.checks.withheld.LAST_HINT` says it is left out)."""
        if not isinstance(level, int) or isinstance(level, bool):
            level = 1
        level = min(max(level, 1), len(self._hints))
        more = f" (try hint({level + 1}) for more)" if level < len(self._hints) else ""
        return Text(f"Hint {level} of {len(self._hints)}{more}", self._hints[level - 1])

    def solution(self) -> Text:
        """The lesson's answer, to read (shown, not run into your notebook): the source of
        :attr:`reference`, which ``make notebooks`` copies from the lesson's solution region."""
        if is_withheld(self.reference):
            return Text(
                f"Solution for {self.signature}",
                f"The solutions are not part of this copy: {BUILD_NOTE}",
            )
        source = textwrap.dedent(inspect.getsource(self.reference))
        return Text(f"Solution for {self.signature}", source.strip(), code=True)


def being_graded() -> bool:
    """True in a kernel that make grade runs (its checks' log is set)."""
    return bool(os.environ.get(record.LOG_VARIABLE))


def deferred(item: Checked) -> CheckResult:
    """A check's result while make grade runs the notebook: no verdict here (the grader checks
    every answer from its own process after the last cell, course_grader.isolation.remote), so
    none is computed twice, and a log line that claims one was not written by a check."""
    return item._result(None, "make grade checks this answer after the notebook's last cell")


def log_for_grading(result: CheckResult, lesson: str) -> None:
    """Append ``result`` as one record to the file named by ``HELPERS_GRADE_LOG``, if set."""
    if not os.environ.get(record.LOG_VARIABLE):
        return
    record.append(
        record.Record(
            exercise=result.exercise,
            lesson=lesson,
            passed=result.passed,
            mistake=result.mistake,
            message=result.message,
            phase=record.phase,
        )
    )
