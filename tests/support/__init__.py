"""What the tests share: builders of test classes for the grader (``class_builder``,
``copy_class``, ``term_class``), the executed lessons read once (``built_lessons``), a check's
shown solution run as learner code (``learner_code``), helpers for tables of mistakes
(``check_tables``) and pinned requirements (``requirements``). On pytest's ``pythonpath``
(pyproject.toml), imported as ``from support import class_builder``; no test imports another.
"""

from pathlib import Path

# The course's checkout: the tests run from it (the grader's under grader/tests/ too).
ROOT = Path(__file__).resolve().parent.parent.parent
