"""Lesson 10's widget: the attention explorer on the trained induction model.

:class:`InductionExplorer` is lesson 04's :class:`~helpers.explorer.widget.AttentionExplorer` (token
buttons, the layer and head buttons, arrow keys, your own sequence, the bar chart, the same
SVG drawing) on the weights of :func:`helpers.induction.load`'s model
(:class:`helpers.explorer.sources.InductionWeights`). Its tokens are characters
(:data:`helpers.induction.model.ALPHABET`, 64 of them); the model is causal, so the mask is
always on (masked cells grey) and its control hidden. This module only names the model.
"""

from __future__ import annotations

from ..induction import InductionModel, load
from .sources import SPACE, InductionWeights
from .widget import AttentionExplorer

__all__ = ["InductionExplorer", "SPACE"]


class InductionExplorer(AttentionExplorer):
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

    def __init__(
        self,
        sequence: str = "the cat sat. the cat sat.",
        layer: int = 0,
        head: int = 0,
        query: int = 1,
        model: InductionModel | None = None,
    ):
        self.model = model if model is not None else load()
        source = InductionWeights(self.model)
        super().__init__(sequence, query=query, source=source, layer=layer, head=head)
        self.widget.add_class("real-attention-explorer")
        self.widget.add_class("induction-explorer")

    def alt_text(self) -> str:
        tokens, query = self.tokens, self.query
        return (
            f"Attention explorer on lesson 10's two-layer causal model: layer {self.layer}, "
            f"head {self.head}, over the {len(tokens)} characters "
            f"{''.join(tokens).replace(SPACE, ' ')!r}; heatmap with rows = query, "
            f"columns = key (the future masked), and the weights of query "
            f"{tokens[query]!r} (position {query}) as bars."
        )
