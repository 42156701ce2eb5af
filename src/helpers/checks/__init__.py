"""Exercise checks: ``checks.<name>.check(answer)``, ``.hint(level)``, ``.solution()``.

One module per lesson defines that lesson's exercises; this package gathers them by name.
"""

from ._core import CheckResult, Exercise
from .lesson01 import positional_encoding
from .lesson02 import head_slices, project_qkv
from .lesson03 import scaled_scores
from .lesson04 import attention, softmax
from .lesson05 import causal_mask, masked_attention
from .lesson06 import cross_attention, multi_head_attention
from .lesson07 import score_matrix_bytes

__all__ = [
    "CheckResult",
    "Exercise",
    "positional_encoding",
    "project_qkv",
    "head_slices",
    "scaled_scores",
    "softmax",
    "attention",
    "causal_mask",
    "masked_attention",
    "cross_attention",
    "multi_head_attention",
    "score_matrix_bytes",
]
