"""all-MiniLM-L6-v2 run by the course's own attention, in NumPy.

A BERT-style encoder: 6 layers, each with h = 12 heads of d_k = 384 / 12 = 32, and a
feed-forward block of width 1536. The forward pass below is the whole model, written out in
the order of the paper's figure 1 (post-LayerNorm, as BERT has it)::

    Z = LayerNorm(token + position + segment embeddings)                  # (n, 384)
    for each layer:
        Q, K, V = X W^Q + b^Q, X W^K + b^K, X W^V + b^V                     # (n, 384) each
        heads   = scaled_dot_product_attention(Q_a, K_a, V_a) for a = 1..12  # one call, head axis
        X       = LayerNorm(X + concat(heads) W^O + b^O)
        X       = LayerNorm(X + GELU(X W_1 + b_1) W_2 + b_2)
    sentence embedding = mean of the last X over the tokens, scaled to length 1

The attention itself is ``helpers.scaled_dot_product_attention`` with a leading head axis:
Q, K, V of shape (12, n, 32). No causal mask: an encoder lets every token see every token.
Only a padded input needs a mask (``layer(X, k, mask)``): a padding mask, so that no token
reads the ``[PAD]`` tokens added to make sentences of a batch the same length.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from safetensors.numpy import load as load_safetensors
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer

from ..attention import scaled_dot_product_attention
from .fetch import MODEL_DIR, verified_bytes

__all__ = ["MiniLM", "Trace", "load_minilm", "layer_norm", "gelu"]

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (longer text is cut)


@lru_cache(maxsize=1)
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def _one_blas_thread():
    """The forward pass runs with one BLAS thread. Its matrices are small (n x 384 by 384 x
    1536): a second thread saves nothing, and on a busy 2-core machine (other notebooks, the
    tests) OpenBLAS's waiting threads made a 16-token pass take a median 529 ms instead of
    35 ms (measured here with threadpoolctl, load average 4). Costs ~10 us per call."""
    return _blas().limit(limits=1, user_api="blas")


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """Each row of ``x`` (..., d_model) shifted to mean 0, scaled to variance 1, then
    ``* gamma + beta`` (learned, one number per column)."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _erf(x: np.ndarray) -> np.ndarray:
    """erf(x), Abramowitz & Stegun formula 7.1.26 (|error| < 1.5e-7, below float32's step).

    NumPy has no erf; ``math.erf`` element by element costs ~30 ms per forward pass here.
    """
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU as BERT uses it (the exact one, not the tanh approximation): x * Phi(x)."""
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


@dataclass(frozen=True)
class Trace:
    """Everything one forward pass computed, for the lesson to show.

    ``n`` tokens; 6 layers; h = 12 heads; d_k = 32.
    """

    tokens: list[str]
    ids: np.ndarray  # (n,) token ids
    Z: np.ndarray  # (n, 384) embeddings after LayerNorm: the input of layer 1
    X: np.ndarray  # (7, n, 384): X[0] = Z, X[k] = the output of layer k
    Q: np.ndarray  # (6, 12, n, 32) per layer and head
    K: np.ndarray  # (6, 12, n, 32)
    V: np.ndarray  # (6, 12, n, 32)
    attention: np.ndarray  # (6, 12, n, n), every row sums to 1
    head_outputs: np.ndarray  # (6, 12, n, 32): A V per head, before W^O

    @property
    def hidden(self) -> np.ndarray:
        """The last layer's states, (n, 384)."""
        return self.X[-1]


class MiniLM:
    """all-MiniLM-L6-v2's weights, its tokenizer, and a NumPy forward pass.

    Build it with :func:`load_minilm` (cached). Weight names follow the paper: ``W_Q[layer]``
    is (d_model, d_model) and maps X to Q (``Q = X @ W_Q + b_Q``); head a uses columns
    ``a*32 : (a+1)*32``.
    """

    def __init__(self, folder: Path | None = None):
        folder = Path(folder) if folder is not None else MODEL_DIR
        # Each file's sha256 is checked on the very bytes that are then used.
        self.config = json.loads(verified_bytes("config.json", folder))
        self.tokenizer = Tokenizer.from_str(verified_bytes("tokenizer.json", folder).decode())
        self.tokenizer.no_padding()  # the file pads to 128; one sentence needs no padding
        self.tokenizer.enable_truncation(MAX_TOKENS)
        weights = load_safetensors(verified_bytes("model.safetensors", folder))

        c = self.config
        self.d_model = c["hidden_size"]  # 384
        self.h = c["num_attention_heads"]  # 12
        self.d_k = self.d_model // self.h  # 32
        self.n_layers = c["num_hidden_layers"]  # 6
        self.d_ff = c["intermediate_size"]  # 1536
        self.eps = c["layer_norm_eps"]  # 1e-12

        def w(name: str) -> np.ndarray:
            return weights[name]

        def linear(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            # PyTorch stores a Linear layer's weight as (out, in); we use x @ W, so (in, out).
            return np.ascontiguousarray(w(prefix + ".weight").T), w(prefix + ".bias")

        e = "embeddings."
        self.token_embedding = w(e + "word_embeddings.weight")  # (30522, 384)
        self.position_embedding = w(e + "position_embeddings.weight")  # (512, 384), learned
        self.segment_embedding = w(e + "token_type_embeddings.weight")  # (2, 384)
        self.embedding_norm = (w(e + "LayerNorm.weight"), w(e + "LayerNorm.bias"))

        self.layers = []
        for k in range(self.n_layers):
            p = f"encoder.layer.{k}."
            W_Q, b_Q = linear(p + "attention.self.query")
            W_K, b_K = linear(p + "attention.self.key")
            W_V, b_V = linear(p + "attention.self.value")
            W_O, b_O = linear(p + "attention.output.dense")
            W_1, b_1 = linear(p + "intermediate.dense")
            W_2, b_2 = linear(p + "output.dense")
            self.layers.append(
                {
                    "W_Q": W_Q, "b_Q": b_Q, "W_K": W_K, "b_K": b_K, "W_V": W_V, "b_V": b_V,
                    # Q, K and V in one product: (384, 3 * 384). Same numbers, one matmul.
                    "W_QKV": np.concatenate([W_Q, W_K, W_V], axis=1),
                    "b_QKV": np.concatenate([b_Q, b_K, b_V]),
                    "W_O": W_O, "b_O": b_O,
                    "norm_1": (w(p + "attention.output.LayerNorm.weight"),
                               w(p + "attention.output.LayerNorm.bias")),
                    "W_1": W_1, "b_1": b_1, "W_2": W_2, "b_2": b_2,
                    "norm_2": (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
                }
            )  # fmt: skip

    # ------------------------------------------------------------------ text -> tokens

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece tokens of ``text``, with ``[CLS]`` first and ``[SEP]`` last."""
        return self._encode(text)[0]

    def _encode(self, text: str, max_tokens: int | None = None) -> tuple[list[str], np.ndarray]:
        """Tokens and ids; with ``max_tokens``, cut to that many, ``[SEP]`` kept last."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        encoding = self.tokenizer.encode(text)
        tokens, ids = list(encoding.tokens), np.asarray(encoding.ids)
        if max_tokens is not None and len(tokens) > max_tokens:
            if max_tokens < 2:
                raise ValueError(
                    f"max_tokens must leave room for [CLS] and [SEP], got {max_tokens}"
                )
            tokens = tokens[: max_tokens - 1] + tokens[-1:]
            ids = np.concatenate([ids[: max_tokens - 1], ids[-1:]])
        return tokens, ids

    # ------------------------------------------------------------------ the forward pass

    def embed(self, ids: np.ndarray) -> np.ndarray:
        """Z: token + position + segment embeddings, then LayerNorm. (n,) ids -> (n, 384)."""
        n = len(ids)
        summed = (
            self.token_embedding[ids]  # what the token is
            + self.position_embedding[:n]  # where it is (learned, one row per position)
            + self.segment_embedding[0]  # which sentence (always the first here)
        )
        return layer_norm(summed, *self.embedding_norm, self.eps)

    def split_heads(self, M: np.ndarray) -> np.ndarray:
        """(n, 384) -> (12, n, 32): head a gets columns a*32 .. a*32+31."""
        n = M.shape[0]
        return M.reshape(n, self.h, self.d_k).transpose(1, 0, 2)

    def layer(
        self, X: np.ndarray, k: int, mask: np.ndarray | None = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Encoder layer ``k`` (0-based) on X (n, 384); returns the new X and its parts.

        ``mask``: None (the model's own use: one sentence, no padding), or a boolean mask
        broadcastable to (12, n, n), True = may attend, e.g. ``(n,)`` True on the real tokens
        of a padded sentence (Hugging Face's ``attention_mask`` with 1 = a real token).
        """
        with _one_blas_thread():  # also when a lesson calls layer() itself
            L = self.layers[k]
            n = X.shape[0]
            QKV = X @ L["W_QKV"] + L["b_QKV"]  # (n, 3 * 384): Q, K, V side by side
            Q, K, V = (self.split_heads(M) for M in np.split(QKV, 3, axis=1))  # (12, n, 32) each
            # The course's attention, all 12 heads at once (a leading head axis); no causal mask.
            heads, A = scaled_dot_product_attention(Q, K, V, mask=mask)  # (12, n, 32), (12, n, n)
            concat = heads.transpose(1, 0, 2).reshape(n, self.d_model)  # (n, 384)
            X = layer_norm(X + concat @ L["W_O"] + L["b_O"], *L["norm_1"], self.eps)
            hidden = gelu(X @ L["W_1"] + L["b_1"])  # (n, 1536)
            X = layer_norm(X + hidden @ L["W_2"] + L["b_2"], *L["norm_2"], self.eps)
        return X, {"Q": Q, "K": K, "V": V, "A": A, "heads": heads}

    def trace(self, text: str, max_tokens: int | None = None) -> Trace:
        """The forward pass with every intermediate kept (see :class:`Trace`); with
        ``max_tokens``, on the first ``max_tokens - 1`` tokens and ``[SEP]``."""
        tokens, ids = self._encode(text, max_tokens)
        with _one_blas_thread():
            Z = self.embed(ids)
            X, states, parts = Z, [Z], []
            for k in range(self.n_layers):
                X, part = self.layer(X, k)
                states.append(X)
                parts.append(part)

        def stack(key: str) -> np.ndarray:
            return np.stack([p[key] for p in parts])

        return Trace(
            tokens=tokens,
            ids=ids,
            Z=Z,
            X=np.stack(states),
            Q=stack("Q"),
            K=stack("K"),
            V=stack("V"),
            attention=stack("A"),
            head_outputs=stack("heads"),
        )

    def forward(self, text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """``(tokens, hidden (n, 384), attention (6, 12, n, n))``; every attention row sums
        to 1. ``attention[layer, head]`` is one head's (n, n) map, rows = query."""
        tokens, ids = self._encode(text)
        with _one_blas_thread():
            X = self.embed(ids)
            maps = []
            for k in range(self.n_layers):
                X, part = self.layer(X, k)
                maps.append(part["A"])
        return tokens, X, np.stack(maps)

    def sentence_embedding(self, text: str) -> np.ndarray:
        """The model's sentence vector: mean of the last layer over the tokens ([CLS] and
        [SEP] included, as sentence-transformers does), scaled to length 1. Shape (384,)."""
        _, hidden, _ = self.forward(text)
        pooled = hidden.mean(axis=0)
        return pooled / np.linalg.norm(pooled)


@lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """all-MiniLM-L6-v2, loaded once per process (the files' sha256 checked on that load).

    Raises
    ------
    ModelFilesError
        If a file is missing or altered; the message says what to run (``make real-model``).
    """
    return MiniLM()
