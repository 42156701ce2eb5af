"""How a model retrained from the shipped seed compares with the shipped ``weights.npz``.

**Bit for bit only with the same NumPy and BLAS kernels.** Training runs in float32 on one BLAS
thread, and every matrix product's rounding depends on the kernel OpenBLAS picked for the CPU
(:mod:`helpers.blas`). The shipped file was written with NumPy 2.4.6's OpenBLAS using its
``Haswell`` kernel, the one it picks on AVX2 CPUs (Intel since 2013, AMD Zen 1-3): there, or
anywhere with ``OPENBLAS_CORETYPE=Haswell`` on an x86-64 CPU with AVX2, the retrained file has
the shipped sha256. Under another kernel (``SkylakeX`` on AVX-512 CPUs, ``Sandybridge``; Apple's
Accelerate on a Mac) the first products differ in their last bit, and training amplifies that:
measured here, after 2,000 steps the weights differ by up to 0.09 (in W_Q, whose largest entry
is 0.61), although the model does the same thing.

**Elsewhere, within a stated tolerance, on what the model does.** So a retraining is compared on
its recorded history (every 50 steps, on the same fixed fresh sequences): the two losses and the
three head scores of every head at every record. Measured here under ``SkylakeX`` and
``Sandybridge``, the largest differences from the shipped run were 0.0026 nats (losses) and
0.0082 (head scores); :data:`TOLERANCE` allows about 6 to 8 times that. The first 100 steps,
before the differences grow, agree to within :data:`FIRST_STEPS_ATOL` (measured: 4.8e-7, one
float32 rounding of a loss near 4.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "SHIPPED_CORETYPE",
    "SHIPPED_BLAS",
    "TOLERANCE",
    "FIRST_STEPS_ATOL",
    "HISTORY_FIELDS",
    "Comparison",
    "compare",
]

# The OpenBLAS kernel the shipped weights were trained with (OPENBLAS_CORETYPE retraces them).
SHIPPED_CORETYPE = "Haswell"
SHIPPED_BLAS = f"NumPy 2.4.6's OpenBLAS 0.3.31, kernel {SHIPPED_CORETYPE}"

# Largest allowed |retrained - shipped| at any record: nats for the losses, weight for the scores.
TOLERANCE = {
    "loss_repeat": 0.02,
    "loss_other": 0.02,
    "previous_token": 0.05,
    "induction": 0.05,
    "duplicate_token": 0.05,
}
HISTORY_FIELDS = tuple(TOLERANCE)
# The first 100 steps under another kernel: largest allowed difference of any recorded number.
FIRST_STEPS_ATOL = 1e-5


@dataclass
class Comparison:
    """A retrained run against the shipped one.

    ``bit_for_bit``: the same bytes. ``weights``: the largest |difference| of any weight, and
    ``weights_name`` the matrix it is in. ``history``: per recorded quantity, the largest
    |difference| over every record and head. ``within``: every history difference is within
    :data:`TOLERANCE`.
    """

    bit_for_bit: bool
    weights: float
    weights_name: str
    history: dict[str, float]

    @property
    def within(self) -> bool:
        return self.bit_for_bit or all(self.history[k] <= TOLERANCE[k] for k in TOLERANCE)

    def report(self) -> str:
        """What ``python -m helpers.induction --check`` prints."""
        if self.bit_for_bit:
            return "bit for bit: the same bytes as the shipped weights"
        losses = max(self.history["loss_repeat"], self.history["loss_other"])
        scores = max(self.history[k] for k in ("previous_token", "induction", "duplicate_token"))
        verdict = (
            "within the tolerance: the retrained model does what the shipped one does"
            if self.within
            else "NOT within the tolerance: this run's model differs from the shipped one"
        )
        return (
            "largest differences from the shipped run: "
            f"recorded losses {losses:.4f} nats (tolerance {TOLERANCE['loss_repeat']}), "
            f"head scores {scores:.4f} (tolerance {TOLERANCE['induction']}); "
            f"weights {self.weights:.3f} (in {self.weights_name}; not compared: training "
            f"amplifies a last-bit difference)\n{verdict}"
        )


def compare(retrained, shipped) -> Comparison:
    """Compare two models as :func:`helpers.induction.load` returns them (trained with the same
    settings: the same records). Raises ValueError if their settings or records differ."""
    if retrained.settings != shipped.settings:
        differ = sorted(
            k
            for k in set(retrained.settings) | set(shipped.settings)
            if retrained.settings.get(k) != shipped.settings.get(k)
        )
        raise ValueError(
            "not the shipped run's settings, so not comparable: "
            + ", ".join(
                f"{k} {retrained.settings.get(k)!r} (shipped {shipped.settings.get(k)!r})"
                for k in differ
            )
        )
    if list(retrained.history.steps) != list(shipped.history.steps):
        raise ValueError("the two runs recorded different steps")
    weights, weights_name = 0.0, ""
    for name, value in shipped.params.items():
        largest = float(np.max(np.abs(retrained.params[name] - value)))
        if largest > weights:
            weights, weights_name = largest, name
    history = {
        name: float(
            np.max(
                np.abs(
                    np.asarray(getattr(retrained.history, name), dtype=float)
                    - np.asarray(getattr(shipped.history, name), dtype=float)
                )
            )
        )
        for name in HISTORY_FIELDS
    }
    bit_for_bit = weights == 0.0 and all(v == 0.0 for v in history.values())
    return Comparison(bit_for_bit, weights, weights_name, history)
