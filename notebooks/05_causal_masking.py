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
# - a test by experiment that no future token leaks (the proof follows it): change the future
#   as wildly as you like, and every earlier output stays bit-for-bit the same;
# - what the mask has to do with **autoregressive** models such as GPT: generation appends one
#   token at a time, and the mask lets one forward pass train every next-token prediction at
#   once, consistently with that;
# - **batches of sentences of different lengths**: padding masks, combined with the causal
#   mask for inputs of shape $(b, h, n, d_k)$, what happens to a padded query row, and the mask
#   conventions of PyTorch, Hugging Face and JAX/Flax side by side ($b$ is the batch size in
#   this lesson).
#
# **You need**: [04 · softmax and attention](04_softmax_and_attention.ipynb).

# %%
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks
from helpers.explorer import AttentionExplorer
from helpers.plots import heatmap_alt, plot_heatmap, show_figure

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
print("tokens:", tokens, "| d_k =", d_k)
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
# boolean matrix, **True = may attend**: True on and below the diagonal, False above it. That is
# the course's convention and that of PyTorch's `F.scaled_dot_product_attention`; PyTorch's
# `nn.MultiheadAttention` means the opposite by True (the box near the end of the lesson puts
# the conventions side by side).

# %%
mask = helpers.causal_mask(n)  # (n, n) boolean, True = may attend
print("mask dtype:", mask.dtype, " shape:", mask.shape)
print(mask.astype(int))
print("query 2 ('sat') may attend to:", [tokens[j] for j in np.flatnonzero(mask[2])])

# %% [markdown]
# ### Exercise 1 ★ — `causal_mask(n)`
#
# Above, the course's helper printed the mask for $n = 6$. Build it yourself for any $n \ge 1$:
# the boolean $(n, n)$ matrix, `True` where query $i$ may attend to key $j$ ($j \le i$), of
# `dtype=bool`.
#
# *May use:* NumPy only.

# %%
def causal_mask(n):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.causal_mask.check(causal_mask)

# %% [markdown]
# Stuck? `checks.causal_mask.hint(1)` (then 2, 3), or `checks.causal_mask.solution()`. The
# rest of the lesson uses the course's `helpers.causal_mask` (in `src/helpers/attention.py`).

# %% [markdown]
# **Predict first.** Without a mask, query 2 ("sat") gives key 1 ("cat") the weight 0.087 (row 2,
# column 1 of the first printout). With the causal mask, "sat" may attend to "the", "cat" and
# itself only. Does its weight on "cat" **rise**, **fall** or **stay** at 0.087? Write your
# guess in the cell below and run it; the next cells compute the masked weights.

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.allowed_weight_with_mask.check(guess)

# %% [markdown]
# ## Mask before the softmax: put $-\infty$ in the blocked scores
#
# The softmax turns a row of scores into weights $\exp(s_j) / \sum_{j'} \exp(s_{j'})$. To give a key
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
print(f"query 2 ('sat') on key 1 ('cat'): {A_full[2, 1]:.3f} without the mask, "
      f"{A_loop[2, 1]:.3f} with it")

# %% [markdown]
# The prediction's answer: the weight rises. Blocking "on", "the" and "mat" removes their terms
# from the softmax's denominator, so the three allowed keys share the whole budget of 1
# between them, and each of their weights grows.

# %% [markdown]
# ### Exercise 2 ★★ — `masked_attention(Q, K, V, mask)`: any mask, no loops
#
# The loop above relies on the causal mask's shape: query $i$'s allowed keys are a prefix,
# `scores[i, :i + 1]`. Write attention for **any** boolean mask of shape $(n_q, n_k)$, **True =
# may attend** (a random pattern, not only a triangle), without a loop over the queries:
#
# - `weights` $(n_q, n_k)$: the softmax of $QK^\top / \sqrt{d_k}$ over each row, with blocked
#   keys at exactly 0 and each row summing to 1 (the matrix $M$ above says how);
# - `output` $(n_q, d_v)$ $=$ `weights @ V`; return `(output, weights)`.
#
# It must also work for scores in the hundreds (a stable softmax), and for float32 inputs.
#
# *May use:* NumPy, `helpers.softmax`, `helpers.causal_mask`.

# %%
def masked_attention(Q, K, V, mask):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.masked_attention.check(masked_attention)

# %% [markdown]
# Stuck? `checks.masked_attention.hint(1)` (then 2, 3), or `checks.masked_attention.solution()`.
#
# The course's `helpers.scaled_dot_product_attention(Q, K, V, mask=mask)` does the same, for any
# mask that broadcasts. On the running example it agrees with the loops:

# %%
out_causal, A_causal = helpers.scaled_dot_product_attention(Q, K, V, mask=mask)  # (n, d_k), (n,n)
print(np.round(A_causal, 3))
print("helpers (mask=mask) == loops:", np.allclose(A_causal, A_loop))
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
show_figure(fig, "Left: " + heatmap_alt(A_full, tokens, tokens, "the weights without a mask")
                 + " Right: " + heatmap_alt(A_causal, tokens, tokens, "the weights with the "
                                            "causal mask", masked=~mask))

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
# $$\frac{\exp(s_j) / \sum_{j'} \exp(s_{j'})}{\sum_{j' \le i} \exp(s_{j'}) / \sum_{j'} \exp(s_{j'})}
#   = \frac{\exp(s_j)}{\sum_{j' \le i} \exp(s_{j'})}$$

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
allowed = np.array([[True, False]])
print("-inf before the softmax:", helpers.softmax(np.where(allowed, s, -np.inf)))
with np.errstate(invalid="ignore"):
    late = helpers.softmax(s) * allowed
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
# ## Make lesson 04's NumPy cell causal
#
# Lesson 04 ran a "Build it yourself" cell: three tokens, $d_{\text{model}} =
# d_k = 4$, `np.random.seed(0)`. Here it is again as a function of the seed, unchanged (no
# mask). Row 0 spreads its weight over tokens 1 and 2, its future:

# %%
def build_it(seed=0):
    """Lesson 04's "Build it yourself" cell, unchanged, with its seed as a parameter; returns
    (A, out)."""
    np.random.seed(seed)

    def softmax(z):
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    X = np.array([[1.0, 0.0, 1.0, 0.0],
                  [0.0, 1.0, 0.0, 1.0],
                  [1.0, 1.0, 0.0, 0.0]])
    d_model, d_k = 4, 4
    Wq = np.random.randn(d_model, d_k) * 0.5
    Wk = np.random.randn(d_model, d_k) * 0.5
    Wv = np.random.randn(d_model, d_k) * 0.5
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.T / np.sqrt(d_k)  # (n x n): every token scores every token
    A = softmax(scores)  # row-wise attention weights
    out = A @ V  # weighted sum of values
    return A, out


A_cell, out_cell = build_it(0)
print("attention weights (rows sum to 1):\n", np.round(A_cell, 3))
print("\nrow sums:", np.round(A_cell.sum(axis=1), 3))
print("\nself-attention output (n x d):\n", np.round(out_cell, 3))

# %% [markdown]
# ### Exercise 3 ★ — `causal_build_it(seed)`: the same cell, causal
#
# Write `causal_build_it(seed)`: the cell above with the causal mask added, so that row 0 of the
# weights becomes $[1, 0, 0]$. Keep everything else (the seed, X, the order in which Wq, Wk, Wv
# are drawn) and return `(A, out)`. The check compares every number the cell prints (the
# weights, their row sums and the output) for seed 0 and for a fresh seed.
#
# *May use:* NumPy, `helpers.softmax`, `helpers.causal_mask`.

# %%
def causal_build_it(seed=0):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.causal_build_it.check(causal_build_it)

# %% [markdown]
# Stuck? `checks.causal_build_it.hint(1)` (then 2, 3), or `checks.causal_build_it.solution()`.

# %% [markdown]
# ## A test by experiment: no future token leaks
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
# The last row ("mat") with p = 5: where its weights go, with its own input row made wild.
Q5, K5 = X_new @ W["W_Q"][0], X_new @ W["W_K"][0]
_, A5 = helpers.scaled_dot_product_attention(Q5, K5, X_new @ W["W_V"][0], mask=mask)
print(f"p = {n - 1}: row {n - 1}'s weights, keys 0..{n - 1}:", np.round(A5[n - 1], 3))

# %% [markdown]
# For every prefix the earlier rows are identical to the last bit; without the mask, the same
# perturbation changes the earlier rows too. The later rows do change, by 122.9 to 270.0 for
# $p = 1$ to $4$, but only by 0.666 for $p = 5$: there the only later row is "mat", and its
# wild query happens to put almost all its weight on the unchanged first "the" and almost none
# on its own wild row (its weights printed last), so its output stays close to the unchanged
# values. The earlier rows' equality is exact, not approximate: a blocked score becomes $-\infty$ whatever its value, its weight is
# exactly 0, and $0 \times v = 0$ for any finite value row $v$.
#
# One picture of the same fact: perturb a single input token $j$ and mark which output rows
# $i$ change.

# %%
changed = {"no mask": np.zeros((n, n), bool), "causal mask": np.zeros((n, n), bool)}
for j in range(n):
    X_new = X.copy()
    X_new[j] = rng.normal(0.0, 100.0, size=d_model)
    for name, which_mask, before in (("no mask", None, out_unmasked), ("causal mask", mask, out)):
        changed[name][:, j] = np.any(one_head(X_new, which_mask) != before, axis=1)

fig, axes = plt.subplots(1, 2, figsize=(10.5, 4))
fig.subplots_adjust(wspace=0.3)
for ax, (name, M) in zip(axes, changed.items()):
    plot_heatmap(M.astype(float), tokens, tokens, ax=ax, cmap="cividis", vmin=0, vmax=1,
                 fmt="{:.0f}", colorbar=False, xlabel="perturbed input token j",
                 ylabel="output row i",
                 title=f"{name}: does output row i change? (1 = yes)")
show_figure(fig, f"Two {n} by {n} maps, output row i against perturbed input token j, 1 where "
                 "the row changed: " + "; ".join(f"{name}, {int(M.sum())} of {M.size} cells are 1"
                                                 for name, M in changed.items())
                 + f". With the mask the 1s are exactly the lower triangle with the diagonal: "
                 f"{np.array_equal(changed['causal mask'], mask)}.")
print("causal: row i depends on exactly the tokens j <= i:",
      np.array_equal(changed["causal mask"], mask))

# %% [markdown]
# Without a mask every output row depends on every token (all 1). With the causal mask the
# dependency pattern *is* the mask: lower triangle, diagonal included.

# %% [markdown]
# ## What the mask has to do with autoregression
#
# A model is *autoregressive* when it predicts a sequence left to right, each token from the
# ones before it: $p(x_0 \dots x_{n-1}) = \prod_i p(x_i \mid x_0 \dots x_{i-1})$. That is the
# factorisation, used to generate text one token at a time; an RNN language model is
# autoregressive with no mask at all. What the mask adds is that **training** can stay
# consistent with it while running every position at once: because output row $i$ depends only
# on tokens $0..i$, one masked forward pass over a whole sentence computes what $n$ separate
# passes over its prefixes would:
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
# change, so their keys and values can be kept (the **KV cache**) instead of recomputed: each
# step computes one query, one key and one value, and attends over the cache. The challenge at
# the end of the lesson asks you to write that step and checks it against the causal full pass.
#
# So "each token attends to itself and earlier tokens only" is what lets a GPT-style model be
# trained on every position of a sentence at once and still be used left to right, as an
# autoregressive model.

# %% [markdown]
# ## Batches: sentences of different lengths, padded
#
# A model is trained on a **batch** of $b$ sentences at once, stacked into one array of shape
# $(b, n, d_{\text{model}})$ (with $h$ heads, $Q$ becomes $(b, h, n, d_k)$). Sentences differ in
# length, so the short ones are **padded** to the longest, $n$, with rows that stand for no
# token. Here three sentences of different lengths, padded with rows of zeros:

# %%
sentences = ["the cat sat on the mat", "the cat sat on", "the mat"]
lengths = np.array([len(helpers.tokenize(text)) for text in sentences])  # (b,)
b = len(sentences)
X_batch = np.zeros((b, n, d_model))  # (b, n, d_model): padding rows stay 0
for s_idx, text in enumerate(sentences):
    X_batch[s_idx, : lengths[s_idx]] = helpers.build_Z(helpers.tokenize(text), d_model)
print("lengths:", lengths, "| X_batch shape:", X_batch.shape)
print("rows that are padding, per sentence:", [list(range(L, n)) for L in lengths])

# %% [markdown]
# The lengths are 6, 4 and 2, so the second sentence has two padding rows and the third four.
# Padding must be invisible: no real token may attend to a padding position, or its output
# would depend on how much padding its batch happened to need. So a second mask joins the
# causal one. The **padding mask** is $(b, n)$, True where position $j$ of sentence $s$ is a real
# token, $j < \text{lengths}[s]$. It is a mask over **keys**: for every query row of sentence
# $s$, the same keys are allowed. A key may be attended when both masks allow it: padding
# **and** causal.
#
# ### Exercise 4 ★ — `padding_mask(lengths, n)`
#
# Return the boolean $(b, n)$ padding mask for a batch of sentences of the given `lengths`
# (a 1-D integer array, one length per sentence, each between 0 and $n$), padded on the right to
# $n$ positions: **True = a real token that may be attended**, False = padding.
#
# *May use:* NumPy only.

# %%
def padding_mask(lengths, n):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.padding_mask.check(padding_mask)

# %% [markdown]
# Stuck? `checks.padding_mask.hint(1)` (then 2, 3), or `checks.padding_mask.solution()`.
#
# ### Exercise 5 ★★ — `batched_masked_attention(Q, K, V, lengths, causal)`
#
# Now attention for a whole padded batch: `Q`, `K` $(b, n, d_k)$, `V` $(b, n, d_v)$, the
# sentence `lengths` $(b,)$, **each length at least 1** (every sentence has a real token), and a
# flag `causal`. Return `(output, weights)` of shapes
# $(b, n, d_v)$ and $(b, n, n)$, where in sentence $s$ query $i$ may attend to key $j$ when $j$ is
# a real token ($j < \text{lengths}[s]$) and, if `causal` is True, $j \le i$.
#
# **What about the padded query rows** ($i \ge \text{lengths}[s]$)? Block padded *keys* only:
# a padded query row then still has real keys to attend to, so its weights are an ordinary,
# finite distribution over its sentence's real tokens, and its output is a harmless vector that
# everything downstream ignores (the loss skips padded positions). Do not block the padded
# queries too: a row with no key left is $0/0$ (the next section shows it).
#
# *May use:* NumPy, `helpers.softmax`, `helpers.causal_mask`, `helpers.padding_mask`.

# %%
def batched_masked_attention(Q, K, V, lengths, causal):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.batched_masked_attention.check(batched_masked_attention)

# %% [markdown]
# Stuck? `checks.batched_masked_attention.hint(1)` (then 2, 3), or
# `checks.batched_masked_attention.solution()`.
#
# ### The batch through the course's helpers, with heads
#
# `helpers.padding_mask(lengths, n)` (in `src/helpers/masks.py`) is the course's version.
# `helpers.scaled_dot_product_attention` takes any leading axes and any boolean mask that
# **broadcasts** to the scores' shape, so the batch runs with both heads at once,
# $Q$ of shape $(b, h, n, d_k)$: the padding mask indexed as $(b, 1, 1, n)$ (one row of allowed
# keys per sentence, shared by every head and query) and the causal mask $(n, n)$ combine with
# `&` into $(b, 1, n, n)$.

# %%
Q_b = np.einsum("bnm,hmk->bhnk", X_batch, W["W_Q"])  # (b, h, n, d_k)
K_b = np.einsum("bnm,hmk->bhnk", X_batch, W["W_K"])  # (b, h, n, d_k)
V_b = np.einsum("bnm,hmk->bhnk", X_batch, W["W_V"])  # (b, h, n, d_k)
keys_ok = helpers.padding_mask(lengths, n)[:, None, None, :]  # (b, 1, 1, n)
both = keys_ok & helpers.causal_mask(n)  # (b, 1, n, n): broadcasts over the h heads
out_b, A_b = helpers.scaled_dot_product_attention(Q_b, K_b, V_b, mask=both)
print("Q_b:", Q_b.shape, "| mask:", both.shape, "| weights:", A_b.shape, "| output:", out_b.shape)
for s_idx, L in enumerate(lengths):  # each sentence alone, unpadded, must give the same rows
    tok = helpers.tokenize(sentences[s_idx])
    Z_s = helpers.build_Z(tok, d_model)
    same = all(
        np.allclose(out_b[s_idx, head, :L], helpers.scaled_dot_product_attention(
            Z_s @ W["W_Q"][head], Z_s @ W["W_K"][head], Z_s @ W["W_V"][head],
            mask=helpers.causal_mask(L))[0])
        for head in range(h)
    )  # fmt: skip
    print(f"sentence {s_idx} ({L} tokens): padding gets weight 0: "
          f"{bool(np.all(A_b[s_idx, :, :, L:] == 0))}; real rows == the sentence alone: {same}")

# %%
s_idx = 2  # "the mat", padded from 2 to 6 positions
labels = helpers.tokenize(sentences[s_idx]) + ["<pad>"] * (n - lengths[s_idx])
fig, ax = plt.subplots(figsize=(5.6, 4.4))
plot_heatmap(A_b[s_idx, 0], labels, labels, ax=ax, vmin=0, vmax=1, masked=~both[s_idx, 0],
             xlabel="key", ylabel="query",
             title=f"'{sentences[s_idx]}' padded to n = {n}, head 0\n"
                   "(rows = query, columns = key; grey = blocked)")
show_figure(fig, heatmap_alt(A_b[s_idx, 0], labels, labels, f"the weights of "
                             f"'{sentences[s_idx]}' padded to n = {n}, head 0",
                             masked=~both[s_idx, 0]))
print("padded query rows 2..5 of 'the mat', head 0:")
print(np.round(A_b[s_idx, 0, 2:], 3))

# %% [markdown]
# The padding columns are grey in every row: no query, real or padded, takes anything from
# padding. The padded query rows (2 to 5) are not grey: each attends to the two real tokens,
# "the" and "mat", with the same weights, because every padding row of $X$ is the same zero
# vector, so its query is the zero vector too, every score is 0, and the two real keys share
# equally (0.5 each, printed above). Their outputs are well-defined and then ignored.
#
# A row with **no** key left is another matter: block the padded query rows too (query mask and
# key mask together) and those rows hold only $-\infty$. The softmax is then
# $e^{-\infty} / \sum e^{-\infty} = 0/0$, which NumPy computes as NaN; the course's helper refuses
# such a mask instead:

# %%
row = np.full(4, -np.inf)  # a query row whose keys are all blocked
with np.errstate(invalid="ignore"):  # the NaN is the point
    print("softmax of an all -inf row:", np.exp(row - row.max()) / np.exp(row - row.max()).sum())
queries_ok = helpers.padding_mask(lengths, n)[:, None, :, None]  # (b, 1, n, 1)
try:
    helpers.scaled_dot_product_attention(Q_b, K_b, V_b, mask=both & queries_ok)
except ValueError as error:
    print("helpers refuses it:", error)

# %% [markdown]
# ### Mask conventions side by side
#
# The same idea has several spellings. In the course, in PyTorch's functional API and in
# JAX/Flax, a boolean True means *may attend*; in PyTorch's `nn.MultiheadAttention` (and the
# `nn.Transformer*` modules built on it) a boolean True means *not allowed*. Hugging Face
# models take an integer `attention_mask` of 1s and 0s over the keys, one row per sentence:
# it is what their tokenizers return for a padded batch, and lesson 09's model is a Hugging
# Face BERT. A float mask is **added** to the scores.
#
# | mask | True (or 1, or 0.0) means | False (or 0, or $-\infty$) means |
# |---|---|---|
# | this course: `helpers.scaled_dot_product_attention(mask=...)` | may attend | blocked |
# | PyTorch `F.scaled_dot_product_attention`, boolean `attn_mask` | takes part in attention | blocked |
# | PyTorch `nn.MultiheadAttention`, boolean `attn_mask` | **not allowed** to attend | allowed |
# | PyTorch `nn.MultiheadAttention`, boolean `key_padding_mask` $(b, n)$ | **padding, ignored** | real token |
# | Hugging Face `attention_mask` $(b, n)$, integers | 1: a token to attend to | 0: padding |
# | JAX/Flax `flax.linen.dot_product_attention(mask=...)` | may attend | masked out |
# | a float (additive) mask $M$, in PyTorch's APIs | 0.0: the score is kept | $-\infty$ (or $-10^9$): blocked |
#
# **The shapes differ too.** `F.scaled_dot_product_attention` and Flax take any mask that
# broadcasts to the scores' shape (Flax's `make_attention_mask` and `make_causal_mask` even
# return the course's $(b, 1, n_q, n_k)$ layout), so the course's mask `both` goes to them as it
# is. `nn.MultiheadAttention` takes its `attn_mask` only as $(n_q, n_k)$, shared by the whole
# batch, or as $(b \cdot h, n_q, n_k)$, one matrix per sentence and head; a 4-D mask is
# refused. So a course mask goes there inverted and flattened, with sentence $s$'s heads in rows
# $s h$ to $s h + h - 1$; or in its two parts, the causal mask as `attn_mask` $(n, n)$ and the
# padding as `key_padding_mask` $(b, n)$, both inverted. Hugging Face's `attention_mask` is
# the padding part only, as 1s and 0s:

# %%
mha_attn_mask = np.broadcast_to(~both, (b, h, n, n)).reshape(b * h, n, n)  # True = blocked
mha_causal = ~helpers.causal_mask(n)  # (n, n): True = a future key, blocked
mha_padding = ~helpers.padding_mask(lengths, n)  # (b, n): True = padding, ignored
hf_attention_mask = helpers.padding_mask(lengths, n).astype(np.int64)  # (b, n): 1 = attend
print("course, F.scaled_dot_product_attention, Flax: mask", both.shape, "True = may attend")
print("nn.MultiheadAttention: attn_mask", mha_attn_mask.shape, "True = blocked; row s*h + a is "
      "sentence s, head a:", all(np.array_equal(mha_attn_mask[s_idx * h + a], ~both[s_idx, 0])
                                 for s_idx in range(b) for a in range(h)))
print("  or attn_mask", mha_causal.shape, "and key_padding_mask", mha_padding.shape,
      "| together they block the same keys:",
      np.array_equal(mha_causal[None] | mha_padding[:, None, :], ~both[:, 0]))
print("Hugging Face attention_mask", hf_attention_mask.shape, "(1 = attend):")
print(hf_attention_mask)

# %% [markdown]
# **A row with no allowed key** (the padded query rows, if the query mask is applied too): NumPy
# gives NaN, as above, and the course's helper refuses the mask. PyTorch answers differently
# from one function to the next. Recent versions' `F.scaled_dot_product_attention` return a
# row of zeros there (a change made in 2024, pytorch/pytorch pull request 133882; earlier
# versions returned NaN); `nn.MultiheadAttention` returns NaN when it also returns the weights
# (`need_weights=True`, its default) and zeros when it does not (it then calls
# `F.scaled_dot_product_attention`). Neither is a meaningful output, which is why the course
# blocks padded keys only. PyTorch is not needed for the course: the cell below runs these
# comparisons only where it is installed, and says so where it is not.

# %% tags=["nbval-ignore-output"]
try:
    import torch
except ImportError:  # the course does not need PyTorch
    torch = None
if torch is None:
    print("PyTorch is not installed here: nothing to compare (the course does not need it).")
else:
    import torch.nn.functional as F

    print("PyTorch", torch.__version__)
    tQ, tK, tV = (torch.from_numpy(M) for M in (Q_b, K_b, V_b))  # (b, h, n, d_k) each
    sdpa = F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=torch.from_numpy(both))
    print("F.scaled_dot_product_attention, the course's mask as it is == helpers:",
          np.allclose(sdpa.numpy(), out_b))
    mha = torch.nn.MultiheadAttention(h * d_k, h, bias=False, batch_first=True,
                                      dtype=torch.float64)
    with torch.no_grad():  # identity projections: its h heads are the course's h heads
        mha.in_proj_weight.copy_(torch.eye(h * d_k).repeat(3, 1))
        mha.out_proj.weight.copy_(torch.eye(h * d_k))
    x_q, x_k, x_v = (torch.from_numpy(helpers.combine_heads(M)) for M in (Q_b, K_b, V_b))
    for label, masks in (
        ("attn_mask (b*h, n, n)", dict(attn_mask=torch.from_numpy(mha_attn_mask))),
        ("attn_mask (n, n) + key_padding_mask (b, n)",
         dict(attn_mask=torch.from_numpy(mha_causal),
              key_padding_mask=torch.from_numpy(mha_padding))),
    ):
        _, w = mha(x_q, x_k, x_v, average_attn_weights=False, **masks)  # (b, h, n, n)
        print(f"nn.MultiheadAttention, {label}: weights == helpers':",
              np.allclose(w.detach().numpy(), A_b))
    try:
        mha(x_q, x_k, x_v, attn_mask=torch.from_numpy(~both))
    except Exception as error:  # a 4-D mask
        print("nn.MultiheadAttention, the course's (b, 1, n, n) mask:", type(error).__name__)
    no_key = both & queries_ok  # (b, 1, n, n): sentence 2's padded query rows keep no key
    print("row with no allowed key (sentence 2, query 5):")
    print("  F.scaled_dot_product_attention output:",
          F.scaled_dot_product_attention(tQ, tK, tV, attn_mask=torch.from_numpy(no_key))[2, 0, 5])
    flat = torch.from_numpy(np.broadcast_to(~no_key, (b, h, n, n)).reshape(b * h, n, n))
    out_w, w = mha(x_q, x_k, x_v, attn_mask=flat, average_attn_weights=False)
    print("  nn.MultiheadAttention, need_weights=True: weights", w[2, 0, 5].detach(),
          "output", out_w[2, 5].detach())
    print("  nn.MultiheadAttention, need_weights=False: output",
          mha(x_q, x_k, x_v, attn_mask=flat, need_weights=False)[0][2, 5].detach())

# %% [markdown]
# **$-\infty$ or $-10^9$?** Both are used as the fill for blocked scores. The cell below tries
# each on a row with *no* allowed key and on a row that keeps two, then looks at what half
# precision (**float16**) can hold:

# %%
row_scores = np.array([0.5, -1.0, 2.0, 0.0])  # one query row, 4 keys
none_allowed = np.zeros(4, dtype=bool)  # a fully masked row
for fill in (-np.inf, -1e9):
    z = np.where(none_allowed, row_scores, fill)
    with np.errstate(invalid="ignore"):
        w = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    print(f"fully masked row, fill {fill:g}: weights {np.round(w, 3)}")
one_allowed = np.array([True, False, True, False])
for fill in (-np.inf, -1e9):
    z = np.where(one_allowed, row_scores, fill)
    w = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    print(f"keys 0 and 2 allowed, fill {fill:g}: weights {np.round(w, 3)}")
f16_max = np.finfo(np.float16).max  # the largest float16
print(f"float16: largest {int(f16_max)} = e^{np.log(f16_max):.2f}")
with np.errstate(over="ignore"):  # printed as Python floats: NumPy's float16 repr varies by version
    print(f"float16: -1e9 becomes {float(np.float16(-1e9))} | exp(11.0) = "
          f"{float(np.exp(np.float16(11.0))):.0f} | exp(11.2) = {float(np.exp(np.float16(11.2)))}")

# %% [markdown]
# When the row keeps a real key, both fills give the blocked keys weight exactly 0:
# $e^{-10^9}$ underflows to 0. They differ on a row with no allowed key: $-\infty$ gives NaN
# (as above); $-10^9$ gives every key the same score, so the row becomes a uniform average over
# all keys (0.25 each here), padding included: finite and silently wrong. In float16, $-10^9$
# does not exist: it rounds to $-\infty$. And the largest float16 is 65504 $\approx e^{11.09}$,
# so $e^x$ overflows for $x$ above 11.09 (`exp(11.2)` is already `inf`). That is why
# half-precision code uses the dtype's own minimum (or $-\infty$) as the fill, and subtracts the
# row max before `exp`.

# %% [markdown]
# ## Explore it: the causal toggle
#
# The attention explorer from lesson 04, with the causal mask on. Click a token to see its
# weights; toggle **causal** off and on and watch the upper-right triangle go grey; switch
# heads (head 1 is new here: the lesson has followed head 0). Try the last token, "mat", too:
# which of its weights does the toggle change? (Seeded, not trained: illustrative.)

# %%
ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=h, causal=True, seed=0, query=2)
ex.show()

# %% [markdown]
# Head 0 of the explorer is the head we have followed all lesson:

# %%
print("explorer head 0, causal == A_causal:", np.allclose(ex.weights, A_causal))
print("query 'sat' (2), causal: ", ", ".join(f"{t} {w:.3f}" for t, w in zip(tokens, ex.weights[2])))
print("query 'sat' (2), no mask:", ", ".join(f"{t} {w:.3f}" for t, w in zip(tokens, A_full[2])))
print("row 'mat' (5) the same with and without the mask:", np.allclose(A_causal[5], A_full[5]))

# %% [markdown]
# Notice: with causal on, "sat" (row 2) shares its weight among "the", "cat" and itself only
# (0.190, 0.321, 0.489) and every cell right of the diagonal is grey; toggle causal off and half
# of its weight (0.502) jumps to the future "mat", while the last row, "mat", does not change.

# %% [markdown]
# ## Challenge ★★★ — `decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V)`: a KV cache
#
# Optional. Generation appends one token at a time. Write one step of it for one head: given
# the new token's input row `x_t` $(d_{\text{model}},)$, the cache of the keys and values of
# every earlier token, `K_cache` $(t, d_k)$ and `V_cache` $(t, d_v)$ (with $t = 0$ at the start:
# shapes $(0, d_k)$ and $(0, d_v)$), and the weights, return `(out_t, K_cache, V_cache)`: the
# new token's output $(d_v,)$ and the caches with its key and value appended, $(t + 1, \cdot)$.
# Feeding each step's caches into the next must reproduce, row by row, the **causal** full
# pass, without recomputing any earlier key or value. Which mask does the step need?
#
# *May use:* NumPy, `helpers.softmax`, `helpers.scaled_dot_product_attention`, `helpers.causal_mask`.

# %%
def decode_step(x_t, K_cache, V_cache, W_Q, W_K, W_V):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.decode_step.check(decode_step)

# %% [markdown]
# Stuck? `checks.decode_step.hint(1)` (then 2, 3); `checks.decode_step.solution()` prints the
# whole code of one answer, so try the hints first. A real model runs this step once per
# generated token, for every head and layer: the cache is why generating token $t$ costs one
# row of attention, $O(t)$, instead of a whole new $t \times t$ pass.

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
# - An autoregressive model predicts each token from the ones before it (an RNN language model
#   is one, with no mask). The mask is what lets a GPT-style model train that way on all $n$
#   next-token predictions of a sentence in one parallel pass; generation appends one token at
#   a time, reusing the cached keys and values of the tokens before it.
# - A batch pads its sentences to one length $n$; a padding mask over the **keys**, combined
#   with the causal mask by `&`, keeps padding out of every real token's output. Padded query
#   rows attend to real keys and are ignored; a row with no key at all is $0/0$ = NaN in NumPy.
#   Boolean True means *may attend* here, in `F.scaled_dot_product_attention` and in Flax, *not
#   allowed* in `nn.MultiheadAttention` (which takes a mask only as $(n, n)$ or
#   $(b \cdot h, n, n)$); Hugging Face's `attention_mask` is 1 on the tokens to attend to.
#
# **Next**: [06 · cross-attention and heads](06_cross_attention_and_heads.ipynb): queries from
# one sequence and keys/values from another, and $h$ heads side by side.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
