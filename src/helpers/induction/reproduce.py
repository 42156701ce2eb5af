"""How a model retrained from the shipped seed compares with the shipped ``weights.npz``.

**Bit for bit only with the same NumPy and BLAS kernel.** Training runs in float32 on one BLAS
thread, and the last few bits of every matrix product depend on the BLAS kernel
(:mod:`helpers.blas`). The shipped file was written with NumPy 2.4.6's pip wheel, whose OpenBLAS
used its ``Haswell`` kernel, the one that wheel picks on x86-64 CPUs with AVX2 but no AVX-512
(Intel Core from Haswell, 2013, on, but for its AVX-512 models; AMD Zen 1 to 3), and NumPy's
AVX-512 loops off (``helpers.blas.kernel_env("Haswell")``: a CPU of that generation). Checked on
one machine (an AMD EPYC with AVX-512): in that environment, and with
``OPENBLAS_CORETYPE=Haswell`` alone (NumPy's AVX-512 loops on), the retrained file has the
shipped sha256 (5,000 steps); with NumPy's AVX2 loops off too a loss differs in its last bit by
step 50 (seen with the earlier model): NumPy's own CPU-specific code counts as well as the BLAS
kernel. With that wheel on another x86-64 CPU with AVX2 the same command should give the same
bytes. Under another kernel the first products differ in their last few bits, and training
amplifies that: on that machine, after 5,000 steps under ``SkylakeX`` and ``Sandybridge``, the
weights differ from the shipped ones by up to 0.22 and 0.16 (in W_K). Apple's Accelerate (NumPy
on macOS 14 or later) and OpenBLAS's Arm kernels were not tried; a Mac with Apple silicon cannot
run an x86 kernel, so it never rebuilds the file bit for bit, only within the tolerance below
(threadpoolctl cannot limit Accelerate's threads either; ``VECLIB_MAXIMUM_THREADS=1`` before
Python starts does).

**Elsewhere, within a stated tolerance, on what the model does.** So a retraining is compared on
its recorded history (every 50 steps, on the same fixed fresh sequences): the two losses and the
three head scores of every head at every record, and the loss on repeats with the best
previous-token head mean-ablated. Under ``SkylakeX`` and ``Sandybridge`` the largest differences
from the shipped run were 0.016 and 0.012 nats (losses), 0.024 and 0.016 (head scores) and 0.045
and 0.031 nats (the ablated loss), all late in the run (records 3,000-4,200), not at the phase
change; :data:`TOLERANCE` allows about 6 times that. Near the phase change the loss on repeats
falls by up to 0.04 nats a step (1.9 nats between steps 200 and 250), so 0.1 nats is the drop
coming less than three steps earlier or later. The first 100 steps, before the differences grow,
agree within :data:`FIRST_STEPS_ATOL` (measured: 6.2e-8 under ``SkylakeX`` and 4.8e-7 under
``Sandybridge``: one float32 ulp at 4.1, where the spacing of float32 numbers is 4.77e-7).

A new shipped file (new settings, a new NumPy pin): retrain it under
``OPENBLAS_CORETYPE=Haswell``, update ``WEIGHTS_SHA256`` and :data:`SHIPPED_BLAS`, run ``make
reproduce-weights`` under the other kernels (``OPENBLAS_CORETYPE=SkylakeX``, ``=Sandybridge``)
and update the measured numbers here and, if they call for it, :data:`TOLERANCE` and
:data:`FIRST_STEPS_ATOL`; then ``make notebooks``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "SHIPPED_CORETYPE",
    "SHIPPED_BLAS",
    "TOLERANCE",
    "FIRST_STEPS_ATOL",
    "MEASURED",
    "HISTORY_FIELDS",
    "Comparison",
    "compare",
]

# The OpenBLAS kernel the shipped weights were trained with (OPENBLAS_CORETYPE retraces them).
SHIPPED_CORETYPE = "Haswell"
# Worded as helpers.blas.describe() words it: lesson 10 prints the two one above the other.
SHIPPED_BLAS = f"NumPy 2.4.6, OpenBLAS 0.3.31.188.0, kernel {SHIPPED_CORETYPE}"

# Largest allowed |retrained - shipped| at any record: nats for the losses, weight for the scores.
TOLERANCE = {
    "loss_repeat": 0.1,
    "loss_other": 0.1,
    "previous_token": 0.15,
    "induction": 0.15,
    "duplicate_token": 0.15,
    "loss_repeat_ablated": 0.3,
}
HISTORY_FIELDS = tuple(TOLERANCE)
# What the tolerance was chosen from (module docstring): the largest |retrained - shipped| of a
# 5,000-step retraining under two other kernels, on one AMD EPYC (lesson 10 prints them).
MEASURED = {
    "SkylakeX": {"losses": 0.016, "head scores": 0.024, "ablated loss": 0.045, "weights": 0.22},
    "Sandybridge": {"losses": 0.012, "head scores": 0.016, "ablated loss": 0.031, "weights": 0.16},
}
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
            "within the tolerance: the retrained run's losses and head scores match the shipped"
            " run's"
            if self.within
            else "NOT within the tolerance: this run's model differs from the shipped one"
        )
        return (
            "largest differences from the shipped run: "
            f"recorded losses {losses:.4f} nats (tolerance {TOLERANCE['loss_repeat']}), "
            f"head scores {scores:.4f} (tolerance {TOLERANCE['induction']}); "
            f"weights {self.weights:.3f} (in {self.weights_name}; not compared: training "
            f"amplifies the last bits in which BLAS kernels differ)\n{verdict}"
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
