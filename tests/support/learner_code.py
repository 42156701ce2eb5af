"""Run a check's answer as the learner would write it: its code in a notebook cell, not inside
the ``helpers`` package, whose own functions (a check's ``.reference``) an answer may not call."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

from helpers import checks


def as_learner_code(exercise) -> Callable:
    """The function that ``exercise.solution()`` shows, compiled as if typed into a notebook
    in which the learner has answered the earlier exercises: the shown code, with its module's
    names, and each other exercise it calls by name bound to that exercise's shown solution."""
    text = exercise.solution().text
    namespace = dict(inspect.unwrap(exercise.reference).__globals__)
    for other in checks.catalogue():
        if other is not exercise and isinstance(other, checks.Exercise):
            if re.search(rf"\b{other.name}\b", text):
                namespace[other.name] = as_learner_code(other)
    exec(compile(text, f"<notebook cell: {exercise.name}>", "exec"), namespace)
    return namespace[exercise.name]
