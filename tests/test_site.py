"""The website's pages (tools/build_site.py), without a browser: answers left out, launch links,
the controls that need a kernel disabled; and the pinned browser code's hash check.
The pages in Chromium: tests/browser/test_site_in_browser.py."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
import build_lessons
import build_site
import site_assets

SOURCES = build_lessons.lesson_sources()


def site_page(source: Path) -> nbformat.NotebookNode:
    """The page, from the repository's executed copy (the site executes afresh; same cells)."""
    solved = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    return build_site.page(solved, build_site.learners(source), source.stem, "owner/course")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_a_page_has_no_answer_and_says_how_to_try_it(source):
    text = source.read_text()
    page = site_page(source)
    code = "\n".join(c.source for c in page.cells if c.cell_type == "code")
    shown = nbformat.writes(page)
    if not (build_lessons._REGION.search(text) or build_lessons._ANSWER_LINE.search(text)):
        # lesson 00: no exercise, so no try-it note either
        assert not any(c.metadata.get("site") == "try-it" for c in page.cells)
        assert page.cells[1].metadata.get("site") == "launch"
        return
    # An answer's lines the learner's copy does not have anywhere are not on the page either.
    hidden = build_lessons.answer_lines(text, source.name)
    assert hidden, f"{source.stem}: every answer line is also in the learner's copy?"
    for line in hidden:
        assert line not in code, f"{source.stem}: an answer's line is on the page: {line}"
    assert "### BEGIN SOLUTION" not in shown and "### ANSWER" not in shown
    stubs = [
        i
        for i, c in enumerate(page.cells)
        if c.cell_type == "code"
        and ("NotImplementedError(" in c.source or "YOUR GUESS" in c.source)
    ]
    assert stubs, f"{source.stem}: no exercise cell on the page"
    for i in stubs:
        assert page.cells[i].outputs == [], f"{source.stem}: an exercise cell kept its outputs"
        follow = page.cells[i + 1]
        assert follow.metadata.get("site") == "try-it", f"{source.stem}: cell {i} has no try-it"
        assert "mybinder.org/v2/gh/owner/course/HEAD" in follow.source
        assert f"notebooks/{source.stem}.ipynb" in follow.source
    launch = page.cells[1]
    assert launch.metadata.get("site") == "launch" and "make lab" in launch.source
    assert "](../" not in shown, f"{source.stem}: a link into the repository stayed relative"


def test_the_controls_that_need_a_kernel_are_disabled_and_say_so():
    source = next(p for p in SOURCES if p.name.startswith("05"))
    page = site_page(source)
    state = page.metadata["widgets"][build_lessons.WIDGET_STATE]["state"]
    by_class = {}
    for model in state.values():
        for name in model["state"].get("_dom_classes", []):
            by_class.setdefault(name, []).append(model["state"])
    # The sentence box needs the kernel's tokenizer and model; the explorer's other controls
    # are drawn in the page from the states it holds (its preview's `offline`).
    assert by_class["explorer-text"] and all(s["disabled"] for s in by_class["explorer-text"])
    assert all("needs the lesson running" in s["tooltip"] for s in by_class["explorer-text"])
    for name in ("explorer-causal", "explorer-head", "explorer-temperature"):
        assert by_class[name] and not any(s["disabled"] for s in by_class[name]), name
    # A note in text right under the explorer's cell names the disabled control.
    shown = [i for i, c in enumerate(page.cells) if "AttentionExplorer(" in c.source]
    assert len(shown) == 1, shown
    note = page.cells[shown[0] + 1]
    assert note.metadata.get("site") == "needs-kernel", note
    assert note.source.startswith("On this page, *sentence* needs Python")
    assert "mybinder.org/v2/gh/owner/course/HEAD" in note.source
    assert sum(c.metadata.get("site") == "needs-kernel" for c in page.cells) == 1


def test_a_slider_holding_its_film_stays_enabled():
    film = {
        "state": {"disabled": False, "pictures": [], "_dom_classes": []},
        "buffers": [{"path": ["pictures", 0], "data": "", "encoding": "base64"}],
    }
    other = {"state": {"disabled": False, "_dom_classes": [], "description": "heads h"}}
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {build_lessons.WIDGET_STATE: {"state": {"a": film, "b": other}}}
    assert build_site.disable_kernel_controls(nb) == {"b": "heads h"}
    saved = nb.metadata["widgets"][build_lessons.WIDGET_STATE]["state"]  # nbformat's copies
    assert saved["a"]["state"]["disabled"] is False and saved["b"]["state"]["disabled"] is True
    assert (
        saved["b"]["state"]["tooltip"] == "heads h: needs the lesson running (Binder, or make lab)"
    )


def test_a_tarball_with_another_hash_is_refused():
    package = site_assets.PACKAGES[0]
    with pytest.raises(RuntimeError, match="not the pinned"):
        site_assets.check_integrity(b"not the package", package)


def test_every_pinned_package_names_its_licence_and_files():
    for package in site_assets.PACKAGES:
        assert package.integrity.startswith("sha512-") and package.licence and package.files
        assert package.tarball_url.startswith(site_assets.REGISTRY + "/")


def test_the_repository_named_must_be_owner_slash_name(monkeypatch):
    monkeypatch.setenv("COURSE_REPOSITORY", "owner/course")
    assert build_site.repository() == "owner/course"
    monkeypatch.setenv("COURSE_REPOSITORY", "https://evil.example/x")
    with pytest.raises(SystemExit, match="owner/name"):
        build_site.repository()


def _widget(refs=(), **state):
    return {"model_name": "X", "state": {**state, "children": [f"IPY_MODEL_{r}" for r in refs]}}


def test_widgets_the_page_never_shows_are_dropped_and_links_kept():
    a, b, c, link, t1, t2 = (f"{i:032x}" for i in range(6))
    nb = nbformat.v4.new_notebook()
    shown = {"output_type": "display_data", "metadata": {},
             "data": {build_lessons.WIDGET_VIEW: {"model_id": a, "version_major": 2}}}  # fmt: skip
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[nbformat.from_dict(shown)])]
    state = {a: _widget([b]), b: _widget(), c: _widget(), link: _widget([a, c]),
             t1: _widget([t2]), t2: _widget()}  # fmt: skip
    nb.metadata["widgets"] = {build_lessons.WIDGET_STATE: {"state": state}}
    assert build_site.drop_undisplayed_widgets(nb) == 2
    kept = nb.metadata["widgets"][build_lessons.WIDGET_STATE]["state"]
    assert set(kept) == {a, b, c, link}  # the twin (t1 -> t2) is gone; the link and its ends stay


def test_lesson_04s_page_holds_the_explorer_it_shows_only():
    """Lesson 04 makes a second explorer (`twin`) to compare against and never shows it."""
    source = next(p for p in SOURCES if p.name.startswith("04"))
    solved = nbformat.read(source.with_suffix(".ipynb"), as_version=4)

    def explorers(nb):
        saved = nb.metadata["widgets"][build_lessons.WIDGET_STATE]["state"].values()
        return sum("attention-explorer" in m["state"].get("_dom_classes", []) for m in saved)

    assert explorers(solved) == 2
    assert explorers(site_page(source)) == 1


def test_the_page_shows_the_tested_runs_outputs_and_its_own_widgets():
    """A fresh run prints its machine's timings; the page shows the stored (tested) run's,
    except where a cell shows a widget: that state is the fresh run's."""
    view = {build_lessons.WIDGET_VIEW: {"model_id": "0" * 32, "version_major": 2}}

    def notebook(printed: str, widget_id: str) -> nbformat.NotebookNode:
        nb = nbformat.v4.new_notebook()
        timing = nbformat.v4.new_output("stream", name="stdout", text=printed)
        shown = nbformat.v4.new_output(
            "display_data", data={build_lessons.WIDGET_VIEW: {**view[build_lessons.WIDGET_VIEW],
                                                              "model_id": widget_id}})  # fmt: skip
        nb.cells = [
            nbformat.v4.new_markdown_cell("# title"),
            nbformat.v4.new_code_cell("print(slope)", outputs=[timing]),
            nbformat.v4.new_code_cell("ex.show()", outputs=[shown]),
        ]
        return nb

    fresh, stored = notebook("slope 2.45", "a" * 32), notebook("slope 2.06", "b" * 32)
    page = build_site.with_tested_outputs(fresh, stored)
    assert page.cells[1].outputs[0].text == "slope 2.06"
    assert page.cells[2].outputs[0].data[build_lessons.WIDGET_VIEW]["model_id"] == "a" * 32
    stored.cells[1].source = "print(other)"
    with pytest.raises(SystemExit, match="stale"):
        build_site.with_tested_outputs(fresh, stored)
