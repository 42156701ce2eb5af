"""Every lesson, both copies, run in JupyterLab in headless Chromium, as a learner would.

For each ``notebooks/*.ipynb`` and ``solutions/*.ipynb``: open it, wait for the kernel, Run
All, and check that every cell ran, every widget rendered (none left "Loading widget...", no
"Error displaying widget"), no output holds a traceback, the browser logged no error and
JupyterLab saved nothing. A screenshot of each lands in ``build/screenshots/``.

After Run All, an axe-core audit (axe-playwright-python, which ships axe-core's script: no
network) of the notebook's own content, its rendered markdown and its outputs (JupyterLab's own
UI left out), against WCAG 2.1 A and AA and axe's best practices: no violation allowed. Each
notebook's results land in ``build/axe/``.

Then, on the same page (no second Run All), lessons 04 and 09 get more: the keyboard walks,
Chromium's accessibility tree and 200 % zoom (``explorer_walks.py``), and their clicks timed
against a do-nothing widget's round trip (``clicks.py``).

The notebooks open one after another in one running JupyterLab per tab, as a learner opens
them from the file browser; two tabs take turns, so that the next notebook's kernel start and
Run All overlap this one's checks.

Run: ``make test-browser`` (or ``pytest -q -s -m browser tests/browser``).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import clicks
import explorer_walks
import pytest
import slider_walks
from axe_playwright_python.sync_playwright import Axe
from explorer_walks import PANEL, ROOT, SCREENSHOTS

pytestmark = pytest.mark.browser


LESSONS = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("solutions/*.ipynb"))
EXPLORER_LESSON = "solutions/04_softmax_and_attention.ipynb"
REAL_LESSON = "solutions/09_real_model.ipynb"  # its grid and the explorer it opens
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
IDLE = "Python 3 (ipykernel) | Idle"
OPEN_TIMEOUT = 60_000  # ms: JupyterLab's first load + kernel start
RUN_TIMEOUT = 120_000  # ms: Run All (lessons take <= 5 s, lesson 08 <= 20 s, on 2 cores)
# Console errors that are not about the course, each with the reason it is ignored (regular
# expressions). None was needed with JupyterLab 4.6.6, ipywidgets 8.1.9 and Chromium 156:
# anything the browser logs as an error fails the test.
CONSOLE_NOISE: list[str] = []


# The audit: axe-core's rules for WCAG 2.0/2.1 level A and AA, and its best practices, over the
# course's content only: rendered markdown cells and cell outputs (figures, widgets, check
# results). JupyterLab's own UI (toolbars, prompts, editors) is not the course's to fix.
from support.accessibility import AXE_TAGS  # noqa: E402

AXE_CONTEXT = {
    "include": [[f"{PANEL} .jp-MarkdownOutput"], [f"{PANEL} .jp-OutputArea-output"]],
}
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": AXE_TAGS}, "resultTypes": ["violations"]}
AXE_REPORTS = ROOT / "build" / "axe"
# Rules that fire inside a third-party control the course cannot change, each with the reason.
# None is needed: the controls axe failed (ipywidgets' slider handles, which have no accessible
# name) were replaced by named ones (number boxes, toggle buttons).
AXE_THIRD_PARTY: dict[str, str] = {}


AXE_SCRIPT = Axe().axe_script  # axe-core's own script, as the package ships it


def axe_audit(lab, path: str) -> list[dict]:
    """Run axe-core over the open notebook's markdown and outputs; returns its violations
    (each: rule id, impact, help, nodes) and writes them to ``build/axe/<notebook>.json``.
    axe-core's script is added to the tab once (the tab keeps its page from one notebook to
    the next); ``axe.run`` reads the page afresh each time."""
    if not lab.page.evaluate("() => typeof window.axe !== 'undefined'"):
        lab.page.evaluate(AXE_SCRIPT)
    results = lab.page.evaluate("([c, o]) => axe.run(c, o)", [AXE_CONTEXT, AXE_OPTIONS])
    violations = [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [{"target": n["target"], "html": n["html"][:300]} for n in v["nodes"]],
        }
        for v in results["violations"]
    ]
    AXE_REPORTS.mkdir(parents=True, exist_ok=True)
    report = {
        "notebook": path,
        "axe": results["testEngine"]["version"],
        "tags": AXE_TAGS,
        "violations": violations,
    }
    name = path.replace("/", "__").removesuffix(".ipynb") + ".json"
    (AXE_REPORTS / name).write_text(json.dumps(report, indent=2) + "\n")
    return [v for v in violations if v["id"] not in AXE_THIRD_PARTY]


# The headings of the notebook's content in page order (markdown cells and outputs), and the
# page's language: JupyterLab sets <html lang> from its display language ("en" here); a
# notebook has no field of its own for the language of its prose.
OUTLINE = """
(panelSelector) => ({
  headings: [...document.querySelectorAll(
      `${panelSelector} .jp-MarkdownOutput :is(h1, h2, h3, h4, h5, h6), `
      + `${panelSelector} .jp-OutputArea-output :is(h1, h2, h3, h4, h5, h6)`)]
      .map((h) => [Number(h.tagName[1]), h.textContent.trim().slice(0, 80)]),
  lang: document.documentElement.lang,
})
"""


def outline_problems(outline: dict) -> list[str]:
    """One H1, first; no heading more than one level below the one before it; a page language."""
    levels = [level for level, _ in outline["headings"]]
    problems = []
    if levels.count(1) != 1 or not levels or levels[0] != 1:
        problems.append(f"{levels.count(1)} H1 heading(s), first heading level {levels[:1]}")
    for (before, _), (level, text) in zip(outline["headings"], outline["headings"][1:]):
        if level > before + 1:
            problems.append(f"H{level} {text!r} follows an H{before}: a level skipped")
    if outline["lang"] != "en":
        problems.append(f"<html lang={outline['lang']!r}>, expected 'en'")
    return problems


def describe_violations(violations: list[dict]) -> str:
    return "\n".join(
        f"  {v['id']} ({v['impact']}, {len(v['nodes'])} node(s)): {v['help']}\n"
        + "\n".join(f"      {n['target']}: {n['html'][:160]}" for n in v["nodes"][:5])
        for v in violations
    )


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def code_cells(path: Path) -> list[str]:
    """Sources of the code cells of a notebook on disk."""
    nb = json.loads(path.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def runnable_cells(path: Path) -> int:
    """How many code cells of the notebook on disk have code and show it: Run All gives each
    a number in its prompt. (A cell whose input is collapsed shows no prompt: counting it, the
    wait for Run All to finish would run into its 10 s timeout.)"""
    nb = json.loads(path.read_text())
    return sum(
        1
        for c in nb["cells"]
        if c["cell_type"] == "code"
        and "".join(c["source"]).strip()
        and not c.get("metadata", {}).get("jupyter", {}).get("source_hidden")
    )


def stored_widget_views(path: Path) -> int | None:
    """How many widget outputs the executed solution of this lesson stores (None: unknown)."""
    solution = ROOT / "solutions" / path.name
    if not solution.exists():
        return None
    nb = json.loads(solution.read_text())
    return sum(
        WIDGET_MIME in output.get("data", {})
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )


# --------------------------------------------------------------------------- page actions

WATCH_QUEUED = """
(panelSelector) => {
  // Set window.__runQueued once any code cell shows [*]: Run All has really started.
  window.__runQueued = false;
  window.__runKey = null;
  const panel = document.querySelector(panelSelector);
  const queued = () => [...panel.querySelectorAll('.jp-InputPrompt')]
      .some((p) => p.textContent.includes('*'));
  const observer = new MutationObserver(() => {
    if (queued()) { window.__runQueued = true; observer.disconnect(); }
  });
  observer.observe(panel, {subtree: true, childList: true, characterData: true});
}
"""

RUN_FINISHED = """
([path]) => {
  // Done when the notebook's model says Run All is over: every non-empty code cell has run
  // (an execution count, none queued or running; Run All queues them all at once) or one
  // failed, and the kernel is idle; and every cell is on the page (the checks after this read
  // the page; JupyterLab attaches a long notebook's cells a few at a time when the page is
  // idle). The model, not the prompts on the page: counting prompts meant scrolling to the
  // bottom to attach the cells, and every scroll made each cell's editor measure itself again
  // (a probe of lessons 01, 03 and 06, two runs each: the tab's CPU during Run All 24.7 s in
  // all, against 27.9 s with the scrolling).
  if (!window.__runQueued) return false;
  const panel = [...window.jupyterapp.shell.widgets('main')]
      .find((w) => w.context && w.context.path === path);
  if (!panel) return false;
  const code = [...panel.content.model.cells]
      .filter((c) => c.type === 'code' && c.sharedModel.getSource().trim());
  const ran = code.filter((c) => c.executionCount !== null).length;
  const queued = code.some((c) => c.executionState === 'running');
  const failed = (c) => Array.from({length: c.outputs.length}, (_, i) => c.outputs.get(i))
      .some((o) => o.type === 'error');
  const idle = panel.sessionContext.session?.kernel?.status === 'idle';
  const attached = panel.content.widgets.filter((w) => w.isAttached).length;
  // (Outputs are looked through only once the kernel stopped short of the last cell.)
  const over = idle && !queued && (ran === code.length || code.some(failed));
  if (over && attached === panel.content.widgets.length) return true;
  // Idle, nothing queued, nothing changing for 10 s: stop waiting (the assertions report it).
  const key = [ran, attached, idle, queued].join('|');
  if (window.__runKey !== key) { window.__runKey = key; window.__runSince = performance.now(); }
  return idle && !queued && performance.now() - window.__runSince > 10000;
}
"""

NO_LOADING_WIDGET = """
(panelSelector) => ![...document.querySelectorAll(panelSelector + ' .jp-OutputArea-output')]
    .some((o) => o.innerText.includes('Loading widget'))
"""

NOTEBOOK_STATE = """
(panelSelector) => {
  const panel = document.querySelector(panelSelector);
  const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')];
  // An ipywidgets output: the renderer shows 'Loading widget...' until the view exists, then
  // holds the view (a .jupyter-widgets element), or turns into 'Error displaying widget'.
  const isWidget = (o) => o.classList.contains('jupyter-widgets')
      || !!o.querySelector(':scope > .jupyter-widgets')
      || /^(Loading widget|Error displaying widget)/.test(o.textContent.trim());
  const widgetOutputs = outputs.filter(isWidget);
  return {
    prompts: [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
        .map((p) => p.textContent.trim()),
    outputText: outputs.map((o) => o.innerText).join('\\n'),
    widgetOutputs: widgetOutputs.length,
    widgetsRendered: widgetOutputs.filter((o) =>
        !!o.querySelector(':scope > .jupyter-widgets')
        && !/Error displaying widget|Loading widget/.test(o.textContent)).length,
    badges: outputs.flatMap((o) => [...o.querySelectorAll('b')].map((b) => b.textContent.trim())),
  };
}
"""


def open_in_lab(lab, path: str, prestart: bool = True) -> tuple[float, float]:
    """Open ``path`` in JupyterLab (or take the tab that preloaded it) and wait for the kernel
    to be idle. ``prestart``: start the kernel through the REST API as the notebook opens.

    Returns the seconds until the notebook panel showed, and until the kernel was idle.
    """
    start = time.perf_counter()
    lab.open(path, prestart=prestart)
    page = lab.page
    page.wait_for_selector(PANEL, timeout=OPEN_TIMEOUT)
    shown = time.perf_counter() - start
    if lab.current.run_started is None:  # (a notebook run ahead is busy: nothing to wait for)
        wait_until_idle(page)
    return shown, time.perf_counter() - start


def wait_until_idle(page) -> None:
    """Wait until the status bar says the notebook's kernel is idle."""
    page.locator("#jp-main-statusbar").get_by_text(IDLE, exact=True).wait_for(timeout=OPEN_TIMEOUT)


def start_run_all(page) -> float:
    """Run → Run All Cells in ``page`` (its kernel idle); returns when it was clicked."""
    page.evaluate(WATCH_QUEUED, PANEL)
    start = time.perf_counter()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    return start


def run_ahead(lab, path: str) -> None:
    """Start Run All of ``path`` in the other tab (which preloaded it), so that it runs while
    this tab's notebook is audited and checked: the two tabs are separate renderer processes
    and kernels, one per core. Its own test then waits for the run to finish."""
    other = lab.other
    if other.path != path or other.run_started is not None:
        return
    other.page.wait_for_selector(PANEL, timeout=OPEN_TIMEOUT)
    wait_until_idle(other.page)
    other.run_started = start_run_all(other.page)


def run_all(lab, meanwhile=None) -> float:
    """Run → Run All Cells (unless a previous test started it: run_ahead), wait until every
    code cell has run (or one failed); returns the seconds since it was started.
    ``meanwhile()`` is called once the cells are queued."""
    page = lab.page
    start = lab.current.run_started
    if start is None:
        start = start_run_all(page)
    if meanwhile is not None:
        meanwhile()
    return wait_until_run_finished(page, lab.current.path) - start


def wait_until_run_finished(page, path: str) -> float:
    """Wait until Run All (started in ``page``) of notebook ``path`` has run every code cell
    (or one failed) and all its cells are on the page; returns perf_counter() then. Then, for
    up to 15 s, until no widget still says "Loading widget" (they render a moment after their
    output arrives)."""
    page.wait_for_function(RUN_FINISHED, arg=[path], timeout=RUN_TIMEOUT, polling=100)
    finished = time.perf_counter()
    try:
        page.wait_for_function(NO_LOADING_WIDGET, arg=PANEL, timeout=15_000, polling=100)
    except Exception:  # noqa: BLE001 - reported by the notebook's assertions, with the output
        pass
    return finished


def screenshot(lab, path: str) -> Path:
    """Screenshot with the first widget (or the first output) scrolled into view."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / (path.replace("/", "__").removesuffix(".ipynb") + ".png")
    lab.page.evaluate(
        """async (panelSelector) => {
          const panel = document.querySelector(panelSelector);
          const el = panel.querySelector('.jp-OutputArea-output .jupyter-widgets')
                     || panel.querySelector('.jp-OutputArea-output');
          if (el) {
            el.scrollIntoView({block: 'start'});
            const scroller = el.closest('.jp-WindowedPanel-outer');
            if (scroller) scroller.scrollTop -= 40;  // a little context above the widget
          }
          // Two frames: the scrolled-to cells are laid out and painted (was a fixed 200 ms).
          await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        }""",
        PANEL,
    )
    lab.page.screenshot(path=str(target))
    return target


def unexpected_console_errors(lab) -> list[str]:
    return [m for m in lab.console_errors if not any(re.search(p, m) for p in CONSOLE_NOISE)]


# --------------------------------------------------------------------------- every lesson


def assert_every_cell_ran(path: str, state: dict) -> None:
    """Every code cell of ``path`` (from ROOT) ran, and no output shows an error or a widget
    still loading. ``state``: NOTEBOOK_STATE of the open notebook."""
    text = state["outputText"]
    assert "Traceback" not in text, f"{path}: an output holds a traceback:\n{text[-3000:]}"
    assert "Error displaying widget" not in text, f"{path}: a widget failed to display"
    assert "Loading widget" not in text, f"{path}: a widget never finished loading"
    ran = [p for p in state["prompts"] if re.fullmatch(r"\[\d+\]:", p)]
    expected = runnable_cells(ROOT / path)
    assert len(ran) == expected, (
        f"{path}: {len(ran)} of {expected} code cells ran (prompts: {state['prompts']})"
    )


@pytest.mark.parametrize("notebook", LESSONS, ids=[rel(p) for p in LESSONS])
def test_lesson_runs_in_jupyterlab(lab, notebook: Path):
    path = rel(notebook)
    learner = path.startswith("notebooks/")
    sources = code_cells(notebook)
    shown, idle = open_in_lab(lab, path)
    # While this notebook runs, the other tab opens the next one (and runs it while this one
    # is audited and checked); after the last, the .py test's lesson (JupyterLab starts its
    # kernel itself).
    following = LESSONS.index(notebook) + 1
    after = rel(LESSONS[following]) if following < len(LESSONS) else None
    if after:
        preload = lambda: lab.preload(after)  # noqa: E731
    else:
        preload = lambda: lab.preload(py_lesson(), prestart=False)  # noqa: E731
    ahead = lab.current.run_started is not None
    seconds = run_all(lab, meanwhile=preload)
    if after:
        run_ahead(lab, after)
    state = lab.page.evaluate(NOTEBOOK_STATE, PANEL)
    start = time.perf_counter()
    violations = axe_audit(lab, path)
    audit = time.perf_counter() - start
    shot = screenshot(lab, path)
    print(
        f"\n  {path}: shown {shown:.1f} s, kernel idle {idle:.1f} s, Run All {seconds:.1f} s"
        f"{' (started ahead)' if ahead else ''}, "
        f"{state['widgetOutputs']} widget(s), axe {audit:.1f} s: {len(violations)} rule(s) "
        f"violated, {shot.relative_to(ROOT)}"
    )

    assert_every_cell_ran(path, state)
    assert not violations, (
        f"{path}: axe-core found accessibility violations in the course's content "
        f"(details in build/axe/):\n{describe_violations(violations)}"
    )
    problems = outline_problems(lab.page.evaluate(OUTLINE, PANEL))
    assert not problems, f"{path}: headings or language: " + "; ".join(problems)

    assert state["widgetsRendered"] == state["widgetOutputs"], (
        f"{path}: {state['widgetOutputs']} widget outputs, only {state['widgetsRendered']} rendered"
    )
    expected_widgets = stored_widget_views(notebook)
    if expected_widgets is not None:
        assert state["widgetOutputs"] == expected_widgets, (
            f"{path}: {state['widgetOutputs']} live widgets in the browser, but the executed "
            f"solution stores {expected_widgets} widget outputs"
        )

    checks_called = any(re.search(r"checks\.\w+\.check\(", s) for s in sources)
    # A check's badge is "✓ Correct", "✗ Not yet" or "… Not attempted yet" (a prediction's:
    # "✓ Right", "✗ Not what happens" or "… No guess yet"): compare the status.
    statuses = [badge.lstrip("✓✗… ") for badge in state["badges"]]
    if learner and checks_called:
        assert "Not attempted yet" in statuses, (
            f"{path}: the exercise checks should say 'Not attempted yet' in the learner's copy "
            f"(badges seen: {state['badges']})"
        )
    if not learner:
        assert "Not attempted yet" not in statuses, f"{path}: a solution left unanswered"
        assert "Not yet" not in statuses, f"{path}: a solution fails its own check"
        assert "Not what happens" not in statuses, f"{path}: a solution predicts wrongly"
        if checks_called:
            assert "Correct" in statuses, f"{path}: no check says Correct ({state['badges']})"

    pressed = lab.page.evaluate(PRESSED_STATES, PANEL)
    assert all(p["said"] == p["shown"] for p in pressed), (
        f"{path}: toggle buttons whose aria-pressed differs from what they show: "
        f"{[p for p in pressed if p['said'] != p['shown']]}"
    )

    assert not unexpected_console_errors(lab), (
        f"{path}: the browser console logged errors:\n" + "\n".join(unexpected_console_errors(lab))
    )
    assert not lab.writes, f"{path}: JupyterLab wrote to the checkout: {lab.writes}"

    # The explorer and the grid with the keyboard alone, in Chromium's accessibility tree and
    # at 200 % zoom (explorer_walks.py), then their clicks timed (clicks.py), on this page: no
    # Run All of their own.
    for check in ON_PAGE_CHECKS.get(path, []):
        start = time.perf_counter()
        report = check(lab)
        print(f"  {path}: {check.__name__} {time.perf_counter() - start:.1f} s: {report}")
    assert not unexpected_console_errors(lab), "\n".join(unexpected_console_errors(lab))
    assert not lab.writes, f"{path}: JupyterLab wrote to the checkout: {lab.writes}"


# Every ipywidgets toggle button on the page: is it pressed (the CSS class ipywidgets shows it
# by), and what it tells a screen reader (aria-pressed, set by helpers.live.pressed_states).
PRESSED_STATES = """
(panel) => [...document.querySelectorAll(`${panel} .widget-toggle-button`)].map((b) => ({
  text: b.textContent.trim(),
  shown: b.classList.contains('mod-active') ? 'true' : 'false',
  said: b.getAttribute('aria-pressed'),
}))
"""


def pressed_states_follow_a_click(lab) -> str:
    """An unpressed toggle button clicked: its aria-pressed says "true" and the one pressed
    before says "false"; then the first is pressed again (the lesson as it was)."""
    page = lab.page
    buttons = page.locator(f"{PANEL} .widget-toggle-buttons").first.locator(".widget-toggle-button")
    states = [b.get_attribute("aria-pressed") for b in buttons.all()]
    assert states.count("true") == 1, f"before the click: {states}"
    before, target = states.index("true"), states.index("false")
    buttons.nth(target).click()
    page.wait_for_function(
        "([panel, k]) => document.querySelectorAll(`${panel} .widget-toggle-buttons`)[0]"
        ".querySelectorAll('.widget-toggle-button')[k].getAttribute('aria-pressed') === 'true'",
        arg=[PANEL, target],
        timeout=10_000,
    )
    after = [b.get_attribute("aria-pressed") for b in buttons.all()]
    assert after[before] == "false" and after.count("true") == 1, after
    buttons.nth(before).click()
    page.wait_for_timeout(500)
    return f"clicked {target}: aria-pressed {states} -> {after}"


def explorer_keyboard_and_tree(lab) -> dict:
    return explorer_walks.walk_explorer(lab, "04")


def explorer_at_200_percent(lab) -> dict:
    return explorer_walks.zoom_walk(lab, ".attention-explorer", "04")


def grid_keyboard(lab) -> dict:
    return explorer_walks.walk_grid(lab, "09")


def grid_at_200_percent(lab) -> dict:
    return explorer_walks.zoom_walk(lab, explorer_walks.GRID_OUTPUT, "09")


# The clicks are checked while the other tab may still run the next notebook; they are timed
# once it has finished (nothing else running).
def explorer_clicks_within_the_latency_target(lab) -> dict:
    return clicks.explorer_clicks_and_latency(lab, quiet=lambda: wait_for_other_tab(lab))


def grid_clicks_within_the_latency_target(lab) -> dict:
    return clicks.grid_clicks_and_latency(lab, quiet=lambda: wait_for_other_tab(lab))


def sliders_walked_and_timed(lab) -> dict:
    tag = Path(lab.current.path).name[:2]
    return slider_walks.sliders_walk_and_latency(lab, tag, quiet=lambda: wait_for_other_tab(lab))


ON_PAGE_CHECKS = {
    **{
        f"solutions/{p.name}": [sliders_walked_and_timed]
        for p in LESSONS
        if p.parent.name == "solutions" and p.name[:2] in slider_walks.SLIDERS
    },  # fmt: skip
    "solutions/02_queries_keys_values.ipynb": [pressed_states_follow_a_click],
    EXPLORER_LESSON: [
        explorer_keyboard_and_tree,
        explorer_at_200_percent,
        explorer_clicks_within_the_latency_target,
        sliders_walked_and_timed,  # the temperature, last: it leaves T = 10
    ],
    REAL_LESSON: [grid_keyboard, grid_at_200_percent, grid_clicks_within_the_latency_target],
}
ON_PAGE_CHECKS["solutions/03_scores_and_scaling.ipynb"].append(pressed_states_follow_a_click)


def wait_for_other_tab(lab) -> None:
    """Wait until the other tab's notebook has opened and, if it was run ahead, finished its
    Run All and drawn its widgets."""
    other = lab.other
    if other.path is None:
        return
    if other.run_started is None:
        wait_until_idle(other.page)
    else:
        wait_until_run_finished(other.page, other.path)


def py_lesson() -> str:
    """A lesson's .py source (01_input_Z.py when it exists)."""
    sources = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.py"))
    assert sources, "no notebooks/NN_*.py lesson source found"
    return rel(sources[min(1, len(sources) - 1)])


def test_lesson_py_file_opens_as_a_notebook(lab):
    """The jupytext default viewer from jupyter/overrides.json: a lesson's .py is a notebook."""
    path = py_lesson()
    open_in_lab(lab, path, prestart=False)  # JupyterLab starts this kernel itself
    panel = lab.page.locator(PANEL)
    assert panel.locator(".jp-Cell").count() > 1, f"{path} did not open as a notebook"
    assert panel.locator(".jp-MarkdownCell").count() >= 1
    assert lab.page.locator(".jp-FileEditor:visible").count() == 0, f"{path} opened as text"
    assert not unexpected_console_errors(lab), "\n".join(unexpected_console_errors(lab))
    assert not lab.writes, f"opening {path} wrote to the checkout: {lab.writes}"
