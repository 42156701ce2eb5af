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
from explorer_walks import PANEL, cdp_ax, kernel_caught_up, kernel_print, kernel_stopped, shot

# Each lesson's sliders, by their names, in page order.
SLIDERS = {
    "00": ["number of tokens"],
    "01": ["dimension", "position"],
    "03": ["d_k"],
    "04": ["temperature"],  # the explorer's
    "07": ["sequence length"],
    "08": ["training step"],
    "11": ["tokens in front"],
}
SLIDER_RATIO = 1.5  # CURRICULUM.md: a slider's redraw within 1.5 x the do-nothing round trip
# Timed moves per lesson. Both series are a frame or two each (10-35 ms here), so single
# times scatter by a frame either way and a median of 12 moved the ratio by up to 0.4 between
# runs of the same lesson (lesson 03: 1.10 to 1.62); 20 halve that scatter's effect.
LATENCY_MOVES = 20
SAY_WAIT_MS = 700  # slider.js's status line speaks 400 ms after the last move
MOVE_TIMEOUT_S = 15.0

# What a slider row shows now, and a fingerprint of what it drives: the <img> sources (a new
# blob: URL at each update) or the canvas's pixels, and the text of its output outside the
# slider row.
STATE = """
(row) => {
  const input = row.querySelector('input[type="range"]');
  const out = row.closest('.jp-OutputArea-output') || row.parentElement;
  // The figure as shown: its <img>, or the canvas a held picture is drawn on (the <img>
  // hidden meanwhile).
  const images = [...out.querySelectorAll('img, canvas.course-film')]
    .filter((i) => !row.contains(i) && i.getClientRects().length > 0);
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
    drives: images.map((i) => (i.src || i.toDataURL())).join(' ') + '|' + text,
    alt: images.length ? images[0].title : null,
    status: row.querySelector('[role="status"]').textContent,
    // What a screen reader hears of a move's outcome: the slider's status line or, in the
    // explorer, its message line (a live region of its own, which says the temperature).
    outcome: (row.closest('.attention-explorer')?.querySelector('.explorer-message')
              || row.querySelector('[role="status"]')).textContent,
    steps: [...row.querySelectorAll('button')].map((b) => b.getAttribute('aria-label')),
    stepsOff: [...row.querySelectorAll('button')].map((b) => b.getAttribute('aria-disabled')),
    focusedStep: [...row.querySelectorAll('button')].indexOf(document.activeElement),
  };
}
"""


def state(row) -> dict:
    return row.evaluate(STATE)


def wait_for_move(row, before: dict, expected, what: str) -> dict:
    """Wait until the slider shows ``expected`` (a value, or a test of the value) and what it
    drives has changed."""
    deadline = time.monotonic() + MOVE_TIMEOUT_S
    wanted = expected if callable(expected) else (lambda value: value == expected)
    while True:
        now = state(row)
        if (
            wanted(now["value"])
            and now["drives"] != before["drives"]
            and (now["alt"] is None or now["alt"] != before["alt"])
        ):
            return now
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: expected value {expected} and a new picture within {MOVE_TIMEOUT_S} s;"
                f" the slider shows {now['value']} ({now['valuetext']!r}), the picture "
                f"{'changed' if now['drives'] != before['drives'] else 'did not change'}, its "
                f"text alternative {'did not' if now['alt'] == before['alt'] else 'did'} change"
            )
        row.page.wait_for_timeout(50)


def wait_for_outcome(row, before: str, what: str) -> dict:
    """Wait until the move's outcome is said anew (the slider's status line, or the explorer's
    message line)."""
    deadline = time.monotonic() + MOVE_TIMEOUT_S
    while not (now := state(row))["outcome"] or now["outcome"] == before:
        assert time.monotonic() < deadline, f"{what}: the outcome still says {before!r}"
        row.page.wait_for_timeout(50)
    return now


# The explorer around a slider (lesson 04's temperature): marked pending (its map drawn ahead
# of the kernel), and the temperature of the map it shows.
EXPLORER_PENDING = (
    "(row) => row.closest('.attention-explorer').classList.contains('explorer-pending')"
)
MAP_TEMPERATURE = """(row) => row.closest('.attention-explorer')
  .querySelector('.explorer-heatmap-map svg').getAttribute('data-temperature')"""


def kernel_slider(lab, tag: str, name: str) -> dict:
    """The kernel's side of a slider: its index, how many indices it has handled (``drawn``),
    and, with pictures held, whether its image's copy is the picture of that index."""
    var = SLIDER_VARS[tag][name]
    out = kernel_print(
        lab,
        f"print({var}.index, {var}.drawn, "
        f"{var}.image.value == {var}.pictures[{var}.index] if {var}.pictures else None)",
    )
    index, drawn, image = out.split()
    return {"index": int(index), "drawn": int(drawn), "image_follows": image}


def busy_kernel(lab, row, slider, tag: str, name: str) -> str:
    """With the kernel stopped, five arrow presses: the slider and its words follow at once (in
    the browser), and so does the picture where the pictures are held in the browser; the
    kernel, once free, handles at most two values (the one sent before it stopped, then the
    last), not five, and ends at the last (its copy of the picture too)."""
    page = lab.page
    held = row.get_attribute("data-pictures") == "held"
    assert held == (tag != "04"), f"lesson {tag} {name}: pictures held: {held}"
    ahead = held or tag == "04"  # the explorer draws its map ahead, from its preview
    slider.focus()
    page.keyboard.press("Home")
    kernel_caught_up(lab)
    page.wait_for_timeout(300)
    start = state(row)
    before = kernel_slider(lab, tag, name)
    assert before["index"] == 0 == start["value"], (before, start["value"])
    presses = min(5, start["max"])
    with kernel_stopped(lab):
        for _ in range(presses):
            page.keyboard.press("ArrowRight")
        page.wait_for_timeout(SAY_WAIT_MS)  # the status line speaks once the slider rests
        meanwhile = state(row)
        assert meanwhile["value"] == presses and meanwhile["readout"] == meanwhile["valuetext"]
        if held:  # the picture (or sentence), its words and the status line: all at once
            assert meanwhile["drives"] != start["drives"], "the held picture did not follow"
            assert meanwhile["status"] and meanwhile["status"] != start["status"], meanwhile
            if meanwhile["alt"] is not None:  # a picture: its text alternative is said
                assert meanwhile["alt"] != start["alt"] and meanwhile["status"] == meanwhile["alt"]
        elif ahead:  # the explorer's map at the new temperature, its bars marked pending
            assert meanwhile["drives"] != start["drives"], "the map did not follow"
            assert row.evaluate(EXPLORER_PENDING), "the explorer is not marked pending"
        else:
            assert meanwhile["drives"] == start["drives"], "the picture changed with no kernel"
    kernel_caught_up(lab)
    if not ahead:
        wait_for_move(row, start, presses, f"lesson {tag} {name}: after the kernel was free")
    kernel_caught_up(lab)
    page.wait_for_timeout(500)
    kernel_caught_up(lab)
    after = kernel_slider(lab, tag, name)
    handled = after["drawn"] - before["drawn"]
    # A backlog would handle five values; the last value wins with at most two.
    assert 1 <= handled <= 2, f"lesson {tag} {name}: the kernel handled {handled} values"
    assert after["index"] == presses, f"the kernel ended at {after['index']}, not {presses}"
    if held:
        assert after["image_follows"] == "True", "the kernel's copy of the picture is stale"
        assert state(row)["drives"] == meanwhile["drives"], "the kernel redrew the picture"
    if ahead and not held:  # the kernel's map is the one drawn ahead: pending no more
        assert not row.evaluate(EXPLORER_PENDING), "the explorer is still marked pending"
        assert row.evaluate(MAP_TEMPERATURE) == state(row)["valuetext"].removeprefix("T = ")
    return (f"{presses} presses, kernel stopped: "
            + ("the picture followed at once; " if ahead else "")
            + f"the kernel handled {handled} value(s) once free")  # fmt: skip


def step_buttons(lab, row, slider, tag: str, name: str) -> str:
    """Enter on "+" moves one step and says the new value in the status line at once; at the
    end "+" says it is unavailable and keeps the focus (nothing is lost)."""
    page = lab.page
    slider.focus()
    kernel_caught_up(lab)
    s = state(row)
    if s["value"] != 0:
        page.keyboard.press("Home")
        s = wait_for_move(row, s, 0, f"lesson {tag} {name}: Home before the buttons")
    kernel_caught_up(lab)
    s = state(row)
    plus = row.locator("button").nth(1)
    plus.focus()
    page.keyboard.press("Enter")
    assert state(row)["value"] == 1  # at once
    # Said once the slider rests (the new value, or its picture's text alternative).
    page.wait_for_timeout(SAY_WAIT_MS)
    said = state(row)
    assert said["status"] and said["status"] != s["status"], said
    s = wait_for_move(row, s, 1, f"lesson {tag} {name}: Enter on +")
    slider.focus()
    page.keyboard.press("End")
    s = wait_for_move(row, s, s["max"], f"lesson {tag} {name}: End before + at the end")
    plus.focus()
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    end = state(row)
    assert end["value"] == s["max"] and end["stepsOff"] == ["false", "true"], end
    assert end["focusedStep"] == 1, f"lesson {tag} {name}: + at the end lost the focus"
    return "Enter on +: one step, said at once; at the end + is unavailable and keeps the focus"


def walk_slider(lab, row, name: str, tag: str) -> dict:

    page = lab.page
    row.scroll_into_view_if_needed()
    s = state(row)
    assert s["label"] == name, f"lesson {tag}: slider labelled {s['label']!r}, not {name!r}"
    assert s["steps"] == [f"decrease {name}", f"increase {name}"], s["steps"]
    assert s["status"] == "", "the status line speaks before anything moved"
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
    alt_before, outcome_before = s["alt"], s["outcome"]
    # Page Up: Chromium moves a range input by a tenth of its range (at least one step).
    top = s["max"]
    page_up = lambda v: 1 < v <= min(1 + max(1, -(-top // 10)), top)  # noqa: E731
    moves = []
    for key, expected in (
        ("ArrowRight", 1),
        ("PageUp", page_up),
        ("End", top),
        ("ArrowLeft", top - 1),
    ):
        if top < 2 and key == "PageUp":
            continue  # two options: the arrow already reached the end
        page.keyboard.press(key)
        s = wait_for_move(row, s, expected, f"lesson {tag} {name}: {key}")
        assert s["valuetext"] == s["readout"] and s["valuetext"], s
        assert s["focused"], f"lesson {tag} {name}: {key} moved the focus off the slider"
        if s["alt"] is not None:  # the picture's text alternative follows the slider
            assert s["alt"] and s["alt"] != alt_before, (
                f"lesson {tag} {name}: stale alt {s['alt']!r}"
            )
            alt_before = s["alt"]
        s = wait_for_outcome(row, outcome_before, f"lesson {tag} {name}: {key}")
        outcome_before = s["outcome"]
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
    moves.append(busy_kernel(lab, row, slider, tag, name))
    moves.append(step_buttons(lab, row, slider, tag, name))
    # The slider with what it drives (its figure, drawn on the canvas by now).
    output = row.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')][1]")
    (output if output.count() else row).screenshot(
        path=shot(f"{tag}_slider_{name.replace(' ', '_')}.png")
    )
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
    minus, plus = row.locator("button").nth(0), row.locator("button").nth(1)
    now = state(row)
    at_end = now["value"] == now["max"]
    steps = [minus, plus] if at_end else [plus, minus]  # each click a new value
    drives = row.evaluate_handle(
        "(r) => { const out = r.closest('.jp-OutputArea-output');"
        " return out.querySelector('.explorer-heatmap-map')"
        " || out.querySelector('canvas.course-film')"
        " || [...out.querySelectorAll('img')].find((i) => !r.contains(i))"
        " || [...out.querySelectorAll('.widget-label')].find((l) => !r.contains(l)); }"
    )
    timed = interleaved_latency(
        lab,
        {
            "slider": (drives, [b.element_handle() for b in steps]),
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
    print(f"\n  lesson {tag}: slider step {slider_ms:.1f} ms, {ratio:.2f}x the do-nothing "
          f"round trip ({noop_ms:.1f} ms; target <= {SLIDER_RATIO}; {out})"
          )  # fmt: skip
    assert ratio <= SLIDER_RATIO, (
        f"lesson {tag}: a slider step takes {ratio:.2f}x the do-nothing round trip"
        f" (target <= {SLIDER_RATIO}); every time in {out}"
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
    "00": "n_slider.hold_texts(pairs",
    "01": "column_live.film(dim_slider",
    "03": "scale_buttons.observe(film",
    "04": "ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=h, seed=0, query=cat)",
    "07": "h_picker.observe(film",
    "08": "live.film(step_picker",
    "11": "live.film(shift_slider",
}
# Each slider's name in the lesson's code (the kernel's side is read through it).
SLIDER_VARS = {
    "00": {"number of tokens": "n_slider"},
    "01": {"dimension": "dim_slider", "position": "pos_slider"},
    "03": {"d_k": "dk_slider"},
    "04": {"temperature": "ex.parts.temperature"},
    "07": {"sequence length": "n_picker"},
    "08": {"training step": "step_picker"},
    "11": {"tokens in front": "shift_slider"},
}
