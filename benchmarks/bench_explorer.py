"""How long the attention explorer takes to react, kernel side, against the matplotlib way.

    .venv/bin/python benchmarks/bench_explorer.py [--repeats 40] [--no-kernel]

For each kind of update (a click on a token, the head selector, the causal toggle, the
temperature slider) it times the explorer's handler from the call to the moment the new
SVG/PNG strings are set on the widgets (what the browser then receives), median over the
repeats, cycling through the controls' values. A token click only records the index the
browser sends (the browser already holds every query's pictures); the other controls, called
from code, draw every query's pictures at once (from the browser, the query on screen first).
The baseline is the usual notebook pattern for the same heatmap: an ``ipywidgets.Output``,
``clear_output(wait=True)``, a new pyplot figure drawn with ``helpers.plots.plot_heatmap`` and
rendered to PNG (what the inline backend does).

By default the measurements run inside a fresh IPython kernel (started with jupyter_client),
as in a notebook: widget changes are serialised and sent as comm messages and the Output widget
captures the figure, so both sides pay for their messages. No browser is attached; the
browser's share (click to new pixels) is measured by the browser tests. ``--no-kernel`` runs
the same measurements in this process instead (widget messages then go nowhere).

It also times lesson 09's grid on a new sentence: the 72 ``map_svg_of`` calls that give the
browser every map's layer (skipped when the model's files are missing: ``make real-model``),
the encoding of the heatmap's cell picture (a palette PNG, made once per new
weight matrix) by the explorer's hand-written encoder against Pillow's ``Image.save`` at the
same zlib level, and ``static_png()`` with a 100,000-character word in the sentence.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
import timeit

import ipywidgets as widgets
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, display
from PIL import Image as PILImage

import helpers
from helpers.explorer import colours
from helpers.explorer.widget import AttentionExplorer
from helpers.plots import plot_heatmap


def median_ms(fn, repeats: int) -> float:
    times = []
    for k in range(repeats):
        start = time.perf_counter()
        fn(k)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def in_kernel(repeats: int) -> None:
    """Run :func:`measure` in a fresh ipykernel and print what it prints."""
    from course_grader.isolation.ipc import (
        IpcKernelManager,  # Unix sockets: no TCP-warning, no port race
    )

    km = IpcKernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        code = (
            "import runpy; runpy.run_path("
            f"{__file__!r}, run_name='__bench_in_kernel__')['measure']({repeats})"
        )
        reply = kc.execute_interactive(
            code,
            timeout=600,
            output_hook=lambda msg: _print_stream(msg),
        )
        if reply["content"]["status"] != "ok":
            raise SystemExit("the benchmark failed inside the kernel")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _print_stream(msg) -> None:
    if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
        print(msg["content"]["text"], end="")
    elif msg["msg_type"] == "error":
        print("\n".join(msg["content"]["traceback"]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--no-kernel", action="store_true")
    args = parser.parse_args()
    if args.no_kernel:
        measure(args.repeats)
    else:
        in_kernel(args.repeats)


def measure(repeats: int) -> None:
    """Time the explorer's updates and the Output + pyplot baseline; print the medians."""
    import sys

    where = "inside an IPython kernel" if "ipykernel" in sys.modules else "outside a kernel"

    ex = AttentionExplorer(helpers.RUNNING_SENTENCE, n_heads=2, seed=0, query=1)
    n = len(ex.tokens)
    # A new temperature every time, so the slider's updates are never served from the cache.
    temperatures = np.geomspace(0.1, 10, 4 * repeats + 1)
    # Warm up once (first-use imports and caches of numpy/zlib).
    ex.select_query(0)
    ex.set_temperature(1.0)

    updates = {
        # What the browser sends after a click: the index. It already shows that query's
        # pictures (jslink), so the kernel only records it.
        "click a token": lambda k: setattr(ex.parts.tokens, "index", k % n),
        "head selector": lambda k: ex.set_head(k % ex.n_heads),
        "causal toggle": lambda k: ex.set_causal(k % 2 == 0),
        "temperature slider": lambda k: ex.set_temperature(float(temperatures[k])),
    }
    results = {name: median_ms(fn, repeats) for name, fn in updates.items()}

    out = widgets.Output()
    tokens = ex.tokens

    def naive(k: int) -> None:
        ex.select_query(k % n)
        out.clear_output(wait=True)
        with out:
            fig, ax = plt.subplots(figsize=(5, 4))
            plot_heatmap(
                ex.weights,
                tokens,
                tokens,
                ax=ax,
                vmin=0,
                vmax=1,
                title="rows = query, columns = key",
            )
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")
            display(Image(buffer.getvalue()))
            plt.close(fig)

    naive_ms = median_ms(naive, repeats)
    click_ms = results["click a token"]

    print(
        f"attention explorer, kernel-side update time {where}, median of {repeats} repeats "
        f"(n = {n} tokens, h = {ex.n_heads})"
    )
    for name, ms in results.items():
        print(f"  {name:<38} {ms:7.2f} ms")
    print(f"  {'baseline (Output + new pyplot figure)':<38} {naive_ms:7.2f} ms")
    worst = max(results.values())
    print(
        f"speed-up: click {naive_ms / click_ms:.0f}x, slowest control "
        f"{naive_ms / worst:.0f}x faster than the baseline; target <= 15 ms: "
        f"{'met' if worst <= 15 else 'NOT met'}"
    )

    long_ex = AttentionExplorer(" ".join(["the cat sat on the mat"] * 11), n_heads=2)
    n_long = len(long_ex.tokens)
    long_ms = median_ms(lambda k: long_ex.set_temperature(float(temperatures[-1 - k])), repeats)
    long_click = median_ms(lambda k: setattr(long_ex.parts.tokens, "index", k % n_long), repeats)
    print(f"  at n = {n_long} tokens: click {long_click:.2f} ms, temperature {long_ms:.2f} ms")
    grid_maps(repeats)
    png_encoders()
    start = time.perf_counter()
    AttentionExplorer("the " + "a" * 100_000 + " sat", causal=True, query=1).static_png()
    print(f"  static_png() with a 100,000-character word: {time.perf_counter() - start:.2f} s")


def grid_maps(repeats: int) -> None:
    """Lesson 09's grid after a new sentence: every map's layer (``map_svg_of``, 72 calls, the
    weights read from the sentence's forward pass); the forward pass itself not timed."""
    from helpers.explorer.grid import RealAttentionExplorer
    from helpers.pretrained import ModelFilesError, load_minilm

    try:
        ex = RealAttentionExplorer("the cat sat on the mat", layer=4, head=5, model=load_minilm())
    except ModelFilesError as error:
        print(f"  lesson 09's 72 maps: skipped ({error})")
        return
    sentences = ["the cat sat on the mat", "attention is all you need, said the paper"]
    times = []
    for k in range(repeats):
        ex.set_sentence(sentences[k % 2])  # a new sentence: nothing of the last one is kept
        start = time.perf_counter()
        for layer in range(ex.n_layers):
            for head in range(ex.n_heads):
                ex.map_svg_of(layer, head)
        times.append(time.perf_counter() - start)
    print(
        f"  lesson 09's grid, a new sentence: 72 maps' layers (map_svg_of) "
        f"{1000 * statistics.median(times):.2f} ms"
    )


def pillow_palette_png(indices: np.ndarray) -> bytes:
    """What the explorer's hand-written encoder makes, made by Pillow (same zlib level 1)."""
    image = PILImage.frombytes("P", indices.shape[::-1], indices.tobytes())
    image.putpalette(colours.PALETTE.tobytes())
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def png_encoders() -> None:
    """Time the cell PNG: hand-written (zlib + chunks) against Pillow, same pixels."""
    rng = np.random.default_rng(0)
    print("  heatmap cell PNG, best of 5 x 200 encodings (hand-written vs Pillow):")
    for n in (6, 64):
        cell = int(min(44, max(6, 300 // n)))  # as AttentionExplorer._cell_size
        weights = rng.dirichlet(np.ones(n), size=n)
        indices = colours.colour_index(weights)
        big = np.repeat(np.repeat(indices, cell, axis=0), cell, axis=1)
        decoded = np.asarray(PILImage.open(io.BytesIO(colours.palette_png(big))))
        assert (decoded == big).all(), "the hand-written PNG does not decode to its pixels"
        us = {}
        for name, encode in (
            ("hand-written", colours.palette_png),
            ("Pillow", pillow_palette_png),
        ):
            runs = timeit.repeat(lambda f=encode, x=big: f(x), number=200, repeat=5)
            us[name] = 1e6 * min(runs) / 200
        print(
            f"    n = {n:2d} ({big.shape[1]} x {big.shape[0]} px): hand-written "
            f"{us['hand-written']:6.0f} us, Pillow {us['Pillow']:6.0f} us "
            f"(Pillow / hand-written = {us['Pillow'] / us['hand-written']:.1f})"
        )


if __name__ == "__main__":
    main()
