"""Retraining from the shipped seed retraces the shipped run.

The whole run (2,000 steps, about 4 minutes here) is ``make reproduce-weights``, which CI runs
after ``make test``: it must write a file with the shipped sha256. Here, within make test's time,
the first 100 steps from the shipped settings must give exactly the losses and head scores that
the shipped file recorded at steps 0, 50 and 100 (its history is part of the file).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from helpers import induction
from helpers.induction.task import SETTINGS


def test_the_first_steps_from_the_shipped_seed_retrace_the_shipped_history():
    shipped = induction.load()
    settings = {k: v for k, v in shipped.settings.items() if k in SETTINGS}
    assert settings == SETTINGS  # the defaults are the shipped run's settings
    _, history = induction.train(seed=shipped.settings["seed"], steps=100)
    assert history.steps == [0, 50, 100]
    for name in ("loss_repeat", "loss_other", "previous_token", "induction"):
        mine = np.asarray(getattr(history, name))
        theirs = np.asarray(getattr(shipped.history, name))[: len(history.steps)]
        np.testing.assert_array_equal(mine, theirs, err_msg=name)


def test_check_fails_when_the_retrained_file_is_not_the_shipped_one(tmp_path):
    """``make reproduce-weights`` relies on ``--check`` failing for another file (1 step here)."""
    out = tmp_path / "one_step.npz"
    command = [sys.executable, "-m", "helpers.induction", "--steps", "1", "--quiet", "--check"]
    result = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the shipped sha256 is" in result.stdout
