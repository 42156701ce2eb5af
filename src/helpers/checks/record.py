"""The record a check leaves for ``make grade``: one module for both sides of the contract.

The grader starts each student's kernel with :func:`kernel_variables`; inside it, every
``check`` notes what it was given (:data:`answers`, for the grader's own checks after the last
cell) and appends one :class:`Record` as a JSON line (:func:`append`) to the file named by
``HELPERS_GRADE_LOG``, with no verdict (the grader computes those in its own process,
:mod:`course_grader.isolation.remote`); after the run the grader reads them back (:func:`read`): how
many checks of each exercise ran (their draws), and any line that claims a verdict, which no
check wrote. The checks' side (:mod:`helpers.checks.exercise`) and the grader's
(:mod:`course_grader`) import the names from here and nowhere else. Standard library only:
the kernel imports it with every check.

The variables:

* ``HELPERS_GRADE_LOG``: the file the records go to (unset: the checks write nothing);
* ``HELPERS_GRADE_STUDENT``: the student being graded, which seeds the checks' draws, so the
  same notebook always gets the same grade;
* ``HELPERS_CHECK_TIME_LIMIT``: seconds for one call of the learner's function in a check.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

LOG_VARIABLE = "HELPERS_GRADE_LOG"
STUDENT_VARIABLE = "HELPERS_GRADE_STUDENT"
TIME_LIMIT_VARIABLE = "HELPERS_CHECK_TIME_LIMIT"
VARIABLES = (LOG_VARIABLE, STUDENT_VARIABLE, TIME_LIMIT_VARIABLE)

# "notebook" while the notebook's own cells run (a record's phase; the grader reads it only
# to flag records that no check wrote).
phase = "notebook"

# What each check was last given in this kernel (exercise or prediction name -> the function or
# the guess): after the notebook's cells, make grade checks these again from its own process
# (helpers.checks.grading answers its calls). The notebook can change this dict as it likes:
# it only decides which of its own functions the grader calls, never a verdict.
answers: dict = {}


@dataclass(frozen=True)
class Record:
    """One check's result as the grader reads it: never the message's wording, the ids.

    ``passed``: True, False, or None ("not attempted yet"); ``mistake``: a stable id such as
    ``"softmax.columns_sum_to_one"`` or None; ``found``: False when the grader looked for the
    exercise's function after the last cell and there was none (then the rest is empty).
    """

    exercise: str
    lesson: str = ""
    passed: bool | None = None
    mistake: str | None = None
    message: str = ""
    phase: str = "notebook"
    found: bool = True

    def as_json(self) -> str:
        data = asdict(self)
        data["message"] = data["message"][:4000]
        if self.found:
            del data["found"]
        return json.dumps(data)


def append(record: Record | dict) -> None:
    """One JSON line in the ``HELPERS_GRADE_LOG`` file, if grading; never raises."""
    path = os.environ.get(LOG_VARIABLE)
    if not path:
        return
    try:
        line = record.as_json() if isinstance(record, Record) else json.dumps(record)
        with open(path, "a", encoding="utf-8") as log:
            log.write(line + "\n")
    except (OSError, TypeError, ValueError):
        pass


def read(path: Path) -> list[dict]:
    """The records in ``path`` (lines that are not a record, e.g. cut off by a killed kernel,
    are skipped), as dicts in the order written."""
    if not Path(path).exists():
        return []
    with open(path, encoding="utf-8", errors="replace") as log:
        return parse(log)


def parse(lines) -> list[dict]:
    """The records among ``lines`` (text lines of a log), as :func:`read` returns them."""
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("exercise"), str):
            records.append(record)
    return records


def kernel_variables(
    env: dict[str, str],
    log_path: Path | None,
    check_seconds: float | None,
    student: str | None = None,
) -> dict[str, str]:
    """``env`` with the grading variables set (or removed where None)."""
    env = dict(env)
    for name in VARIABLES:
        env.pop(name, None)
    if student is not None:
        env[STUDENT_VARIABLE] = student
    if log_path is not None:
        env[LOG_VARIABLE] = str(log_path)
    if check_seconds is not None:
        env[TIME_LIMIT_VARIABLE] = f"{check_seconds:g}"
    return env


def time_limit_from_environment(default: float) -> float:
    """``HELPERS_CHECK_TIME_LIMIT`` in seconds, if set and in (0, 3600); else ``default``."""
    try:
        value = float(os.environ.get(TIME_LIMIT_VARIABLE, default))
    except ValueError:
        return default
    return value if 0 < value < 3600 else default
