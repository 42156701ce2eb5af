"""The graded build's missing answers: in the copy a class gets for credit (``make handout
GRADED=1``, ``make learner-repo GRADED=1``), every lesson's answers module
(:mod:`helpers.checks.answers`) holds :class:`Withheld` placeholders instead of the lesson's
code and values, and each exercise's last hint is :data:`LAST_HINT`. The grader keeps the full
course, so the full checks run when a notebook is graded.

A check in the graded build runs as far as it can without the answer: it calls the learner's
function, parses what came back and names the mistakes it recognises from that alone (None, a
wrong count of values, a wrong shape, NaN ...). The first time it needs the reference, the
placeholder raises :class:`ReferenceWithheld` and the check says how far the answer got.
"""

from __future__ import annotations

from typing import Any

BUILD_NOTE = (
    "in this graded build of the course the lesson's answers stay with your instructor, and the "
    "full check runs when your notebook is graded."
)
LAST_HINT = (
    "The last hint is not part of this graded build of the course (it is nearly the answer); "
    "the earlier hints, the lesson text and the check's messages are yours to use."
)


class ReferenceWithheld(Exception):
    """Raised by a :class:`Withheld` answer when a check reaches for it."""


class Withheld:
    """An answer of the graded build: its name, and nothing else. Calling it (a check computing
    the reference) raises :class:`ReferenceWithheld`."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ReferenceWithheld(self.name)

    def __repr__(self) -> str:
        return f"<{self.name}: withheld in the graded build>"


def is_withheld(value: Any) -> bool:
    return isinstance(value, Withheld)
