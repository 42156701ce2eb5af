"""Fresh sequences to test lesson 10's model on, and the floor a one-token copier reaches there.

A model that learned induction must also work on repeats laid out differently from its
training batches, and on text a learner types (other generators of such sequences than the
training one check it). Training (:func:`~helpers.induction.task.mixed_batch`) draws from
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

:class:`SuffixPredictor` is a second yardstick that is *not* told where the repeats are: it
finds the longest run of tokens ending at the current one (up to four) that occurred before,
and mixes the tokens that followed those earlier runs with a uniform guess, in proportions
fitted on sequences of the same kind: a position-blind baseline that must tell copies from
chance recurrences by itself. :func:`two_matches` builds inputs where a one-token match and a
two-token match disagree.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "back_to_back",
    "two_segments",
    "three_copies",
    "copier_loss",
    "position_losses",
    "next_token_losses",
    "seen_before",
    "SuffixPredictor",
    "two_matches",
]


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


def next_token_losses(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """The loss (nats) of ``logits (b, n, vocab)`` on the next token of ``tokens (b, n)`` at
    each position, ``(b, n - 1)`` (in float64)."""
    logits = logits[:, :-1].astype(np.float64)  # position i predicts token i + 1
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, tokens[:, 1:, None], axis=-1)[..., 0]


def seen_before(tokens: np.ndarray) -> np.ndarray:
    """``(b, n - 1)``: True at position ``i`` where the next token, ``i + 1``, occurred at
    ``0 .. i`` (False: a first occurrence, which nothing can predict)."""
    n = tokens.shape[1]
    seen = np.zeros((tokens.shape[0], n - 1), dtype=bool)
    for i in range(n - 1):
        seen[:, i] = (tokens[:, : i + 1] == tokens[:, i + 1 : i + 2]).any(axis=1)
    return seen


def position_losses(model, tokens: np.ndarray) -> np.ndarray:
    """The model's loss (nats) at each position of ``tokens (b, n)`` on the next token,
    ``(b, n - 1)``."""
    tokens = np.atleast_2d(tokens)
    return next_token_losses(model.run(tokens).logits, tokens)


def measure(model, tokens: np.ndarray, is_repeat: np.ndarray) -> dict[str, float]:
    """The model's mean loss (nats) on fresh sequences ``tokens (b, n)``, by kind of position:
    ``repeat`` (the positions ``is_repeat`` marks) beside ``copier`` (:func:`copier_loss` on
    the same positions), ``first`` (the next token has not occurred before: nothing to
    predict, ideally log(vocab_size)), ``chance`` (the next token recurs outside a repeat: a
    one-token match that does not continue), with ``first_ratio`` = ``first`` / log(vocab)."""
    tokens, is_repeat = np.atleast_2d(tokens), np.atleast_2d(is_repeat)
    vocab = model.params["W_E"].shape[0]
    nll = position_losses(model, tokens)  # (b, n - 1): the loss on token i + 1
    repeat, seen = is_repeat[:, :-1], seen_before(tokens)
    first, chance = ~repeat & ~seen, ~repeat & seen
    result = {
        "repeat": float(nll[repeat].mean()),
        "copier": copier_loss(tokens, is_repeat, vocab),
        "first": float(nll[first].mean()),
        "chance": float(nll[chance].mean()) if chance.any() else float("nan"),
    }
    result["first_ratio"] = result["first"] / float(np.log(vocab))
    return result


def _match_lengths(tokens: np.ndarray, longest: int) -> np.ndarray:
    """``(b, n, n)``: at ``[s, i, j]`` (``j < i``), how many tokens ending at ``i`` equal those
    ending at ``j`` (``0`` if tokens ``i`` and ``j`` differ), at most ``longest``."""
    b, n = tokens.shape
    same = tokens[:, :, None] == tokens[:, None, :]
    run = np.zeros((b, n, n), dtype=np.int64)
    run[:, 0, :] = same[:, 0, :]
    for i in range(1, n):
        run[:, i, 1:] = np.where(same[:, i, 1:], 1 + run[:, i - 1, :-1], 0)
        run[:, i, 0] = same[:, i, 0]
    run = np.minimum(run, longest)
    return np.where(np.tril(np.ones((n, n), dtype=bool), -1), run, 0)


class SuffixPredictor:
    """A predictor that is not told where the repeats are (a yardstick for section 1).

    At position ``i`` it finds ``k``, the longest run of tokens ending at ``i`` (at most
    ``longest``) that also ended at earlier positions ``j``, and predicts ``share[k]`` times the
    empirical distribution of the tokens after those ``j`` plus ``1 - share[k]`` times a uniform
    guess over ``vocab_size`` (a uniform guess where token ``i`` has not occurred before).
    ``share[k]`` is the mixture weight that maximises the likelihood of ``fit_tokens`` at every
    position with a ``k``-token match (on a grid from 0.001 to 0.999; it is never told which
    positions are copies). It ignores where a match lies and how far back, and a match of
    ``longest`` tokens stands for any longer one: a baseline, not the best possible predictor.
    """

    def __init__(self, fit_tokens: np.ndarray, vocab_size: int, longest: int = 4):
        if (
            isinstance(vocab_size, bool)
            or not isinstance(vocab_size, (int, np.integer))
            or (vocab_size < 1)
        ):
            raise ValueError(f"vocab_size must be a whole number >= 1, got {vocab_size!r}")
        if isinstance(longest, bool) or not isinstance(longest, (int, np.integer)) or longest < 1:
            raise ValueError(f"longest must be a whole number >= 1, got {longest!r}")
        self.vocab_size, self.longest = int(vocab_size), int(longest)
        fit_tokens = self._tokens(fit_tokens, "fit_tokens")
        k, hit = self._features(fit_tokens)
        grid = np.linspace(0.001, 0.999, 999)
        self.share = {}
        for length in range(1, self.longest + 1):
            at = hit[k == length]
            if at.size:
                costs = [self._nll(p, at).mean() for p in grid]
                self.share[length] = float(grid[int(np.argmin(costs))])

    def _tokens(self, tokens, name: str) -> np.ndarray:
        tokens = np.atleast_2d(np.asarray(tokens))
        if tokens.ndim != 2 or tokens.shape[1] < 2 or not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError(f"{name} must be whole-number token ids (b, n) with n >= 2")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(f"{name} must be token ids in 0..{self.vocab_size - 1}")
        return tokens

    def _features(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``k (b, n - 1)``, the longest match at each position, and ``hit (b, n - 1)``, the
        share of its earlier matches followed by the true next token."""
        run = _match_lengths(tokens, self.longest)[:, :-1, :-1]  # j + 1 must exist
        k = run.max(axis=2)
        chosen = (run == k[..., None]) & (k[..., None] > 0)
        follows = tokens[:, None, 1:] == tokens[:, 1:, None]  # token j + 1 == token i + 1
        count = chosen.sum(axis=2)
        hit = np.where(count > 0, (chosen & follows).sum(axis=2) / np.maximum(count, 1), 0.0)
        return k, hit

    def _nll(self, share: float, hit: np.ndarray) -> np.ndarray:
        return -np.log(share * hit + (1 - share) / self.vocab_size)

    def losses(self, tokens: np.ndarray) -> np.ndarray:
        """Its loss (nats) on the next token at every position of ``tokens (b, n)``:
        ``(b, n - 1)``, as :func:`position_losses` gives the model's."""
        k, hit = self._features(self._tokens(tokens, "tokens"))
        out = np.full(k.shape, np.log(self.vocab_size))
        for length, share in self.share.items():
            out = np.where(k == length, self._nll(share, hit), out)
        return out


def two_matches(
    rng: np.random.Generator,
    batch: int,
    n: int,
    vocab_size: int,
    keep: str = "both",
    query: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs where a one-token match and a two-token match disagree.

    Each sequence has ``b a`` at positions ``query - 1, query`` (default ``query``: ``5 n // 8``,
    20 of 32, mid-sequence, with random tokens after it, as in training, where a copy always
    fits in the sequence); token ``a`` occurred twice before, once after ``b`` (a two-token
    match) and once after another token (a one-token match), followed by different tokens,
    each at least 6 positions before the query and 6 apart (training's copies are 4 to 14
    tokens long). In half of the sequences, at random, the two-token match is the older one.
    Returns ``tokens (batch, n)``, ``keys (batch, 2)``: the positions right after the two-token
    match and after the one-token match (where an induction head should look), and ``older
    (batch,)``: True where the two-token match came first. Apart from these, ``a`` and ``b``
    do not occur.

    ``keep="two"`` or ``"one"``: the same sequences (for the same ``rng`` state), but with the
    ``a`` of the other match replaced by another token (neither ``a`` nor ``b``), so that only
    the two-token or only the one-token match is left: the controls.
    """
    _check(batch, n, vocab_size, 15)
    if vocab_size < 8:
        raise ValueError(f"vocab_size must be at least 8 here, got {vocab_size}")
    if keep not in ("both", "two", "one"):
        raise ValueError(f'keep must be "both", "two" or "one", got {keep!r}')
    query = 5 * n // 8 if query is None else query
    if (
        isinstance(query, bool)
        or not isinstance(query, (int, np.integer))
        or not (13 <= query <= n - 2)
    ):
        raise ValueError(f"query must be a whole number in 13 .. n - 2 = {n - 2}, got {query!r}")
    tokens = np.empty((batch, n), dtype=np.int64)
    keys = np.empty((batch, 2), dtype=np.int64)
    older = rng.random(batch) < 0.5
    for s in range(batch):
        a, b, c, x, y = rng.choice(vocab_size, 5, replace=False)
        others = np.setdiff1d(np.arange(vocab_size), [a, b])
        row = rng.choice(others, n)
        first = int(rng.integers(1, query - 11))  # the older match: its "a" at `first`
        second = int(rng.integers(first + 6, query - 5))  # the newer one, 6+ before the query
        match, other = (first, second) if older[s] else (second, first)
        row[match - 1 : match + 2] = (b, a, x)
        row[other - 1 : other + 2] = (c, a, y)
        row[query - 1 : query + 1] = (b, a)
        stand_in = rng.choice(others)  # drawn whatever `keep` is: the same sequences for all
        if keep == "two":
            row[other] = stand_in
        elif keep == "one":
            row[match] = stand_in
        tokens[s], keys[s] = row, (match + 1, other + 1)
    return tokens, keys, older
