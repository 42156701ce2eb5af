"""`make handout`: the learner's zip has what `make lab` needs and nothing of the answers."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
import check_pip_install

PREFIX = "self-attention-course/"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "course.zip"
    subprocess.run(
        [sys.executable, "tools/make_handout.py", "--out", str(out)], cwd=ROOT, check=True
    )
    return out


@pytest.fixture(scope="module")
def unzipped(handout, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(handout) as archive:
        archive.extractall(folder)
    return folder / PREFIX


def test_handout_has_every_learner_lesson_and_the_helpers_but_no_answers(handout):
    with zipfile.ZipFile(handout) as archive:
        names = {name.removeprefix(PREFIX) for name in archive.namelist()}
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert lessons and all(f"notebooks/{name}" in names for name in lessons)
    for needed in ("Makefile", "requirements.txt", "pyproject.toml", "src/helpers/__init__.py"):
        assert needed in names
    leaked = [n for n in names if n.startswith(("solutions/", "tests/", "tools/", ".venv/"))]
    assert leaked == []
    for licence in ("LICENSE", "LICENSE-CONTENT.md", "THIRD_PARTY_NOTICES.md", "CITATION.cff"):
        assert licence in names


def test_handout_holds_no_grader_code(handout):
    """The grader (its sandbox, its similarity threshold, the edits it ignores) is the
    instructor's: no module of it, and no source that names it, is in the learner's zip."""
    grader_digests = check_pip_install.grader_module_digests()
    with zipfile.ZipFile(handout) as archive:
        names = [name.removeprefix(PREFIX) for name in archive.namelist()]
        assert not [n for n in names if n.startswith("grader/") or "course_grader" in n]
        sources = {n: archive.read(PREFIX + n).decode() for n in names if n.endswith(".py")}
    digests = {n: hashlib.sha256(text.encode()).hexdigest() for n, text in sources.items()}
    assert not [n for n, digest in digests.items() if digest in grader_digests]
    # The words of the grader's own code: its similarity measure and its sandbox's filters.
    for marker in ("alike_pairs", "SIMILAR", "seccomp", "bwrap", "def grade_one"):
        assert not [n for n, text in sources.items() if marker in text], marker


def test_handout_readme_says_it_is_the_learners_copy(unzipped):
    readme = (unzipped / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("> **This is the learner's copy of the course.**")
    assert (ROOT / "README.md").read_text(encoding="utf-8") in readme


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_handout_make_lab_works_and_developer_targets_explain_themselves(unzipped):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    lab = subprocess.run(
        ["make", "-n", "lab"], cwd=unzipped, capture_output=True, text=True, env=env
    )
    assert lab.returncode == 0, lab.stderr
    assert "jupyter lab notebooks/00_start_here.ipynb" in lab.stdout
    for target in ("test", "notebooks", "lint", "grade", "gradescope"):
        # -j2: the guard must still stop the set-up (a venv and a pip install) from starting.
        result = subprocess.run(
            ["make", "-j2", target], cwd=unzipped, capture_output=True, text=True, env=env
        )
        assert result.returncode != 0
        assert "this is the learner's copy of the course" in result.stdout
        assert "make lab" in result.stdout
        assert "Creating" not in result.stdout and not (unzipped / ".venv").exists()
