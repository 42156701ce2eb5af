"""The time limit on the learner's code: :func:`with_time_limit` runs a call and raises
:class:`~helpers.checks.mistakes.TimeLimit` after its seconds, whatever the code does to hold it
off.

In a Jupyter kernel's main thread, a repeating SIGALRM timer raises it, and a trace function
raises it again at the learner's next line (so a bare ``except:`` that swallowed it does not
hold the limit off); never inside the limit's own machinery (:data:`MACHINERY`), nor in a
callback of the interpreter, where Python would ignore it (:data:`CALLBACK_CODES`). Elsewhere the
call runs in a thread, which is asked to stop (``PyThreadState_SetAsyncExc``) when it overruns.

The limits (:data:`TIME_LIMIT_SECONDS` for one call, :data:`CHECK_TIME_LIMIT_SECONDS` for a whole
check) are read at call time as ``timelimit.TIME_LIMIT_SECONDS``: make grade sets them through
``HELPERS_CHECK_TIME_LIMIT``, and the tests lower them.
"""

from __future__ import annotations

import contextvars
import ctypes
import gc
import os
import signal
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable
from typing import Any

from . import record
from .messages import is_library_file
from .mistakes import TimeLimit

# One call of the learner's function (HELPERS_CHECK_TIME_LIMIT seconds, set by make grade's
# --check-time-limit; default 5); the whole check (every call plus the checker's own work on
# what the calls returned, e.g. converting an object with a slow __array__) is a backstop.
TIME_LIMIT_SECONDS = record.time_limit_from_environment(5.0)
CHECK_TIME_LIMIT_SECONDS = 4 * TIME_LIMIT_SECONDS


# The checks' own machinery, these modules: the alarm may raise in their code (unless it is
# MACHINERY), while the rest of the helpers package counts as a library, whose state a raise
# could leave half restored; and the calls_helper watch never refuses a call into them.
MACHINERY_MODULES = (
    "calling", "compare", "draws", "exercise", "messages", "mistakes", "policy", "results",
    "timelimit",
)  # fmt: skip
CHECKS_FILES = frozenset(
    os.path.join(os.path.dirname(__file__), f"{m}.py") for m in MACHINERY_MODULES
)

_deadlines: list[float] = []  # the active time limits (time.monotonic()), innermost last
_RE_ARM_SECONDS = 0.05


def _on_alarm(signum, frame):
    """SIGALRM: raise the time limit in the running code once the innermost deadline passed.

    Never inside the time-limit machinery itself (its clean-up must run), nor where Python
    would ignore it (:func:`_may_raise_in`). It also turns on a trace function that raises at
    the next line of the learner's code, so a bare ``except:`` that swallowed the first one
    does not hold the limit off either; the timer repeats.
    """
    if not _deadlines or frame is None or frame.f_code in MACHINERY:
        return
    late = time.monotonic() - _deadlines[-1]
    if late < 0:
        return
    # Inside NumPy, the standard library or the course's math (np.errstate's exit, say),
    # raising could leave their state half restored: the trace raises at the learner's next
    # line instead, and the timer comes back. (This module's own code is either machinery,
    # skipped above, or safe to interrupt.) Decided before the trace is set, so that the check
    # itself is not traced.
    in_library = _is_library_code(frame.f_code) and frame.f_code.co_filename not in CHECKS_FILES
    may_raise = not in_library and _may_raise_in(frame, late)
    sys.settrace(_trace_after_deadline)
    f = frame
    while f is not None and f.f_code not in MACHINERY:
        f.f_trace = _trace_after_deadline
        f = f.f_back
    if may_raise:
        raise TimeLimit(late)


def _is_library_code(code) -> bool:
    filename = code.co_filename
    try:
        return _library_files[filename]
    except KeyError:  # asked on every line once the limit passed: remembered
        library = _library_files[filename] = is_library_file(filename)
        return library


_library_files: dict[str, bool] = {}


# An exception raised in code that the interpreter calls back (a gc callback, a weakref callback
# such as weakref.finalize's, __del__, or the calls_helper watch's profile hook, called for any
# of these) does not propagate: Python prints "Exception ignored in: ..." and carries on. While
# the limit is this young it is not raised there but at the learner's next line after it; a
# callback that runs longer than this past the deadline (a __del__ that never ends) is stopped
# in it all the same, and the call it interrupted counts as timed out when it returns.
CALLBACK_GRACE_SECONDS = 0.5
CALLBACK_CODES = {weakref.finalize.__call__.__code__}
_ignored_raises = 0  # how many times the limit was raised inside a callback (Python ignored it)


def _may_raise_in(frame, late: float) -> bool:
    """False if ``frame`` runs inside the time limit's own machinery (the alarm handler or the
    trace, and whatever they call), or inside a callback of the interpreter while the limit is
    less than ``CALLBACK_GRACE_SECONDS`` late. The stack is read up to the innermost limit.
    True inside a callback is counted in ``_ignored_raises`` (the caller raises at once)."""
    global _ignored_raises
    gc_callbacks = {getattr(getattr(c, "__func__", c), "__code__", None) for c in gc.callbacks}
    in_callback = False
    while frame is not None and frame.f_code is not with_time_limit.__code__:
        code = frame.f_code
        if code in MACHINERY:
            return False
        if code in CALLBACK_CODES or code in gc_callbacks or code.co_name == "__del__":
            in_callback = True
        frame = frame.f_back
    if in_callback and late >= CALLBACK_GRACE_SECONDS:
        _ignored_raises += 1
    return not in_callback or late >= CALLBACK_GRACE_SECONDS


def _trace_after_deadline(frame, event, arg):
    if (
        event in ("line", "call")  # not "exception": the try that is catching would catch it
        and _deadlines
        and time.monotonic() >= _deadlines[-1]
        and frame.f_code not in MACHINERY
        and not _is_library_code(frame.f_code)
    ):
        late = time.monotonic() - _deadlines[-1]
        if _may_raise_in(frame, late):
            raise TimeLimit(late)
    return _trace_after_deadline


def with_time_limit(fn: Callable[..., Any], args: tuple, seconds: float) -> Any:
    """Run ``fn(*args)``; raise ``TimeLimit`` after ``seconds``. Limits nest.

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
                raise TimeLimit(time.monotonic() - deadline)
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
            # Here, not only in watching: the alarm may interrupt that clean-up, never this one.
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
        raise TimeLimit(still_running="" if stopped else _STILL_RUNNING)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


_STILL_RUNNING = (
    " It is still running in the background and could not be stopped (outside the notebook's "
    "main thread a check can only ask it to stop, and it ignored that): restart the kernel "
    "(Kernel > Restart) to end it."
)


def _stop_thread(worker: threading.Thread, seconds: float = 1.0) -> bool:
    """Raise ``TimeLimit`` inside ``worker`` (again and again, for up to ``seconds``, since a
    loop may catch it) until it ends; True if it ended. A thread blocked in compiled code
    (``time.sleep``) only sees it when that call returns."""
    give_up = time.monotonic() + seconds
    while worker.is_alive() and time.monotonic() < give_up:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(worker.ident), ctypes.py_object(TimeLimit)
        )
        worker.join(0.005)
    return not worker.is_alive()


# Code the alarm never interrupts: the time limit itself, and (added by helpers.checks.calling,
# through never_interrupt) the restoring of the learner's global state (RNG, print options),
# whose interruption would leave that state changed.
MACHINERY = {with_time_limit.__code__, _on_alarm.__code__, _trace_after_deadline.__code__}


def never_interrupt(function: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: the alarm never raises inside ``function`` (its clean-up must complete)."""
    MACHINERY.add(function.__code__)
    return function


def called_back(code: types.CodeType) -> None:
    """Count ``code`` as a callback of the interpreter (like a weakref callback): the limit is
    not raised in it while young, since Python would ignore it there (the calls_helper watch's
    profile hook, from helpers.checks.policy)."""
    CALLBACK_CODES.add(code)
