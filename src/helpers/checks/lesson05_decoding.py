"""Lesson 05's ★★★ challenge: ``decode_step``, one step of generation with a KV cache."""

from __future__ import annotations

import numpy as np

from .answers import lesson05 as answers
from .compare import as_result_array, close, compare, raw_softmax, unpack_returns
from .draws import fresh_rng
from .exercise import Exercise
from .mistakes import LearnerError, Mistake, named

# ----------------------------------------------------------------------------------------------
# ★★★ decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V): one step of generation with a KV cache.


_DECODE_MISTAKES = {
    "attends_before_append": "your output attends to the keys before this token only: append "
    "the new key and value first, then attend, so the token also sees itself (j <= i).",
    "only_new_token": "your output is the new token's own value: it attended to its own key "
    "only. It must attend to every cached key plus its own.",
    "first_key_only": "all the weight goes to key 0: did you take row 0 of a causal mask for "
    "the new query? The new token is the *last* row: it may see every key in the cache.",
    "unscaled": "the scores are not scaled: divide q . k by sqrt(d_k).",
    "mean_of_values": "your output is the plain mean of the cached values: the weights must "
    "come from a softmax of the scores q . k / sqrt(d_k).",
    "key_as_query": "you scored the keys against the new token's key; the query is x_t @ W_Q.",
}


def _grade_decode_step(call):
    rng = fresh_rng()
    # The prompt's run decodes steps 2..n-1. About one draw in 50 makes two answers agree
    # there (weights near one-hot on the new token: key_as_query gives only_new_token's v_t),
    # so that the check would name the wrong mistake: draw again.
    for _ in range(100):
        n, d_model, d_k, d_v = int(rng.integers(6, 9)), 5, 3, 4
        X = rng.normal(size=(n, d_model))
        W_Q, W_K, W_V = (rng.normal(size=(d_model, d)) / np.sqrt(d_model) for d in (d_k, d_k, d_v))
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        full = answers.masked_attention(Q, K, V, answers.causal_mask(n))[0]  # (n, d_v)
        if all(_distinct([full[t], *_decode_mistakes(Q, K, V, t).values()]) for t in range(2, n)):
            break
    deferred = None
    for p, label in ((2, "after a prompt of 2 tokens"), (0, "from an empty cache")):
        try:
            _decode_run(call, X, (W_Q, W_K, W_V), (Q, K, V), full, p, label)
        except LearnerError as error:
            # An answer that cannot continue a prompt's cache (say, one that caches x_t itself)
            # may still show a nameable mistake from an empty cache: look there first.
            if p == 0:
                raise
            deferred = error
    if deferred is not None:
        raise deferred
    return (
        "token by token, your decode_step gives every row of the causal full pass, from an "
        "empty cache and after a prompt, and its cache grows by one key and value per step: "
        "nothing is recomputed."
    )


def _decode_mistakes(Q, K, V, t: int) -> dict[str, np.ndarray]:
    """What each named mistake's decode_step returns at step t (none at t = 0: with one key,
    every rule gives v_0)."""
    if t == 0:
        return {}
    q, d_k = Q[t], K.shape[1]
    return {
        "attends_before_append": raw_softmax(K[:t] @ q / np.sqrt(d_k)) @ V[:t],
        "only_new_token": V[t],
        "first_key_only": V[0],
        "unscaled": raw_softmax(K[: t + 1] @ q) @ V[: t + 1],
        "mean_of_values": V[: t + 1].mean(axis=0),
        "key_as_query": raw_softmax(K[: t + 1] @ K[t] / np.sqrt(d_k)) @ V[: t + 1],
    }


def _distinct(outputs: list[np.ndarray]) -> bool:
    """No two of ``outputs`` are close enough for the check to mistake one for another."""
    return not any(close(a, b) for i, a in enumerate(outputs) for b in outputs[i + 1 :])


def _shape(value) -> tuple[int, ...] | None:
    """A returned cache's shape as an array of floats; None when it is none (as_result_array
    then says what it is instead)."""
    try:
        return np.asarray(value, dtype=float).shape
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond any float
        return None


def _decode_run(call, X, weights, qkv, full, p: int, label: str) -> None:
    """Decode tokens p..n-1 one at a time, feeding back the cache each step returns."""
    W_Q, W_K, W_V = weights
    Q, K, V = qkv
    n, d_model = X.shape
    d_k, d_v = K.shape[1], V.shape[1]
    K_cache, V_cache = K[:p].copy(), V[:p].copy()
    for t in range(p, n):
        what = f"decode_step at step t = {t} ({label}; K_cache {K_cache.shape})"
        value = call(X[t].copy(), K_cache.copy(), V_cache.copy(), W_Q, W_K, W_V)
        out_t, new_K, new_V = unpack_returns(value, what, ("out_t", "K_cache", "V_cache"))
        k_shape, v_shape = _shape(new_K), _shape(new_V)
        if k_shape == (t, d_k) or v_shape == (t, d_v):
            raise Mistake(
                f"{what}: the returned cache still holds {t} rows; append the new token's "
                "key (x_t @ W_K) and value (x_t @ W_V), so step t returns t + 1 rows.",
                "cache_not_grown",
            )
        if k_shape == (t + 1, d_model) or v_shape == (t + 1, d_model):
            raise Mistake(
                f"{what}: your cache holds the tokens x_t themselves ({d_model} wide); it "
                "holds their keys x_t @ W_K and values x_t @ W_V, so that no key or value is "
                "ever recomputed.",
                "cache_holds_x",
            )
        new_K = as_result_array(new_K, what, (t + 1, d_k), part="K_cache")
        new_V = as_result_array(new_V, what, (t + 1, d_v), part="V_cache")
        if not (close(new_K, K[: t + 1]) and close(new_V, V[: t + 1])):
            raise Mistake(
                f"{what}: the returned cache should be the old cache with this token's key "
                "and value appended as the last row: K_cache[:t] unchanged, "
                "K_cache[t] = x_t @ W_K (and the same for V with W_V).",
                "cache_contents",
            )
        K_cache, V_cache = new_K, new_V  # the next step gets the cache this one returned
        if np.shape(out_t) == (1, d_v):
            row = as_result_array(np.asarray(out_t)[0], what, (d_v,), part="out_t")
            right = "its numbers are right, but it" if close(row, full[t]) else "it"
            raise Mistake(
                named(
                    "out_t_shape",
                    f"{what}: out_t has shape (1, {d_v}): {right} should be the new token's "
                    f"output vector, shape ({d_v},), as the cache rows are. A query made from "
                    "x_t[None, :] keeps that extra axis: take row 0 of the result, or use x_t "
                    "@ W_Q as a vector.",
                )
            )
        out_t = as_result_array(out_t, what, (d_v,), part="out_t")
        known = _decode_mistakes(Q, K, V, t)
        compare(
            out_t,
            full[t],
            {named(how, f"{what}: {_DECODE_MISTAKES[how]}"): w for how, w in known.items()},
            f"{what}: out_t differs from row {t} of the causal full pass.",
            "out_t",
        )


decode_step = Exercise(
    name="decode_step",
    # causal_mask too: the prompt asks which mask the step needs; with it allowed,
    # its row 0 is named as the mistake it is (first_key_only), and its last row passes.
    allowed=("helpers.softmax", "helpers.scaled_dot_product_attention", "helpers.causal_mask"),
    signature="decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V)",
    grade=_grade_decode_step,
    reference=answers.decode_step,
    stars=3,
    title="challenge: one step of generation with a KV cache, equal to the causal full pass",
    hints=[
        "At step t the new token x_t (d_model,) needs its query, key and value. Its key and "
        "value join the cache; its query is used once, right now. Which keys may the new "
        "token attend to under the causal rule j <= t?",
        "All of them: the cache holds tokens 0..t-1, and with the new key appended, exactly "
        "the keys j <= t. So no mask is needed. Append first (np.vstack or np.concatenate), "
        "then a stable softmax of K_cache @ q / sqrt(d_k).",
        "q = x_t @ W_Q; K_cache = np.vstack([K_cache, x_t @ W_K]); V_cache = np.vstack([V_cache, "
        "x_t @ W_V]); s = K_cache @ q / np.sqrt(len(q)); w = np.exp(s - s.max()); w /= w.sum(); "
        "return w @ V_cache, K_cache, V_cache",
    ],
)
