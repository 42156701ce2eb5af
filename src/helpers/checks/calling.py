"""Calling the learner's function for a check: on copies of the inputs, under the time limit
and the helper-call policy, every exception (``SystemExit`` too) turned into a
:class:`~helpers.checks.mistakes.LearnerError` that names the line, NumPy's and ``random``'s
global state restored afterwards, and an object with ``__array__`` converted inside the limit.
:class:`LocalAnswer` is the learner's function in this process, as an exercise's check reaches
it (the grader's ``RemoteAnswer`` is the same surface over the wire)."""

from __future__ import annotations

import random
import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import timelimit
from .compare import complex_mistake, is_complex
from .draws import current_check
from .messages import (
    called_with,
    keepdims_hint,
    late_note,
    safe_str,
    stub_raised_by,
    type_name,
    where,
)
from .mistakes import LearnerError, TimeLimit
from .policy import HelperWatch, refusal, watching
from .timelimit import with_time_limit


class LocalAnswer:
    """The learner's function in this process, as a check reaches it: whether it *is* a helper
    (:meth:`refused`), the ``call`` a check's ``grade`` gets (:meth:`caller`), and which
    function raised a ``NotImplementedError`` (:meth:`stub_raiser`)."""

    draw: tuple[str, int] | None = None  # this process's grading draws (see this_check)

    def __init__(self, fn: Callable[..., Any], signature: str, allowed: tuple[str, ...] = ()):
        self.fn, self.signature = fn, signature
        self.watch = HelperWatch(allowed)

    def refused(self) -> tuple[str, str] | None:
        return self.watch.verdict_on_answer(self.fn)

    def caller(self) -> Callable[..., Any]:
        def call(*args):
            return call_learner(self.fn, args, self.signature, self.watch)

        call.measure_peak = self.measure_peak  # lesson 07's memory case
        return call

    def measure_peak(self, *args) -> tuple[Any, int | None]:
        """``(value, peak bytes traced during the call)``; the peak is None when tracemalloc
        was already tracing something else (the check does not disturb it)."""
        if tracemalloc.is_tracing():
            return call_learner(self.fn, args, self.signature, self.watch), None
        tracemalloc.start()
        try:
            value = call_learner(self.fn, args, self.signature, self.watch)
            return value, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def stub_raiser(self, stub: NotImplementedError) -> str | None:
        return stub_raised_by(stub, self.fn)


def call_learner(
    fn: Callable[..., Any], args: tuple, signature: str, watch: HelperWatch | None = None
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
    state = current_check()
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
                with watching(watch, used):
                    return _materialize(fn(*args))
            except (NotImplementedError, TimeLimit):
                raise
            except BaseException as exc:  # SystemExit, KeyboardInterrupt, any Exception
                # Described here, inside the time limit: its __str__ is the learner's code too.
                raise LearnerError(
                    f"{signature} raised {type_name(exc)}: {safe_str(exc).strip()}"
                    f"{keepdims_hint(exc)}{called_with(signature, args)}{where(exc)}"
                ) from None

    saved = _global_state()
    try:
        # The warnings filter is global: set and restored here, in the calling thread, so an
        # abandoned time-limit thread cannot leave it changed.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = with_time_limit(quietly, args, timelimit.TIME_LIMIT_SECONDS)
    except (NotImplementedError, LearnerError):
        raise
    except TimeLimit as stopped:
        seconds = timelimit.TIME_LIMIT_SECONDS
        error = LearnerError(
            f"{signature} did not finish within {seconds:g} s on a small input; "
            f"is there a loop that never ends, or a long sleep?{late_note(stopped.late)}"
            f"{stopped.still_running}{called_with(signature, args)}",
            "timeout",
        )
        if state is not None:
            state.timed_out = error
        raise error from None
    finally:
        restore_global_state(saved)
    if used:
        raise refusal(signature, *used[0], watch.allowed)  # used: only with a watch
    if is_complex(value):
        raise complex_mistake(f"{signature} returned")
    return value


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


def _global_state() -> tuple:
    return np.random.get_state(), random.getstate(), np.get_printoptions()


@timelimit.never_interrupt
def restore_global_state(saved: tuple) -> None:
    """Undo ``np.random.seed``, ``random.seed`` and ``np.set_printoptions`` in the answer."""
    np_state, py_state, print_options = saved
    try:
        np.random.set_state(np_state)
        random.setstate(py_state)
        np.set_printoptions(**print_options)
    except Exception:  # a monkeypatched module: leave it as the learner made it
        pass


def in_known_state(fn: Callable[..., Any], args: tuple, seconds: float) -> Any:
    """Run the checker's ``fn`` under a known NumPy error state and warnings filter (whatever
    ``np.seterr`` or ``warnings.simplefilter`` earlier cells ran), within ``seconds``."""

    def known(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return with_time_limit(known, args, seconds)
