"""Fresh sequences to test lesson 10's model on, and the floor a one-token copier reaches there.

A model that learned induction must also work on repeats laid out differently from its
training batches, and on text a learner types (issue 32: "other generators of such sequences
will be used to check it"). Training (:func:`~helpers.induction.task.mixed_batch`) draws from
:func:`~helpers.induction.task.repeat_task` (a segment of 5-14 tokens twice, at random places)
and from two layouts defined here, with their default lengths:

* :func:`back_to_back`: random tokens (with replacement) and one segment of 6-14 tokens
  repeated right after itself, at a random place (the layout of Olsson et al. 2022's repeated
  random tokens);
* :func:`two_segments`: two different segments of 4-7 tokens, each repeated once, interleaved
  (A .. B .. A .. B).

Held out (never trained on): :func:`three_copies` (one segment three times), and the two
layouts above with lengths outside the training ranges (a 15-16-token segment right after
itself; pairs of 2-3-token segments).

:func:`copier_loss` is the yardstick: at each repeated position, the loss of the *ideal
one-token copier*, which predicts the empirical distribution of the tokens that followed the
earlier occurrences of the current token: a yardstick for a head that matches one token (an
induction head fed by a previous-token head), not a bound (a model can also use the tokens
before, or how far back each occurrence is). It knows which positions are repeats, which a
model does not: at a chance recurrence it would predict a wrong token with certainty.
"""

from __future__ import annotations

import numpy as np

__all__ = ["back_to_back", "two_segments", "three_copies", "copier_loss", "position_losses"]


def _check(batch: int, n: int, vocab_size: int, shortest: int) -> None:
    for name, value in (("batch", batch), ("n", n), ("vocab_size", vocab_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if n < shortest:
        raise ValueError(f"n must be at least {shortest} for these repeats, got {n}")


def back_to_back(
    rng: np.random.Generator, batch: int, n: int, vocab_size: int, lengths: tuple = (6, 14)
) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens (batch, n), is_repeat (batch, n))``: random tokens with one segment of a length
    in ``lengths`` (inclusive) copied right after itself; ``is_repeat`` marks the positions of
    the copy whose next token is the copy's (all but its last)."""
    low, high = lengths
    _check(batch, n, vocab_size, 2 * high)
    tokens = rng.integers(0, vocab_size, (batch, n))
    is_repeat = np.zeros((batch, n), dtype=bool)
    for s in range(batch):
        L = int(rng.integers(low, high + 1))
        start = int(rng.integers(0, n - 2 * L + 1))
        tokens[s, start + L : start + 2 * L] = tokens[s, start : start + L]
        is_repeat[s, start + L : start + 2 * L - 1] = True
    return tokens, is_repeat


def two_segments(
    rng: np.random.Generator, batch: int, n: int, vocab_size: int, lengths: tuple = (4, 7)
) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, is_repeat)`` as :func:`back_to_back`, with two segments A and B of lengths in
    ``lengths``, laid out A .. B .. A .. B, one in each quarter of the sequence."""
    low, high = lengths
    _check(batch, n, vocab_size, 4 * high)
    tokens = rng.integers(0, vocab_size, (batch, n))
    is_repeat = np.zeros((batch, n), dtype=bool)
    quarter = n // 4
    for s in range(batch):
        sizes = rng.integers(low, high + 1, 2)
        starts = [k * quarter + int(rng.integers(0, quarter - sizes[k % 2] + 1)) for k in range(4)]
        for first, copy, L in ((starts[0], starts[2], sizes[0]), (starts[1], starts[3], sizes[1])):
            tokens[s, copy : copy + L] = tokens[s, first : first + L]
            is_repeat[s, copy : copy + L - 1] = True
    return tokens, is_repeat


def three_copies(
    rng: np.random.Generator, batch: int, n: int, vocab_size: int, lengths: tuple = (5, 9)
) -> tuple[np.ndarray, np.ndarray]:
    """``(tokens, is_repeat)`` as :func:`back_to_back`, with one segment of a length in
    ``lengths`` occurring three times, at random places (never overlapping); ``is_repeat``
    marks the second and third copies but their last tokens."""
    low, high = lengths
    _check(batch, n, vocab_size, 3 * high)
    tokens = rng.integers(0, vocab_size, (batch, n))
    is_repeat = np.zeros((batch, n), dtype=bool)
    for s in range(batch):
        L = int(rng.integers(low, high + 1))
        gaps = np.sort(rng.integers(0, n - 3 * L + 1, 3))  # three sorted offsets, then spread
        starts = gaps + L * np.arange(3)
        for copy in starts[1:]:
            tokens[s, copy : copy + L] = tokens[s, starts[0] : starts[0] + L]
            is_repeat[s, copy : copy + L - 1] = True
    return tokens, is_repeat


def copier_loss(tokens: np.ndarray, is_repeat: np.ndarray, vocab_size: int) -> float:
    """Mean loss (nats) of the ideal one-token copier on the positions ``is_repeat`` marks.

    At position i it predicts the tokens that followed the earlier occurrences of token i, in
    proportion (uniform over ``vocab_size`` where token i has not occurred before)."""
    tokens, is_repeat = np.atleast_2d(tokens), np.atleast_2d(is_repeat)
    if tokens.shape != is_repeat.shape:
        raise ValueError(f"tokens {tokens.shape} and is_repeat {is_repeat.shape} differ")
    if is_repeat[:, -1].any():
        raise ValueError("the last position has no next token: it cannot be a repeat")
    losses = []
    for s, i in zip(*np.nonzero(is_repeat)):
        row = tokens[s]
        followers = row[1 : i + 1][row[:i] == row[i]]  # what came after each earlier occurrence
        if followers.size == 0:
            losses.append(np.log(vocab_size))
        else:
            share = np.mean(followers == row[i + 1])
            losses.append(-np.log(share) if share > 0 else np.inf)  # never followed so: inf
    if not losses:
        raise ValueError("no position is marked as a repeat")
    return float(np.mean(losses))


def position_losses(model, tokens: np.ndarray) -> np.ndarray:
    """The model's loss (nats) at each position of ``tokens (b, n)`` on the next token,
    ``(b, n - 1)``."""
    tokens = np.atleast_2d(tokens)
    logits = model.run(tokens).logits[:, :-1]  # (b, n - 1, vocab)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, tokens[:, 1:, None], axis=-1)[..., 0]


def measure(model, tokens: np.ndarray, is_repeat: np.ndarray) -> dict[str, float]:
    """The model's mean loss (nats) on fresh sequences ``tokens (b, n)``, by kind of position:
    ``repeat`` (the positions ``is_repeat`` marks) beside ``copier`` (:func:`copier_loss` on
    the same positions), ``first`` (the next token has not occurred before: nothing to
    predict, ideally log(vocab_size)), ``chance`` (the next token recurs outside a repeat: a
    one-token match that does not continue), with ``first_ratio`` = ``first`` / log(vocab)."""
    tokens, is_repeat = np.atleast_2d(tokens), np.atleast_2d(is_repeat)
    vocab = model.params["W_E"].shape[0]
    nll = position_losses(model, tokens)  # (b, n - 1): the loss on token i + 1
    n = tokens.shape[1]
    repeat = is_repeat[:, :-1]
    seen = np.zeros((tokens.shape[0], n - 1), dtype=bool)
    for i in range(n - 1):  # the next token, i + 1, occurred at 0 .. i
        seen[:, i] = (tokens[:, : i + 1] == tokens[:, i + 1 : i + 2]).any(axis=1)
    first, chance = ~repeat & ~seen, ~repeat & seen
    result = {
        "repeat": float(nll[repeat].mean()),
        "copier": copier_loss(tokens, is_repeat, vocab),
        "first": float(nll[first].mean()),
        "chance": float(nll[chance].mean()) if chance.any() else float("nan"),
    }
    result["first_ratio"] = result["first"] / float(np.log(vocab))
    return result
