"""Settings for every pytest run in this repository, nbval's notebook runs included.

nbval's kernels listen on Unix sockets instead of TCP ports, so two pytest-xdist workers starting
kernels at once cannot race for a port (see course_grader.isolation.ipc, which the grader uses too).

``make test`` runs the tests and both copies of every lesson in ONE pytest session
(tools/run_tests.py), so that the workers start and import once and a worker that finishes early
takes the next notebook instead of waiting for the other at the end of each step:

- ``solutions/*.ipynb`` are checked as ``--nbval`` checks them: every stored output reproduces.
- ``notebooks/*.ipynb``, the learner copies, have no stored outputs: they are always run as
  ``--nbval-lax`` runs them (every cell runs without an error; outputs are compared only in
  cells marked ``# NBVAL_CHECK_OUTPUT``), whichever of the two flags was given.
- ``.ipynb`` files under ``tests/`` are fixtures of other tests, never nbval tests.

With ``--dist loadfile`` every test file and every notebook is one unit of work on one worker (a
notebook's cells share its kernel). The units known to take longest start first (``LONG_POLES``,
with ``--no-loadscope-reorder``), so that no worker is left alone with one of them at the end.
(``--dist loadgroup`` cannot split a file further here: pytest-xdist 3.8 renames the grouped
items through ``item._nodeid``, which pytest 9 no longer reads, so its groups are ignored.)
"""

from __future__ import annotations

from pathlib import Path

import nbval.kernel
import pytest
from course_grader.isolation.ipc import SUPPORTED, IpcKernelManager
from nbval.plugin import IPyNbFile

if SUPPORTED:
    nbval.kernel.KernelManager = IpcKernelManager

ROOT = Path(__file__).resolve().parent

# The longest units, longest first (from --durations on the 2-core machine); a unit missing here
# starts after these, in collection order.
LONG_POLES = (
    "tests/test_pip_install.py",  # two fresh venvs, every lesson in each
    "grader/tests/test_gradescope.py",  # its setup.sh's venv, then a dozen submissions
    "tests/test_checks_sweep.py",
    "tests/test_induction_reproduce.py",  # 100 training steps on one BLAS thread
    "grader/tests/pipeline/test_grade_term.py",
    "solutions/08_training_attention.ipynb",
    "notebooks/08_training_attention.ipynb",
    "tests/test_induction.py",
    "grader/tests/test_grade.py",
    "tests/test_bad_input.py",
    "solutions/10_induction_heads.ipynb",
    "notebooks/10_induction_heads.ipynb",
    "tests/test_checks_lesson03.py",
    "tests/test_explorer.py",
    "grader/tests/pipeline/test_grade_reproducible.py",
    "solutions/09_real_model.ipynb",
    "notebooks/09_real_model.ipynb",
    "tests/test_handout.py",
    "tests/test_pretrained.py",
    "tests/test_checks_lesson07.py",
    "tests/test_checks_adversarial.py",
    "tests/test_checks_time_limits.py",
)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    collectors = yield
    kept = []
    for collector in collectors or []:
        if isinstance(collector, IPyNbFile):
            folder = Path(file_path).resolve().parent
            if folder == ROOT / "tests" or ROOT / "tests" in folder.parents:
                continue
            if folder == ROOT / "notebooks":
                collector.compare_outputs = False  # exactly what --nbval-lax sets
        kept.append(collector)
    return kept


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    """On xdist's workers, whose collection order is the order the units are handed out in:
    the longest files first, each file's items kept together and in order."""
    if not hasattr(config, "workerinput"):
        return
    rank = {name: i for i, name in enumerate(LONG_POLES)}
    items.sort(key=lambda item: rank.get(_file_of(item), len(LONG_POLES)))  # stable
