"""The running example: "the cat sat on the mat", its toy token embeddings, and Z.

Every word gets a vector drawn from a generator seeded by the word itself (a CRC32 of its
text), so the same word always gets the same vector, in every lesson and on every machine,
and words outside the toy vocabulary work too.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from .positions import sinusoidal_positional_encoding

__all__ = [
    "RUNNING_SENTENCE",
    "D_MODEL",
    "N_HEADS",
    "VOCAB",
    "tokenize",
    "token_embeddings",
    "build_Z",
]

RUNNING_SENTENCE = "the cat sat on the mat"
D_MODEL = 8  # small enough that every matrix fits on screen
N_HEADS = 2  # so d_k = D_MODEL // N_HEADS = 4
VOCAB = ("the", "cat", "sat", "on", "mat")


def tokenize(text: str) -> list[str]:
    """Lower-case words and punctuation marks.

    ``tokenize("The cat sat.")`` gives ``['the', 'cat', 'sat', '.']``.
    """
    if not isinstance(text, str):
        raise ValueError(f"tokenize needs a string, got {type(text).__name__}")
    return re.findall(r"[a-z0-9']+|[^\sa-z0-9']", text.lower())


def token_embeddings(tokens, d_model: int = D_MODEL, seed: int = 0) -> np.ndarray:
    """One seeded ``d_model``-vector per token: ``(n, d_model)``; equal tokens, equal rows.

    A toy stand-in for a learned embedding table: entries are standard normal, drawn from a
    generator seeded by ``(seed, crc32(token))``.
    """
    if isinstance(tokens, str):
        raise ValueError("token_embeddings needs a list of tokens; use tokenize(text) first")
    if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) or d_model <= 0:
        raise ValueError(f"d_model must be a positive whole number, got {d_model!r}")
    rows = [
        np.random.default_rng([seed, zlib.crc32(str(tok).encode())]).standard_normal(d_model)
        for tok in tokens
    ]
    return np.array(rows).reshape(len(rows), d_model)


def build_Z(tokens, d_model: int = D_MODEL, seed: int = 0) -> np.ndarray:
    """Z = token embeddings + sinusoidal positional encodings, shape ``(n, d_model)``."""
    E = token_embeddings(tokens, d_model, seed)
    return E + sinusoidal_positional_encoding(len(E), d_model)
