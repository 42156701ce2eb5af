"""The learner's package and the grader's (issue 43): helpers holds no grader code, the grader
speaks to the checks only through helpers.checks.grading, and both distributions declare
every package they import, pinned alike in requirements.txt."""

from __future__ import annotations

import ast
import hashlib
import re
import sys
import tomllib
from pathlib import Path

import check_pip_install
import pytest
from support import ROOT
from support.requirements import normalise, requirement_pins

from helpers.checks import grading

HELPERS = ROOT / "src" / "helpers"
GRADER = ROOT / "grader" / "src" / "course_grader"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, ``from x import y`` as ``x.y``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_the_grader_reaches_the_checks_through_their_one_public_module():
    wrong = []
    for path in sorted(GRADER.rglob("*.py")):
        text = path.read_text()
        for line, module in _imports(path):
            # Beside the door: helpers itself (its folder, for the cache's digest) and where the
            # course's folder is (helpers.checkout, for the kernel settings).
            if module.startswith("helpers") and module not in (
                "helpers", "helpers.checks.grading", "helpers.checkout.course_checkout"
            ) and not module.startswith("helpers.checks.grading."):  # fmt: skip
                wrong.append(f"{path.name}:{line} imports {module}")
        # In the code (not its comments): only the door's own names (grading.__all__)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "grading" and node.attr not in grading.__all__:
                    wrong.append(f"{path.name}:{node.lineno} uses grading.{node.attr}")
    assert wrong == []


def test_the_learner_s_package_holds_no_grader_code():
    for path in sorted(HELPERS.rglob("*.py")):
        modules = [m for _, m in _imports(path)]
        assert not [m for m in modules if m.startswith("course_grader")], path
    digests = {hashlib.sha256(p.read_bytes()).hexdigest() for p in HELPERS.rglob("*.py")}
    assert digests & check_pip_install.grader_module_digests() == set()
    assert not (HELPERS / "grade").exists()


def test_the_public_module_names_what_it_exports():
    from helpers.checks import grading

    missing = [name for name in grading.__all__ if not hasattr(grading, name)]
    assert missing == []
    assert all(not name.startswith("_") for name in grading.__all__)


def _project(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def _name(requirement: str) -> str:
    return normalise(re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0])


def _top_level_imports(folder: Path) -> set[str]:
    stdlib = set(sys.stdlib_module_names)
    found = set()
    for path in folder.rglob("*.py"):
        for _, module in _imports(path):
            top = module.split(".")[0]
            if top not in stdlib and top not in ("helpers", "course_grader", "__main__"):
                found.add(top)
    return found


# The distribution that brings an import name, where the two differ.
DISTRIBUTION = {"PIL": "pillow", "IPython": "ipython", "zmq": "pyzmq"}


@pytest.mark.parametrize(
    "pyproject, package",
    [(ROOT / "pyproject.toml", HELPERS), (ROOT / "grader" / "pyproject.toml", GRADER)],
    ids=["self-attention-course", "self-attention-course-grader"],
)
def test_each_distribution_declares_what_it_imports_with_a_lower_bound(pyproject, package):
    declared = {_name(r): r for r in _project(pyproject)["dependencies"]}
    needed = {normalise(DISTRIBUTION.get(m, m)) for m in _top_level_imports(package)}
    assert needed - set(declared) == set(), "imported but not declared"
    pins = requirement_pins((ROOT / "requirements.txt").read_text().splitlines())
    from packaging.version import Version

    for name, requirement in declared.items():
        if name == "self-attention-course":
            continue
        bound = re.search(r">=([0-9][0-9A-Za-z.]*)", requirement)
        assert bound, f"{requirement}: no lower bound"
        assert name in pins, f"{name} is not pinned in requirements.txt"
        assert Version(pins[name]) >= Version(bound.group(1)), f"{name}: pin below the bound"


def test_the_grader_s_distribution_carries_the_licence_and_pins_the_course_it_grades_with():
    assert (ROOT / "grader" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    course = _project(ROOT / "pyproject.toml")["version"]
    assert (
        f"self-attention-course=={course}"
        in _project(ROOT / "grader" / "pyproject.toml")["dependencies"]
    )


def test_the_learner_s_distribution_carries_its_data_and_only_helpers():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["packages"]["find"]["include"] == ["helpers*"]
    data = config["package-data"]["helpers"]
    for path in HELPERS.rglob("*"):
        if path.is_file() and path.suffix not in (".py", ".pyc"):
            relative = path.relative_to(HELPERS).as_posix()
            assert any(Path(relative).match(pattern) for pattern in data), relative
