"""Training lesson 10's model: :class:`TrainConfig` (every setting, the shipped run's by
default), :func:`train` (Adam on :mod:`.task`'s sequences, in float32, one BLAS thread) and the
:class:`History` it records on fresh sequences as it goes.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np

from ..blas import one_blas_thread
from ..training import Adam
from . import circuits
from .backward import loss_and_grads
from .model import InductionModel, forward, init_params
from .scores import head_scores
from .task import Repeats, mixed_batch, repeat_task

__all__ = ["TrainConfig", "SHIPPED", "History", "evaluate", "train"]


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of :func:`train`; the defaults are the shipped model's run.

    ``seed`` seeds the starting weights, the training batches and the evaluation set: the same
    seed and settings give the same weights with the same NumPy and BLAS kernel (elsewhere, a
    model within :data:`helpers.induction.reproduce.TOLERANCE`). ``steps`` Adam steps of
    ``batch`` sequences of ``max_len`` tokens, the task's (``min_repeat`` .. ``max_repeat``,
    ``distinct``, ``max_copies``: :func:`~helpers.induction.task.repeat_task`); with ``mix``,
    each batch from one of three layouts (:func:`~helpers.induction.task.mixed_batch`). From
    ``decay_start`` on, the learning rate falls linearly from ``lr`` to 0 at ``steps`` (none if
    None or past ``steps``; a shorter run with the same ``decay_start`` retraces a longer one's
    first steps). The :class:`History` is recorded every ``eval_every`` steps (and at 0 and
    the last) on ``n_eval`` fixed fresh sequences. ``positions``: ``"learned"`` (the shipped
    model), ``"rope"``, ``"alibi"`` or ``"none"`` (lesson 11); ``position_scale`` multiplies
    RoPE's positions (fine-tuning with position interpolation, Chen et al. 2023). ``dtype``:
    of the weights and the arithmetic (float32 takes about half float64's time).
    """

    seed: int = 0
    steps: int = 5000
    vocab_size: int = 64
    d_model: int = 128
    n_heads: int = 4
    max_len: int = 32
    batch: int = 64
    lr: float = 3e-3
    min_repeat: int = 5
    max_repeat: int = 14
    distinct: bool = False
    max_copies: int = 2
    eval_every: int = 50
    mix: bool = True
    decay_start: int | None = 3500
    n_eval: int = 256
    positions: str = "learned"
    position_scale: float = 1.0
    dtype: type = np.float32

    def recorded(self) -> dict:
        """The settings a weights file records (``settings`` in it): the run's, without the
        evaluation size, the dtype and a position scale of 1; ``positions`` only when not
        learned (lesson 10's file predates the choice: its bytes stay)."""
        kept = {k: v for k, v in asdict(self).items() if k not in ("n_eval", "dtype")}
        if kept["position_scale"] == 1.0:
            del kept["position_scale"]
        if kept["positions"] == "learned":
            del kept["positions"]
        return kept


# The shipped weights: the defaults (python -m helpers.induction). Made at import: no method of
# TrainConfig's may run then (a learner's `from helpers.induction import ...` inside an answer
# would count as calling it).
SHIPPED = TrainConfig()


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


def _settings(config: TrainConfig, changes: dict) -> TrainConfig:
    """``config`` with ``changes`` by name, each checked (a clear error for a wrong one)."""
    unknown = sorted(set(changes) - {f.name for f in fields(TrainConfig)})
    if unknown:
        raise ValueError(f"train() has no setting {unknown[0]!r}; TrainConfig's are "
                         f"{', '.join(f.name for f in fields(TrainConfig))}")  # fmt: skip
    c = replace(config, **changes)
    for name in ("steps", "batch", "eval_every", "n_eval"):
        value = getattr(c, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if c.batch < 1 or c.eval_every < 1 or c.n_eval < 1:
        raise ValueError("batch, eval_every and n_eval must be at least 1")
    return c


def _initial_params(c: TrainConfig, init: InductionModel | None) -> dict:
    """Fresh weights from the seed, or ``init``'s (which must fit the settings)."""
    if init is None:
        params = init_params(c.vocab_size, c.d_model, c.n_heads, c.max_len, 2, seed=c.seed)
    else:
        if init.positions != c.positions or (init.vocab_size, init.d_model, init.n_heads) != (
            c.vocab_size, c.d_model, c.n_heads
        ):  # fmt: skip
            raise ValueError(
                f"init is {init!r}; the settings ask for positions={c.positions!r}, vocab_size="
                f"{c.vocab_size}, d_model={c.d_model}, n_heads={c.n_heads}"
            )
        if init.max_len is not None and c.max_len > init.max_len:
            raise ValueError(f"init's table of learned positions has {init.max_len} rows; "
                             f"max_len={c.max_len} needs more")  # fmt: skip
        params = init.params
    return params


def train(
    config: TrainConfig = SHIPPED,
    *,
    callback=None,
    init: InductionModel | None = None,
    **changes,
) -> tuple[InductionModel, History]:
    """Train the two-layer attention-only model with Adam, as ``config`` says
    (:class:`TrainConfig`), with ``changes`` to it by name (``train(seed=1, steps=1200)``).

    ``callback(step, history)`` is called after each record (a live plot, a time limit: return
    True to stop early). ``init``: start from this model's weights instead of fresh ones
    (fine-tuning; its positions and sizes must match the settings; the seed still seeds the
    batches). Returns the model and its :class:`History`.
    """
    c = _settings(config, changes)
    params = _initial_params(c, init)
    params = {name: value.astype(c.dtype) for name, value in params.items()}  # copies
    model = InductionModel(params, c.n_heads, c.positions)
    model.params = params  # train in place, in dtype
    if c.position_scale != 1.0:
        model = model.interpolate(c.position_scale)  # checks it; shares the params
        model.params = params
    eval_data = repeat_task(np.random.default_rng([c.seed, 1]), c.n_eval, c.max_len,
                            c.vocab_size, c.min_repeat, c.max_repeat, c.distinct,
                            c.max_copies)  # fmt: skip
    rng = np.random.default_rng([c.seed, 2])
    optimiser = Adam(params, lr=c.lr)
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
        for step in range(1, c.steps + 1):
            if c.decay_start is not None and c.decay_start < c.steps:
                left = min(1.0, (c.steps - step) / (c.steps - c.decay_start))
                optimiser.lr = c.lr * max(left, 0.0)
            if c.mix:
                tokens, targets = mixed_batch(rng, c.batch, c.max_len, c.vocab_size,
                                              c.min_repeat, c.max_repeat, c.distinct,
                                              c.max_copies)  # fmt: skip
            else:
                data = repeat_task(rng, c.batch, c.max_len, c.vocab_size, c.min_repeat,
                                   c.max_repeat, c.distinct, c.max_copies)  # fmt: skip
                tokens, targets = data.tokens, data.targets
            _, grads, _ = loss_and_grads(params, tokens, targets, c.n_heads, c.positions,
                                         model.position_scale)  # fmt: skip
            optimiser.step(params, grads)
            if step % c.eval_every == 0 or step == c.steps:
                if record(step):
                    break
    return model, history
