"""`make gradescope`: the autograder zip, set up and run as Gradescope would, in a simulated
/autograder (issue 43).

The zip is built, unzipped into ``<tmp>/autograder/source``, and its ``setup.sh`` run for real
(a fresh venv, the course and its grader installed by pip from the zip; no apt-get: this machine
has its packages). Then its ``run_autograder`` grades one submission at a time, each in a fresh
``submission/`` folder, as Gradescope's harness lays it out: lesson 03 answered (every test
passed), answered wrongly (scaled_scores unscaled), untouched (the learner's copy), hostile
(a wrong answer that forges results.json, now and from a process left behind), and what is not
a notebook of the lesson (nothing, an empty file, a PDF, a broken notebook, two notebooks,
lesson 04's). Every results.json is checked against Gradescope's specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, and the fields Gradescope's
own ``gradescope-utils`` JSONTestRunner writes).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import make_gradescope
import nbformat
import pytest
from course_grader import gradescope
from course_grader.pipeline.points import default_points
from support import ROOT

LESSON = "03"
RIGHT = ROOT / "solutions" / "03_scores_and_scaling.ipynb"
UNTOUCHED = ROOT / "notebooks" / "03_scores_and_scaling.ipynb"
EXERCISES = ["scaled_scores", "unscaled_variance_at_64", "unscaled_softmax_trend",
             "scale_for_entropy"]  # fmt: skip
STUB = '    # YOUR CODE HERE\n    raise NotImplementedError("replace this line with your answer")'
FORGED = {"score": 1000, "output": "forged", "tests": []}

# --- Gradescope's results.json, as its specification gives it ---
TOP_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format",
              "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
              "leaderboard"}  # fmt: skip
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output",
               "output_format", "tags", "visibility", "extra_data"}  # fmt: skip
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


def spec_problems(doc) -> list[str]:
    """What in ``doc`` Gradescope's results.json format does not allow (empty: nothing)."""
    problems = []
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    problems += [f"unknown field {k!r}" for k in sorted(set(doc) - TOP_FIELDS)]
    tests = doc.get("tests")
    if not isinstance(tests, list):
        problems.append("no list of tests")
        tests = []
    if "score" not in doc and not all("score" in t for t in tests if isinstance(t, dict)):
        problems.append("a score is needed, on the submission or on every test")
    for key in ("score", "execution_time"):
        if key in doc and (isinstance(doc[key], bool) or not isinstance(doc[key], int | float)):
            problems.append(f"{key} is not a number")
    for key in ("visibility", "stdout_visibility"):
        if key in doc and doc[key] not in VISIBILITIES:
            problems.append(f"{key} {doc[key]!r} is not one of {sorted(VISIBILITIES)}")
    if "output" in doc and not isinstance(doc["output"], str):
        problems.append("output is not text")
    for i, test in enumerate(tests):
        if not isinstance(test, dict):
            problems.append(f"test {i} is not an object")
            continue
        problems += [f"test {i}: unknown field {k!r}" for k in sorted(set(test) - TEST_FIELDS)]
        if not isinstance(test.get("name"), str) or not test["name"]:
            problems.append(f"test {i} has no name")
        for key in ("score", "max_score"):
            value = test.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                problems.append(f"test {i}: {key} is not a number >= 0")
        if test.get("status") not in (None, "passed", "failed"):
            problems.append(f"test {i}: status {test.get('status')!r}")
        if test.get("visibility", "visible") not in VISIBILITIES:
            problems.append(f"test {i}: visibility {test.get('visibility')!r}")
        if not isinstance(test.get("output", ""), str):
            problems.append(f"test {i}: output is not text")
        if not isinstance(test.get("number", ""), str):
            problems.append(f"test {i}: number is not text")
    if tests and "score" in doc:
        # Not Gradescope's rule (its score overrides the tests'), but the grader's: the score
        # is the tests' sum, less the late policy's share when it says so.
        total = sum(t.get("score", 0) for t in tests if isinstance(t, dict))
        late = doc.get("extra_data", {}).get("late", {"fraction": 0.0, "before": total})
        if abs(late["before"] - total) > 1e-9 or abs(total * (1 - late["fraction"]) - doc[
                "score"]) > 1e-6:  # fmt: skip
            problems.append(f"score {doc['score']} is not the tests' sum {total}")
    return problems


def test_the_spec_check_refuses_what_gradescope_refuses():
    good = {"score": 1.0, "tests": [{"name": "a", "score": 1.0, "max_score": 1.0}]}
    assert spec_problems(good) == []
    bad = [
        [],
        {"tests": [{"name": "a"}]},
        {"score": "1", "tests": []},
        {
            "score": 1.0,
            "tests": [{"name": "a", "score": 1.0, "max_score": 1.0, "status": "pass"}],
        },  # fmt: skip
        {"score": 0, "visibility": "students", "tests": []},
        {"score": 2.0, "tests": [{"name": "a", "score": 1.0, "max_score": 1.0}]},
        {"score": 0, "tests": [{"name": "", "score": 0, "max_score": 1}]},
        {"score": 0, "grade": 1, "tests": []},
    ]
    assert all(spec_problems(doc) for doc in bad)


# --- The zip ---
@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("zip") / "autograder.zip"
    make_gradescope.build(LESSON, None, "visible", out)
    return out


def test_the_zip_has_gradescope_s_two_scripts_at_its_root_and_no_answers(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        run = archive.read("run_autograder").decode()
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    assert "course/src/helpers/checks/grading.py" in infos
    assert "grader/src/course_grader/gradescope.py" in infos
    assert "course/LICENSE" in infos and "constraints.txt" in infos
    answers = ("course/solutions", "course/notebooks", "course/tests", "solutions/", "tests/")
    assert not [n for n in infos if n.startswith(answers)]
    assert not [n for n in infos if n.endswith(".ipynb")]
    assert f'--lesson "{LESSON}"' in run and "@" not in run.replace("$@", "")


def test_a_lesson_without_exercises_or_a_bad_points_file_stops_the_build(tmp_path):
    with pytest.raises(SystemExit, match="the lessons with exercises are"):
        make_gradescope.build("00", None, "visible", tmp_path / "a.zip")
    (tmp_path / "points.toml").write_text("no_such_exercise = 3\n")
    with pytest.raises(SystemExit, match="no exercise named no_such_exercise"):
        make_gradescope.build(LESSON, tmp_path / "points.toml", "visible", tmp_path / "b.zip")
    assert not (tmp_path / "a.zip").exists() and not (tmp_path / "b.zip").exists()


# --- Set up and run as Gradescope does ---
@pytest.fixture(scope="module")
def autograder(autograder_zip):
    # Open to every user, as Gradescope's /autograder and setup.sh's venv in /opt are: where
    # bubblewrap cannot run, each kernel runs as a user of its own, which must reach its Python
    # (and would reach the results folder, were it writable by others).
    base = Path(tempfile.mkdtemp(prefix="gradescope-", dir="/tmp"))
    base.chmod(0o755)
    root, venv = base / "autograder", base / "venv"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    # Gradescope copies run_autograder to /autograder and runs it there.
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    env = _env(root, venv)
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root, env=env,
                           capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    yield {"root": root, "venv": venv, "env": env}
    shutil.rmtree(base, ignore_errors=True)


def _env(root: Path, venv: Path) -> dict:
    keep = ("PATH", "LANG", "HOME", "TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
    env = {k: v for k, v in os.environ.items() if k in keep}
    return {**env, "AUTOGRADER_ROOT": str(root), "COURSE_VENV": str(venv), "AUTOGRADER_APT": "0"}


def _submit(autograder: dict, files: dict[str, bytes]) -> tuple[dict, subprocess.CompletedProcess]:
    root = autograder["root"]
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
        (root / folder).mkdir()
    for name, data in files.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_bytes(data)
    (root / "submission_metadata.json").write_text(
        json.dumps({"users": [{"id": 4711, "email": "ada@example.org", "name": "Ada"}]})
    )
    run = subprocess.run([str(root / "run_autograder")], cwd=root, env=autograder["env"],
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    doc = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert spec_problems(doc) == [], (spec_problems(doc), doc)
    return doc, run


def _ids(doc: dict) -> list[str]:
    """Each test's exercise id, from its name ("Lesson 03 · Exercise 1 ★★ (scaled_scores)")."""
    return [re.fullmatch(r"Lesson \d\d · .+ \(([a-z0-9_]+)\)", t["name"])[1] for t in doc["tests"]]


def _scores(doc: dict) -> dict[str, float]:
    return dict(zip(_ids(doc), (t["score"] for t in doc["tests"]), strict=True))


def _wrong_notebook() -> bytes:
    nb = nbformat.read(UNTOUCHED, as_version=4)
    (cell,) = [c for c in nb.cells if "def scaled_scores(Q, K):" in c.source]
    assert STUB in cell.source
    cell.source = cell.source.replace(STUB, "    return Q @ np.swapaxes(K, -1, -2)")
    return nbformat.writes(nb).encode()


def test_a_right_submission_scores_every_point(autograder):
    doc, run = _submit(autograder, {"03_scores_and_scaling.ipynb": RIGHT.read_bytes()})
    points = default_points()
    assert _ids(doc) == EXERCISES
    assert all(t["status"] == "passed" for t in doc["tests"])
    assert doc["score"] == sum(points[name] for name in EXERCISES)
    assert _scores(doc) == {name: points[name] for name in EXERCISES}
    # What only the instructor should see: the printout (hidden), the sandbox's status.
    assert doc["stdout_visibility"] == "hidden"
    assert doc["extra_data"]["sandbox"].startswith(("Sandbox: bubblewrap", "WARNING: NO SANDBOX"))
    assert doc["extra_data"]["sandbox"] in run.stdout


def test_a_wrong_submission_loses_that_exercise_and_is_told_its_mistake(autograder):
    doc, _ = _submit(autograder, {"lesson.ipynb": _wrong_notebook()})
    by_name = dict(zip(_ids(doc), doc["tests"], strict=True))
    wrong = by_name["scaled_scores"]
    assert wrong["score"] == 0 and wrong["status"] == "failed"
    assert "(mistake: scaled_scores.unscaled)" in wrong["output"], wrong["output"]
    # The other exercises were not answered in the learner's copy: not attempted, 0 points.
    assert doc["score"] == 0 and all(t["status"] == "failed" for t in doc["tests"])


def test_an_untouched_submission_scores_nothing_and_says_not_attempted(autograder):
    doc, _ = _submit(autograder, {"03_scores_and_scaling.ipynb": UNTOUCHED.read_bytes()})
    assert doc["score"] == 0 and _ids(doc) == EXERCISES
    assert all(t["output"].startswith("not attempted") for t in doc["tests"]), doc["tests"]


def test_a_hostile_submission_cannot_forge_its_results(autograder):
    """A wrong answer whose notebook writes a full score into results.json (the file
    Gradescope reads) and a file beside it, and leaves a process behind that waits for the
    grader's results.json and then overwrites it."""
    root = autograder["root"]
    results = root / "results" / "results.json"
    marker = root / "results" / "planted.txt"
    later = (
        "import os, time\n"
        f"path, forged = {str(results)!r}, {json.dumps(FORGED)!r}\n"
        "for _ in range(600):\n"
        "    time.sleep(0.05)\n"
        "    try:\n"
        "        if os.path.exists(path) and 'forged' not in open(path).read():\n"
        "            time.sleep(0.5)\n"
        "            open(path, 'w').write(forged)\n"
        "            break\n"
        "    except OSError:\n"
        "        break\n"
    )
    forge = (
        "import json, subprocess, sys\n"
        f"forged = {json.dumps(FORGED)!r}\n"
        f"for path in ({str(results)!r}, {str(marker)!r}):\n"
        "    try:\n"
        "        open(path, 'w').write(forged)\n"
        "    except OSError as refused:\n"
        "        print('refused', refused)\n"
        f"subprocess.Popen([sys.executable, '-c', {later!r}], start_new_session=True,\n"
        "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(json.dumps({'score': 1000}))"
    )
    nb = nbformat.reads(_wrong_notebook().decode(), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(forge))
    doc, run = _submit(autograder, {"lesson.ipynb": nbformat.writes(nb).encode()})
    time.sleep(5)  # the left-behind process has had its chance
    after = json.loads(results.read_text(encoding="utf-8"))
    assert after == doc and doc["score"] == 0 and "forged" not in json.dumps(doc), doc[
        "extra_data"
    ]["sandbox"]
    assert not marker.exists(), doc["extra_data"]["sandbox"]
    assert _scores(doc)["scaled_scores"] == 0


@pytest.mark.parametrize(
    "files, says",
    [
        ({}, "no Jupyter notebook (.ipynb) in the submission"),
        ({"answers.pdf": b"%PDF-1.4 not a notebook"}, "it holds answers.pdf"),
        ({"03_scores_and_scaling.ipynb": b""}, "is empty (0 bytes)"),
        ({"03_scores_and_scaling.ipynb": b'{"cells": [oops'}, "no lesson of the course"),
        (
            {"a.ipynb": UNTOUCHED.read_bytes(), "b/b.ipynb": UNTOUCHED.read_bytes()},
            "holds 2 notebooks",
        ),
        (
            {"04.ipynb": (ROOT / "notebooks" / "04_softmax_and_attention.ipynb").read_bytes()},
            "is the notebook of lesson 04; this assignment grades lesson 03",
        ),
    ],
    ids=["nothing", "a-pdf", "empty", "broken", "two-notebooks", "another-lesson"],
)
def test_what_cannot_be_graded_scores_zero_and_says_what_to_upload(autograder, files, says):
    doc, _ = _submit(autograder, files)
    assert doc["score"] == 0 and says in doc["output"], doc["output"]
    assert _ids(doc) == EXERCISES  # the assignment's total stays
    assert all(t["score"] == 0 and t["status"] == "failed" for t in doc["tests"])


def test_two_notebooks_of_which_one_is_the_lesson_s_grade_that_one(autograder):
    other = (ROOT / "notebooks" / "04_softmax_and_attention.ipynb").read_bytes()
    doc, _ = _submit(autograder, {"mine.ipynb": RIGHT.read_bytes(), "old.ipynb": other})
    assert all(t["status"] == "passed" for t in doc["tests"])


def test_an_autograder_whose_setup_failed_still_writes_results(autograder, tmp_path):
    env = dict(autograder["env"], COURSE_VENV=str(tmp_path / "no-venv"))
    root = autograder["root"]
    run = subprocess.run([str(root / "run_autograder")], cwd=root, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    doc = json.loads((root / "results" / "results.json").read_text())
    assert run.returncode == 0 and spec_problems(doc) == []
    assert doc["score"] == 0 and "setup.sh failed" in doc["output"]


def test_a_grader_crash_still_writes_results(tmp_path, monkeypatch):
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "a.ipynb").write_bytes(RIGHT.read_bytes())

    def crash(*args, **kwargs):
        raise RuntimeError("the grader broke")

    monkeypatch.setattr(gradescope, "grade_submission", crash)
    from course_grader.isolation.sandbox import Limits

    assert gradescope.main(tmp_path, LESSON, Limits(), None, "visible") == 0
    doc = json.loads((tmp_path / "results" / "results.json").read_text())
    assert spec_problems(doc) == [] and doc["score"] == 0
    assert "not your notebook's fault" in doc["output"]
    # Each of the lesson's tests still shows what it is worth (the assignment's total stays):
    # the ★★★ challenge (scale_for_entropy) is extra credit, worth 0 of the total.
    assert _ids(doc) == EXERCISES
    worth = {t: t_max for t, t_max in zip(_ids(doc), (t["max_score"] for t in doc["tests"]))}
    assert worth == {**{n: default_points()[n] for n in EXERCISES}, "scale_for_entropy": 0.0}


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="a kernel of its own user needs root and setpriv")  # fmt: skip
def test_without_bubblewrap_the_kernel_runs_as_a_user_of_its_own(autograder):
    """Gradescope's container may refuse bubblewrap's namespaces: the kernel then runs as a user
    id of its own, which cannot write the results (a folder any user may enter, only root may
    write); the same notebook graded with --no-sandbox (as root) writes there: the control."""
    root = autograder["root"]
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
        (root / folder).mkdir(mode=0o755)
    planted = root / "results" / "mine.txt"
    cell = f"import os\nopen({str(planted)!r}, 'w').write(str(os.getuid()))"
    nb = nbformat.reads(_wrong_notebook().decode(), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(cell))
    (root / "submission" / "a.ipynb").write_text(nbformat.writes(nb))
    python = autograder["venv"] / "bin" / "python"

    def grade(*extra: str) -> dict:
        code = (
            "import sys; from course_grader.isolation import bubblewrap as b\n"
            "b.unavailable = lambda: 'bubblewrap set aside by the test'\n"
            "from course_grader import main\n"
            f"sys.exit(main(['--gradescope', {str(root)!r}, '--lesson', '03', *{extra}]))"
        )
        run = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                             timeout=600, env=autograder["env"])  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        return json.loads((root / "results" / "results.json").read_text())

    doc = grade()
    assert spec_problems(doc) == [] and "a user of its own" in doc["extra_data"]["sandbox"]
    assert not planted.exists()
    assert _scores(doc) == dict.fromkeys(EXERCISES, 0.0)
    assert "scaled_scores.unscaled" in doc["tests"][0]["output"]
    doc = grade("--no-sandbox")
    assert planted.read_text() == "0"
    assert "scaled_scores.unscaled" in doc["tests"][0]["output"]


def test_where_nothing_keeps_a_notebook_from_its_results_the_grader_refuses(tmp_path):
    """No bubblewrap and no user of its own (not root, or a Python other users cannot run): a
    kernel as the grader's user could write results.json, so nothing is graded, and the
    student is told it is not their notebook's fault."""
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "a.ipynb").write_bytes(RIGHT.read_bytes())
    code = (
        "import sys; from course_grader.isolation import bubblewrap as b\n"
        "b.unavailable = lambda: 'bubblewrap set aside by the test'\n"
        "b.own_user_only = lambda: False\n"
        "from course_grader import main\n"
        f"sys.exit(main(['--gradescope', {str(tmp_path)!r}, '--lesson', '03']))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    doc = json.loads((tmp_path / "results" / "results.json").read_text())
    assert run.returncode == 0 and spec_problems(doc) == [] and doc["score"] == 0
    assert "cannot keep a notebook away from its results" in doc["output"]
    assert "not grading: WARNING: NO SANDBOX" in run.stderr


def test_make_gradescope_needs_a_lesson():
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    run = subprocess.run(["make", "gradescope"], cwd=ROOT, capture_output=True, text=True,
                         env=env)  # fmt: skip
    assert run.returncode != 0 and "usage: make gradescope LESSON=" in run.stdout


# --- One assignment over several lessons, graded in this process (issue 50, item 6) ---
def test_one_assignment_grades_several_lessons_with_their_headings_and_a_late_share(tmp_path):
    """Lesson 03 answered and lesson 04 untouched in one submission, two days late under a
    10 %-a-day policy: each lesson's tests named by its headings, the predictions' results
    shown after the due date, the score the tests' sum less a fifth."""
    from course_grader.isolation.sandbox import Limits

    (tmp_path / "submission" / "week2").mkdir(parents=True)
    (tmp_path / "submission" / "03.ipynb").write_bytes(RIGHT.read_bytes())
    four = ROOT / "notebooks" / "04_softmax_and_attention.ipynb"
    (tmp_path / "submission" / "week2" / "04.ipynb").write_bytes(four.read_bytes())
    (tmp_path / "submission_metadata.json").write_text(json.dumps({
        "created_at": "2027-02-03T10:00:00.000000-05:00",
        "assignment": {"due_date": "2027-02-01T23:59:00.000000-05:00"},
        "users": [{"id": 4711, "email": "ada@example.org", "name": "Ada"}],
    }))  # fmt: skip
    points = tmp_path / "points.toml"
    points.write_text("[late]\nper_day = 0.1\n")
    assert gradescope.main(tmp_path, ["03", "04"], Limits(), points) == 0
    doc = json.loads((tmp_path / "results" / "results.json").read_text())
    assert spec_problems(doc) == [], spec_problems(doc)
    from helpers import checks

    items = [i for i in checks.catalogue() if i.lesson in ("03", "04")]
    assert [t["name"] for t in doc["tests"]] == [
        f"Lesson {i.lesson} · {i.heading} ({i.name})" for i in items
    ]
    assert [t["number"] for t in doc["tests"]] == ["03.1", "03.2", "03.3", "03.4",
                                                   "04.1", "04.2", "04.3", "04.4"]  # fmt: skip
    shown = {t["name"].rpartition("(")[2][:-1]: t["visibility"] for t in doc["tests"]}
    assert shown == {i.name: "visible" if isinstance(i, checks.Exercise) else "after_due_date"
                     for i in items}  # fmt: skip
    lesson03 = [t for t in doc["tests"] if t["number"].startswith("03.")]
    assert all(t["status"] == "passed" for t in lesson03)
    assert all(t["score"] == 0 and t["output"].startswith("not attempted")
               for t in doc["tests"] if t["number"].startswith("04."))  # fmt: skip
    # 1 day and 10 hours after the due date: two days' share, 20 %.
    raw = sum(t["score"] for t in lesson03)
    assert raw == 2 + 1 + 1 + 3  # scaled_scores, two predictions, the challenge (extra)
    assert doc["score"] == pytest.approx(raw * 0.8)
    assert doc["extra_data"]["late"]["fraction"] == pytest.approx(0.2)
    assert "Late: 20% of the points taken off (submitted 2 day(s) after the due date)" in doc[
        "output"]  # fmt: skip
    # The extra credit adds to the score, never to the assignment's total.
    assert "Lesson 03: 7/4 points (3 of them extra credit)" in doc["output"]
    challenge = next(t for t in lesson03 if "(scale_for_entropy)" in t["name"])
    assert challenge["max_score"] == 0 and challenge["score"] == 3


def test_a_lesson_of_several_not_handed_in_scores_zero_and_says_so(tmp_path):
    from course_grader.isolation.sandbox import Limits

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "03.ipynb").write_bytes(RIGHT.read_bytes())
    assert gradescope.main(tmp_path, ["03", "05"], Limits(), None) == 0
    doc = json.loads((tmp_path / "results" / "results.json").read_text())
    assert spec_problems(doc) == []
    assert "Lesson 05: not graded" in doc["output"] and "upload it too" in doc["output"]
    assert all(t["score"] == 0 for t in doc["tests"] if t["number"].startswith("05."))
    assert all(t["status"] == "passed" for t in doc["tests"] if t["number"].startswith("03."))


def test_with_several_lessons_a_notebook_without_the_course_s_metadata_is_known_by_its_names(
    tmp_path,
):
    from course_grader.isolation.sandbox import Limits

    (tmp_path / "submission").mkdir()
    nb = nbformat.read(RIGHT, as_version=4)
    del nb.metadata["course"]  # a copy that lost it (another tool's save)
    nbformat.write(nb, tmp_path / "submission" / "mine.ipynb")
    assert gradescope.main(tmp_path, ["03", "04"], Limits(), None) == 0
    doc = json.loads((tmp_path / "results" / "results.json").read_text())
    assert all(t["status"] == "passed" for t in doc["tests"] if t["number"].startswith("03."))


def test_make_gradescope_prints_every_setting_to_choose(capsys, tmp_path):
    assert make_gradescope.main(["--lesson", "3 4", "--out", str(tmp_path / "a.zip")]) == 0
    printed = capsys.readouterr().out
    for needed in ("Autograder points: 8", "Base image: Ubuntu", "Memory:", "timeout: 12 minutes",
                   "Students upload", "03_*.ipynb, 04_*.ipynb", "after the due date"):  # fmt: skip
        assert needed in printed, needed
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        run = archive.read("run_autograder").decode()
    assert '--lesson "03 04"' in run and '--prediction-visibility "after_due_date"' in run


def test_a_two_lesson_autograder_grades_both_notebooks_as_gradescope_runs_it(autograder, tmp_path):
    """The zip of an assignment over lessons 03 and 04, its run_autograder run in a simulated
    /autograder (with the venv the first zip's setup.sh made: the same course and grader)."""
    two = make_gradescope.build(["03", "04"], None, "visible", tmp_path / "two.zip")
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(two) as archive:
        archive.extractall(root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    tmp_path.chmod(0o755)
    env = _env(root, autograder["venv"])
    four = (ROOT / "solutions" / "04_softmax_and_attention.ipynb").read_bytes()
    doc, _ = _submit({"root": root, "env": env},
                     {"lesson03.ipynb": RIGHT.read_bytes(), "mine/04.ipynb": four})  # fmt: skip
    assert [t["number"].split(".")[0] for t in doc["tests"]] == ["03"] * 4 + ["04"] * 4
    assert all(t["status"] == "passed" for t in doc["tests"]), doc["output"]
    shown = {t["visibility"] for t in doc["tests"] if "· Prediction" in t["name"]}
    assert shown == {"after_due_date"}
    assert doc["score"] == sum(t["score"] for t in doc["tests"]) == 4 + 3 + 4 + 3
