"""The course's helpers: the math of self-attention in NumPy, plus figures, widgets and checks.

Math (pure NumPy): :mod:`helpers.attention`, :mod:`helpers.positions`,
:mod:`helpers.embeddings`, :mod:`helpers.projections`, :mod:`helpers.multihead`,
:mod:`helpers.scaling`, :mod:`helpers.blockwise`, :mod:`helpers.training`, :mod:`helpers.rope`.
On top of it: :mod:`helpers.plots` (matplotlib), :mod:`helpers.live` and
:mod:`helpers.explorer.widget` (widgets), :mod:`helpers.checks` (exercise checks). Those import the
math, never the other way round.
"""

from importlib import metadata as _metadata

from .attention import causal_mask, scaled_dot_product_attention, softmax
from .blockwise import blockwise_attention
from .embeddings import (
    D_MODEL,
    N_HEADS,
    RUNNING_SENTENCE,
    VOCAB,
    build_Z,
    token_embeddings,
    tokenize,
)
from .masks import padding_mask
from .multihead import multi_head_attention
from .positions import sinusoidal_positional_encoding
from .projections import combine_heads, seeded_projections, split_heads

__all__ = [
    "scaled_dot_product_attention",
    "softmax",
    "causal_mask",
    "padding_mask",
    "sinusoidal_positional_encoding",
    "multi_head_attention",
    "blockwise_attention",
    "RUNNING_SENTENCE",
    "D_MODEL",
    "N_HEADS",
    "VOCAB",
    "tokenize",
    "token_embeddings",
    "build_Z",
    "seeded_projections",
    "split_heads",
    "combine_heads",
]


try:  # the course's version (pyproject.toml; CHANGELOG.md says what each one changed)
    __version__ = _metadata.version("self-attention-course")
except _metadata.PackageNotFoundError:  # helpers imported from a folder, not installed
    __version__ = "unknown"
