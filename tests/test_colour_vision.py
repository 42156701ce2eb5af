"""The course's colours under simulated colour-vision deficiency (issue 19).

Each colour is simulated as a person with protanopia, deuteranopia or tritanopia (the full,
dichromat end of each) would see it, with the matrices of Machado, Oliveira & Fernandes (2009),
"A physiologically-based model for simulation of color vision deficiency", IEEE TVCG 15(6),
doi:10.1109/TVCG.2009.113, severity 1.0, applied to linear sRGB. (The same published matrices as
colorspacious 1.1.2's ``cvd.py``; written out here rather than adding a dependency for 9 numbers
each.) Lightness is CIELAB L* (D65), colour difference CIEDE2000, contrast WCAG 2.1's ratio of
relative luminances.

What is checked, and why:

- Sequential maps (weights, probabilities: the explorer's heatmap and bars, every lesson's
  ``plot_heatmap``): lightness must rise with the value under every simulation, so that the
  order of two cells can be read without hue. As shipped (8-bit colours), L* may dip between
  neighbouring entries by a rounding step (up to 0.14 measured, cividis with tritanopia); a dip
  below half a just-noticeable lightness difference (about 1 L*) cannot be seen, so 0.5 is
  allowed, and every tenth of the scale must gain at least 3 L* (three just-noticeable steps:
  values 0.1 of the range apart stay ordered by lightness).
- The diverging map (signed matrices): lightness rises from either end to the white middle
  (|value| reads as darkness; the same 3 L* per tenth of the whole range, so per fifth of each
  half) and the two signs keep different hues: a value and its negative,
  both at least a fifth of the way from 0 to the map's end, differ by CIEDE2000 >= 10 (a
  plainly visible difference; normal vision gets 24 there, and 13 a tenth of the way).
- The explorer's selected-query outline (the rectangle around the selected row of its heatmap)
  must stand out from every colour it can be drawn over (every map colour and the white page)
  with WCAG 2.1's non-text contrast (1.4.11: 3:1) for at least one of its strokes, under every
  simulation. A single coloured stroke cannot: some map colour always has its luminance.

The colour maps are found in the source (``cmap=...`` in the lessons and helpers, plus
``plot_heatmap``'s default and ``DIVERGING_CMAP``), so a new map in a lesson is checked too.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from helpers import plots
from helpers.explorer.widget import AttentionExplorer

ROOT = Path(__file__).resolve().parents[1]

# Machado et al. (2009), severity 1.0: linear RGB in -> linear RGB as the dichromat sees it.
MACHADO_2009 = {
    "protanopia": [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ],
    "deuteranopia": [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ],
    "tritanopia": [
        [1.255528, -0.076749, -0.178779],
        [-0.078411, 0.930809, 0.147602],
        [0.004733, 0.691367, 0.303900],
    ],
}
VISIONS = ["normal", *MACHADO_2009]

# linear sRGB -> CIE XYZ (D65), IEC 61966-2-1.
SRGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
WHITE_XYZ = SRGB_TO_XYZ @ np.ones(3)

LEVELS = 255  # the explorer's palette has 255 colours for weights 0..1; a figure's PNG, 256
MAX_QUANTISATION_DIP = 0.5  # L*: half a just-noticeable difference
MIN_RISE_PER_TENTH = 3.0  # L*
SIGN_FROM = 0.2  # of the half-range, from the middle
MIN_SIGN_DIFFERENCE = 10.0  # CIEDE2000
NON_TEXT_CONTRAST = 3.0  # WCAG 2.1 SC 1.4.11


# --------------------------------------------------------------------------- colour science


def to_linear(srgb) -> np.ndarray:
    c = np.asarray(srgb, dtype=float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def simulate(srgb, vision: str) -> np.ndarray:
    """Linear RGB of ``srgb`` (values 0..1, shape (..., 3)) as seen with ``vision``."""
    linear = to_linear(srgb)
    if vision == "normal":
        return linear
    return np.clip(linear @ np.asarray(MACHADO_2009[vision]).T, 0.0, 1.0)


def lab(linear) -> np.ndarray:
    """CIELAB (D65) of linear RGB."""
    xyz = np.asarray(linear) @ SRGB_TO_XYZ.T / WHITE_XYZ
    delta = 6 / 29
    f = np.where(xyz > delta**3, np.cbrt(xyz), xyz / (3 * delta**2) + 4 / 29)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])],
        axis=-1,
    )


def ciede2000(lab1, lab2) -> np.ndarray:
    """CIEDE2000 colour difference (Sharma, Wu & Dalal 2005), kL = kC = kH = 1."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=float), -1, 0)
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    chroma = c1p * c2p != 0
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(chroma, dh, 0.0)
    d_l, d_c = L2 - L1, c2p - c1p
    d_h = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_mean, cp_mean = (L1 + L2) / 2, (c1p + c2p) / 2
    h_sum = h1p + h2p
    h_mean = np.where(
        ~chroma,
        h_sum,
        np.where(
            np.abs(h1p - h2p) <= 180, h_sum / 2, np.where(h_sum < 360, h_sum + 360, h_sum - 360) / 2
        ),
    )
    t = (
        1
        - 0.17 * np.cos(np.radians(h_mean - 30))
        + 0.24 * np.cos(np.radians(2 * h_mean))
        + 0.32 * np.cos(np.radians(3 * h_mean + 6))
        - 0.20 * np.cos(np.radians(4 * h_mean - 63))
    )
    d_theta = 30 * np.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_mean**7 / (cp_mean**7 + 25.0**7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    return np.sqrt(
        (d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h)
    )


def luminance(linear) -> np.ndarray:
    return np.asarray(linear) @ SRGB_TO_XYZ[1]


def contrast(linear1, linear2) -> np.ndarray:
    """WCAG 2.1 contrast ratio of two linear RGB colours (1..21)."""
    y1, y2 = luminance(linear1), luminance(linear2)
    return (np.maximum(y1, y2) + 0.05) / (np.minimum(y1, y2) + 0.05)


def hex_to_srgb(colour: str) -> np.ndarray:
    colour = colour.lstrip("#")
    if len(colour) == 3:
        colour = "".join(c * 2 for c in colour)
    return np.array([int(colour[i : i + 2], 16) for i in (0, 2, 4)]) / 255


def shipped(cmap: str, levels: int = LEVELS) -> np.ndarray:
    """``levels`` colours of matplotlib map ``cmap``, rounded to 8 bits as drawn (sRGB 0..1)."""
    rgb = matplotlib.colormaps[cmap](np.linspace(0, 1, levels))[:, :3]
    return np.round(rgb * 255) / 255


def test_the_colour_science_matches_published_values():
    # sRGB white is L* 100, black 0; mid-grey #777777 is L* 50.0 (a standard check value).
    assert lab(to_linear([1, 1, 1]))[0] == pytest.approx(100, abs=1e-3)
    assert lab(to_linear(hex_to_srgb("#777777")))[0] == pytest.approx(50.0, abs=0.1)
    # Sharma, Wu & Dalal (2005), Table 1, pairs 1, 7 and 17.
    pairs = [
        ((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
        ((50, 0, 0), (50, -1, 2), 2.3669),
        ((50, 2.5, 0), (73, 25, -18), 27.1492),
    ]
    for one, two, expected in pairs:
        assert ciede2000(np.array(one), np.array(two)) == pytest.approx(expected, abs=1e-4)
    # WCAG: black on white is 21:1.
    assert contrast(to_linear([0, 0, 0]), to_linear([1, 1, 1])) == pytest.approx(21)
    # A dichromat's matrix maps grey to grey (each row sums to 1).
    for vision in MACHADO_2009:
        grey = simulate([0.5, 0.5, 0.5], vision)
        assert grey == pytest.approx(to_linear([0.5] * 3), abs=2e-6)


# --------------------------------------------------------------------------- the maps


def course_colour_maps() -> tuple[set[str], set[str]]:
    """(sequential, diverging) maps the course draws with: ``plot_heatmap``'s default, the
    signed matrices' ``DIVERGING_CMAP`` and every ``cmap="..."`` in the lessons and helpers."""
    sources = [*ROOT.glob("solutions/[0-9][0-9]_*.py"), *ROOT.glob("src/helpers/*.py")]
    named = {
        m
        for path in sources
        for m in re.findall(r"""cmap\s*=\s*["']([A-Za-z0-9_]+)["']""", path.read_text())
    }
    default = inspect.signature(plots.plot_heatmap).parameters["cmap"].default
    diverging = {plots.DIVERGING_CMAP}
    return ({default} | named) - diverging, diverging


SEQUENTIAL, DIVERGING = course_colour_maps()


def test_the_course_uses_the_maps_this_test_checks():
    assert "viridis" in SEQUENTIAL, SEQUENTIAL  # the explorer, the grid, plot_heatmap
    assert DIVERGING == {"RdBu_r"}, DIVERGING
    for name in SEQUENTIAL | DIVERGING:
        assert name in matplotlib.colormaps, f"{name!r} is not a matplotlib colour map"


def test_the_explorer_draws_with_viridis():
    """The heatmap's colour bar is the palette the cells are painted from: viridis."""
    values = widget_html(AttentionExplorer().widget)
    stops = [c for v in values for c in re.findall(r'stop-color="(#[0-9a-fA-F]{6})"', v)]
    assert len(stops) >= 2, "no colour bar (SVG gradient stops) in the explorer's widgets"
    viridis = {
        f"#{r:02x}{g:02x}{b:02x}" for r, g, b in np.rint(shipped("viridis") * 255).astype(int)
    }
    assert {s.lower() for s in stops} <= viridis, f"explorer colours outside viridis: {stops}"


def lightness(colours: np.ndarray, vision: str) -> np.ndarray:
    return lab(simulate(colours, vision))[:, 0]


def rising_lightness_problems(L: np.ndarray, parts: int = 10) -> list[str]:
    """What breaks "lightness rises along ``L``": a visible dip, or one of ``parts`` equal
    parts of the scale gaining less than MIN_RISE_PER_TENTH."""
    problems = []
    dips = -np.diff(L)
    if dips.max() > MAX_QUANTISATION_DIP:
        i = int(dips.argmax())
        problems.append(f"L* falls by {dips.max():.2f} at {i / (len(L) - 1):.3f} of the scale")
    bounds = np.rint(np.linspace(0, len(L) - 1, parts + 1)).astype(int)
    rises = np.diff(L[bounds])
    if rises.min() < MIN_RISE_PER_TENTH:
        k = int(rises.argmin())
        problems.append(
            f"L* rises only {rises.min():.2f} from {k / parts:.1f} to {(k + 1) / parts:.1f} "
            "of the scale"
        )
    return problems


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("cmap", sorted(SEQUENTIAL))
def test_sequential_maps_rise_in_lightness(cmap, vision):
    for levels in (LEVELS, 256):
        L = lightness(shipped(cmap, levels), vision)
        problems = rising_lightness_problems(L)
        print(
            f"{cmap}, {vision}, {levels} levels: L* {L[0]:.1f} -> {L[-1]:.1f}, per tenth "
            f"{np.round(np.diff(L[np.rint(np.linspace(0, levels - 1, 11)).astype(int)]), 1)}"
        )
        assert not problems, f"{cmap} seen with {vision}: " + "; ".join(problems)


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("cmap", sorted(DIVERGING))
def test_the_diverging_map_reads_as_size_by_lightness_and_sign_by_hue(cmap, vision):
    colours = shipped(cmap, LEVELS)  # odd: the middle entry is the map's centre
    middle = LEVELS // 2
    L = lightness(colours, vision)
    for half, side in ((L[: middle + 1], "negative"), (L[middle:][::-1], "positive")):
        problems = rising_lightness_problems(half, parts=5)
        assert not problems, f"{cmap} with {vision}, {side} half toward 0: " + "; ".join(problems)
    seen = lab(simulate(colours, vision))
    t = np.arange(int(np.ceil(SIGN_FROM * middle)), middle + 1)
    difference = ciede2000(seen[middle + t], seen[middle - t])
    print(
        f"{cmap}, {vision}: L* {L[0]:.1f} | {L[middle]:.1f} | {L[-1]:.1f}; +v vs -v CIEDE2000 "
        f"min {difference.min():.1f} at |v| = {t[difference.argmin()] / middle:.2f} of the range"
    )
    assert difference.min() >= MIN_SIGN_DIFFERENCE, (
        f"{cmap} with {vision}: a value and its negative, {t[difference.argmin()] / middle:.2f} "
        f"of the range from 0, differ by only {difference.min():.1f} (CIEDE2000)"
    )


# --------------------------------------------------------------------------- the outline


def widget_html(widget) -> list[str]:
    """Every HTML string in a widget tree (``value`` of each widget, through ``children``)."""
    found, todo = [], [widget]
    while todo:
        w = todo.pop()
        if isinstance(getattr(w, "value", None), str):
            found.append(w.value)
        todo.extend(getattr(w, "children", ()) or ())
    return found


def outline_strokes() -> list[str]:
    """The stroke colours of the selected-query outline in the explorer's heatmap: every
    ``stroke`` of an unfilled shape in the SVG layer that carries ``data-query``."""
    strokes = set()
    for value in widget_html(AttentionExplorer().widget):
        for svg in re.findall(r"<svg[^>]*data-query=.*?</svg>", value, flags=re.S):
            for shape in re.findall(r"<(?:rect|path|polyline|polygon)\b[^>]*>", svg):
                if re.search(r'fill="none"', shape):
                    strokes.update(re.findall(r'stroke="(#[0-9a-fA-F]{3,6})"', shape))
    return sorted(strokes)


@pytest.mark.parametrize("vision", VISIONS)
def test_the_selected_query_outline_stands_out_from_every_colour_under_it(vision):
    strokes = outline_strokes()
    assert strokes, "no outline (an unfilled shape with a stroke) in the data-query layer"
    under = np.vstack([shipped("viridis"), hex_to_srgb(plots.MASKED_GREY), [1.0, 1.0, 1.0]])
    seen_under = simulate(under, vision)
    best = np.max([contrast(simulate(hex_to_srgb(s), vision), seen_under) for s in strokes], axis=0)
    worst = int(best.argmin())
    hue = np.max(
        [ciede2000(lab(simulate(hex_to_srgb(s), vision)), lab(seen_under)) for s in strokes], axis=0
    )
    print(
        f"outline {strokes}, {vision}: lowest best-stroke contrast {best.min():.2f}:1 "
        f"(over colour {worst} of {len(under)}), lowest CIEDE2000 {hue.min():.1f}"
    )
    assert best.min() >= NON_TEXT_CONTRAST, (
        f"seen with {vision}, the selected-query outline (strokes {strokes}) has only "
        f"{best.min():.2f}:1 contrast with the colour "
        f"#{''.join(f'{round(c * 255):02x}' for c in under[worst])} (WCAG 1.4.11 asks 3:1): "
        "draw it with a dark and a light stroke side by side, one of which always contrasts"
    )


def test_text_on_every_heatmap_colour_and_the_query_label_reach_4_5_to_1():
    """WCAG AA for normal text: the numbers on every viridis cell (black or white, by the
    explorer's TEXT_ON) and the selected query's label on white."""
    from helpers.explorer import colours

    cells = to_linear(colours.PALETTE[: colours.N_COLOURS] / 255)
    text = to_linear(np.array([hex_to_srgb(c) for c in colours.TEXT_ON]))
    ratios = contrast(cells, text)
    worst = int(np.argmin(ratios))
    assert ratios[worst] >= 4.5, f"{ratios[worst]:.2f}:1 at palette index {worst}"
    label = contrast(to_linear(hex_to_srgb(colours.HIGHLIGHT_TEXT)), to_linear(np.ones(3)))
    assert label >= 4.5, f"the query label: {label:.2f}:1 on white"
