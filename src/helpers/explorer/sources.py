"""Where an attention explorer's weights come from: one small class per model.

An explorer (:class:`helpers.explorer.widget.AttentionExplorer`) draws whatever its *weight source*
gives it. A source has ``n_layers``, ``n_heads`` and ``d_k`` and two methods:

* ``load(text) -> LoadedText``: tokenize the text and do the per-sentence work once (for the
  seeded model Q, K, V; for a trained model its forward pass). It must raise before changing
  anything, so that bad text leaves the previous sentence whole.
* ``weights(layer, head, causal, temperature) -> (output, weights)``: one head's ``(n, d_k)``
  output and ``(n, n)`` weights (rows = query, columns = key) for the text loaded last.

The sources here: :class:`SeededWeights` (lessons 04-06: the course's math on seeded
projections), :class:`MiniLMWeights` (lesson 09) and :class:`InductionWeights` (lesson 10).
A model whose mask or temperature is fixed says so in ``fixed_causal`` / ``fixed_temperature``
(None: the learner may change it); the explorer then hides that control.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import ArgumentTypeError
from ..attention import causal_mask, scaled_dot_product_attention
from ..embeddings import build_Z, tokenize, valid_text
from ..projections import seeded_projections

__all__ = [
    "InductionWeights", "LoadedText", "MAX_TOKENS", "MiniLMWeights", "SeededWeights",
    "check_source",
]  # fmt: skip

MAX_TOKENS = 64  # longer sentences are truncated, and the message says so

# What a weight source has (the module's docstring says what each means).
_SOURCE_NEEDS = (
    "n_layers", "n_heads", "d_k", "fixed_causal", "fixed_temperature", "load", "weights"
)  # fmt: skip


def check_source(source):
    """``source`` if it has what a weight source has, else a clear error saying what it lacks."""
    missing = [name for name in _SOURCE_NEEDS if not hasattr(source, name)]
    if missing:
        raise ArgumentTypeError(
            f"source must be a weight source (see helpers.explorer.sources): "
            f"{type(source).__name__} has no {', '.join(missing)}"
        )
    return source


@dataclass(frozen=True)
class LoadedText:
    """A text as a source loaded it: ``text`` as the sentence box shows it (valid Unicode),
    its ``tokens`` (at most ``MAX_TOKENS``) and ``note``, what the message says of the text as
    a whole ("" when nothing: else e.g. that it was truncated)."""

    text: str
    tokens: list[str]
    note: str = ""


def _text(text, what: str = "sentence") -> str:
    if not isinstance(text, str):
        raise ArgumentTypeError(f"{what} must be a string, got {type(text).__name__}")
    return valid_text(text)  # lone surrogates (half an emoji) cannot go to the browser


def _truncated(count: int) -> str:
    if count <= MAX_TOKENS:
        return ""
    return f"Your text has {count} tokens; the explorer shows the first {MAX_TOKENS}."


class SeededWeights:
    """The course's own attention: ``build_Z`` -> ``seeded_projections`` -> per-head
    ``scaled_dot_product_attention`` (``causal_mask`` when asked) at scale
    ``1 / (sqrt(d_k) * temperature)``. Q, K, V once per sentence, weights once per map."""

    n_layers = 1
    fixed_causal: bool | None = None
    fixed_temperature: float | None = None

    def __init__(self, d_model: int, n_heads: int, seed: int):
        # seeded_projections checks the three (whole numbers, h divides d_model) and says
        # what to fix; the seeded W_Q, W_K, W_V are (h, d_model, d_k) each.
        self.projections = seeded_projections(d_model, n_heads, seed)
        self.n_heads, self.d_model, self.d_k = self.projections["W_Q"].shape
        self.seed = int(seed)

    def load(self, text: str) -> LoadedText:
        text = _text(text)
        all_tokens = tokenize(text)
        tokens = all_tokens[:MAX_TOKENS]
        Z = build_Z(tokens, self.d_model, self.seed)  # (n, d_model)
        W = self.projections
        # (h, n, d_k) each: one matmul per projection for all heads at once.
        self._qkv = tuple(np.einsum("nd,hdk->hnk", Z, W[name]) for name in ("W_Q", "W_K", "W_V"))
        return LoadedText(text, tokens, _truncated(len(all_tokens)))

    def weights(self, layer: int, head: int, causal: bool, temperature: float):
        Q, K, V = (m[head] for m in self._qkv)
        n = Q.shape[0]
        mask = causal_mask(n) if causal else None
        scale = 1.0 / (math.sqrt(self.d_k) * temperature)
        return scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)


class MiniLMWeights:
    """all-MiniLM-L6-v2's weights (:mod:`helpers.pretrained`): one forward pass per sentence,
    WordPiece tokens with ``[CLS]`` and ``[SEP]``. An encoder at its trained scale: no mask,
    temperature 1."""

    fixed_causal = False
    fixed_temperature = 1.0
    causal_error = (
        "all-MiniLM-L6-v2 is an encoder: it was trained without a causal mask, every token sees "
        "every token (lesson 05's mask belongs to decoders such as GPT)"
    )

    def __init__(self, model):
        self.model = model
        self.temperature_error = (
            f"the real model's scale is fixed at 1/sqrt(d_k) = 1/sqrt({model.d_model // model.h})"
        )
        self.n_layers, self.n_heads = model.n_layers, model.h
        self.d_k = model.d_model // model.h

    def load(self, text: str) -> LoadedText:
        text = _text(text)
        full = len(self.model.tokenize(text))
        self.trace = self.model.trace(text, max_tokens=MAX_TOKENS)
        return LoadedText(text, list(self.trace.tokens), _truncated(full))

    def weights(self, layer: int, head: int, causal: bool, temperature: float):
        trace = self.trace
        return (
            trace.head_outputs[layer, head].astype(float),
            trace.attention[layer, head].astype(float),
        )


SPACE = "\u2423"  # "␣", the open box: how the explorer shows a space token


class InductionWeights:
    """Lesson 10's two-layer causal model (:mod:`helpers.induction`): one token per character
    of its alphabet, at most ``model.max_len``; characters outside it are left out (the note
    says how many). Causal, as it was trained."""

    fixed_causal = True
    fixed_temperature = 1.0
    default = "the cat sat. the cat sat."
    causal_error = (
        "this model is causal: it was trained with the mask, so every query sees only the keys "
        "up to itself (lesson 05)"
    )

    def __init__(self, model):
        from ..induction.model import ALPHABET

        self.model, self.alphabet = model, ALPHABET
        self.n_layers, self.n_heads = model.n_layers, model.n_heads
        self.d_k = model.d_head
        self.temperature_error = (
            f"the model's scale is fixed at 1/sqrt(d_head) = 1/sqrt({model.d_head}), as trained"
        )

    def load(self, text: str) -> LoadedText:
        from ..induction.model import encode

        text = _text(text, "the sequence")
        kept = "".join(c for c in text if c in self.alphabet)[: self.model.max_len]
        kept = kept or self.default
        dropped = len(text) - len(kept)
        cache = self.model.run(encode(kept))
        self.attention = np.stack(cache.A, axis=1)[0]  # (layers, h, n, n)
        self._values = [V[0] for V in cache.V]  # per layer (h, n, d_head)
        note = (
            f"{dropped} characters left out: the model reads letters, digits, space and '.', "
            f"at most {self.model.max_len} of them."
            if dropped > 0
            else ""
        )
        return LoadedText(kept, [SPACE if c == " " else c for c in kept], note)

    def weights(self, layer: int, head: int, causal: bool, temperature: float):
        A = self.attention[layer, head].astype(float)
        return A @ self._values[layer][head], A
