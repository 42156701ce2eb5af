"""The check in progress and its random cases: :func:`fresh_rng` gives new cases on every check,
so a hard-coded answer cannot pass; when grading (``HELPERS_GRADE_STUDENT`` names the student)
or inside :func:`seeded_draws`, they come from a seed derived from (student or seed, exercise,
how many times that exercise was checked before), so the same notebook always gets the same
grade. :class:`CheckState` also records the first call that ran out of time."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os

import numpy as np

from . import record
from .mistakes import LearnerError

# ----------------------------------------------------------------------------------------------
# The check in progress: its draws and whether a call of the learner's function ran out of time.


class CheckState:
    """What one check shares across its calls: ``seeds`` (None: fresh draws) and ``timed_out``,
    the :class:`LearnerError` of the first call of the learner's function that ran out of time."""

    def __init__(self) -> None:
        self.seeds: np.random.SeedSequence | None = None
        self.timed_out: LearnerError | None = None


_current: contextvars.ContextVar[CheckState] = contextvars.ContextVar("check")
_sweep_seed: contextvars.ContextVar[int] = contextvars.ContextVar("sweep_seed")
checks_so_far: dict[str, int] = {}  # exercise -> checks made in this process (grading draws)


def _seed_key(*parts: object) -> int:
    """A 128-bit seed from ``parts``, the same in every process (``hash`` is salted)."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[:16], "little")


def current_check() -> CheckState | None:
    """The state of the check running in this thread (its draws, its time-out), or None."""
    return _current.get(None)


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
def this_check(state: CheckState, exercise: str, draw: tuple[str, int] | None = None):
    """Make ``state`` the check in progress and give it its draws: from :func:`seeded_draws`'s
    seed, or, when grading, from (student, exercise, how many checks of it came before in this
    kernel), so that grading the same notebook twice draws the same cases; else fresh ones.
    ``draw``, ``(student, checks before)``, says it outright (the grader's own check)."""
    seed = _sweep_seed.get(None)
    student = os.environ.get(record.STUDENT_VARIABLE)
    if draw is not None:
        state.seeds = np.random.SeedSequence(_seed_key("grade", draw[0], exercise, draw[1]))
    elif seed is not None:
        state.seeds = np.random.SeedSequence(_seed_key("seed", seed, exercise))
    elif student:
        so_far = checks_so_far.get(exercise, 0)
        checks_so_far[exercise] = so_far + 1
        state.seeds = np.random.SeedSequence(_seed_key("grade", student, exercise, so_far))
    token = _current.set(state)
    try:
        yield
    finally:
        _current.reset(token)


def fresh_rng() -> np.random.Generator:
    """A generator for a check's test inputs: new on every check, so hard-coded answers fail;
    when grading or inside :func:`seeded_draws`, the check's own seeded stream (each call the
    next child of it), so the same notebook always draws the same cases."""
    state = _current.get(None)
    if state is None or state.seeds is None:
        return np.random.default_rng()
    return np.random.default_rng(state.seeds.spawn(1)[0])
