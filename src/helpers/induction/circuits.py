"""Causal measurements on lesson 10's model: ablation, path patching, direct logit attribution.

The model has no biases and no layer norm, so its residual stream is an exact sum (Elhage et
al. 2021): ``x_final = W_E[t] + W_pos[i] + sum over heads of the head's output``, and the
logits are ``x_final @ W_U``. That makes three measurements exact:

* **ablation** (:func:`run`): a head's output replaced by zero, or by its *mean* output at that
  position over a reference batch (:func:`head_means`). Zero ablation also removes whatever
  constant the head always adds, which later heads may rely on; mean ablation keeps that and
  removes only what the head says about *this* sequence, so it is the cleaner test of "what
  does this head contribute" (the two are compared in lesson 10);
* **path patching** (:func:`run` with ``reads``): a layer-0 head's output replaced only where
  the layer-1 heads read it as queries (``"q"``), keys (``"k"``) or values (``"v"``), or only in
  the stream the unembedding reads (``"out"``, its direct effect on the logits): Elhage et
  al.'s Q-, K- and V-composition, measured rather than read off the weights;
* **direct logit attribution** (:func:`logit_attribution`): each term of the sum above, dotted
  with the unembedding column of the correct next token (centred over the vocabulary, because
  a softmax ignores a constant added to every logit).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .model import InductionModel
from .probes import next_token_losses

__all__ = [
    "READS",
    "head_outputs",
    "head_means",
    "run",
    "Run",
    "logit_attribution",
    "composed_qk",
]

READS = ("q", "k", "v", "out")  # where a head's output is read: later queries, keys, values, logits


def _check_tokens(model: InductionModel, tokens) -> np.ndarray:
    return np.atleast_2d(model.check_tokens(tokens))


def head_outputs(model: InductionModel, tokens) -> np.ndarray:
    """Every head's output, as written into the residual stream: ``(b, n_layers, n_heads, n,
    d_model)``; their sum over heads is the layer's contribution."""
    return run(model, tokens).outputs


def head_means(model: InductionModel, tokens) -> np.ndarray:
    """Each head's mean output at each position over the sequences ``tokens (b, n)``: ``(n_layers,
    n_heads, n, d_model)``, what mean ablation puts in its place."""
    return np.stack([layer.mean(axis=0) for layer in run(model, tokens).layer_outputs])


class Run:
    """What :func:`run` returns: ``logits (b, n, vocab)``, ``A`` (per layer ``(b, h, n, n)``),
    ``layer_outputs`` (per layer ``(b, h, n, d_model)``: each head's output as computed, before
    any replacement; :attr:`outputs` stacks them) and ``embedding (b, n, d_model)``
    (``W_E[t] + W_pos[i]``)."""

    def __init__(self, logits, A, layer_outputs, embedding):
        self.logits, self.A, self.layer_outputs, self.embedding = (
            logits, A, layer_outputs, embedding)  # fmt: skip

    @property
    def outputs(self) -> np.ndarray:
        """``(b, n_layers, n_heads, n, d_model)`` (a new array: large for a large batch)."""
        return np.stack(self.layer_outputs, axis=1)

    def losses(self, tokens: np.ndarray) -> np.ndarray:
        """The loss (nats) on the next token at each position, ``(b, n - 1)``."""
        return next_token_losses(self.logits, tokens)


def run(
    model: InductionModel,
    tokens,
    replace: Mapping[tuple[int, int], object] | None = None,
    reads: tuple[str, ...] = READS,
) -> Run:
    """Run the model on ``tokens (b, n)``, with some heads' outputs replaced.

    ``replace`` maps ``(layer, head)`` to what stands in for that head's output: ``0.0`` (zero
    ablation), or an array broadcastable to ``(b, n, d_model)`` (for mean ablation, the head's
    entry of :func:`head_means`, ``[layer, head, :n]``). ``reads`` says where the replacement is
    seen: by the later layers' queries (``"q"``), keys (``"k"``), values (``"v"``), and by the
    unembedding (``"out"``); everywhere else the head's own output is. With every read (the
    default) it is an ablation; with one, path patching of that path alone.

    All of it is hooks on one forward pass (:func:`helpers.induction.model.forward`): each
    layer's ``hook_result`` keeps its heads' outputs and adds them, with the replacements in,
    to a second residual stream; once a replacement is made, the ``hook_q_input``,
    ``hook_k_input``, ``hook_v_input`` of the later layers and ``hook_resid_final`` read that
    stream instead, for the reads named.
    """
    tokens = _check_tokens(model, tokens)
    replace = dict(replace or {})
    unknown = set(reads) - set(READS)
    if unknown or not reads:
        raise ValueError(f"reads must be some of {READS}, got {reads!r}")
    n_layers, n_heads = model.n_layers, model.n_heads
    for key in replace:
        if not (isinstance(key, tuple) and len(key) == 2 and 0 <= key[0] < n_layers
                and 0 <= key[1] < n_heads):  # fmt: skip
            raise ValueError(f"replace keys are (layer, head) pairs of this model, got {key!r}")
    outputs: list = [None] * n_layers
    # The residual stream as a read that sees the replacements finds it, once one was made.
    patched: dict[str, np.ndarray] = {}

    def start(embedding: np.ndarray) -> None:
        patched["stream"] = embedding

    def keep(layer: int):
        def hook(heads: np.ndarray) -> None:
            outputs[layer] = heads
            if not replace:  # no second stream to keep: every read sees the pass's own
                return
            replaced = heads.sum(axis=1)  # what the layer adds, as the forward pass adds it
            for (lay, head), value in replace.items():
                if lay == layer:
                    replaced = replaced - heads[:, head] + value
                    patched["changed"] = True
            patched["stream"] = patched["stream"] + replaced

        return hook

    def seen_by(read: str):
        def hook(stream: np.ndarray) -> np.ndarray | None:
            return patched["stream"] if read in reads and "changed" in patched else None

        return hook

    hooks = {"hook_embed": start, "hook_resid_final": seen_by("out")}
    for layer in range(n_layers):
        hooks[f"blocks.{layer}.hook_result"] = keep(layer)
        for read in ("q", "k", "v"):
            hooks[f"blocks.{layer}.hook_{read}_input"] = seen_by(read)
    # In float64, whatever the model's weights (training evaluates its float32 model here).
    if any(value.dtype != np.float64 for value in model.params.values()):
        model = model.copy()
    cache = model.run(tokens, hooks=hooks)
    return Run(cache.logits, cache.A, outputs, cache.x[0])


def logit_attribution(model: InductionModel, tokens, where: np.ndarray) -> dict[str, float]:
    """Direct logit attribution at the positions ``where (b, n)`` marks (their next token is
    the target): the mean contribution to the correct token's logit, centred over the
    vocabulary, of the direct path (``"direct"``: token and position embeddings straight to
    the unembedding) and of each head (``"L{layer}H{head}"``, through its ``W_O`` and
    ``W_U`` only). They add up to the centred logit itself (``"total"``)."""
    tokens = _check_tokens(model, tokens)
    where = np.asarray(where, dtype=bool)
    if where.shape != tokens.shape or where[:, -1].any() or not where.any():
        raise ValueError("where must be a (b, n) mask of positions with a next token, not empty")
    result = run(model, tokens)
    W_U = model.params["W_U"].astype(np.float64)
    centred = W_U - W_U.mean(axis=1, keepdims=True)
    s, i = np.nonzero(where)
    columns = centred[:, tokens[s, i + 1]].T  # (m, d_model): the correct token's direction
    parts = {"direct": float(np.mean(np.sum(result.embedding[s, i] * columns, axis=1)))}
    for layer, outputs in enumerate(result.layer_outputs):
        for head in range(outputs.shape[1]):
            vectors = outputs[s, head, i]
            parts[f"L{layer}H{head}"] = float(np.mean(np.sum(vectors * columns, axis=1)))
    logits = result.logits[s, i]
    parts["total"] = float(np.mean(logits[np.arange(len(s)), tokens[s, i + 1]]
                                   - logits.mean(axis=1)))  # fmt: skip
    return parts


def composed_qk(
    model: InductionModel,
    writer: tuple[int, int],
    reader: tuple[int, int],
    query_writer: tuple[int, int] | None = None,
):
    """The K-composition term of ``reader``'s scores through ``writer``'s output: ``(vocab,
    vocab)``, entry ``[a, b]`` the score a query holding token ``a`` gives a key whose
    ``writer``-attended token is ``b``: ``(W_E[a] W_Q) . (W_E[b] W_V W_O W_K) / sqrt(d_head)``
    with ``writer``'s ``W_V, W_O`` and ``reader``'s ``W_Q, W_K`` (lesson 10's challenge).

    With ``query_writer``, the query side is read through that head's output too (Q- and
    K-composition at once): ``a`` is then the token ``query_writer`` attends to from the query,
    ``(W_E[a] W_V' W_O' W_Q) . (W_E[b] W_V W_O W_K) / sqrt(d_head)``."""
    for head in (writer, query_writer):
        if head is not None and head[0] >= reader[0]:
            raise ValueError(
                f"the writer {head} must be in an earlier layer than the reader {reader}"
            )
    w, r = model.head_weights(*writer), model.head_weights(*reader)
    W_E = model.params["W_E"]
    if query_writer is None:
        queries = W_E @ r["W_Q"]
    else:
        q = model.head_weights(*query_writer)
        queries = W_E @ q["W_V"] @ q["W_O"] @ r["W_Q"]
    keys = W_E @ w["W_V"] @ w["W_O"] @ r["W_K"]
    return queries @ keys.T / np.sqrt(model.d_head)
