"""The words of a check's messages about the learner's code: the arguments it was called with,
the line of the learner's code that raised, a keepdims hint, which unfinished function an answer
calls; and :func:`safe_str` / :func:`type_name`, which never let a learner's ``__str__`` raise."""

from __future__ import annotations

import inspect
import os
import re
import sysconfig
import traceback
from typing import Any

import numpy as np

from .mistakes import TimeLimit
from .withheld import ReferenceWithheld

# A signal handled this much later than its deadline means a long call into compiled code.
LATE_SECONDS = 1.0
HELPERS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_LEARNER_CODE = tuple(
    {HELPERS_DIR}
    | {
        os.path.abspath(sysconfig.get_path(k))
        for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)


def type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:
        return "object"


def safe_str(value: Any, limit: int = 600) -> str:
    """``str(value)``, or a placeholder when its ``__str__`` raises (learner's exceptions)."""
    try:
        text = str(value)
        if not isinstance(text, str):
            raise TypeError
    except (TimeLimit, ReferenceWithheld):
        raise
    except BaseException:
        return f"<a {type_name(value)} whose message cannot be shown: its __str__ raised>"
    return text if len(text) <= limit else text[:limit] + " ..."


def late_note(late: float) -> str:
    if late < LATE_SECONDS:
        return ""
    return (
        f" It could only be stopped {late:.0f} s after the limit: one long call into compiled "
        "code (NumPy on a huge array, say) cannot be interrupted inside the notebook. "
        "(make grade stops such a call by killing the notebook's kernel.)"
    )


def called_with(signature: str, args: tuple) -> str:
    """'\n  called with Q of shape (5, 16), n=7': the actual arguments behind a signature."""
    names = [n.strip() for n in signature[signature.find("(") + 1 : -1].split(",")]
    if len(names) != len(args):
        names = [f"argument {k + 1}" for k in range(len(args))]
    shown = []
    for name, arg in zip(names, args):
        if isinstance(arg, np.ndarray):
            shown.append(f"{name} of shape {arg.shape}")
        elif isinstance(arg, type) and issubclass(arg, np.generic):
            shown.append(f"{name}=np.{arg.__name__}")  # np.float32, not <class 'numpy...'>
        else:
            shown.append(f"{name}={arg!r}")
    return "\n  called with " + ", ".join(shown) if shown else ""


_REDUCTION = re.compile(r"(?P<function>\bnp)?\.(?:a?max|a?min|sum|mean)\(")


def reduces_without_keepdims(line: str) -> bool:
    """True if ``line`` reduces along an axis (``z.max(axis=-1)``, ``np.sum(z, -1)``) without
    keepdims. A full reduction to one number (``z.sum()``) is not flagged: it broadcasts."""
    for match in _REDUCTION.finditer(line):
        depth, end = 1, match.end()
        while end < len(line) and depth:  # find the call's closing parenthesis
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            end += 1
        args = line[match.end() : end - 1]
        # np.max(z, -1) names its axis after the array; z.max(-1) as its first argument.
        along_an_axis = "axis" in args or ("," in args if match["function"] else args.strip())
        if along_an_axis and "keepdims" not in args:
            return True
    return False


def keepdims_hint(exc: BaseException) -> str:
    """A hint for a broadcasting error on a line that reduces an axis without keepdims=True."""
    frames = learner_frames(exc)
    line = frames[-1].line if frames and frames[-1].line else ""
    if (
        isinstance(exc, ValueError)
        and "broadcast" in safe_str(exc)
        and reduces_without_keepdims(line)
    ):
        return (
            "; a reduction such as z.max(axis=-1) drops that axis: add keepdims=True so the "
            "result keeps shape (n, 1) and broadcasts back along each row"
        )
    return ""


def stub_raised_by(stub: NotImplementedError, answer: Any) -> str | None:
    """The name of the function that raised ``stub``, or None if it is ``answer`` itself.

    A correct answer that calls the learner's own unfinished function (say, their stubbed
    ``softmax``) must not be told that the answer itself is "not attempted yet".
    """
    tb = stub.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:  # the innermost frame: the one that raised
        tb = tb.tb_next
    try:
        code = getattr(inspect.unwrap(answer), "__code__", None)
    except Exception:
        code = None
    raised_in = tb.tb_frame.f_code
    if code is None or raised_in is code:
        return None
    if is_library_file(raised_in.co_filename):
        return None  # raised by a library on the answer's behalf: treat as before
    return raised_in.co_name


def calls_a_stub_message(name: str, raiser: str, allowed: tuple[str, ...] = ()) -> str:
    """Say which unfinished function the learner's (finished) answer calls."""
    import helpers  # at call time: helpers imports this package
    from helpers import checks

    if not isinstance(getattr(checks, raiser, None), checks.Exercise):
        return (
            f"your {name} calls {raiser}, which still raises NotImplementedError: finish it first"
        )
    may = f"helpers.{raiser}" in allowed or "helpers.*" in allowed
    instead = f" (or call helpers.{raiser})" if hasattr(helpers, raiser) and may else ""
    return (
        f"your {name} calls {raiser}, which still raises NotImplementedError: finish the "
        f"{raiser} exercise above{instead}, then run this check again"
    )


def where(exc: BaseException) -> str:
    """' (at line N: `code`)' for the innermost frame of the learner's own code, if any.

    Frames inside this package, the standard library and installed packages (NumPy raising
    on the learner's behalf) are skipped, so the message points at the learner's line.
    """
    frames = learner_frames(exc)
    if not frames:
        return ""
    frame = frames[-1]
    code = f": `{frame.line.strip()}`" if frame.line else ""
    return f"\n  at line {frame.lineno} of {frame.name}(){code}"


def learner_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The traceback frames of ``exc`` that are in the learner's code, outermost first."""
    return [f for f in traceback.extract_tb(exc.__traceback__) if not is_library_file(f.filename)]


def is_library_file(filename: str) -> bool:
    """NumPy, the standard library (its frozen modules too: ``<frozen posixpath>``), any
    installed package, or the helpers package: not the learner's code."""
    return filename.startswith("<frozen ") or os.path.abspath(filename).startswith(NOT_LEARNER_CODE)
