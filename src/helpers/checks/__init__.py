"""Exercise checks: ``checks.<name>.check(answer)``, ``.hint(level)``, ``.solution()``.

One module per lesson defines that lesson's exercises; this package gathers them by name.
"""

from ._core import CheckResult, Exercise
from .lesson01 import positional_encoding
from .lesson07 import score_matrix_bytes

__all__ = ["CheckResult", "Exercise", "positional_encoding", "score_matrix_bytes"]
