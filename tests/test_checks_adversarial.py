"""Every exercise check against a corpus of hostile answers (issue 11).

The contract: ``check`` never raises, returns within its limit plus a margin, never says
Correct, and leaves the caller's NumPy error state, RNG state, print options, warnings filter
and timer as they were. The time limits are lowered so the whole corpus runs in seconds.
"""

from __future__ import annotations

import random
import signal
import sys
import time
import warnings

import numpy as np
import pytest
from support.learner_code import as_learner_code

from helpers import checks
from helpers.checks import exercise, timelimit

EXERCISES = [e for e in checks.catalogue() if isinstance(e, exercise.Exercise)]
MARGIN_SECONDS = 1.5


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("__str__ raises too")


class SleepyArray:
    def __array__(self, dtype=None, copy=None):
        time.sleep(60)


class RaisingArray:
    def __array__(self, dtype=None, copy=None):
        raise SystemExit("from __array__")


class Weird:
    def __eq__(self, other):
        raise RuntimeError

    def __float__(self):
        raise RuntimeError

    def __len__(self):
        raise RuntimeError

    def __repr__(self):
        raise RuntimeError


def _first_array(args):
    return next((a for a in args if isinstance(a, np.ndarray)), np.zeros((2, 2)))


def _plus_5j(value):
    if isinstance(value, tuple):
        return tuple(_plus_5j(v) for v in value)
    return np.asarray(value) + 5j


def _raise(exc):
    def answer(*args, **kwargs):
        raise exc

    return answer


def _loop_catching_exception(*args, **kwargs):
    while True:
        try:
            time.sleep(1)
        except Exception:
            pass


def _side_effects(*args, **kwargs):
    np.random.seed(0)
    random.seed(0)
    np.set_printoptions(precision=1)
    np.seterr(all="raise")
    warnings.simplefilter("error")
    return None


def _mutates_input(*args, **kwargs):
    for a in args:
        if isinstance(a, np.ndarray) and a.flags.writeable and a.dtype.kind == "f":
            a[...] = np.nan
    return _first_array(args)


CORPUS = {
    "None": lambda *a, **k: None,
    "a string": lambda *a, **k: "attention",
    "an int": lambda *a, **k: 42,
    "a nested list": lambda *a, **k: [[1, 2], [3]],
    "a tuple of three": lambda *a, **k: (1, 2, 3),
    "an empty array": lambda *a, **k: np.array([]),
    "NaN like the input": lambda *a, **k: np.full_like(_first_array(a), np.nan, dtype=float),
    "inf like the input": lambda *a, **k: np.full_like(_first_array(a), np.inf, dtype=float),
    "the input back": lambda *a, **k: _first_array(a),
    "an object array": lambda *a, **k: np.array([Weird(), Weird()], dtype=object),
    "a weird object": lambda *a, **k: Weird(),
    "an array that raises SystemExit": lambda *a, **k: RaisingArray(),
    "a sleeping __array__": lambda *a, **k: SleepyArray(),
    "ValueError": _raise(ValueError("nope")),
    "SystemExit": _raise(SystemExit(1)),
    "KeyboardInterrupt": _raise(KeyboardInterrupt()),
    "an exception whose __str__ raises": _raise(Unprintable()),
    "a loop catching Exception": _loop_catching_exception,
    "global side effects": _side_effects,
    "mutates its input": _mutates_input,
}


@pytest.fixture(autouse=True)
def low_limits(monkeypatch):
    monkeypatch.setattr(timelimit, "TIME_LIMIT_SECONDS", 0.1)
    monkeypatch.setattr(timelimit, "CHECK_TIME_LIMIT_SECONDS", 0.5)


def _state():
    return (
        np.geterr(),
        np.random.get_state()[1][:5].tolist(),
        random.getstate()[1][:5],
        np.get_printoptions(),
        len(warnings.filters),
        signal.getitimer(signal.ITIMER_REAL),
        sys.gettrace(),
        sys.getprofile(),  # the calls_helper watch must not outlive the check
    )


def _assert_contract(exercise, answer):
    before = _state()
    start = time.perf_counter()
    result = exercise.check(answer)  # must not raise
    elapsed = time.perf_counter() - start
    assert elapsed < timelimit.CHECK_TIME_LIMIT_SECONDS + MARGIN_SECONDS, elapsed
    assert result.passed is not True, result
    assert result.exercise == exercise.name
    assert result.mistake is None or result.mistake.startswith(exercise.name + ".")
    assert isinstance(result.message, str) and result.message
    assert _state() == before
    return result


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_every_check_holds_against_the_corpus(exercise):
    for name, answer in CORPUS.items():
        try:
            _assert_contract(exercise, answer)
        except AssertionError as failure:
            raise AssertionError(f"{exercise.name} against {name}: {failure}") from None


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_every_check_rejects_the_reference_plus_5j(exercise):
    right = as_learner_code(exercise)

    def complex_answer(*args):
        return _plus_5j(right(*args))

    result = _assert_contract(exercise, complex_answer)
    assert result.passed is False


def test_the_corpus_covers_every_exercise_of_the_catalogue():
    assert len(EXERCISES) >= 11 and len(CORPUS) >= 20
