"""Lesson 10's causal model: a two-layer attention-only Transformer that learns induction heads.

:mod:`.model` holds the model and its forward pass (with hook points), :mod:`.backward` its
hand-written backward pass; :mod:`.task` the repeated-sequence task; :mod:`.scores` the
per-head scores; :mod:`.trainer` :class:`TrainConfig` and :func:`train`; :mod:`.circuits` the
ablations, path patching and direct logit attribution, as hooks on the forward pass.
:func:`load` returns the model
trained by ``python -m helpers.induction`` from a fixed seed, whose weights ship with the
course (``weights.npz``, checked by sha256 before every load).
"""

from .backward import gradient_check, loss_and_grads
from .model import InductionModel, init_params
from .scores import head_scores, induction_score, previous_token_score
from .task import Repeats, repeat_task
from .trainer import SHIPPED, History, TrainConfig, train
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
    "TrainConfig",
    "SHIPPED",
    "History",
    "Repeats",
    "repeat_task",
    "head_scores",
    "previous_token_score",
    "induction_score",
    "train",
]
