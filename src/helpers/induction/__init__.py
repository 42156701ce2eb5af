"""Lesson 10's causal model: a two-layer attention-only Transformer that learns induction heads.

:mod:`.model` holds the model, its forward pass and its hand-written backward pass; :mod:`.task`
the repeated-sequence task, the head scores and :func:`train`. :func:`load` returns the model
trained by ``python -m helpers.induction`` from a fixed seed, whose weights ship with the
course (``weights.npz``, checked by sha256 before every load).
"""

from .model import InductionModel, gradient_check, init_params, loss_and_grads
from .task import (
    SETTINGS,
    SHIPPED,
    History,
    Repeats,
    head_scores,
    induction_score,
    previous_token_score,
    repeat_task,
    train,
)
from .weights import WEIGHTS_PATH, WEIGHTS_SHA256, WeightsError, load

__all__ = [
    "InductionModel",
    "init_params",
    "loss_and_grads",
    "gradient_check",
    "load",
    "WeightsError",
    "WEIGHTS_PATH",
    "WEIGHTS_SHA256",
    "SETTINGS",
    "SHIPPED",
    "History",
    "Repeats",
    "repeat_task",
    "head_scores",
    "previous_token_score",
    "induction_score",
    "train",
]
