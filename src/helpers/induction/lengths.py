"""Lesson 11's experiment: lesson 10's model, trained with each way of giving positions, read on
sequences longer than it was trained on.

:func:`far_repeats` draws random tokens (with replacement) with one segment repeated right after
itself, the copy placed at or past a given position (past the training length: each query of
the copy then has more keys before it than in training, some further back than any training
distance); :func:`measure` gives a model's loss
on the copy and on first occurrences, and its best previous-token and induction scores there.

The shipped models (seed 0) and a second seed, each trained with ``python -m helpers.induction
--positions P [--seed 1]`` (lesson 10's settings, 5,000 steps, ``OPENBLAS_CORETYPE=Haswell``,
about 4 minutes each here), measured as lesson 11 does (128 sequences per length, a 10-token
segment repeated right after itself, the copy past position 32 at 64 and 128 tokens): loss on
the repeats (best previous-token score, best induction score).

=========  ====  ======================  ======================  ======================
positions  seed  32 tokens               64 tokens               128 tokens
=========  ====  ======================  ======================  ======================
learned    0     0.32 (0.97, 0.83)       refused (32 rows)       refused
rope       0     0.31 (0.99, 0.86)       0.77 (0.97, 0.71)       1.50 (0.90, 0.53)
rope       1     0.30 (0.99, 0.86)       0.86 (0.96, 0.67)       1.65 (0.88, 0.48)
alibi      0     0.72 (0.20, 0.82)       0.94 (0.19, 0.75)       1.14 (0.18, 0.71)
alibi      1     0.71 (0.20, 0.82)       0.98 (0.19, 0.75)       1.18 (0.18, 0.70)
none       0     2.06 (0.10, 0.42)       3.84 (0.06, 0.06)       4.06 (0.04, 0.04)
none       1     2.23 (0.10, 0.35)       3.85 (0.06, 0.06)       4.07 (0.03, 0.04)
=========  ====  ======================  ======================  ======================

Position interpolation (``model.interpolate(32 / n)``, no fine-tuning) on the RoPE models:
4.14 and 4.19 nats at 64 and 128 tokens (seed 0), 4.12 and 4.19 (seed 1); the previous-token
score falls to 0.15-0.17 at 64 and 0.04 at 128 in both.

With fine-tuning, as Chen et al. do (``python tools/induction_experiment.py finetune --steps
N``: the seed-0 RoPE model trained on 64-token sequences, lr 1e-3 decayed from N/2, 256 fresh
sequences of 64 tokens, the copy past 32): interpolated (positions x 1/2), 300 steps bring the
loss on the repeats from 4.15 to 0.69 and 1,000 steps to 0.60 (previous-token 0.75 and 0.81);
the same fine-tuning *without* interpolation reaches 0.69 and 0.62 (previous-token 0.99). Here
the fine-tuning on the longer sequences does the work; interpolation adds nothing (and the
interpolated model, read at 32 tokens with its positions as trained, no longer copies: 3.60
and 3.80).
"""

from __future__ import annotations

import numpy as np

from .probes import next_token_losses, seen_before
from .task import Repeats, head_scores

__all__ = ["far_repeats", "measure"]


def far_repeats(
    rng: np.random.Generator, batch: int, n: int, vocab_size: int, length: int = 10, after: int = 0
) -> Repeats:
    """``batch`` sequences of ``n`` random tokens in which a segment of ``length`` tokens is
    repeated right after itself, the copy starting at a random position ``>= after`` (and the
    whole copy inside the sequence)."""
    for name, value in (("batch", batch), ("n", n), ("vocab_size", vocab_size),
                        ("length", length)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if isinstance(after, bool) or not isinstance(after, (int, np.integer)) or after < 0:
        raise ValueError(f"after must be a whole number >= 0, got {after!r}")
    lowest = max(after, length)  # where the copy may start
    if length < 2 or lowest + length > n:
        raise ValueError(
            f"a copy of {length} tokens starting at or after {lowest} does not fit in {n} "
            "positions (and length must be at least 2)"
        )
    tokens = rng.integers(0, vocab_size, (batch, n))
    copy = rng.integers(lowest, n - length + 1, batch)
    starts = np.stack([copy - length, copy], axis=1)
    is_repeat = np.zeros((batch, n), dtype=bool)
    for s in range(batch):
        c = copy[s]
        tokens[s, c : c + length] = tokens[s, c - length : c]
        is_repeat[s, c : c + length - 1] = True
    targets = np.full_like(tokens, -1)
    targets[:, :-1] = tokens[:, 1:]
    return Repeats(tokens, targets, starts, np.full(batch, 2), np.full(batch, length), is_repeat)


def measure(model, data: Repeats) -> dict[str, float]:
    """On ``data``: the model's mean loss (nats) on the repeats and, divided by log(vocab), on
    first occurrences (the next token has not occurred before), and its best layer-0
    previous-token and best layer-1 induction scores."""
    ran = model.run(data.tokens)
    nll = next_token_losses(ran.logits, data.tokens)  # (b, n - 1)
    seen, repeat = seen_before(data.tokens), data.is_repeat[:, :-1]
    previous, induction, _ = head_scores(np.stack(ran.A, axis=1), data)
    return {
        "repeats": float(nll[repeat].mean()),
        "first": float(nll[~repeat & ~seen].mean() / np.log(model.vocab_size)),
        "previous": float(previous[0].max()),
        "induction": float(induction[1].max()),
    }
