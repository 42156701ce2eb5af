"""Exercise checks: ``checks.<name>.check(answer)``, ``.hint(level)``, ``.solution()``.

One module per lesson (``lessonNN.py``, and for a long lesson its continuations
``lessonNN_<topic>.py``) defines that lesson's exercises and predictions; this package
gathers every :class:`Exercise` and :class:`Prediction` it finds there by name, and records
which lesson each belongs to, so a new exercise needs no line here.
"""

from __future__ import annotations

import importlib
import pkgutil

from .exercise import Exercise
from .mistakes import Mistake, named
from .prediction import Prediction
from .results import CheckResult

__all__ = ["CheckResult", "Exercise", "Mistake", "Prediction", "named", "catalogue"]


def _gather() -> dict[str, Exercise | Prediction]:
    found: dict[str, Exercise | Prediction] = {}
    modules = {m.name for m in pkgutil.iter_modules(__path__)}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not module_info.name.startswith("lesson"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for name, value in vars(module).items():
            if isinstance(value, (Exercise, Prediction)):
                if name != value.name:
                    raise ImportError(
                        f"{module_info.name}.{name} is the exercise {value.name!r}: name the "
                        "variable as the exercise, so checks.<name> finds it"
                    )
                if name in found:
                    raise ImportError(f"exercise {name!r} is defined in two lessons")
                if name in modules:
                    raise ImportError(
                        f"exercise {name!r} has the name of a module of helpers.checks; "
                        "checks.<name> must be the exercise: name it otherwise"
                    )
                value.lesson = module_info.name[len("lesson") :][:2]  # lesson05_padding: 05
                found[name] = value
    return found


_EXERCISES = _gather()
globals().update(_EXERCISES)
__all__ += list(_EXERCISES)


def _asked(item: Exercise | Prediction) -> tuple[str, int]:
    """(lesson, place in the lesson): the order of the lesson's ``checks.<name>.check`` calls,
    which ``make notebooks`` records in the lesson's answers module (``ASKED``)."""
    asked = importlib.import_module(f"{__name__}.answers.lesson{item.lesson}").ASKED
    return item.lesson, asked.index(item.name) if item.name in asked else len(asked)


_CATALOGUE = sorted(_EXERCISES.values(), key=_asked)


def _name_headings() -> None:
    """Each item's ``heading``, as its lesson titles it: "Exercise 2 ★★" (the ★ and ★★ exercises
    numbered in the lesson's order), "Challenge ★★★", or "Prediction"."""
    number: dict[str, int] = {}
    for item in _CATALOGUE:
        if isinstance(item, Prediction):
            item.heading = "Prediction"
        elif item.stars >= 3:
            item.heading = f"Challenge {'★' * item.stars}"
        else:
            number[item.lesson] = number.get(item.lesson, 0) + 1
            item.heading = f"Exercise {number[item.lesson]} {'★' * item.stars}"


_name_headings()


def catalogue() -> list[Exercise | Prediction]:
    """Every exercise and prediction, in lesson order, then in the order the lesson asks them."""
    return list(_CATALOGUE)
