"""Walks of the explorer with the keyboard alone, through Chromium's accessibility tree, and at
200 % zoom (issue 19), against the DOM contract in the explorer's front end:

- lesson 04's explorer (AttentionExplorer): from the sentence box, Tab reaches the token row
  (one tab stop: the selected token); ArrowRight moves the query (the checked radio, the
  heatmap's outlined row and the live message all change, with the kernel stopped: answered in
  the browser), ArrowLeft stops at the first token, Home and End go to the first and last; the
  focused token shows an outline. Space on a head button, with the kernel stopped, shows that
  head's map and marks the explorer pending (the stale bars and message aria-busy, dimmed but
  at 4.5:1; after a second, a status line says it waits for the kernel); the message follows
  once the kernel runs again; Enter on head 0 brings it back.
- lesson 09's grid (AttentionGrid): arrow keys move the grid's focus, Enter picks the focused
  map (the explorer shows that layer and head, its message changes).
- Chromium's own accessibility tree (CDP ``Accessibility.queryAXTree``): the message is a
  status with the message's text, exactly one radio is checked and it is the selected query,
  and the table view is a table with a row header per query and a column header per key.
- 200 % zoom in a 700-pixel-wide window: a 350 x 450 CSS-pixel viewport, which is what Chromium
  lays the page out in at zoom 2 in a 700 x 900 window (layout depends on CSS pixels only; the
  device pixel ratio of 2 changes how sharp the screenshot is, not where anything goes). Every
  control of the explorer can be scrolled into view and is then inside every box that clips
  it; pictures wider than the screen (the heatmap) may scroll sideways, as WCAG 1.4.10 allows
  for content whose layout needs two dimensions, but must be reachable to their far edge.

These run on the all-lessons test's page of the lesson (after its Run All and audit), so they
cost no Run All of their own. Screenshots and the accessibility snapshots go to
``build/a11y-walks/``.
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"  # the lessons' screenshots (the walks': A11Y)
A11Y = ROOT / "build" / "a11y-walks"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook on screen (every browser test's)
ZOOM_VIEWPORT = {"width": 350, "height": 450}  # 700 x 900 device pixels at 200 %
KEY_TIMEOUT = 5_000  # ms for a key's effect to show

# What the page shows of the explorer now (the element with focus, the checked token, the
# heatmap's visible query layer, the message).
EXPLORER_STATE = """
(root) => {
  const active = document.activeElement;
  const radios = [...root.querySelectorAll('[role="radiogroup"] [role="radio"]')];
  const checked = radios.filter((r) => r.getAttribute('aria-checked') === 'true');
  const visible = (e) => e.getClientRects().length > 0;
  const layers = [...root.querySelectorAll('.explorer-heatmap-query svg[data-query]')]
      .filter(visible);
  const message = root.querySelector('.explorer-message[role="status"]');
  const style = active ? getComputedStyle(active) : null;
  return {
    activeRole: active ? active.getAttribute('role') : null,
    activeIndex: radios.indexOf(active),
    activeInside: root.contains(active),
    activeName: active ? (active.getAttribute('aria-label') || active.textContent.trim()
        || (active.labels && active.labels[0] ? active.labels[0].textContent.trim() : '')) : '',
    outline: style ? [style.outlineStyle, parseFloat(style.outlineWidth)] : null,
    checked: checked.map((r) => radios.indexOf(r)),
    tabStops: radios.filter((r) => r.tabIndex === 0).map((r) => radios.indexOf(r)),
    n: radios.length,
    layers: layers.map((s) => Number(s.getAttribute('data-query'))),
    message: message ? message.textContent.trim() : null,
    live: message ? message.getAttribute('aria-live') : null,
  };
}
"""


def explorer_state(explorer) -> dict:
    return explorer.evaluate(EXPLORER_STATE)


def wait_for_query(lab, explorer, index: int, message_before: str | None) -> dict:
    """Wait until token ``index`` is focused and checked, the heatmap shows its row and the
    message differs from ``message_before``; returns the state (assertions name what is off)."""
    try:
        lab.page.wait_for_function(
            """([root, i, before]) => {
              const radios = [...root.querySelectorAll('[role="radio"]')];
              const layer = [...root.querySelectorAll('.explorer-heatmap-query svg[data-query]')]
                  .filter((e) => e.getClientRects().length > 0);
              const message = root.querySelector('.explorer-message');
              return document.activeElement === radios[i]
                  && radios[i].getAttribute('aria-checked') === 'true'
                  && layer.length === 1 && layer[0].getAttribute('data-query') === String(i)
                  && (before === null || message.textContent.trim() !== before);
            }""",
            arg=[explorer.element_handle(), index, message_before],
            timeout=KEY_TIMEOUT,
            polling=50,
        )
    except Exception:  # noqa: BLE001 - the assertions below say what did not happen
        pass
    return explorer_state(explorer)


def assert_query(state: dict, index: int, what: str) -> None:
    assert state["activeIndex"] == index, f"{what}: focus is on token {state['activeIndex']}"
    assert state["checked"] == [index], f"{what}: checked tokens {state['checked']}"
    assert state["tabStops"] == [index], f"{what}: tokens in the tab order {state['tabStops']}"
    assert state["layers"] == [index], f"{what}: the heatmap outlines query {state['layers']}"
    style, width = state["outline"]
    assert style != "none" and width > 0, f"{what}: the focused token has no outline ({style})"


def kernel_pid(lab) -> int:
    """PID of the kernel of the notebook open in the current tab (its session, by path)."""
    path = lab.current.path
    sessions = [s for s in lab.server.api("GET", "/api/sessions") if s["path"] == path]
    assert sessions, f"no kernel session for {path}"
    kernel_id = sessions[-1]["kernel"]["id"]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if f"kernel-{kernel_id}.json".encode() in cmdline:
            return int(proc.name)
    raise AssertionError(f"no process for kernel {kernel_id} of {path}")


@contextmanager
def kernel_stopped(lab):
    """The notebook's kernel is stopped (SIGSTOP) inside the block, so that anything that
    changes on the page meanwhile was done by the browser alone."""
    pid = kernel_pid(lab)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


# Ask the notebook's kernel to run nothing, and wait for its answer and its "idle": the kernel
# handles its messages in order, and sends what it sends in order, so by then it has handled
# every message the page sent before and the page has received all it sent back.
KERNEL_CAUGHT_UP = """
async () => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  await kernel.requestExecute({code: '', silent: true, store_history: false}).done;
}
"""
# What the explorer sends a moment after a browser event (helpers.explorer.preview.AFTER_PAINT_S is
# 0.03 s), with room to spare.
KERNEL_LATER_MS = 300


KERNEL_PRINT = """
async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const future = kernel.requestExecute({code, silent: false, store_history: false});
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === 'stream') out += msg.content.text;
    if (msg.header.msg_type === 'error') out += `ERROR ${msg.content.ename}: ${msg.content.evalue}`;
  };
  await future.done;
  return out;
}
"""


def kernel_print(lab, code: str) -> str:
    """What ``code`` prints, run in the open notebook's kernel (not in a cell: nothing on the
    page changes). Raises if it raised."""
    out = lab.page.evaluate(KERNEL_PRINT, code)
    assert not out.startswith("ERROR"), f"{code!r} in the kernel: {out}"
    return out.strip()


def kernel_caught_up(lab) -> None:
    """Return once the current notebook's kernel has handled every message sent to it so far
    and the page has received its answers."""
    lab.page.evaluate(KERNEL_CAUGHT_UP)


def cdp_ax(lab, root_selector: str, role: str) -> list[dict]:
    """Chromium's accessibility-tree nodes of ``role`` under the first ``root_selector``
    (CDP Accessibility.queryAXTree), each as {name, properties, text}: ``text`` joins the
    names of its descendant static-text nodes (what a status announces)."""
    page = lab.page
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("Accessibility.enable")
        handle = cdp.send(
            "Runtime.evaluate",
            {"expression": f"document.querySelector({root_selector!r})"},
        )
        object_id = handle["result"]["objectId"]
        found = cdp.send("Accessibility.queryAXTree", {"objectId": object_id, "role": role})
        nodes = []
        for node in found["nodes"]:
            if node.get("ignored"):
                continue
            texts, todo = [], [node["nodeId"]]
            while todo:
                children = cdp.send("Accessibility.getChildAXNodes", {"id": todo.pop(0)})
                for child in children["nodes"]:
                    if child.get("role", {}).get("value") == "StaticText":
                        texts.append(child.get("name", {}).get("value", ""))
                    else:
                        todo.append(child["nodeId"])
            nodes.append(
                {
                    "name": node.get("name", {}).get("value", ""),
                    "properties": {
                        p["name"]: p["value"].get("value") for p in node.get("properties", [])
                    },
                    "text": " ".join(t for t in texts if t.strip()),
                }
            )
        return nodes
    finally:
        cdp.detach()


def save(name: str, text: str) -> Path:
    A11Y.mkdir(parents=True, exist_ok=True)
    (A11Y / name).write_text(text)
    return A11Y / name


def shot(name: str) -> str:
    """Where a screenshot named ``name`` goes (build/a11y-walks/)."""
    A11Y.mkdir(parents=True, exist_ok=True)
    return str(A11Y / name)


# --------------------------------------------------------------------------- lesson 04


def walk_explorer(lab, tag: str) -> dict:
    """The keyboard walk and the accessibility tree of the open notebook's first explorer."""
    page = lab.page
    root = f"{PANEL} .attention-explorer"
    explorer = page.locator(root).first
    explorer.scroll_into_view_if_needed()
    report: dict = {}

    # Tab order from the sentence box, until focus leaves the explorer.
    explorer.locator(".explorer-text input").first.focus()
    stops = []
    for _ in range(40):
        page.keyboard.press("Tab")
        state = explorer_state(explorer)
        if not state["activeInside"]:
            break
        stops.append(state["activeRole"] or state["activeName"])
    report["tab_stops"] = stops
    assert stops and stops[0] == "radio", f"Tab from the sentence box reached {stops[:1]}"
    assert stops.count("radio") == 1, f"the token row takes {stops.count('radio')} tab stops"
    assert "table view" in stops, f"the table view toggle is not in the tab order: {stops}"

    # The picked head is marked by more than its colour: bold and underlined (WCAG 1.4.1).
    picked = explorer.locator(".widget-toggle-buttons .widget-toggle-button.mod-active").first
    look = picked.evaluate(
        "e => { const s = getComputedStyle(e); return [s.fontWeight, s.textDecorationLine]; }"
    )
    assert int(look[0]) >= 600 and "underline" in look[1], f"the picked head looks {look}"

    explorer.locator(".explorer-text input").first.focus()
    page.keyboard.press("Tab")
    start = explorer_state(explorer)
    n, first = start["n"], start["activeIndex"]
    assert n >= 3 and 0 <= first < n - 1, f"{n} tokens, focus on {first}"
    assert_query(start, first, "Tab into the token row")
    assert start["live"] == "polite" and start["message"], "no live message"
    report["tokens"], report["messages"] = n, [start["message"]]

    with kernel_stopped(lab):  # every change below is the browser's own
        for key, expected in [("ArrowRight", first + 1), ("End", n - 1), ("Home", 0)]:
            before = explorer_state(explorer)["message"]
            page.keyboard.press(key)
            state = wait_for_query(lab, explorer, expected, before)
            assert_query(state, expected, f"{key} with the kernel stopped")
            assert state["message"] != before, f"{key}: the live message did not change"
            report["messages"].append(state["message"])
        page.keyboard.press("ArrowLeft")  # at the first token: stays (no wrap)
        page.wait_for_timeout(300)
        assert_query(explorer_state(explorer), 0, "ArrowLeft on the first token")
    # The kernel runs again and handles the queued picks: the browser's last pick must stay
    # (a kernel sending back an older index used to move the token row to it).
    kernel_caught_up(lab)
    page.wait_for_timeout(KERNEL_LATER_MS)
    assert_query(explorer_state(explorer), 0, "after the kernel caught up with the picks")
    explorer.screenshot(path=shot(f"{tag}_keyboard.png"))

    # Chromium's accessibility tree.
    state = explorer_state(explorer)
    # Two status lines: the token row's message, and the temperature slider's (empty until
    # the slider moves: its walk comes later).
    statuses = cdp_ax(lab, root, "status")
    assert len(statuses) == 2, f"{len(statuses)} status nodes in the accessibility tree"
    statuses.sort(key=lambda node: not node["text"])  # the message first
    assert statuses[1]["text"] == "", f"the slider's status line speaks: {statuses[1]}"
    assert statuses[0]["properties"].get("live") == "polite", statuses[0]
    assert statuses[0]["text"].split() == state["message"].split(), statuses[0]
    radios = cdp_ax(lab, root, "radio")
    checked = [r for r in radios if r["properties"].get("checked") == "true"]
    assert len(radios) == n and len(checked) == 1, f"{len(radios)} radios, {checked} checked"
    assert checked[0]["name"].startswith(state["activeName"].split(",")[0]), checked[0]
    assert checked[0]["name"].endswith(f"token 1 of {n}"), checked[0]
    report["status"], report["checked_radio"] = statuses[0]["text"], checked[0]["name"]

    # The table view, opened from the keyboard.
    toggle = explorer.get_by_role("button", name="table view", exact=True)
    toggle.focus()
    page.keyboard.press("Enter")
    table = explorer.locator("table.explorer-table").first
    table.wait_for(timeout=KEY_TIMEOUT)
    assert toggle.get_attribute("aria-pressed") == "true"
    tables = cdp_ax(lab, root, "table")
    assert len(tables) == 1 and tables[0]["name"], f"table nodes: {tables}"
    columns = cdp_ax(lab, root, "columnheader")
    rows = cdp_ax(lab, root, "rowheader")
    keys = [c["name"] for c in columns if c["name"]]
    assert len(keys) == n, f"{len(keys)} named column headers for {n} keys: {keys}"
    assert len(rows) == n, f"{len(rows)} row headers for {n} queries"
    report["table"] = tables[0]["name"]
    report["aria_snapshot"] = str(save(f"{tag}_aria.yaml", explorer.aria_snapshot()))
    table.scroll_into_view_if_needed()
    explorer.screenshot(path=shot(f"{tag}_table.png"))
    page.keyboard.press("Enter")  # closes it again
    report["head_keys"] = walk_head_buttons(lab, explorer, tag)
    return report


HEAD_BUTTONS = ".explorer-head .widget-toggle-button"  # the explorer's (ipywidgets ToggleButtons)

# The head of the map on screen, and the message (which names the head).
HEAD_SHOWN = """(root) => [
    root.querySelector('.explorer-heatmap-map svg').getAttribute('data-head'),
    root.querySelector('.explorer-message').textContent]"""


# While a map drawn in the browser waits for the kernel: the explorer's pending mark.
PENDING = """(root) => {
  const message = root.querySelector('.explorer-message');
  const note = root.querySelector('.explorer-waiting');
  return {pending: root.classList.contains('explorer-pending'),
          busy: [message, root.querySelector('.explorer-bars')]
              .map((e) => e && e.getAttribute('aria-busy')),
          opacity: getComputedStyle(message).opacity,
          note: note && {role: note.getAttribute('role'), live: note.getAttribute('aria-live'),
                         text: note.textContent, height: note.getBoundingClientRect().height}};
}"""
# axe's color-contrast rule over the explorer, the html of each node below 4.5:1. axe-core is on
# the page already: the all-lessons test audited it.
CONTRAST = """async (root) => {
  const result = await axe.run(root, {runOnly: {type: 'rule', values: ['color-contrast']},
                                      resultTypes: ['violations']});
  return result.violations.flatMap((v) => v.nodes.map((n) => n.html.slice(0, 120)));
}"""
# What the explorer holds once the kernel answered: no pending class, no aria-busy, no note.
ANSWERED = """(root) => [root.className, root.querySelectorAll('[aria-busy]').length,
    root.querySelectorAll('.explorer-waiting').length]"""
WAITING_TEXT = "Waiting for the kernel"  # pending.js's line, after a second without an answer


def walk_head_buttons(lab, explorer, tag: str) -> list[str]:
    """Space on head 1 with the kernel stopped: the heatmap shows head 1's map at once (the
    browser holds every head's) and the explorer is marked pending (its bars and message,
    still head 0's, aria-busy and dimmed but readable: axe's color-contrast); after a second
    a line says it waits for the kernel, in Chromium's accessibility tree as a status. The
    message, which names the head, follows once the kernel runs again, and the mark and the
    line go. Then Enter on head 0 (with the kernel running) brings head 0 back."""
    page = lab.page
    heads = explorer.locator(HEAD_BUTTONS)
    head, message = explorer.evaluate(HEAD_SHOWN)
    assert head == "0" and "head 0" in message, (head, message)
    with kernel_stopped(lab):
        heads.nth(1).focus()
        page.keyboard.press("Space")
        try:
            page.wait_for_function(
                f"(root) => ({HEAD_SHOWN})(root)[0] === '1'", arg=explorer.element_handle(),
                timeout=KEY_TIMEOUT,
            )  # fmt: skip
        except Exception as error:  # noqa: BLE001 - said as what failed
            raise AssertionError(
                "Space on head 1 with the kernel stopped left head 0's map on screen: the head "
                "buttons waited for the kernel (helpers/front/map_preview.js)"
            ) from error
        assert explorer.evaluate(HEAD_SHOWN)[1] == message, "the message changed without a kernel"
        waiting = explorer.evaluate(PENDING)
        assert waiting["pending"] and waiting["busy"] == ["true", "true"], (
            f"the stale message and bars not marked pending: {waiting}"
        )
        assert float(waiting["opacity"]) < 1, f"the stale message is not dimmed: {waiting}"
        # The live region is there, empty and flat, from the start; its words come after a
        # second without the kernel, so that a screen reader announces them.
        note = waiting["note"]
        assert note and note["role"] == "status" and note["live"] == "polite", waiting
        assert note["text"] == "" and note["height"] == 0, f"said too early: {note}"
        page.wait_for_function(
            "([root, words]) => root.querySelector('.explorer-waiting')"
            "?.textContent.startsWith(words)",
            arg=[explorer.element_handle(), WAITING_TEXT],
            timeout=KEY_TIMEOUT,
        )
        # Still pending (message and bars dimmed), the line said: one contrast check for both.
        low = explorer.evaluate(CONTRAST)
        assert not low, f"the dimmed message and bars or the waiting line below 4.5:1: {low}"
        said = [s["text"] for s in cdp_ax(lab, f"{PANEL} .attention-explorer", "status")]
        assert any(text.startswith(WAITING_TEXT) for text in said), said
        explorer.screenshot(path=shot(f"{tag}_head_pending.png"))
    kernel_caught_up(lab)
    page.wait_for_timeout(KERNEL_LATER_MS)
    head, message = explorer.evaluate(HEAD_SHOWN)
    assert head == "1" and "head 1" in message, f"after the kernel caught up: {head}, {message}"
    answered = explorer.evaluate(ANSWERED)
    assert "explorer-pending" not in answered[0] and answered[1:] == [0, 0], answered
    shown = [message]
    heads.nth(0).focus()
    page.keyboard.press("Enter")
    kernel_caught_up(lab)
    page.wait_for_timeout(KERNEL_LATER_MS)
    head, message = explorer.evaluate(HEAD_SHOWN)
    assert head == "0" and "head 0" in message, f"Enter on head 0: {head}, {message}"
    return shown + [message]


# --------------------------------------------------------------------------- lesson 09

# The output that holds lesson 09's grid (role=grid) and the explorer it opens.
GRID_OUTPUT = ".jp-OutputArea-output:has([role=grid])"

GRID_STATE = """
(root) => {
  const grid = root.querySelector('[role="grid"]');
  const cells = grid ? [...grid.querySelectorAll('[role="gridcell"]')] : [];
  const active = document.activeElement;
  const style = active ? getComputedStyle(active) : null;
  const svg = root.querySelector('.explorer-heatmap svg[data-layer]');
  const message = root.querySelector('.explorer-message[role="status"]');
  return {
    label: grid ? grid.getAttribute('aria-label') : null,
    rows: grid ? grid.querySelectorAll('[role="row"]').length : 0,
    n: cells.length,
    active: cells.indexOf(active),
    activeName: active ? (active.getAttribute('aria-label') || '') : '',
    outline: style ? [style.outlineStyle, parseFloat(style.outlineWidth)] : null,
    selected: cells.map((c, i) => [i, c.getAttribute('aria-selected')])
        .filter(([, s]) => s === 'true').map(([i]) => i),
    tabStops: cells.filter((c) => c.tabIndex === 0).map((c) => cells.indexOf(c)),
    shown: svg ? [Number(svg.getAttribute('data-layer')), Number(svg.getAttribute('data-head'))]
                : null,
    message: message ? message.textContent.trim() : null,
  };
}
"""


def walk_grid(lab, tag: str, heads: int = 12) -> dict:
    """Lesson 09's grid from the keyboard: arrows move the focus, Enter picks."""
    page = lab.page
    root = page.locator(f"{PANEL} {GRID_OUTPUT}").first
    root.scroll_into_view_if_needed()
    state = root.evaluate(GRID_STATE)
    assert state["label"], "the grid (role=grid) has no aria-label"
    assert state["n"] == 6 * heads and state["rows"] >= 6, state
    assert len(state["tabStops"]) == 1, f"grid cells in the tab order: {state['tabStops']}"
    start = state["tabStops"][0]
    layer, head = divmod(start, heads)
    root.locator('[role="gridcell"]').nth(start).focus()

    def press(key: str, expected: int) -> dict:
        page.keyboard.press(key)
        page.wait_for_function(
            "([r, i]) => [...r.querySelectorAll('[role=gridcell]')].indexOf("
            "document.activeElement) === i",
            arg=[root.element_handle(), expected],
            timeout=KEY_TIMEOUT,
        )
        now = root.evaluate(GRID_STATE)
        style, width = now["outline"]
        assert style != "none" and width > 0, f"{key}: the focused cell has no outline"
        assert now["tabStops"] == [expected], f"{key}: tab stops {now['tabStops']}"
        k, h = divmod(expected, heads)
        assert now["activeName"] == f"layer {k}, head {h}", now["activeName"]
        return now

    # Right, down, End, Home, up: each moves the focus only (the pick stays).
    h_right = min(head + 1, heads - 1)
    moves = [("ArrowRight", layer * heads + h_right)]
    l_down = min(layer + 1, 5)
    moves += [("ArrowDown", l_down * heads + h_right), ("End", l_down * heads + heads - 1)]
    moves += [("Home", l_down * heads), ("ArrowUp", layer * heads)]
    for key, expected in moves:
        now = press(key, expected)
        assert now["selected"] == state["selected"], f"{key} changed the pick: {now['selected']}"
    # Enter picks the focused map (here layer `layer`, head 0, unless that was already shown).
    target = layer * heads + (0 if head != 0 else 1)
    if target != layer * heads:
        press("ArrowRight", target)
    before = root.evaluate(GRID_STATE)
    page.keyboard.press("Enter")
    page.wait_for_function(
        """([r, i, before]) => {
          const cells = [...r.querySelectorAll('[role=gridcell]')];
          const m = r.querySelector('.explorer-message');
          return cells[i].getAttribute('aria-selected') === 'true'
              && m && m.textContent.trim() !== before;
        }""",
        arg=[root.element_handle(), target, before["message"]],
        timeout=15_000,  # the kernel computes the picked map's pictures
    )
    after = root.evaluate(GRID_STATE)
    assert after["selected"] == [target], after["selected"]
    assert after["shown"] == list(divmod(target, heads)), f"explorer shows {after['shown']}"
    assert after["message"] != before["message"]
    root.screenshot(path=shot(f"{tag}_grid_keyboard.png"))
    return {"start": start, "picked": after["activeName"], "message": after["message"]}


# --------------------------------------------------------------------------- 200 % zoom

CLIPPING = """
(el) => {
  // The part of the page el can show in: the viewport, cut by every ancestor that clips.
  let box = {left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight};
  let scrollsSideways = false;
  const clippers = [];
  // Up to the notebook's scroller: above it is JupyterLab's shell (the body is 0 pixels tall
  // and clips nothing of the absolutely placed shell).
  const top = el.closest('.jp-WindowedPanel-outer');
  for (let a = el.parentElement; a && top && top.contains(a); a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
      const r = a.getBoundingClientRect();
      clippers.push(`${a.tagName}.${[...a.classList].join('.')} ${s.overflowX}/${s.overflowY} `
                    + `${Math.round(r.left)},${Math.round(r.top)},${Math.round(r.right)},`
                    + `${Math.round(r.bottom)}`);
      box = {left: Math.max(box.left, r.left), top: Math.max(box.top, r.top),
             right: Math.min(box.right, r.right), bottom: Math.min(box.bottom, r.bottom)};
      if (['auto', 'scroll'].includes(s.overflowX) && a.scrollWidth > a.clientWidth) {
        scrollsSideways = true;
      }
    }
  }
  const r = el.getBoundingClientRect();
  return {el: {left: r.left, top: r.top, right: r.right, bottom: r.bottom},
          box, scrollsSideways, clippers, width: window.innerWidth,
          name: el.getAttribute('aria-label') || el.textContent.trim().slice(0, 30)
                || el.className};
}
"""


# Every control of an explorer or grid (text boxes, buttons, radios, grid cells) and every
# picture (role=img) in `root` that is shown: each scrolled into the middle of every
# scrolling ancestor (the notebook, the explorer's own box), one frame for the layout to
# settle, then measured against the boxes that clip it (CLIPPING). One call for all of them.
MEASURE_EACH = (
    """
async (root) => {
  const clipping = """
    + CLIPPING.strip()
    + """;
  const selector = "input, button, [role=radio], [role=gridcell], select, textarea, "
      + "[tabindex='0'], [role=img]";
  // Rendered as Playwright's isVisible() has it: a non-empty box, not visibility: hidden.
  const shown = (e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
  };
  const found = [...root.querySelectorAll(selector)].filter(shown);
  const out = [];
  for (const el of found) {
    el.scrollIntoView({block: 'center', inline: 'center'});
    await new Promise((r) => requestAnimationFrame(r));
    out.push({...clipping(el), picture: el.getAttribute('role') === 'img'});
  }
  return out;
}
"""
)


def zoom_walk(lab, selector: str, tag: str) -> dict:
    """At 350 x 450 CSS pixels: each control of the first ``selector`` scrolled into view lies
    inside every box that clips it; pictures (role=img) inside it or reachable by scrolling."""
    page = lab.page
    size = page.viewport_size
    page.set_viewport_size(ZOOM_VIEWPORT)
    problems, checked, closed_sidebar = [], 0, False
    try:
        # JupyterLab's file browser fills a 350-pixel window: a learner closes it (a click on
        # its icon in the left bar), as here. JupyterLab's own layout is not the course's.
        left = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        closed_sidebar = left.count() > 0
        if closed_sidebar:
            left.first.click()
        page.wait_for_function(
            "(w) => window.innerWidth === w && !document.querySelector("
            "'#jp-left-stack:not(.lm-mod-hidden)')",
            arg=ZOOM_VIEWPORT["width"],
            timeout=KEY_TIMEOUT,
        )
        root = page.locator(f"{PANEL} {selector}").first
        root.scroll_into_view_if_needed()
        page.screenshot(path=shot(f"{tag}_zoom200_top.png"))
        for geometry in root.evaluate(MEASURE_EACH):
            e, box = geometry["el"], geometry["box"]
            inside = (
                e["left"] >= box["left"] - 1
                and e["right"] <= box["right"] + 1
                and e["top"] >= box["top"] - 1
                and e["bottom"] <= box["bottom"] + 1
            )
            wider = e["right"] - e["left"] > box["right"] - box["left"]
            if geometry["picture"] and wider:
                # Reachable to the far edge by scrolling sideways in a clipping ancestor.
                inside = geometry["scrollsSideways"]
            if not inside:
                problems.append(f"{geometry['name']!r}: {e} outside {box}")
            checked += 1
        root.scroll_into_view_if_needed()
        page.screenshot(path=shot(f"{tag}_zoom200.png"))
        width = page.evaluate("() => window.innerWidth")
    finally:
        page.set_viewport_size(size)
        if closed_sidebar:
            page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab").first.click()
    assert width == ZOOM_VIEWPORT["width"], width
    assert checked >= 5, f"only {checked} controls found in {selector}"
    assert not problems, f"{tag} at 200 %: cut off or unreachable:\n  " + "\n  ".join(problems)
    return {"controls": checked}
