"""The grader's parts that need no kernel: lesson recognition, statuses, the build metadata."""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
import build_lessons
from course_grader import _grading
from course_grader._cli import main
from support import class_builder


def _submission(tmp_path: Path, name: str, nb_or_text) -> _grading.Submission:
    path = tmp_path / name
    if isinstance(nb_or_text, str):
        path.write_text(nb_or_text)
    else:
        nbformat.write(nb_or_text, path)
    submission = _grading.Submission("s", path, name)
    _grading.recognise(submission)
    return submission


def test_the_lesson_comes_from_the_metadata_not_the_file_name(tmp_path):
    nb = class_builder.notebook("03", ["x = 1"])
    submission = _submission(tmp_path, "01_input_Z.ipynb", nb)
    assert (submission.lesson, submission.recognised_by) == ("03", "metadata")


def test_without_metadata_the_exercise_names_tell_the_lesson(tmp_path):
    nb = class_builder.notebook(None, [class_builder.PE_STUB])
    submission = _submission(tmp_path, "03_scores_and_scaling.ipynb", nb)
    assert (submission.lesson, submission.recognised_by) == ("01", "exercise names")
    nothing = _submission(tmp_path, "01.ipynb", class_builder.notebook(None, ["x = 1"]))
    assert nothing.lesson is None


def test_an_unreadable_file_is_recognised_from_its_raw_text(tmp_path):
    truncated = (class_builder.HERE / "not_json.ipynb.in").read_text()
    submission = _submission(tmp_path, "x.ipynb", truncated)
    assert submission.nb is None and "JSON" in submission.unreadable
    assert submission.lesson == "01"


def test_a_cut_off_executed_solution_is_recognised_from_its_metadata(tmp_path):
    # Its metadata has "helpers_sha256" before "lesson"; the cell names no exercise.
    nb = class_builder.notebook("05", ["x = 1"])
    nb.metadata["course"]["helpers_sha256"] = "0" * 64
    text = nbformat.writes(nb)
    assert text.index('"helpers_sha256"') < text.index('"lesson"')
    submission = _submission(tmp_path, "x.ipynb", text[: text.rindex("}") - 1])
    assert submission.nb is None and submission.lesson == "05"
    assert submission.recognised_by == "metadata (raw text)"


@pytest.mark.parametrize(
    "record, status",
    [
        ({"passed": True}, ("correct", "")),
        ({"passed": None}, ("not_attempted", "")),
        ({"passed": False, "mistake": "f.timeout"}, ("timeout", "f.timeout")),
        ({"passed": False, "mistake": "f.raised"}, ("error", "f.raised")),
        ({"passed": False, "mistake": "f.checker_failed"}, ("error", "f.checker_failed")),
        ({"passed": False, "mistake": "f.unscaled"}, ("not_yet", "f.unscaled")),
        ({"passed": False, "mistake": None}, ("not_yet", "")),
    ],
)
def test_statuses_come_from_passed_and_the_mistake_id(record, status):
    assert _grading._status_of(record) == status


def test_the_build_writes_the_lesson_into_both_notebooks():
    nb = build_lessons.as_notebook("# %%\nx = 1\n", "04")
    assert nb.metadata["course"] == {"lesson": "04"}
    assert "course" not in build_lessons.as_notebook("# %%\nx = 1\n").metadata


def test_out_inside_submissions_is_refused(tmp_path):
    (tmp_path / "ada").mkdir()
    with pytest.raises(SystemExit, match="outside"):
        main(["--submissions", str(tmp_path), "--out", str(tmp_path / "out"), "-q"])


def test_a_notebook_without_the_lesson_metadata_is_stale(tmp_path, monkeypatch):
    for name in ("solutions", "notebooks"):
        (tmp_path / name).mkdir()
    monkeypatch.setattr(build_lessons, "ROOT", tmp_path)
    monkeypatch.setattr(build_lessons, "SOLUTIONS", tmp_path / "solutions")
    monkeypatch.setattr(build_lessons, "NOTEBOOKS", tmp_path / "notebooks")
    source = tmp_path / "solutions" / "99_x.py"  # a lesson number with no answers module
    source.write_text(
        "# %% [markdown]\n# A lesson without code.\n\n# %% [markdown]\n# ---\n# "
        + " ".join(f"[link]({link})" for link in build_lessons.LICENCE_LINKS)
        + "\n"
    )
    learner = tmp_path / "notebooks" / "99_x.py"
    learner.write_text(build_lessons.learner_text(source.read_text()))
    nbformat.write(
        build_lessons.as_notebook(learner.read_text(), "99"), learner.with_suffix(".ipynb")
    )
    nbformat.write(
        build_lessons.solved_notebook(source.read_text(), "99"), source.with_suffix(".ipynb")
    )
    assert build_lessons.stale_files(source) == []
    nbformat.write(build_lessons.as_notebook(learner.read_text()), learner.with_suffix(".ipynb"))
    problems = build_lessons.stale_files(source)
    assert len(problems) == 1 and "lacks metadata course.lesson" in problems[0]


def test_lesson_00_is_recognised_by_its_metadata_though_it_names_other_exercises(tmp_path):
    nb = class_builder.notebook("00", ["checks.positional_encoding  # the list of exercises"])
    assert _submission(tmp_path, "a.ipynb", nb).lesson == "00"


def test_the_record_is_written_and_read_by_one_module(tmp_path, monkeypatch):
    from helpers.checks import record

    log = tmp_path / "log.jsonl"
    env = record.kernel_variables({"HELPERS_GRADE_LOG": "stale", "PATH": "/bin"}, log, 2, "ada")
    assert env == {
        "PATH": "/bin",
        record.LOG_VARIABLE: str(log),
        record.STUDENT_VARIABLE: "ada",
        record.TIME_LIMIT_VARIABLE: "2",
    }
    assert record.kernel_variables(env, None, None) == {"PATH": "/bin"}
    monkeypatch.setenv(record.LOG_VARIABLE, str(log))
    record.append(record.Record("softmax", "04", False, "softmax.columns", "x" * 5000))
    record.append(record.Record("attention", phase="final", found=False))
    with open(log, "a") as f:
        f.write('{"exercise": "cut off by a killed ker')  # a half-written line is skipped
    records = record.read(log)
    assert [(r["exercise"], r["passed"], r["mistake"], r["phase"]) for r in records] == [
        ("softmax", False, "softmax.columns", "notebook"),
        ("attention", None, None, "final"),
    ]
    assert len(records[0]["message"]) == 4000 and "found" not in records[0]
    assert records[1]["found"] is False


def _answer(exercise: str, variant: int, extra: int) -> str:
    """A made-up answer: variants share most of their code; ``extra`` steps make it differ."""
    lines = [f"def {exercise}(a, b):", f"    x = a * {variant % 3 + 1}"]
    lines += [f"    x = x + {k} * b" for k in range(8)]
    lines += [f"    x = x - {variant} * {k}" for k in range(extra)]
    return "\n".join(lines + ["    return x"])


def test_similarity_with_a_store_of_an_earlier_run_finds_what_a_full_pass_finds():
    import json

    from course_grader import _similarity

    from helpers import checks
    from helpers.checks import Exercise

    exercises = [e for e in checks.catalogue() if e.lesson == "01" and isinstance(e, Exercise)]
    name = exercises[0].name
    answers = {f"s{k:02d}": {name: _answer(name, k % 7, k % 4)} for k in range(30)}
    answers["s30"] = {name: "def broken(:"}
    full = _similarity.alike_pairs(answers, exercises)
    assert len(full[0]) > 20 and any(p[3] < 1 for p in full[0])  # equal and close pairs
    store: dict = {"digest": "d"}
    assert _similarity.alike_pairs(answers, exercises, store) == full
    store = json.loads(json.dumps(store))  # as saved and loaded by the next run
    # Two students hand in again: one now matches others, one no longer matches anybody.
    answers["s03"] = {name: _answer(name, 1, 1)}
    answers["s05"] = {name: _answer(name, 99, 40)}
    changed = _similarity.alike_pairs(answers, exercises)
    assert changed[0] != full[0]
    assert _similarity.alike_pairs(answers, exercises, store) == changed
    assert sorted(store["exercises"][name]["trees"]) == sorted(
        _similarity._tree_key(t)
        for t in {_similarity.normalised(a[name], name) for a in answers.values()}
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
    key = _grading.student_order
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
    from course_grader._grading import Row
    from course_grader._report import feedback_markdown

    message = "scaled_scores raised ValueError: <img src=http://x/y.png> & more"
    rows = [Row("ada", "03", "scaled_scores", "error", "", message)]
    text = feedback_markdown("ada", rows, [], {"03": "lesson03.ipynb"})
    assert "<img" not in text and "&lt;img src=http://x/y.png> &amp; more" in text


FLAGGED_CELLS = [
    "from helpers.checks import timelimit",
    "from helpers.checks import (\n    timelimit,\n)",
    "import helpers.checks as c\nc.timelimit.TIME_LIMIT_SECONDS = 1e9",
    "from helpers.checks.lesson01 import answers",
    "checks.lesson01.answers.pe_far_positions",
    "checks.answers",
    "print(checks.pe_far_positions.answer)",
    "checks.softmax.reference",
    "import sys; sys.setprofile(None)",
]
PLAIN_CELLS = [
    "from helpers import checks",
    "checks.softmax.check(softmax)",
    "checks.softmax.hint(2)\nchecks.softmax.solution()",
    "import helpers\nhelpers.softmax(np.zeros(3))",
    "record = 1; compare = 2; exercise = 'mine'",
]


@pytest.mark.parametrize("cell", FLAGGED_CELLS)
def test_a_cell_reaching_into_the_checks_is_flagged(cell):
    from course_grader import _flags

    assert _flags._INTERNALS.search(cell), cell


@pytest.mark.parametrize("cell", PLAIN_CELLS)
def test_lesson_code_is_not_flagged(cell):
    from course_grader import _flags

    assert not _flags._INTERNALS.search(cell), cell


def test_every_module_of_the_checks_is_flagged_when_reached_as_checks_dot_name():
    import pkgutil

    from course_grader import _flags

    import helpers.checks

    for module in pkgutil.iter_modules(helpers.checks.__path__):
        assert _flags._INTERNALS.search(f"checks.{module.name}.x"), module.name


def test_no_lesson_cell_is_flagged():
    from course_grader import _flags

    for path in sorted(ROOT.glob("solutions/[0-9][0-9]_*.py")):
        assert not _flags._INTERNALS.search(path.read_text()), path.name
