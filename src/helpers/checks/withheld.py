"""The graded build's missing answers: in the copy a class gets for credit (``make handout
GRADED=1``, ``make learner-repo GRADED=1``), every lesson's answers module
(:mod:`helpers.checks.answers`) holds :class:`Withheld` placeholders instead of the lesson's
code and values, and each exercise's last hint is :data:`LAST_HINT`. The grader keeps the full
course, so the full checks run when a notebook is graded.

A check in the graded build runs as far as it can without the answer: it calls the learner's
function, parses what came back and names the mistakes it recognises from that alone (None, a
wrong count of values, a wrong shape, NaN ...). A placeholder called (a check computing the
reference) gives a :class:`WithheldValue`, which raises :class:`ReferenceWithheld` the first
time the check *uses* it: so a check that computes its reference before calling the learner
still calls the learner (a stub is still "not attempted", an answer that raises still named),
and the check then says how far the answer got.
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


class ReferenceWithheld(BaseException):  # noqa: N818 (reads as what happened)
    """Raised when a check uses a withheld answer's value. A BaseException, as the time limit
    is: no ``except Exception`` on the way (in a check, or around a learner's value's
    conversion) can turn the missing answer into a verdict."""


_made = [0]  # withheld values made so far, in this process: see made()


def made() -> int:
    """How many :class:`WithheldValue` s were made so far: a check that made one and then
    passed has not seen the lesson's answer, so it has no verdict (never a false ✓)."""
    return _made[0]


class Withheld:
    """An answer of the graded build: its name, and nothing else. Calling it (a check computing
    the reference) gives a :class:`WithheldValue`."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> WithheldValue:
        _made[0] += 1
        return WithheldValue(self.name)

    def __repr__(self) -> str:
        return f"<{self.name}: withheld in the graded build>"


def _refuse(self, *args: Any, **kwargs: Any):
    raise ReferenceWithheld(object.__getattribute__(self, "_name"))


class WithheldValue:
    """What a withheld answer returns: every use of it (an attribute, a conversion to an array
    or a number, arithmetic, comparison, iteration, text) raises :class:`ReferenceWithheld`."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<the value of {object.__getattribute__(self, '_name')}: withheld>"

    __getattr__ = __setattr__ = __delattr__ = _refuse
    __array__ = __array_ufunc__ = __array_function__ = _refuse
    __iter__ = __len__ = __getitem__ = __contains__ = __bool__ = _refuse
    __float__ = __int__ = __index__ = __complex__ = __hash__ = _refuse
    __str__ = __format__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _refuse
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __pos__ = __abs__ = _refuse
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __invert__ = _refuse
    __call__ = _refuse


def is_withheld(value: Any) -> bool:
    return isinstance(value, Withheld | WithheldValue)
