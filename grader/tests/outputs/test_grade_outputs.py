"""The grader's outputs that need no kernel: answers that look alike (with a store of an earlier
run), students in natural order in every file, feedback that carries no raw HTML, and the
flags for cells that reach into the checks' insides."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from course_grader.cli import main
from course_grader.pipeline import grading
from support import ROOT, class_builder


def _answer(exercise: str, variant: int, extra: int) -> str:
    """A made-up answer: variants share most of their code; ``extra`` steps make it differ."""
    lines = [f"def {exercise}(a, b):", f"    x = a * {variant % 3 + 1}"]
    lines += [f"    x = x + {k} * b" for k in range(8)]
    lines += [f"    x = x - {variant} * {k}" for k in range(extra)]
    return "\n".join(lines + ["    return x"])


def test_similarity_with_a_store_of_an_earlier_run_finds_what_a_full_pass_finds():
    import json

    from course_grader.outputs import similarity

    from helpers import checks
    from helpers.checks import Exercise

    exercises = [e for e in checks.catalogue() if e.lesson == "01" and isinstance(e, Exercise)]
    name = exercises[0].name
    answers = {f"s{k:02d}": {name: _answer(name, k % 7, k % 4)} for k in range(30)}
    answers["s30"] = {name: "def broken(:"}
    full = similarity.alike_pairs(answers, exercises)
    assert len(full[0]) > 20 and any(p[3] < 1 for p in full[0])  # equal and close pairs
    store: dict = {"digest": "d"}
    assert similarity.alike_pairs(answers, exercises, store) == full
    store = json.loads(json.dumps(store))  # as saved and loaded by the next run
    # Two students hand in again: one now matches others, one no longer matches anybody.
    answers["s03"] = {name: _answer(name, 1, 1)}
    answers["s05"] = {name: _answer(name, 99, 40)}
    changed = similarity.alike_pairs(answers, exercises)
    assert changed[0] != full[0]
    assert similarity.alike_pairs(answers, exercises, store) == changed
    assert sorted(store["exercises"][name]["trees"]) == sorted(
        similarity._tree_key(t)
        for t in {similarity.normalised(a[name], name) for a in answers.values()}
        if t is not None
    )


def test_students_are_listed_in_natural_order_everywhere(tmp_path):
    # Unreadable notebooks: graded from their raw text, no kernel started.
    truncated = (class_builder.HERE / "not_json.ipynb.in").read_text()
    submissions = tmp_path / "submissions"
    folders = ["student10", "student2", "Student3", "student1", "bob", "Alice", "alice", "s02"]
    for name in folders:
        (submissions / name).mkdir(parents=True)
        (submissions / name / "01.ipynb").write_text(truncated)
    out = tmp_path / "out"
    main(["--submissions", str(submissions), "--out", str(out), "-q", "--no-cache"])
    expected = ["Alice", "alice", "bob", "s02", "student1", "student2", "Student3", "student10"]

    def column(path: Path, index: int = 0, skip: int = 1) -> list[str]:
        rows = list(csv.reader(path.read_text().splitlines()))[skip:]
        return list(dict.fromkeys(row[index] for row in rows))

    assert column(out / "scores.csv") == expected
    assert column(out / "grades.csv") == expected
    assert column(out / "lms" / "canvas.csv", skip=2) == expected  # after Points Possible
    assert column(out / "lms" / "moodle.csv", index=1) == expected
    report = (out / "report.html").read_text()
    shown = [report.index(f">{name}<") for name in expected]
    assert shown == sorted(shown)


def test_the_natural_order_is_total_and_ignores_case_but_not_ties():
    key = grading.student_order
    assert sorted(["b", "B", "a10", "a9", "A9", "a09"], key=key) == [
        "A9",
        "a09",
        "a9",
        "a10",
        "B",
        "b",
    ]
    assert key("x") != key("X")  # ties between names that differ only in case are broken


def test_feedback_never_carries_raw_html_from_a_students_message():
    """Red team (issue 33): an answer that raises with `<img src=...>` in its message put the
    tag into the student's feedback file, where a Markdown preview would load it."""
    from course_grader.outputs.report import feedback_markdown
    from course_grader.pipeline.grading import Row

    message = "scaled_scores raised ValueError: <img src=http://x/y.png> & more"
    rows = [Row("ada", "03", "scaled_scores", "error", "", message)]
    text = feedback_markdown("ada", rows, [], {"03": "lesson03.ipynb"})
    assert "<img" not in text and "&lt;img src=http://x/y.png> &amp; more" in text


FLAGGED_CELLS = {
    "from helpers.checks import timelimit": "insides",
    "from helpers.checks import (\n    timelimit,\n)": "insides",
    "import helpers.checks as c\nc.timelimit.TIME_LIMIT_SECONDS = 1e9": "insides",
    "from helpers.checks.lesson01 import answers": "insides",
    "checks.lesson01.answers.pe_far_positions": "insides",
    "checks.answers": "insides",
    "checks.softmax.reference": "insides",
    "import sys; sys.setprofile(None)": "insides",
    "print(checks.pe_far_positions.answer)": "a prediction's answer",
    "checks.softmax.solution()": "shows the course's answer to softmax",
    "checks . masked_attention . solution ( )": "shows the course's answer to masked_attention",
    "checks.softmax.hint(3)": "the last hint of 3",
    "checks.softmax.hint(99)": "the last hint of 3",
    "level = 3\nchecks.softmax.hint(level)": "may be the last hint of 3",
    "checks.softmax.hint(level=3)": "the last hint of 3",
    "h = checks.softmax.hint\nh(3)": "takes `checks.softmax.hint` to call later",
    "show = checks.softmax.solution\nshow()": "shows the course's answer to softmax",
}
PLAIN_CELLS = [
    "from helpers import checks",
    "checks.softmax.check(softmax)",
    "checks.softmax.hint(2)\nchecks.softmax.hint()",
    "checks.softmax.hint(-1)",  # hint() clamps it: the first hint
    "checks.softmax.hint('3')",  # not an int: the first hint
    "import helpers\nhelpers.softmax(np.zeros(3))",
    "record = 1; compare = 2; exercise = 'mine'",
]


@pytest.mark.parametrize("cell", FLAGGED_CELLS)
def test_a_cell_reaching_into_the_checks_or_reading_an_answer_is_flagged(cell):
    from course_grader.outputs import flags

    found = flags.cell_flags(cell)
    assert len(found) == 1 and FLAGGED_CELLS[cell] in found[0], found


def test_only_the_insides_flag_says_the_grades_do_not_depend_on_it():
    from course_grader.outputs import flags

    for cell, kind in FLAGGED_CELLS.items():
        (found,) = flags.cell_flags(cell)
        assert ("the grades do not depend on them" in found) == (kind == "insides"), cell


@pytest.mark.parametrize("cell", PLAIN_CELLS)
def test_lesson_code_is_not_flagged(cell):
    from course_grader.outputs import flags

    assert flags.cell_flags(cell) == [], cell


def test_every_module_of_the_checks_is_flagged_when_reached_as_checks_dot_name():
    import pkgutil

    from course_grader.outputs import flags

    import helpers.checks

    for module in pkgutil.iter_modules(helpers.checks.__path__):
        assert flags._INTERNALS.search(f"checks.{module.name}.x"), module.name


def test_no_lesson_cell_is_flagged():
    """No code cell of a lesson, answered or the learner's, raises a flag."""
    import nbformat
    from course_grader.outputs import flags

    paths = sorted(ROOT.glob("solutions/[0-9][0-9]_*.ipynb"))
    paths += sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
    assert len(paths) == 24
    for path in paths:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert flags.cell_flags(cell.source) == [], (path.name, cell.source[:80])


def test_a_solution_notebook_handed_in_is_flagged_by_its_metadata_and_cell_ids():
    import nbformat
    from course_grader.outputs import flags
    from course_grader.pipeline.grading import Submission

    def submission(path):
        nb = nbformat.read(path, as_version=4)
        return Submission("ada", path, path.name, lesson="05", nb=nb)

    solution = flags.solution_notebook_flags(submission(ROOT / "solutions/05_causal_masking.ipynb"))
    assert len(solution) == 2, solution
    assert "helpers_sha256" in solution[0] and "answered solution cells" in solution[1]
    learner = ROOT / "notebooks/05_causal_masking.ipynb"
    assert flags.solution_notebook_flags(submission(learner)) == []
    # The learner's notebook with one answered cell pasted in from the solutions (its id kept).
    nb = nbformat.read(learner, as_version=4)
    answered = nbformat.read(ROOT / "solutions/05_causal_masking.ipynb", as_version=4)
    ids = {cell.id for cell in nb.cells}
    pasted = next(c for c in answered.cells if c.id not in ids)
    nb.cells.append(pasted)
    mixed = Submission("bo", learner, learner.name, lesson="05", nb=nb)
    (flag,) = flags.solution_notebook_flags(mixed)
    assert "1 cell(s)" in flag and pasted.id in flag


def test_the_report_escapes_every_value_a_student_or_their_files_put_there():
    """report.html comes from an autoescaped template: a student's folder name, a check's
    message quoting the student's exception, a note about their files and a named mistake
    all arrive as text, never as markup."""
    from course_grader.outputs.report import report_html
    from course_grader.outputs.results import ClassResults, StudentResults, finish
    from course_grader.pipeline.grading import Row
    from course_grader.pipeline.points import default_scheme

    tag = '<img src=x onerror="alert(1)">'
    who = f"eve{tag}"
    rows = [
        Row(who, "03", "scaled_scores", "not_yet", "scaled_scores.unscaled", f"raised {tag}"),
        Row(who, "03", "softmax", "error", "", f"ValueError: {tag} & 'quotes'"),
    ]
    per_student = {who: StudentResults(rows=rows, attention=[f"{who}/03{tag}.ipynb: unreadable"],
                                       chosen={"03": f"03{tag}.ipynb"}, notebooks=1)}  # fmt: skip
    page = report_html(
        finish(ClassResults([who], ["03"], per_student, settings=tag, points=default_scheme()))
    )
    assert "<img" not in page and 'onerror="' not in page
    assert page.count("&lt;img src=x onerror=") >= 5  # the name, the messages, the note, the footer


def test_a_notebook_s_name_is_a_code_span_its_backticks_cannot_close():
    """A file name is shown as it is, in a code span (no entities, which a code span prints
    literally), fenced by more backticks than it holds, so that `<img ...>` stays code."""
    from course_grader.outputs.report import feedback_markdown
    from course_grader.pipeline.grading import Row

    rows = [Row("ada", "03", "scaled_scores", "correct", "", "right")]
    plain = feedback_markdown("ada", rows, [], {"03": "Q&A 03.ipynb"})
    assert "## Lesson 03 — `Q&A 03.ipynb`" in plain
    hostile = feedback_markdown("ada", rows, [], {"03": "x`<img src=y>`.ipynb"})
    assert "## Lesson 03 — ``x`<img src=y>`.ipynb``" in hostile
