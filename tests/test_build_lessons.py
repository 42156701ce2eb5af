"""The lesson pipeline: stubs for the learner, and no stale generated file."""

import shutil
import uuid

import build_lessons
import nbformat
import pytest

SOURCES = build_lessons.lesson_sources()


def test_there_are_lessons():
    assert [p.name[:2] for p in SOURCES][:2] == ["00", "01"]


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_generated_files_are_fresh(source):
    assert build_lessons.stale_files(source) == [], "run `make notebooks` and commit the result"


def test_no_generated_file_without_a_source():
    assert build_lessons.orphans() == []


def test_solution_regions_become_stubs_with_their_indentation():
    text = (
        "def f(x):\n"
        "    y = 1\n"
        "    ### BEGIN SOLUTION\n"
        "    return x + y\n"
        "    ### END SOLUTION\n"
        "\n"
        "f\n"
    )
    stub = build_lessons.learner_text(text)
    assert "return x + y" not in stub and "BEGIN SOLUTION" not in stub
    assert '    raise NotImplementedError("replace this line with your answer")\n' in stub
    assert stub.startswith("def f(x):\n    y = 1\n    # YOUR CODE HERE\n") and stub.endswith(
        "\nf\n"
    )


def test_a_solution_region_outside_a_function_is_refused():
    with pytest.raises(ValueError, match="inside a function"):
        build_lessons.learner_text("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n")


def test_unbalanced_markers_are_refused():
    with pytest.raises(ValueError, match="unbalanced"):
        build_lessons.learner_text("def f():\n    ### BEGIN SOLUTION\n    return 1\n")


def test_an_edited_source_makes_its_copies_stale(tmp_path, monkeypatch):
    for name in ("solutions", "notebooks"):
        (tmp_path / name).mkdir()
    source = SOURCES[0]
    for path in (source, source.with_suffix(".ipynb")):
        shutil.copy(path, tmp_path / "solutions" / path.name)
    for suffix in (".py", ".ipynb"):
        shutil.copy(build_lessons.NOTEBOOKS / (source.stem + suffix), tmp_path / "notebooks")
    monkeypatch.setattr(build_lessons, "ROOT", tmp_path)
    monkeypatch.setattr(build_lessons, "SOLUTIONS", tmp_path / "solutions")
    monkeypatch.setattr(build_lessons, "NOTEBOOKS", tmp_path / "notebooks")
    copy = tmp_path / "solutions" / source.name
    assert build_lessons.stale_files(copy) == []
    body, footer, licence = copy.read_text().rpartition("# %% [markdown]\n# ---\n")
    copy.write_text(body + "# %%\nprint('a new cell')\n\n" + footer + licence)
    problems = build_lessons.stale_files(copy)
    assert len(problems) == 3 and all("differ" in p for p in problems)


def test_every_lesson_ends_with_its_licences_and_a_lesson_without_them_is_stale(
    tmp_path, monkeypatch
):
    for source in SOURCES:
        assert build_lessons.has_licence_footer(source.read_text()), source.name
    for built in (*SOURCES[0].parent.glob("*.ipynb"), *build_lessons.NOTEBOOKS.glob("*.ipynb")):
        last = nbformat.read(built, as_version=4).cells[-1]
        assert "CC BY 4.0" in last.source and "](../LICENSE)" in last.source, built.name
    text = SOURCES[0].read_text().rpartition("# %% [markdown]\n# ---\n")[0]
    assert not build_lessons.has_licence_footer(text)
    assert not build_lessons.has_licence_footer(text + "# %% [markdown]\n# [MIT](../LICENSE)\n")
    monkeypatch.setattr(build_lessons, "ROOT", tmp_path)
    monkeypatch.setattr(build_lessons, "NOTEBOOKS", tmp_path / "notebooks")
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "00_x.py").write_text(text)
    problems = build_lessons.stale_files(tmp_path / "solutions" / "00_x.py")
    assert any("does not end with the licence footer" in p for p in problems), problems


def test_a_change_in_the_helpers_makes_the_executed_copies_stale(tmp_path, monkeypatch):
    """The solutions' outputs and saved widgets come from src/helpers: a change there (here
    one more line in a copy of it) must ask for a rebuild, even with every lesson unchanged."""
    helpers_copy = tmp_path / "helpers"
    shutil.copytree(build_lessons.HELPERS, helpers_copy, ignore=shutil.ignore_patterns("*.pyc"))
    monkeypatch.setattr(build_lessons, "HELPERS", helpers_copy)
    source = SOURCES[0]
    assert build_lessons.stale_files(source) == []
    with (helpers_copy / "explorer.py").open("a") as f:
        f.write("# one more line\n")
    (problem,) = build_lessons.stale_files(source)
    assert "executed with other helpers" in problem and source.stem in problem


def _lesson(number: str):
    (source,) = [p for p in SOURCES if p.name[:2] == number]
    return source


def test_a_change_in_one_lessons_checks_makes_only_that_lesson_and_the_catalogue_stale(
    tmp_path, monkeypatch
):
    """Lesson 04's outputs cannot depend on lesson 05's checks; lesson 00 prints every
    exercise (checks.catalogue()), so it depends on all of them."""
    helpers_copy = tmp_path / "helpers"
    shutil.copytree(build_lessons.HELPERS, helpers_copy, ignore=shutil.ignore_patterns("*.pyc"))
    monkeypatch.setattr(build_lessons, "HELPERS", helpers_copy)
    with (helpers_copy / "checks" / "lesson05.py").open("a") as f:
        f.write("# one more line\n")
    stale = {p.name[:2] for p in SOURCES if build_lessons.stale_files(p)}
    assert stale == {"00", "05"}


def test_a_lesson_whose_checks_import_another_lessons_depends_on_both(tmp_path, monkeypatch):
    helpers_copy = tmp_path / "helpers"
    shutil.copytree(build_lessons.HELPERS, helpers_copy, ignore=shutil.ignore_patterns("*.pyc"))
    monkeypatch.setattr(build_lessons, "HELPERS", helpers_copy)
    with (helpers_copy / "checks" / "lesson06.py").open("a") as f:
        f.write("from .answers import lesson04 as also_04  # noqa\n")
    text = _lesson("06").read_text()
    assert build_lessons.lessons_checked(text, "06") == {"04", "06"}


def test_an_edited_answer_makes_the_answers_module_stale(tmp_path, monkeypatch):
    helpers_copy = tmp_path / "helpers"
    shutil.copytree(build_lessons.HELPERS, helpers_copy, ignore=shutil.ignore_patterns("*.pyc"))
    monkeypatch.setattr(build_lessons, "HELPERS", helpers_copy)
    source = _lesson("04")
    edited = source.read_text().replace(
        "  # keepdims: divide each row by its own sum\n", "  # an edited answer line\n", 1
    )
    assert edited != source.read_text()
    answers = build_lessons.answers_text(edited, "04", source.name)
    assert "# an edited answer line" in answers
    assert "### BEGIN SOLUTION" not in answers and "### END SOLUTION" not in answers
    monkeypatch.setattr(build_lessons, "ROOT", tmp_path)
    monkeypatch.setattr(build_lessons, "NOTEBOOKS", tmp_path / "notebooks")
    (tmp_path / "solutions").mkdir()
    copy = tmp_path / "solutions" / source.name
    copy.write_text(edited)
    problems = build_lessons.stale_files(copy)
    assert any("helpers.checks.answers.lesson04 differs" in p for p in problems), problems
    build_lessons.write_answers(edited, source.name)
    assert (helpers_copy / "checks" / "answers" / "lesson04.py").read_text() == answers


def test_an_answer_must_be_a_top_level_function_and_name_what_it_uses():
    with pytest.raises(ValueError, match="outside a top-level function"):
        build_lessons.answers_text(
            "class A:\n    def f(self):\n        ### BEGIN SOLUTION\n        return 1\n"
            "        ### END SOLUTION\n",
            "99",
        )
    with pytest.raises(ValueError, match="uses 'scipy'"):
        build_lessons.answers_text(
            "def f(x):\n    ### BEGIN SOLUTION\n    return scipy.special.softmax(x)\n"
            "    ### END SOLUTION\n",
            "99",
        )


def test_a_prediction_line_becomes_none_in_the_learners_copy():
    text = 'x = 1\nguess = "fall"  ### ANSWER\nchecks.t.check(guess)\n'
    stub = build_lessons.learner_text(text)
    assert '"fall"' not in stub and "### ANSWER" not in stub
    assert "\nguess = None  # YOUR GUESS HERE" in stub and stub.endswith("checks.t.check(guess)\n")


def test_an_answer_marker_not_on_an_assignment_is_refused():
    with pytest.raises(ValueError, match="one-line assignment"):
        build_lessons.learner_text("print('fall')  ### ANSWER\n")


def _saved_widgets(ids: dict[str, str]) -> nbformat.NotebookNode:
    """A notebook showing HBox([Button "a", Button "b"]) and a jslink between the buttons,
    saved with the model ids ``ids`` (name -> id), its state stored in the order given."""

    def model(name, **state):
        return {"model_name": name, "state": {"_model_name": name, **state}}

    ref = {name: f"IPY_MODEL_{model_id}" for name, model_id in ids.items()}
    models = {
        "box": model("HBoxModel", children=[ref["a"], ref["b"]], layout=ref["layout"]),
        "a": model("ButtonModel", description="a", layout=ref["layout"]),
        "b": model("ButtonModel", description="b", layout=ref["layout"]),
        "layout": model("LayoutModel"),
        "link": model("LinkModel", source=[ref["a"], "value"], target=[ref["b"], "value"]),
    }
    nb = nbformat.v4.new_notebook()
    view = {build_lessons.WIDGET_VIEW: {"model_id": ids["box"], "version_major": 2}}
    nb.cells = [nbformat.v4.new_code_cell("box", id="box")]
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data=view)]
    state = {ids[name]: models[name] for name in ids}
    nb.metadata["widgets"] = {build_lessons.WIDGET_STATE: {"state": state, "version_major": 2}}
    return nb


def test_saved_widgets_get_the_same_ids_whatever_ids_the_kernel_drew():
    names = ["link", "layout", "b", "box", "a"]
    first = _saved_widgets({name: uuid.uuid4().hex for name in names})
    second = _saved_widgets({name: uuid.uuid4().hex for name in reversed(names)})
    renamed = [build_lessons.stable_widget_ids(nb, "04") for nb in (first, second)]
    assert nbformat.writes(renamed[0]) == nbformat.writes(renamed[1])

    # The references still lead to the same widgets: the box shows button a, then button b.
    state = renamed[0].metadata["widgets"][build_lessons.WIDGET_STATE]["state"]
    box_id = renamed[0].cells[0].outputs[0].data[build_lessons.WIDGET_VIEW]["model_id"]
    children = [ref.removeprefix("IPY_MODEL_") for ref in state[box_id]["state"]["children"]]
    assert [state[c]["state"]["description"] for c in children] == ["a", "b"]
    (link,) = [m for m in state.values() if m["model_name"] == "LinkModel"]
    assert link["state"]["source"][0] == f"IPY_MODEL_{children[0]}"


def test_the_executed_lessons_keep_no_held_pictures():
    """A slider's pictures (LiveFigure.film) are for the live page: the build drops them from
    the saved widget state, and keeps the rest of the slider and the picture shown."""
    for source in SOURCES:
        nb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
        state = nb.metadata.get("widgets", {}).get(build_lessons.WIDGET_STATE, {})
        for model in state.get("state", {}).values():
            if "pictures" in model["state"]:
                assert model["state"]["pictures"] == [] == model["state"]["alts"], source.name
                assert not any(b["path"][0] == "pictures" for b in model.get("buffers", []))
                assert model["state"]["labels"], source.name


def test_held_pictures_are_dropped_and_other_buffers_kept():
    nb = _saved_widgets({name: uuid.uuid4().hex for name in ["box", "a", "b", "layout", "link"]})
    state = nb.metadata["widgets"][build_lessons.WIDGET_STATE]["state"]
    state["slider"] = {
        "model_name": "AnyModel",
        "state": {"pictures": [None, None], "alts": ["one", "two"], "labels": ["1", "2"]},
        "buffers": [
            {"path": ["pictures", 0], "data": "iVBO", "encoding": "base64"},
            {"path": ["pictures", 1], "data": "iVBO", "encoding": "base64"},
            {"path": ["other"], "data": "AAAA", "encoding": "base64"},
        ],
    }
    slider = build_lessons.without_held_pictures(nb).metadata["widgets"][
        build_lessons.WIDGET_STATE
    ]["state"]["slider"]
    assert slider["state"] == {"pictures": [], "alts": [], "labels": ["1", "2"]}
    assert slider["buffers"] == [{"path": ["other"], "data": "AAAA", "encoding": "base64"}]


def test_an_answer_keeps_the_lessons_import_of_a_builtins_name_and_its_inner_scopes_apart():
    text = (
        "import numpy as np\nfrom numpy import max\n\n\ndef f(x):\n    g = lambda scale: scale\n"
        "    ### BEGIN SOLUTION\n    return max(x) * len(x) + g(1)\n    ### END SOLUTION\n\n\n"
        "# checks.h.check(f): a comment asks nothing\nchecks.f.check(f)\n"
    )
    answers = build_lessons.answers_text(text, "99")
    assert "from numpy import max" in answers and "import numpy as np" not in answers
    assert 'ASKED = ("f",)' in answers
    outer = text.replace("import numpy as np\n", "scale = 2\n").replace("g(1)", "scale")
    with pytest.raises(ValueError, match="uses 'scale'"):
        build_lessons.answers_text(outer, "99")  # a lesson's variable, not an import


def test_a_check_modules_imports_of_other_lessons_are_found_in_every_form():
    text = (
        "from .answers import lesson03, lesson04\nfrom .answers.lesson05 import x\n"
        "def f():\n    from . import lesson06\nimport helpers.checks.lesson07\n"
    )
    assert build_lessons._lessons_imported(text) == {"03", "04", "05", "06", "07"}


def test_a_change_in_a_browser_module_makes_the_executed_copies_stale(tmp_path, monkeypatch):
    helpers_copy = tmp_path / "helpers"
    shutil.copytree(build_lessons.HELPERS, helpers_copy, ignore=shutil.ignore_patterns("*.pyc"))
    monkeypatch.setattr(build_lessons, "HELPERS", helpers_copy)
    source = _lesson("04")
    assert build_lessons.stale_files(source) == []
    with (helpers_copy / "front" / "token_row.js").open("a") as f:
        f.write("// one more line\n")
    (problem,) = build_lessons.stale_files(source)
    assert "executed with other helpers" in problem
