"""Lesson 10's widget: the attention explorer on the trained induction model.

:class:`InductionExplorer` is lesson 09's :class:`~helpers.real_explorer.RealAttentionExplorer`
(token buttons, the layer and head buttons, arrow keys, your own sequence, the bar chart, the
same SVG drawing) on the weights of :func:`helpers.induction.load`'s model. Its tokens are
characters (:data:`helpers.induction.model.ALPHABET`, 64 of them); the model is causal, so the
mask is always on (masked cells grey) and its control hidden. The weights come from the model's
forward pass; this module only draws them.
"""

from __future__ import annotations

import numpy as np

from .attention import causal_mask
from .embeddings import valid_text
from .explorer import _axis_label
from .induction import InductionModel, load
from .induction.model import ALPHABET, encode
from .real_explorer import RealAttentionExplorer

__all__ = ["InductionExplorer"]

SPACE = "\u2423"  # "␣", the open box: how the explorer shows a space token


class InductionExplorer(RealAttentionExplorer):
    """The explorer on lesson 10's two-layer causal model, one (layer, head) map at a time.

    Parameters
    ----------
    sequence : str
        Characters of :data:`~helpers.induction.model.ALPHABET` (letters, digits, space, '.'),
        at most ``model.max_len`` (32) of them: each is one token.
    layer, head : int
        Which map to show (0..1, 0..3), as in ``attention[layer, head]``.
    query : int
        The selected query position.
    model : InductionModel, optional
        Defaults to :func:`helpers.induction.load`.
    """

    causal_model = True  # trained with the mask

    def __init__(
        self,
        sequence: str = "the cat sat. the cat sat.",
        layer: int = 0,
        head: int = 0,
        query: int = 1,
        model: InductionModel | None = None,
    ):
        super().__init__(sequence, layer, head, query, model if model is not None else load())
        self.widget.add_class("induction-explorer")

    def set_causal(self, causal: bool) -> None:
        if not causal:
            raise ValueError(
                "this model is causal: it was trained with the mask, so every query sees only "
                "the keys up to itself (lesson 05)"
            )

    def alt_text(self) -> str:
        return (
            f"Attention explorer on lesson 10's two-layer causal model: layer {self._layer}, "
            f"head {self._head}, over the {len(self._tokens)} characters "
            f"{''.join(self._tokens).replace(SPACE, ' ')!r}; heatmap with rows = query, "
            f"columns = key (the future masked), and the weights of query "
            f"{self._tokens[self._query]!r} (position {self._query}) as bars."
        )

    def _load_sentence(self, text: str) -> str:
        if not isinstance(text, str):
            raise ValueError(f"the sequence must be a string, got {type(text).__name__}")
        text = valid_text(text)
        kept = "".join(c for c in text if c in ALPHABET)[: self.model.max_len]
        if not kept:
            kept = "the cat sat. the cat sat."
        dropped = len(text) - len(kept)
        self._truncated_from = None
        self._dropped = dropped
        ids = encode(kept)
        cache = self.model.run(ids)
        self._attention = np.stack(cache.A, axis=1)[0]  # (2, h, n, n)
        self._values = [V[0] for V in cache.V]  # per layer (h, n, d_head)
        self._tokens = [SPACE if c == " " else c for c in kept]  # a space you can see
        self._labels = [_axis_label(c) for c in self._tokens]
        self._label_len = 1
        self._mask = causal_mask(len(kept))
        self._png_caches = {}
        self._png_cache = self._png_caches.setdefault(self._layer, {})
        self._set_token_options()
        return kept

    def _note(self) -> str:
        if getattr(self, "_dropped", 0):
            return (
                f"{self._dropped} characters left out: the model reads letters, digits, space "
                f"and '.', at most {self.model.max_len} of them."
            )
        return ""

    def _compute_weights(self) -> None:
        self._weights = self._attention[self._layer, self._head].astype(float)
        A, V = self._weights, self._values[self._layer][self._head]
        self._output = A @ V  # (n, d_head): the head's output
        self._state_key = (self._layer, self._head)

    def _map_title(self) -> str:
        return f"layer {self._layer}, head {self._head}: rows = query, columns = key"
