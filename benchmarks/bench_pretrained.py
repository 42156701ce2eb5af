"""Lesson 09's real model in NumPy: load time and one forward pass, beside the course's layer.

    .venv/bin/python benchmarks/bench_pretrained.py [--repeats 50]

Targets (CURRICULUM.md, on this machine's 2 cores): load <= 1 s, one forward pass of a
16-token sentence <= 30 ms. Printed beside them, in the same run: the course's seeded 2-head
layer on the running example (``multi_head_attention`` with d_model = 8, h = 2, n = 6), the
attention the earlier lessons time.

* load: a fresh ``MiniLM()`` (read the three files, check their sha256, parse the weights, build
  the tokenizer), median of 5, each in a new Python process so no file cache of ours helps
  beyond the operating system's; the imports before it are printed apart;
* forward: ``model.forward(sentence)`` (tokenize included), median over ``--repeats``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import helpers
from helpers.pretrained import load_minilm

SENTENCE_16 = "The quick brown fox jumps over the lazy dog near the river bank today"
TARGET_LOAD_S, TARGET_FORWARD_MS = 1.0, 30.0

LOAD_ONCE = (
    "import time; t = time.perf_counter(); "
    "from helpers.pretrained import MiniLM; t1 = time.perf_counter(); MiniLM(); "
    "print(t1 - t, time.perf_counter() - t1)"
)


def load_seconds(repeats: int = 5) -> tuple[list[float], list[float]]:
    """(imports, MiniLM()) in a fresh interpreter each time, in seconds."""
    runs = [
        [float(v) for v in subprocess.check_output([sys.executable, "-c", LOAD_ONCE]).split()]
        for _ in range(repeats)
    ]
    return [r[0] for r in runs], [r[1] for r in runs]


def median_ms(fn, repeats: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    repeats = parser.parse_args().repeats

    imports, loads = load_seconds()
    model = load_minilm()
    n = len(model.tokenize(SENTENCE_16))
    forward_ms = median_ms(lambda: model.forward(SENTENCE_16), repeats)
    embed_ms = median_ms(lambda: model.sentence_embedding(SENTENCE_16), repeats)

    # The course's seeded 2-head layer on the running example (lessons 02-06).
    tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
    Z = helpers.build_Z(tokens, helpers.D_MODEL)
    W = helpers.seeded_projections(helpers.D_MODEL, helpers.N_HEADS)
    seeded_ms = median_ms(
        lambda: helpers.multi_head_attention(Z, W["W_Q"], W["W_K"], W["W_V"], W["W_O"]), repeats
    )
    # One real layer's attention alone (12 heads, n tokens, d_k = 32), for scale.
    trace = model.trace(SENTENCE_16)
    Q, K, V = trace.Q[0], trace.K[0], trace.V[0]
    attention_ms = median_ms(lambda: helpers.scaled_dot_product_attention(Q, K, V), repeats)

    print(f"numpy {np.__version__}; median of {repeats} runs (load: 5 fresh processes)")
    print(f"  load average now: {', '.join(f'{v:.1f}' for v in os.getloadavg())} (2 cores)")
    print(
        f"  load (sha256 check + weights + tokenizer): median {statistics.median(loads):.2f} s"
        f"  (all: {', '.join(f'{s:.2f}' for s in loads)}; target <= {TARGET_LOAD_S:g} s)"
    )
    print(f"  imports first (numpy, safetensors, tokenizers): {statistics.median(imports):.2f} s")
    print(
        f"  forward pass, {n} tokens, 6 layers x 12 heads: {forward_ms:.1f} ms"
        f"  (target <= {TARGET_FORWARD_MS:g} ms)"
    )
    print(f"  sentence_embedding, same sentence: {embed_ms:.1f} ms")
    print(f"  one real layer's attention alone (12 heads, n={n}, d_k=32): {attention_ms:.3f} ms")
    print(f"  the course's seeded 2-head layer (d_model=8, n={len(tokens)}): {seeded_ms:.3f} ms")
    ok = statistics.median(loads) <= TARGET_LOAD_S and forward_ms <= TARGET_FORWARD_MS
    print("  targets met" if ok else "  TARGET MISSED")


if __name__ == "__main__":
    main()
