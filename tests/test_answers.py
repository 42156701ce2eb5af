"""Each answer has one home, the lesson's solution region: ``checks.<name>.reference`` and
``.solution()`` are that function, and a prediction's answer is its ### ANSWER line."""

import ast
import importlib
import inspect
import re
from pathlib import Path

import nbformat
import pytest

from helpers import checks

EXERCISES = [e for e in checks.catalogue() if isinstance(e, checks.Exercise)]
PREDICTIONS = [e for e in checks.catalogue() if isinstance(e, checks.Prediction)]
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
ROOT = Path(__file__).resolve().parent.parent


def lesson_cells(lesson: str) -> list[str]:
    """The code cells of the executed lesson, solutions/NN_*.ipynb (what the learner's teacher
    reads), not the answers module the build wrote from its .py source."""
    (path,) = sorted(ROOT.glob(f"solutions/{lesson}_*.ipynb"))
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def cell_function(lesson: str, name: str) -> str:
    """The source of ``def name`` in the lesson's cells, solution markers dropped."""
    for cell in lesson_cells(lesson):
        for node in ast.parse(cell).body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                lines = cell.splitlines()[node.lineno - 1 : node.end_lineno]
                return "\n".join(line for line in lines if line.strip() not in MARKERS)
    raise AssertionError(f"lesson {lesson} defines no {name}()")


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_the_solution_shown_is_the_lessons_own_cell(exercise):
    assert exercise.solution().text == cell_function(exercise.lesson, exercise.name)


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.name for e in EXERCISES])
def test_the_reference_is_the_generated_answer(exercise):
    reference = exercise.reference
    assert reference.__module__ == f"helpers.checks.answers.lesson{exercise.lesson}"
    assert reference.__name__ == exercise.name


@pytest.mark.parametrize("prediction", PREDICTIONS, ids=[p.name for p in PREDICTIONS])
def test_a_predictions_answer_is_its_answer_line(prediction):
    call = f"checks.{prediction.name}.check(guess)"
    (cell,) = [c for c in lesson_cells(prediction.lesson) if call in c]
    (line,) = [line for line in cell.splitlines() if line.rstrip().endswith("### ANSWER")]
    assert re.match(r"guess\s*=", line)
    assert prediction.answer == ast.literal_eval(line.split("=", 1)[1].split("###")[0].strip())


def test_every_generated_answer_belongs_to_an_exercise_or_a_prediction():
    known = {(e.lesson, e.name) for e in checks.catalogue()}
    for lesson in sorted({e.lesson for e in checks.catalogue()}):
        module = importlib.import_module(f"helpers.checks.answers.lesson{lesson}")
        own = [
            name
            for name, value in vars(module).items()
            if not name.startswith("__")
            and name != "ASKED"
            and not inspect.ismodule(value)
            and getattr(value, "__module__", module.__name__) == module.__name__
        ]
        assert own, lesson
        assert [n for n in own if (lesson, n) not in known] == [], lesson


@pytest.mark.parametrize("lesson", sorted({e.lesson for e in checks.catalogue()}))
def test_the_catalogue_lists_a_lessons_exercises_in_the_order_the_lesson_asks_them(lesson):
    """Lesson 00's list (checks.catalogue()) is in the order the lesson asks them (its
    ``checks.<name>.check(`` calls), whatever the order of the check module's definitions."""
    (source,) = sorted(ROOT.glob(f"solutions/{lesson}_*.py"))
    text = source.read_text()
    defined = [e.name for e in checks.catalogue() if e.lesson == lesson]
    asked = sorted(defined, key=lambda name: text.index(f"checks.{name}.check("))
    assert defined == asked


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_an_exercises_heading_is_the_lessons_own_title_of_it(exercise):
    """``heading`` (the feedback's and the report's name for it) opens the lesson's own
    markdown heading of the exercise: ``### Exercise 2 ★★ — `masked_attention(...)```."""
    (path,) = sorted(ROOT.glob(f"solutions/{exercise.lesson}_*.py"))
    titles = re.findall(r"^# #+ (.+?) — .*?`(\w+)\(", path.read_text(encoding="utf-8"), re.M)
    assert (exercise.heading, exercise.name) in titles, (exercise.heading, titles)
