"""The failures a check knows: a :class:`Mistake` in the learner's answer (with a stable id, made
with :func:`named`), a :class:`LearnerError` (the learner's code raised or ran out of time), and
the :class:`TimeLimit` that stops it."""

from __future__ import annotations

import re


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


class TimeLimit(BaseException):  # noqa: N818
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
