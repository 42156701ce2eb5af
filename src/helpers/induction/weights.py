"""The shipped weights of lesson 10's model: written by ``python -m helpers.induction``, read by
:func:`load` after checking their sha256.

The file is an ``.npz`` (a zip of ``.npy`` arrays) written with fixed timestamps and order, so
that retraining from the same seed with the same NumPy and BLAS kernel gives the same bytes and
the same hash (:mod:`helpers.induction.reproduce`).
It holds the weights (float32), the settings and seed they were trained with, and the history
of that run (without its timings, which no two runs share).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from .model import PARAM_NAMES, InductionModel
from .trainer import History

__all__ = [
    "WEIGHTS_PATH",
    "WEIGHTS_SHA256",
    "SHIPPED_FILES",
    "WeightsError",
    "load",
    "save",
    "sha256_of",
    "shipped_file",
]

WEIGHTS_PATH = Path(__file__).with_name("weights.npz")
# sha256 of weights.npz as `python -m helpers.induction` writes it (printed at its end).
WEIGHTS_SHA256 = "50db83b6003fed824dff9227de8e1fcc0fb1cc5a1bdbe6f682e5d9c3acffc070"
# Lesson 11's models: the same settings, seed and steps, another way to give positions
# (`python -m helpers.induction --positions rope` ...): file name and sha256 per scheme.
SHIPPED_FILES = {
    "learned": (WEIGHTS_PATH, WEIGHTS_SHA256),
    "rope": (
        WEIGHTS_PATH.with_name("weights-rope.npz"),
        "9f14039e03e8a19320055042dbc16d3d1926f219af609b4962cf5790085cda2d",
    ),
    "alibi": (
        WEIGHTS_PATH.with_name("weights-alibi.npz"),
        "dc630da53e12ad339dddf1807ed1fd88eea82b3355697a73baefb8be5534dd11",
    ),
    "none": (
        WEIGHTS_PATH.with_name("weights-none.npz"),
        "37f6abb007fc6270ebbd066e22ab3373503136f1f4b6df8551532a0445f2cba5",
    ),
}


def shipped_file(positions: str = "learned") -> tuple[Path, str]:
    """The shipped weights file of the model with ``positions`` and its sha256."""
    if not isinstance(positions, str) or positions not in SHIPPED_FILES:
        raise ValueError(
            f"positions must be one of {', '.join(map(repr, SHIPPED_FILES))}, got {positions!r}"
        )
    return SHIPPED_FILES[positions]


_HISTORY_FIELDS = (
    "steps",
    "loss_repeat",
    "loss_other",
    "previous_token",
    "induction",
    "duplicate_token",
    "loss_repeat_ablated",  # files written before it have none: an empty list
)


class WeightsError(ValueError):
    """The weights file is missing or its sha256 is not the one the course ships."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def save(path: Path, model: InductionModel, history: History, settings: dict) -> str:
    """Write ``model``'s weights (float32), ``settings`` and ``history``; return the sha256."""
    arrays = {name: model.params[name].astype(np.float32) for name in PARAM_NAMES}
    arrays["settings"] = np.array(json.dumps(settings, sort_keys=True))
    for name in _HISTORY_FIELDS:
        arrays[f"history_{name}"] = np.asarray(getattr(history, name))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            data = io.BytesIO()
            np.lib.format.write_array(data, arrays[name], allow_pickle=False)
            archive.writestr(info, data.getvalue())
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


def load(
    path: Path | None = None, sha256: str | None = None, positions: str = "learned"
) -> InductionModel:
    """Lesson 10's trained model, from the shipped ``weights.npz`` (sha256 checked first).

    ``positions="rope"``, ``"alibi"`` or ``"none"``: lesson 11's models, trained the same way
    with another way to give positions (``weights-rope.npz`` ...); ``"learned"`` (the default)
    is lesson 10's. ``path`` and ``sha256`` name another file (the positions are then those it
    was trained with).

    Returns an :class:`InductionModel` with two more attributes: ``settings`` (the dict of
    training settings, seed and steps included) and ``history`` (the :class:`History` of the
    training run that made it, every ``eval_every`` steps).

    Raises
    ------
    WeightsError
        If the file is missing or its sha256 differs from ``sha256`` (default: the one the
        course ships), e.g. after the file was overwritten.
    """
    shipped_path, shipped_sha256 = shipped_file(positions)
    path = shipped_path if path is None else Path(path)
    expected = shipped_sha256 if sha256 is None else sha256
    if not path.is_file():
        raise WeightsError(
            f"{path} is missing: restore it (`git checkout -- {path.name}` in its folder, or "
            "from a fresh copy of the course); a retraining gives the same file only with the "
            "shipped run's BLAS kernel (`make reproduce-weights`)"
        )
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise WeightsError(
            f"{path} has sha256 {digest}, not the shipped {expected}: the file was changed or "
            f"written by another run. Restore it (`git checkout -- {path.name}` in its folder, "
            "or from a fresh copy of the course)."
        )
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        settings = json.loads(str(arrays["settings"]))
        params = {name: arrays[name].astype(float) for name in PARAM_NAMES}
        history = History(**{name: list(arrays[f"history_{name}"]) for name in _HISTORY_FIELDS
                             if f"history_{name}" in arrays.files})  # fmt: skip
    model = InductionModel(params, settings["n_heads"], settings.get("positions", "learned"))
    model.settings, model.history = settings, history
    return model
