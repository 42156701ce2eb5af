# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · Causal masking
#
# **What you will learn**
# - how a **causal mask** stops each token from attending to later tokens: $-\infty$ in the
#   blocked scores *before* the softmax, and why multiplying scores by 0 is not a mask;
# - a proof by experiment that no future token leaks: change the future as wildly as you like,
#   and every earlier output stays bit-for-bit the same;
# - why this is what makes GPT-style models **autoregressive**: one forward pass trains every
#   next-token prediction at once, and generation appends one token at a time.
#
# **You need**: [04 · softmax and attention](04_softmax_and_attention.ipynb).

# %%
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks
from helpers.explorer import AttentionExplorer
from helpers.plots import plot_heatmap

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## The running example, one head
#
# The same sentence, $X = Z$, and the same seeded weights as lessons 02 to 04; we follow
# **head 0** ($d_k = 4$). Without a mask every token attends to every token, including the
# ones that come *after* it:

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model, h = len(tokens), helpers.D_MODEL, helpers.N_HEADS
X = helpers.build_Z(tokens, d_model)  # (n, d_model)
W = helpers.seeded_projections(d_model, n_heads=h, seed=0)
Q, K, V = X @ W["W_Q"][0], X @ W["W_K"][0], X @ W["W_V"][0]  # head 0: (n, d_k) each
d_k = Q.shape[1]
scores = Q @ K.T / np.sqrt(d_k)  # (n, n): rows = queries, columns = keys
out_full, A_full = helpers.scaled_dot_product_attention(Q, K, V)  # no mask
print("tokens:", tokens)
print("weights without a mask (rows = query, columns = key):")
print(np.round(A_full, 3))
print(f"weight of query 0 ('the') on later tokens: {A_full[0, 1:].sum():.3f}")

# %% [markdown]
# Row 0 is the first "the": 91% of its weight goes to "cat", "sat", "on", ..., tokens that a
# language model reading left to right has not seen yet.

# %% [markdown]
# ## Why a model must not see the future
#
# A language model like GPT is trained to predict the **next** token: from "the" predict "cat",
# from "the cat" predict "sat", and so on. If position $i$ could attend to position $i+1$, the
# answer would be sitting in its input and the model would learn to copy it instead of to
# predict. At generation time there is no future to look at anyway.
#
# The rule: **query $i$ may attend to keys $j \le i$**, itself and earlier tokens only. As a
# boolean matrix, **True = may attend** (the course's convention, and PyTorch's for a boolean
# `attn_mask`): True on and below the diagonal, False above it.

# %%
mask = helpers.causal_mask(n)  # (n, n) boolean, True = may attend
print("mask dtype:", mask.dtype, " shape:", mask.shape)
print(mask.astype(int))
print("query 2 ('sat') may attend to:", [tokens[j] for j in np.flatnonzero(mask[2])])

# %% [markdown]
# ### Exercise: `causal_mask(n)`
#
# Return the boolean $(n, n)$ causal mask: `True` where query $i$ may attend to key $j$, that is
# where $j \le i$. It must be boolean (`dtype=bool`), and work for any $n \ge 1$.

# %%
def causal_mask(n):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.causal_mask.check(causal_mask)

# %% [markdown]
# Stuck? `checks.causal_mask.hint(1)` (then 2, 3), or `checks.causal_mask.solution()`. The
# rest of the lesson uses the course's `helpers.causal_mask` (in `src/helpers/attention.py`).

# %% [markdown]
# ## Mask before the softmax: put $-\infty$ in the blocked scores
#
# The softmax turns a row of scores into weights $\exp(s_j) / \sum_k \exp(s_k)$. To give a key
# weight **exactly 0**, give it the score $-\infty$: $\exp(-\infty) = 0$, so it adds nothing to
# the numerator or the denominator, and the allowed keys share the whole budget of 1.
#
# $$A = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right), \qquad
#   M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}$$
#
# Loops first: for each query, a softmax over its allowed keys only.

# %%
A_loop = np.zeros((n, n))
for i in range(n):
    allowed = scores[i, : i + 1]  # keys 0..i
    e = np.exp(allowed - allowed.max())
    A_loop[i, : i + 1] = e / e.sum()  # keys i+1.. keep weight 0
print(np.round(A_loop, 3))

# %% [markdown]
# The matrix form: `np.where(mask, scores, -np.inf)`, then the usual row-wise softmax. It
# agrees with the loops, and with the course's `helpers.scaled_dot_product_attention(...,
# mask=mask)`:

# %%
masked_scores = np.where(mask, scores, -np.inf)  # (n, n): -inf above the diagonal
print(np.round(masked_scores, 3))
A_causal = helpers.softmax(masked_scores, axis=-1)  # (n, n)
out_causal, A_helper = helpers.scaled_dot_product_attention(Q, K, V, mask=mask)
print("matrix form == loops:", np.allclose(A_causal, A_loop))
print("== helpers.scaled_dot_product_attention(mask=mask):", np.allclose(A_causal, A_helper))
print("every blocked weight is exactly 0:", bool(np.all(A_causal[~mask] == 0.0)))
print("rows sum to 1:", np.round(A_causal.sum(axis=1), 3))

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
fig.subplots_adjust(wspace=0.3)  # fixed margins: one draw, no layout engine
plot_heatmap(A_full, tokens, tokens, ax=axes[0], vmin=0, vmax=1,
             title="No mask\n(rows = query, columns = key)", xlabel="key", ylabel="query")
plot_heatmap(A_causal, tokens, tokens, ax=axes[1], vmin=0, vmax=1, masked=~mask,
             title="Causal mask: grey = blocked\n(rows = query, columns = key)",
             xlabel="key", ylabel="query")
plt.show()

# %% [markdown]
# With the mask the upper-right triangle goes grey: each token attends to itself and earlier
# tokens only. Row 0 ("the") has nothing before it, so all its weight (1.00) is on itself;
# each row still sums to 1, so the weight a row used to give the future now goes to the past.

# %% [markdown]
# ## Masking after the softmax, then renormalising: the same weights
#
# Another way to get there: take the ordinary softmax, zero the blocked weights, and divide
# each row by what is left. It gives the same weights, because the full row's denominator
# cancels:
#
# $$\frac{\exp(s_j) / \sum_{k} \exp(s_k)}{\sum_{m \le i} \exp(s_m) / \sum_{k} \exp(s_k)}
#   = \frac{\exp(s_j)}{\sum_{m \le i} \exp(s_m)}$$

# %%
A_late = A_full * mask  # zero the blocked weights of the ordinary softmax
print("row sums after zeroing, before renormalising:", np.round(A_late.sum(axis=1), 3))
A_late = A_late / A_late.sum(axis=1, keepdims=True)  # renormalise each row to 1
print("after the softmax + renormalise == before the softmax:", np.allclose(A_late, A_causal))

# %% [markdown]
# Same weights, but $-\infty$ before the softmax is the robust way. Zeroing without
# renormalising leaves rows that sum to less than 1 (printed above). And with extreme scores,
# the late version can fail: if a *blocked* key scores far above every allowed one, the
# ordinary softmax rounds the allowed weights down to 0 and the renormalisation is 0/0. A
# two-key row shows it:

# %%
s = np.array([[0.0, 1000.0]])  # key 1 is blocked but scores much higher
m = np.array([[True, False]])
print("-inf before the softmax:", helpers.softmax(np.where(m, s, -np.inf)))
with np.errstate(invalid="ignore"):
    late = helpers.softmax(s) * m
    print("mask after, renormalise:", late / late.sum(axis=1, keepdims=True))

# %% [markdown]
# ## Multiplying the scores by 0 is not masking
#
# A tempting shortcut: multiply the scores by the mask (True = 1, False = 0). But a score of
# 0 does not mean "ignore this key": $\exp(0) = 1$, so a zeroed score still takes a share of
# the softmax, as large as a real key that happens to score 0.

# %%
A_times_zero = helpers.softmax(scores * mask, axis=-1)  # the blocked scores become 0, not -inf
print("same as the causal weights:", np.allclose(A_times_zero, A_causal))
print("row 0 ('the') with scores * mask:", np.round(A_times_zero[0], 3))
print("weight each query still puts on future keys:", np.round((A_times_zero * ~mask).sum(1), 3))

# %% [markdown]
# Row 0 still spreads its weight over "cat", "sat", "on", "the", "mat": the future leaks in.
# Only $-\infty$ (or, in practice, a very large negative number such as $-10^9$) makes
# $\exp$ vanish.

# %% [markdown]
# ### Exercise: `masked_attention(Q, K, V, mask)`
#
# Return `(output, weights)` for scaled dot-product attention with a boolean `mask` of shape
# $(n_q, n_k)$, **True = may attend** (any mask, not only the causal one):
#
# - `weights` $(n_q, n_k)$: the softmax of $QK^\top / \sqrt{d_k}$ over each row, with blocked
#   keys at exactly 0 and each row summing to 1;
# - `output` $(n_q, d_v)$ $=$ `weights @ V`.
#
# It must also work for scores in the hundreds (a stable softmax), and for float32 inputs.

# %%
def masked_attention(Q, K, V, mask):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.masked_attention.check(masked_attention)

# %% [markdown]
# Stuck? `checks.masked_attention.hint(1)` (then 2, 3), or `checks.masked_attention.solution()`.

# %% [markdown]
# ## Proof by experiment: no future token leaks
#
# The claim: with the causal mask, output row $i$ depends on input rows $0..i$ only. Test it
# the hard way. For each prefix length $p$, replace every row of $X$ from position $p$ on with
# large random numbers (other tokens, any tokens, nonsense), run the whole layer again, and
# compare the first $p$ output rows **bit for bit** (`np.array_equal`, not `allclose`).


# %%
def one_head(X, mask=None):
    """Head 0 of the running example's attention on any X of shape (n, d_model)."""
    Q, K, V = X @ W["W_Q"][0], X @ W["W_K"][0], X @ W["W_V"][0]  # (n, d_k) each
    return helpers.scaled_dot_product_attention(Q, K, V, mask=mask)[0]  # (n, d_k)


rng = np.random.default_rng(0)
out, out_unmasked = one_head(X, mask), one_head(X)  # (n, d_k) each
print(" p  earlier rows kept       identical?  later rows: max change   no mask: identical?")
for p in range(1, n):
    X_new = X.copy()
    X_new[p:] = rng.normal(0.0, 100.0, size=(n - p, d_model))  # a wild, different future
    out_new = one_head(X_new, mask)
    same = np.array_equal(out_new[:p], out[:p])
    change = np.abs(out_new[p:] - out[p:]).max()
    unmasked_same = np.array_equal(one_head(X_new)[:p], out_unmasked[:p])
    print(f"{p:2d}  {' '.join(tokens[:p]):<22}  {str(same):<10}  {change:22.3f}   {unmasked_same}")

# %% [markdown]
# For every prefix the earlier rows are identical to the last bit, while the later rows change
# a lot; without the mask, the same perturbation changes the earlier rows too. The reason is
# exact, not approximate: a blocked score becomes $-\infty$ whatever its value, its weight is
# exactly 0, and $0 \times v = 0$ for any finite value row $v$.
#
# One picture of the same fact: perturb a single input token $j$ and mark which output rows
# $i$ change.

# %%
changed = {"no mask": np.zeros((n, n), bool), "causal mask": np.zeros((n, n), bool)}
for j in range(n):
    X_new = X.copy()
    X_new[j] = rng.normal(0.0, 100.0, size=d_model)
    for name, m, before in (("no mask", None, out_unmasked), ("causal mask", mask, out)):
        changed[name][:, j] = np.any(one_head(X_new, m) != before, axis=1)

fig, axes = plt.subplots(1, 2, figsize=(10.5, 4))
fig.subplots_adjust(wspace=0.3)
for ax, (name, M) in zip(axes, changed.items()):
    plot_heatmap(M.astype(float), tokens, tokens, ax=ax, cmap="cividis", vmin=0, vmax=1,
                 fmt="{:.0f}", colorbar=False, xlabel="perturbed input token j",
                 ylabel="output row i",
                 title=f"{name}: does output row i change? (1 = yes)")
plt.show()
print("causal: row i depends on exactly the tokens j <= i:",
      np.array_equal(changed["causal mask"], mask))

# %% [markdown]
# Without a mask every output row depends on every token (all 1). With the causal mask the
# dependency pattern *is* the mask: lower triangle, diagonal included.

# %% [markdown]
# ## Why this makes GPT autoregressive
#
# Because output row $i$ depends only on tokens $0..i$, one masked forward pass over a whole
# sentence computes what $n$ separate passes over its prefixes would, at once:
#
# | position $i$ | the model sees | it is trained to predict |
# |---|---|---|
# | 0 | the | cat |
# | 1 | the cat | sat |
# | 2 | the cat sat | on |
# | 3 | the cat sat on | the |
# | 4 | the cat sat on the | mat |
#
# Check it: run the layer on each prefix alone (its own, shorter $Z$) and compare its last row
# with row $i$ of the one full pass.

# %%
print(" i  prefix                  full pass row i == prefix run's last row   (no mask)")
for i in range(n):
    prefix_out = one_head(helpers.build_Z(tokens[: i + 1], d_model), helpers.causal_mask(i + 1))
    same = np.allclose(out[i], prefix_out[-1])
    unmasked_same = np.allclose(out_unmasked[i], prefix_out[-1])
    print(f"{i:2d}  {' '.join(tokens[: i + 1]):<23} {str(same):<42} {unmasked_same}")

# %% [markdown]
# With the mask, the one pass gives every prefix's answer: training on one sentence gives a
# next-token prediction at every position (the table's five, plus one for whatever follows
# "mat"), all computed in parallel. Without the mask (last column) only the final row matches:
# the other rows peeked at tokens they are meant to predict.
#
# **Generation** runs the same rule forwards: the model appends one token, computes the new
# token's query, key and value, and lets it attend to every key so far. The earlier rows never
# change, so their keys and values can be kept (the **KV cache**) instead of recomputed. Here
# is that loop, one token at a time, with no mask at all; it rebuilds the causal output:

# %%
K_cache = np.zeros((0, d_k))
V_cache = np.zeros((0, d_k))
rows = []
for t in range(n):
    x_t = X[t : t + 1]  # (1, d_model): the newly appended token
    q_t = x_t @ W["W_Q"][0]  # (1, d_k)
    K_cache = np.vstack([K_cache, x_t @ W["W_K"][0]])  # (t + 1, d_k)
    V_cache = np.vstack([V_cache, x_t @ W["W_V"][0]])  # (t + 1, d_k)
    out_t, _ = helpers.scaled_dot_product_attention(q_t, K_cache, V_cache)  # (1, d_k)
    rows.append(out_t[0])
    print(f"step {t}: appended {tokens[t]!r:6}, cache holds {len(K_cache)} keys")
print("token-by-token == one causal pass:", np.allclose(np.array(rows), out))

# %% [markdown]
# That is what the lesson text means by "each token attends to itself + earlier only: that's
# what makes GPT autoregressive". (A real model would pick the appended token from its
# prediction; here we append the sentence's next word, which is what training does.)

# %% [markdown]
# ## Explore it: the causal toggle
#
# The attention explorer from lesson 04, with the causal mask on. Click a token to see its
# weights; toggle **causal** off and on and watch the upper-right triangle go grey; switch
# heads. (Seeded, not trained: illustrative.)

# %%
ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=h, causal=True, seed=0, query=2)
ex.show()

# %% [markdown]
# Notice: with causal on, "sat" (row 2) shares its weight among "the", "cat" and itself only
# (0.19, 0.32, 0.49) and every cell right of the diagonal is grey; toggle causal off and half
# of its weight (0.50) jumps to the future "mat", while the last row, "mat", does not change.

# %% [markdown]
# Head 0 of the explorer is the head we have followed all lesson:

# %%
print("explorer head 0, causal == A_causal:", np.allclose(ex.weights, A_causal))
print("query 'sat' (2):", ", ".join(f"{t} {w:.3f}" for t, w in zip(tokens, ex.weights[2])))

# %% [markdown]
# ## Summary
#
# - A causal mask is True on and below the diagonal (query $i$ may attend to keys $j \le i$).
#   It is applied by setting the blocked scores to $-\infty$ **before** the softmax, so their
#   weights are exactly 0 and each row still sums to 1. Masking after the softmax and
#   renormalising gives the same weights (but can fail on extreme scores); multiplying scores
#   by 0 does not mask at all, because $\exp(0) = 1$.
# - Perturbing the future, however wildly, leaves every earlier output row bit-for-bit
#   unchanged: with the mask, output row $i$ depends exactly on tokens $0..i$.
# - That is what makes GPT-style models autoregressive: one masked pass over a sentence trains
#   all $n$ next-token predictions in parallel, and generation appends one token at a time,
#   reusing the cached keys and values of the tokens before it.
#
# **Next**: [06 · cross-attention and heads](06_cross_attention_and_heads.ipynb): queries from
# one sequence and keys/values from another, and $h$ heads side by side.
