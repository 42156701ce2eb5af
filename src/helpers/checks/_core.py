"""The machinery behind every exercise check: run the learner's code safely, compare, explain.

An :class:`Exercise` knows its reference answer, its hints, and a ``grade`` function that calls
the learner's answer on fresh inputs and returns a :class:`CheckResult`. ``check`` never raises:
a stub (``NotImplementedError``) means "not attempted yet", unless it came from another of the
learner's functions that the answer calls (then that one is named); any other exception, a wrong
type, or a time-out is reported with the actual arguments and the line of the learner's code
that caused it. NumPy's RuntimeWarnings inside the learner's code are not printed.

The checks hold against any answer: every ``BaseException`` the learner's code raises
(``SystemExit`` from ``exit()`` too) becomes a result; the time limit re-arms until the
learner's code gives up (a loop that catches every exception cannot hold it off); the checks'
own math runs under a known NumPy error state and warnings filter, whatever earlier cells set;
NumPy's and ``random``'s global RNG state and print options are restored after each call of the
learner's code; a complex result is rejected with its own mistake id (``complex``).

When the environment variable ``HELPERS_GRADE_LOG`` names a file, every ``check`` appends one
JSON line to it (exercise, lesson, passed, mistake, message): ``make grade`` reads those.

Draws: a check's random cases come from :func:`fresh_rng`, new on every check, so a hard-coded
answer cannot pass. When grading (``HELPERS_GRADE_STUDENT`` names the student) and inside
:func:`seeded_draws`, they come from a seed derived from (student or seed, exercise, how many
times that exercise was checked before), so the same notebook always gets the same grade.

Course helpers: an exercise names the helpers its answer may call (``allowed``); a call from the
learner's code into any other function of the ``helpers`` package is refused (``calls_helper``),
and a call into a check's own answer (``checks.<name>.reference``) too (``calls_reference``).
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import functools
import gc
import hashlib
import html
import importlib
import inspect
import os
import random
import re
import signal
import sys
import sysconfig
import textwrap
import threading
import time
import traceback
import tracemalloc
import types
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _record

# HELPERS_CHECK_TIME_LIMIT (seconds, set by ``make grade --check-time-limit``).
_seconds_from_environment = _record.time_limit_from_environment


# One call of the learner's function; the whole check (every call plus the checker's own work
# on what the calls returned, e.g. converting an object with a slow __array__) is a backstop.
TIME_LIMIT_SECONDS = _seconds_from_environment(5.0)
CHECK_TIME_LIMIT_SECONDS = 4 * TIME_LIMIT_SECONDS
# A signal handled this much later than its deadline means a long call into compiled code.
_LATE_SECONDS = 1.0
# The record each check leaves for make grade, its variables, writer and reader: _record.
GRADE_LOG_VARIABLE = _record.LOG_VARIABLE
_HELPERS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NOT_LEARNER_CODE = tuple(
    {_HELPERS_DIR}
    | {
        os.path.abspath(sysconfig.get_path(k))
        for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: ``passed`` is True, False, or None for "not attempted yet".

    ``exercise`` is the exercise's stable id (its name, e.g. ``"softmax"``); ``mistake`` is a
    stable id such as ``"softmax.columns_sum_to_one"`` when the answer was rejected for a named
    mistake, else None. ``make grade`` reads these two, never the message.
    """

    passed: bool | None
    message: str
    exercise: str = ""
    mistake: str | None = None
    prediction: bool = False  # a prediction's result: no "not yet", the answer is given

    @property
    def status(self) -> str:
        if self.prediction:
            return {True: "Right", False: "Not what happens", None: "No guess yet"}[self.passed]
        return {True: "Correct", False: "Not yet", None: "Not attempted yet"}[self.passed]

    @property
    def symbol(self) -> str:
        return {True: "✓", False: "✗", None: "…"}[self.passed]

    def __str__(self) -> str:
        return f"{self.symbol} {self.status}: {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = {True: "#1b7837", False: "#b2182b", None: "#5e5e5e"}[self.passed]
        background = {True: "#e7f4e4", False: "#fbe9e7", None: "#f0f0f0"}[self.passed]
        body = html.escape(self.message).replace("\n", "<br>")
        return (
            f'<div style="border-left:4px solid {colour};background:{background};'
            f'padding:6px 10px;margin:4px 0;font-family:sans-serif;color:#222">'
            f'<b style="color:{colour}">{self.symbol} {self.status}</b>: {body}</div>'
        )


class _Text:
    """Something shown in the notebook: a hint or a solution, with HTML and plain-text forms."""

    def __init__(self, title: str, text: str, code: bool = False):
        self.title, self.text, self.code = title, text, code

    def __repr__(self) -> str:
        return f"{self.title}:\n{self.text}"

    def _repr_html_(self) -> str:
        body = html.escape(self.text)
        body = f"<pre>{body}</pre>" if self.code else body.replace("\n", "<br>")
        return (
            '<div style="border-left:4px solid #2166ac;background:#eef3fa;padding:6px 10px;'
            f'font-family:sans-serif;color:#222"><b style="color:#2166ac">{self.title}</b>: '
            f"{body}</div>"
        )


class Mistake(Exception):
    """Raised inside a ``grade`` function to fail the check with a specific message.

    ``id`` names the mistake stably (``"unscaled"``; the check prefixes the exercise:
    ``"scaled_scores.unscaled"``); a message made with :func:`named` carries its id along.
    """

    def __init__(self, message: str, id: str | None = None):
        super().__init__(message)
        self.id = id if id is not None else getattr(message, "id", None)


class named(str):  # noqa: N801 (reads as a function at the call site)
    """A mistake's message with its stable id: ``named("unscaled", "you forgot the scale")``.

    It is a ``str``, so it works as a key of ``compare``'s ``known_mistakes`` and as the
    message of :class:`Mistake`; the id travels with it into the :class:`CheckResult`.
    """

    id: str

    def __new__(cls, id: str, message: str) -> named:
        if not re.fullmatch(r"[a-z0-9_]+", id):
            raise ValueError(f"a mistake id is lower_snake_case; got {id!r}")
        text = super().__new__(cls, message)
        text.id = id
        return text


class _TimeLimit(BaseException):  # noqa: N818
    """The time limit: a BaseException, so ``except Exception`` in the learner's code cannot
    swallow it. ``late`` is how many seconds after the deadline it could be raised (a long
    call into compiled code holds Python's signal handler off until it returns)."""

    def __init__(self, late: float = 0.0, still_running: str = ""):
        super().__init__(late)
        self.late, self.still_running = late, still_running


class LearnerError(Exception):
    """The learner's code raised (id ``"raised"``) or ran out of time (id ``"timeout"``)."""

    def __init__(self, message: str, id: str = "raised"):
        super().__init__(message)
        self.id = id


class _Checked:
    """What exercises and predictions share: a stable ``name`` (the result's ``exercise`` id)
    and the lesson it belongs to (set by :mod:`helpers.checks`)."""

    name: str
    lesson: str = ""

    def _result(self, passed: bool | None, message: str, mistake: str | None = None):
        """A result of this check; ``mistake`` gets the exercise prefix (``softmax.<id>``)."""
        return CheckResult(
            passed, message, self.name, f"{self.name}.{mistake}" if mistake else None
        )


class Exercise(_Checked):
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
    ):
        self.name, self.signature = name, signature
        self._grade, self.reference, self._hints = grade, reference, hints
        self.stars, self.title = stars, title or signature
        if isinstance(allowed, str):
            raise TypeError(f"{name}: allowed is a tuple of dotted names, not one string")
        self.allowed = tuple(allowed)

    def __repr__(self) -> str:
        return f"<exercise {self.signature}: .check(answer), .hint(level), .solution()>"

    def check(self, answer: Any) -> CheckResult:
        """Grade ``answer`` (the learner's function). Never raises."""
        _record.answers[self.name] = answer  # what make grade checks, from its own process
        result = _deferred(self) if _grading() else self._check(answer)
        _log_for_grading(result, self.lesson)
        return result

    def _check(self, answer: Any) -> CheckResult:
        if not callable(answer):
            return self._result(
                False,
                f"pass the function itself, e.g. check({self.name}); got "
                f"{_type_name(answer)} instead of a function",
                "not_a_function",
            )
        return self.verdict(LocalAnswer(answer, self.signature, self.allowed))

    def verdict(self, answer: LocalAnswer, limit: float | None = None) -> CheckResult:
        """The check of a callable answer reached through ``answer``: in this process
        (:class:`LocalAnswer`) or, when grading, in the student's kernel from the grader's own
        process (:class:`course_grader._remote.RemoteAnswer`), where nothing the notebook did
        to this module can change the verdict. ``limit``: seconds for the whole check
        (default :data:`CHECK_TIME_LIMIT_SECONDS`)."""
        limit = CHECK_TIME_LIMIT_SECONDS if limit is None else limit
        refused = answer.refused()
        if refused is not None:  # the answer *is* a helper or a check's answer, not a call
            refusal = _refusal(self.signature, *refused, self.allowed)
            return self._result(False, _safe_str(refusal), refusal.id)
        state = _CheckState()
        failure: BaseException | None = None
        try:
            with _this_check(state, self.name, answer.draw):
                message = _in_known_state(self._grade, (answer.caller(),), limit)
        except NotImplementedError as stub:
            raiser = answer.stub_raiser(stub)
            if raiser is None:  # the answer itself is still the stub
                return self._result(
                    None,
                    f"{self.signature} still raises NotImplementedError; replace that line "
                    "with your answer and run the cell again",
                )
            return self._result(
                False, _calls_a_stub_message(self.name, raiser, self.allowed), "calls_unfinished"
            )
        except BaseException as outcome:
            failure = outcome
        # One time-out result, whichever limit ran out. The answer's own (one call's limit):
        # whatever the check went on to conclude (a verdict, a mistake, the check's own limit),
        # that is the cause. Else the check's own limit, though every call returned in time.
        if state.timed_out is not None or isinstance(failure, _TimeLimit):
            if state.timed_out is not None:
                message = _safe_str(state.timed_out)
            else:
                message = (
                    f"checking {self.signature} did not finish within {limit:g} s, though each "
                    "call of your function returned in time: something your answer returned "
                    "(an object whose conversion to an array, e.g. its __array__, never ends?) "
                    f"kept the check busy.{_late_note(failure.late)}{failure.still_running}"
                )
            return self._result(False, message, "timeout")
        if isinstance(failure, (Mistake, LearnerError)):
            # Room for a message that quotes the learner's own error and line in full.
            return self._result(False, _safe_str(failure, 1500), failure.id)
        if failure is not None:
            # A bug in the checker must not look like the learner's fault.
            return self._result(
                False,
                f"the checker itself failed ({_type_name(failure)}: {_safe_str(failure)})",
                "checker_failed",
            )
        if not isinstance(message, str):
            message = "your answer passes every test."
        return self._result(True, message)

    def hint(self, level: int = 1) -> _Text:
        """Hint number ``level`` (1 = gentlest); the last one is nearly the answer."""
        if not isinstance(level, int) or isinstance(level, bool):
            level = 1
        level = min(max(level, 1), len(self._hints))
        more = f" (try hint({level + 1}) for more)" if level < len(self._hints) else ""
        return _Text(f"Hint {level} of {len(self._hints)}{more}", self._hints[level - 1])

    def solution(self) -> _Text:
        """The lesson's answer, to read (shown, not run into your notebook): the source of
        :attr:`reference`, which ``make notebooks`` copies from the lesson's solution region."""
        source = textwrap.dedent(inspect.getsource(self.reference))
        return _Text(f"Solution for {self.signature}", source.strip(), code=True)


def _module_of(filename: str) -> str | None:
    """``"helpers.attention"`` for a file of the helpers package, None for any other file."""
    path = os.path.abspath(filename)
    if not path.startswith(_HELPERS_DIR + os.sep):
        return None
    parts = os.path.relpath(path, os.path.dirname(_HELPERS_DIR)).removesuffix(".py").split(os.sep)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _public_names() -> dict[Any, str]:
    """The code object of every function the helpers package exports, mapped to its shortest
    public dotted name (``helpers.softmax`` rather than ``helpers.attention.softmax``).

    Worked out again when the helpers modules loaded have changed: a table made while a
    module was still being imported would miss its names (issue 34: a refusal then named
    ``helpers.induction.task.induction_score``)."""
    loaded = tuple(sorted(m for m in sys.modules if m == "helpers" or m.startswith("helpers.")))
    return _public_names_of(loaded)


@functools.cache
def _public_names_of(loaded: tuple[str, ...]) -> dict[Any, str]:
    names: dict[Any, str] = {}
    for module_name in sorted(loaded, key=lambda m: (len(m), m)):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if attribute.startswith("_") or not inspect.isfunction(value):
                continue
            code = getattr(inspect.unwrap(value), "__code__", None)
            if code is not None and _module_of(code.co_filename) is not None:
                names.setdefault(code, f"{module_name}.{attribute}")
    return names


def _outer(code) -> tuple[str | None, str]:
    """(module, outermost name) of a code object: ``("helpers.attention", "softmax")`` for
    ``softmax`` and for a generator or function nested in it; the class for a method."""
    return _module_of(code.co_filename), code.co_qualname.split(".")[0]


@functools.cache
def _resolve(dotted: str) -> tuple[str | None, str]:
    """:func:`_outer` of what a dotted public name (``helpers.softmax``) stands for."""
    module_name, _, attribute = dotted.rpartition(".")
    value = inspect.unwrap(getattr(importlib.import_module(module_name), attribute))
    if inspect.isclass(value):
        return _module_of(inspect.getfile(value)), value.__qualname__.split(".")[0]
    return _outer(value.__code__)


class _HelperWatch:
    """Which calls from the learner's code into the ``helpers`` package an answer may make.

    ``allowed`` (dotted names; a class allows its methods; ``"module.*"`` a whole module or
    subpackage) lists what may be called; any other function of the package is refused, and a
    call into the exercise checks always is (``calls_reference`` for a ``.reference``).
    """

    def __init__(self, allowed: tuple[str, ...]):
        self.allowed = allowed
        self.keys = {_resolve(d) for d in allowed if not d.endswith(".*")}
        self.prefixes = tuple(d[:-1] for d in allowed if d.endswith(".*"))
        self._verdicts: dict[Any, tuple[str, str] | None] = {}
        self._inside: dict[Any, bool] = {}

    def verdict_on_answer(self, answer: Any) -> tuple[str, str] | None:
        """:meth:`verdict` on the answer itself (``softmax = helpers.softmax`` is a call of
        the helper by the learner, though the check is what calls it)."""
        while isinstance(answer, functools.partial):
            answer = answer.func
        try:
            code = getattr(inspect.unwrap(answer), "__code__", None)
        except Exception:
            return None
        return self.verdict(code) if isinstance(code, types.CodeType) else None

    def in_helpers(self, code) -> bool:
        """True for code of the helpers package (a helper calling another is not watched)."""
        inside = self._inside.get(code)
        if inside is None:
            inside = self._inside[code] = _module_of(code.co_filename) is not None
        return inside

    def verdict(self, code) -> tuple[str, str] | None:
        """None if the learner's code may call ``code``; else (mistake id, the name shown)."""
        if code.co_name == "<module>":
            return None  # a module of the package run by an import: not a call of a helper
        try:
            return self._verdicts[code]
        except KeyError:
            pass
        verdict = None
        module, outer = key = _outer(code)
        if module is not None:
            name = _public_names().get(code) or f"{module}.{outer}"
            if module == __name__:
                pass  # the check's own machinery (the watch's exit, the time limit's handler)
            elif module.startswith("helpers.checks"):
                reference = _reference_name(code)
                verdict = ("calls_reference", reference) if reference else ("calls_helper", name)
            elif key not in self.keys and not (module + ".").startswith(self.prefixes):
                verdict = ("calls_helper", name)
        self._verdicts[code] = verdict
        return verdict


def _reference_name(code) -> str | None:
    """``checks.softmax.reference`` when ``code`` is an exercise's reference answer."""
    from helpers import checks  # at call time: the package imports this module

    for exercise in checks.catalogue():
        reference = getattr(exercise, "reference", None)
        if getattr(inspect.unwrap(reference), "__code__", None) is code:
            return f"checks.{exercise.name}.reference"
    return None


def _refusal(signature: str, mistake: str, name: str, allowed: tuple[str, ...]) -> Mistake:
    """The message for an answer that called a helper it may not (or a check's answer)."""
    if mistake == "calls_reference":
        return Mistake(
            f"{signature} calls {name}, the check's own answer. Write it yourself with NumPy: "
            "that is the exercise (`.solution()` shows that answer when you want to read it).",
            "calls_reference",
        )
    may = (
        "NumPy only"
        if not allowed
        else "NumPy and "
        + ", ".join(a.removesuffix(".*") + (" (any)" if a.endswith(".*") else "") for a in allowed)
    )
    return Mistake(
        f"{signature} calls {name}, which this exercise does not let you use ready-made. Write "
        f"it yourself: that is the exercise. This one may use: {may}.",
        "calls_helper",
    )


class LocalAnswer:
    """The learner's function in this process, as a check reaches it: whether it *is* a helper
    (:meth:`refused`), the ``call`` a check's ``grade`` gets (:meth:`caller`), and which
    function raised a ``NotImplementedError`` (:meth:`stub_raiser`)."""

    draw: tuple[str, int] | None = None  # this process's grading draws (see _this_check)

    def __init__(self, fn: Callable[..., Any], signature: str, allowed: tuple[str, ...] = ()):
        self.fn, self.signature = fn, signature
        self.watch = _HelperWatch(allowed)

    def refused(self) -> tuple[str, str] | None:
        return self.watch.verdict_on_answer(self.fn)

    def caller(self) -> Callable[..., Any]:
        def call(*args):
            return _call_learner(self.fn, args, self.signature, self.watch)

        call.measure_peak = self.measure_peak  # lesson 07's memory case
        return call

    def measure_peak(self, *args) -> tuple[Any, int | None]:
        """``(value, peak bytes traced during the call)``; the peak is None when tracemalloc
        was already tracing something else (the check does not disturb it)."""
        if tracemalloc.is_tracing():
            return _call_learner(self.fn, args, self.signature, self.watch), None
        tracemalloc.start()
        try:
            value = _call_learner(self.fn, args, self.signature, self.watch)
            return value, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def stub_raiser(self, stub: NotImplementedError) -> str | None:
        return _stub_raised_by(stub, self.fn)


def _call_learner(
    fn: Callable[..., Any], args: tuple, signature: str, watch: _HelperWatch | None = None
) -> Any:
    """Call the learner's ``fn`` on copies of ``args`` under a time limit.

    Copies mean an answer that modifies its input in place cannot corrupt the next case.
    ``NotImplementedError`` passes through (the stub); any other exception, ``SystemExit`` and
    other ``BaseException`` subclasses included, becomes a :class:`LearnerError` that names the
    line of the learner's code that raised. A returned object with ``__array__`` is converted
    inside the time limit; a complex result is a :class:`Mistake` (id ``complex``). NumPy's and
    ``random``'s global RNG state and NumPy's print options are restored afterwards. A call
    into a course helper the ``watch`` refuses is a :class:`Mistake` (``calls_helper``, or
    ``calls_reference`` for a check's own answer). Once a call has run out of time, every later
    call in the same check fails at once with the same error: the check ends within its limit.
    """
    state = _current_check.get(None)
    if state is not None and state.timed_out is not None:
        raise LearnerError(str(state.timed_out), "timeout")
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    used: list[tuple[str, str]] = []

    def quietly(*args):
        # NumPy's floating-point errors (overflow in exp, 0/0) would print warnings above the
        # result; the check's own message already explains them. np.errstate is per thread, so
        # it is set in whichever thread runs fn.
        with np.errstate(all="ignore"):
            try:
                with _watching(watch, used):
                    return _materialize(fn(*args))
            except (NotImplementedError, _TimeLimit):
                raise
            except BaseException as exc:  # SystemExit, KeyboardInterrupt, any Exception
                # Described here, inside the time limit: its __str__ is the learner's code too.
                raise LearnerError(
                    f"{signature} raised {_type_name(exc)}: {_safe_str(exc).strip()}"
                    f"{_keepdims_hint(exc)}{_called_with(signature, args)}{_where(exc)}"
                ) from None

    saved = _global_state()
    try:
        # The warnings filter is global: set and restored here, in the calling thread, so an
        # abandoned time-limit thread cannot leave it changed.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = _with_time_limit(quietly, args, TIME_LIMIT_SECONDS)
    except (NotImplementedError, LearnerError):
        raise
    except _TimeLimit as stopped:
        error = LearnerError(
            f"{signature} did not finish within {TIME_LIMIT_SECONDS:g} s on a small input; "
            f"is there a loop that never ends, or a long sleep?{_late_note(stopped.late)}"
            f"{stopped.still_running}{_called_with(signature, args)}",
            "timeout",
        )
        if state is not None:
            state.timed_out = error
        raise error from None
    finally:
        _restore_global_state(saved)
    if used:
        raise _refusal(signature, *used[0], watch.allowed)  # used: only with a watch
    if _is_complex(value):
        raise _complex_mistake(f"{signature} returned")
    return value


@contextlib.contextmanager
def _watching(watch: _HelperWatch | None, used: list[tuple[str, str]]):
    """Record in ``used`` the first call from code outside the helpers package (the learner's,
    or a library calling back, e.g. ``np.apply_along_axis``) into a helper that ``watch``
    refuses, while the block runs.

    A profile hook (not a trace), so it coexists with the time limit's trace; set and removed
    in the thread that runs the learner's code."""
    if watch is None:
        yield
        return
    previous = sys.getprofile()
    verdict, in_helpers = watch.verdict, watch.in_helpers

    def hook(frame, event, arg):
        if event == "call" and not used:
            refused = verdict(frame.f_code)
            caller = frame.f_back
            if refused is not None and (caller is None or not in_helpers(caller.f_code)):
                used.append(refused)

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


def _materialize(value: Any, depth: int = 0) -> Any:
    """``value`` with any object that has ``__array__`` converted to an ndarray (in tuples and
    lists too), so that the learner's conversion code runs inside the time limit."""
    if isinstance(value, np.ndarray) or value is None or isinstance(value, (int, float, str)):
        return value
    if type(value) in (tuple, list) and depth < 3:
        return type(value)(_materialize(v, depth + 1) for v in value)
    if hasattr(type(value), "__array__"):
        return np.asarray(value)
    return value


def _complex_mistake(returned: str) -> Mistake:
    """The ``complex`` mistake; ``returned`` says who, e.g. ``"softmax(x) returned"``."""
    return Mistake(
        f"{returned} complex numbers; every quantity here is real. A square root or a "
        "fractional power of a negative number, or a stray `j`, makes them.",
        "complex",
    )


def _is_complex(value: Any, depth: int = 0) -> bool:
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if type(value) in (tuple, list) and depth < 3:
        return any(_is_complex(v, depth + 1) for v in value)
    return False


def _global_state() -> tuple:
    return np.random.get_state(), random.getstate(), np.get_printoptions()


def _restore_global_state(saved: tuple) -> None:
    """Undo ``np.random.seed``, ``random.seed`` and ``np.set_printoptions`` in the answer."""
    np_state, py_state, print_options = saved
    try:
        np.random.set_state(np_state)
        random.setstate(py_state)
        np.set_printoptions(**print_options)
    except Exception:  # a monkeypatched module: leave it as the learner made it
        pass


def _in_known_state(fn: Callable[..., Any], args: tuple, seconds: float) -> Any:
    """Run the checker's ``fn`` under a known NumPy error state and warnings filter (whatever
    ``np.seterr`` or ``warnings.simplefilter`` earlier cells ran), within ``seconds``."""

    def known(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _with_time_limit(known, args, seconds)


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:
        return "object"


def _safe_str(value: Any, limit: int = 600) -> str:
    """``str(value)``, or a placeholder when its ``__str__`` raises (learner's exceptions)."""
    try:
        text = str(value)
        if not isinstance(text, str):
            raise TypeError
    except _TimeLimit:
        raise
    except BaseException:
        return f"<a {_type_name(value)} whose message cannot be shown: its __str__ raised>"
    return text if len(text) <= limit else text[:limit] + " ..."


def _late_note(late: float) -> str:
    if late < _LATE_SECONDS:
        return ""
    return (
        f" It could only be stopped {late:.0f} s after the limit: one long call into compiled "
        "code (NumPy on a huge array, say) cannot be interrupted inside the notebook. "
        "(make grade stops such a call by killing the notebook's kernel.)"
    )


def _grading() -> bool:
    """True in a kernel that make grade runs (its checks' log is set)."""
    return bool(os.environ.get(GRADE_LOG_VARIABLE))


def _deferred(item: _Checked) -> CheckResult:
    """A check's result while make grade runs the notebook: no verdict here (the grader checks
    every answer from its own process after the last cell, course_grader._remote), so none is
    computed twice, and a log line that claims one was not written by a check."""
    return item._result(None, "make grade checks this answer after the notebook's last cell")


def _log_for_grading(result: CheckResult, lesson: str) -> None:
    """Append ``result`` as one record to the file named by ``HELPERS_GRADE_LOG``, if set."""
    if not os.environ.get(GRADE_LOG_VARIABLE):
        return
    _record.append(
        _record.Record(
            exercise=result.exercise,
            lesson=lesson,
            passed=result.passed,
            mistake=result.mistake,
            message=result.message,
            phase=_record.phase,
        )
    )


_append_to_grade_log = _record.append


def _called_with(signature: str, args: tuple) -> str:
    """'\n  called with Q of shape (5, 16), n=7': the actual arguments behind a signature."""
    names = [n.strip() for n in signature[signature.find("(") + 1 : -1].split(",")]
    if len(names) != len(args):
        names = [f"argument {k + 1}" for k in range(len(args))]
    shown = []
    for name, arg in zip(names, args):
        if isinstance(arg, np.ndarray):
            shown.append(f"{name} of shape {arg.shape}")
        elif isinstance(arg, type) and issubclass(arg, np.generic):
            shown.append(f"{name}=np.{arg.__name__}")  # np.float32, not <class 'numpy...'>
        else:
            shown.append(f"{name}={arg!r}")
    return "\n  called with " + ", ".join(shown) if shown else ""


_REDUCTION = re.compile(r"(?P<function>\bnp)?\.(?:a?max|a?min|sum|mean)\(")


def _reduces_without_keepdims(line: str) -> bool:
    """True if ``line`` reduces along an axis (``z.max(axis=-1)``, ``np.sum(z, -1)``) without
    keepdims. A full reduction to one number (``z.sum()``) is not flagged: it broadcasts."""
    for match in _REDUCTION.finditer(line):
        depth, end = 1, match.end()
        while end < len(line) and depth:  # find the call's closing parenthesis
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            end += 1
        args = line[match.end() : end - 1]
        # np.max(z, -1) names its axis after the array; z.max(-1) as its first argument.
        along_an_axis = "axis" in args or ("," in args if match["function"] else args.strip())
        if along_an_axis and "keepdims" not in args:
            return True
    return False


def _keepdims_hint(exc: BaseException) -> str:
    """A hint for a broadcasting error on a line that reduces an axis without keepdims=True."""
    frames = _learner_frames(exc)
    line = frames[-1].line if frames and frames[-1].line else ""
    if (
        isinstance(exc, ValueError)
        and "broadcast" in _safe_str(exc)
        and _reduces_without_keepdims(line)
    ):
        return (
            "; a reduction such as z.max(axis=-1) drops that axis: add keepdims=True so the "
            "result keeps shape (n, 1) and broadcasts back along each row"
        )
    return ""


def _stub_raised_by(stub: NotImplementedError, answer: Any) -> str | None:
    """The name of the function that raised ``stub``, or None if it is ``answer`` itself.

    A correct answer that calls the learner's own unfinished function (say, their stubbed
    ``softmax``) must not be told that the answer itself is "not attempted yet".
    """
    tb = stub.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:  # the innermost frame: the one that raised
        tb = tb.tb_next
    try:
        code = getattr(inspect.unwrap(answer), "__code__", None)
    except Exception:
        code = None
    raised_in = tb.tb_frame.f_code
    if code is None or raised_in is code:
        return None
    if _is_library_file(raised_in.co_filename):
        return None  # raised by a library on the answer's behalf: treat as before
    return raised_in.co_name


def _calls_a_stub_message(name: str, raiser: str, allowed: tuple[str, ...] = ()) -> str:
    """Say which unfinished function the learner's (finished) answer calls."""
    import helpers  # at call time: helpers imports this package
    from helpers import checks

    if not isinstance(getattr(checks, raiser, None), Exercise):
        return (
            f"your {name} calls {raiser}, which still raises NotImplementedError: finish it first"
        )
    may = f"helpers.{raiser}" in allowed or "helpers.*" in allowed
    instead = f" (or call helpers.{raiser})" if hasattr(helpers, raiser) and may else ""
    return (
        f"your {name} calls {raiser}, which still raises NotImplementedError: finish the "
        f"{raiser} exercise above{instead}, then run this check again"
    )


def _where(exc: BaseException) -> str:
    """' (at line N: `code`)' for the innermost frame of the learner's own code, if any.

    Frames inside this package, the standard library and installed packages (NumPy raising
    on the learner's behalf) are skipped, so the message points at the learner's line.
    """
    frames = _learner_frames(exc)
    if not frames:
        return ""
    frame = frames[-1]
    code = f": `{frame.line.strip()}`" if frame.line else ""
    return f"\n  at line {frame.lineno} of {frame.name}(){code}"


def _learner_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The traceback frames of ``exc`` that are in the learner's code, outermost first."""
    return [f for f in traceback.extract_tb(exc.__traceback__) if not _is_library_file(f.filename)]


_deadlines: list[float] = []  # the active time limits (time.monotonic()), innermost last
_RE_ARM_SECONDS = 0.05


def _on_alarm(signum, frame):
    """SIGALRM: raise the time limit in the running code once the innermost deadline passed.

    Never inside the time-limit machinery itself (its clean-up must run), nor where Python
    would ignore it (:func:`_may_raise_in`). It also turns on a trace function that raises at
    the next line of the learner's code, so a bare ``except:`` that swallowed the first one
    does not hold the limit off either; the timer repeats.
    """
    if not _deadlines or frame is None or frame.f_code in _MACHINERY:
        return
    late = time.monotonic() - _deadlines[-1]
    if late < 0:
        return
    # Inside NumPy, the standard library or the course's math (np.errstate's exit, say),
    # raising could leave their state half restored: the trace raises at the learner's next
    # line instead, and the timer comes back. (This module's own code is either machinery,
    # skipped above, or safe to interrupt.) Decided before the trace is set, so that the check
    # itself is not traced.
    in_library = _is_library_code(frame.f_code) and frame.f_code.co_filename != __file__
    may_raise = not in_library and _may_raise_in(frame, late)
    sys.settrace(_trace_after_deadline)
    f = frame
    while f is not None and f.f_code not in _MACHINERY:
        f.f_trace = _trace_after_deadline
        f = f.f_back
    if may_raise:
        raise _TimeLimit(late)


def _is_library_file(filename: str) -> bool:
    """NumPy, the standard library (its frozen modules too: ``<frozen posixpath>``), any
    installed package, or the helpers package: not the learner's code."""
    return filename.startswith("<frozen ") or os.path.abspath(filename).startswith(
        _NOT_LEARNER_CODE
    )


def _is_library_code(code) -> bool:
    filename = code.co_filename
    try:
        return _library_files[filename]
    except KeyError:  # asked on every line once the limit passed: remembered
        library = _library_files[filename] = _is_library_file(filename)
        return library


_library_files: dict[str, bool] = {}


# An exception raised in code that the interpreter calls back (a gc callback, a weakref callback
# such as weakref.finalize's, __del__, or the calls_helper watch's profile hook, called for any
# of these) does not propagate: Python prints "Exception ignored in: ..." and carries on. While
# the limit is this young it is not raised there but at the learner's next line after it; a
# callback that runs longer than this past the deadline (a __del__ that never ends) is stopped
# in it all the same, and the call it interrupted counts as timed out when it returns.
_CALLBACK_GRACE_SECONDS = 0.5
_CALLBACK_CODES = {weakref.finalize.__call__.__code__}
_ignored_raises = 0  # how many times the limit was raised inside a callback (Python ignored it)


def _may_raise_in(frame, late: float) -> bool:
    """False if ``frame`` runs inside the time limit's own machinery (the alarm handler or the
    trace, and whatever they call), or inside a callback of the interpreter while the limit is
    less than ``_CALLBACK_GRACE_SECONDS`` late. The stack is read up to the innermost limit.
    True inside a callback is counted in ``_ignored_raises`` (the caller raises at once)."""
    global _ignored_raises
    gc_callbacks = {getattr(getattr(c, "__func__", c), "__code__", None) for c in gc.callbacks}
    in_callback = False
    while frame is not None and frame.f_code is not _with_time_limit.__code__:
        code = frame.f_code
        if code in _MACHINERY:
            return False
        if code in _CALLBACK_CODES or code in gc_callbacks or code.co_name == "__del__":
            in_callback = True
        frame = frame.f_back
    if in_callback and late >= _CALLBACK_GRACE_SECONDS:
        _ignored_raises += 1
    return not in_callback or late >= _CALLBACK_GRACE_SECONDS


def _trace_after_deadline(frame, event, arg):
    if (
        event in ("line", "call")  # not "exception": the try that is catching would catch it
        and _deadlines
        and time.monotonic() >= _deadlines[-1]
        and frame.f_code not in _MACHINERY
        and not _is_library_code(frame.f_code)
    ):
        late = time.monotonic() - _deadlines[-1]
        if _may_raise_in(frame, late):
            raise _TimeLimit(late)
    return _trace_after_deadline


def _with_time_limit(fn: Callable[..., Any], args: tuple, seconds: float) -> Any:
    """Run ``fn(*args)``; raise ``_TimeLimit`` after ``seconds``. Limits nest.

    In the main thread on Unix (a Jupyter kernel) a repeating SIGALRM timer interrupts the
    learner's code until it gives up; elsewhere the call runs in a daemon thread that is
    abandoned if it overruns (it cannot be stopped).
    """
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        outermost = not _deadlines
        deadline = time.monotonic() + seconds
        if _deadlines:
            deadline = min(deadline, _deadlines[-1])
        previous_trace, previous_profile = sys.gettrace(), sys.getprofile()
        previous_handler = signal.signal(signal.SIGALRM, _on_alarm) if outermost else None
        _deadlines.append(deadline)
        signal.setitimer(
            signal.ITIMER_REAL, max(deadline - time.monotonic(), 1e-4), _RE_ARM_SECONDS
        )
        try:
            ignored_before = _ignored_raises
            value = fn(*args)
            if _ignored_raises != ignored_before:  # see _may_raise_in
                raise _TimeLimit(time.monotonic() - deadline)
            return value
        finally:
            _deadlines.pop()
            if outermost:
                signal.setitimer(signal.ITIMER_REAL, 0)
                # None: the previous handler was not set from Python; the default is closest.
                signal.signal(signal.SIGALRM, previous_handler or signal.SIG_DFL)
            else:
                signal.setitimer(
                    signal.ITIMER_REAL,
                    max(_deadlines[-1] - time.monotonic(), 1e-4),
                    _RE_ARM_SECONDS,
                )
            if sys.gettrace() is not previous_trace:
                sys.settrace(previous_trace)
            # Here, not only in _watching: the alarm may interrupt that clean-up, never this one.
            if sys.getprofile() is not previous_profile:
                sys.setprofile(previous_profile)

    outcome: dict[str, Any] = {}

    def target():
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    # The check's context (its seeded draws, its time-out record) goes along into the thread.
    worker = threading.Thread(target=contextvars.copy_context().run, args=(target,), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        # Trying to stop it takes at most as long again (capped), so that nested limits keep
        # their order: the check's own limit is 4 x one call's.
        stopped = _stop_thread(worker, min(1.0, seconds))
        raise _TimeLimit(still_running="" if stopped else _STILL_RUNNING)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


_STILL_RUNNING = (
    " It is still running in the background and could not be stopped (outside the notebook's "
    "main thread a check can only ask it to stop, and it ignored that): restart the kernel "
    "(Kernel > Restart) to end it."
)


def _stop_thread(worker: threading.Thread, seconds: float = 1.0) -> bool:
    """Raise ``_TimeLimit`` inside ``worker`` (again and again, for up to ``seconds``, since a
    loop may catch it) until it ends; True if it ended. A thread blocked in compiled code
    (``time.sleep``) only sees it when that call returns."""
    give_up = time.monotonic() + seconds
    while worker.is_alive() and time.monotonic() < give_up:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(worker.ident), ctypes.py_object(_TimeLimit)
        )
        worker.join(0.005)
    return not worker.is_alive()


# Code the alarm never interrupts: the time limit itself, and the restoring of the learner's
# global state (RNG, print options), whose interruption would leave that state changed.
_MACHINERY = {
    _with_time_limit.__code__,
    _on_alarm.__code__,
    _trace_after_deadline.__code__,
    _restore_global_state.__code__,
}
# The calls_helper watch's profile hook: called back by the interpreter like the above.
_CALLBACK_CODES |= {
    c
    for c in inspect.unwrap(_watching).__code__.co_consts
    if isinstance(c, types.CodeType) and c.co_name == "hook"
}
assert len(_CALLBACK_CODES) == 2


# ----------------------------------------------------------------------------------------------
# Comparing an answer with the reference, and naming the mistake when it matches a known one.


def as_result_array(
    value: Any, what: str, expected_shape: tuple[int, ...], part: str | None = None
) -> np.ndarray:
    """The learner's return value as a float array of ``expected_shape``, or a :class:`Mistake`.

    ``part`` names one of several returned values (``"output"``, ``"weights"``), so that the
    messages read "<what>: your output has shape ...".
    """
    expected_shape = tuple(expected_shape)
    # "f(x) returned shape (2, 3)" for the one return value; "f(x): your weights have ..." for
    # one of several (a plural part such as "weights" takes "are" / "have").
    plural = part is not None and part.endswith("s")
    returned = (
        f"{what} returned" if part is None else f"{what}: your {part} {'are' if plural else 'is'}"
    )
    if value is None:
        if part is None:
            raise Mistake(
                f"{what} returned None; did you forget the `return` statement?", "returned_none"
            )
        raise Mistake(f"{returned} None; did you forget to compute or return it?", "returned_none")
    if isinstance(value, tuple):
        raise Mistake(f"{returned} a tuple of {len(value)}; it should be one array", "tuple")
    if _is_complex(value) or (
        isinstance(value, list) and any(_is_complex(np.asarray(v)) for v in value[:1000])
    ):
        raise _complex_mistake(returned)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise Mistake(
            f"{returned} a {_type_name(value)}, which is not an array of numbers", "not_numbers"
        ) from None
    if arr.shape != expected_shape:
        has = "have" if plural else "has"
        has = f"{what} returned shape" if part is None else f"{what}: your {part} {has} shape"
        message = f"{has} {arr.shape}; expected {expected_shape}"
        if arr.ndim == 2 and arr.shape[::-1] == expected_shape:
            message += ": it looks transposed"
            raise Mistake(message, "transposed")
        raise Mistake(message, "wrong_shape")
    return arr


def as_result_pair(
    pair: Any, what: str, out_shape: tuple[int, ...], w_shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """An ``(output, weights)`` pair (from :func:`unpack_pair`), each part checked by
    :func:`as_result_array` against its own shape."""
    out, weights = pair
    return (
        as_result_array(out, what, out_shape, part="output"),
        as_result_array(weights, what, w_shape, part="weights"),
    )


def unpack_pair(
    value: Any, what: str, output_shape: tuple[int, ...], weights_shape: tuple[int, ...]
) -> tuple[Any, Any]:
    """The learner's ``(output, weights)`` pair, or a :class:`Mistake` naming the usual slips.

    Recognises None (no ``return``), a single array (only the output, or only the weights, by
    its shape), a tuple of the wrong length and the two values in the wrong order (by their
    shapes). The two values are returned as they came, for the exercise to check further.
    """
    if value is None:
        raise Mistake(
            f"{what} returned None; did you forget `return output, weights`?", "returned_none"
        )
    if not isinstance(value, (tuple, list)):
        shape = np.shape(value) if isinstance(value, np.ndarray) else None
        names = {tuple(output_shape): "only the output", tuple(weights_shape): "only the weights"}
        if shape in names and tuple(output_shape) != tuple(weights_shape):
            raise Mistake(
                f"{what} returned {names[shape]} (shape {shape}); return both: "
                "`return output, weights`.",
                "returned_one",
            )
        kind = f"one array of shape {shape}" if shape else f"a {type(value).__name__}"
        raise Mistake(
            f"{what} returned {kind}; return both: `return output, weights`.", "returned_one"
        )
    if len(value) != 2:
        raise Mistake(
            f"{what} returned {len(value)} values; return two: `output, weights`.", "returned_one"
        )
    shapes = (np.shape(value[0]), np.shape(value[1]))
    if tuple(output_shape) != tuple(weights_shape) and shapes == (
        tuple(weights_shape),
        tuple(output_shape),
    ):
        raise Mistake(
            f"{what} returned (weights, output); the order is `output, weights`, like "
            "helpers.scaled_dot_product_attention.",
            "swapped_pair",
        )
    return value[0], value[1]


def raw_softmax(s: np.ndarray, axis: int | tuple[int, ...] | None = -1) -> np.ndarray:
    """Softmax along ``axis`` (an axis, a tuple of axes, or None for all) that lets NaN and inf
    through, silently: what a (wrong) answer's arithmetic returns, to recognise it. Not for the
    learner's own result."""
    with np.errstate(all="ignore"):
        e = np.exp(s - np.max(s, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """Equal within float32-friendly tolerances (NaN anywhere, or complex, counts as not equal)."""
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return False
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def compare(
    got: np.ndarray,
    expected: np.ndarray,
    known_mistakes: dict[str, np.ndarray],
    generic: str,
    name: str | None = None,
) -> None:
    """Raise :class:`Mistake` unless ``got`` matches ``expected``.

    ``known_mistakes`` maps a message (made with :func:`named`, so it carries its id) to what a
    specific wrong implementation returns on the same input; the first one that ``got``
    matches names the mistake. Otherwise NaN/inf and a
    transposed result are recognised before falling back to ``generic``, which is followed by
    the first entry that differs when ``name`` (e.g. ``"PE"``) is given. A complex ``got`` is
    a mistake of its own (id ``complex``), never compared by its real part.
    """
    if np.iscomplexobj(got):
        raise Mistake(
            f"{generic} Your result holds complex numbers; every quantity here is real.",
            "complex",
        )
    if close(got, expected):
        return
    for message, wrong in known_mistakes.items():
        wrong = np.asarray(wrong, dtype=float)
        if wrong.shape == got.shape and np.array_equal(np.isnan(wrong), np.isnan(got)):
            if close(np.nan_to_num(got), np.nan_to_num(wrong)):
                raise Mistake(message)
    if not np.all(np.isfinite(got)):
        raise Mistake(f"{generic} Your result contains NaN or inf.", "nan_or_inf")
    if got.ndim == 2 and got.shape[0] == got.shape[1] and close(got.T, expected):
        raise Mistake(
            f"{generic} Your result looks transposed (rows and columns swapped).", "transposed"
        )
    if name is not None:
        raise Mistake(f"{generic} {first_difference(got, expected, name)}")
    raise Mistake(generic)


def first_difference(got: np.ndarray, expected: np.ndarray, name: str) -> str:
    """'PE[1, 3] is 0.995 in yours, 1 expected.': the first entry (row by row) that differs."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    far = ~np.isclose(got, expected, rtol=1e-4, atol=1e-5)
    if not far.any():
        return ""
    index = tuple(int(i) for i in np.argwhere(far)[0])
    a, b = got[index], expected[index]
    digits = 3  # as few digits as show the difference
    while digits < 10 and f"{a:.{digits}g}" == f"{b:.{digits}g}":
        digits += 1
    where = ", ".join(map(str, index))
    return f"{name}[{where}] is {a:.{digits}g} in yours, {b:.{digits}g} expected."


# ----------------------------------------------------------------------------------------------
# The check in progress: its draws and whether a call of the learner's function ran out of time.

GRADE_STUDENT_VARIABLE = _record.STUDENT_VARIABLE


class _CheckState:
    """What one check shares across its calls: ``seeds`` (None: fresh draws) and ``timed_out``,
    the :class:`LearnerError` of the first call of the learner's function that ran out of time."""

    def __init__(self) -> None:
        self.seeds: np.random.SeedSequence | None = None
        self.timed_out: LearnerError | None = None


_current_check: contextvars.ContextVar[_CheckState] = contextvars.ContextVar("check")
_sweep_seed: contextvars.ContextVar[int] = contextvars.ContextVar("sweep_seed")
_checks_so_far: dict[str, int] = {}  # exercise -> checks made in this process (grading draws)


def _seed_key(*parts: object) -> int:
    """A 128-bit seed from ``parts``, the same in every process (``hash`` is salted)."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:16], "little")


@contextlib.contextmanager
def seeded_draws(seed: int):
    """Within the block, every check of exercise X draws its cases from (``seed``, X): the same
    cases for every answer checked, and on every run. For tests and sweeps."""
    token = _sweep_seed.set(int(seed))
    try:
        yield
    finally:
        _sweep_seed.reset(token)


@contextlib.contextmanager
def _this_check(state: _CheckState, exercise: str, draw: tuple[str, int] | None = None):
    """Make ``state`` the check in progress and give it its draws: from :func:`seeded_draws`'s
    seed, or, when grading, from (student, exercise, how many checks of it came before in this
    kernel), so that grading the same notebook twice draws the same cases; else fresh ones.
    ``draw``, ``(student, checks before)``, says it outright (the grader's own check)."""
    seed = _sweep_seed.get(None)
    student = os.environ.get(GRADE_STUDENT_VARIABLE)
    if draw is not None:
        state.seeds = np.random.SeedSequence(_seed_key("grade", draw[0], exercise, draw[1]))
    elif seed is not None:
        state.seeds = np.random.SeedSequence(_seed_key("seed", seed, exercise))
    elif student:
        so_far = _checks_so_far.get(exercise, 0)
        _checks_so_far[exercise] = so_far + 1
        state.seeds = np.random.SeedSequence(_seed_key("grade", student, exercise, so_far))
    token = _current_check.set(state)
    try:
        yield
    finally:
        _current_check.reset(token)


def fresh_rng() -> np.random.Generator:
    """A generator for a check's test inputs: new on every check, so hard-coded answers fail;
    when grading or inside :func:`seeded_draws`, the check's own seeded stream (each call the
    next child of it), so the same notebook always draws the same cases."""
    state = _current_check.get(None)
    if state is None or state.seeds is None:
        return np.random.default_rng()
    return np.random.default_rng(state.seeds.spawn(1)[0])
