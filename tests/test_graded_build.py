"""The graded build (make handout GRADED=1, make learner-repo GRADED=1): the learner's copy with
no lesson answer, no last hint and no pointer to `.solution()`, whose checks run their public
part; and the learner repository, its links filled from one setting."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import learner_copy
import pytest
from support import ROOT

REPO = "my-school/attention-course"


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("graded")
    learner_copy.write_copy(folder, learner_copy.learner_files(graded=True, repo=REPO))
    return folder


@pytest.fixture(scope="module")
def self_study() -> dict[str, bytes]:
    return learner_copy.learner_files(graded=False)


def _texts(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in (".py", ".ipynb", ".md", ".toml", ".txt", ".cff", ".json")
    }


def _answer_lines() -> set[str]:
    """Each line of code in the lessons' answers (comments and indentation dropped)."""
    lines = set()
    for module in sorted((ROOT / "src/helpers/checks/answers").glob("lesson*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                body = ast.get_source_segment(module.read_text(encoding="utf-8"), node)
                for line in body.splitlines()[1:]:
                    code = line.split("  #")[0].strip()
                    if len(code) >= 20:
                        lines.add(code)
    return lines


def test_graded_copy_holds_no_line_of_any_answer(graded, self_study):
    """Every line of an answer that the self-study copy holds only in the answers modules (the
    lines that are the answer, not code the lessons show anyway) is nowhere in the graded copy."""
    elsewhere = "\n".join(
        data.decode("utf-8", "replace")
        for name, data in self_study.items()
        if not learner_copy.ANSWERS.fullmatch(name)
    )
    lines = _answer_lines()
    answer_only = {line for line in lines if line not in elsewhere}
    # About half the lines are also the course's helpers (helpers.softmax is the softmax
    # exercise's answer, ready-made) or code the learner notebooks show: those stay.
    assert len(answer_only) > len(lines) // 3, "the answers' own lines: too few to test"
    for name, text in _texts(graded).items():
        found = [line for line in answer_only if line in text]
        assert not found, f"{name} holds answer code: {found[:3]}"


def test_graded_answers_modules_hold_placeholders_only(graded):
    for module in sorted((graded / "src/helpers/checks/answers").glob("lesson*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        assert not [n for n in tree.body if isinstance(n, ast.FunctionDef)], module.name
        values = [n.value for n in tree.body if isinstance(n, ast.Assign)]
        kinds = {
            "Withheld" if isinstance(v, ast.Call) and v.func.id == "Withheld" else "ASKED"
            for v in values
        }
        assert kinds == {"Withheld", "ASKED"}, module.name


def _last_hints(folder: Path) -> dict[str, str]:
    """Each exercise's last hint in ``folder``'s check modules: its text (an f-string's
    longest literal part), or the name it is given by."""
    hints = {}
    for module in sorted((folder / "src/helpers/checks").glob("lesson*.py")):
        for hint in learner_copy.last_hints(module.read_text(encoding="utf-8")):
            if isinstance(hint, ast.Name):
                text = hint.id
            elif isinstance(hint, ast.JoinedStr):
                parts = [v.value for v in hint.values if isinstance(v, ast.Constant)]
                text = max(parts, key=len)
            else:
                text = ast.literal_eval(hint)
            hints[f"{module.name}:{hint.lineno}"] = text
    return hints


def test_graded_copy_has_no_last_hint(graded, self_study):
    """No exercise's last hint (nearly its answer) is in the graded copy, but where the course's
    helpers hold the same code anyway (causal_mask's one line is helpers.causal_mask's)."""
    full = _last_hints(ROOT)
    assert len(full) == 34  # one per exercise
    elsewhere = "\n".join(
        data.decode("utf-8", "replace")
        for name, data in self_study.items()
        if not learner_copy.CHECKS.fullmatch(name)
    )
    texts = _texts(graded)
    for where, hint in full.items():
        if hint in elsewhere:
            continue
        assert len(hint) > 20 and not [n for n, t in texts.items() if hint in t], where
    assert sum(hint not in elsewhere for hint in full.values()) > 30
    assert set(_last_hints(graded).values()) == {learner_copy.LAST_HINT_NAME}


def test_graded_notebooks_point_at_no_solution_and_self_study_ones_do(graded, self_study):
    studied = [n for n, d in self_study.items() if n.endswith(".ipynb") and b"solution()" in d]
    assert len(studied) == 12  # every lesson tells where its solutions are...
    for notebook in sorted((graded / "notebooks").glob("*.ipynb")):
        text = notebook.read_text(encoding="utf-8")
        assert "solution()" not in text, notebook.name  # ...but not in the graded build
        prose = " ".join("".join(c["source"]) for c in json.loads(text)["cells"]
                         if c["cell_type"] == "markdown").split()  # fmt: skip
        prose = " ".join(prose)
        for said in ("a solution as usual", "solutions/", "`solution`"):
            assert said not in prose, (notebook.name, said)
        assert "Stuck?" in text or notebook.name.startswith("00"), notebook.name
        json.loads(text)
    assert not list((graded / "notebooks").glob("*.py"))


def test_learner_copy_fills_every_owner_repo_placeholder(graded):
    texts = _texts(graded)
    assert not [name for name, text in texts.items() if "OWNER/REPO" in text]
    readme = texts["README.md"]
    assert readme.startswith("> **This is the learner's copy of the course, graded build.**")
    assert f"mybinder.org/v2/gh/{REPO}/HEAD" in readme
    assert f"git+https://github.com/{REPO}" in readme


# The checks of the graded build, run with its helpers: the lessons' own answers (from the full
# course) get a verdict or "graded later", never a false ✗; an answer that returns None gets a
# named mistake or "graded later", never a pass or "the checker itself failed".
_CHECK_EVERY_EXERCISE = textwrap.dedent(
    r"""
    import json
    from helpers import checks
    from helpers.checks.exercise import Exercise
    from helpers.checks.withheld import LAST_HINT
    def stub(*args):
        raise NotImplementedError("replace this line with your answer")

    def broken(*args):
        raise ValueError("a slip in the answer")

    rows = []
    for item in checks.catalogue():
        if isinstance(item, Exercise):
            right, none = item.check(full[item.name]), item.check(lambda *args: None)
            unstarted, raised = item.check(stub), item.check(broken)
            last = item.hint(99)
            rows.append([item.name, right.passed, right.graded_later, none.passed,
                         none.graded_later, none.mistake, item.solution().text,
                         last.text == LAST_HINT, unstarted.passed, unstarted.graded_later,
                         raised.mistake])
        else:
            guess = full[item.name]
            result = item.check(guess if isinstance(guess, str) else float(guess))
            rows.append([item.name, result.passed, result.graded_later, None, None, None,
                         item.solution().text, None])
    print(json.dumps(rows))
    """
)


# The checks that make or choose their cases with the lessons' answers (a causal mask, keys
# rotated by the lesson's RoPE, inputs on which every named mistake differs from the answer).
CASES_FROM_ANSWERS = (
    "scale_for_entropy",
    "masked_attention",
    "decode_step",
    "head_offset_score",
    "most_previous_token_head",
    "rope_decode_step",
)


def test_graded_checks_run_their_public_part_and_never_a_false_verdict(graded):
    out = learner_copy.run_with_answers(graded, _CHECK_EVERY_EXERCISE)
    rows = json.loads(out.splitlines()[-1])
    exercises = [r for r in rows if r[7] is not None]
    predictions = [r + [None] * 3 for r in rows if r[7] is None]
    assert len(exercises) == 34 and predictions
    for (name, passed, later, none_passed, none_later, mistake, solution, last_hint,
         stub_passed, stub_later, raised) in exercises:  # fmt: skip
        assert passed is True or (passed is None and later), name  # never a false ✗
        assert none_passed is False or (none_passed is None and none_later), name
        assert mistake is None or "checker_failed" not in mistake, name
        assert "not part of this copy" in solution and last_hint, name
        # A check calls the answer before it uses the lesson's: a stub is "not attempted yet"
        # and an answer that raises is named, as in the self-study build; but for the checks
        # whose cases are made with the lessons' answers, which say "graded later" to both.
        if name in CASES_FROM_ANSWERS:
            assert stub_passed is None and stub_later and raised is None, name
        else:
            assert stub_passed is None and not stub_later, name
            assert raised == f"{name}.raised", (name, raised)
    for name, passed, later, *_, solution, _, _, _, _ in predictions:
        assert passed is None and later, name  # recorded, not judged: the answer is withheld
        assert "not part of this copy" in solution, name
    public = [r[0] for r in exercises if r[3] is False]
    full = [r[0] for r in exercises if r[1] is True]
    closed = [r[0] for r in exercises if r[3] is None]
    # The guide says how far the graded build's checks go, as measured here.
    guide = " ".join((ROOT / "docs" / "INSTRUCTORS.md").read_text(encoding="utf-8").split())
    assert f"{len(public)} of the 34 exercises' checks name a mistake" in guide, len(public)
    assert f"({len(full)} give their full verdict" in guide, len(full)
    assert f"the other {len(closed)} need the answer" in guide, len(closed)
    assert public and len(public) + len(closed) == 34
    listed = ", ".join(f"`{name}`" for name in CASES_FROM_ANSWERS)
    assert f"but for {len(CASES_FROM_ANSWERS)} whose cases are made or chosen" in guide
    assert f"({listed})" in guide


def _crosses(nb: dict) -> int:
    """How many ✗ (a check's "not yet") the notebook's outputs show."""
    return sum(
        str(output.get("text", "")).count("✗")
        + str(output.get("data", {}).get("text/plain", "")).count("✗")
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )


_RUN_NOTEBOOKS = textwrap.dedent(
    """
    import json, os, sys, nbformat
    from nbclient import NotebookClient
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": os.path.dirname(path)}}).execute()
        print(json.dumps([path, nbformat.writes(nb)]))
    """
)


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_every_lesson_runs_on_the_graded_helpers(graded, folder, tmp_path):
    """The answered lessons (every check's public part on a right answer) and the learner's
    (every exercise a stub) run top to bottom on the graded build's helpers; the answered ones
    show no ✗ that the full build's stored run does not (a lesson may show a wrong answer's)."""
    source = ROOT / folder if folder == "solutions" else graded / "notebooks"
    notebooks = sorted(str(p) for p in source.glob("*.ipynb"))
    env = {**os.environ, "PYTHONPATH": str(graded / "src"), "MPLBACKEND": "agg"}
    env.pop("HELPERS_GRADE_LOG", None)
    env.setdefault("HELPERS_MODEL_DIR", str(ROOT / ".cache" / "all-MiniLM-L6-v2"))
    result = subprocess.run(
        [sys.executable, "-c", _RUN_NOTEBOOKS, *notebooks], capture_output=True, text=True,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    ran = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(ran) == 12
    if folder == "solutions":
        for path, text in ran:
            stored = json.loads(Path(path).read_text(encoding="utf-8"))
            assert _crosses(json.loads(text)) <= _crosses(stored), path


def test_make_learner_repo_writes_one_commit_without_solutions_or_grader(tmp_path):
    dest = tmp_path / "learner"
    tool = [sys.executable, "tools/make_learner_repo.py"]
    made = subprocess.run(
        [*tool, str(dest), "--graded", "--repo", REPO], cwd=ROOT, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    assert f"remote add origin https://github.com/{REPO}.git" in made.stdout
    log = subprocess.run(
        ["git", "-C", str(dest), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    assert log.stdout.strip().splitlines() == [
        "The learner's copy of the self-attention course (graded build)"
    ]
    files = subprocess.run(
        ["git", "-C", str(dest), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "notebooks/05_causal_masking.ipynb" in files and "src/helpers/__init__.py" in files
    assert not [f for f in files if f.startswith(("solutions/", "grader/", "tests/", "tools/"))]
    again = subprocess.run([*tool, str(dest)], cwd=ROOT, capture_output=True, text=True)
    assert again.returncode != 0 and "not an empty folder" in again.stderr
    bad = subprocess.run(
        [*tool, str(tmp_path / "other"), "--repo", "no-slash"], cwd=ROOT, capture_output=True,
        text=True,
    )  # fmt: skip
    assert bad.returncode != 0 and "owner/name" in bad.stderr
    assert not (tmp_path / "other").exists()  # nothing written on a bad setting


def test_graded_predictions_tell_no_answer_in_their_explanation_or_wrong_choices(graded):
    """A prediction's explanation says its answer, and its ``wrong`` dict's keys are the wrong
    choices (the right one is the choice left over): both are the notice and {} in the graded
    copy, and no explanation of the full course is anywhere in it."""
    texts = _texts(graded)
    explained = 0
    for module in sorted((ROOT / "src/helpers/checks").glob("lesson*.py")):
        for node in learner_copy.prediction_answers(module.read_text(encoding="utf-8")):
            if isinstance(node, ast.Constant) and len(node.value) > 40:
                explained += 1
                assert not [n for n, t in texts.items() if node.value in t], node.value[:60]
    assert explained >= 10
    for module in sorted((graded / "src/helpers/checks").glob("lesson*.py")):
        for node in learner_copy.prediction_answers(module.read_text(encoding="utf-8")):
            assert ast.unparse(node) in (learner_copy.LAST_HINT_NAME, "{}"), module.name
