"""The attention explorer: pick a token, see where it looks (lessons 04-06, 09 and 10).

    from helpers.explorer import AttentionExplorer
    AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=2, query=1).show()

One module a job: ``widget`` (:class:`AttentionExplorer`, the state and what a control's move
does), ``controls`` (the widgets, laid out), ``sources`` (where the weights come from: the
course's seeded math, lesson 09's MiniLM, lesson 10's trained model), ``drawing`` (a state's
SVG layers, words and table, no widget involved), ``figure`` (the same state as a matplotlib
figure) and ``colours``; its browser modules are :mod:`helpers.front`'s. On it, the two
lessons' explorers: ``grid`` (lesson 09's :class:`AttentionGrid` of every layer and head) and
``induction`` (lesson 10's :class:`InductionExplorer`), imported when first asked for (they
load a model's code).
"""

from __future__ import annotations

from .widget import AttentionExplorer

__all__ = ["AttentionExplorer", "AttentionGrid", "InductionExplorer"]


def __getattr__(name: str):
    if name == "AttentionGrid":
        from .grid import AttentionGrid

        return AttentionGrid
    if name == "InductionExplorer":
        from .induction import InductionExplorer

        return InductionExplorer
    raise AttributeError(f"module 'helpers.explorer' has no attribute {name!r}")
