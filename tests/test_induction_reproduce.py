"""Retraining from the shipped seed retraces the shipped run: bit for bit under the shipped run's
BLAS kernel, within a stated tolerance under any other (``helpers.induction.reproduce``).

The whole run (2,000 steps, about a minute here) is ``make reproduce-weights``, which CI runs
after ``make test`` under this CPU's own kernel (within the tolerance) and under the shipped
kernel (bit for bit). Here, within make test's time, the first 100 steps from the shipped
settings are compared with the history the shipped file recorded at steps 0, 50 and 100.
``make test`` runs this file under several OpenBLAS kernels (tools/run_tests.py).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import blas, induction
from helpers.induction import SHIPPED
from helpers.induction.reproduce import (
    FIRST_STEPS_ATOL,
    HISTORY_FIELDS,
    SHIPPED_CORETYPE,
    TOLERANCE,
    compare,
)

FIRST_STEPS = 100
ROOT = Path(__file__).resolve().parent.parent


# Lesson 10's model and lesson 11's three others: the same settings and seed, other positions.
SCHEMES = ("learned", "rope", "alibi", "none")


def first_steps_history(positions: str = "learned") -> dict[str, list]:
    shipped = induction.load(positions=positions)
    # the defaults are the shipped run's settings
    assert shipped.settings == dataclasses.replace(SHIPPED, positions=positions).recorded()
    _, history = induction.train(
        seed=shipped.settings["seed"], steps=FIRST_STEPS, positions=positions
    )
    assert history.steps == [0, 50, 100]
    return {name: np.asarray(getattr(history, name)).tolist() for name in HISTORY_FIELDS}


def shipped_first_records(positions: str = "learned") -> dict[str, np.ndarray]:
    """The shipped history's records at steps 0, 50 and 100 (one load, one sha256 check)."""
    history = induction.load(positions=positions).history
    return {name: np.asarray(getattr(history, name))[:3] for name in HISTORY_FIELDS}


@pytest.mark.parametrize("positions", SCHEMES)
def test_the_first_steps_retrace_the_shipped_history_within_the_tolerance_on_any_kernel(positions):
    """Under this process's kernel, whichever it is: the recorded losses and head scores."""
    mine, shipped = first_steps_history(positions), shipped_first_records(positions)
    for name in HISTORY_FIELDS:
        np.testing.assert_allclose(
            mine[name], shipped[name], rtol=0, atol=FIRST_STEPS_ATOL, err_msg=name
        )


@pytest.mark.parametrize("positions", SCHEMES)
def test_under_the_shipped_kernel_the_first_steps_are_bit_for_bit(positions):
    """In a new Python with OPENBLAS_CORETYPE set to the shipped run's kernel: exactly equal."""
    if SHIPPED_CORETYPE not in blas.runnable_kernels():
        pytest.skip(f"this CPU cannot run OpenBLAS's {SHIPPED_CORETYPE} kernel (x86-64 with AVX2)")
    child = blas.kernel_in_child(SHIPPED_CORETYPE, generation=True)  # the run's environment
    if child["library"] != "openblas":
        pytest.skip(f"NumPy here uses {child['library']}, not OpenBLAS: no kernel can be chosen")
    assert child["kernel"] == SHIPPED_CORETYPE, child
    code = (
        "import json, tests.test_induction_reproduce as t; "
        f"print(json.dumps(t.first_steps_history({positions!r})))"
    )
    # As on a CPU of the shipped kernel's generation: NumPy's own loops too (make test's
    # Sandybridge pass turns NumPy's AVX2 loops off, which changes a loss's last bit).
    env = {**os.environ, **blas.kernel_env(SHIPPED_CORETYPE)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    mine, shipped = json.loads(result.stdout), shipped_first_records(positions)
    for name in HISTORY_FIELDS:
        np.testing.assert_array_equal(np.asarray(mine[name]), shipped[name], err_msg=name)


def shifted(model, name: str, by: float):
    """A copy of ``model`` whose recorded ``name`` is ``by`` higher at its last record."""
    other = copy.copy(model)
    other.history = copy.deepcopy(model.history)
    values = getattr(other.history, name)
    values[-1] = np.asarray(values[-1]) + by
    return other


@pytest.mark.parametrize("name", HISTORY_FIELDS)
def test_the_comparison_passes_within_the_tolerance_and_fails_beyond_it(name):
    shipped = induction.load()
    assert compare(shipped, shipped).bit_for_bit and compare(shipped, shipped).within
    near = compare(shifted(shipped, name, 0.9 * TOLERANCE[name]), shipped)
    assert near.within and not near.bit_for_bit
    assert near.history[name] == pytest.approx(0.9 * TOLERANCE[name])
    far = compare(shifted(shipped, name, -1.1 * TOLERANCE[name]), shipped)
    assert not far.within
    assert "NOT within the tolerance" in far.report()


def test_the_comparison_refuses_a_run_with_other_settings():
    shipped = induction.load()
    other = copy.copy(shipped)
    other.settings = {**shipped.settings, "steps": 1}
    with pytest.raises(ValueError, match="steps 1 .shipped 5000."):
        compare(other, shipped)


def test_check_fails_when_the_retrained_file_is_not_the_shipped_one(tmp_path):
    """``make reproduce-weights`` relies on ``--check`` failing for another run (1 step here)."""
    out = tmp_path / "one_step.npz"
    command = [sys.executable, "-m", "helpers.induction", "--steps", "1", "--quiet", "--check"]
    result = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the shipped sha256 is" in result.stdout
    assert "not comparable" in result.stdout


def test_a_missing_output_folder_is_made_and_an_impossible_one_refused_before_training(tmp_path):
    """A long retraining must not be lost to its output folder (``build/`` on a fresh clone)."""
    out = tmp_path / "build" / "nested" / "w.npz"
    command = [sys.executable, "-m", "helpers.induction", "--steps", "1", "--quiet"]
    subprocess.run([*command, "--out", str(out)], check=True, capture_output=True, text=True)
    assert out.is_file()
    (tmp_path / "a_file").write_text("")
    result = subprocess.run(
        [*command, "--out", str(tmp_path / "a_file" / "w.npz")], capture_output=True, text=True
    )
    assert result.returncode == 2 and "cannot make the folder" in result.stderr
    assert "wrote" not in result.stdout  # refused before any training
