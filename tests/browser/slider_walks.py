"""The lessons' sliders (helpers.live.slider), walked on the all-lessons test's own page after
its Run All: each moved with the keyboard (arrow, Page Up, End, Home) and by dragging, each
move checked in the slider (value, value text, readout) and in what it drives (its figure's
pixels, or lesson 00's sentence); read in Chromium's accessibility tree (role slider, its name,
its range); its focus ring seen; then a value change timed to new pixels against the do-nothing
widget's round trip in the same page (CURRICULUM.md: within 1.5 times), written to
``build/browser-latency-sliders-NN.json``. Screenshots of each slider after its walk go to
``build/a11y-walks/``.

The value text: Chromium's DevTools protocol reports a range input's ``valuetext`` as its number
and an ARIA slider's as empty, whatever ``aria-valuetext`` says (Chromium 156, probed on a
plain page), so the words a screen reader hears are read from the input's ``aria-valuetext``,
which the browser passes to the platform's accessibility API.
"""

from __future__ import annotations

import json
import os
import time

from clicks import CLICK_GAP_MS, add_do_nothing_widget, interleaved_latency, timing, write_report
from explorer_walks import PANEL, cdp_ax, shot

# Each lesson's sliders, by their names, in page order.
SLIDERS = {
    "00": ["tokens n"],
    "01": ["dimension", "position"],
    "03": ["d_k"],
    "07": ["sequence length"],
    "08": ["training step"],
}
SLIDER_RATIO = 1.5  # CURRICULUM.md: a slider's redraw within 1.5 x the do-nothing round trip
LATENCY_MOVES = 12
MOVE_TIMEOUT_S = 15.0

# What a slider row shows now, and a fingerprint of what it drives: the <img> sources (a new
# blob: URL at each update) and the text of its output outside the slider row.
STATE = """
(row) => {
  const input = row.querySelector('input[type="range"]');
  const out = row.closest('.jp-OutputArea-output') || row.parentElement;
  const images = [...out.querySelectorAll('img')].filter((i) => !row.contains(i));
  const text = out.textContent.replace(row.textContent, '');
  const style = getComputedStyle(input);
  return {
    value: Number(input.value),
    max: Number(input.max),
    valuetext: input.getAttribute('aria-valuetext'),
    readout: row.querySelector('output').textContent,
    label: input.labels.length ? input.labels[0].textContent : null,
    focused: document.activeElement === input,
    outline: [style.outlineStyle, parseFloat(style.outlineWidth)],
    drives: images.map((i) => i.src).join(' ') + '|' + text,
    steps: [...row.querySelectorAll('button')].map((b) => b.getAttribute('aria-label')),
  };
}
"""


def state(row) -> dict:
    return row.evaluate(STATE)


def wait_for_move(row, before: dict, expected: int, what: str) -> dict:
    """Wait until the slider shows ``expected`` and what it drives has changed."""
    deadline = time.monotonic() + MOVE_TIMEOUT_S
    while True:
        now = state(row)
        if now["value"] == expected and now["drives"] != before["drives"]:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: expected value {expected} and a new picture within {MOVE_TIMEOUT_S} s;"
                f" the slider shows {now['value']} ({now['valuetext']!r}), the picture "
                f"{'changed' if now['drives'] != before['drives'] else 'did not change'}"
            )
        row.page.wait_for_timeout(50)


def walk_slider(lab, row, name: str, tag: str) -> dict:
    page = lab.page
    row.scroll_into_view_if_needed()
    s = state(row)
    assert s["label"] == name, f"lesson {tag}: slider labelled {s['label']!r}, not {name!r}"
    assert s["steps"] == [f"decrease {name}", f"increase {name}"], s["steps"]
    row_id = row.get_attribute("id")
    (node,) = cdp_ax(lab, f"#{row_id}", "slider")
    assert node["name"] == name, f"accessibility tree: slider named {node['name']!r}"
    assert node["properties"]["valuemin"] == 0 and node["properties"]["valuemax"] == s["max"]
    slider = row.locator('input[type="range"]')
    slider.focus()
    page.keyboard.press("Home")  # a known start (from the lesson's own value)
    if s["value"] != 0:
        s = wait_for_move(row, s, 0, f"lesson {tag} {name}: Home")
    s = state(row)
    assert s["focused"] and s["outline"][0] != "none" and s["outline"][1] >= 2, (
        f"lesson {tag} {name}: no visible focus ring ({s['outline']})"
    )
    page_step = max(1, round(s["max"] / 10)) if s["max"] >= 10 else 1
    moves = []
    for key, expected in (
        ("ArrowRight", 1),
        ("PageUp", min(1 + page_step, s["max"])),
        ("End", s["max"]),
        ("ArrowLeft", s["max"] - 1),
    ):
        if expected == s["value"]:
            continue  # a two-option slider: PageUp may already be at the end
        page.keyboard.press(key)
        s = wait_for_move(row, s, expected, f"lesson {tag} {name}: {key}")
        assert s["valuetext"] == s["readout"] and s["valuetext"], s
        moves.append(f"{key} -> {s['valuetext']}")
    # A drag from the left end to 70 % of the track: the value follows the pointer.
    page.keyboard.press("Home")
    s = wait_for_move(row, s, 0, f"lesson {tag} {name}: Home before the drag")
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 4, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.7 * box["width"], y, steps=12)
    page.mouse.up()
    deadline = time.monotonic() + MOVE_TIMEOUT_S
    while (now := state(row))["value"] == 0 or now["drives"] == s["drives"]:
        assert time.monotonic() < deadline, f"lesson {tag} {name}: the drag moved nothing"
        page.wait_for_timeout(50)
    # The last value wins: once the kernel is done, what it drew is what the slider shows.
    page.wait_for_timeout(1_000)
    settled = state(row)
    moves.append(f"drag -> {settled['valuetext']}")
    row.screenshot(path=shot(f"{tag}_slider_{name.replace(' ', '_')}.png"))
    return {"name": name, "moves": moves}


def sliders_walk_and_latency(lab, tag: str, quiet) -> dict:
    """Every slider of lesson ``tag``, then the first one's value changes timed (its + and -
    buttons, one step each) against the do-nothing widget added below it."""
    rows = lab.page.locator(f"{PANEL} .course-slider")
    names = SLIDERS[tag]
    assert rows.count() == len(names), f"lesson {tag}: {rows.count()} sliders, not {len(names)}"
    walked = [walk_slider(lab, rows.nth(k), name, tag) for k, name in enumerate(names)]
    row = rows.nth(0)
    label, button = add_do_nothing_widget(lab, after=SLIDER_CELL[tag])
    quiet()
    row.evaluate("e => e.scrollIntoView({block: 'start'})")
    lab.page.wait_for_timeout(200)
    slider = row.locator('input[type="range"]')
    slider.focus()
    lab.page.keyboard.press("Home")
    lab.page.wait_for_timeout(1_000)
    plus, minus = row.locator("button").nth(1), row.locator("button").nth(0)
    drives = row.evaluate_handle(
        "(r) => { const out = r.closest('.jp-OutputArea-output');"
        " return [...out.querySelectorAll('img')].find((i) => !r.contains(i))"
        " || [...out.querySelectorAll('.widget-label')].find((l) => !r.contains(l)); }"
    )
    timed = interleaved_latency(
        lab,
        {
            "slider": (drives, [plus.element_handle(), minus.element_handle()]),
            "noop": (label, [button]),
        },
        LATENCY_MOVES,
    )
    (slider_ms, slider_all), (noop_ms, noop_all) = timed["slider"], timed["noop"]
    ratio = slider_ms / noop_ms
    report = {
        "lesson": tag,
        "slider": names[0],
        "moves": LATENCY_MOVES,
        "gap_between_moves_ms": CLICK_GAP_MS,
        "value_change_to_new_pixels_ms": timing(slider_ms, slider_all),
        "do_nothing_widget_in_the_lesson_ms": timing(noop_ms, noop_all),
        "ratio": round(ratio, 2),
        "target_ratio": SLIDER_RATIO,
        "load_average": [round(v, 1) for v in os.getloadavg()],
        "walks": walked,
    }
    out = write_report(f"browser-latency-sliders-{tag}.json", report)
    assert ratio <= SLIDER_RATIO, (
        f"lesson {tag}: a slider step took {ratio:.2f}x the do-nothing widget's round trip "
        f"(target <= {SLIDER_RATIO}); every time in {out}"
    )
    return {
        "sliders": [w["name"] for w in walked],
        "slider_ms": round(slider_ms, 1),
        "noop_ms": round(noop_ms, 1),
        "ratio": round(ratio, 2),
        "moves": json.dumps([w["moves"] for w in walked]),
    }


# The source line of the cell that shows each lesson's first slider (the do-nothing widget's
# cell goes right below it).
SLIDER_CELL = {
    "00": "n_slider.observe(show_pairs",
    "01": "dim_slider.observe(update",
    "03": "dk_slider.observe(update",
    "07": "n_picker.observe(update",
    "08": "step_picker.observe(update",
}
