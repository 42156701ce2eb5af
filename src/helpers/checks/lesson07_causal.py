"""Lesson 07's ★★★ challenge: ``causal_blockwise_attention(Q, K, V, block_size)``, blockwise
attention with the causal mask, skipping the tiles above the diagonal, and the tiles it computed."""

from __future__ import annotations

import numbers

import numpy as np

from .answers import lesson07 as answers
from .compare import as_result_array, compare, unpack_returns
from .draws import fresh_rng
from .exercise import Exercise
from .lesson07 import MEMORY_D, peak_beyond_inputs
from .mistakes import Mistake, named

# ----------------------------------------------------------------------------------------------
# causal_blockwise_attention(Q, K, V, block_size) -> (output, tiles): the ★★★ challenge


def _causal_attention(Q, K, V, scale=None, offset=0, mask="causal"):
    """Plain attention with query i seeing keys j <= i + offset (or every key)."""
    n = Q.shape[0]
    s = Q @ K.T * (1 / np.sqrt(Q.shape[1]) if scale is None else scale)
    if mask == "causal":
        s = np.where(np.arange(n)[None, :] > np.arange(n)[:, None] + offset, -np.inf, s)
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True) @ V


def _causal_wrong(Q, K, V, b, how):
    n = Q.shape[0]
    if how == "no_mask":
        return _causal_attention(Q, K, V, mask=None)
    if how == "unscaled":
        return _causal_attention(Q, K, V, scale=1.0)
    if how == "strict_mask":
        return _causal_attention(Q, K, V, offset=-1)
    block_of = np.arange(n) // b
    if how == "sees_next_key":  # key i + 1 too, when it lies in the query's own block
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        allowed = (j <= i + 1) & (block_of[None, :] <= block_of[:, None])
    elif how == "diagonal_unmasked":  # whole key blocks up to the query's own block
        allowed = block_of[None, :] <= block_of[:, None]
    elif how == "skips_diagonal":  # only the key blocks strictly before the query's block
        allowed = block_of[None, :] < block_of[:, None]
    else:
        raise ValueError(how)
    s = np.where(allowed, Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True) @ V


_CAUSAL_MISTAKES = {
    "no_mask": "your output is attention with no mask: every query sees the future. Query i "
    "may only see keys 0..i.",
    "diagonal_unmasked": "you skip the future tiles, but inside the diagonal tile (query block "
    "== key block) nothing is masked, so a query sees the later keys of its own block. Set "
    "scores to -inf where the key position j > the query position i.",
    "skips_diagonal": "you skip the diagonal tiles too: a query block must also visit its own "
    "key block (k0 <= q0), masked inside. Without it the first block's queries see no key "
    "at all.",
    "strict_mask": "your mask hides the diagonal: query i may see key i itself (j <= i), so "
    "mask only j > i. Row 0 otherwise sees nothing.",
    "sees_next_key": "your mask lets query i see key i + 1: mask every j > i.",
    "unscaled": "the scores are not scaled: multiply each tile by 1/sqrt(d_k).",
}


def _check_tiles(tiles, what: str, n_b: int, want_tiles: int) -> None:
    """The tile count the answer reports (its output already right): n_b(n_b+1)/2."""
    if isinstance(tiles, (bool, np.bool_)) or not isinstance(tiles, numbers.Integral):
        raise Mistake(
            named(
                "tiles_not_int",
                f"{what}: tiles should be a whole number (the count of "
                f"score tiles you computed), got {type(tiles).__name__}.",
            ),
        )
    if tiles == n_b * n_b and n_b > 1:
        raise Mistake(
            named(
                "computed_every_tile",
                f"{what}: the output is right, but you computed "
                f"all {n_b} x {n_b} = {n_b * n_b} tiles. A tile whose keys all come after "
                f"its last query is fully masked; skip it: {want_tiles} = n_b(n_b+1)/2 "
                "tiles are enough.",
            ),
        )
    if tiles != want_tiles:
        raise Mistake(
            named(
                "tile_count",
                f"{what}: the output is right, but you report {tiles} "
                f"tiles; visiting each query block's key blocks up to and including its "
                f"own (the diagonal) gives n_b(n_b+1)/2 = {want_tiles}.",
            ),
        )


def _grade_causal(call):
    rng = fresh_rng()
    d_k, d_v = int(rng.integers(2, 6)), int(rng.integers(6, 9))
    cases = []
    for _ in range(2):
        b = int(rng.integers(3, 5))  # >= 3: seeing key i + 1 differs from the whole block
        n = b * int(rng.integers(3, 5)) + int(rng.integers(1, b))  # a shorter last block
        cases.append((n, b))
    n = int(rng.integers(9, 13))
    cases += [(n, 1), (n, n + 2)]
    for n, b in cases:
        Q, K, V = (rng.standard_normal(s) for s in ((n, d_k), (n, d_k), (n, d_v)))
        n_b = -(-n // b)  # blocks: ceil(n / b)
        what = (
            f"causal_blockwise_attention(Q, K, V, block_size={b}) with n={n} ({n_b} blocks "
            f"of queries and of keys)"
        )
        value = unpack_returns(
            call(Q, K, V, b), what, ("output", "tiles"), wrong_count="not_a_pair",
            hint=" (tiles = how many score tiles you computed)",
        )  # fmt: skip
        out = as_result_array(value[0], what, (n, d_v), part="output")
        expected, want_tiles = answers.causal_blockwise_attention(Q, K, V, b)
        known = {}
        for how, message in _CAUSAL_MISTAKES.items():
            wrong = _causal_wrong(Q, K, V, b, how)
            if not np.allclose(np.nan_to_num(wrong), expected, rtol=1e-4, atol=1e-5):
                known[named(how, f"{what}: {message}")] = wrong
        compare(
            out,
            expected,
            known,
            f"{what}: your output differs from causal attention (query i sees keys 0..i).",
            name="output",
        )
        _check_tiles(value[1], what, n_b, want_tiles)
    measured = _check_causal_memory(call, rng)
    return (
        "your causal blockwise attention equals causal attention with a shorter last block, "
        "blocks of 1 and one block, and visits only the n_b(n_b+1)/2 tiles on or below the "
        "diagonal: about half the work of the full square"
        + (
            f"; on n = {CAUSAL_MEMORY_N:,} tokens it never held the (n, n) score matrix or mask."
            if measured
            else " (its memory was not measured: Python's tracemalloc was already tracing "
            "something else, and the check does not disturb it)."
        )
    )


# The causal memory case: the tile count is what the answer reports, so what it computed is
# checked another way. With n = 2048 and d = 4, Q, K, V take 0.2 MB, one (128, 128) tile of
# scores 0.13 MB and one query block's strip of keys up to its diagonal at most (128, 2048),
# 2.1 MB; the whole (n, n) score matrix takes 33.6 MB and a boolean (n, n) mask 4.2 MB. The limit,
# an eighth of the matrix (4.2 MB), leaves room for the strip and copies of the inputs, and none
# for the matrix, its float mask, or its boolean mask alongside.
CAUSAL_MEMORY_N, CAUSAL_MEMORY_BLOCK = 2048, 128


def _check_causal_memory(call, rng) -> bool:
    n, d, block = CAUSAL_MEMORY_N, MEMORY_D, CAUSAL_MEMORY_BLOCK
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
    extra = peak_beyond_inputs(call, Q, K, V, block)
    if extra is None:
        return False
    full = n * n * 8
    if extra >= full / 8:
        raise Mistake(
            named(
                "full_matrix",
                f"causal_blockwise_attention(Q, K, V, block_size={block}) on n = {n} tokens "
                f"(d_k = d_v = {d}): the output is right, but your answer held "
                f"{extra / 1e6:.1f} MB at once beyond its inputs, while one ({block}, {block}) "
                f"tile of scores takes {block * block * 8 / 1e6:.2f} MB and the whole ({n}, {n})"
                f" score matrix {full / 1e6:.1f} MB (a boolean ({n}, {n}) mask "
                f"{n * n / 1e6:.1f} MB); the limit here is {full / 8e6:.1f} MB. Compute one tile "
                "per step, Q[q0:q1] @ K[k0:k1].T with at most block_size keys, mask only inside "
                "the diagonal tile, and never build the (n, n) scores or mask, nor all of a "
                "query block's keys at once.",
            )
        )
    return True


causal_blockwise_attention = Exercise(
    name="causal_blockwise_attention",
    # The mask of a diagonal tile is a causal_mask; attention itself (helpers.
    # scaled_dot_product_attention, helpers.blockwise) would skip the online softmax.
    allowed=("helpers.causal_mask",),
    signature="causal_blockwise_attention(Q, K, V, block_size)",
    grade=_grade_causal,
    reference=answers.causal_blockwise_attention,
    hints=[
        "Cut both the queries and the keys into blocks of block_size: a grid of n_b x n_b "
        "tiles, n_b = ceil(n / block_size). Query block q0:q1 only needs key blocks that start "
        "before q1; the others lie entirely in its future.",
        "For each query block run the online softmax over key blocks k0 = 0, b, ... while "
        "k0 < q1, counting the tiles. Only the diagonal tile (k0 == q0) has some future keys "
        "inside: set those scores to -inf where key j > query i.",
        "for q0 in range(0, n, b): q1 = min(q0 + b, n); m, l, acc = start state; for k0 in "
        "range(0, q1, b): k1 = min(k0 + b, n); s = Q[q0:q1] @ K[k0:k1].T / np.sqrt(d_k); "
        "s = np.where(np.arange(k0, k1)[None, :] > np.arange(q0, q1)[:, None], -np.inf, s); "
        "tiles += 1; m, l, acc = online_softmax_update(m, l, acc, s, V[k0:k1]); then "
        "output[q0:q1] = acc / l[:, None]",
    ],
    stars=3,
    title="challenge: causal blockwise attention that skips the fully masked tiles",
)
