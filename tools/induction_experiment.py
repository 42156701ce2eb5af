"""The experiments behind lesson 10's settings: train its model on tokens drawn with
replacement, then measure it on fresh sequences of several layouts against the ideal one-token
copier, and take it apart.

    python tools/induction_experiment.py train --seed 0 --out build/experiments/seed0.npz
    python tools/induction_experiment.py evaluate build/experiments/seed0.npz

``train``: :func:`helpers.induction.train` with ``CANDIDATE`` (the shipped settings: d_model
128, a segment of 5-14 tokens twice with replacement, batches from the three layouts of
:func:`~helpers.induction.task.mixed_batch`, the learning rate decayed linearly to 0 from step
3,500 of 5,000), written with :func:`helpers.induction.weights.save`. Run it under the shipped
kernel (``helpers.blas.kernel_env("Haswell")``) for a file that others can rebuild bit for bit.

``evaluate``: the head scores; per generator (rng 2026, 512 sequences; three held out from
training), the loss on repeats beside the one-token copier's, on first occurrences (/ log 64)
and on chance recurrences; the loss by position within a copy; typed sentences said twice; then
zero and mean ablation of every head, of pairs of layer-0 heads and of sets of layer-1 heads,
path patching of each layer-0 head into the layer-1 queries, keys, values and the logits, and
direct logit attribution on the repeats.
``finetune``: lesson 11's position interpolation with fine-tuning (see :func:`finetune`).
Not part of the tests: the research tool behind the shipped settings
(docs/experiments/induction-settings.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import time

import numpy as np

from helpers.induction import circuits, head_scores, probes
from helpers.induction.model import encode
from helpers.induction.task import repeat_task
from helpers.induction.trainer import SHIPPED, train
from helpers.induction.weights import load, save

VOCAB, N = 64, 32
CANDIDATE = SHIPPED  # the shipped settings; dataclasses.replace one to try another
TYPED = (
    "the cat sat. the cat sat.",
    "hello world. hello world.",
    "the dog jumps. the dog jumps.",
    "abc def ghi. abc def ghi.",
)


def run_training(args) -> None:
    config = dataclasses.replace(CANDIDATE, seed=args.seed, steps=args.steps)
    start = time.perf_counter()

    def report(step, h):
        if step % 250 == 0:
            print(f"step {step:5d} {time.perf_counter() - start:5.0f} s  repeats "
                  f"{h.loss_repeat[-1]:.3f}  others {h.loss_other[-1]:.3f}  previous-token "
                  f"{np.max(h.previous_token[-1][0]):.2f}  induction "
                  f"{np.max(h.induction[-1][1]):.2f}  duplicate "
                  f"{np.max(h.duplicate_token[-1][0]):.2f}", flush=True)  # fmt: skip

    model, history = train(config, callback=report)
    print(f"wrote {args.out}, sha256 {save(args.out, model, history, config.recorded())}")


def evaluate(args) -> None:
    digest = hashlib.sha256(open(args.model, "rb").read()).hexdigest()
    model = load(args.model, sha256=digest)
    np.set_printoptions(precision=2, suppress=True)
    rng = np.random.default_rng(2026)
    data = repeat_task(rng, 512, N, VOCAB, 5, 14, False, 2)
    previous, induction, duplicate = head_scores(np.stack(model.run(data.tokens).A, 1), data)
    print(f"previous-token\n{previous}\ninduction\n{induction}\nduplicate-token\n{duplicate}")
    generators = {
        "task 5-14 x2": (data.tokens, data.is_repeat),
        "back to back 6-14": probes.back_to_back(rng, 512, N, VOCAB),
        "two segments 4-7": probes.two_segments(rng, 512, N, VOCAB),
        "held out: three copies": probes.three_copies(rng, 512, N, VOCAB),
        "held out: 15-16 twice": probes.back_to_back(rng, 512, N, VOCAB, lengths=(15, 16)),
        "held out: pairs 2-3": probes.two_segments(rng, 512, N, VOCAB, lengths=(2, 3)),
    }
    for name, (tokens, is_repeat) in generators.items():
        m = probes.measure(model, tokens, is_repeat)
        print(
            f"{name:>24}: repeats {m['repeat']:.3f} (copier {m['copier']:.3f})  first "
            f"{m['first_ratio']:.3f} x log 64  chance recurrences {m['chance']:.2f}"
        )
    tokens, is_repeat = probes.back_to_back(np.random.default_rng(7), 1000, N, VOCAB)
    nll = probes.position_losses(model, tokens)
    offset = np.cumsum(is_repeat, axis=1) - 1  # 0 at a copy's first token
    for k in range(6):
        at = is_repeat & (offset == k)
        print(f"  copy position {k}: {nll[at[:, :-1]].mean():.3f}"
              f" (copier {probes.copier_loss(tokens, at, VOCAB):.3f})")  # fmt: skip
    for text in TYPED:
        tokens = encode(text)[None, :]
        second = np.zeros(tokens.shape, dtype=bool)
        second[0, text.index(".") + 2 : -1] = True
        m = probes.measure(model, tokens, second)
        print(f"  {text!r}: second copy {m['repeat']:.3f} (copier {m['copier']:.3f})")
    take_apart(model, data)


def take_apart(model, data) -> None:
    tokens, marked = data.tokens, data.is_repeat[:, :-1]
    reference = repeat_task(np.random.default_rng(99), 512, N, VOCAB, 5, 14, False, 2).tokens
    means = circuits.head_means(model, reference)

    def loss(replace=None, reads=circuits.READS):
        ran = circuits.run(model, tokens, replace, reads)
        induction = head_scores(np.stack(ran.A, axis=1), data)[1][1]
        return ran.losses(tokens)[marked].mean(), induction

    base, induction = loss()
    print(f"loss on repeats {base:.3f}; layer-1 induction scores {induction}")
    heads = [(a, b) for a in range(2) for b in range(model.n_heads)]
    sets = [(h,) for h in heads]
    sets += list(itertools.combinations(heads[: model.n_heads], 2))
    sets += [s for k in (2, 3, 4) for s in itertools.combinations(heads[model.n_heads :], k)]
    for group in sets:
        zero, induction = loss({h: 0.0 for h in group})
        mean, _ = loss({h: means[h] for h in group})
        print(f"  without {group}: zero {zero:.3f}  mean {mean:.3f}  induction (zero) {induction}")
    for head in heads[: model.n_heads]:
        for read in circuits.READS:
            mean, induction = loss({head: means[head]}, (read,))
            print(f"  {head} mean-patched into {read!r} only: {mean:.3f}  induction {induction}")
    where = data.is_repeat.copy()
    where[:, -1] = False
    parts = circuits.logit_attribution(model, tokens, where)
    print("direct logit attribution:", {k: round(v, 2) for k, v in parts.items()})


def finetune(args) -> None:
    """Lesson 11's position interpolation with fine-tuning: the shipped RoPE model fine-tuned on
    64-token sequences with its positions halved (Chen et al.), against the same fine-tuning
    without interpolation; both measured at 64 tokens (and at 32, positions as trained)."""
    from helpers.induction import InductionModel
    from helpers.induction import load as load_shipped
    from helpers.induction.lengths import far_repeats, measure

    rope = load_shipped(positions="rope")
    data64 = far_repeats(np.random.default_rng(64), 256, 64, VOCAB, length=10, after=32)
    data32 = far_repeats(np.random.default_rng(32), 256, 32, VOCAB, length=10)

    def show(result):
        return (f"{result['repeats']:.2f} (previous-token {result['previous']:.2f}, induction "
                f"{result['induction']:.2f})")  # fmt: skip

    print(f"before: 64 tokens {show(measure(rope, data64))}; interpolated "
          f"{show(measure(rope.interpolate(0.5), data64))}")  # fmt: skip
    for scale in (0.5, 1.0):
        model, _ = train(seed=5, steps=args.steps, positions="rope", init=rope, max_len=64,
                         position_scale=scale, lr=1e-3, decay_start=args.steps // 2,
                         eval_every=args.steps)  # fmt: skip
        plain = InductionModel(model.params, model.n_heads, "rope")
        at64 = measure(plain.interpolate(scale) if scale != 1 else plain, data64)
        at32 = measure(plain, data32)
        print(f"fine-tuned {args.steps} steps on 64 tokens, positions x {scale}: at 64 tokens "
              f"{show(at64)}; at 32 tokens, positions x 1: {show(at32)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--steps", type=int, default=5000)
    t.add_argument("--out", default="build/induction-experiment.npz")
    e = sub.add_parser("evaluate")
    e.add_argument("model")
    f = sub.add_parser("finetune")
    f.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    {"train": run_training, "evaluate": evaluate, "finetune": finetune}[args.command](args)


if __name__ == "__main__":
    main()
