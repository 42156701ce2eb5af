"""Build the course's website: every lesson readable in a browser, its widgets live, no kernel.

    python tools/build_site.py              # build/site/ (serve it: see the end of its output)
    python tools/build_site.py --src-only   # only the Sphinx source, build/site-src/

Each page is a lesson (``solutions/NN_topic.py``) executed here, as tools/build_lessons.py
executes it, but keeping what the repository's copy leaves out: the pictures each slider holds
for the browser (its film), so that a slider moves its figure in the page with no kernel (about
a minute for the twelve). Its answers are left out: a code cell whose source differs from the
learner's copy is an exercise's answer or a prediction, and the page shows the learner's cell
instead, without outputs, followed by how to try it (Binder, ``make lab``). Every page also
gets its launch links after its first cell (the title and what the lesson teaches). The other
cells' outputs are the repository's executed copy's, which the tests check, unless the cell
shows a widget (:func:`with_tested_outputs`).

The widgets are drawn in the page from their saved state by the Jupyter widgets' HTML manager;
what runs in the browser (a token click in the explorer, a slider's film) works there as in
JupyterLab, and so do the explorer's head, layer, mask and temperature (it saved every state:
helpers.explorer.preview.STATIC_PAGE); what needs Python is disabled, and a note under it says so.
Every script, style and font the pages load is a file of the site (tools/site_assets.py): it
can be served from anywhere, offline. The Sphinx configuration is ``site/conf.py``.

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
import contextlib
import copy
import functools
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import nbformat
from myst_parser.mdit_to_docutils.base import default_slugify

from helpers.explorer.preview import STATIC_PAGE

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
        "This page shows the lesson run with the course's own answers, but not their code: at "
        "each exercise you see the cell you would fill in, and what the cells after it print "
        "comes from the course's answer. Its widgets work here; what needs Python (your own "
        "sentence in the explorer, a new head count) needs the lesson running."
    )
    return nbformat.v4.new_markdown_cell(text, metadata={"site": "launch"})


def try_it_cell(repo: str, notebook: str) -> nbformat.NotebookNode:
    text = (
        "```{tip}\n"
        "Your answer goes in the cell above, and the course checks it when you run it: "
        f"[open this lesson on Binder]({binder_url(repo, notebook)}) or run `make lab`. "
        "This page leaves the answer's code out; what the cells below print comes from the "
        "course's own answer (a prediction: make yours before you read on).\n"
        "```"
    )
    return nbformat.v4.new_markdown_cell(text, metadata={"site": "try-it"})


def executed(source: Path) -> nbformat.NotebookNode:
    """The lesson run in a fresh kernel, its sliders' films kept (build_lessons drops them),
    each explorer holding every state it can show (helpers.explorer.preview.STATIC_PAGE): the page
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
    nb = build_lessons.stable_widget_ids(nb, lesson)
    return with_tested_outputs(nb, nbformat.read(source.with_suffix(".ipynb"), as_version=4))


def with_tested_outputs(fresh: nbformat.NotebookNode, stored: nbformat.NotebookNode):
    """``fresh`` with each code cell's outputs taken from ``stored`` (the repository's executed
    lesson, which the tests check: nbval, and the prose against its numbers) where neither
    shows a widget. A run on the machine that builds the site (a CI runner) prints its own
    timings; the page shows the tested run's, which its prose describes. A widget cell keeps
    the fresh run's (its saved state, films and explorer states are this run's)."""
    if len(fresh.cells) != len(stored.cells):
        raise SystemExit("the executed lesson is stale (other cells): run `make notebooks`")
    for new, old in zip(fresh.cells, stored.cells):
        if new.cell_type != "code":
            continue
        if new.source != old.source:
            raise SystemExit("the executed lesson is stale (another cell): run `make notebooks`")
        if not _shown_models(new) and not _shown_models(old):
            new.outputs = copy.deepcopy(old.outputs)
    return fresh


def learners(source: Path) -> nbformat.NotebookNode:
    """The learner's notebook of the lesson, as tools/build_lessons.py makes it."""
    text = build_lessons.learner_text(source.read_text(), source.name)
    return build_lessons.as_notebook(text, source.name[:2])


# Controls that work in the page: a slider holding its film, and the explorer's head, layer,
# causal toggle and temperature (it holds every state and draws it itself,
# helpers/front/map_preview.js). Any other control (the explorer's sentence box, a
# lesson's own toggles) only tells the kernel, which the page does not have: it is disabled.
IN_PAGE_CLASSES = {"explorer-head", "explorer-layer", "explorer-causal", "explorer-temperature"}
NEEDS_KERNEL = "needs the lesson running (Binder, or make lab)"


def holds_film(model: dict) -> bool:
    state = model.get("state", {})
    return bool(state.get("pictures")) or any(
        b["path"][:1] == ["pictures"] for b in model.get("buffers", [])
    )


def disable_kernel_controls(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Disable, in the saved widget state, each control the page cannot run; return their
    names by model id."""
    disabled = {}
    for model_id, model in _saved_widgets(nb).items():
        state = model.get("state", {})
        if "disabled" not in state or IN_PAGE_CLASSES & set(state.get("_dom_classes", [])):
            continue
        if holds_film(model):
            continue
        state["disabled"] = True
        name = state.get("description") or model["model_name"]
        state["tooltip"] = f"{state.get('tooltip') or name}: {NEEDS_KERNEL}"
        disabled[model_id] = name
    return disabled


def _saved_widgets(nb: nbformat.NotebookNode) -> dict:
    return nb.metadata.get("widgets", {}).get(build_lessons.WIDGET_STATE, {}).get("state", {})


def _references(state: dict) -> dict[str, set[str]]:
    """Each saved widget's references to others (``IPY_MODEL_<id>``), by its model id."""
    return {m: set(build_lessons._MODEL_REF.findall(json.dumps(s))) for m, s in state.items()}


def _referred(refs: dict[str, set[str]], roots) -> set[str]:
    """The models ``roots`` and all they refer to, transitively (``refs``: _references)."""
    found: set[str] = set()
    todo = list(roots)
    while todo:
        m = todo.pop()
        if m in refs and m not in found:
            found.add(m)
            todo.extend(refs[m])
    return found


def _shown_models(cell: nbformat.NotebookNode) -> list[str]:
    """The model ids a code cell's outputs display."""
    return [
        output["data"][build_lessons.WIDGET_VIEW]["model_id"]
        for output in cell.get("outputs", [])
        if build_lessons.WIDGET_VIEW in output.get("data", {})
    ]


def disabled_note(names: list[str], repo: str, notebook: str) -> nbformat.NotebookNode:
    """A note under a widget whose controls are disabled in the page: which, and where they work
    (a tooltip alone reaches no keyboard, touch or screen reader, and the widgets' HTML manager
    shows none on a text box or a dropdown with a description)."""
    marked = [f"*{name}*" for name in names]
    one = len(marked) == 1
    listed = marked[0] if one else ", ".join(marked[:-1]) + " and " + marked[-1]
    text = (
        f"On this page, {listed} {'needs' if one else 'need'} Python, so "
        f"{'it is' if one else 'they are'} shown greyed out: [run the lesson on Binder]"
        f"({binder_url(repo, notebook)}), or with `make lab`, to use {'it' if one else 'them'}."
    )
    return nbformat.v4.new_markdown_cell(text, metadata={"site": "needs-kernel"})


def add_disabled_notes(nb, disabled: dict[str, str], repo: str, notebook: str) -> None:
    """After each code cell that shows a disabled control, a note saying which (disabled_note)."""
    refs = _references(_saved_widgets(nb))
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type != "code":
            continue
        shown = _referred(refs, _shown_models(cell))
        names = list(dict.fromkeys(disabled[m] for m in disabled if m in shown))
        if names:
            cells.append(disabled_note(names, repo, notebook))
    nb.cells = cells


def drop_undisplayed_widgets(nb: nbformat.NotebookNode) -> int:
    """Drop from the saved widget state the widgets the page never shows (lesson 04's `twin`
    explorer, made to compare against, holds its every state too); return how many.

    Kept: what an output displays and all it refers to (``IPY_MODEL_<id>``), and any other
    widget that refers to one of those (a ``jslink`` between two shown widgets), with all it
    refers to in turn."""
    state = _saved_widgets(nb)
    if not state:
        return 0
    refs = _references(state)
    keep = _referred(refs, [m for cell in nb.cells for m in _shown_models(cell)])
    while linked := [m for m in state if m not in keep and refs[m] & keep]:
        keep |= _referred(refs, linked)
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
    drop_undisplayed_widgets(nb)  # after the stubs: an answer cell's widgets go too
    add_disabled_notes(nb, disable_kernel_controls(nb), repo, notebook)
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


def build(repo: str) -> None:
    for folder in (OUTPUT, DOCTREES):
        if folder.exists():
            shutil.rmtree(folder)
    # -W: a warning (a broken link, a missing picture) fails the build, all of them reported
    # (--keep-going). -d: Sphinx's cache of parsed pages (.doctrees, about 10 MB), outside the
    # published folder.
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
    # site/conf.py's header button names the same repository as the launch links.
    env = {**os.environ, "COURSE_REPOSITORY": repo}
    result = subprocess.run([*command, str(SOURCE), str(OUTPUT)], cwd=ROOT, env=env)
    if result.returncode:
        raise SystemExit(f"sphinx-build failed (exit {result.returncode}); see above")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """Serve ``folder`` over HTTP on 127.0.0.1 at a free port, in a thread; yields its URL
    (the site's tests and benchmark read the pages there, as a browser would)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src-only", action="store_true", help="write build/site-src/ only")
    args = parser.parse_args(argv)
    repo = repository()
    if repo == PLACEHOLDER:
        print(
            f"warning: no GitHub repository found (no COURSE_REPOSITORY, no github.com origin): "
            f"the launch links and the header's GitHub button point at {PLACEHOLDER}",
            file=sys.stderr,
        )
    write_source(repo)
    if not args.src_only:
        build(repo)
        print(f"website: {OUTPUT.relative_to(ROOT)}/ (launch links: {repo}). To read it here:")
        print(f"  python3 -m http.server --bind 127.0.0.1 -d {OUTPUT.relative_to(ROOT)} 8000")
        print("  then open http://127.0.0.1:8000/ (any static web server serves it as it is)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
