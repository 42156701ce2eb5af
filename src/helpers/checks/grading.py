"""The one door between the course's checks and its grader, both sides of it.

The grader is a package of its own (``course_grader``, in ``grader/`` of the course's
repository): instructors install it, learners never get it. It grades a notebook by running the
notebook's cells in a kernel of its own, then checking every exercise again *from its own
process*: the check draws its cases and judges the outputs there, and only the student's
functions run in the kernel. What the grader needs of the checks, and what the kernel does for
it, is here and nowhere else: the grader imports this module, never the checks' other
modules (``grader/tests/test_grader_package.py`` reads its imports).

In the student's kernel
    :func:`serve` answers one request of the grader's (call the student's function on these
    arguments, or say what the notebook holds under a name) and writes the reply in the wire
    format (:mod:`helpers.checks.wire`: plain values, never a pickle). Everything it does runs
    where the student's code ran first, so nothing it writes is trusted: it can only be an
    output the grader's check then judges, or a reason the call failed (which fails the
    check).

In the grader's process
    the catalogue of exercises and predictions; the environment a graded kernel gets
    (:func:`kernel_variables`) and the reader of the log its checks leave (:func:`parse_log`);
    the failures a check knows (:class:`LearnerError`, :class:`Mistake`) and the check that is
    running (:func:`current_check`); and the verdicts the grader reaches itself
    (:func:`judge_prediction`, :func:`not_a_function`; an exercise's is its ``verdict``).
"""

from __future__ import annotations

import pickle
import tracemalloc
from typing import Any

from . import calling, compare, draws, messages, record, wire
from .exercise import Exercise
from .mistakes import LearnerError, Mistake
from .prediction import Prediction, is_wrong_guess
from .results import CheckResult
from .timelimit import CHECK_TIME_LIMIT_SECONDS

__all__ = [
    "CHECK_TIME_LIMIT_SECONDS", "CheckResult", "Exercise", "LearnerError", "Mistake",
    "Prediction", "catalogue", "current_check", "hints", "is_wrong_guess", "judge_prediction",
    "kernel_variables",
    "not_a_function", "parse_log", "refuse_complex", "safe_str", "serve", "type_name",
    "LOG_VARIABLE", "STUDENT_VARIABLE", "TIME_LIMIT_VARIABLE", "wire",
]  # fmt: skip

# --- The grading kernel's environment and the log its checks write (standard library only) ---
LOG_VARIABLE, STUDENT_VARIABLE = record.LOG_VARIABLE, record.STUDENT_VARIABLE
TIME_LIMIT_VARIABLE = record.TIME_LIMIT_VARIABLE
kernel_variables = record.kernel_variables
parse_log = record.parse


# --- The wire format: grading.wire (helpers.checks.wire), whose limits the grader's reader
# enforces (wire.MAX_BYTES, ...) ---
# --- The grader's side ---
def catalogue() -> list[Exercise | Prediction]:
    """Every exercise and prediction of the course, in lesson order."""
    from . import catalogue as every_item

    return every_item()


current_check = draws.current_check


def type_name(value: Any) -> str:
    """The type's name of any value, safely (a student's object may break ``type().__name__``)."""
    return messages.type_name(value)


def safe_str(value: Any, limit: int = 600) -> str:
    """``str(value)`` at most ``limit`` characters, never raising (a student's ``__str__`` may)."""
    return messages.safe_str(value, limit)


def refuse_complex(value: Any, where: str) -> None:
    """Raise the checks' ``complex`` mistake if ``value`` holds complex numbers."""
    if compare.is_complex(value):
        raise compare.complex_mistake(where)


def hints(item: Exercise | Prediction) -> list[str]:
    """An exercise's hints, in order (none for a prediction)."""
    return list(getattr(item, "_hints", ()))


def not_a_function(exercise: Exercise, found_type: str) -> CheckResult:
    """The verdict when the notebook holds something other than a function under the name."""
    return exercise._result(
        False,
        f"pass the function itself, e.g. check({exercise.name}); got {found_type or 'an object'} "
        "instead of a function",
        "not_a_function",
    )


def judge_prediction(prediction: Prediction, guess: Any) -> CheckResult:
    """A prediction's verdict on ``guess`` (a value read from the kernel), within the checks'
    time limit; a guess the check cannot read fails with the id ``bad``."""
    try:
        return calling.in_known_state(prediction._check, (guess,), CHECK_TIME_LIMIT_SECONDS)
    except BaseException as bug:
        return prediction._result(False, f"could not read your guess ({type_name(bug)})", "bad")


# --- The kernel's side: run inside the student's kernel, untrusted ---
def _namespace() -> dict:
    try:
        return get_ipython().user_ns  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        import __main__

        return vars(__main__)


def _answer(name: str):
    """What the notebook's last check of ``name`` was given, else its variable ``name``."""
    answers = getattr(record, "answers", {})
    if isinstance(answers, dict) and name in answers:
        return answers[name], True
    namespace = _namespace()
    return namespace.get(name), name in namespace


def _error(kind: str, message: str, mistake: str = "", raiser: str | None = None) -> dict:
    return {"kind": kind, "message": message[:4000], "id": mistake, "raiser": raiser}


def _exercise(name: str) -> Exercise:
    from .. import checks

    return getattr(checks, name)


def _call(request: dict) -> dict:
    fn, _ = _answer(request["name"])
    exercise = _exercise(request["name"])
    answer = calling.LocalAnswer(fn, exercise.signature, exercise.allowed)
    try:
        if request.get("measure"):
            value, peak = answer.measure_peak(*request["args"])
        else:
            value, peak = calling.call_learner(fn, request["args"], exercise.signature,
                                              answer.watch), None  # fmt: skip
    except NotImplementedError as stub:
        return _error("stub", "", "", answer.stub_raiser(stub))
    except (LearnerError, Mistake) as failure:
        kind = "learner" if isinstance(failure, LearnerError) else "mistake"
        return _error(kind, safe_str(failure, 4000), str(failure.id or ""))
    return {"kind": "value", "value": value, "peak": peak}


def _find(request: dict) -> dict:
    value, found = _answer(request["name"])
    reply = {"kind": "found", "found": bool(found), "callable": callable(value),
             "type": type_name(value)}  # fmt: skip
    if request.get("prediction"):
        reply["value"] = value
    elif callable(value):
        exercise = _exercise(request["name"])
        reply["refused"] = calling.LocalAnswer(value, exercise.signature,
                                             exercise.allowed).refused()  # fmt: skip
    return reply


def serve(request_path: str) -> None:
    """Answer the grader's request in ``request_path`` (a pickle the grader wrote: the grader
    trusts itself) naming the operation; the reply goes to its ``reply`` path stem."""
    with open(request_path, "rb") as f:
        request = pickle.load(f)
    was_tracing = tracemalloc.is_tracing()
    try:
        reply = (_find if request["op"] == "find" else _call)(request)
    except BaseException as failure:  # the notebook broke something the call needs
        reply = _error("broken", f"{type_name(failure)}: {safe_str(failure)}")
    finally:
        if tracemalloc.is_tracing() and not was_tracing:
            tracemalloc.stop()
    wire.write(reply, request["reply"])
