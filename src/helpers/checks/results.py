"""What a check shows in the notebook: a :class:`CheckResult` (the verdict, with its stable ids)
and a :class:`Text` (a hint or a solution), each with an HTML and a plain-text form. No logic."""

from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: ``passed`` is True, False, or None for "not attempted yet".

    ``exercise`` is the exercise's stable id (its name, e.g. ``"softmax"``); ``mistake`` is a
    stable id such as ``"softmax.columns_sum_to_one"`` when the answer was rejected for a named
    mistake, else None. ``make grade`` reads these two, never the message.
    """

    passed: bool | None
    message: str
    exercise: str = ""
    mistake: str | None = None
    prediction: bool = False  # a prediction's result: no "not yet", the answer is given
    # The graded build (helpers.checks.withheld): passed is None, and the verdict is the
    # grader's; the answer got as far as the check can go without the lesson's answer.
    graded_later: bool = False

    @property
    def status(self) -> str:
        if self.graded_later:
            return "Guess recorded" if self.prediction else "Graded later"
        if self.prediction:
            return {True: "Right", False: "Not what happens", None: "No guess yet"}[self.passed]
        return {True: "Correct", False: "Not yet", None: "Not attempted yet"}[self.passed]

    @property
    def symbol(self) -> str:
        return {True: "✓", False: "✗", None: "…"}[self.passed]

    def __str__(self) -> str:
        return f"{self.symbol} {self.status}: {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = {True: "#1b7837", False: "#b2182b", None: "#5e5e5e"}[self.passed]
        background = {True: "#e7f4e4", False: "#fbe9e7", None: "#f0f0f0"}[self.passed]
        body = html.escape(self.message).replace("\n", "<br>")
        return (
            f'<div style="border-left:4px solid {colour};background:{background};'
            f'padding:6px 10px;margin:4px 0;font-family:sans-serif;color:#222">'
            f'<b style="color:{colour}">{self.symbol} {self.status}</b>: {body}</div>'
        )


class Text:
    """Something shown in the notebook: a hint or a solution, with HTML and plain-text forms."""

    def __init__(self, title: str, text: str, code: bool = False):
        self.title, self.text, self.code = title, text, code

    def __repr__(self) -> str:
        return f"{self.title}:\n{self.text}"

    def _repr_html_(self) -> str:
        body = html.escape(self.text)
        body = f"<pre>{body}</pre>" if self.code else body.replace("\n", "<br>")
        return (
            '<div style="border-left:4px solid #2166ac;background:#eef3fa;padding:6px 10px;'
            f'font-family:sans-serif;color:#222"><b style="color:#2166ac">{self.title}</b>: '
            f"{body}</div>"
        )
