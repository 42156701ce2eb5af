"""The grader's parts that need no kernel: lesson recognition, statuses, the build metadata."""

from __future__ import annotations

from pathlib import Path

import build_lessons
import nbformat
import pytest
from course_grader.cli import main
from course_grader.pipeline import grading
from support import ROOT, class_builder


def _submission(tmp_path: Path, name: str, nb_or_text) -> grading.Submission:
    path = tmp_path / name
    if isinstance(nb_or_text, str):
        path.write_text(nb_or_text)
    else:
        nbformat.write(nb_or_text, path)
    submission = grading.Submission("s", path, name)
    grading.recognise(submission)
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
    assert grading._status_of(record) == status


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


def test_the_cache_key_covers_every_module_of_the_grader_and_of_helpers():
    """An edit anywhere in the grader (its own verdicts are in isolation/remote.py) or in the
    helpers (the checks) changes the code digest, so no stale row is reused."""
    from course_grader.pipeline.cache import digested_sources

    read = {path for _, paths in digested_sources() for path in paths}
    for package in (ROOT / "grader" / "src" / "course_grader", ROOT / "src" / "helpers"):
        assert set(package.resolve().rglob("*.py")) <= read, package
