"""Run inside a student's kernel by the grader, after the notebook's own cells.

For an exercise whose check never ran in the notebook (its check cell was deleted, or raised
before calling it), check the function of that name if the notebook defines one; otherwise
log that there is none. Imports only :mod:`helpers.checks`.
"""

from __future__ import annotations

import json
import os


def final_check(namespace: dict, name: str) -> None:
    from helpers import checks
    from helpers.checks import _core

    _core._grade_phase = "final"
    answer = namespace.get(name)
    if answer is None:
        path = os.environ.get(_core.GRADE_LOG_VARIABLE)
        if path:
            with open(path, "a", encoding="utf-8") as log:
                record = {"exercise": name, "phase": "final", "found": False}
                log.write(json.dumps(record) + "\n")
        return
    getattr(checks, name).check(answer)
