"""The grader's layers: the commands (cli and its arguments, one, gradescope) use outputs,
pipeline and isolation; outputs use the pipeline's data and isolation's status; the pipeline
uses isolation; isolation uses none of them. And no module takes another's private name."""

from __future__ import annotations

import ast

from support import ROOT

PACKAGE = ROOT / "grader" / "src" / "course_grader"
RANK = {"isolation": 0, "pipeline": 1, "outputs": 2}  # the commands: 3, the package's door: 4


def _rank(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:  # course_grader itself (its __init__ holds COLUMNS and main)
        return -1
    return RANK.get(parts[1], 3)


def _imports(path):
    """(module imported, names taken) for each of a module's imports of course_grader."""
    here = ["course_grader", *path.relative_to(PACKAGE).with_suffix("").parts]
    if here[-1] == "__init__":
        here = here[:-1]
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if not module.startswith("course_grader"):
                continue
            for alias in node.names:
                full = f"{module}.{alias.name}"
                # "from . import wire" names a module; "from .sandbox import Limits" a name
                is_module = (PACKAGE / "/".join(full.split(".")[1:])).with_suffix(".py").is_file()
                yield (full if is_module else module), alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("course_grader"):
                    yield alias.name, ""


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(["course_grader", *[p for p in parts if p != "__init__"]])
        yield name, path


def test_each_layer_imports_only_the_layers_below_it():
    upward = []
    for name, path in _modules():
        if name in ("course_grader", "course_grader.__main__"):
            continue  # the door: main() imports the command line
        for module, _ in _imports(path):
            if _rank(module) > _rank(name):
                upward.append(f"{name} imports {module}")
    assert upward == []


def test_the_layers_are_the_ones_the_package_says():
    assert {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} == set(RANK)
    commands = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert commands == {"cli", "arguments", "one", "gradescope"}  # arguments: cli's options


def test_no_module_takes_another_s_private_name():
    taken = [f"{name}: {module}.{what}" for name, path in _modules()
             for module, what in _imports(path) if what.startswith("_")]  # fmt: skip
    assert taken == []
