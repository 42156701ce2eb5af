"""The grader's hands inside a student's kernel: it runs the student's functions, nothing else.

After the notebook's own cells, the grader checks every exercise again from its own process
(:mod:`helpers.grade._remote`): it draws the cases, and each time the check calls the
student's function it asks this module, in the kernel, to call it and write back what came
out (:mod:`helpers.grade._wire`: values only, never a pickle). Everything here runs where the
student's code ran first, so nothing here is trusted: what it writes can only be an output the
grader's check then judges, or a reason the call failed (which fails the check).

One request per call of :func:`serve`: a pickle the grader wrote (the grader trusts itself)
naming the operation, and a path stem for the reply.
"""

from __future__ import annotations

import pickle
import tracemalloc


def _namespace() -> dict:
    try:
        return get_ipython().user_ns  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        import __main__

        return vars(__main__)


def _answer(name: str):
    """What the notebook's last check of ``name`` was given, else its variable ``name``."""
    from helpers.checks import _record

    answers = getattr(_record, "answers", {})
    if isinstance(answers, dict) and name in answers:
        return answers[name], True
    namespace = _namespace()
    return namespace.get(name), name in namespace


def _error(kind: str, message: str, mistake: str = "", raiser: str | None = None) -> dict:
    return {"kind": kind, "message": message[:4000], "id": mistake, "raiser": raiser}


def _call(request: dict) -> dict:
    from helpers import checks
    from helpers.checks import _core

    fn, _ = _answer(request["name"])
    exercise = getattr(checks, request["name"])
    answer = _core.LocalAnswer(fn, exercise.signature, exercise.allowed)
    try:
        if request.get("measure"):
            value, peak = answer.measure_peak(*request["args"])
        else:
            value, peak = _core._call_learner(fn, request["args"], exercise.signature,
                                              answer.watch), None  # fmt: skip
    except NotImplementedError as stub:
        return _error("stub", "", "", answer.stub_raiser(stub))
    except (_core.LearnerError, _core.Mistake) as failure:
        kind = "learner" if isinstance(failure, _core.LearnerError) else "mistake"
        return _error(kind, _core._safe_str(failure, 4000), str(failure.id or ""))
    return {"kind": "value", "value": value, "peak": peak}


def _find(request: dict) -> dict:
    from helpers import checks
    from helpers.checks import _core

    value, found = _answer(request["name"])
    reply = {"kind": "found", "found": bool(found), "callable": callable(value),
             "type": _core._type_name(value)}  # fmt: skip
    if request.get("prediction"):
        reply["value"] = value
    elif callable(value):
        exercise = getattr(checks, request["name"])
        reply["refused"] = _core.LocalAnswer(value, exercise.signature,
                                             exercise.allowed).refused()  # fmt: skip
    return reply


def serve(request_path: str) -> None:
    """Answer the grader's request in ``request_path``; the reply goes to its ``reply`` stem."""
    from helpers.grade import _wire

    with open(request_path, "rb") as f:
        request = pickle.load(f)
    was_tracing = tracemalloc.is_tracing()
    try:
        reply = (_find if request["op"] == "find" else _call)(request)
    except BaseException as failure:  # the notebook broke something the call needs
        from helpers.checks._core import _safe_str, _type_name

        reply = _error("broken", f"{_type_name(failure)}: {_safe_str(failure)}")
    finally:
        if tracemalloc.is_tracing() and not was_tracing:
            tracemalloc.stop()
    _wire.write(reply, request["reply"])
