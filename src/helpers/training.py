"""Train one causal self-attention layer in NumPy, with hand-written gradients (pure NumPy).

The model, for a sequence of token ids ``tokens (batch, n)``::

    X      = E[tokens] + PE                       (batch, n, d_model)   E fixed, PE sinusoidal
    Q, K, V = X W_Q, X W_K, X W_V                 (batch, n, d_k)
    O, A   = scaled_dot_product_attention(Q, K, V, causal_mask(n))
    logits = O W_out                              (batch, n, vocab_size)

and the loss is the mean cross-entropy of ``softmax(logits)`` against ``targets (batch, n)``,
where a target of ``-1`` means "no target here". The forward pass calls
:func:`helpers.scaled_dot_product_attention`; :func:`loss_and_grads` backpropagates through it
by hand and :func:`gradient_check` compares that with central finite differences.

The task of lesson 08, :func:`previous_token_task`: the target at position i is the token at
position i - 1. Nothing about the *token* at i says what to output; the layer has to attend to
the position just before, which it can only find through the positional encodings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .attention import causal_mask, scaled_dot_product_attention
from .positions import sinusoidal_positional_encoding

__all__ = [
    "init_params",
    "embed",
    "forward",
    "loss_and_grads",
    "softmax_backward",
    "gradient_check",
    "previous_token_task",
    "Adam",
    "TrainingRun",
    "train",
    "accuracy",
]

PARAM_NAMES = ("W_Q", "W_K", "W_V", "W_out")


def init_params(d_model: int, d_k: int, vocab_size: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random starting weights: ``W_Q, W_K, W_V (d_model, d_k)`` and ``W_out (d_k, vocab_size)``.

    Entries are normal with variance ``1 / fan_in``, so activations start with unit scale.
    """
    for name, value in (("d_model", d_model), ("d_k", d_k), ("vocab_size", vocab_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    rng = np.random.default_rng(seed)
    params = {
        name: rng.normal(0.0, 1.0 / np.sqrt(d_model), (d_model, d_k))
        for name in ("W_Q", "W_K", "W_V")
    }
    params["W_out"] = rng.normal(0.0, 1.0 / np.sqrt(d_k), (d_k, vocab_size))
    return params


def embed(tokens: np.ndarray, E: np.ndarray, positions: bool = True) -> np.ndarray:
    """``X = E[tokens] + PE``: ``tokens (batch, n)`` ids into ``E (vocab_size, d_model)``.

    With ``positions=False`` the positional encodings are left out (``X = E[tokens]``), to show
    what the layer can and cannot learn without them.
    """
    tokens = np.asarray(tokens)
    E = np.asarray(E, dtype=float)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(
            f"tokens must be a (batch, n) array of integer ids, got shape {tokens.shape} "
            f"and dtype {tokens.dtype}"
        )
    if E.ndim != 2:
        raise ValueError(f"E must be the (vocab_size, d_model) embedding table, got {E.shape}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= len(E)):
        raise ValueError(
            f"token ids must lie in 0..{len(E) - 1} (E has {len(E)} rows), got ids from "
            f"{tokens.min()} to {tokens.max()}"
        )
    X = E[tokens]  # (batch, n, d_model)
    if positions:
        X = X + sinusoidal_positional_encoding(tokens.shape[1], E.shape[1])
    return X


@dataclass
class Cache:
    """What the forward pass keeps for the backward pass (all ``(batch, n, ...)``)."""

    X: np.ndarray  # (batch, n, d_model)
    Q: np.ndarray  # (batch, n, d_k)
    K: np.ndarray  # (batch, n, d_k)
    V: np.ndarray  # (batch, n, d_k)
    A: np.ndarray  # (batch, n, n) attention weights, rows = queries
    O: np.ndarray  # (batch, n, d_k)
    logits: np.ndarray  # (batch, n, vocab_size)


def _check_params(params: dict[str, np.ndarray], d_model: int) -> None:
    missing = [name for name in PARAM_NAMES if name not in params]
    if missing:
        raise ValueError(f"params is missing {missing}; it needs {list(PARAM_NAMES)}")
    W_Q, W_K, W_V, W_out = (np.asarray(params[name]) for name in PARAM_NAMES)
    if not W_Q.shape == W_K.shape == W_V.shape or W_Q.ndim != 2 or W_Q.shape[0] != d_model:
        raise ValueError(
            f"W_Q, W_K, W_V must all be (d_model={d_model}, d_k), got {W_Q.shape}, "
            f"{W_K.shape}, {W_V.shape}"
        )
    if W_out.ndim != 2 or W_out.shape[0] != W_V.shape[1]:
        raise ValueError(f"W_out must be (d_k={W_V.shape[1]}, vocab_size), got {W_out.shape}")


def forward(params: dict[str, np.ndarray], X: np.ndarray) -> Cache:
    """One causal self-attention layer and a linear read-out.

    Parameters
    ----------
    params : dict
        ``W_Q, W_K, W_V (d_model, d_k)`` and ``W_out (d_k, vocab_size)``.
    X : ndarray, shape (batch, n, d_model)
        The input sequence (see :func:`embed`).

    Returns
    -------
    Cache
        Every intermediate; ``cache.A`` are the attention weights ``(batch, n, n)`` and
        ``cache.logits`` the scores for each vocabulary entry ``(batch, n, vocab_size)``.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must be (batch, n, d_model), got shape {X.shape}")
    _check_params(params, X.shape[-1])
    Q, K, V = X @ params["W_Q"], X @ params["W_K"], X @ params["W_V"]  # (batch, n, d_k)
    O, A = scaled_dot_product_attention(Q, K, V, mask=causal_mask(X.shape[1]))
    return Cache(X, Q, K, V, A, O, O @ params["W_out"])


def cross_entropy(logits: np.ndarray, targets: np.ndarray):
    """Mean cross-entropy over positions with a target, and its gradient w.r.t. the logits."""
    targets = np.asarray(targets)
    if targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"targets must have shape {logits.shape[:-1]} (batch, n), got {targets.shape}"
        )
    has_target = targets >= 0
    count = int(has_target.sum())
    if count == 0:
        raise ValueError("targets holds no target (all -1); there is nothing to learn from")
    if targets.max() >= logits.shape[-1]:
        raise ValueError(
            f"a target id {targets.max()} is outside the vocabulary 0..{logits.shape[-1] - 1}"
        )
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    safe = np.where(has_target, targets, 0)[..., None]  # (batch, n, 1)
    picked = np.take_along_axis(log_probs, safe, axis=-1)[..., 0]  # (batch, n)
    loss = -(picked * has_target).sum() / count
    dlogits = np.exp(log_probs)  # softmax probabilities
    np.put_along_axis(dlogits, safe, np.take_along_axis(dlogits, safe, axis=-1) - 1.0, axis=-1)
    dlogits *= has_target[..., None] / count  # positions without a target contribute nothing
    return float(loss), dlogits


def softmax_backward(A: np.ndarray, dA: np.ndarray) -> np.ndarray:
    """The gradient through a row-wise softmax: ``dS`` from ``A = softmax(S)`` and ``dA``.

    For one row, ``d a_j / d s_k = a_j (delta_jk - a_k)``; contracting that Jacobian with
    ``dA`` gives ``dS = A * (dA - rowsum(dA * A))``, without forming the ``(n_k, n_k)``
    Jacobian. Masked weights (``A = 0``) get ``dS = 0``: no gradient reaches a masked score.

    Parameters
    ----------
    A : ndarray, shape (..., n_q, n_k)
        The softmax weights (each row sums to 1).
    dA : ndarray, shape (..., n_q, n_k)
        The gradient of the loss with respect to ``A``.

    Returns
    -------
    dS : ndarray, shape (..., n_q, n_k)
        The gradient of the loss with respect to the scores.
    """
    A, dA = np.asarray(A, dtype=float), np.asarray(dA, dtype=float)
    if A.shape != dA.shape or A.ndim < 1:
        raise ValueError(f"A and dA must have the same shape, got A {A.shape} and dA {dA.shape}")
    return A * (dA - (dA * A).sum(axis=-1, keepdims=True))


def loss_and_grads(
    params: dict[str, np.ndarray], X: np.ndarray, targets: np.ndarray
) -> tuple[float, dict[str, np.ndarray], Cache]:
    """The loss, its gradient with respect to every weight matrix, and the forward cache.

    Backpropagation, one line per forward line (``c = 1 / sqrt(d_k)``)::

        dW_out = O^T dlogits                 dO = dlogits W_out^T
        dA     = dO V^T                      dV = A^T dO
        dS     = softmax_backward(A, dA) = A * (dA - rowsum(dA * A))   (masked: A = 0, dS = 0)
        dQ     = c dS K                      dK = c dS^T Q
        dW_Q   = X^T dQ,  dW_K = X^T dK,  dW_V = X^T dV   (summed over the batch)

    Parameters
    ----------
    params : dict
        As in :func:`forward`.
    X : ndarray, shape (batch, n, d_model)
    targets : ndarray of int, shape (batch, n)
        The token id each position should output; ``-1`` = no target at that position.

    Returns
    -------
    loss : float
    grads : dict
        Same keys and shapes as ``params``.
    cache : Cache
    """
    cache = forward(params, X)
    loss, dlogits = cross_entropy(cache.logits, targets)  # (batch, n, vocab)
    scale = 1.0 / np.sqrt(cache.Q.shape[-1])
    grads = {"W_out": np.einsum("bnk,bnv->kv", cache.O, dlogits)}
    dO = dlogits @ params["W_out"].T  # (batch, n, d_k)
    dA = dO @ np.swapaxes(cache.V, -1, -2)  # (batch, n, n)
    dV = np.swapaxes(cache.A, -1, -2) @ dO  # (batch, n, d_k)
    dS = softmax_backward(cache.A, dA)  # (batch, n, n)
    dQ = dS @ cache.K * scale  # (batch, n, d_k)
    dK = np.swapaxes(dS, -1, -2) @ cache.Q * scale  # (batch, n, d_k)
    for name, d in (("W_Q", dQ), ("W_K", dK), ("W_V", dV)):
        grads[name] = np.einsum("bnd,bnk->dk", cache.X, d)
    return loss, grads, cache


def gradient_check(
    params: dict[str, np.ndarray],
    X: np.ndarray,
    targets: np.ndarray,
    eps: float = 1e-6,
    grads_fn: Callable | None = None,
) -> dict[str, float]:
    """Relative error between hand-written gradients and central finite differences.

    For every entry ``w`` of every weight matrix, the numerical gradient is
    ``(loss(w + eps) - loss(w - eps)) / (2 eps)``. Per matrix the error is
    ``||g - g_num|| / (||g|| + ||g_num||)``: about 1e-9 or smaller when the gradients are
    right (float64), of order 1 when a term is missing.

    Parameters
    ----------
    grads_fn : callable, optional
        The backward pass to check, called like :func:`loss_and_grads` and returning
        ``(loss, grads, cache)``; :func:`loss_and_grads` by default. The numerical gradient
        always comes from :func:`loss_and_grads`'s loss.

    Returns
    -------
    dict
        Matrix name -> relative error.
    """
    _, grads, _ = (grads_fn or loss_and_grads)(params, X, targets)
    errors = {}
    for name in PARAM_NAMES:
        numerical = np.zeros_like(params[name])
        for index in np.ndindex(params[name].shape):
            shifted = {key: value.copy() for key, value in params.items()}
            shifted[name][index] += eps
            loss_plus = loss_and_grads(shifted, X, targets)[0]
            shifted[name][index] -= 2 * eps
            loss_minus = loss_and_grads(shifted, X, targets)[0]
            numerical[index] = (loss_plus - loss_minus) / (2 * eps)
        denominator = np.linalg.norm(grads[name]) + np.linalg.norm(numerical)
        errors[name] = float(np.linalg.norm(grads[name] - numerical) / max(denominator, 1e-300))
    return errors


def previous_token_task(
    rng: np.random.Generator, batch: int, n: int, vocab_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Random token sequences and their "previous token" targets.

    Returns
    -------
    tokens : ndarray of int, shape (batch, n)
        Uniform random ids in ``0..vocab_size-1``.
    targets : ndarray of int, shape (batch, n)
        ``targets[:, i] = tokens[:, i - 1]``; position 0 has no previous token: ``-1``.
    """
    tokens = rng.integers(0, vocab_size, (batch, n))
    return tokens, previous_token_targets(tokens)


def previous_token_targets(tokens: np.ndarray) -> np.ndarray:
    """``targets[:, i] = tokens[:, i - 1]`` and ``targets[:, 0] = -1`` (no target)."""
    tokens = np.asarray(tokens)
    targets = np.full_like(tokens, -1)
    targets[:, 1:] = tokens[:, :-1]
    return targets


def accuracy(params: dict[str, np.ndarray], X: np.ndarray, targets: np.ndarray) -> float:
    """Fraction of positions with a target where the largest logit is the target."""
    predictions = forward(params, X).logits.argmax(axis=-1)  # (batch, n)
    has_target = np.asarray(targets) >= 0
    return float((predictions == targets)[has_target].mean())


class Adam:
    """The Adam optimiser (Kingma & Ba 2015), updating a dict of arrays in place."""

    def __init__(
        self, params: dict[str, np.ndarray], lr: float = 0.02, betas=(0.9, 0.999), eps=1e-8
    ):
        if not lr > 0:
            raise ValueError(f"the learning rate lr must be positive, got {lr!r}")
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.m = {name: np.zeros_like(value) for name, value in params.items()}
        self.v = {name: np.zeros_like(value) for name, value in params.items()}
        self.t = 0

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        for name, g in grads.items():
            self.m[name] = self.beta1 * self.m[name] + (1 - self.beta1) * g
            self.v[name] = self.beta2 * self.v[name] + (1 - self.beta2) * g * g
            m_hat = self.m[name] / (1 - self.beta1**self.t)
            v_hat = self.v[name] / (1 - self.beta2**self.t)
            params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


@dataclass
class TrainingRun:
    """What :func:`train` returns: final weights and the history, every ``snapshot_every`` steps.

    ``steps[j]`` is the step of snapshot j (0 = before training); ``weights[j]`` the attention
    weights on the probe sequence ``(n, n)`` then; ``loss[j]`` the training-batch loss and
    ``test_accuracy[j]`` the accuracy on the held-out sequences.
    """

    params: dict[str, np.ndarray]
    steps: list[int] = field(default_factory=list)
    weights: list[np.ndarray] = field(default_factory=list)
    test_loss: list[float] = field(default_factory=list)
    test_accuracy: list[float] = field(default_factory=list)


def train(
    E: np.ndarray,
    *,
    n: int,
    steps: int = 300,
    batch: int = 64,
    lr: float = 0.02,
    d_k: int | None = None,
    positions: bool = True,
    probe: np.ndarray | None = None,
    snapshot_every: int = 10,
    n_test: int = 500,
    seed: int = 0,
) -> TrainingRun:
    """Train a causal self-attention layer on :func:`previous_token_task` with Adam.

    Parameters
    ----------
    E : ndarray, shape (vocab_size, d_model)
        The (fixed) token embedding table.
    n : int
        Sequence length.
    steps, batch, lr : int, int, float
        Optimiser steps, sequences per step, Adam's learning rate.
    d_k : int, optional
        Width of Q, K, V; defaults to ``d_model``.
    positions : bool
        Add the sinusoidal positional encodings to the input (False: tokens only).
    probe : ndarray of int, shape (n,), optional
        A sequence whose attention weights are saved at every snapshot (default: the
        first test sequence).
    snapshot_every : int
        Save a snapshot every this many steps (and at step 0 and the last step).
    n_test : int
        Held-out sequences for the accuracy.
    seed : int
        Seeds the weights, the training batches and the test set: the same seed gives the
        same run.
    """
    E = np.asarray(E, dtype=float)
    vocab_size, d_model = E.shape
    rng = np.random.default_rng(seed)
    params = init_params(d_model, d_k or d_model, vocab_size, seed=seed)
    test_tokens, test_targets = previous_token_task(rng, n_test, n, vocab_size)
    X_test = embed(test_tokens, E, positions)
    X_probe = embed((test_tokens[0] if probe is None else np.asarray(probe))[None], E, positions)
    optimiser = Adam(params, lr=lr)
    run = TrainingRun(params)

    def snapshot(step: int) -> None:
        run.steps.append(step)
        run.weights.append(forward(params, X_probe).A[0].copy())
        run.test_loss.append(cross_entropy(forward(params, X_test).logits, test_targets)[0])
        run.test_accuracy.append(accuracy(params, X_test, test_targets))

    snapshot(0)
    for step in range(1, steps + 1):
        tokens, targets = previous_token_task(rng, batch, n, vocab_size)
        _, grads, _ = loss_and_grads(params, embed(tokens, E, positions), targets)
        optimiser.step(params, grads)
        if step % snapshot_every == 0 or step == steps:
            snapshot(step)
    return run
