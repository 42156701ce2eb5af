"""One version, said alike everywhere a term pins it: the course's and the grader's packages,
the grader's pin of the course, the citation, the changelog's newest entry, and what helpers
reports."""

from __future__ import annotations

import re
import tomllib

from support import ROOT

import helpers


def test_the_version_is_the_same_everywhere():
    course = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    grader = tomllib.loads((ROOT / "grader/pyproject.toml").read_text())["project"]
    assert grader["version"] == course
    assert f"self-attention-course=={course}" in grader["dependencies"]
    citation = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(course)}$", citation, re.M)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    newest = re.search(r"^## (\S+) \((\d{4}-\d\d-\d\d)\)$", changelog, re.M)
    assert newest and newest.group(1) == course
    assert re.search(rf"^date-released: {newest.group(2)}$", citation, re.M)
    assert helpers.__version__ == course  # installed (make setup) at this version
