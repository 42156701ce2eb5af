"""The running example: "the cat sat on the mat", its toy token embeddings, and Z.

Every word gets a vector drawn from a generator seeded by the word itself (a CRC32 of its
text), so the same word always gets the same vector, in every lesson and on every machine,
and words outside the toy vocabulary work too.
"""

from __future__ import annotations

import re
import unicodedata
import zlib

import numpy as np

from ._validate import ArgumentTypeError, whole_number
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
    """Lower-case words (Unicode letters and digits, with apostrophes) and punctuation marks.

    ``tokenize("The cat sat.")`` gives ``['the', 'cat', 'sat', '.']``; accented words stay
    whole (``tokenize("café")`` gives ``['café']``). A lone surrogate (``"\\ud83d"``, half of
    an emoji, which some clipboards produce) is dropped: it is not text.
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(
            f"text must be a string, got {type(text).__name__}; e.g. tokenize('the cat sat')"
        )
    text = unicodedata.normalize("NFC", valid_text(text)).lower()
    return _TOKEN.findall(text)


# A word: letters or digits of any script (\w without the underscore), joined by apostrophes.
_TOKEN = re.compile(r"(?:[^\W_]|')+|[^\w\s]|_")


def valid_text(text: str) -> str:
    """``text`` with surrogate pairs joined into their character and lone surrogates dropped.

    A lone surrogate (``"\\ud83d"``, half of an emoji) is not a character: it cannot be
    encoded as UTF-8, so it would break hashing, JSON and the browser. NFC normalisation (in
    :func:`tokenize`) then makes "café" typed with a combining accent the same word as "café".
    """
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")


def token_embeddings(tokens, d_model: int = D_MODEL, seed: int = 0) -> np.ndarray:
    """One seeded ``d_model``-vector per token: ``(n, d_model)``; equal tokens, equal rows.

    A toy stand-in for a learned embedding table: entries are standard normal, drawn from a
    generator seeded by ``(seed, crc32(token))``.

    Raises
    ------
    ValueError
        If ``tokens`` is not a list (or tuple) of strings, or ``d_model`` / ``seed`` is not a
        whole number (positive / non-negative).
    """
    tokens = _token_list(tokens)
    d_model = whole_number(d_model, "d_model", minimum=1)
    seed = whole_number(seed, "seed")
    rows = [
        np.random.default_rng([seed, zlib.crc32(tok.encode("utf-8", "replace"))]).standard_normal(
            d_model
        )
        for tok in tokens
    ]
    return np.array(rows).reshape(len(rows), d_model)


def _token_list(tokens) -> list[str]:
    """``tokens`` as a list of strings, or an error naming ``tokens``."""
    if isinstance(tokens, str):
        raise ArgumentTypeError(
            "tokens must be a list of tokens, got one string; use tokenize(text) first"
        )
    if isinstance(tokens, np.ndarray) and tokens.ndim == 1 and tokens.dtype.kind == "U":
        tokens = tokens.tolist()
    if tokens is None or not isinstance(tokens, (list, tuple)):
        raise ArgumentTypeError(
            f"tokens must be a list of strings (e.g. tokenize('the cat sat')), got "
            f"{type(tokens).__name__}"
        )
    for i, tok in enumerate(tokens):
        if not isinstance(tok, str):
            raise ArgumentTypeError(
                f"tokens must be a list of strings, but tokens[{i}] is {type(tok).__name__} "
                f"{tok!r}"[:200]
            )
    return list(tokens)


def build_Z(tokens, d_model: int = D_MODEL, seed: int = 0) -> np.ndarray:
    """Z = token embeddings + sinusoidal positional encodings, shape ``(n, d_model)``.

    Raises
    ------
    ValueError
        As :func:`token_embeddings`, plus an odd ``d_model`` (the encodings pair sin and cos).
    """
    E = token_embeddings(tokens, d_model, seed)
    return E + sinusoidal_positional_encoding(len(E), d_model)
