"""Build the course's website: every lesson readable in a browser, its widgets live, no kernel.

    python tools/build_site.py              # build/site/ (open build/site/index.html)
    python tools/build_site.py --src-only   # only the Sphinx source, build/site-src/

Each page is a lesson (``solutions/NN_topic.py``) executed here, as tools/build_lessons.py
executes it, but keeping what the repository's copy leaves out: the pictures each slider holds
for the browser (its film), so that a slider moves its figure in the page with no kernel (about
a minute for the twelve). Its answers are left out: a code cell whose source differs from the
learner's copy is an exercise's answer or a prediction, and the page shows the learner's cell
instead, without outputs, followed by how to try it (Binder, ``make lab``). Every page also
gets its launch links under its title.

The widgets are drawn in the page from their saved state by the Jupyter widgets' HTML manager;
what runs in the browser (a token click in the explorer, a slider's film) works there as in
JupyterLab, and what needs Python says so. Every script, style and font the pages load is a file
of the site (tools/site_assets.py): it can be served from anywhere, offline. The Sphinx
configuration is ``site/conf.py``.

Why Sphinx with myst-nb and the book theme, not Jupyter Book 2 (mystmd): mystmd's build loads
its theme from api.mystmd.org (jupyter-book/mystmd#1451), and the course builds from the
package registries alone; myst-nb reads the executed notebooks and their widget state as they
are, and the theme ships its own fonts and scripts.

``COURSE_REPOSITORY=owner/name`` names the GitHub repository the launch links open (the Pages
workflow sets it); otherwise it is read from ``git remote get-url origin``, else left as the
placeholder OWNER/REPO that the README's Binder links use.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import nbformat
from myst_parser.mdit_to_docutils.base import default_slugify

from helpers.explorer import STATIC_PAGE

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_lessons  # noqa: E402  (tools beside this one)
import site_assets  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
CONFIG = ROOT / "site"
SOURCE, OUTPUT = ROOT / "build" / "site-src", ROOT / "build" / "site"
DOCTREES = ROOT / "build" / "site-doctrees"
PLACEHOLDER = "OWNER/REPO"
# anywidget's AMD module (its classic-notebook extension), which the HTML manager loads.
ANYWIDGET_MODULE = (
    Path(sys.prefix) / "share" / "jupyter" / "nbextensions" / "anywidget" / "index.js"
)
# The files of the repository a page's licence footer links to, relatively (../LICENSE).
_RELATIVE_LINK = re.compile(r"\]\(\.\./([^)\s]+)\)")
# A link to a heading of another lesson, as JupyterLab names headings ("#Path-length,-counted");
# MyST names them by its slug of the heading's words ("#path-length-counted").
_HEADING_LINK = re.compile(r"\]\(([\w.-]+\.ipynb)#([^)\s]+)\)")


def _myst_anchor(match: re.Match) -> str:
    words = urllib.parse.unquote(match.group(2)).replace("-", " ")
    return f"]({match.group(1)}#{default_slugify(words)})"


def repository() -> str:
    """``owner/name`` of the course's GitHub repository, or the placeholder."""
    named = os.environ.get("COURSE_REPOSITORY", "").strip()
    if named:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", named):
            sys.exit(f"COURSE_REPOSITORY must be owner/name, got {named!r}")
        return named
    try:
        url = subprocess.run(
            ["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        url = ""
    found = re.search(r"github\.com[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$", url)
    return found.group(1) if found else PLACEHOLDER


def binder_url(repo: str, notebook: str) -> str:
    return f"https://mybinder.org/v2/gh/{repo}/HEAD?urlpath=lab/tree/notebooks/{notebook}"


def launch_cell(repo: str, notebook: str) -> nbformat.NotebookNode:
    text = (
        f"**Run this lesson** and do its exercises: [on Binder]({binder_url(repo, notebook)}) "
        "(in your browser, nothing to install; it takes a minute or two to start), or on your "
        f"own machine with `make lab` ([how to set up](https://github.com/{repo}#readme)). "
        "This page shows the lesson as it runs, without the exercises' answers; its widgets "
        "work here, but what needs Python (your own sentence, a new head count) needs the lesson "
        "running."
    )
    return nbformat.v4.new_markdown_cell(text, metadata={"site": "launch"})


def try_it_cell(repo: str, notebook: str) -> nbformat.NotebookNode:
    text = (
        "```{tip}\n"
        "Your answer goes in the cell above, and the course checks it when you run it: "
        f"[open this lesson on Binder]({binder_url(repo, notebook)}) or run `make lab`. "
        "The answer is not on this page.\n"
        "```"
    )
    return nbformat.v4.new_markdown_cell(text, metadata={"site": "try-it"})


def executed(source: Path) -> nbformat.NotebookNode:
    """The lesson run in a fresh kernel, its sliders' films kept (build_lessons drops them),
    each explorer holding every state it can show (helpers.explorer.STATIC_PAGE): the page
    has no kernel to draw them."""
    lesson = source.name[:2]
    solved = build_lessons.solved_notebook(source.read_text(), lesson)
    saved = os.environ.get(STATIC_PAGE)
    os.environ[STATIC_PAGE] = "1"  # the kernel inherits it
    try:
        nb = build_lessons.execute(solved, SOLUTIONS)
    finally:
        if saved is None:
            del os.environ[STATIC_PAGE]
        else:
            os.environ[STATIC_PAGE] = saved
    return build_lessons.stable_widget_ids(nb, lesson)


def learners(source: Path) -> nbformat.NotebookNode:
    """The learner's notebook of the lesson, as tools/build_lessons.py makes it."""
    text = build_lessons.learner_text(source.read_text(), source.name)
    return build_lessons.as_notebook(text, source.name[:2])


# Controls that work in the page: a slider holding its film, and the explorer's head, layer,
# causal toggle and temperature (it holds every state and draws it itself,
# helpers/explorer_front/map_preview.js). Any other control (the explorer's sentence box, a
# lesson's own toggles) only tells the kernel, which the page does not have: it is disabled.
IN_PAGE_CLASSES = {"explorer-head", "explorer-layer", "explorer-causal", "explorer-temperature"}
NEEDS_KERNEL = "needs the lesson running (Binder, or make lab)"


def holds_film(model: dict) -> bool:
    state = model.get("state", {})
    return bool(state.get("pictures")) or any(
        b["path"][:1] == ["pictures"] for b in model.get("buffers", [])
    )


def disable_kernel_controls(nb: nbformat.NotebookNode) -> list[str]:
    """Disable, in the saved widget state, each control the page cannot run; return their names."""
    store = nb.metadata.get("widgets", {}).get(build_lessons.WIDGET_STATE, {})
    disabled = []
    for model in store.get("state", {}).values():
        state = model.get("state", {})
        if "disabled" not in state or IN_PAGE_CLASSES & set(state.get("_dom_classes", [])):
            continue
        if holds_film(model):
            continue
        state["disabled"] = True
        tip = state.get("tooltip") or state.get("description") or ""
        state["tooltip"] = f"{tip} ({NEEDS_KERNEL})".strip()
        disabled.append(state.get("description") or model["model_name"])
    return disabled


def drop_undisplayed_widgets(nb: nbformat.NotebookNode) -> int:
    """Drop from the saved widget state the widgets the page never shows (lesson 04's `twin`
    explorer, made to compare against, holds its every state too); return how many.

    Kept: what an output displays and all it refers to (``IPY_MODEL_<id>``), and any other
    widget that refers to one of those (a ``jslink`` between two shown widgets), with all it
    refers to in turn."""
    store = nb.metadata.get("widgets", {}).get(build_lessons.WIDGET_STATE)
    if not store or not store.get("state"):
        return 0
    state = store["state"]
    refs = {m: set(build_lessons._MODEL_REF.findall(json.dumps(s))) for m, s in state.items()}
    keep: set[str] = set()

    def add(model_id: str) -> None:
        todo = [model_id]
        while todo:
            m = todo.pop()
            if m in state and m not in keep:
                keep.add(m)
                todo.extend(refs[m])

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(build_lessons.WIDGET_VIEW)
            if view:
                add(view["model_id"])
    grew = True
    while grew:
        linked = [m for m in state if m not in keep and refs[m] & keep]
        grew = bool(linked)
        for m in linked:
            add(m)
    dropped = [m for m in state if m not in keep]
    for m in dropped:
        del state[m]
    return len(dropped)


def page(solved: nbformat.NotebookNode, stubs: nbformat.NotebookNode, name: str, repo: str):
    """The lesson's page: the executed lesson, its answer cells the learner's, links added."""
    notebook = f"{name}.ipynb"
    if len(solved.cells) != len(stubs.cells):
        raise SystemExit(
            f"{name}: the learner's copy has {len(stubs.cells)} cells, not {len(solved.cells)}"
        )
    nb = copy.deepcopy(solved)
    cells = []
    for i, (cell, stub) in enumerate(zip(solved.cells, stubs.cells)):
        if cell.cell_type != stub.cell_type:
            raise SystemExit(f"{name}: cell {i} is {cell.cell_type} in one copy only")
        if cell.source != stub.source:
            if cell.cell_type != "code":
                raise SystemExit(f"{name}: markdown cell {i} differs from the learner's")
            answerless = copy.deepcopy(stub)
            answerless.outputs, answerless.execution_count = [], None
            cells += [answerless, try_it_cell(repo, notebook)]
        else:
            if cell.cell_type == "markdown":
                cell = copy.deepcopy(cell)
                cell.source = _HEADING_LINK.sub(
                    _myst_anchor,
                    _RELATIVE_LINK.sub(rf"](https://github.com/{repo}/blob/HEAD/\1)", cell.source),
                )
            cells.append(cell)
        if i == 0:
            cells.append(launch_cell(repo, notebook))
    nb.cells = cells
    disable_kernel_controls(nb)
    drop_undisplayed_widgets(nb)  # after the stubs: an answer cell's widgets go too
    return nb


def index_page(sources: list[Path], repo: str) -> str:
    toc = "\n".join(source.stem for source in sources)
    return f"""# Self-attention, from Z to causal masking

An open, tested, interactive course on self-attention, the core of the Transformer. Twelve
lessons take you from the input $Z$ = token embeddings + positional encodings, through the
query, key and value projections, the scaled scores and the softmax, to the attention output
and causal masking, and beyond: cross- and multi-head attention, the cost of attention and
FlashAttention's online softmax, an attention layer you train, a real pretrained Transformer
run in NumPy, induction heads, and where position goes in today's models.

Every lesson is here to read, with its figures and its widgets: click a token in the attention
explorer, move a slider. To do the exercises, which check themselves and name your mistake,
run the lessons: [on Binder]({binder_url(repo, "00_start_here.ipynb")}), or on your own
machine (`make lab`; see the [README](https://github.com/{repo}#readme)).

Start with [lesson 00](00_start_here.ipynb).

```{{toctree}}
:maxdepth: 1
:caption: Lessons

{toc}
```

Text and figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
[MIT](https://github.com/{repo}/blob/HEAD/LICENSE). The browser code this site ships:
[its licences](_static/vendor/THIRD_PARTY.txt).
"""


def write_source(repo: str) -> None:
    if SOURCE.exists():
        shutil.rmtree(SOURCE)
    shutil.copytree(CONFIG, SOURCE)
    sources = build_lessons.lesson_sources()
    for source in sources:
        lesson = page(executed(source), learners(source), source.stem, repo)
        nbformat.write(lesson, SOURCE / f"{source.stem}.ipynb")
        print(f"page {source.stem}", flush=True)
    (SOURCE / "index.md").write_text(index_page(sources, repo))
    vendor = SOURCE / "_static" / "vendor"
    try:
        site_assets.install(vendor)
    except RuntimeError as error:
        raise SystemExit(f"error: {error}") from error
    (vendor / "THIRD_PARTY.txt").write_text(site_assets.notice())
    if not ANYWIDGET_MODULE.is_file():
        raise SystemExit(f"{ANYWIDGET_MODULE} is missing: run `make setup` (anywidget ships it)")
    shutil.copy(ANYWIDGET_MODULE, vendor / "widgets" / "anywidget.js")


def build() -> None:
    for folder in (OUTPUT, DOCTREES):
        if folder.exists():
            shutil.rmtree(folder)
    # -W: a warning (a broken link, a missing picture) fails the build; -n: nitpicky references.
    # -d: Sphinx's cache of parsed pages (.doctrees, about 10 MB) outside the published folder.
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-W",
        "--keep-going",
        "-q",
        "-d",
        str(DOCTREES),
    ]
    result = subprocess.run([*command, str(SOURCE), str(OUTPUT)], cwd=ROOT)
    if result.returncode:
        raise SystemExit(f"sphinx-build failed (exit {result.returncode}); see above")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src-only", action="store_true", help="write build/site-src/ only")
    args = parser.parse_args(argv)
    repo = repository()
    write_source(repo)
    if not args.src_only:
        build()
        print(f"website: {OUTPUT.relative_to(ROOT)}/ (launch links: {repo}). To read it here:")
        print(f"  python3 -m http.server --bind 127.0.0.1 -d {OUTPUT.relative_to(ROOT)} 8000")
        print("  then open http://127.0.0.1:8000/ (any static web server serves it as it is)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
