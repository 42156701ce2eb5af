"""Which course helpers an answer may call: an exercise names them (``allowed``); a call from the
learner's code into any other function of the ``helpers`` package is refused (``calls_helper``),
and a call into a check's own answer (``checks.<name>.reference``) too (``calls_reference``).
:class:`HelperWatch` decides, :func:`watching` records the first refused call (a profile hook)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import sys
import types
from typing import Any

from . import timelimit
from .messages import HELPERS_DIR
from .mistakes import Mistake


def module_of(filename: str) -> str | None:
    """``"helpers.attention"`` for a file of the helpers package, None for any other file."""
    path = os.path.abspath(filename)
    if not path.startswith(HELPERS_DIR + os.sep):
        return None
    parts = os.path.relpath(path, os.path.dirname(HELPERS_DIR)).removesuffix(".py").split(os.sep)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def public_names() -> dict[Any, str]:
    """The code object of every function the helpers package exports, mapped to its shortest
    public dotted name (``helpers.softmax`` rather than ``helpers.attention.softmax``).

    Worked out again when the helpers modules loaded have changed: a table made while a
    module was still being imported would miss its names (a refusal then named
    ``helpers.induction.scores.induction_score``)."""
    loaded = tuple(sorted(m for m in sys.modules if m == "helpers" or m.startswith("helpers.")))
    return _public_names_of(loaded)


@functools.cache
def _public_names_of(loaded: tuple[str, ...]) -> dict[Any, str]:
    names: dict[Any, str] = {}
    for module_name in sorted(loaded, key=lambda m: (len(m), m)):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if attribute.startswith("_") or not inspect.isfunction(value):
                continue
            code = getattr(inspect.unwrap(value), "__code__", None)
            if code is not None and module_of(code.co_filename) is not None:
                names.setdefault(code, f"{module_name}.{attribute}")
    return names


def _outer(code) -> tuple[str | None, str]:
    """(module, outermost name) of a code object: ``("helpers.attention", "softmax")`` for
    ``softmax`` and for a generator or function nested in it; the class for a method."""
    return module_of(code.co_filename), code.co_qualname.split(".")[0]


@functools.cache
def resolve(dotted: str) -> tuple[str | None, str]:
    """:func:`_outer` of what a dotted public name (``helpers.softmax``) stands for."""
    module_name, _, attribute = dotted.rpartition(".")
    value = inspect.unwrap(getattr(importlib.import_module(module_name), attribute))
    if inspect.isclass(value):
        return module_of(inspect.getfile(value)), value.__qualname__.split(".")[0]
    return _outer(value.__code__)


class HelperWatch:
    """Which calls from the learner's code into the ``helpers`` package an answer may make.

    ``allowed`` (dotted names; a class allows its methods; ``"module.*"`` a whole module or
    subpackage) lists what may be called; any other function of the package is refused, and a
    call into the exercise checks always is (``calls_reference`` for a ``.reference``).
    """

    def __init__(self, allowed: tuple[str, ...]):
        self.allowed = allowed
        self.keys = {resolve(d) for d in allowed if not d.endswith(".*")}
        self.prefixes = tuple(d[:-1] for d in allowed if d.endswith(".*"))
        self._verdicts: dict[Any, tuple[str, str] | None] = {}
        self._inside: dict[Any, bool] = {}

    def verdict_on_answer(self, answer: Any) -> tuple[str, str] | None:
        """:meth:`verdict` on the answer itself (``softmax = helpers.softmax`` is a call of
        the helper by the learner, though the check is what calls it)."""
        while isinstance(answer, functools.partial):
            answer = answer.func
        try:
            code = getattr(inspect.unwrap(answer), "__code__", None)
        except Exception:
            return None
        return self.verdict(code) if isinstance(code, types.CodeType) else None

    def in_helpers(self, code) -> bool:
        """True for code of the helpers package (a helper calling another is not watched)."""
        inside = self._inside.get(code)
        if inside is None:
            inside = self._inside[code] = module_of(code.co_filename) is not None
        return inside

    def verdict(self, code) -> tuple[str, str] | None:
        """None if the learner's code may call ``code``; else (mistake id, the name shown)."""
        if code.co_name == "<module>":
            return None  # a module of the package run by an import: not a call of a helper
        try:
            return self._verdicts[code]
        except KeyError:
            pass
        verdict = None
        module, outer = key = _outer(code)
        if module is not None:
            name = public_names().get(code) or f"{module}.{outer}"
            if module in _CHECKS_MODULES:
                pass  # the check's own machinery (the watch's exit, the time limit's handler)
            elif module.startswith("helpers.checks"):
                reference = _reference_name(code)
                verdict = ("calls_reference", reference) if reference else ("calls_helper", name)
            elif key not in self.keys and not (module + ".").startswith(self.prefixes):
                verdict = ("calls_helper", name)
        self._verdicts[code] = verdict
        return verdict


def _reference_name(code) -> str | None:
    """``checks.softmax.reference`` when ``code`` is an exercise's reference answer."""
    from helpers import checks  # at call time: the package imports this module

    for exercise in checks.catalogue():
        reference = getattr(exercise, "reference", None)
        if getattr(inspect.unwrap(reference), "__code__", None) is code:
            return f"checks.{exercise.name}.reference"
    return None


def refusal(signature: str, mistake: str, name: str, allowed: tuple[str, ...]) -> Mistake:
    """The message for an answer that called a helper it may not (or a check's answer)."""
    if mistake == "calls_reference":
        return Mistake(
            f"{signature} calls {name}, the check's own answer. Write it yourself with NumPy: "
            "that is the exercise (`.solution()` shows that answer when you want to read it).",
            "calls_reference",
        )
    may = (
        "NumPy only"
        if not allowed
        else "NumPy and "
        + ", ".join(a.removesuffix(".*") + (" (any)" if a.endswith(".*") else "") for a in allowed)
    )
    return Mistake(
        f"{signature} calls {name}, which this exercise does not let you use ready-made. Write "
        f"it yourself: that is the exercise. This one may use: {may}.",
        "calls_helper",
    )


@contextlib.contextmanager
def watching(watch: HelperWatch | None, used: list[tuple[str, str]]):
    """Record in ``used`` the first call from code outside the helpers package (the learner's,
    or a library calling back, e.g. ``np.apply_along_axis``) into a helper that ``watch``
    refuses, while the block runs.

    A profile hook (not a trace), so it coexists with the time limit's trace; set and removed
    in the thread that runs the learner's code."""
    if watch is None:
        yield
        return
    previous = sys.getprofile()
    verdict, in_helpers = watch.verdict, watch.in_helpers

    def hook(frame, event, arg):
        if event == "call" and not used:
            refused = verdict(frame.f_code)
            caller = frame.f_back
            if refused is not None and (caller is None or not in_helpers(caller.f_code)):
                used.append(refused)

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


# The watch's profile hook is called back by the interpreter, like a weakref callback.
timelimit.called_back(
    next(
        c
        for c in inspect.unwrap(watching).__code__.co_consts
        if isinstance(c, types.CodeType) and c.co_name == "hook"
    )
)
_CHECKS_MODULES = frozenset(f"{__package__}.{m}" for m in timelimit.MACHINERY_MODULES)
