"""The task, the scores and the training loop of lesson 10's induction model.

:func:`repeat_task` draws random token sequences in which a segment of random length recurs
at random places; the model learns next-token prediction on them. Only the tokens of a later
copy (after its first) can be predicted, and only by finding the earlier copy in context: an
*induction* head does that (Olsson et al. 2022).

The scores, per head, on such sequences:

* previous-token score: the mean weight a query puts on the key just before it;
* induction score: for the queries of a later copy, the weight on the keys just *after* the
  earlier occurrences of the query's token (on a segment of length L repeated right after
  itself: the diagonal at offset -L + 1);
* duplicate-token score: for the same queries, the weight on the earlier occurrences of the
  query's token itself, the other way a first layer can help find the match.

How the settings were chosen (issue 20; each run: vocab 64, d_model 64, 4 heads, 32 positions,
batch 64, Adam; "classic" = a layer-0 previous-token head >= 0.5 and layer-1 induction heads
>= 0.5; numbers from the run logs, every 100 steps):

* segment twice, tokens with replacement, lr 3e-3, seeds 0 and 1: classic (previous-token
  0.77 and 0.72, induction 0.75), but the loss on repeats stalls near 0.65 nats (1,700 steps):
  tokens also recur by chance about as often as the segment does, and a model that matches one
  token cannot tell which recurrence will continue; lr 1e-2 (seed 1): induction 0.8 with no
  previous-token head (at most 0.06);
* the same with 128 tokens (seed 0): a *duplicate-token* head in layer 0 (0.80) instead of a
  previous-token head: it finds the earlier copy of the query's own token, and layer 1 looks
  one position after it;
* segment twice, distinct tokens (only the copy recurs), seeds 0 and 1: duplicate-token
  mechanism (0.91 and 0.89);
* segment two or three times, with replacement (seed 0): classic, loss on repeats stalls at
  0.61;
* segment of 5-14 tokens two or three times, distinct tokens, lr 3e-3: seeds 0, 1 classic
  (previous-token 0.66 and 0.59 by step 1,000; induction 0.94 and 0.90; loss on repeats 0.24
  and 0.42), seeds 2 and 3 the duplicate-token mechanism (0.95, 0.93). A third copy helps the
  classic circuit: a query with two earlier occurrences averages their positions in a
  duplicate-token head, while a previous-token head marks both successors;
* shipped until issue 32: the same with segments of 5-10 tokens, so that three copies always
  fit. By step 800: seed 0 classic (previous-token 0.66, induction 0.94, loss on repeats 0.22);
  seeds 2 and 3 classic too (0.65 and 0.63, induction 0.95 and 0.91, loss 0.25; seed 3 also keeps a
  duplicate-token head, 0.92); seed 1 the duplicate-token mechanism (0.94, previous-token
  0.11, loss 0.23). The phase change comes earlier than with 5-14 tokens (loss on repeats below
  1 nat by step 500-600 instead of 800). So 3 seeds of 4 give the classic circuit, not all:
  the shipped weights until issue 32 were seed 0's.

Issue 32 (shipped since): distinct tokens were a shortcut (that model learned that a token
already seen never comes next: 4.54 nats on first occurrences of sequences drawn with
replacement). Tokens are now drawn **with replacement**, as in Olsson et al.'s repeated random
tokens, and chance recurrences make a one-token match ambiguous. Measured with
``tools/induction_experiment.py`` (seed 0 unless said; "repeats" on fresh sequences of the
training layout):

* d_model 64, a 5-14-token segment twice, 5,000 steps: repeats plateau near 0.57 nats;
  d_model 128: 0.32-0.45;
* d_model 128, batches from three layouts (:func:`mixed_batch`), the learning rate decayed
  linearly to 0 over the last 1,500 of 5,000 steps (**shipped**, seed 0): repeats 0.29
  (copier floor 0.19); first occurrences 1.01-1.06 x log 64 on six layouts, three held out;
  layer 0 grows a previous-token head (0.97), a two-back head (0.73 on the key two back) and
  a duplicate-token head (0.66); all four layer-1 heads induct (0.77-0.81). The phase change:
  loss on repeats 3.57 at step 200, 1.65 at step 250. From a copy's second token on the loss
  is within 0.1 nats of the one-token copier; at its first token it is 1.4 nats (the copier,
  told a copy starts there, 0.15): one matching token is more often a chance recurrence than
  a copy, and the layer-1 heads match two tokens (lesson 10, section 6);
* the same settings, seed 1: the same circuit, its heads in another order (previous-token head
  0 at 0.96, two-back head 3 at 0.73, duplicate-token head 2 at 0.58; induction 0.76-0.81);
  repeats 0.29, first occurrences 1.01-1.06 x log 64; mean-ablating the previous-token head:
  3.53 nats; patched out of the keys only 1.99, the queries only 0.95, the values only 0.29.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..blas import one_blas_thread
from ..training import Adam
from . import circuits
from .model import InductionModel, forward, init_params, loss_and_grads

__all__ = [
    "Repeats",
    "repeat_task",
    "head_scores",
    "previous_token_score",
    "induction_score",
    "History",
    "train",
    "SETTINGS",
    "SHIPPED",
]

# The default settings of train().
SETTINGS = dict(
    vocab_size=64,
    d_model=128,
    n_heads=4,
    max_len=32,
    batch=64,
    lr=3e-3,
    min_repeat=5,
    max_repeat=14,
    distinct=False,
    max_copies=2,
    eval_every=50,
    mix=True,
    decay_start=3500,
)
# The shipped weights: these settings, this seed, this many steps (python -m helpers.induction).
SHIPPED = dict(SETTINGS, seed=0, steps=5000)


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


def head_scores(attention: np.ndarray, data: Repeats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per head: ``(previous_token, induction, duplicate_token)``, each ``(n_layers, n_heads)``.

    ``attention (b, n_layers, n_heads, n, n)`` on ``data``'s sequences. Previous-token: the mean
    over the batch and the queries 1..n-1 of ``A[i, i - 1]``. Induction: the mean over the
    queries ``i`` of every copy after the first of the weight on the keys just after the
    earlier occurrences of its token (``A[i, i - D + 1]`` for a copy D positions earlier; a
    segment of length L repeated right after itself: the diagonal at offset -L + 1). Duplicate
    token: the same queries, the weight on the earlier occurrences themselves (``A[i, i - D]``).
    """
    previous = np.diagonal(attention, -1, axis1=-2, axis2=-1).mean(axis=(0, -1))
    query_id, batch_index, rows, keys = [], [], [], []
    queries = 0
    for s in range(len(data.tokens)):
        L, starts = data.length[s], data.starts[s, : data.count[s]]
        for c in range(1, len(starts)):
            q = np.arange(starts[c], starts[c] + L)
            for e in range(c):
                query_id.append(queries + np.arange(L))
                batch_index.append(np.full(L, s))
                rows.append(q)
                keys.append(q - (starts[c] - starts[e]) + 1)
            queries += L
    batch_index, rows, keys = map(np.concatenate, (batch_index, rows, keys))
    induction = attention[batch_index, :, :, rows, keys].sum(axis=0) / queries
    duplicate = attention[batch_index, :, :, rows, keys - 1].sum(axis=0) / queries
    return previous, induction, duplicate


def previous_token_score(A: np.ndarray) -> np.ndarray:
    """Mean weight on the previous token, ``A[i, i - 1]`` over the queries 1..n-1: one score per
    map of ``A (..., n, n)`` (lesson 10's exercise 1)."""
    A = _attention_stack(A)
    return np.diagonal(A, -1, axis1=-2, axis2=-1).mean(axis=-1)


def induction_score(A: np.ndarray, L: int) -> np.ndarray:
    """On a sequence whose token i equals token i - L (a segment of length L repeated), the mean
    weight ``A[i, i - L + 1]`` over the queries ``i = L .. n - 1``: one score per map of
    ``A (..., n, n)`` (lesson 10's exercise 2)."""
    A = _attention_stack(A)
    n = A.shape[-1]
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or not 1 <= L < n:
        raise ValueError(f"L must be a whole number in 1 .. n - 1 = {n - 1}, got {L!r}")
    queries = np.arange(L, n)
    return A[..., queries, queries - L + 1].mean(axis=-1)


def _attention_stack(A) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2:
        raise ValueError(f"A must be attention maps (..., n, n) with n >= 2, got {A.shape}")
    return A


@dataclass
class History:
    """What :func:`train` records every ``eval_every`` steps on a fixed set of fresh sequences.

    ``steps[j]`` the step (0 = before training); ``loss_repeat[j]`` the mean loss on the
    predictable tokens of the repeats, ``loss_other[j]`` on every other token (first
    occurrences, about log(vocab_size) at best); ``previous_token[j]``, ``induction[j]`` and
    ``duplicate_token[j]`` each head's scores ``(n_layers, n_heads)``;
    ``loss_repeat_ablated[j]`` the loss on repeats with layer 0's best previous-token head (at
    that record) mean-ablated (its output replaced by its mean over the same sequences): what
    the rest of the model can do without it; ``seconds[j]`` the time since the start.
    """

    steps: list = field(default_factory=list)
    loss_repeat: list = field(default_factory=list)
    loss_other: list = field(default_factory=list)
    previous_token: list = field(default_factory=list)
    induction: list = field(default_factory=list)
    duplicate_token: list = field(default_factory=list)
    loss_repeat_ablated: list = field(default_factory=list)
    seconds: list = field(default_factory=list)

    def as_arrays(self) -> dict[str, np.ndarray]:
        return {name: np.array(getattr(self, name)) for name in self.__dataclass_fields__}


def evaluate(model: InductionModel, data: Repeats) -> dict:
    """Losses on repeats and on the other tokens, and each head's two scores, on ``data``."""
    cache = forward(model.params, data.tokens, model.n_heads, positions=model.positions,
                    position_scale=getattr(model, "position_scale", 1.0))  # fmt: skip
    logits = cache.logits
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    safe = np.where(data.targets >= 0, data.targets, 0)[..., None]
    nll = -np.take_along_axis(log_probs, safe, axis=-1)[..., 0]  # (b, n)
    other = (~data.is_repeat) & (data.targets >= 0)
    previous, induction, duplicate = head_scores(np.stack(cache.A, axis=1), data)
    head = (0, int(np.argmax(previous[0])))
    means = circuits.head_means(model, data.tokens)
    ablated = circuits.run(model, data.tokens, {head: means[head]}).losses(data.tokens)
    return {
        "loss_repeat": float(nll[data.is_repeat].mean()),
        "loss_other": float(nll[other].mean()),
        "previous_token": previous,
        "induction": induction,
        "duplicate_token": duplicate,
        # Rounded: computed in float64, whose last bit differed between two runs of the same
        # training (8.9e-16, the weights identical), and the shipped file must be the same bytes.
        "loss_repeat_ablated": round(float(ablated[data.is_repeat[:, :-1]].mean()), 6),
    }


def train(
    seed: int = 0,
    steps: int = 5000,
    *,
    vocab_size: int = SETTINGS["vocab_size"],
    d_model: int = SETTINGS["d_model"],
    n_heads: int = SETTINGS["n_heads"],
    max_len: int = SETTINGS["max_len"],
    batch: int = SETTINGS["batch"],
    lr: float = SETTINGS["lr"],
    min_repeat: int = SETTINGS["min_repeat"],
    max_repeat: int = SETTINGS["max_repeat"],
    distinct: bool = SETTINGS["distinct"],
    max_copies: int = SETTINGS["max_copies"],
    eval_every: int = SETTINGS["eval_every"],
    mix: bool = SETTINGS["mix"],
    decay_start: int | None = SETTINGS["decay_start"],
    n_eval: int = 256,
    dtype=np.float32,
    callback=None,
    positions: str = "learned",
    init: InductionModel | None = None,
    position_scale: float = 1.0,
) -> tuple[InductionModel, History]:
    """Train the two-layer attention-only model on :func:`repeat_task` with Adam.

    Parameters
    ----------
    seed : int
        Seeds the starting weights, the training batches and the evaluation set: the same seed
        and settings give the same weights with the same NumPy and BLAS kernel (elsewhere, a
        model within :data:`helpers.induction.reproduce.TOLERANCE`).
    steps : int
        Adam steps of ``batch`` sequences of ``max_len`` tokens each.
    mix : bool
        Draw each batch from one of three layouts, in turn at random: :func:`repeat_task`'s,
        a segment repeated right after itself, two segments interleaved
        (:func:`mixed_batch`); else :func:`repeat_task`'s only.
    decay_start : int, optional
        From this step on, the learning rate falls linearly to 0 at ``steps`` (none if None
        or past ``steps``); before it, ``lr``. A shorter run with the same ``decay_start``
        retraces a longer one's first steps.
    eval_every : int
        Record the :class:`History` every this many steps (and at 0 and the last step), on
        ``n_eval`` fixed fresh sequences (drawn before training from their own generator).
    dtype : NumPy float type
        Of the weights and the arithmetic while training: float32 (the default) takes about
        half the time of float64.
    callback : callable, optional
        Called as ``callback(step, history)`` after each record (a live plot, a time limit:
        return True to stop early).
    positions : str
        How the model knows where a token is: ``"learned"`` (the shipped model), ``"rope"``,
        ``"alibi"`` or ``"none"`` (lesson 11).
    init : InductionModel, optional
        Start from this model's weights instead of fresh ones (fine-tuning; its positions and
        sizes must match the settings; ``seed`` still seeds the batches).
    position_scale : float
        RoPE's positions are multiplied by it while training and evaluating (fine-tuning with
        position interpolation, Chen et al. 2023: training length / new length).

    Returns
    -------
    model : InductionModel
    history : History
    """
    for name, value in (("steps", steps), ("batch", batch), ("eval_every", eval_every),
                        ("n_eval", n_eval)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if batch < 1 or eval_every < 1 or n_eval < 1:
        raise ValueError("batch, eval_every and n_eval must be at least 1")
    if init is None:
        params = init_params(vocab_size, d_model, n_heads, max_len, 2, seed=seed)
    else:
        if init.positions != positions or (init.vocab_size, init.d_model, init.n_heads) != (
            vocab_size, d_model, n_heads
        ):  # fmt: skip
            raise ValueError(
                f"init is {init!r}; the settings ask for positions={positions!r}, vocab_size="
                f"{vocab_size}, d_model={d_model}, n_heads={n_heads}"
            )
        if init.max_len is not None and max_len > init.max_len:
            raise ValueError(f"init's table of learned positions has {init.max_len} rows; "
                             f"max_len={max_len} needs more")  # fmt: skip
        params = init.params
    params = {name: value.astype(dtype) for name, value in params.items()}  # copies
    model = InductionModel(params, n_heads, positions)
    model.params = params  # train in place, in dtype
    if position_scale != 1.0:
        model = model.interpolate(position_scale)  # checks it; shares the params
        model.params = params
    eval_data = repeat_task(np.random.default_rng([seed, 1]), n_eval, max_len, vocab_size,
                            min_repeat, max_repeat, distinct, max_copies)  # fmt: skip
    rng = np.random.default_rng([seed, 2])
    optimiser = Adam(params, lr=lr)
    history = History()
    start = time.perf_counter()

    def record(step: int) -> bool:
        scores = evaluate(model, eval_data)
        history.steps.append(step)
        for name, value in scores.items():
            getattr(history, name).append(value)
        history.seconds.append(time.perf_counter() - start)
        return bool(callback(step, history)) if callback is not None else False

    # One BLAS thread: OpenBLAS's float32 products can differ in the last bit with the number of
    # threads (seen here: the loss at step 50 off by 4.8e-7 with the default threads), and the
    # same seed must retrace the shipped run exactly under the same BLAS kernel, whatever the
    # number of cores.
    with one_blas_thread():
        if record(0):
            return model, history
        for step in range(1, steps + 1):
            if decay_start is not None and decay_start < steps:
                left = min(1.0, (steps - step) / (steps - decay_start))
                optimiser.lr = lr * max(left, 0.0)
            if mix:
                tokens, targets = mixed_batch(rng, batch, max_len, vocab_size, min_repeat,
                                              max_repeat, distinct, max_copies)  # fmt: skip
            else:
                data = repeat_task(rng, batch, max_len, vocab_size, min_repeat, max_repeat,
                                   distinct, max_copies)  # fmt: skip
                tokens, targets = data.tokens, data.targets
            _, grads, _ = loss_and_grads(params, tokens, targets, n_heads, positions,
                                         model.position_scale)  # fmt: skip
            optimiser.step(params, grads)
            if step % eval_every == 0 or step == steps:
                if record(step):
                    break
    return model, history
