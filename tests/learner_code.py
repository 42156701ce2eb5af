"""Run a check's answer as the learner would write it: its code in a notebook cell, not inside
the ``helpers`` package, whose own functions (a check's ``.reference``) an answer may not call."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable


def as_learner_code(exercise) -> Callable:
    """The function that ``exercise.solution()`` shows, compiled as if typed into a notebook:
    the same source and globals (its module's names), but its own code, outside ``helpers``."""
    reference = inspect.unwrap(exercise.reference)
    source = textwrap.dedent(inspect.getsource(reference))
    namespace = dict(reference.__globals__)
    exec(compile(source, f"<notebook cell: {exercise.name}>", "exec"), namespace)
    return namespace[reference.__name__]
