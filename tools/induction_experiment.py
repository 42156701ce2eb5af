"""Issue 32's experiments: train lesson 10's model on tokens drawn with replacement, then measure
it on fresh sequences of several layouts against the ideal one-token copier.

    python tools/induction_experiment.py train --seed 0 --steps 5000 --mix --decay 0.3 --out M.npz
    python tools/induction_experiment.py evaluate M.npz

``train``: the two-layer attention-only model (vocab 64, 32 positions, 4 heads, ``--d-model``),
batches of 64 from ``repeat_task`` (a 5-14-token segment twice, with replacement) or, with
``--mix``, in turn from that, ``probes.back_to_back`` and ``probes.two_segments``; Adam at
``--lr``, decayed linearly to 0 over the last ``--decay`` fraction of the steps. One BLAS thread.

``evaluate``: per generator (rng 2026, 512 sequences), the loss on repeats beside the one-token
copier's, on first occurrences (tokens not seen before; ideal: log 64) and on chance
recurrences; the loss by position within a back-to-back copy; typed sentences said twice.
Not part of the tests: a research tool, until the settings it finds are shipped
(``helpers.induction``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import ThreadpoolController

from helpers.induction.model import InductionModel, encode, init_params, loss_and_grads
from helpers.induction.probes import back_to_back, copier_loss, position_losses, two_segments
from helpers.induction.task import repeat_task
from helpers.training import Adam

VOCAB, N, HEADS, BATCH = 64, 32, 4, 64
TYPED = (
    "the cat sat. the cat sat.",
    "hello world. hello world.",
    "the dog jumps. the dog jumps.",
    "abc def ghi. abc def ghi.",
)


def with_targets(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    targets = np.full_like(tokens, -1)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def batch(rng: np.random.Generator, kind: int) -> tuple[np.ndarray, np.ndarray]:
    if kind == 0:
        data = repeat_task(rng, BATCH, N, VOCAB, 5, 14, False, 2)
        return data.tokens, data.targets
    make = back_to_back if kind == 1 else two_segments
    return with_targets(make(rng, BATCH, N, VOCAB)[0])


def train(args) -> None:
    params = init_params(VOCAB, args.d_model, HEADS, N, 2, seed=args.seed)
    params = {name: value.astype(np.float32) for name, value in params.items()}
    optimiser = Adam(params, lr=args.lr)
    rng = np.random.default_rng([args.seed, 2])
    start = time.perf_counter()
    with ThreadpoolController().limit(limits=1, user_api="blas"):
        for step in range(1, args.steps + 1):
            left = 1 - step / args.steps
            optimiser.lr = args.lr * (min(1.0, left / args.decay) if args.decay > 0 else 1.0)
            kind = int(rng.integers(0, 3)) if args.mix else 0
            loss, grads, _ = loss_and_grads(params, *batch(rng, kind), HEADS)
            optimiser.step(params, grads)
            if step % 500 == 0:
                print(f"step {step}  {time.perf_counter() - start:.0f} s  batch loss {loss:.3f}")
    np.savez(args.out, **params)
    print(f"saved {args.out}")


def report(name: str, model, tokens: np.ndarray, is_repeat: np.ndarray) -> None:
    nll = position_losses(model, tokens)  # (b, n - 1)
    repeat = is_repeat[:, :-1]
    seen = np.array([[row[i] in row[:i] for i in range(N - 1)] for row in tokens])
    first, chance = ~repeat & ~seen, ~repeat & seen
    floor = copier_loss(tokens, is_repeat, VOCAB)
    print(
        f"{name:>18}: repeats {nll[repeat].mean():.3f} (copier {floor:.3f})"
        f"  first occurrences {nll[first].mean() / np.log(VOCAB):.3f} x log 64"
        f"  chance recurrences {nll[chance].mean():.2f} ({chance.sum()} positions)"
    )


def evaluate(args) -> None:
    params = dict(np.load(args.model))
    model = InductionModel(params, HEADS)
    rng = np.random.default_rng(2026)
    task = repeat_task(rng, 512, N, VOCAB, 5, 14, False, 2)
    report("task 5-14 x2", model, task.tokens, task.is_repeat)
    report("back to back 6-14", model, *back_to_back(rng, 512, N, VOCAB))
    report("two segments 4-7", model, *two_segments(rng, 512, N, VOCAB))
    report("16 then its copy", model, *back_to_back(rng, 512, N, VOCAB, lengths=(16, 16)))
    report("two segments 2-3", model, *two_segments(rng, 512, N, VOCAB, lengths=(2, 3)))
    tokens, is_repeat = back_to_back(np.random.default_rng(7), 1000, N, VOCAB)
    nll = position_losses(model, tokens)
    offset = np.cumsum(is_repeat, axis=1) - 1  # 0 at a copy's first token
    for k in range(8):
        at = is_repeat & (offset == k)
        print(f"  copy position {k}: {nll[at[:, :-1]].mean():.3f}"
              f" (copier {copier_loss(tokens, at, VOCAB):.3f})")  # fmt: skip
    for text in TYPED:
        tokens = encode(text)[None, :]
        second = np.zeros(tokens.shape, dtype=bool)
        second[0, text.index(".") + 2 : -1] = True
        loss = position_losses(model, tokens)[second[:, :-1]].mean()
        print(
            f"  {text!r}: second copy {loss:.3f} (copier {copier_loss(tokens, second, VOCAB):.3f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--steps", type=int, default=5000)
    t.add_argument("--d-model", type=int, default=128)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--decay", type=float, default=0.3)
    t.add_argument("--mix", action="store_true")
    t.add_argument("--out", default="build/induction-experiment.npz")
    e = sub.add_parser("evaluate")
    e.add_argument("model")
    args = parser.parse_args()
    train(args) if args.command == "train" else evaluate(args)


if __name__ == "__main__":
    main()
