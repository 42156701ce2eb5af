"""Lesson 11's experiment: lesson 10's model, trained with each way of giving positions, read on
sequences longer than it was trained on.

:func:`far_repeats` draws random tokens (with replacement) with one segment repeated right after
itself, the copy placed at or past a given position (past the training length: each query of
the copy then has more keys before it than in training, some further back than any training
distance); :func:`measure` gives a model's loss
on the copy and on first occurrences, and its best previous-token and induction scores there.

The measurements behind lesson 11 (both seeds, interpolation, fine-tuning):
docs/experiments/position-lengths.md; the lesson prints its own.
"""

from __future__ import annotations

import numpy as np

from .probes import next_token_losses, seen_before
from .scores import head_scores
from .task import Repeats

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
