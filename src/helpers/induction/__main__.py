"""``python -m helpers.induction``: train lesson 10's model from its seed and write its weights.

With no arguments it retrains the shipped model (the settings, seed and steps of
:data:`helpers.induction.trainer.SHIPPED`), writes ``build/induction-weights.npz`` (never the
shipped ``weights.npz``, unless ``--out`` names it) and prints its sha256, and whether that is
the shipped hash. ``--out PATH`` writes elsewhere (its folder is made first, before the
training); ``--steps`` and ``--seed`` train another model (its hash will differ).
``--positions rope`` (or ``alibi``, ``none``) trains lesson 11's model with that scheme
(``build/induction-weights-rope.npz``; shipped as ``weights-rope.npz``).

``--check`` (``make reproduce-weights``) compares the retrained run with the shipped one and
exits 1 unless it is the same file or, with other BLAS kernels than the shipped run's, within
the tolerance of :mod:`helpers.induction.reproduce` (it prints the largest differences).
``--exact`` exits 1 unless the file is the shipped one, bit for bit: run it under the shipped
run's kernel (``OPENBLAS_CORETYPE=Haswell``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import blas
from .reproduce import SHIPPED_BLAS, SHIPPED_CORETYPE, compare
from .trainer import SHIPPED, train
from .weights import SHIPPED_FILES, load, save, shipped_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.induction", description=__doc__)
    parser.add_argument("--seed", type=int, default=SHIPPED.seed)
    parser.add_argument("--steps", type=int, default=SHIPPED.steps)
    parser.add_argument(
        "--positions",
        choices=list(SHIPPED_FILES),
        default="learned",
        help="how the model gives positions: lesson 10's learned table, or lesson 11's schemes",
    )
    parser.add_argument("--out", type=Path, default=None, help="default: build/induction-weights"
                        "[-POSITIONS].npz")  # fmt: skip
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless the shipped file, or within the tolerance of the shipped run",
    )
    parser.add_argument("--exact", action="store_true", help="exit 1 unless the shipped sha256")
    args = parser.parse_args(argv)
    suffix = "" if args.positions == "learned" else f"-{args.positions}"
    if args.out is None:
        args.out = Path("build", f"induction-weights{suffix}.npz")
    _, shipped_sha256 = shipped_file(args.positions)
    # Make the output's folder now: a missing one must not cost the minutes of training.
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        parser.error(f"cannot make the folder for --out {args.out}: {error}")
    if not os.access(args.out.parent, os.W_OK):
        parser.error(f"cannot write into {args.out.parent} (--out {args.out})")
    config = replace(SHIPPED, seed=args.seed, steps=args.steps, positions=args.positions)
    start = time.perf_counter()

    def report(step, history):
        if not args.quiet:
            print(
                f"step {step:5d}  {time.perf_counter() - start:6.1f} s  loss on repeats "
                f"{history.loss_repeat[-1]:.3f}, other tokens {history.loss_other[-1]:.3f}  "
                f"best previous-token head (layer 0) {np.max(history.previous_token[-1][0]):.2f}"
                f", best induction head (layer 1) {np.max(history.induction[-1][1]):.2f}",
                flush=True,
            )

    model, history = train(config, callback=report)
    digest = save(args.out, model, history, config.recorded())
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in "
          f"{time.perf_counter() - start:.0f} s; sha256 {digest}")  # fmt: skip
    same = digest == shipped_sha256
    print("same as the shipped weights" if same else f"the shipped sha256 is {shipped_sha256}")
    if not (args.check or args.exact):
        return 0
    if not same:
        print(f"this run: {blas.describe()}; the shipped run: {SHIPPED_BLAS}")
    if args.exact:
        if not same:
            print(f"not bit for bit (under OPENBLAS_CORETYPE={SHIPPED_CORETYPE} it would be)")
        return 0 if same else 1
    try:
        comparison = compare(load(args.out, sha256=digest), load(positions=args.positions))
    except ValueError as error:
        print(error)
        return 1
    print(comparison.report())
    return 0 if comparison.within else 1


if __name__ == "__main__":
    sys.exit(main())
