"""Copying the answers the course shows, seen in the report: a student who pasted the solution
(renamed) and called `.solution()`, one who handed in the course's own solution notebook, one
who read a prediction's `.answer`, and one who wrote their own; graded from this clone."""

from __future__ import annotations

import ast
import contextlib
import html
import io
import shutil

import pytest
from course_grader import main
from support import ROOT
from support.class_builder import PE_LOOPS, check_cell, first_prediction, notebook

from helpers import checks

LIMITS = ["--jobs", "2", "--cell-timeout", "60", "--check-time-limit", "5"]
SETUP = "import numpy as np\nfrom helpers import checks"


class _Renamed(ast.NodeTransformer):
    """Every local name and argument of a function renamed, as a student hiding a copy might."""

    def visit_arg(self, node):
        node.arg = f"my_{node.arg}"
        return node

    def visit_Name(self, node):
        if node.id not in ("np", "range", "len"):
            node.id = f"my_{node.id}"
        return node


def renamed_solution(name: str) -> str:
    tree = ast.parse(getattr(checks, name).solution().text)
    function = tree.body[0]
    function.body = [_Renamed().visit(statement) for statement in function.body]
    function.args = _Renamed().visit(function.args)
    return ast.unparse(tree)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("copying")
    subs, out = root / "subs", root / "out"
    pe = "positional_encoding"
    prediction = first_prediction("01")
    assert prediction is not None
    pasted = renamed_solution(pe)
    assert pasted != checks.positional_encoding.solution().text  # really renamed
    students = {
        "ada": [SETUP, f"checks.{pe}.solution()", pasted, check_cell(pe)],
        "cy": [
            SETUP,
            f"guess = checks.{prediction.name}.answer\nchecks.{prediction.name}.check(guess)",
        ],  # fmt: skip
        "dee": [SETUP, PE_LOOPS, check_cell(pe), f"checks.{pe}.hint(1)"],
    }
    import nbformat

    for student, cells in students.items():
        (subs / student).mkdir(parents=True)
        nbformat.write(notebook("01", cells), subs / student / "lesson01.ipynb")
    (subs / "bo").mkdir()
    shutil.copy(ROOT / "solutions" / "01_input_Z.ipynb", subs / "bo" / "01_input_Z.ipynb")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*LIMITS, "--submissions", str(subs), "--out", str(out)]) == 0
    return (out / "report.html").read_text(encoding="utf-8")


def _attention(page: str, student: str) -> str:
    """The report's items about ``student`` in "Notebooks that need a look", as text."""
    block = page[page.index("<h2>Notebooks that need a look") :].split("</ul>")[0]
    items = [html.unescape(item) for item in block.split("<li>")[1:]]
    return "\n".join(item for item in items if item.startswith(f"{student}/"))


def test_a_pasted_renamed_solution_is_named_as_the_courses_and_its_solution_call_flagged(report):
    own = report[report.index("<h3>Answers that are the course's own solution") :]
    assert "<b>ada</b>" in own and "positional_encoding" in own
    assert "calls `checks.positional_encoding.solution()`" in _attention(report, "ada")


def test_a_solution_notebook_handed_in_is_flagged(report):
    lines = _attention(report, "bo")
    assert "helpers_sha256" in lines and "answered solution cells" in lines
    own = report[report.index("<h3>Answers that are the course's own solution") :]
    assert "<b>bo</b>" in own  # its answers are the solution's, too


def test_reading_a_predictions_answer_is_flagged_and_not_called_harmless(report):
    lines = _attention(report, "cy")
    assert ".answer`, a prediction's answer" in lines
    assert "do not depend on them" not in lines


def test_an_answer_of_ones_own_is_neither_flagged_nor_named(report):
    assert _attention(report, "dee") == ""
    own = report[report.index("<h3>Answers that are the course's own solution") :]
    assert "<b>dee</b>" not in own
