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
# # 04 · Softmax and attention
#
# **What you will learn**
# - a numerically stable softmax: why the textbook $e^{z} / \sum e^{z}$ returns `nan` on
#   scores like 1000, and why subtracting each row's maximum fixes it without changing the
#   answer;
# - why the weights come from a softmax: every row is a probability distribution, so each query
#   spends exactly 100% of its attention budget across the keys;
# - the output $AV$ as a convex combination of the value rows, written with loops, then as one
#   matrix product; and the whole of self-attention in a dozen lines of NumPy, for one sentence
#   or a whole batch.
#
# **You need**: [03 · scores and scaling](03_scores_and_scaling.ipynb).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks
from helpers.explorer import AttentionExplorer
from helpers.plots import heatmap_alt, plot_heatmap, show_figure

# %% [markdown]
# ## The running example, one head
#
# The same sentence, $X = Z$, and the same seeded weights as lessons 02 and 03; we follow
# **head 0**, with $d_k = 4$. Lesson 03 ended with the scaled scores
# $QK^\top / \sqrt{d_k}$: one row per query, one column per key.

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model, h = len(tokens), helpers.D_MODEL, helpers.N_HEADS
X = helpers.build_Z(tokens, d_model)  # (n, d_model)
W = helpers.seeded_projections(d_model, n_heads=h, seed=0)
Q = X @ W["W_Q"][0]  # (n, d_k): head 0's queries
K = X @ W["W_K"][0]  # (n, d_k): head 0's keys
V = X @ W["W_V"][0]  # (n, d_k): head 0's values
d_k = Q.shape[1]
scores = Q @ K.T / np.sqrt(d_k)  # (n, n): rows = queries, columns = keys
cat = tokens.index("cat")
print("scores shape:", scores.shape, "| d_k =", d_k)
print(np.round(scores, 3))

# %% [markdown]
# Scores are any real numbers: positive, negative, unbounded. To mix the values we need
# **weights**: non-negative, and summing to 1 along each row. That is the softmax's job:
#
# $$\text{softmax}(z)_j = \frac{e^{z_j}}{\sum_{j'} e^{z_{j'}}}$$
#
# ($j'$ runs over every key of the row, $j$ included.)

# %% [markdown]
# ## The textbook softmax breaks on large scores
#
# Written exactly as the formula, for one row of scores, it works on small scores:

# %%
def naive_softmax(z):  # z: ONE row of scores, shape (n_k,)
    e = np.exp(z)
    return e / e.sum()


z_small = np.array([1.0, 2.0, 3.0])
print("naive_softmax([1, 2, 3]) =", np.round(naive_softmax(z_small), 3))

# %% [markdown]
# Now scores of about 1000: more than lesson 03's unscaled scores (±23 at $d_k = 512$), but
# the point is the arithmetic, which fails far sooner in lower precision (float16 overflows at
# $e^{11.09}$, lesson 05). A float64 has a largest value (the first line below prints it, and its
# natural logarithm); $e^{1000}$ is far beyond it: `np.exp(1000)` overflows to `inf`, and
# `inf / inf` is `nan`.

# %%
z_big = np.array([1000.0, 1001.0, 1002.0])
z_neg = np.array([-1002.0, -1001.0, -1000.0])
big = np.finfo(np.float64).max  # the largest float64
print(f"largest float64: {big:.3g} = e^{np.log(big):.2f}")
with np.errstate(over="ignore", invalid="ignore"):  # silence the warnings: the nan is the point
    print("np.exp([1000, 1001, 1002])           =", np.exp(z_big))
    print("naive_softmax([1000, 1001, 1002])    =", naive_softmax(z_big))
    print("np.exp([-1002, -1001, -1000])        =", np.exp(z_neg))
    print("naive_softmax([-1002, -1001, -1000]) =", naive_softmax(z_neg))

# %% [markdown]
# The largest float64 is about $1.8 \times 10^{308} \approx e^{709.78}$, so $e^{710}$ is already too
# big. Very negative scores fail too: $e^{-1000}$ underflows to 0, and $0 / 0$ is also `nan`.
#
# ### The fix: softmax is shift-invariant
#
# Subtracting the same number $c$ from every score of a row does not change the softmax,
# because the factor $e^{-c}$ cancels between numerator and denominator:
#
# $$\frac{e^{z_j - c}}{\sum_{j'} e^{z_{j'} - c}}
#   = \frac{e^{-c}\, e^{z_j}}{e^{-c} \sum_{j'} e^{z_{j'}}}
#   = \frac{e^{z_j}}{\sum_{j'} e^{z_{j'}}}$$
#
# Check it on the small scores, with a few shifts:

# %%
for c in (-5.0, 2.0, 3.0, 100.0):
    same = np.allclose(naive_softmax(z_small - c), naive_softmax(z_small))
    print(f"shift by c = {c:6.1f}: same weights? {same}")

# %% [markdown]
# So choose $c = \max_{j'} z_{j'}$. Then the largest entry becomes $e^0 = 1$ and all others are
# $e^{\text{negative}} \le 1$: nothing can overflow, and the sum is at least 1, so there is no
# division by zero either. Here is the fix in plain Python, one number at a time, on **one
# row** of scores. The scores around 1000 now give the same weights as $[1, 2, 3]$ (they are
# $[1, 2, 3]$ shifted by 999):

# %%
def stable_softmax_row(z):  # z: ONE row of scores, any sequence of numbers
    top = max(z)
    e = [math.exp(z_j - top) for z_j in z]  # the max becomes e^0 = 1, every other entry < 1
    total = sum(e)  # at least 1: no division by zero
    return [e_j / total for e_j in e]


print("stable_softmax_row([1000, 1001, 1002])    =", np.round(stable_softmax_row(z_big), 3))
print("stable_softmax_row([1, 2, 3])             =", np.round(stable_softmax_row(z_small), 3))
print("stable_softmax_row([-1002, -1001, -1000]) =", np.round(stable_softmax_row(z_neg), 3))

# %% [markdown]
# ### Exercise 1 ★ — `softmax(z)`: every row, for a matrix or a whole batch
#
# The function above takes one row and walks through it number by number. Attention has one
# row of scores **per query**, a matrix of shape $(n_q, n_k)$, and a model scores a batch of
# $b$ sentences with $h$ heads at once, $(b, h, n_q, n_k)$. Write a numerically stable
# `softmax(z)` for a NumPy array of **any shape** $(\dots, n_k)$: a distribution along the
# **last axis** (the keys) in every row, returned with $z$'s shape, every row summing to 1. A
# 1-D `z` is a single row. Each row needs its own shift: one row may sit near $+1000$ and the
# next near $-1000$, and a single row may spread from $-1000$ to $+1000$. Loops, NumPy
# reductions along an axis or `np.einsum` are all fine.
#
# *May use:* NumPy only.

# %%
def softmax(z):
    ### BEGIN SOLUTION
    z = z - z.max(axis=-1, keepdims=True)  # (..., n_k): shift each row, nothing overflows
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)  # keepdims: divide each row by its own sum
    ### END SOLUTION


checks.softmax.check(softmax)

# %% [markdown]
# Stuck? `checks.softmax.hint(1)` (then 2, 3), or `checks.softmax.solution()`. The check
# tries your function on fresh scores, never the ones above.
#
# From here on the lesson uses `helpers.softmax` (in `src/helpers/attention.py`), the same
# stable formula, so it runs whether or not you have answered yet.

# %% [markdown]
# ## Rows are probability distributions: why softmax
#
# Apply it to the running sentence's scores: $A = \text{softmax}(QK^\top / \sqrt{d_k})$, row
# by row.

# %%
A = helpers.softmax(scores, axis=-1)  # (n, n): rows = queries, columns = keys
print("A shape:", A.shape)
print(np.round(A, 3))
print("all weights >= 0:", bool((A >= 0).all()))
print("row sums:", np.round(A.sum(axis=1), 3))

# %% [markdown]
# Every row is a probability mass over the keys: non-negative entries that sum to 1. Each
# query allocates **100% of its attention budget** across the keys, and the keys compete for
# it: raising one key's score takes weight from all the others. That is the "who should I
# listen to?" story. Here is how "cat" spends its budget:

# %%
print(f"query 'cat' (row {cat}):")
for token, score, weight in zip(tokens, scores[cat], A[cat]):
    print(f"  key {token:>4}: score {score:6.3f} -> weight {weight:.3f}")
print(f"  total weight: {A[cat].sum():.3f}")

# %% [markdown]
# Why not something simpler? Dividing the raw scores by their sum does give numbers that sum
# to 1, but they can be negative (below, the first "the" and "mat" get negative "weights"; the
# second "the" does not, since its score differs), they explode
# when the scores' sum is near 0, and a negative sum flips their order. The softmax keeps the
# order of the scores (a higher score never gets less weight), is positive, always sums to 1,
# and is smooth, so a model can learn through it. (Positive in exact arithmetic: in float64 a
# score 800 below its row's maximum already gets a weight of exactly 0, last line below.)

# %%
ratios = scores[cat] / scores[cat].sum()  # (n,): sums to 1, but not a distribution
print("scores / their sum, row 'cat':", np.round(ratios, 3))
print("negative for keys:", ", ".join(f"{j} {tokens[j]!r}" for j in np.flatnonzero(ratios < 0)))
print("helpers.softmax([0, -800]) =", helpers.softmax(np.array([0.0, -800.0])))

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
fig.subplots_adjust(wspace=0.35)  # fixed margins: one draw, no layout engine
plot_heatmap(scores, tokens, tokens, ax=axes[0], signed=True, xlabel="key", ylabel="query",
             title="scores QK^T/sqrt(d_k): any sign\n(rows = query, columns = key)")
plot_heatmap(A, tokens, tokens, ax=axes[1], vmin=0, vmax=1, xlabel="key", ylabel="query",
             title="A = softmax(scores): rows sum to 1\n(rows = query, columns = key)")
show_figure(fig, "Left: " + heatmap_alt(scores, tokens, tokens, "the scores")
                 + " Right: " + heatmap_alt(A, tokens, tokens, "the weights A = softmax(scores)")
                 + f" Every row of A sums to 1: {np.allclose(A.sum(axis=1), 1)}.")

# %% [markdown]
# Left, the scores: red above 0, blue below, white at 0. Right, the weights: each row adds up to
# 1, and within a row the order is the scores' order: a row's highest score, however negative,
# gets its largest weight (row "sat" is all blue, and its least negative score, on "mat", gets
# 0.50). No row is one-hot and none is flat. At this small $d_k = 4$ that is not the
# $\sqrt{d_k}$ scale's doing: without the scale the rows are sharper, but still not one-hot
# (lesson 03 measured where the scale starts to matter: large $d_k$):

# %%
A_unscaled = helpers.softmax(Q @ K.T, axis=-1)  # (n, n): the same scores, not divided by 2
print("largest weight per row, scaled:  ", np.round(A.max(axis=1), 3))
print("largest weight per row, unscaled:", np.round(A_unscaled.max(axis=1), 3))

# %% [markdown]
# ## The output: a convex combination of the value rows
#
# Output row $i$ is the weighted average of the value rows, with query $i$'s weights:
#
# $$\text{out}_i = \sum_{j} A_{ij}\, v_j, \qquad \text{Attention}(Q, K, V) = AV$$
#
# First with loops, one query and one key at a time:

# %%
out_loops = np.zeros((n, V.shape[1]))  # (n, d_v)
for i in range(n):  # each query
    for j in range(n):  # each key: add its value, weighted
        out_loops[i] += A[i, j] * V[j]
print("out (loops) shape:", out_loops.shape)
print(np.round(out_loops, 3))

# %% [markdown]
# Then as one matrix product, and check that they agree:

# %%
out = A @ V  # (n, n) @ (n, d_v) -> (n, d_v)
print("A @ V shape:", out.shape)
print("loops == A @ V:", np.allclose(out_loops, out))

# %% [markdown]
# Weights that are non-negative and sum to 1 make each output row a **convex combination** of
# the value rows: it lies inside the convex hull of the value vectors, never outside it. One
# consequence you can check: every coordinate of every output row lies between the smallest and
# the largest value of that coordinate over $V$'s rows.

# %%
inside = (out >= V.min(axis=0) - 1e-12) & (out <= V.max(axis=0) + 1e-12)
print("V per-column min:", np.round(V.min(axis=0), 3))
print("V per-column max:", np.round(V.max(axis=0), 3))
print("every output coordinate inside [min, max]:", bool(inside.all()))

# %% [markdown]
# ### Exercise 2 ★★ — `attention(Q, K, V)` on a batch, any number of leading axes
#
# So far one sentence and one head: `Q` of shape $(n, d_k)$. A real model runs a **batch** of
# $b$ sentences and $h$ heads at once, so its queries have shape $(b, h, n_q, d_k)$; lesson 05
# uses $(b, n, d)$. Write `attention(Q, K, V)` for **any number of leading axes**:
#
# - `Q` $(\dots, n_q, d_k)$, `K` $(\dots, n_k, d_k)$, `V` $(\dots, n_k, d_v)$, with the
#   same leading axes $(\dots)$ on all three (none, $(b,)$, $(b, h)$, ...);
# - return `(output, weights)`: weights $= \text{softmax}(QK^\top / \sqrt{d_k})$ over each
#   row, shape $(\dots, n_q, n_k)$, and output $=$ weights $\cdot V$, shape
#   $(\dots, n_q, d_v)$. Every example of the batch is independent of the others.
#
# $n_q$ and $n_k$ need not be equal. The check tries 2-D up to 5-D inputs, and a batch where one
# example has scores around 800 and another scores around 0.
#
# *May use:* NumPy, `helpers.softmax`.

# %%
def attention(Q, K, V):
    ### BEGIN SOLUTION
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (..., n_q, n_k); K.T flips ALL axes
    scores = scores - scores.max(axis=-1, keepdims=True)  # each row its own max
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)  # each row sums to 1
    output = weights @ V  # (..., n_q, d_v): @ treats the leading axes as a batch
    return output, weights
    ### END SOLUTION


checks.attention.check(attention)

# %% [markdown]
# Stuck? `checks.attention.hint(1)` (then 2, 3), or `checks.attention.solution()`.
#
# The course's version is `helpers.scaled_dot_product_attention(Q, K, V, mask=None,
# scale=None)` in `src/helpers/attention.py`. It returns the same `(output, weights)` and
# gives the running example's numbers. Given both heads at once, stacked as $(h, n, d_k)$, it
# returns one weight matrix per head:

# %%
out_course, A_course = helpers.scaled_dot_product_attention(Q, K, V)
print("weights == A:", np.allclose(A_course, A),
      "| output == A @ V:", np.allclose(out_course, out))
Q_heads = np.stack([X @ W["W_Q"][head] for head in range(h)])  # (h, n, d_k)
K_heads = np.stack([X @ W["W_K"][head] for head in range(h)])  # (h, n, d_k)
V_heads = np.stack([X @ W["W_V"][head] for head in range(h)])  # (h, n, d_k)
out_heads, A_heads = helpers.scaled_dot_product_attention(Q_heads, K_heads, V_heads)
print("both heads:", out_heads.shape, A_heads.shape, "| head 0 == A:", np.allclose(A_heads[0], A))

# %% [markdown]
# ## Without positions, attention does not see order
#
# Shuffle the rows of the input: the same tokens in another order. If the input carries no
# position information (only the token embeddings $E$ of lesson 01), the output rows are the
# old output rows, **shuffled the same way**. Attention treats its input as a set: this is
# *permutation equivariance*, $\text{Attn}(PX) = P\,\text{Attn}(X)$ for a permutation $P$.

# %%
def self_attention(X_in):
    """Head 0 of our seeded weights on any (n, d_model) input."""
    return helpers.scaled_dot_product_attention(
        X_in @ W["W_Q"][0], X_in @ W["W_K"][0], X_in @ W["W_V"][0]
    )[0]


E = helpers.token_embeddings(tokens, d_model)  # (n, d_model): no positions
perm = np.random.default_rng(0).permutation(n)
print("shuffled order:", [tokens[p] for p in perm])
print("Attn(E[perm]) == Attn(E)[perm]:",
      np.allclose(self_attention(E[perm]), self_attention(E)[perm]))

# %% [markdown]
# So without positions, the sentence and its shuffle printed above give each word exactly the
# same output vector: attention with no mask, as here and in an encoder, cannot see order. (A
# causal mask, lesson 05, breaks this symmetry: a decoder of several layers without positional
# encodings can learn positions from it, Haviv et al. 2022 and Kazemnejad et al. 2023; lesson 08
# shows what one causal layer without them cannot do.) That is why lesson
# 01 adds positional encodings before attention:
# with $Z = E + PE$, shuffling the words changes which encoding each word gets, and the
# outputs are no longer a mere reshuffle.

# %%
PE = helpers.sinusoidal_positional_encoding(n, d_model)  # (n, d_model)
Z_shuffled = E[perm] + PE  # the shuffled sentence, with positions of its own
print("with positions, Attn(Z_shuffled) == Attn(Z)[perm]:",
      np.allclose(self_attention(Z_shuffled), self_attention(E + PE)[perm]))

# %% [markdown]
# ## Build it yourself
#
# Self-attention fits in a dozen lines of NumPy. Here is a version (three tokens,
# $d_{model} = d_k = 4$, random weights) adapted from "Lesson 4: Self-attention", a separate text
# lesson on Vaswani et al. (2017) that this course follows. That version defines its own
# `softmax(z)`, which is Exercise 1's answer, so this one calls the course's `helpers.softmax`
# (the same formula) instead. Q, K and V all come from the same X: the *self* of
# self-attention, as [lesson 02](02_queries_keys_values.ipynb) explained.
# (It uses NumPy's legacy global seed, `np.random.seed(0)`, as that version does, so its numbers
# are the same wherever it runs.) Lesson 05 asks you to make this cell causal.
#
# **It reuses names.** The cell rebinds `X`, `Q`, `K`, `V`, `A`, `scores`, `out`, `d_model`
# and `d_k` to its own 3-token example (your `softmax` keeps its name). The cells after it use only
# its names or build their own from `helpers`, so the rest of the lesson runs as it is. To
# re-run an earlier cell afterwards (say, `checks.softmax.check(softmax)`), use
# Kernel → Restart & Run All, so that the earlier values come back first.

# %%
import numpy as np

np.random.seed(0)

# (the text lesson defines softmax(z) here, Exercise 1's answer; this cell uses helpers.softmax)

# One input sequence X drives Q, K, and V (n = 3 tokens, d_model = 4)
X = np.array([[1.0, 0.0, 1.0, 0.0],
            [0.0, 1.0, 0.0, 1.0],
            [1.0, 1.0, 0.0, 0.0]])
d_model, d_k = 4, 4
Wq = np.random.randn(d_model, d_k) * 0.5
Wk = np.random.randn(d_model, d_k) * 0.5
Wv = np.random.randn(d_model, d_k) * 0.5

Q = X @ Wq            # one query per token
K = X @ Wk            # one key   per token
V = X @ Wv            # one value per token

scores = Q @ K.T / np.sqrt(d_k)   # (n x n): every token scores every token
A = helpers.softmax(scores)       # row-wise attention weights
out = A @ V                       # weighted sum of values

print("attention weights (rows sum to 1):\n", np.round(A, 3))
print("\nrow sums:", np.round(A.sum(axis=1), 3))
print("\nself-attention output (n x d):\n", np.round(out, 3))
print("\nQ, K, V all came from the SAME X -> that's 'self'-attention")

# %% [markdown]
# The course's `helpers.scaled_dot_product_attention` gives the same weights and outputs from
# the same Q, K and V:

# %%
out_helpers, A_helpers = helpers.scaled_dot_product_attention(Q, K, V)
print("weights agree:", np.allclose(A_helpers, A))
print("outputs agree:", np.allclose(out_helpers, out))

# %% [markdown]
# ## Explore: the attention explorer
#
# Back to "the cat sat on the mat". The heatmap shows one head's weights $A$ (rows = query,
# columns = key, brighter = more attention); the bars show the selected query's row. To see
# another row's distribution, **click its token button** (the row of words after "query:",
# above the heatmap; clicking the heatmap itself does nothing). Switch **heads**, turn the
# **causal mask** on (lesson 05), slide the **temperature** $T$ (it divides the scores once
# more; 13 values from 0.1 to 10), or type your own sentence. Seeded, not trained: the patterns are illustrative, not
# linguistic. From the keyboard: Tab from the sentence box to the token row, where the arrow
# keys move the query (Home and End jump to the first and last token), then Tab on to the
# heads, the mask, the temperature slider (arrow keys, Page Up/Down, Home and End, or its − and
# + buttons) and **table view**, which lists every weight as a table with the query tokens as
# rows and the key tokens as columns. After you pick a head or a temperature, the heatmap
# changes at once. In a running notebook the bars and the message above the heatmap come from
# the kernel, and while the kernel is busy (another cell running) they stay dimmed: what they
# show is still the previous map's; after a second, a line under the message says the
# explorer is waiting for the kernel. On the course's website, which runs no kernel, every
# control but the sentence box answers at once from the maps saved with the page.

# %% [markdown]
# **Predict first.** The explorer opens on "cat" at temperature $T = 1$. Before you touch the
# temperature slider: at $T = 10$, does the largest weight in the row of "cat" (head 0) **rise**, **fall**
# or **stay** the same? Write your guess in the cell below and run it.

# %%
guess = "fall"  ### ANSWER
checks.cat_at_temperature_10.check(guess)

# %% [markdown]
# Now look: with "cat" selected, move the temperature slider to $T = 10$ (Tab to it and press
# End, or drag it to the right end).

# %%
ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=h, seed=0, query=cat)
ex.show()

# %% [markdown]
# Notice: every row of the heatmap (and every bar chart) sums to 1, whatever you click; the two
# heads spread the attention from "cat" differently, because head $a$ has its own
# $W^Q_a, W^K_a$. The explorer's head 0 is the running example's $A$ from the start of the
# lesson (recomputed here from `helpers`, since the "Build it yourself" cell reused the names
# `X` and `A`):

# %%
Z = helpers.build_Z(tokens, helpers.D_MODEL)  # (n, d_model): the running example's X again
_, A_head0 = helpers.scaled_dot_product_attention(
    Z @ W["W_Q"][0], Z @ W["W_K"][0], Z @ W["W_V"][0]
)
print("explorer head 0 == A of the running example:", np.allclose(ex.weights, A_head0))
print("query 'cat':", ", ".join(f"{t} {w:.3f}" for t, w in zip(ex.tokens, ex.weights[cat])))

# %% [markdown]
# And the temperature, at its two limits. The explorer multiplies the scores by
# $1 / (\sqrt{d_k} \cdot T)$; the same weights straight from `helpers`, for both heads, checked
# against a second explorer (not shown, so the one above keeps your settings):

# %%
d_head = helpers.D_MODEL // h  # 4, the running example's d_k ("Build it yourself" rebound d_k)
twin = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=h, seed=0)  # not shown
for T in (0.1, 10.0):
    twin.set_temperature(T)
    for head in range(h):
        _, A_T = helpers.scaled_dot_product_attention(
            Z @ W["W_Q"][head], Z @ W["W_K"][head], Z @ W["W_V"][head],
            scale=1 / (np.sqrt(d_head) * T),
        )  # (n, n)
        twin.set_head(head)
        top_two = -np.sort(-A_T, axis=-1)[:, :2]  # (n, 2): each row's two largest weights
        print(f"T = {T:>4}, head {head}: largest weight per row {np.round(top_two[:, 0], 2)}, "
              f"two largest together {np.round(top_two.sum(axis=-1), 2)}; "
              f"same as the explorer's: {np.allclose(twin.weights, A_T)}")
print("row 'cat', head 0, largest weight at T = 1, 10:", [
    round(float(helpers.scaled_dot_product_attention(
        Z @ W["W_Q"][0], Z @ W["W_K"][0], Z @ W["W_V"][0], scale=1 / (np.sqrt(d_head) * T)
    )[1][cat].max()), 3) for T in (1.0, 10.0)])

# %% [markdown]
# At $T = 0.1$ most rows collapse onto one or two keys: the two largest weights take at least
# 0.89 of every row but one, and that one ("sat" in head 1) stays spread out: its largest weight
# is 0.42, its two largest together 0.77. At $T = 10$ every row flattens towards
# $1/n = 1/6 \approx 0.17$: no weight is above 0.21, and the largest weight of "cat" falls from
# 0.341 to 0.183 (last line).

# %% [markdown]
# ## Challenge ★★★ — `zero_temperature_attention(Q, K, V)`: the limit $T \to 0$
#
# Optional. At $T = 0.1$ the rows were close to one-hot, but not quite. What is the **exact
# limit** of $\text{softmax}\big(QK^\top / (\sqrt{d_k}\,T)\big)\,V$ as $T \to 0$? Derive it
# first (on paper: write each weight with the row's largest score $s_{\max}$ factored out),
# then return the limit `(output, weights)` for 2-D `Q` $(n_q, d_k)$, `K` $(n_k, d_k)$, `V`
# $(n_k, d_v)$. Think about a row where **two keys tie** for the top score: the check uses
# integer-valued inputs, so its ties are exact. Does the scale $\sqrt{d_k}$ matter in the limit?
#
# *May use:* NumPy, `helpers.softmax`.

# %%
def zero_temperature_attention(Q, K, V):
    ### BEGIN SOLUTION
    scores = Q @ K.T  # (n_q, n_k); a positive scale does not change which key is on top
    top = scores == scores.max(axis=-1, keepdims=True)  # the keys tied for the row's max
    weights = top / top.sum(axis=-1, keepdims=True)  # exp((s - s_max)/T) -> 1 on ties, 0 else
    return weights @ V, weights
    ### END SOLUTION


checks.zero_temperature_attention.check(zero_temperature_attention)

# %% [markdown]
# Stuck? `checks.zero_temperature_attention.hint(1)` (then 2, 3); the third hint is nearly the
# answer, and `checks.zero_temperature_attention.solution()` prints the whole code of one, so
# derive it on paper first. Once it passes: that limit is the argmax with ties averaged,
# sometimes called *averaging hard* (or saturated) attention. Softmax is a smooth version of it,
# and the smoothness is what lets a model learn through it (lesson 08 trains one).

# %% [markdown]
# ## Summary
#
# - The textbook softmax overflows on scores like 1000 (`inf / inf = nan`) and underflows on
#   $-1000$ (`0 / 0`). Softmax is shift-invariant, so subtracting each row's maximum gives the
#   same weights with every exponent $\le 0$: nothing overflows, the sum is $\ge 1$.
# - Each row of $A = \text{softmax}(QK^\top/\sqrt{d_k})$ is a probability distribution over the
#   keys: non-negative, summing to 1. Each query spends 100% of its attention, and keys
#   compete for it.
# - $\text{Attention}(Q, K, V) = AV$: each output row is a convex combination of the value rows
#   (loops and `A @ V` agree), for one sentence or a whole batch $(\dots, n, d_k)$. Without
#   positions the result only reshuffles when the input does. The temperature moves each row
#   between flat ($T \to \infty$) and hard attention on the top key ($T \to 0$).
#
# **Next**: [05 · causal masking](05_causal_masking.ipynb): stop each token from attending to
# the tokens after it, with $-\infty$ before the softmax.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
