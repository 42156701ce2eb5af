"""The course's website (``make site``), in headless Chromium over a local server, no kernel.

The site is built once for the module (tools/build_site.py: about a minute, the lessons run
afresh) and served from build/site/ by a plain HTTP server on 127.0.0.1. Each page:

* loads with no console error, no page error, no failed request and no request outside the
  site (a CDN would be one): every script, style and font is the site's;
* draws its widgets from their saved state (no "Error rendering" left) and its formulas;
* passes axe-core (WCAG 2.0/2.1 A and AA, best practices) with 0 violations, over the page.

Then what the issue asks to work in the page: the explorer's token click changes the heatmap's
outlined row and the announced message; its head and layer buttons, causal toggle, temperature
slider and table view show what the kernel's explorer shows in that state (lessons 06 and 10);
every slider's picture moves with the keyboard; and what needs Python is disabled and says so.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys

import build_lessons
import build_site
import pytest
from axe_playwright_python.sync_playwright import Axe
from explorer_walks import ROOT
from run_tests import find_chromium
from slider_walks import SLIDERS
from support.accessibility import AXE_EXPERIMENTAL_RULES, AXE_TAGS

from conftest import CHROMIUM_ARGS

pytestmark = pytest.mark.browser

SITE = ROOT / "build" / "site"
LESSON_PAGES = sorted(p.stem + ".html" for p in ROOT.glob("solutions/[0-9][0-9]_*.py"))
PAGES = ["index.html", "search.html", "genindex.html", *LESSON_PAGES]
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": AXE_TAGS},
    "rules": AXE_EXPERIMENTAL_RULES,
    "resultTypes": ["violations"],
}
PHONE = {"width": 390, "height": 844}  # a phone's viewport, in CSS pixels
SETTLE_MS = 15_000  # widgets and MathJax drawn: seconds at most on this 2-core machine


WIDGETS_DRAWN = """() => [...document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]')].every(
    (s) => s.previousElementSibling && s.previousElementSibling.childElementCount > 0)"""
MESSAGE_STARTS = """([root, start]) =>
    root.querySelector('.explorer-message').textContent.trim().startsWith(start)"""
MAP_OF_HEAD = """([root, head]) =>
    root.querySelector('.explorer-heatmap-map svg').getAttribute('data-head') === head"""


# MathJax done: its startup promise resolves once the page's formulas are typeset.
MATH_DONE = "async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise; }"
# Formulas left as TeX: a math span (myst's) with no typeset formula in it.
RAW_MATH = """() => [...document.querySelectorAll('.math')]
    .filter((e) => !e.querySelector('mjx-container')).map((e) => e.textContent.slice(0, 60))"""


@pytest.fixture(scope="module")
def site_url():
    if find_chromium() is None:
        pytest.skip("no Chromium: the browser tests need it (see tools/run_tests.py)")
    built = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_site.py")], capture_output=True, text=True
    )
    assert built.returncode == 0, f"make site failed:\n{built.stdout[-3000:]}{built.stderr[-3000:]}"
    with build_site.serve(SITE) as url:
        yield url


@pytest.fixture(scope="module")
def chromium(site_url, playwright_session):
    """Its own Chromium (no JupyterLab behind it), from the session's Playwright."""
    browser = playwright_session.chromium.launch(
        executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        browser.close()


def open_page(chromium, site_url: str, name: str, viewport: dict | None = None):
    """The page, settled, with what it logged and requested."""
    page = chromium.new_page(viewport=viewport or {"width": 1280, "height": 900})
    seen = {"errors": [], "outside": [], "failed": []}
    origin = "/".join(site_url.split("/")[:3])  # a blob: URL names the origin, not the path
    inside = (site_url, "data:", f"blob:{origin}/")
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["errors"].append(f"page error: {e}"))
    page.on(
        "request", lambda r: None if r.url.startswith(inside) else seen["outside"].append(r.url)
    )
    page.on(
        "response",
        lambda r: seen["failed"].append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    page.goto(f"{site_url}/{name}")
    page.wait_for_load_state("networkidle")
    # Every widget output drawn: the HTML manager puts a view before each one's script tag.
    page.wait_for_function(WIDGETS_DRAWN, timeout=SETTLE_MS)
    page.evaluate(MATH_DONE)
    page.wait_for_timeout(300)  # the widgets' last layout
    return page, seen


def test_the_published_folder_holds_the_site_only(site_url):
    """No Sphinx cache, no page sources (the executed lessons), and .nojekyll for Pages; and
    no answer anywhere in what is published: not in a page's text (its code as the reader sees
    it, tags stripped), its saved widget state, the search index or any other file."""
    assert (SITE / ".nojekyll").is_file()
    assert not (SITE / ".doctrees").exists()
    assert not list(SITE.rglob("*.ipynb")), "a lesson's notebook is published"
    published = {
        path.relative_to(SITE).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in SITE.rglob("*")
        if path.is_file() and path.suffix in (".html", ".js", ".json", ".txt")
        and "vendor" not in path.parts
    }  # fmt: skip
    readable = {
        name: html.unescape(re.sub(r"<[^>]+>", "", text)) for name, text in published.items()
    }
    for marker in ("### BEGIN SOLUTION", "### END SOLUTION", "### ANSWER"):
        found = [name for name, text in published.items() if marker in text]
        assert not found, f"{marker!r} is published in {found}"
    # A lesson's answer lines, on its page (as read, and in its HTML: the widget state); and in
    # any file but another lesson's page unless some learner's copy has the line (a line such
    # as lesson 06's `A = helpers.softmax(scores, axis=-1)` is lesson 04's own code).
    sources = sorted(ROOT.glob("solutions/[0-9][0-9]_*.py"))
    learners = "\n".join(build_lessons.learner_text(p.read_text(), p.name) for p in sources)
    pages = {f"{p.stem}.html" for p in sources}
    for source in sources:
        own = f"{source.stem}.html"
        for line in build_lessons.answer_lines(source.read_text(encoding="utf-8"), source.name):
            where = [n for n in published if n == own or (n not in pages and line not in learners)]
            found = [n for n in where if line in readable[n] or line in published[n]]
            assert not found, f"{source.stem}: an answer line is published in {found}: {line}"


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_clean_and_passes_axe(chromium, site_url, name):
    page, seen = open_page(chromium, site_url, name)
    try:
        assert not seen["outside"], f"{name} requested outside the site: {seen['outside']}"
        assert not seen["failed"], f"{name}: failed requests {seen['failed']}"
        assert not seen["errors"], f"{name}: console errors {seen['errors']}"
        text = page.inner_text("main")
        assert "Error rendering" not in text and "Error displaying widget" not in text, name
        if name in LESSON_PAGES:
            assert page.locator("mjx-container").count() > 0, f"{name}: no formula typeset"
        assert page.evaluate(RAW_MATH) == [], f"{name}: formulas left as TeX"
        violations = axe_violations(page)
        assert violations == [], f"{name}: axe-core violations {violations}"
    finally:
        page.close()


@pytest.mark.parametrize("name", ["index.html", *LESSON_PAGES])
def test_a_page_fits_a_phone_and_keeps_one_search_button(chromium, site_url, name):
    """At 390 px nothing widens the page: a wide output (the explorer's heatmap and colour
    bar) scrolls inside its cell, a long inline name wraps; the page still passes axe (a
    scrolling box holds something the keyboard reaches). One search button, the sidebar's."""
    page, _ = open_page(chromium, site_url, name, PHONE)
    try:
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{name}: {width} px wide at a phone's {PHONE['width']}"
        assert axe_violations(page) == [], name
        assert page.locator("button.search-button-field").count() == 1, name
        assert page.locator("#pst-primary-sidebar button.search-button-field").count() == 1
    finally:
        page.close()


def axe_violations(page, context: str = "document") -> list:
    page.evaluate(Axe().axe_script)
    result = page.evaluate(f"(o) => axe.run({context}, o)", AXE_OPTIONS)
    return [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]]


def test_the_site_works_under_a_sub_path(chromium, site_url, tmp_path):
    """GitHub Pages serves a project's site under /<repository>/: the same files under
    /course/ load with nothing missing and nothing from outside, and the explorer works."""
    (tmp_path / "course").symlink_to(SITE, target_is_directory=True)
    with build_site.serve(tmp_path) as root:
        base = f"{root}/course"
        for name in ("index.html", "05_causal_masking.html"):
            page, seen = open_page(chromium, base, name)
            try:
                assert not seen["outside"], f"{name}: requested outside /course/: {seen['outside']}"
                assert not seen["failed"] and not seen["errors"], (name, seen)
                assert page.evaluate(RAW_MATH) == [], name
                if name != "index.html":
                    explorer = page.locator(".attention-explorer").first
                    explorer.locator('[role="radio"]').nth(1).click()
                    page.wait_for_function(
                        MESSAGE_STARTS, arg=[explorer.element_handle(), '"cat"'], timeout=5_000
                    )
            finally:
                page.close()


def test_every_lesson_page_has_its_widgets(chromium, site_url):
    """Each lesson's widget outputs are drawn as widgets, not left as their PNG fallback."""
    counts = {}
    for name in LESSON_PAGES:
        page, _ = open_page(chromium, site_url, name)
        counts[name] = page.locator(".cell_output .jupyter-widgets").count()
        page.close()
    assert all(counts.values()), f"pages with no widget drawn: {counts}"


def explorer_state(explorer) -> dict:
    return explorer.evaluate(
        """(root) => {
          const radios = [...root.querySelectorAll('[role="radio"]')];
          const rows = [...root.querySelectorAll('.explorer-heatmap-query svg[data-query]')]
              .filter((e) => e.getClientRects().length > 0);
          const map = root.querySelector('.explorer-heatmap-map svg');
          return {
            tokens: radios.map((r) => r.textContent.trim()),
            checked: radios.map((r, i) => r.getAttribute('aria-checked') === 'true' ? i : -1)
                .filter((i) => i >= 0),
            rows: rows.map((e) => Number(e.getAttribute('data-query'))),
            message: root.querySelector('.explorer-message').textContent.trim(),
            live: root.querySelector('.explorer-message').getAttribute('aria-live'),
            head: map ? map.getAttribute('data-head') : null,
          };
        }"""
    )


def test_explorer_token_click_changes_heatmap_and_message(chromium, site_url):
    page, _ = open_page(chromium, site_url, "05_causal_masking.html")
    try:
        explorer = page.locator(".attention-explorer").first
        explorer.scroll_into_view_if_needed()
        before = explorer_state(explorer)
        assert before["tokens"][:3] == ["the", "cat", "sat"] and before["checked"] == [2], before
        assert before["rows"] == [2] and before["live"] in ("polite", "assertive"), before
        explorer.locator('[role="radio"]').nth(1).click()
        page.wait_for_function(
            "([root, m]) => root.querySelector('.explorer-message').textContent.trim() !== m",
            arg=[explorer.element_handle(), before["message"]],
            timeout=5_000,
        )
        after = explorer_state(explorer)
        assert after["checked"] == [1] and after["rows"] == [1], after
        assert after["message"].startswith('"cat" (position 1)'), after["message"]
        # Causal: "cat" may look at "the" and itself only; the message names its top key.
        assert "cat" in after["message"] and after["message"] != before["message"]
        # And from the keyboard: the arrow key moves the query on, the page announces it.
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            MESSAGE_STARTS, arg=[explorer.element_handle(), '"sat"'], timeout=5_000
        )
        assert explorer_state(explorer)["rows"] == [2]
        page.screenshot(path=str(ROOT / "build" / "site-explorer-05.png"))
    finally:
        page.close()


SHOWN_BARS = """(root) => {
    const bars = [...root.querySelectorAll('.explorer-bars-values svg[data-query]')]
        .filter((e) => e.getClientRects().length > 0);
    return bars.map((e) => e.getAttribute('aria-label'));
}"""
MESSAGE_IS = """([root, text]) =>
    root.querySelector('.explorer-message').textContent.trim() === text"""


def shown_bars_label(ex) -> str:
    """The aria-label of the bars the kernel's explorer shows for its query."""
    from helpers.explorer.controls import shown

    return re.search(r'aria-label="([^"]*)"', shown(ex.parts.bar_values))[1]


def test_explorer_head_causal_temperature_and_table_work_with_no_kernel(chromium, site_url):
    """Lesson 06's explorer in the page: a head click, the causal toggle, the temperature
    slider (keyboard) and the table view each show what the kernel's explorer shows in that
    state (computed here, in Python): its map, its message and the selected query's bars."""
    import helpers
    from helpers.explorer.widget import AttentionExplorer

    # The lesson's explorer, as its cell makes it (h = 2 heads, head 1 shown, query "sat").
    ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=2, causal=False, seed=0,
                           query=2)  # fmt: skip
    ex.set_head(1)
    page, seen = open_page(chromium, site_url, "06_cross_attention_and_heads.html")
    try:
        explorer = page.locator(".attention-explorer").first
        explorer.scroll_into_view_if_needed()
        root = explorer.element_handle()

        def agrees(what: str) -> None:
            page.wait_for_function(MESSAGE_IS, arg=[root, ex.message], timeout=5_000)
            state = explorer_state(explorer)
            assert state["head"] == str(ex.head), (what, state)
            assert explorer.evaluate(SHOWN_BARS) == [html.unescape(shown_bars_label(ex))], what
            svg = explorer.locator(".explorer-heatmap-map svg").first
            assert svg.get_attribute("data-causal") == str(int(ex.causal)), what
            assert svg.get_attribute("data-temperature") == f"{ex.temperature:g}", what
            # Nothing waits for a kernel: no pending mark, no "waiting" line.
            assert "explorer-pending" not in (explorer.get_attribute("class") or ""), what
            assert explorer.locator(".explorer-waiting").count() == 0, what

        agrees("as built")
        explorer.locator(".explorer-head .widget-toggle-button").nth(0).click()
        ex.set_head(0)
        agrees("head 0")
        head_0 = explorer.locator(".explorer-head .widget-toggle-button").nth(0)
        assert head_0.get_attribute("aria-pressed") == "true"

        causal = explorer.locator("button.explorer-causal, .explorer-causal button").first
        assert causal.is_enabled() and "causal mask: off" in causal.inner_text()
        causal.click()
        ex.set_causal(True)
        agrees("causal on")
        assert "causal mask: on" in causal.inner_text()
        assert causal.get_attribute("aria-pressed") == "true"

        # The temperature slider, from the keyboard: End goes to its last value (T = 10).
        explorer.locator(".explorer-temperature input[type=range]").first.focus()
        page.keyboard.press("End")
        ex.set_temperature(10.0)
        agrees("T = 10")

        # The table view shows this state's weights.
        explorer.locator(".explorer-table-toggle").click()
        caption = explorer.locator(".explorer-table-box caption").first
        caption.wait_for(timeout=5_000)
        expected = re.search(r"<caption>(.*?)</caption>", ex.table_html())[1]
        assert caption.inner_text() == html.unescape(expected)
        # The states the page reached by clicking pass axe too (pressed buttons, the table).
        assert not seen["errors"] and not seen["failed"], (seen["errors"], seen["failed"])
        assert axe_violations(page) == [], "after head 0, causal on, T = 10, table view"
        # axe-core reads the theme's stylesheet and fetches its @import ("../basic.css")
        # against the page's URL, not the stylesheet's: a 404 of axe's, not the page's.
        seen["errors"].clear()
        seen["failed"].clear()
        # And a click on a token still moves the query, in this state.
        explorer.locator('[role="radio"]').nth(5).click()
        ex.select_query(5)
        agrees("query mat")

        # The sentence box needs the kernel's tokenizer: disabled, and the note under the
        # explorer says so, in text (a tooltip reaches no keyboard, touch or screen reader).
        assert explorer.locator(".explorer-text input").first.is_disabled()
        note = explorer.locator(
            "xpath=ancestor::div[contains(concat(' ', normalize-space(@class), ' '), ' cell ')][1]"
            "/following-sibling::*[1]"
        )
        assert "sentence needs Python" in note.inner_text(), note.inner_text()
        assert not seen["errors"] and not seen["failed"], (seen["errors"], seen["failed"])
        page.screenshot(path=str(ROOT / "build" / "site-explorer-06.png"), full_page=False)
    finally:
        page.close()


def test_induction_explorer_layer_and_head_work_with_no_kernel(chromium, site_url):
    """Lesson 10's explorer on the trained causal model: a layer click and a head click show
    the map and message the kernel's explorer shows there (its mask and scale are fixed)."""
    from helpers.explorer.induction import SPACE, InductionExplorer

    page, seen = open_page(chromium, site_url, "10_induction_heads.html")
    try:
        explorer = page.locator(".induction-explorer").first
        explorer.scroll_into_view_if_needed()
        root = explorer.element_handle()
        before = explorer_state(explorer)
        # The kernel's explorer on the page's own text and query, as the lesson's cell makes it.
        text = "".join(before["tokens"]).replace(SPACE, " ")
        ex = InductionExplorer(text, layer=1, head=0, query=before["checked"][0])
        assert ex.message == before["message"], "not the lesson's explorer?"
        explorer.locator(".explorer-layer .widget-toggle-button").nth(0).click()
        explorer.locator(".explorer-head .widget-toggle-button").nth(3).click()
        ex.select(0, 3)
        page.wait_for_function(MESSAGE_IS, arg=[root, ex.message], timeout=5_000)
        svg = explorer.locator(".explorer-heatmap-map svg").first
        assert svg.get_attribute("data-layer") == "0" and svg.get_attribute("data-head") == "3"
        assert "explorer-pending" not in (explorer.get_attribute("class") or "")
        assert not seen["errors"] and not seen["failed"], (seen["errors"], seen["failed"])
    finally:
        page.close()


def picture_of(page, slider) -> bytes:
    """A screenshot of the figure the slider drives (the box the slider sits in)."""
    box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")
    return box.screenshot()


@pytest.mark.parametrize(
    "lesson",
    sorted(n for n in SLIDERS if n != "04"),  # 04's slider is the explorer's
)
def test_every_slider_moves_its_picture_from_the_keyboard(chromium, site_url, lesson):
    name = next(p for p in LESSON_PAGES if p.startswith(lesson))
    page, _ = open_page(chromium, site_url, name)
    try:
        sliders = page.locator('input[type="range"]')
        names = [sliders.nth(i).get_attribute("aria-label") for i in range(sliders.count())]
        expected = [n for n in SLIDERS[lesson]]
        assert len(names) == len(expected), f"{name}: sliders {names}, expected {expected}"
        for i in range(sliders.count()):
            slider = sliders.nth(i)
            slider.scroll_into_view_if_needed()
            start, before = slider.input_value(), picture_of(page, slider)
            slider.focus()
            page.keyboard.press("End")
            page.wait_for_timeout(400)
            assert slider.input_value() != start, f"{name} slider {i}: End did not move it"
            assert picture_of(page, slider) != before, f"{name} slider {i}: the picture stayed"
            page.keyboard.press("Home")
            page.wait_for_timeout(400)
            assert slider.input_value() == "0"
    finally:
        page.close()
