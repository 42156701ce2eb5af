"""How long each lesson takes to Restart & Run All, as a learner would run it.

    .venv/bin/python benchmarks/bench_lessons.py [--repeats 3] [--copy solutions|notebooks] [NN ...]

For every lesson: a fresh kernel, every cell run in order (nbclient), timed twice: the cells
alone (from the first cell's start to the last cell's end) and with the kernel's start-up.
Median of the repeats. Targets (CURRICULUM.md): at most 5 s each; lesson 08 20 s, 09 10 s, 10 20 s.
Timings depend on what else the machine is doing; this is a script to read, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
# The course's server settings (kernel connection encrypted, CurveZMQ), which make setup gives
# JupyterLab: the same kernels here, and no "running over TCP without encryption" warning.
ENCRYPTED_KERNEL = Config(json.loads((ROOT / "jupyter" / "jupyter_server_config.json").read_text()))
LIMITS = {"08": 20.0, "09": 10.0, "10": 20.0}  # seconds (CURRICULUM.md); every other lesson: 5 s


def run_once(path: Path) -> tuple[float, float]:
    """(seconds for the cells, seconds including the kernel start) for one fresh run."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        config=ENCRYPTED_KERNEL,
    )
    start = time.perf_counter()
    with client.setup_kernel():
        cells_start = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        end = time.perf_counter()
    return end - cells_start, end - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="two-digit lesson numbers (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--copy", choices=["solutions", "notebooks"], default="solutions")
    args = parser.parse_args()
    paths = sorted((ROOT / args.copy).glob("[0-9][0-9]_*.ipynb"))
    if args.lessons:
        paths = [p for p in paths if p.name[:2] in args.lessons]
    print(f"Restart & Run All of {args.copy}/, median of {args.repeats} fresh kernels")
    print(f"{'lesson':<34}{'cells':>8}{'+kernel':>10}{'limit':>8}")
    for path in paths:
        runs = [run_once(path) for _ in range(args.repeats)]
        cells = statistics.median(r[0] for r in runs)
        total = statistics.median(r[1] for r in runs)
        limit = LIMITS.get(path.name[:2], 5.0)
        verdict = "ok" if total <= limit else "OVER"
        print(f"{path.stem:<34}{cells:>7.2f}s{total:>9.2f}s{limit:>7.0f}s  {verdict}")


if __name__ == "__main__":
    main()
