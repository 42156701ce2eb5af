"""The learner's copy of the course, in its two builds: the one list of what a student gets,
shared by ``make handout`` (a zip) and ``make learner-repo`` (a git repository).

- **Self-study** (the default): the learner notebooks, the helpers package, the set-up files and
  the licences. No ``solutions/``, tests, tools or grader; ``checks.X.solution()`` and every
  hint work.
- **Graded** (``graded=True``, ``GRADED=1``): the same, with every lesson's answers module
  (``helpers/checks/answers/lessonNN.py``) replaced by :class:`helpers.checks.withheld.Withheld`
  placeholders, each exercise's last hint (nearly the answer) by
  :data:`helpers.checks.withheld.LAST_HINT`, and the notebooks' pointers to ``.solution()``
  left out. A check there runs its public part and says the full check runs when graded; the
  grader keeps the full course.

``repo`` ("owner/name") fills every ``OWNER/REPO`` placeholder (launch links, clone commands).

Standard library only: ``make handout`` runs it with the system's Python.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = (
    "notebooks/",
    "src/",
    "jupyter/",
    "README.md",
    "Makefile",
    "requirements.txt",
    "pyproject.toml",
    "environment.yml",
    "postBuild",
    "jupytext.toml",
    "LICENSE",
    "LICENSE-CONTENT.md",
    "THIRD_PARTY_NOTICES.md",
    "CITATION.cff",
    "CHANGELOG.md",
)
ANSWERS = re.compile(r"src/helpers/checks/answers/lesson(\d\d)\.py")
CHECKS = re.compile(r"src/helpers/checks/lesson\d\d\w*\.py")
LAST_HINT_NAME = "LAST_HINT"
# README's note to fill OWNER/REPO by hand: done when the copy is given its repository.
_MAINTAINERS_NOTE = re.compile(rb"<!-- Maintainers: replace the placeholder OWNER/REPO[^>]*-->\n")
NOTE = {
    False: (
        "> **This is the learner's copy of the course.** Run `make lab` and start with\n"
        "> `notebooks/00_start_here.ipynb`. The answered lessons (`solutions/`), the tests and "
        "the\n> tools are not in this copy, so the links and `make` targets below that need them "
        "do not\n> work here; ask your instructor for them.\n\n"
    ),
    True: (
        "> **This is the learner's copy of the course, graded build.** Run `make lab` and start\n"
        "> with `notebooks/00_start_here.ipynb`. The lessons' answers, the last hint of each\n"
        "> exercise, the answered lessons, the tests and the tools are not in this copy: each\n"
        "> check runs the part it can without the answer, and your instructor's grader runs the\n"
        "> full checks. The links and `make` targets below that need the full course do not work\n"
        "> here.\n\n"
    ),
}


def tracked() -> list[str]:
    """The files git tracks, so caches, a local .venv and the model files never end up in a
    zip or a copy (make gradescope and tools/check_pip_install.py take the same list)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [name for name in out.stdout.decode().split("\0") if name]


def learner_files(graded: bool = False, repo: str | None = None) -> dict[str, bytes]:
    """Every file of the learner's copy, by its path in the copy, with its content."""
    files: dict[str, bytes] = {}
    for name in tracked():
        if not (name.startswith(INCLUDE) or name in INCLUDE):
            continue
        if graded and name.startswith("notebooks/") and name.endswith(".py"):
            continue  # the .ipynb is the learner's; jupytext pairs a new .py on the first save
        data = (ROOT / name).read_bytes()
        if name == "README.md":
            data = (NOTE[graded] + data.decode("utf-8")).encode("utf-8")
        elif graded:
            data = _graded(name, data)
        if repo is not None and b"OWNER/REPO" in data:
            data = _MAINTAINERS_NOTE.sub(b"", data).replace(b"OWNER/REPO", repo.encode("ascii"))
        files[name] = data
    if not any(name.startswith("notebooks/") for name in files):
        raise SystemExit("no learner notebooks found: run `make notebooks` first")
    return files


def _graded(name: str, data: bytes) -> bytes:
    if match := ANSWERS.fullmatch(name):
        return withheld_answers(data.decode("utf-8"), match.group(1)).encode("utf-8")
    if CHECKS.fullmatch(name):
        return without_last_hints(data.decode("utf-8")).encode("utf-8")
    if name.startswith("notebooks/") and name.endswith(".ipynb"):
        return graded_notebook(data.decode("utf-8")).encode("utf-8")
    return data


def withheld_answers(text: str, lesson: str) -> str:
    """Lesson ``lesson``'s answers module with each answer (a function, a prediction's value) a
    placeholder of its name, and ``ASKED`` (the order of the checks, not an answer) kept. Any
    other statement is refused, so a new kind of answer cannot slip through unwithheld."""
    lines = [
        f'"""Lesson {lesson}\'s answers are not part of this graded build of the course: the '
        'grader\nkeeps them (helpers.checks.withheld)."""',
        "",
        "from ..withheld import Withheld",
        "",
    ]
    asked = None
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines.append(f'{node.name} = Withheld("{node.name}")')
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == "ASKED":
                asked = ast.get_source_segment(text, node)
                continue
            if isinstance(target, ast.Name):
                lines.append(f'{target.id} = Withheld("{target.id}")')
                continue
        raise ValueError(
            f"lesson {lesson}'s answers: cannot withhold line {node.lineno} "
            f"({type(node).__name__}); teach tools/learner_copy.py this kind of answer"
        )
    if asked is None:
        raise ValueError(f"lesson {lesson}'s answers module has no ASKED")
    return "\n".join([*lines, "", asked, ""])


def last_hints(text: str) -> list[ast.expr]:
    """The last element of each ``Exercise(..., hints=[...])`` in a check module's source."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Exercise":
            for keyword in node.keywords:
                if keyword.arg == "hints" and isinstance(keyword.value, ast.List):
                    if keyword.value.elts:
                        found.append(keyword.value.elts[-1])
    return found


def prediction_answers(text: str) -> list[ast.expr]:
    """What tells a prediction's answer in a check module's source: each ``Prediction(...)``'s
    ``explanation`` and ``wrong`` (whose keys are the wrong choices, so the right one is the
    choice left over)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Prediction":
            found += [k.value for k in node.keywords if k.arg in ("explanation", "wrong")]
    return found


def without_last_hints(text: str) -> str:
    """A check module's source with each exercise's last hint, and each prediction's
    explanation and wrong-choice texts, the graded build's notice (an empty dict for ``wrong``)."""
    hints = last_hints(text)
    told = prediction_answers(text)
    if not hints and not told:
        return text
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = text.encode("utf-8")
    replace = [(h, LAST_HINT_NAME) for h in hints]
    replace += [(v, "{}" if isinstance(v, ast.Dict) else LAST_HINT_NAME) for v in told]
    for node, new in sorted(replace, key=lambda r: (r[0].lineno, r[0].col_offset), reverse=True):
        start = offsets[node.lineno - 1] + node.col_offset  # col_offset counts UTF-8 bytes
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        data = data[:start] + new.encode() + data[end:]
    text = data.decode("utf-8")
    # The notice's import, after the module's own imports from this package.
    anchor = re.search(r"^from \.\w* import (?:\([^)]*\)|[^\n]*)\n", text, re.M)
    if anchor is None:
        raise ValueError("a check module without a `from .x import` line to follow")
    imports = "from .withheld import LAST_HINT\n"
    return text[: anchor.end()] + imports + text[anchor.end() :]


# The notebooks' pointers to a solution, in each phrasing the lessons use.
_SOLUTION_POINTERS = [
    (re.compile(r",\s+and\s+`checks\.\w+\.solution\(\)`\s+prints the whole code of one"), ""),
    (
        re.compile(
            r";\s+`checks\.\w+\.solution\(\)`\s+prints the\s+whole code of one answer, so try the "
            r"hints first"
        ),
        "",
    ),
    (re.compile(r",?\s+or\s+`checks\.\w+\.solution\(\)`"), ""),
    (re.compile(r"\| `checks\.NAME\.solution\(\)` \|[^\n]*\|\n"), ""),
    (
        re.compile(r"Optional;\s+hints\s+and\s+a\s+solution\s+as\s+usual\."),
        "Optional; hints as usual.",
    ),
    (re.compile(r"`check`, `hint`, `solution`;"), "`check` and `hint`;"),
    (re.compile(r";\s+`solutions/` holds the same lessons answered and run\."), "."),
    (
        re.compile(
            r"`hint` and `solution` work for \*\*every\*\* exercise, the optional ★★★ challenges "
            r"included;\s+the lessons mention the hints under each exercise, and the solution is "
            r"always one call away\s+when you want to compare yours with it, or are stuck for "
            r"good\."
        ),
        "`hint` works for **every** exercise, the optional ★★★ challenges included, and the "
        "lessons mention the hints under each exercise. This is the graded build of the course: "
        "the solutions and each exercise's last hint are not part of it, and a check says how "
        "far your answer got without them; the full check runs when your notebook is graded.",
    ),
]


def graded_markdown(text: str) -> str:
    for pattern, replacement in _SOLUTION_POINTERS:
        text = pattern.sub(replacement, text)
    return text


def graded_notebook(text: str) -> str:
    """A learner notebook with its markdown's pointers to ``.solution()`` left out."""
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            cell["source"] = graded_markdown(source).splitlines(keepends=True)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def write_copy(dest: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (from :func:`learner_files`) under ``dest``."""
    for name, data in files.items():
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if (ROOT / name).stat().st_mode & 0o111:
            path.chmod(0o755)


# What a script run by run_with_answers starts with: the copy's helpers imported (asserted),
# and ``full``, every name of the full course's answers modules.
_FULL_ANSWERS = """
import importlib.util, os, sys
import helpers
assert helpers.__file__.startswith(sys.argv[1]), helpers.__file__
full = {}
for path in os.environ["FULL_ANSWERS"].split(os.pathsep):
    spec = importlib.util.spec_from_file_location("full", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    full.update(vars(module))
"""


def run_with_answers(copy: Path, script: str, *args: str) -> str:
    """Run ``script`` in a Python whose ``helpers`` is the copy's at ``copy`` (a graded build's,
    say), with ``full`` holding the full course's answers (``src/helpers/checks/answers/``);
    ``args`` follow the copy's ``src`` in ``sys.argv``. Its printout."""
    answers = sorted(str(p) for p in (ROOT / "src/helpers/checks/answers").glob("lesson*.py"))
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "FULL_ANSWERS": os.pathsep.join(answers)}
    env.pop("HELPERS_GRADE_LOG", None)
    run = subprocess.run(
        [sys.executable, "-c", _FULL_ANSWERS + textwrap.dedent(script), str(copy / "src"), *args],
        capture_output=True, text=True, env=env, cwd=copy, check=True,
    )  # fmt: skip
    return run.stdout
