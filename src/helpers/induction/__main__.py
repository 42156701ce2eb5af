"""``python -m helpers.induction``: train lesson 10's model from its seed and write its weights.

With no arguments it retrains the shipped model (the settings, seed and steps of
:data:`helpers.induction.task.SHIPPED`), writes ``weights.npz`` beside this file and prints its
sha256, and whether that is the shipped hash. ``--out PATH`` writes elsewhere; ``--steps`` and
``--seed`` train another model (its hash will differ). ``--check`` exits 1 when the hash is not
the shipped one (``make reproduce-weights``: the shipped settings into ``build/``, checked).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from .task import SHIPPED, train
from .weights import WEIGHTS_PATH, WEIGHTS_SHA256, save


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.induction", description=__doc__)
    parser.add_argument("--seed", type=int, default=SHIPPED["seed"])
    parser.add_argument("--steps", type=int, default=SHIPPED["steps"])
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the shipped sha256")
    args = parser.parse_args(argv)
    settings = {**SHIPPED, "seed": args.seed, "steps": args.steps}
    train_kwargs = {k: v for k, v in settings.items() if k not in ("seed", "steps")}
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

    model, history = train(args.seed, args.steps, **train_kwargs, callback=report)
    digest = save(args.out, model, history, settings)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in "
          f"{time.perf_counter() - start:.0f} s; sha256 {digest}")  # fmt: skip
    same = digest == WEIGHTS_SHA256
    print("same as the shipped weights" if same else f"the shipped sha256 is {WEIGHTS_SHA256}")
    return 1 if args.check and not same else 0


if __name__ == "__main__":
    sys.exit(main())
