"""What a term needs from make grade (issue 18), on a small class graded from this clone.

One module-scoped run grades tests/support/term_class.py's class (6 students, lessons
01 and 03, a roster, a points file); then, reusing its OUT, a run without a roster, a
``--no-cache`` regrade of one student, dee's late lesson 03 regraded alone (``--students``),
and a rerun with nothing changed. Every file is checked cell by cell: scores.csv, the Canvas
and Moodle files (against their documented formats), similarity.csv, the regrade's untouched
rows. ``--one`` runs twice (exit 1 with --json; exit 0 through the GitHub Classroom workflow's
own grading step). About 9 notebook runs in all.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml
from course_grader import COLUMNS, main
from course_grader.outputs.similarity import answer_sources
from course_grader.pipeline.grading import student_order
from course_grader.pipeline.points import (
    PointsError,
    default_points,
    default_scheme,
    load_points,
)
from course_grader.pipeline.progress import Progress
from course_grader.pipeline.roster import RosterError, read_roster
from support import ROOT, class_builder, term_class

from helpers import checks
from helpers.checks import Exercise, Prediction

LIMITS = ["--jobs", "2", "--cell-timeout", "30", "--check-time-limit", "2"]
PE, SS = "positional_encoding", "scaled_scores"


def _grade(*args: str) -> subprocess.CompletedProcess:
    """``python -m course_grader`` with these arguments, run in this process (``main``, what
    ``__main__`` calls): the same stages and files without a new interpreter importing numpy,
    the checks and nbformat again for each of the fixture's runs (grader/tests/test_grade.py runs
    the command itself, in a process of its own)."""
    argv = [*LIMITS, *map(str, args)]
    stdout, stderr = io.StringIO(), io.StringIO()  # not terminals: one line per notebook
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    run = subprocess.CompletedProcess(argv, code, stdout.getvalue(), stderr.getvalue())
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return run


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".grade" not in p.parts
    }


def _csv(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term")
    paths = term_class.build_term_class(root)
    subs, roster, points = paths["submissions"], paths["roster"], paths["points"]
    out = root / "out"
    first = _grade("--submissions", subs, "--out", out, "--roster", roster, "--points", points)
    runs = {"first": (first, _files(out))}
    # The same class without a roster: everything from the cache.
    bare = root / "bare"
    shutil.copytree(out, bare)
    runs["bare"] = (_grade("--submissions", subs, "--out", bare, "--points", points), None)
    runs["bare"] = (runs["bare"][0], _files(bare))
    # --no-cache reruns eli's unchanged notebook.
    runs["no_cache"] = (
        _grade("--submissions", subs, "--out", bare, "--points", points, "--students", "eli",
               "--no-cache"),
        None,
    )  # fmt: skip
    # Dee hands in lesson 03 late: regrade dee alone into a copy of the first OUT.
    late = root / "late"
    shutil.copytree(out, late)
    term_class.fix_dee(paths)
    regrade = _grade(
        "--submissions", subs, "--out", late, "--roster", roster, "--points", points,
        "--students", "dee",
    )  # fmt: skip
    runs["regrade"] = (regrade, _files(late))
    # The same notebooks graded in full into a fresh OUT that holds only the regrade's cache
    # of runs (no earlier results, no similarity store, no files): what the regrade's merge
    # and its incremental similarity pass must reproduce.
    fresh = root / "fresh"
    shutil.copytree(late / ".grade" / "cache", fresh / ".grade" / "cache")
    full = _grade("--submissions", subs, "--out", fresh, "--roster", roster, "--points", points)
    runs["fresh"] = (full, _files(fresh))
    # Nothing changed since: a full rerun runs no notebook and writes the same grades.
    rerun = _grade("--submissions", subs, "--out", late, "--roster", roster, "--points", points)
    runs["rerun"] = (rerun, _files(late))
    table = load_points(points)
    return {"root": root, "paths": paths, "runs": runs, "points": table}


def _items(lesson: str) -> list:
    return [i for i in checks.catalogue() if i.lesson == lesson]


def _first_prediction(lesson: str) -> str:
    return next(i.name for i in _items(lesson) if isinstance(i, Prediction))


def _challenge(item) -> bool:
    return isinstance(item, Exercise) and item.stars == 3


def _max(lesson: str, scheme) -> float:
    """The default policy's maximum, worked out here: every item but the ★★★ challenges,
    which are extra credit."""
    return sum(scheme.points[i.name] for i in _items(lesson) if not _challenge(i))


def _all(lesson: str, scheme) -> float:
    """Every item's points, the extra credit too: what an all-correct notebook earns."""
    return sum(scheme.points[i.name] for i in _items(lesson))


def _fmt(x: float) -> str:
    return f"{x:g}"


def _expected_points(scheme, dee_fixed: bool = False) -> dict[tuple[str, str], float]:
    table = scheme.points
    p01, p03 = table[_first_prediction("01")], table[_first_prediction("03")]
    return {
        ("ada", "01"): table[PE] + p01,
        ("ada", "03"): table[SS] + p03,
        ("ben", "01"): table[PE] + p01,  # prediction wrong: a guess made, the default's credit
        ("ben", "03"): 0,
        ("cy", "01"): table[PE],  # prediction not made
        ("cy", "03"): 0,
        ("dee", "01"): table[PE] + p01,
        ("dee", "03"): table[SS] if dee_fixed else 0,  # unscaled, then fixed
        ("eli", "01"): table[PE] + p01,
        ("eli", "03"): 0,
        ("fay", "01"): 0,  # in the roster, no folder
        ("fay", "03"): 0,
    }


# ----------------------------------------------------------------------------------------------
# Points


def test_points_file_overrides_one_exercise_and_keeps_the_default_for_the_rest(term):
    table = term["points"].points
    assert table[PE] == 2.5
    for item in checks.catalogue():
        if item.name != PE:
            expected = item.stars if isinstance(item, Exercise) else 1
            assert table[item.name] == expected, item.name


def test_scores_csv_has_one_row_per_student_and_lesson_and_one_for_all(term):
    rows = _csv(term["runs"]["first"][1]["scores.csv"])
    assert rows[0] == ["student", "lesson", "points", "max_points"]
    table, expected = term["points"], _expected_points(term["points"])
    m01, m03 = _max("01", table), _max("03", table)
    want = []
    for student in ("ada", "ben", "cy", "dee", "eli", "fay"):
        p01, p03 = expected[(student, "01")], expected[(student, "03")]
        want += [
            [student, "01", _fmt(p01), _fmt(m01)],
            [student, "03", _fmt(p03), _fmt(m03)],
            [student, "all", _fmt(p01 + p03), _fmt(m01 + m03)],
        ]
    assert rows[1:] == want


def test_points_table_is_the_default_as_toml(capsys):
    assert main(["--points-table"]) == 0
    printed = capsys.readouterr().out
    assert tomllib.loads(printed)["points"] == default_points()
    assert tomllib.loads(printed)["policy"] == {"challenges": "extra", "predictions": "completion"}
    assert "★★★" in printed and "prediction" in printed


def test_a_points_file_naming_no_exercise_or_no_number_is_refused(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text("[points]\nsoftmaxx = 2\n")
    with pytest.raises(PointsError, match="no exercise named softmaxx"):
        load_points(bad)
    bad.write_text("softmax = 'two'\n")
    with pytest.raises(PointsError, match="softmax = 'two'"):
        load_points(bad)
    assert load_points(None) == default_scheme()


# ----------------------------------------------------------------------------------------------
# grades.csv, the feedback


def test_grades_csv_keeps_its_columns_and_names_each_case(term):
    rows = _csv(term["runs"]["first"][1]["grades.csv"])
    assert tuple(rows[0]) == COLUMNS
    by = {(r[0], r[2]): r for r in rows[1:]}
    assert by[("ada", PE)][3] == "correct" and by[("ada", SS)][3] == "correct"
    assert by[("ben", _first_prediction("01"))][3] == "not_yet"
    assert by[("cy", PE)][3] == "correct"
    assert by[("cy", _first_prediction("01"))][3] == "not_attempted"
    assert by[("dee", SS)][3:5] == ["not_yet", "scaled_scores.unscaled"]
    assert by[("eli", PE)][3] == "correct"
    fay = [r for r in rows[1:] if r[0] == "fay"]
    assert len(fay) == len(_items("01")) + len(_items("03"))
    assert all(r[3] == "missing" and "no folder named fay" in r[5] for r in fay)
    students = [r[0] for r in rows[1:]]
    assert students == sorted(students, key=student_order)  # one block per student, in order


def test_feedback_gives_points(term):
    files = term["runs"]["first"][1]
    ada = files["feedback/ada.md"].decode()
    table, expected = term["points"], _expected_points(term["points"])
    assert f"{_fmt(expected[('ada', '01')])} of {_fmt(_max('01', table))} points" in ada
    assert "No folder named `fay`" in files["feedback/fay.md"].decode()


# ----------------------------------------------------------------------------------------------
# The LMS files


def test_canvas_csv_is_the_gradebook_import_format(term):
    rows = _csv(term["runs"]["first"][1]["lms/canvas.csv"])
    table, expected = term["points"], _expected_points(term["points"])
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Lesson 01", "Lesson 03"]  # fmt: skip
    assert rows[1] == ["Points Possible", "", "", "", "",
                       _fmt(_max("01", table)), _fmt(_max("03", table))]  # fmt: skip
    people = {p.student: p for p in read_roster(term["paths"]["roster"])}
    want = []
    for student in ("ada", "ben", "cy", "dee", "fay"):  # roster order; eli is not in it
        p = people[student]
        want.append(
            [p.name, p.id, p.sis_user_id, p.sis_login_id, p.section]
            + [_fmt(expected[(student, lesson)]) for lesson in ("01", "03")]
        )
    assert rows[2:] == want
    assert rows[2][:5] == ["Lovelace, Ada", "101", "S-101", "ada.l", "Section A"]


def test_moodle_csv_maps_users_by_email_address(term):
    rows = _csv(term["runs"]["first"][1]["lms/moodle.csv"])
    expected = _expected_points(term["points"])
    assert rows[0] == ["Email address", "Student", "Lesson 01", "Lesson 03"]
    people = {p.student: p for p in read_roster(term["paths"]["roster"])}
    assert rows[1:] == [
        [people[s].email, people[s].name] + [_fmt(expected[(s, lesson)]) for lesson in ("01", "03")]
        for s in ("ada", "ben", "cy", "dee", "fay")
    ]


def test_the_report_names_who_is_not_in_the_roster_and_who_has_no_folder(term):
    page = term["runs"]["first"][1]["report.html"].decode()
    block = page[page.index("Grades for your LMS") :]
    assert re.search(r"Folders not in the roster.*<b>eli</b>", block)
    assert re.search(r"no folder in the submissions: <b>fay</b>", block)
    assert "No roster was given" not in page


def test_without_a_roster_the_lms_files_are_keyed_by_folder_name(term):
    files = term["runs"]["bare"][1]
    expected = _expected_points(term["points"])
    canvas = _csv(files["lms/canvas.csv"])
    assert [r[:5] for r in canvas[2:]] == [[s, "", "", "", ""] for s in
                                          ("ada", "ben", "cy", "dee", "eli")]  # fmt: skip
    assert canvas[2][5:] == [_fmt(expected[("ada", "01")]), _fmt(expected[("ada", "03")])]
    moodle = _csv(files["lms/moodle.csv"])
    assert [r[:2] for r in moodle[1:]] == [["", s] for s in ("ada", "ben", "cy", "dee", "eli")]
    page = files["report.html"].decode()
    assert "No roster was given" in page and "ROSTER=roster.csv" in page


# ----------------------------------------------------------------------------------------------
# Answers that look alike


def test_similarity_flags_the_planted_pair_and_not_independent_answers(term):
    rows = _csv(term["runs"]["first"][1]["similarity.csv"])
    assert rows == [
        ["exercise", "student_a", "student_b", "similarity"],
        [PE, "ben", "cy", "1.000"],  # renamed, recommented, reordered: the same tree
    ]  # dee (loops) and eli (stack + reshape) answer correctly in their own styles: not flagged


def test_the_report_says_alike_is_a_prompt_to_look_not_proof(term):
    page = term["runs"]["first"][1]["report.html"].decode()
    block = page[page.index("<h2>Answers that look alike") :]
    assert "not proof" in block and "<b>ben</b>, <b>cy</b>" in block
    # ada handed in the course's own answer: not paired, but named as the course's solution.
    own = block[block.index("<h3>Answers that are the course's own solution") :]
    assert "<tr><td><b>ada</b></td><td>1 of" in own, own
    assert "<b>ada</b>" not in block[: block.index("<h3>")]


def test_answers_include_the_helpers_they_call_in_any_order():
    cells = [term_class.COPY_FUNCTION, "x = 1", term_class.COPY_HELPER]
    answer = answer_sources(cells, [PE])[PE]
    assert answer.index("def positional_encoding") < answer.index("def pair_rates")


# ----------------------------------------------------------------------------------------------
# Regrades and reruns


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def test_a_regrade_of_one_student_leaves_the_others_rows_byte_for_byte(term):
    before, after = term["runs"]["first"][1], term["runs"]["regrade"][1]
    for name in ("grades.csv", "scores.csv"):
        old = [line for line in _lines(before[name]) if not line.startswith(b"dee,")]
        new = [line for line in _lines(after[name]) if not line.startswith(b"dee,")]
        assert old == new, name
        assert before[name] != after[name]  # dee's rows did change
    rows = {(r[0], r[2]): r for r in _csv(after["grades.csv"])[1:]}
    assert rows[("dee", SS)][3] == "correct"
    scores = {(r[0], r[1]): r[2] for r in _csv(after["scores.csv"])[1:]}
    assert scores[("dee", "03")] == _fmt(term["points"].points[SS])
    for student in ("ada", "ben", "cy", "eli", "fay"):
        assert before[f"feedback/{student}.md"] == after[f"feedback/{student}.md"]


def _footer_blanked(files: dict[str, bytes]) -> dict[str, bytes]:
    """The report's footer says how many notebooks ran and how long it took: blanked."""
    page = re.sub(rb"<footer>.*?</footer>", b"<footer/>", files["report.html"], flags=re.S)
    return files | {"report.html": page}


def test_a_regrade_writes_every_file_as_a_full_run_of_the_same_notebooks_would(term):
    regraded, full = term["runs"]["regrade"][1], term["runs"]["fresh"][1]
    assert "Grading 0 notebook(s)" in term["runs"]["fresh"][0].stdout  # rows from the cache
    assert sorted(regraded) == sorted(full)
    assert len([n for n in full if n.startswith("feedback/") and n.endswith(".md")]) == 6
    assert len([n for n in full if n.startswith("feedback/") and n.endswith(".txt")]) == 6
    regraded, full = _footer_blanked(regraded), _footer_blanked(full)
    for name in full:
        assert regraded[name] == full[name], name
    assert b"similarity" in full["similarity.csv"] and len(_csv(full["similarity.csv"])) > 1


def test_a_regrade_runs_only_that_students_changed_notebook(term):
    run = term["runs"]["regrade"][0]
    assert "Grading 1 notebook(s) of 1 of 5 student(s)" in run.stdout
    assert "1 unchanged, from the cache" in run.stdout  # dee's lesson 01
    assert re.findall(r"^\[1/1, .*\] dee/03\.ipynb", run.stderr, re.M)


def test_nothing_changed_nothing_runs_and_the_grades_stay_the_same(term):
    run, files = term["runs"]["rerun"]
    assert "Grading 0 notebook(s)" in run.stdout and "7 unchanged" in run.stdout
    regraded = term["runs"]["regrade"][1]
    for name in ("grades.csv", "scores.csv", "lms/canvas.csv", "lms/moodle.csv",
                 "similarity.csv"):  # fmt: skip
        assert files[name] == regraded[name], name
    bare = term["runs"]["bare"][0]
    assert "Grading 0 notebook(s)" in bare.stdout  # another roster: the runs are the same


def test_no_cache_runs_the_notebook_again(term):
    assert "Grading 1 notebook(s)" in term["runs"]["no_cache"][0].stdout


def test_progress_is_one_plain_line_per_notebook_when_stderr_is_not_a_terminal(term):
    lines = re.findall(r"^\[(\d+)/7, \d+:\d\d elapsed.*\] \w+/.*\.ipynb \(lesson \d\d\)",
                       term["runs"]["first"][0].stderr, re.M)  # fmt: skip
    assert sorted(map(int, lines)) == list(range(1, 8))


def test_progress_is_a_bar_redrawn_in_place_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = Progress(4, stream=stream, width=8)
    for _ in range(4):
        bar.step("x")
    text = stream.getvalue()
    assert text.count("\r") == 4 and "\n" not in text[:-1] and text.endswith("\n")
    assert "████···· 2/4 notebooks" in text and "left" in text and "elapsed" in text


def test_roster_errors_say_what_is_wrong(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("student,name\nada,Ada\n")
    with pytest.raises(RosterError, match="no column id, sis_user_id"):
        read_roster(path)
    path.write_text(term_class.ROSTER + "ada,Again,1,,,,\n")
    with pytest.raises(RosterError, match="ada is listed twice"):
        read_roster(path)


def test_make_grade_passes_students_points_roster_and_no_cache():
    run = subprocess.run(
        ["make", "-n", "grade", "SUBMISSIONS=s", "OUT=o", "STUDENTS=ada bob", "POINTS=p.toml",
         "ROSTER=r.csv", "NO_CACHE=1"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "--students 'ada bob'" in run.stdout or '--students "ada bob"' in run.stdout
    for part in ("--points", "p.toml", "--roster", "r.csv", "--no-cache"):
        assert part in run.stdout


# ----------------------------------------------------------------------------------------------
# One notebook at a time


def _one(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "course_grader", "--one", *map(str, args)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_one_prints_json_rows_and_exits_1_when_not_all_correct(term):
    notebook = term["paths"]["submissions"] / "ada" / "01_input_Z.ipynb"
    run = _one(notebook, "--json", "--student", "ada", "--points", term["paths"]["points"])
    assert run.returncode == 1, run.stderr[-2000:]
    result = json.loads(run.stdout)
    table = term["points"]
    assert result["lesson"] == "01" and result["student"] == "ada"
    assert [e["exercise"] for e in result["exercises"]] == [i.name for i in _items("01")]
    by = {e["exercise"]: e for e in result["exercises"]}
    assert by[PE]["status"] == "correct" and by[PE]["points"] == 2.5
    assert set(by[PE]) >= {"status", "mistake", "message", "points"}
    others = [e for e in result["exercises"] if e["exercise"] not in (PE, _first_prediction("01"))]
    assert others and all(e["status"] == "missing" and e["points"] == 0 for e in others)
    assert result["points"] == _expected_points(table)[("ada", "01")]
    assert result["max_points"] == _max("01", table)
    # The same rows as the class run gave ada (same sandbox, same draws).
    grades = [r for r in _csv(term["runs"]["first"][1]["grades.csv"])[1:]
              if r[0] == "ada" and r[1] == "01"]  # fmt: skip
    assert [[e["exercise"], e["status"], e["mistake"], e["message"]]
            for e in result["exercises"]] == [r[2:] for r in grades]  # fmt: skip


def test_one_exits_2_on_bad_usage(tmp_path, capsys):
    assert _one(tmp_path / "nothing.ipynb").returncode == 2  # the command's own exit status
    # The rest in this process: main() returns what ``python -m course_grader`` exits with.
    foreign = tmp_path / "other.ipynb"
    nbformat.write(class_builder.notebook(None, ["print('hello')"]), foreign)
    assert main(["--one", str(foreign)]) == 2
    assert "no lesson of the course" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # argparse's error: exit status 2
        main(["--one", str(foreign), "--out", "x"])
    assert usage.value.code == 2


def _all_correct_lesson01(path: Path) -> None:
    """Lesson 01 answered with the course's own solution source, every prediction right."""
    source = (ROOT / "solutions" / "01_input_Z.py").read_text()
    cells = [chunk.partition("\n")[2] for chunk in source.split("\n# %%")]
    names = [i.name for i in _items("01") if isinstance(i, Exercise)]
    answers = answer_sources(cells, names)
    code = [class_builder.SETUP]
    for item in _items("01"):
        if isinstance(item, Exercise):
            code += [answers[item.name], class_builder.check_cell(item.name)]
        else:
            code.append(f"guess = checks.{item.name}.answer\nchecks.{item.name}.check(guess)")
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(class_builder.notebook("01", code), path)


def test_the_classroom_workflow_grading_step_runs_and_reports_points(tmp_path):
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "classroom.yml").read_text())
    assert workflow["name"] == "Autograding Tests"  # the name GitHub Classroom looks for
    (job,) = workflow["jobs"].values()
    steps = {s.get("id"): s for s in job["steps"]}
    grade = steps["grade"]
    notebook = tmp_path / "repo" / "notebooks" / "01_input_Z.ipynb"
    _all_correct_lesson01(notebook)
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    env = {
        **os.environ,
        **{k: str(v) for k, v in grade.get("env", {}).items()},
        "NOTEBOOK": str(notebook),
        "GITHUB_ACTOR": "ada",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    run = subprocess.run(
        ["bash", "-e", "-c", grade["run"]], capture_output=True, text=True, timeout=180,
        env=env, cwd=tmp_path / "repo",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    scheme = default_scheme()
    maximum, earned = _max("01", scheme), _all("01", scheme)  # the challenge: extra credit
    assert earned > maximum
    assert f"Points: {_fmt(earned)}/{_fmt(maximum)}" in run.stdout
    assert f"{_fmt(earned)} / {_fmt(maximum)} points" in summary.read_text()
    (line,) = output.read_text().splitlines()
    result = json.loads(base64.b64decode(line.removeprefix("result=")))
    assert result["status"] == "pass" and result["max_score"] == maximum
    assert sum(t["score"] for t in result["tests"]) == earned
    reporter = next(s for s in job["steps"] if "grading-reporter" in s.get("uses", ""))
    assert reporter["env"]["GRADE_RESULTS"] == "${{ steps.grade.outputs.result }}"
    assert reporter["with"]["runners"] == "grade" and reporter["if"] == "always()"
