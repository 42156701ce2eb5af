"""A two-layer, attention-only, causal Transformer in NumPy, with its backward pass by hand.

The model (Elhage et al. 2021's "attention-only" Transformer), for token ids ``tokens (b, n)``::

    x_0     = W_E[tokens] + W_pos[:n]                            (b, n, d_model)
    layer l:  Q, K, V = x_l W_Q[l], x_l W_K[l], x_l W_V[l]       (b, n, d_model), split into
              h heads of d_head = d_model / h columns each      (b, h, n, d_head)
              Z, A   = scaled_dot_product_attention(Q, K, V, causal_mask(n))
              x_l+1  = x_l + concat(Z) W_O[l]                    the residual stream
    logits  = x_L W_U                                            (b, n, vocab_size)

No MLP, no LayerNorm, no biases: every path from the input to the logits goes through
attention heads and the residual stream, so the circuit can be read off the weight matrices.
Head a of layer l uses columns ``a * d_head .. (a + 1) * d_head - 1`` of ``W_Q[l], W_K[l],
W_V[l]`` and the same rows of ``W_O[l]`` (:meth:`InductionModel.head_weights`).

:func:`loss_and_grads` backpropagates through it by hand, the way lesson 08 does for one layer
(:func:`helpers.training.softmax_backward` for the softmax), and :func:`gradient_check` compares
that with central finite differences.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..attention import causal_mask, softmax
from ..blas import one_blas_thread
from ..rope import alibi_bias, alibi_slopes, frequencies, turn
from ..training import cross_entropy

__all__ = [
    "ALPHABET",
    "encode",
    "decode",
    "PARAM_NAMES",
    "InductionModel",
    "init_params",
    "forward",
    "HOOK_POINTS",
    "hook_names",
    "merge_heads",
    "split_batch_heads",
]

PARAM_NAMES = ("W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_U")

# The model is trained on random token ids 0..63; to type a sequence, each id is one character.
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ."


def encode(text: str) -> np.ndarray:
    """Token ids of ``text``, one per character of :data:`ALPHABET` (id = its index there)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    unknown = sorted({c for c in text if c not in ALPHABET})
    if unknown:
        raise ValueError(
            f"characters {''.join(unknown)!r} are not among the model's 64 tokens: letters a-z "
            "and A-Z, digits, space and '.'"
        )
    return np.array([ALPHABET.index(c) for c in text], dtype=np.int64)


def decode(ids) -> str:
    """The characters of token ids ``ids`` (the inverse of :func:`encode`)."""
    ids = np.asarray(ids)
    if ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0
                     or ids.max() >= len(ALPHABET)):  # fmt: skip
        raise ValueError(f"token ids must be whole numbers in 0..{len(ALPHABET) - 1}")
    return "".join(ALPHABET[int(i)] for i in ids.reshape(-1))


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return int(value)


def init_params(
    vocab_size: int,
    d_model: int,
    n_heads: int,
    max_len: int,
    n_layers: int = 2,
    seed: int = 0,
    embed_std: float = 1.0,
) -> dict[str, np.ndarray]:
    """Random starting weights: PyTorch's defaults for ``nn.Embedding`` and ``nn.Linear``.

    The embeddings are normal with standard deviation ``embed_std`` (1, as ``nn.Embedding``);
    the matrices uniform in ``+-1 / sqrt(d_model)`` (as ``nn.Linear``).

    Returns ``W_E (vocab_size, d_model)``, ``W_pos (max_len, d_model)``, ``W_Q, W_K, W_V, W_O
    (n_layers, d_model, d_model)`` and ``W_U (d_model, vocab_size)``.
    """
    vocab_size, d_model = _positive_int(vocab_size, "vocab_size"), _positive_int(d_model, "d_model")
    n_heads, max_len = _positive_int(n_heads, "n_heads"), _positive_int(max_len, "max_len")
    n_layers = _positive_int(n_layers, "n_layers")
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be a multiple of n_heads={n_heads}")
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(d_model)
    square = (n_layers, d_model, d_model)
    return {
        "W_E": rng.normal(0.0, embed_std, (vocab_size, d_model)),
        "W_pos": rng.normal(0.0, embed_std, (max_len, d_model)),
        "W_Q": rng.uniform(-bound, bound, square),
        "W_K": rng.uniform(-bound, bound, square),
        "W_V": rng.uniform(-bound, bound, square),
        "W_O": rng.uniform(-bound, bound, square),
        "W_U": rng.uniform(-bound, bound, (d_model, vocab_size)),
    }


@dataclass
class Cache:
    """What the forward pass keeps for the backward pass (per layer, lists of arrays)."""

    tokens: np.ndarray  # (b, n)
    x: list  # n_layers + 1 residual streams (b, n, d_model): x[0] = embeddings, x[-1] = final
    Q: list  # per layer (b, h, n, d_head)
    K: list
    V: list
    A: list  # per layer (b, h, n, n): attention weights, rows = queries
    Z: list  # per layer (b, n, d_model): the heads' outputs A V, concatenated
    logits: np.ndarray  # (b, n, vocab_size)


def split_batch_heads(M: np.ndarray, n_heads: int) -> np.ndarray:
    b, n, d = M.shape
    return M.reshape(b, n, n_heads, d // n_heads).transpose(0, 2, 1, 3)  # (b, h, n, d_head)


def merge_heads(M: np.ndarray) -> np.ndarray:
    b, h, n, e = M.shape
    return M.transpose(0, 2, 1, 3).reshape(b, n, h * e)  # (b, n, d_model)


def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, bias: np.ndarray):
    """``scaled_dot_product_attention(Q, K, V, causal_mask(n))`` without its input checks.

    The same arithmetic, in the inputs' dtype (float32 while training); the tests compare it
    with the helper. Training calls it about 10,000 times with inputs it made itself, where the
    helper's finiteness checks cost about a tenth of a step.
    """
    scores = Q @ np.swapaxes(K, -1, -2)  # (b, h, n, n)
    scores *= 1.0 / np.sqrt(Q.shape[-1])
    scores += bias  # -inf above the diagonal: exp(-inf) = 0, masked weights are exactly 0
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores @ V, scores


POSITIONS = ("learned", "rope", "alibi", "none")


def _check_positions(positions) -> str:
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {POSITIONS}, got {positions!r}")
    return positions


def rope_tables(n: int, d_head: int, dtype, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``cos, sin (n, d_head / 2)`` of RoPE's angles at positions ``0 .. n-1`` times ``scale``
    (rotate-half convention, base 10000: :func:`helpers.rope.rotate`'s), in ``dtype``."""
    angles = (np.arange(n) * scale)[:, None] * frequencies(d_head)[None, :]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def apply_rope(X: np.ndarray, cos: np.ndarray, sin: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """``X (..., n, d_head)`` rotated by the tables (``sign=-1``: back, the transpose)."""
    half = X.shape[-1] // 2
    return np.concatenate(turn(X[..., :half], X[..., half:], cos, sign * sin), axis=-1)


def position_bias(n: int, n_heads: int, positions: str, dtype, window: int | None = None):
    """What is added to the scores before the softmax: ``-inf`` on future keys, and ALiBi's
    ``-m_h (i - j)`` on the others for ``positions="alibi"`` (``(h, n, n)``; else ``(n, n)``).
    ``window``: ``-inf`` too on the keys ``window`` or more positions back (lesson 11)."""
    if positions == "alibi":
        bias = alibi_bias(n, n_heads).astype(dtype)
    else:
        bias = np.where(causal_mask(n), 0.0, -np.inf).astype(dtype)
    if window is not None:
        far = np.arange(n)[:, None] - np.arange(n)[None, :] >= window
        bias = np.where(far, -np.inf, bias).astype(dtype)
    return bias


# The hook points of the forward pass, TransformerLens's names: what a hook sees, and may replace.
HOOK_POINTS = {
    "hook_embed": "the embeddings, W_E[tokens] (+ W_pos for learned positions): (b, n, d_model)",
    "hook_q_input": "the residual stream the layer's queries read: (b, n, d_model)",
    "hook_k_input": "the residual stream the layer's keys read: (b, n, d_model)",
    "hook_v_input": "the residual stream the layer's values read: (b, n, d_model)",
    "hook_pattern": "the attention weights, rows = queries: (b, h, n, n)",
    "hook_z": "each head's weighted values A V, before W_O: (b, h, n, d_head)",
    "hook_result": "each head's output as written to the residual stream: (b, h, n, d_model)",
    "hook_resid_final": "the residual stream the unembedding reads: (b, n, d_model)",
}
_LAYER_HOOKS = ("hook_q_input", "hook_k_input", "hook_v_input", "hook_pattern", "hook_z",
                "hook_result")  # fmt: skip
Hook = Callable[[np.ndarray], "np.ndarray | None"]


def hook_names(n_layers: int) -> list[str]:
    """Every hook point of a model with ``n_layers`` layers: ``hook_embed``, then per layer
    ``blocks.{l}.hook_q_input`` ... ``blocks.{l}.hook_result``, then ``hook_resid_final``."""
    per_layer = [f"blocks.{layer}.{name}" for layer in range(n_layers) for name in _LAYER_HOOKS]
    return ["hook_embed", *per_layer, "hook_resid_final"]


def _check_hooks(hooks: Mapping[str, Hook] | None, n_layers: int) -> dict[str, Hook]:
    hooks = dict(hooks or {})
    unknown = sorted(set(hooks) - set(hook_names(n_layers)))
    if unknown:
        raise ValueError(
            f"no hook point {unknown[0]!r}; this model's are hook_embed, blocks.<layer>.<name> "
            f"for layer 0..{n_layers - 1} and name in {_LAYER_HOOKS}, and hook_resid_final"
        )
    for name, hook in hooks.items():
        if not callable(hook):
            raise ValueError(f"the hook at {name!r} must be a function of the value, got "
                             f"{type(hook).__name__}")  # fmt: skip
    return hooks


def forward(
    params: dict[str, np.ndarray],
    tokens: np.ndarray,
    n_heads: int,
    positions: str = "learned",
    position_scale: float = 1.0,
    window: int | None = None,
    hooks: Mapping[str, Hook] | None = None,
) -> Cache:
    """Run the model on ``tokens (b, n)`` (already checked) and keep every intermediate.

    ``positions``: how the model knows where a token is (lesson 11): ``"learned"``, a table
    ``W_pos`` added to the embeddings; ``"rope"``, queries and keys rotated by position (the
    cache keeps them rotated); ``"alibi"``, a distance penalty on the scores; ``"none"``, only
    the causal mask. ``position_scale``: RoPE's positions are multiplied by it (position
    interpolation). ``window``: each query reads only the keys less than ``window`` positions
    back.

    ``hooks`` maps hook points (:data:`HOOK_POINTS`, named as :func:`hook_names` lists them,
    e.g. ``"blocks.0.hook_z"``; named after TransformerLens's, whose names and shapes differ in
    detail) to a function of a copy of the value there, called as ``hook(value)``, one per
    point; what it returns, if not None, replaces the value for the rest of the pass. Every
    ablation and patch of lesson 10 is a hook (:mod:`helpers.induction.circuits`). With a
    ``hook_result`` in a layer, that layer adds its heads' outputs one by one (each head's
    ``A V`` times its rows of ``W_O``); else as training does, all at once (``concat(Z) W_O``:
    the same sum, other rounding).
    """
    hooks = _check_hooks(hooks, params["W_Q"].shape[0])

    def at(name: str, value: np.ndarray) -> np.ndarray:
        hook = hooks.get(name)
        if hook is None:
            return value
        # A copy: the queries, keys and values read one stream, and the cache keeps it; a hook
        # that writes into what it is given changes nothing unless it returns it.
        mine = value.copy()
        replaced = hook(mine)
        return value if replaced is None else replaced

    b, n = tokens.shape
    x = params["W_E"][tokens]  # (b, n, d_model)
    if positions == "learned":
        x = x + params["W_pos"][:n]
    x = at("hook_embed", x)
    dtype = params["W_Q"].dtype
    bias = position_bias(n, n_heads, positions, dtype, window)
    tables = None
    if positions == "rope":
        tables = rope_tables(n, x.shape[-1] // n_heads, dtype, position_scale)
    cache = Cache(tokens, [x], [], [], [], [], [], None)
    for layer in range(params["W_Q"].shape[0]):
        block = f"blocks.{layer}."
        Q, K, V = (
            split_batch_heads(at(block + f"hook_{r}_input", x) @ params[w][layer], n_heads)
            for r, w in (("q", "W_Q"), ("k", "W_K"), ("v", "W_V"))
        )
        if tables is not None:
            Q, K = apply_rope(Q, *tables), apply_rope(K, *tables)
        out, weights = causal_attention(Q, K, V, bias)  # (b, h, n, d_head), (b, h, n, n)
        A = at(block + "hook_pattern", weights)
        if A is not weights:  # a hook replaced the pattern: the values are weighted by it
            out = A @ V
        out = at(block + "hook_z", out)
        Z = merge_heads(out)  # (b, n, d_model)
        if block + "hook_result" in hooks:
            heads = out @ params["W_O"][layer].reshape(n_heads, out.shape[-1], -1)  # (b,h,n,d)
            x = x + at(block + "hook_result", heads).sum(axis=1)  # the residual stream
        else:
            x = x + Z @ params["W_O"][layer]  # the residual stream
        for store, value in zip((cache.Q, cache.K, cache.V, cache.A, cache.Z), (Q, K, V, A, Z)):
            store.append(value)
        cache.x.append(x)
    cache.logits = at("hook_resid_final", x) @ params["W_U"]  # (b, n, vocab_size)
    return cache


def _by_layer(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    layers: dict[int, list[int]] = {}
    for layer, head in pairs:
        layers.setdefault(layer, []).append(head)
    return layers


def _zeroing(heads: list[int]) -> Hook:
    """A ``hook_z`` that sets these heads' outputs to zero (zero ablation)."""

    def hook(z: np.ndarray) -> np.ndarray:
        z[:, heads] = 0.0  # z is this pass's own array: nothing else holds it yet
        return z

    return hook


class InductionModel:
    """A trained (or freshly initialised) two-layer attention-only causal Transformer.

    Attributes
    ----------
    params : dict of ndarray
        ``W_E, W_pos, W_Q, W_K, W_V, W_O, W_U`` (see the module docstring).
    vocab_size, max_len, n_layers, n_heads, d_model, d_head : int
    """

    def __init__(self, params: dict[str, np.ndarray], n_heads: int, positions: str = "learned"):
        missing = [name for name in PARAM_NAMES if name not in params]
        if missing:
            raise ValueError(f"params is missing {missing}; it needs {list(PARAM_NAMES)}")
        self.params = {name: np.asarray(params[name], dtype=float) for name in PARAM_NAMES}
        self.n_heads = _positive_int(n_heads, "n_heads")
        # How it knows where a token is (lesson 11). Only the learned table has a length: the
        # other schemes read sequences of any length (what they make of them is measured).
        self.positions = _check_positions(positions)
        # RoPE's positions are multiplied by this (position interpolation: see interpolate).
        self.position_scale = 1.0
        # Keys this many positions back or more are masked (None: none; see windowed).
        self.window = None
        self.vocab_size, self.d_model = self.params["W_E"].shape
        self.max_len = self.params["W_pos"].shape[0] if positions == "learned" else None
        self.n_layers = self.params["W_Q"].shape[0]
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not a multiple of n_heads={n_heads}")
        self.d_head = self.d_model // self.n_heads
        self.h = self.n_heads  # the paper's name for the number of heads
        square = (self.n_layers, self.d_model, self.d_model)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if self.params[name].shape != square:
                raise ValueError(f"{name} must be {square}, got {self.params[name].shape}")
        if self.params["W_U"].shape != (self.d_model, self.vocab_size):
            raise ValueError(
                f"W_U must be {(self.d_model, self.vocab_size)}, got {self.params['W_U'].shape}"
            )

    def interpolate(self, scale: float) -> InductionModel:
        """A RoPE model that reads position ``t`` as ``t * scale`` (the same weights): position
        interpolation (Chen et al. 2023), with ``scale`` = training length / reading length so
        that a longer sequence's positions stay in the range seen in training."""
        if self.positions != "rope":
            raise ValueError(f"only a RoPE model's positions can be scaled; this one's are "
                             f"{self.positions!r}")  # fmt: skip
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)):
            raise ValueError(f"scale must be a number in (0, 1], got {scale!r}")
        if not (np.isfinite(scale) and 0 < scale <= 1):
            raise ValueError(f"scale must be a number in (0, 1] (training / reading length), "
                             f"got {scale}")  # fmt: skip
        return self.copy(position_scale=float(scale))

    def windowed(self, window: int) -> InductionModel:
        """The same model with each query reading only the keys less than ``window`` positions
        back (a sliding-window mask): to test what keys further back do to it."""
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
            raise ValueError(f"window must be a whole number >= 1, got {window!r}")
        return self.copy(window=int(window))

    def copy(self, **changes) -> InductionModel:
        """The same model, its weights in float64, with ``changes`` to its attributes."""
        other = InductionModel(self.params, self.n_heads, self.positions)
        other.position_scale, other.window = self.position_scale, self.window
        for name in ("settings", "history"):
            if hasattr(self, name):
                setattr(other, name, getattr(self, name))
        for name, value in changes.items():
            setattr(other, name, value)
        return other

    def __repr__(self) -> str:
        where = "" if self.positions == "learned" else f", positions={self.positions!r}"
        if self.position_scale != 1.0:
            where += f", position_scale={self.position_scale:g}"
        if self.window is not None:
            where += f", window={self.window}"
        return (
            f"InductionModel(n_layers={self.n_layers}, n_heads={self.n_heads}, "
            f"d_model={self.d_model}, vocab_size={self.vocab_size}, max_len={self.max_len}"
            f"{where})"
        )

    def check_tokens(self, tokens, name: str = "tokens") -> np.ndarray:
        """``tokens`` as an int array ``(n,)`` or ``(b, n)``; a clear ValueError otherwise."""
        array = np.asarray(tokens)
        if array.dtype == bool or not (
            np.issubdtype(array.dtype, np.integer)
            or (np.issubdtype(array.dtype, np.floating) and np.all(array == np.round(array)))
        ):
            raise ValueError(
                f"{name} must be whole-number token ids, got dtype {array.dtype}"
                + (f" with values like {array.flat[0]!r}" if array.size else "")
            )
        if array.ndim not in (1, 2):
            raise ValueError(f"{name} must have shape (n,) or (batch, n), got shape {array.shape}")
        n = array.shape[-1]
        if n < 1 or (self.max_len is not None and n > self.max_len):
            raise ValueError(
                f"{name} holds {n} positions; this model reads 1 to max_len={self.max_len}"
                + (" (its table of learned positions has no row for more)" if n > 1 else "")
            )
        if array.size and (array.min() < 0 or array.max() >= self.vocab_size):
            raise ValueError(
                f"token ids must lie in 0..{self.vocab_size - 1} (vocab_size={self.vocab_size}),"
                f" got ids from {array.min()} to {array.max()}"
            )
        return array.astype(np.int64)

    def _check_ablate(self, ablate) -> list[tuple[int, int]]:
        pairs = []
        for pair in ablate:
            try:
                layer, head = (int(v) for v in pair)
            except (TypeError, ValueError):
                raise ValueError(f"ablate takes (layer, head) pairs, got {pair!r}") from None
            if not (0 <= layer < self.n_layers and 0 <= head < self.n_heads):
                raise ValueError(
                    f"no head ({layer}, {head}): layers are 0..{self.n_layers - 1}, heads "
                    f"0..{self.n_heads - 1}"
                )
            pairs.append((layer, head))
        return pairs

    def run(
        self,
        tokens,
        ablate: Iterable[tuple[int, int]] = (),
        hooks: Mapping[str, Hook] | None = None,
    ) -> Cache:
        """The forward pass on ``(b, n)`` tokens with every intermediate (see :class:`Cache`).

        ``ablate``: ``(layer, head)`` pairs whose output is set to zero (a ``hook_z`` each; the
        head still computes its attention weights, which the cache keeps). ``hooks``: more hook
        points and their functions (:func:`forward`)."""
        tokens = self.check_tokens(tokens)
        single = tokens.ndim == 1
        hooks = dict(hooks or {})
        for layer, heads in _by_layer(self._check_ablate(ablate)).items():
            name = f"blocks.{layer}.hook_z"
            if name in hooks:
                raise ValueError(f"ablate and a hook of your own both use {name}")
            hooks[name] = _zeroing(heads)
        with one_blas_thread():
            cache = forward(self.params, tokens[None] if single else tokens, self.n_heads,
                            self.positions, self.position_scale, self.window,
                            hooks)  # fmt: skip
        return cache

    def forward(
        self, tokens, ablate: Iterable[tuple[int, int]] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """Logits and attention weights for ``tokens``.

        Parameters
        ----------
        tokens : array_like of int, shape (n,) or (b, n)
            Ids in ``0 .. vocab_size - 1``, ``1 <= n <= max_len``.
        ablate : iterable of (layer, head), optional
            Heads whose output is zeroed (their weights are still returned).

        Returns
        -------
        logits : ndarray, shape (..., n, vocab_size)
            Position i's scores for the token at position i + 1.
        attention : ndarray, shape (..., n_layers, n_heads, n, n)
            Rows = queries, columns = keys; causal: zero above the diagonal.
        """
        tokens = self.check_tokens(tokens)
        cache = self.run(tokens, ablate)
        attention = np.stack(cache.A, axis=1)  # (b, n_layers, h, n, n)
        if tokens.ndim == 1:
            return cache.logits[0], attention[0]
        return cache.logits, attention

    def loss(self, tokens, targets, ablate: Iterable[tuple[int, int]] = ()) -> float:
        """Mean cross-entropy of the next-token predictions at positions with a target >= 0."""
        tokens = self.check_tokens(tokens)
        logits = self.run(tokens, ablate).logits  # (b, n, vocab_size): no stacked weights
        if tokens.ndim == 1:
            logits = logits[0]
        targets = np.asarray(targets)
        if targets.shape != tokens.shape:
            raise ValueError(f"targets must have the shape of tokens {tokens.shape}, got "
                             f"{targets.shape}")  # fmt: skip
        return cross_entropy(logits, targets)[0]

    def head_weights(self, layer: int, head: int) -> dict[str, np.ndarray]:
        """One head's ``W_Q, W_K, W_V (d_model, d_head)`` and ``W_O (d_head, d_model)``."""
        ((layer, head),) = self._check_ablate([(layer, head)])
        cols = slice(head * self.d_head, (head + 1) * self.d_head)
        p = self.params
        return {
            "W_Q": p["W_Q"][layer][:, cols],
            "W_K": p["W_K"][layer][:, cols],
            "W_V": p["W_V"][layer][:, cols],
            "W_O": p["W_O"][layer][cols, :],
        }

    def generate(self, prompt, steps: int) -> tuple[np.ndarray, dict]:
        """Greedy continuation of ``prompt (n,)`` by ``steps`` tokens, with a KV cache.

        Each new token runs through the model alone: its query, key and value are computed
        once per layer, its key and value appended to that layer's cache, and its query attends
        to everything cached (no mask needed: the cache holds no future; lesson 05's
        ``decode_step``). Returns the whole sequence ``(n + steps,)`` and the cache
        (``{"K": [per layer (h, t, d_head)], "V": [...]}``).
        """
        prompt = self.check_tokens(prompt, "prompt")
        if prompt.ndim != 1:
            raise ValueError(f"prompt must be one sequence (n,), got shape {prompt.shape}")
        steps = int(steps) if not isinstance(steps, bool) else -1
        room = None if self.max_len is None else self.max_len - len(prompt)
        if steps < 0 or (room is not None and steps > room):
            raise ValueError(f"steps must be 0 .. max_len - len(prompt) = {room}, got {steps}")
        p, h, e = self.params, self.n_heads, self.d_head
        cache = {"K": [np.zeros((h, 0, e)) for _ in range(self.n_layers)],
                 "V": [np.zeros((h, 0, e)) for _ in range(self.n_layers)]}  # fmt: skip
        sequence = list(int(t) for t in prompt)
        slopes = alibi_slopes(h)[:, None, None] if self.positions == "alibi" else None
        for position in range(len(prompt) + steps - 1):
            x = p["W_E"][sequence[position]]  # (d_model,)
            if self.positions == "learned":
                x = x + p["W_pos"][position]
            for layer in range(self.n_layers):
                q, k, v = (x @ p[w][layer] for w in ("W_Q", "W_K", "W_V"))  # (d_model,)
                q, k = q.reshape(h, 1, e), k.reshape(h, 1, e)
                if self.positions == "rope":
                    # Each at its own position: the key is cached already rotated, and never
                    # rotated again; the new query is rotated at the position it reads from.
                    angle = position * self.position_scale * frequencies(e)
                    q, k = (apply_rope(t, np.cos(angle), np.sin(angle)) for t in (q, k))
                cache["K"][layer] = np.concatenate([cache["K"][layer], k], 1)
                cache["V"][layer] = np.concatenate([cache["V"][layer], v.reshape(h, 1, e)], 1)
                scores = q @ np.swapaxes(cache["K"][layer], -1, -2) / np.sqrt(e)  # (h, 1, t)
                if slopes is not None:  # ALiBi: -m_h times how far back each cached key is
                    scores = scores - slopes * (position - np.arange(position + 1))
                if self.window is not None:  # keys window or more positions back: unseen
                    scores[..., : max(position - self.window + 1, 0)] = -np.inf
                weights = softmax(scores)
                z = weights @ cache["V"][layer]
                # (h, 1, d_head): the new query against every cached key, itself included
                x = x + z.reshape(-1) @ p["W_O"][layer]
            if position >= len(prompt) - 1:
                sequence.append(int(np.argmax(x @ p["W_U"])))
        return np.array(sequence), cache
