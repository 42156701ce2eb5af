"""Lesson 10's task: random token sequences in which a segment of random length recurs.

:func:`repeat_task` draws them (the segment at random places); :func:`mixed_batch` draws a
training batch in one of three layouts. The model learns next-token prediction on them. Only
the tokens of a later copy (after its first) can be predicted, and only by finding the earlier
copy in context: an *induction* head does that (Olsson et al. 2022). How the settings were
chosen: docs/experiments/induction-settings.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Repeats", "repeat_task", "mixed_batch"]


@dataclass
class Repeats:
    """A batch of sequences, each with one segment that occurs two (or more) times.

    ``tokens (b, n)``; sequence s's segment of length ``length[s]`` starts at ``starts[s, 0]``,
    ``starts[s, 1]``, ... (``count[s]`` of them, ``-1`` after; each copy after the end of the
    one before). ``targets (b, n)``: the next token at every position but the last (``-1``);
    ``is_repeat (b, n)``: True at the positions whose next token is predictable, the copies
    after the first but their last token.
    """

    tokens: np.ndarray
    targets: np.ndarray
    starts: np.ndarray
    count: np.ndarray
    length: np.ndarray
    is_repeat: np.ndarray

    @property
    def first(self) -> np.ndarray:
        return self.starts[:, 0]

    @property
    def second(self) -> np.ndarray:
        return self.starts[:, 1]


def repeat_task(
    rng: np.random.Generator,
    batch: int,
    n: int,
    vocab_size: int,
    min_repeat: int = 5,
    max_repeat: int = 10,
    distinct: bool = True,
    max_copies: int = 3,
) -> Repeats:
    """Random sequences of ``n`` tokens, each with a segment of random length in
    ``[min_repeat, max_repeat]`` copied to random later places (neither length nor place is
    fixed, so the model cannot solve the task with positions alone).

    The segment occurs ``2 .. max_copies`` times (as many as fit, at random). With ``distinct``
    (the default) the other tokens are drawn without replacement, so only the segment's tokens
    recur; with replacement, tokens also recur by chance (with 64 tokens and 32 positions about
    as often as the segment's), and a model that matches one token cannot tell the two apart:
    its loss on repeats stays near 0.6 nats.
    """
    if not 2 <= min_repeat <= max_repeat or 2 * max_repeat > n:
        raise ValueError(
            f"need 2 <= min_repeat <= max_repeat and 2 * max_repeat <= n; got min_repeat="
            f"{min_repeat}, max_repeat={max_repeat}, n={n}"
        )
    if distinct:
        if vocab_size < n:
            raise ValueError(f"distinct tokens need vocab_size >= n, got {vocab_size} < {n}")
        tokens = np.argsort(rng.random((batch, vocab_size)), axis=1)[:, :n]
    else:
        tokens = rng.integers(0, vocab_size, (batch, n))
    length = rng.integers(min_repeat, max_repeat + 1, batch)
    fits = np.minimum(n // length, max_copies)  # how many copies of each segment fit
    count = 2 + (rng.random(batch) * (fits - 1)).astype(int)  # 2 .. fits
    starts = np.full((batch, max(max_copies, 2)), -1)
    positions = np.arange(n)
    is_repeat = np.zeros((batch, n), dtype=bool)
    for s in range(batch):
        L, k = length[s], count[s]
        # k non-overlapping copies: k sorted offsets in 0 .. n - k L, the i-th shifted by i L.
        offsets = np.sort((rng.random(k) * (n - k * L + 1)).astype(int))
        starts[s, :k] = offsets + L * np.arange(k)
        for c in starts[s, 1:k]:
            tokens[s, c : c + L] = tokens[s, starts[s, 0] : starts[s, 0] + L]
            is_repeat[s] |= (positions >= c) & (positions < c + L - 1)
    targets = np.full_like(tokens, -1)
    targets[:, :-1] = tokens[:, 1:]
    return Repeats(tokens, targets, starts, count, length, is_repeat)


def mixed_batch(
    rng: np.random.Generator,
    batch: int,
    n: int,
    vocab_size: int,
    min_repeat: int = 5,
    max_repeat: int = 10,
    distinct: bool = True,
    max_copies: int = 3,
) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, targets)`` of one training batch in one of three layouts, picked at random:
    :func:`repeat_task`'s (a segment at random places), a segment of 6-14 tokens repeated
    right after itself (:func:`~helpers.induction.probes.back_to_back`), or two segments of 4-7
    tokens interleaved, A .. B .. A .. B (:func:`~helpers.induction.probes.two_segments`).
    Tokens with replacement in the last two: the model must not learn where copies tend to be.
    """
    from .probes import back_to_back, two_segments  # probes imports nothing from here

    kind = int(rng.integers(0, 3))
    if kind == 0:
        data = repeat_task(rng, batch, n, vocab_size, min_repeat, max_repeat, distinct,
                           max_copies)  # fmt: skip
        return data.tokens, data.targets
    tokens = (back_to_back if kind == 1 else two_segments)(rng, batch, n, vocab_size)[0]
    targets = np.full_like(tokens, -1)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets
