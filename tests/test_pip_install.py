"""`pip install` of the course alone, as on Colab or a JupyterHub (issue 43): a fresh venv, no
requirements.txt, then every lesson under nbval there (tools/check_pip_install.py), once at the
newest versions the package index gives and once at pyproject.toml's lower bounds (uv's
lowest-direct resolution). Needs the package index, as `make test`'s own set-up does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("resolution", ["newest", "lowest"])
def test_pip_install_alone_runs_every_lesson(resolution):
    run = subprocess.run(
        [sys.executable, "tools/check_pip_install.py", "--resolution", resolution],
        cwd=ROOT, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert f"pip install ({resolution}): every lesson reran with its stored outputs" in run.stdout
    assert " passed" in run.stdout and " failed" not in run.stdout
