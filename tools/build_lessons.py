"""Build every generated lesson file from its one source, ``solutions/NN_topic.py``.

    python tools/build_lessons.py            # rebuild all lessons
    python tools/build_lessons.py 01 04      # rebuild lessons 01 and 04
    python tools/build_lessons.py --check    # fail (exit 1) if any generated file is stale

From ``solutions/NN_topic.py`` (jupytext py:percent) it writes:

* ``solutions/NN_topic.ipynb``: executed, outputs stored (for GitHub/nbviewer and nbval);
* ``notebooks/NN_topic.py``: the learner's source, every ``### BEGIN SOLUTION`` ...
  ``### END SOLUTION`` region replaced by a stub that raises ``NotImplementedError``, and every
  prediction line ``guess = "fall"  ### ANSWER`` replaced by ``guess = None`` (not yet guessed);
* ``notebooks/NN_topic.ipynb``: the learner's notebook, no outputs.

Both notebooks carry ``metadata["course"] = {"lesson": "NN"}``: ``make grade`` recognises a
submitted notebook's lesson by it (whatever the file is called). The executed one also records
``"helpers_sha256"``, a digest of the ``src/helpers/`` sources its outputs come from when it ran
(all but other lessons' checks: :func:`helpers_digest`): its outputs, and the widget state nbval
does not compare (what a saved explorer shows), come from that code.

Before any lesson runs, every lesson's answers (each function holding a solution region, each
### ANSWER value) are written to ``src/helpers/checks/answers/lessonNN.py``: the one copy of
each answer that the checks use as their reference and ``.solution()`` shows.

``--check`` compares text, cell sources and that digest without executing anything; that the
stored outputs reproduce is nbval's job (``make test``).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import hashlib
import json
import re
import symtable
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
# The course's server settings (kernel connection encrypted, CurveZMQ), which make setup gives
# JupyterLab: the same kernels here, and no "running over TCP without encryption" warning.
ENCRYPTED_KERNEL = Config(json.loads((ROOT / "jupyter" / "jupyter_server_config.json").read_text()))
SOLUTIONS, NOTEBOOKS = ROOT / "solutions", ROOT / "notebooks"
HELPERS = ROOT / "src" / "helpers"
PAIRING = "ipynb,py:percent"
KERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}

_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*\n.*?^[ \t]*### END SOLUTION[ \t]*\n",
    re.MULTILINE | re.DOTALL,
)
STUB = (
    "{indent}# YOUR CODE HERE\n"
    '{indent}raise NotImplementedError("replace this line with your answer")\n'
)
# A prediction: one assignment marked ### ANSWER; the learner's copy has None there instead.
_ANSWER_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<name>[A-Za-z_]\w*)[ \t]*=[^\n]*?###[ \t]*ANSWER[ \t]*$", re.MULTILINE
)
ANSWER_STUB = "{indent}{name} = None  # YOUR GUESS HERE, before you run the next cell"

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")
_HEX32 = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")


def lesson_sources(selected: list[str] | None = None) -> list[Path]:
    """``solutions/NN_*.py``, all of them or those whose number is in ``selected``."""
    sources = sorted(SOLUTIONS.glob("[0-9][0-9]_*.py"))
    if selected:
        sources = [p for p in sources if p.name[:2] in selected]
        missing = set(selected) - {p.name[:2] for p in sources}
        if missing:
            sys.exit(f"no lesson source solutions/NN_*.py for: {', '.join(sorted(missing))}")
    return sources


def learner_text(solution_text: str, name: str = "lesson") -> str:
    """The solution source with each answer region replaced by a stub.

    A region must sit inside a function body (indented), so the learner's notebook still runs
    top to bottom: defining the stub is harmless, only calling it raises.
    """
    for match in _REGION.finditer(solution_text):
        if not match.group("indent"):
            raise ValueError(
                f"{name}: a ### BEGIN SOLUTION region at column 0; put answers inside a function "
                "so the learner's copy still runs top to bottom"
            )
    stripped = _REGION.sub(lambda m: STUB.format(indent=m.group("indent")), solution_text)
    if "### BEGIN SOLUTION" in stripped or "### END SOLUTION" in stripped:
        raise ValueError(f"{name}: unbalanced ### BEGIN SOLUTION / ### END SOLUTION markers")
    stripped = _ANSWER_LINE.sub(lambda m: ANSWER_STUB.format(**m.groupdict()), stripped)
    if "### ANSWER" in stripped:
        raise ValueError(f"{name}: ### ANSWER must end a one-line assignment `guess = ...`")
    return stripped


def answer_lines(solution_text: str, name: str = "lesson") -> list[str]:
    """The lines of the answers (inside the solution regions, and each ### ANSWER assignment
    without its marker) that the learner's copy has nowhere, comments and lines of 8 characters
    or fewer left out: what a learner must never be shown (the website's tests look for them)."""
    learner = learner_text(solution_text, name)
    answers = [m.group(0) for m in _REGION.finditer(solution_text)]
    answers += [m.group(0) for m in _ANSWER_LINE.finditer(solution_text)]
    lines = {
        line.split("###")[0].strip()
        for answer in answers
        for line in answer.splitlines()
        if not line.strip().startswith("#")
    }
    return sorted(line for line in lines if len(line) > 8 and line not in learner)


def answers_text(solution_text: str, lesson: str, name: str = "NN_lesson.py") -> str:
    """The module ``helpers.checks.answers.lessonNN``: each function that holds a
    ``### BEGIN SOLUTION`` region, as the lesson writes it (markers dropped), and each prediction's
    answer (``guess = "fall"  ### ANSWER``) as ``<prediction name> = "fall"``, the name taken from
    the ``checks.<name>.check(guess)`` that follows it. The imports are the lesson's own, those
    the answers use; and ``ASKED``, their names in the order the lesson checks them. This is the
    one source of ``checks.<name>.reference`` and ``.solution()``.
    Empty for a lesson without exercises."""
    tree = ast.parse(solution_text)
    lines = solution_text.splitlines()
    functions: list[ast.FunctionDef] = []
    for number, line in enumerate(lines, start=1):
        if line.strip() != "### BEGIN SOLUTION":
            continue
        holder = [
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.lineno < number <= node.end_lineno
        ]
        if not holder:
            raise ValueError(
                f"{name}, line {number}: a ### BEGIN SOLUTION region outside a top-level "
                "function; an answer is a function the lesson defines at the top of a cell"
            )
        if holder[0] not in functions:
            functions.append(holder[0])
    defined = {f.name for f in functions}
    bound = _imported_names(tree)
    needed: dict[str, str] = {}
    for function in functions:
        for free in sorted(_free_names(function) - defined):
            if free not in bound and free in dir(builtins):
                continue  # a builtin the lesson does not shadow with an import
            if free not in bound:
                raise ValueError(
                    f"{name}: the answer {function.name}() uses {free!r}, which is neither "
                    "imported at the lesson's top level nor another answer of the lesson"
                )
            needed[free] = bound[free]
    calls = _check_calls(tree)
    predictions = []
    for match in _ANSWER_LINE.finditer(solution_text):
        line = solution_text.count("\n", 0, match.start()) + 1
        after = next((c for c in calls if c[0] > line), None)  # the check that follows it
        if after is None or after[3] != match.group("name"):
            raise ValueError(
                f"{name}: the prediction {match.group(0).strip()!r} is not followed by "
                f"checks.<name>.check({match.group('name')})"
            )
        (assign,) = [n for n in tree.body if isinstance(n, ast.Assign) and n.lineno == line]
        value = ast.literal_eval(assign.value)
        shown = json.dumps(value) if isinstance(value, str) else repr(value)
        predictions.append(f"{after[2]} = {shown}")
    if not functions and not predictions:
        return ""
    named = [f.name for f in functions] + [line.split(" = ")[0] for line in predictions]
    checked = [call[2] for call in calls]
    unasked = [n for n in named if n not in checked]
    if unasked:
        raise ValueError(f"{name}: the answer {unasked[0]} is never checked (checks.{unasked[0]}"
                         ".check(...) in the lesson)")  # fmt: skip
    asked = sorted(named, key=checked.index)
    parts = [
        f'"""Lesson {lesson}\'s answers, generated from solutions/{name} by `make notebooks`\n'
        "(tools/build_lessons.py): do not edit. Edit the lesson's solution regions and ### ANSWER "
        'lines."""',
        _sorted_imports(set(needed.values())),
        *(
            "\n".join(
                line
                for line in lines[_first_line(f) - 1 : f.end_lineno]
                if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
            )
            for f in functions
        ),
        "\n".join(predictions),
        "# The order in which the lesson asks them (checks.catalogue()'s, lesson 00's list).\n"
        f"ASKED = ({''.join(json.dumps(n) + ', ' for n in asked).rstrip()})",
    ]
    head, *rest = [part for part in parts if part]
    return head + "\n\n" + "\n\n\n".join(rest) + "\n"


def _check_calls(tree: ast.Module) -> list[tuple[int, int, str, str | None]]:
    """The lesson's ``checks.X.check(arg)`` calls in the order of the code (comments and strings
    never count): ``(line, column, X, the argument's name or None)``."""
    calls = []
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if isinstance(node, ast.Call) and isinstance(func, ast.Attribute) and func.attr == "check":
            owner = func.value
            if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name):
                if owner.value.id == "checks":
                    first = node.args[0] if node.args else None
                    arg = first.id if isinstance(first, ast.Name) else None
                    calls.append((node.lineno, node.col_offset, owner.attr, arg))
    return sorted(calls)


def _sorted_imports(imports: set[str]) -> str:
    """``imports`` in ruff's isort order: standard library, third party, then the course's own
    ``helpers``; in each, ``import x`` before ``from x import y``."""

    def key(line: str) -> tuple[int, bool, str]:
        module = line.split()[1]
        top = module.split(".")[0]
        section = 0 if top in sys.stdlib_module_names else 2 if top == "helpers" else 1
        return section, line.startswith("from"), module

    ordered = sorted(imports, key=key)
    blocks: dict[int, list[str]] = {}
    for line in ordered:
        blocks.setdefault(key(line)[0], []).append(line)
    return "\n\n".join("\n".join(block) for block in blocks.values())


def _first_line(function: ast.FunctionDef) -> int:
    return min([function.lineno, *(d.lineno for d in function.decorator_list)])


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """Each name a top-level import binds -> that import, alone (``import numpy as np``)."""
    bound: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = ast.unparse(
                    ast.Import(names=[alias])
                )
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                bound[alias.asname or alias.name] = ast.unparse(
                    ast.ImportFrom(module=node.module, names=[alias], level=0)
                )
    return bound


def _free_names(function: ast.FunctionDef) -> set[str]:
    """The module-level names ``function`` reads, scope by scope (an inner function's or a
    lambda's own names never hide an outer use): what must be imported or defined beside it."""
    table = symtable.symtable(ast.unparse(function), "<answer>", "exec").get_children()[0]
    found: set[str] = set()

    def walk(scope) -> None:
        for symbol in scope.get_symbols():
            if symbol.is_global() and symbol.is_referenced():
                found.add(symbol.get_name())
        for child in scope.get_children():
            walk(child)

    walk(table)
    return found - {function.name}


def answers_path(lesson: str) -> Path:
    """Where lesson ``lesson``'s answers module is generated (``helpers.checks.answers``), for
    the checks to import: never edited by hand."""
    return HELPERS / "checks" / "answers" / f"lesson{lesson}.py"


def write_answers(solution_text: str, name: str) -> None:
    """Write (or, for a lesson without answers, remove) the lesson's answers module."""
    text, path = answers_text(solution_text, name[:2], name), answers_path(name[:2])
    if text:
        path.write_text(text)
    else:
        path.unlink(missing_ok=True)


def course_metadata(lesson: str) -> dict[str, str]:
    """What ``make grade`` reads to know a notebook's lesson: ``{"lesson": "04"}``."""
    return {"lesson": lesson}


def as_notebook(text: str, lesson: str | None = None) -> nbformat.NotebookNode:
    """A py:percent text as a notebook, with the pairing and kernel the course uses, and its
    lesson number (two digits) in ``metadata["course"]`` when given."""
    nb = jupytext.reads(text, fmt="py:percent")
    # Cell ids from the cells' text, not random: a rebuild changes only the cells that changed.
    seen: dict[str, int] = {}
    for cell in nb.cells:
        digest = hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:8]
        seen[digest] = seen.get(digest, 0) + 1
        cell.id = digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"
    nb.metadata["kernelspec"] = KERNEL
    nb.metadata.setdefault("jupytext", {})["formats"] = PAIRING
    if lesson is not None:
        nb.metadata["course"] = course_metadata(lesson)
    return nb


def solved_notebook(text: str, lesson: str) -> nbformat.NotebookNode:
    """The solution's notebook before it runs: :func:`as_notebook`, plus the digest of the
    helpers it will run with (``course.helpers_sha256``)."""
    nb = as_notebook(text, lesson)
    nb.metadata["course"]["helpers_sha256"] = helpers_digest(text, lesson)
    return nb


def execute(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel; stop at the first error, naming the cell."""
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        config=ENCRYPTED_KERNEL,
        record_timing=False,  # no per-cell timestamps: a rebuild of an unchanged lesson is a no-op
    ).execute()
    return nb


def build(source: Path) -> None:
    start = time.perf_counter()
    text = source.read_text()
    learner_py = NOTEBOOKS / source.name
    NOTEBOOKS.mkdir(exist_ok=True)
    learner_py.write_text(learner_text(text, source.name))
    lesson = source.name[:2]
    jupytext.write(
        as_notebook(learner_py.read_text(), lesson), learner_py.with_suffix(".ipynb"), fmt="ipynb"
    )
    solved = stable_widget_ids(
        without_held_pictures(execute(solved_notebook(text, lesson), SOLUTIONS)), lesson
    )
    jupytext.write(solved, source.with_suffix(".ipynb"), fmt="ipynb")
    print(f"built {source.stem}: executed in {time.perf_counter() - start:.1f} s")


def without_held_pictures(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The saved widget state without the pictures a slider holds for the browser
    (``LiveFigure.film``: one PNG per value, about 1 MB for lesson 01). Saved, they would
    weigh down every executed lesson in the repository, for a page with no kernel, where the
    slider moves nothing anyway; the picture shown is kept (its image widget's)."""
    store = nb.metadata.get("widgets", {}).get(WIDGET_STATE)
    for model in (store or {}).get("state", {}).values():
        state = model.get("state", {})
        if "pictures" in state and "alts" in state:
            state["pictures"], state["alts"] = [], []
            kept = [b for b in model.get("buffers", []) if b["path"][:1] != ["pictures"]]
            if kept:
                model["buffers"] = kept
            else:
                model.pop("buffers", None)
    return nb


def stable_widget_ids(nb: nbformat.NotebookNode, lesson: str) -> nbformat.NotebookNode:
    """Rename the saved widgets' random model ids (uuid4) after their place in the notebook, so
    that rebuilding an unchanged lesson rewrites the same file (the state is saved sorted by id:
    random ids reordered all of it, about 9,000 changed lines per rebuild).

    The order: the widgets the outputs display, in cell order, then what each refers to
    (``IPY_MODEL_<id>``), breadth first; then the widgets nothing displays (a ``jslink``'s
    model), sorted by their state with their references already renamed.
    """
    store = nb.metadata.get("widgets", {}).get(WIDGET_STATE)
    if not store or not store.get("state"):
        return nb
    state = store["state"]

    def refs(model_id: str) -> list[str]:
        return _MODEL_REF.findall(json.dumps(state[model_id], sort_keys=True))

    order: list[str] = []
    queue = [
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]
    while True:
        while queue:
            model_id = queue.pop(0)
            if model_id in state and model_id not in order:
                order.append(model_id)
                queue.extend(refs(model_id))
        rest = [m for m in state if m not in order]
        if not rest:
            break
        place = {m: f"#{i}" for i, m in enumerate(order)}
        queue = [min(rest, key=lambda m: _with_refs_renamed(state[m], place))]
    new_ids = {
        old: hashlib.sha256(f"{lesson}:{i}".encode()).hexdigest()[:32]
        for i, old in enumerate(order)
    }
    text = _HEX32.sub(lambda m: new_ids.get(m.group(0), m.group(0)), nbformat.writes(nb))
    return nbformat.reads(text, as_version=4)


def _with_refs_renamed(model: dict, place: dict[str, str]) -> str:
    """A saved widget's JSON with each reference replaced by ``place[id]`` ("?" if absent)."""
    text = json.dumps(model, sort_keys=True)
    return _MODEL_REF.sub(lambda ref: place.get(ref.group(1), "?"), text)


_DEFINED_CHECK = re.compile(r"^(?P<name>[A-Za-z_]\w*) = (?:Exercise|Prediction)\(", re.MULTILINE)
# What the executed lessons are built from beside the Python: the browser modules their saved
# widgets embed, the induction model's weights.
DATA_FILES = ("*.js", "*.css", "*.npz")


def _lessons_imported(module_text: str) -> set[str]:
    """The lessons whose check or answers modules a check module imports, in any form
    (``from .lesson04 import x``, ``from .answers import lesson03, lesson04``, ``from
    .answers.lesson04 import x``, ``from . import lesson04``, absolute, inside a function)."""
    found = set()
    for node in ast.walk(ast.parse(module_text)):
        if isinstance(node, ast.ImportFrom):
            dotted = [node.module or ""] + [f"{node.module or ''}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            dotted = [a.name for a in node.names]
        else:
            continue
        for path in dotted:
            found |= set(re.findall(r"(?:^|\.)lesson(\d\d)(?:_\w+)?\b", path))
    return found


def lessons_checked(solution_text: str, lesson: str) -> set[str] | None:
    """The lessons whose checks (``checks/lessonNN.py``, ``lessonNN_*.py`` and their answers) can
    change this lesson's outputs: its own, any whose exercise or module it names (``checks.<name>``,
    ``checks.lesson04``), and those their check modules import; None for all of them, when it
    prints the catalogue (lesson 00's list of every exercise)."""
    if "catalogue(" in solution_text:
        return None
    named = set(re.findall(r"\bchecks\.([A-Za-z_]\w*)", solution_text))
    modules: dict[str, str] = {}  # lesson: its check modules' text (lessonNN.py, lessonNN_*.py)
    for module in sorted((HELPERS / "checks").glob("lesson[0-9][0-9]*.py")):
        number = module.stem[len("lesson") :][:2]
        modules[number] = modules.get(number, "") + module.read_text()
    found = {lesson} | {n for n, t in modules.items() if named & set(_DEFINED_CHECK.findall(t))}
    found |= {n for n in modules if f"lesson{n}" in named}
    found |= set(re.findall(r"\blesson(\d\d)\b", " ".join(re.findall(
        r"(?:from|import)\s+helpers\.checks[\w. ,()]*", solution_text))))  # fmt: skip
    while True:  # and the lessons whose checks or answers those check modules import
        more = {m for n in found for m in _lessons_imported(modules.get(n, ""))} - found
        if not more:
            return found
        found |= more


def helpers_digest(solution_text: str, lesson: str) -> str:
    """sha256 of the ``src/helpers/`` files a lesson's outputs come from (each file's path and
    bytes, in order; the Python and :data:`DATA_FILES`): all but the checks and answers of
    lessons it never uses (:func:`lessons_checked`), so that editing one lesson's checks leaves
    the others fresh."""
    used = lessons_checked(solution_text, lesson)
    digest = hashlib.sha256()
    files = {p for pattern in ("*.py", *DATA_FILES) for p in HELPERS.rglob(pattern)}
    for path in sorted(files):
        name = path.relative_to(HELPERS).as_posix()
        other = re.fullmatch(r"checks/(?:answers/)?lesson(\d\d)(?:_\w+)?\.py", name)
        if used is not None and other and other.group(1) not in used:
            continue
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


# Every lesson ends with a markdown cell saying its licences (README, "Licence"): these links.
LICENCE_LINKS = (
    "https://creativecommons.org/licenses/by/4.0/",
    "../LICENSE",
    "../LICENSE-CONTENT.md",
)


def has_licence_footer(text: str) -> bool:
    """True when the lesson's last cell is markdown naming the text's and the code's licences."""
    last = as_notebook(text).cells[-1]
    links = all(f"]({link})" in last.source for link in LICENCE_LINKS)
    return last.cell_type == "markdown" and links


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source, sorted(c.metadata.get("tags", []))) for c in nb.cells]


def stale_files(source: Path) -> list[str]:
    """What is out of date for one lesson, as readable reasons (empty list: all fresh)."""
    problems = []
    text, lesson = source.read_text(), source.name[:2]
    if not has_licence_footer(text):
        problems.append(
            f"{source.name} does not end with the licence footer (its last cell, markdown, links "
            + ", ".join(LICENCE_LINKS)
            + ")"
        )
    answers, answers_file = answers_text(text, lesson, source.name), answers_path(lesson)
    shown = f"helpers.checks.answers.lesson{lesson}"
    if answers and (not answers_file.exists() or answers_file.read_text() != answers):
        problems.append(f"{shown} differs from the answers in {source.name}")
    elif not answers and answers_file.exists():
        problems.append(f"{shown} exists, but {source.name} has no answers")
    expected_learner = learner_text(text, source.name)
    learner_py = NOTEBOOKS / source.name
    solved_ipynb, learner_ipynb = source.with_suffix(".ipynb"), learner_py.with_suffix(".ipynb")
    for path in (solved_ipynb, learner_py, learner_ipynb):
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)} is missing")
    if problems:
        return problems
    if learner_py.read_text() != expected_learner:
        problems.append(f"{learner_py.relative_to(ROOT)} differs from {source.name} with stubs")
    learner_nb = nbformat.read(learner_ipynb, as_version=4)
    if _cells(learner_nb) != _cells(as_notebook(expected_learner)):
        problems.append(f"{learner_ipynb.relative_to(ROOT)}: cells differ from the source")
    solved_nb = nbformat.read(solved_ipynb, as_version=4)
    solved_course = dict(solved_nb.metadata.get("course", {}))
    built_with = solved_course.pop("helpers_sha256", None)
    for path, course in (
        (learner_ipynb, learner_nb.metadata.get("course")),
        (solved_ipynb, solved_course),
    ):
        if course != course_metadata(source.name[:2]):
            problems.append(f"{path.relative_to(ROOT)} lacks metadata course.lesson (make grade)")
    if built_with != helpers_digest(text, lesson):
        problems.append(
            f"{solved_ipynb.relative_to(ROOT)} was executed with other helpers than "
            "src/helpers/ holds now: its outputs and saved widgets may be stale"
        )
    if any(c.get("outputs") for c in learner_nb.cells):
        problems.append(
            f"{learner_ipynb.relative_to(ROOT)} has outputs; the learner's copy has none"
        )
    if _cells(solved_nb) != _cells(as_notebook(text)):
        problems.append(f"{solved_ipynb.relative_to(ROOT)}: cells differ from {source.name}")
    unexecuted = [
        i
        for i, c in enumerate(solved_nb.cells)
        if c.cell_type == "code" and c.source.strip() and c.get("execution_count") is None
    ]
    if unexecuted:
        problems.append(f"{solved_ipynb.relative_to(ROOT)}: cells {unexecuted} were never executed")
    return problems


def orphans() -> list[str]:
    """Generated files whose source is gone."""
    sources = {p.stem for p in lesson_sources()}
    generated = list(SOLUTIONS.glob("[0-9][0-9]_*.ipynb")) + list(NOTEBOOKS.glob("[0-9][0-9]_*.*"))
    return [
        f"{p.relative_to(ROOT)} has no source solutions/{p.stem}.py"
        for p in generated
        if p.stem not in sources
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("lessons", nargs="*", help="two-digit lesson numbers (default: all)")
    parser.add_argument("--check", action="store_true", help="report stale files, build nothing")
    args = parser.parse_args(argv)
    sources = lesson_sources(args.lessons)
    if args.check:
        problems = [p for s in sources for p in stale_files(s)] + orphans()
        for problem in problems:
            print(f"stale: {problem}")
        if problems:
            print("Run `make notebooks` to regenerate them.")
        return 1 if problems else 0
    # Every lesson's answers first: lesson 00 imports every check (it lists them), so a new
    # exercise of a later lesson must have its answer before lesson 00 runs.
    for source in lesson_sources():
        write_answers(source.read_text(), source.name)
    for source in sources:
        build(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
