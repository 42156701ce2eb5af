"""The grader's own check of every exercise: cases drawn and outputs judged in the grader's
process, the student's functions called in the student's kernel.

After a notebook's cells have run, :func:`grade_in_kernel` takes each exercise and prediction of
its lesson in turn. For an exercise it runs the check's ``grade`` function *here*, with a
``call`` that asks the kernel (through :mod:`helpers.checks.grading`) to call the student's
function on the arguments and send back what it returned (:mod:`course_grader.isolation.wire`: plain
values, checked on the way in). For a prediction it fetches the guess and compares it here. So
nothing the notebook does to ``helpers`` in its kernel, to the checks' log or to the runner
changes a verdict: at worst it changes what comes back, which the check then judges, or makes
a call fail, which fails the check.

What the kernel reports and the grader cannot check is trusted no further than the student:
whether an answer called a course helper it may not (the kernel's watch). Lesson 07's peak
memory is measured twice, by tracemalloc in the kernel and by the grader from the kernel's
resident memory (:mod:`.peak`), and the larger counts. docs/INSTRUCTORS.md says so.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import pickle
import uuid
from pathlib import Path
from typing import Any

from helpers.checks import grading
from helpers.checks.grading import Exercise, LearnerError, Mistake, Prediction

from . import wire

# Mistake ids a call may come back with from the kernel (anything else is read as "raised").
_CALL_MISTAKES = {"raised", "timeout", "calls_helper", "calls_reference", "complex"}


class KernelGone(Exception):
    """The kernel stopped answering: it died (``died``), or a call overran and it was killed."""

    def __init__(self, message: str, died: bool):
        super().__init__(message)
        self.died = died


class _Closed(BaseException):  # noqa: N818
    """A call from a check that has already been decided (its time ran out): refused at once."""


class Channel:
    """Requests to one student's kernel, from a worker thread while the event loop runs it."""

    def __init__(self, client, loop, folder: Path, folder_fd: int, call_seconds: float,
                 add_cell, kill, peak=None):  # fmt: skip
        # folder_fd: the requests' folder, opened before the kernel started; every file the
        # grader writes or reads there goes through it, never through a link the kernel made.
        self.client, self.loop, self.folder, self.folder_fd = client, loop, folder, folder_fd
        self.call_seconds = call_seconds
        self._add_cell, self._kill = add_cell, kill
        self.peak = peak  # a peak.PeakWatch on the kernel's process, or None
        self.gone: str = ""  # why the kernel no longer answers
        self.died = False
        self._tokens = itertools.count()

    def request(self, op: dict) -> dict:
        if self.gone:
            raise KernelGone(self.gone, self.died)
        token = f"{next(self._tokens)}-{uuid.uuid4().hex}"
        request_name, stem = f"request-{token}.pkl", f"reply-{token}"
        request_path = self.folder / request_name
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(request_name, flags, 0o644, dir_fd=self.folder_fd)
        with os.fdopen(fd, "wb") as f:
            pickle.dump(dict(op, reply=str(self.folder / stem)), f)
        cell, index = self._add_cell(
            f'__import__("helpers.checks.grading", fromlist=["serve"]).serve({str(request_path)!r})'
        )
        # The kernel's own limit on one call (SIGALRM) answers within call_seconds; this one
        # is for a call stuck in compiled code, or a kernel that no longer answers at all.
        patience = 2 * self.call_seconds + 10
        # The request's own time, whatever is left of the notebook's (its cells are done).
        self.client.timeout_func = lambda cell: patience
        measuring = bool(op.get("measure")) and self.peak is not None
        if measuring:
            self.peak.start()
        future = asyncio.run_coroutine_threadsafe(
            self.client.async_execute_cell(cell, index), self.loop
        )
        try:
            future.result(timeout=patience)
        except Exception as failure:
            future.cancel()
            self.died = type(failure).__name__ == "DeadKernelError"
            what = f"checked {op['name']}"
            self.gone = (
                f"the notebook's kernel died while the grader {what} (os._exit, a killed "
                "process or a crash end the kernel)"
                if self.died
                else f"the notebook's kernel did not answer within {patience:g} s while the "
                f"grader {what}: the grader stopped it"
            )
            self._kill()
            raise KernelGone(self.gone, self.died) from None
        try:
            reply = wire.read(stem, self.folder_fd)
        finally:
            for name in (request_name, stem + ".json", stem + ".npz"):
                try:
                    os.unlink(name, dir_fd=self.folder_fd)
                except OSError:
                    pass
        if not isinstance(reply, dict) or not isinstance(reply.get("kind"), str):
            raise wire.WireError("not a reply")
        # Set here whatever the reply said: the grader's own measurement, or none.
        reply["grader_peak"] = self.peak.stop() if measuring else None
        return reply


def _text(value: Any, limit: int = 4000) -> str:
    return value[:limit] if isinstance(value, str) else ""


class RemoteAnswer:
    """The student's function of one exercise, in the kernel (the kernel's side of each call:
    :func:`helpers.checks.grading.serve`)."""

    def __init__(self, channel: Channel, exercise: Exercise, refused, draw):
        self.channel, self.exercise, self.draw = channel, exercise, draw
        self._refused = refused
        self.closed = False

    def refused(self):
        return self._refused

    def stub_raiser(self, stub: NotImplementedError) -> str | None:
        return getattr(stub, "raiser", None)

    def _call(self, args: tuple, measure: bool) -> tuple[Any, int | None]:
        if self.closed:
            raise _Closed
        state = grading.current_check()
        signature = self.exercise.signature
        if state is not None and state.timed_out is not None:
            raise LearnerError(str(state.timed_out), "timeout")
        try:
            reply = self.channel.request(
                {"op": "call", "name": self.exercise.name, "args": args, "measure": measure}
            )
        except KernelGone as gone:
            if gone.died:
                raise LearnerError(f"{signature}: {gone}") from None
            error = LearnerError(f"{signature}: {gone}", "timeout")
            if state is not None:
                state.timed_out = error
            raise error from None
        except wire.WireError as bad:
            raise LearnerError(
                f"{signature} returned something the grader cannot read ({bad})"
            ) from None
        kind = reply["kind"]
        if kind == "value":
            value = reply.get("value")
            grading.refuse_complex(value, f"{signature} returned")
            # The kernel's tracemalloc peak and the grader's resident-memory peak: the larger
            # (what the kernel says can only add to what the grader saw).
            peaks = [p for p in (reply.get("peak"), reply.get("grader_peak"))
                     if type(p) is int and p >= 0]  # fmt: skip
            return value, (max(peaks) if peaks else None)
        if kind == "stub":
            stub = NotImplementedError()
            raiser = reply.get("raiser")
            stub.raiser = raiser if isinstance(raiser, str) and raiser.isidentifier() else None
            raise stub
        message = _text(reply.get("message")) or "failed in the notebook's kernel"
        if not message.startswith(signature):  # the kernel's text, never the start of a cell
            message = f"{signature}: {message}"
        mistake = reply.get("id") if reply.get("id") in _CALL_MISTAKES else "raised"
        if kind == "mistake" and mistake in ("calls_helper", "calls_reference", "complex"):
            raise Mistake(message, mistake)
        if kind == "learner":
            error = LearnerError(message, "timeout" if mistake == "timeout" else "raised")
            if mistake == "timeout" and state is not None:
                state.timed_out = error
            raise error
        raise LearnerError(f"the grader could not call {signature}: {message}")

    def caller(self):
        def call(*args):
            return self._call(args, False)[0]

        call.measure_peak = lambda *args: self._call(args, True)
        return call


def _verdict(item, passed, message: str, mistake: str | None, found: bool = True) -> dict:
    return {"exercise": item.name, "lesson": item.lesson, "passed": passed, "mistake": mistake,
            "message": message, "phase": "grader", "found": found}  # fmt: skip


def _check_exercise(channel: Channel, exercise: Exercise, student: str, before: int) -> dict:
    found = channel.request({"op": "find", "name": exercise.name})
    if not found.get("found"):
        return _verdict(exercise, None, "", None, found=False)
    if found.get("callable") is not True:
        result = grading.not_a_function(exercise, _text(found.get("type"), 100))
    else:
        refused = found.get("refused")
        refused = (
            (refused[0], _text(refused[1], 200))
            if isinstance(refused, tuple) and len(refused) == 2
            and refused[0] in ("calls_helper", "calls_reference")
            else None
        )  # fmt: skip
        answer = RemoteAnswer(channel, exercise, refused, (student, before))
        try:
            # The check's own limit, as in the kernel (4 calls' worth), and time for the
            # requests themselves (a few milliseconds each).
            result = exercise.verdict(answer, 4 * channel.call_seconds + 5)
        finally:
            answer.closed = True
    return _verdict(exercise, result.passed, result.message, result.mistake)


def _check_prediction(channel: Channel, prediction: Prediction) -> dict:
    found = channel.request({"op": "find", "name": prediction.name, "prediction": True})
    if not found.get("found"):
        return _verdict(prediction, None, "", None, found=False)
    guess = found.get("value")
    result = grading.judge_prediction(prediction, guess)
    return _verdict(prediction, result.passed, result.message, result.mistake)


def grade_in_kernel(channel: Channel, items: list, student: str, log: list[dict]) -> list[dict]:
    """The grader's verdict on each of ``items`` (the lesson's exercises and predictions), in
    order. ``log`` (the notebook's own records, untrusted) only says how many checks of each
    exercise the notebook made, so that the grader draws the cases its last check drew."""
    verdicts = []
    for item in items:
        before = max(0, sum(r.get("exercise") == item.name for r in log) - 1)
        try:
            if isinstance(item, Exercise):
                verdicts.append(_check_exercise(channel, item, student, before))
            else:
                verdicts.append(_check_prediction(channel, item))
        except KernelGone as gone:  # not this answer's fault: the kernel went earlier
            status = "error" if gone.died else "timeout"
            verdict = _verdict(item, False, f"not checked: {gone}", None)
            verdicts.append(dict(verdict, status=status))
        except wire.WireError as bad:
            verdicts.append(
                _verdict(
                    item,
                    False,
                    f"the notebook's kernel sent back something the grader cannot read ({bad})",
                    f"{item.name}.raised",
                )  # fmt: skip
            )
    return verdicts
