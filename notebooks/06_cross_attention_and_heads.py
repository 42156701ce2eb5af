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
# # 06 · Cross-attention and heads
#
# **What you will learn**
# - how **cross-attention** (encoder–decoder) takes its queries from one sequence and its keys
#   and values from another, what shape that gives the weight matrix, and how a batch of padded
#   source sentences is handled;
# - how **multi-head attention** runs $h$ attentions side by side, each on its own block of
#   $d_k = d_{model}/h$ columns, and why one big projection cut into column blocks is the same
#   as $h$ separate per-head projections;
# - how the heads are put back together: concatenate to $d_{model}$ columns, then apply
#   $W^O$; and what different heads look at.
#
# **You need**: [04 · softmax and attention](04_softmax_and_attention.ipynb) and
# [05 · causal masking](05_causal_masking.ipynb).

# %%
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks
from helpers.explorer import AttentionExplorer
from helpers.plots import heatmap_alt, plot_heatmap, show_figure

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## From self- to cross-attention
#
# Everything so far was **self**-attention: $Q$, $K$ and $V$ all come from the same $X$, as
# [lesson 02](02_queries_keys_values.ipynb) explained, so the weight matrix is square,
# $n \times n$. The running example, head 0, as in lessons 03 to 05:

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model, h = len(tokens), helpers.D_MODEL, helpers.N_HEADS
X = helpers.build_Z(tokens, d_model)  # (n, d_model)
W = helpers.seeded_projections(d_model, n_heads=h, seed=0)  # W_Q, W_K, W_V: (h, d_model, d_k)
W_Q0, W_K0, W_V0 = W["W_Q"][0], W["W_K"][0], W["W_V"][0]  # head 0: (d_model, d_k) each
out_self, A_self = helpers.scaled_dot_product_attention(X @ W_Q0, X @ W_K0, X @ W_V0)
print("X:", X.shape, "-> weights", A_self.shape, "(n x n), output", out_self.shape)

# %% [markdown]
# ## Cross-attention: queries from one sequence, keys and values from another
#
# **Cross-attention** (encoder–decoder) uses Q from one side and K, V from the other.
#
# In the original Transformer, an **encoder** reads the source sentence and a **decoder**
# writes the translation. Inside the decoder, a cross-attention layer lets each word being
# written ask questions of the source: the **queries** come from the decoder's sequence,
# the **keys and values** from the encoder's.
#
# $$Q = X_{dec} W^Q, \qquad K = X_{enc} W^K, \qquad V = X_{enc} W^V$$
#
# Our decoder side is a 4-token French sentence, "le chat s'est assis" ("the cat sat"), and the
# encoder side is the running sentence, 6 tokens. (In a real model $X_{enc}$ is the encoder's
# *output*, and the cross-attention layer has its own weights; here both are seeded
# stand-ins.)
#
# **Predict first.** What shape will the cross-attention weights have: `"4x6"`, `"6x4"`,
# `"6x6"` or `"4x4"`? Answer in `guess`, run the cell, then the next one prints the shapes.

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.cross_attention_shape.check(guess)

# %%
dec_tokens = helpers.tokenize("le chat s'est assis")  # the decoder's side: the queries
X_dec = helpers.build_Z(dec_tokens, d_model)  # (n_q, d_model)
X_enc = helpers.build_Z(tokens, d_model)  # the encoder's side: the keys and values, (n_k, d_model)


def attend(X_q, X_kv):
    """Head 0 of attention with queries from X_q and keys and values from X_kv."""
    Q = X_q @ W_Q0  # (n_q, d_k): one query per token of X_q
    K = X_kv @ W_K0  # (n_k, d_k): one key per token of X_kv
    V = X_kv @ W_V0  # (n_k, d_v)
    return Q, K, V, *helpers.scaled_dot_product_attention(Q, K, V)


Q, K, V, out_cross, A_cross = attend(X_dec, X_enc)
print("decoder tokens:", dec_tokens, " encoder tokens:", tokens)
for name, M in (("Q", Q), ("K", K), ("V", V), ("weights", A_cross), ("output", out_cross)):
    print(f"{name:>8}: {M.shape}")
print("rows sum to 1:", np.round(A_cross.sum(axis=1), 3))

# %% [markdown]
# | what | self-attention | cross-attention |
# |---|---|---|
# | queries from | $X$ | the decoder's sequence, $n_q$ tokens |
# | keys, values from | $X$ | the encoder's sequence, $n_k$ tokens |
# | weights | $(n, n)$ | $(n_q, n_k)$ = (4, 6) |
# | output | $(n, d_v)$ | $(n_q, d_v)$ = (4, 4): one row per **query** |
#
# The output has one row per decoder token, each a convex combination of the encoder's value
# rows: the decoder side asks, the encoder side answers.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
fig.subplots_adjust(wspace=0.35)  # fixed margins: one draw, no layout engine
plot_heatmap(A_self, tokens, tokens, ax=axes[0], vmin=0, vmax=1,
             title="Self-attention: rows = query, columns = key", xlabel="key (English)",
             ylabel="query (English)")
plot_heatmap(A_cross, dec_tokens, tokens, ax=axes[1], vmin=0, vmax=1,
             title="Cross-attention: rows = query, columns = key", xlabel="key (English)",
             ylabel="query (French)")
show_figure(fig, "Left: " + heatmap_alt(A_self, tokens, tokens, "self-attention weights")
                 + " Right: " + heatmap_alt(A_cross, dec_tokens, tokens, "cross-attention "
                                            "weights, French queries over English keys"))

# %% [markdown]
# Left, square: the sentence attends to itself. Right, 4 × 6: each French token (a row) spreads
# its weight over the English tokens (columns). The projections $W^Q, W^K, W^V$ are seeded, not
# trained, so "chat"
# need not look at "cat" here; a trained translation model learns such alignments.
#
# Two more facts:
#
# - The decoder may look at the **whole** source sentence, which is fully known, so
#   cross-attention needs no causal mask. The causal mask of lesson 05 belongs to the
#   decoder's own self-attention, over the words it has written so far.
# - Self-attention is the special case where both sides are the same sequence. A check that is
#   not circular: `attend` with the English sentence on both sides against
#   `helpers.multi_head_attention`, a different function (it projects all heads at once),
#   called with one sequence only, which makes it self-attention; we compare with head 0 of its
#   weights. And the French sentence on both sides gives
#   the decoder's own $4 \times 4$ self-attention, a different matrix from the cross weights.

# %%
_, _, _, _, A_en_en = attend(X_enc, X_enc)
_, A_mha = helpers.multi_head_attention(X_enc, **W)  # self-attention only: (h, n, n)
print("attend(English, English) == head 0 of helpers.multi_head_attention:",
      np.allclose(A_en_en, A_mha[0]))
_, _, _, _, A_fr_fr = attend(X_dec, X_dec)
print("attend(French, French):", A_fr_fr.shape, " attend(French, English):", A_cross.shape)

# %% [markdown]
# ### Exercise 1 ★★ — `cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths)`
#
# A translation model works on a **batch** of sentence pairs, and the source sentences have
# different lengths: they are padded with filler tokens to one length $n_k$ so they fit in one
# array (lesson 05's padding). Write cross-attention for such a batch:
#
# - `X_q` $(b, n_q, d_{model})$: the decoder's sequences, the queries ($b$ = batch size);
# - `X_kv` $(b, n_k, d_{model})$: the encoder's sequences, keys and values; sequence $s$ has
#   `kv_lengths[s]` real tokens, and its positions `kv_lengths[s]` … $n_k - 1$ are padding;
# - `W_Q`, `W_K` $(d_{model}, d_k)$ and `W_V` $(d_{model}, d_v)$.
#
# Return `(output, weights)`: `weights` $(b, n_q, n_k)$, the softmax of $QK^\top/\sqrt{d_k}$
# over each row **with every padded key weighted exactly 0** (and each row still summing to
# 1), and `output` $(b, n_q, d_v)$. The check uses fresh sizes and lengths.
#
# *May use:* NumPy, `helpers.softmax`, `helpers.scaled_dot_product_attention`, `helpers.padding_mask`.

# %%
def cross_attention(X_q, X_kv, W_Q, W_K, W_V, kv_lengths):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.cross_attention.check(cross_attention)

# %% [markdown]
# Stuck? `checks.cross_attention.hint(1)` (then 2, 3), or `checks.cross_attention.solution()`.

# %% [markdown]
# ## Multi-head attention
#
# One attention head computes one weight matrix: one notion of "who should I listen to?".
# **Multi-head attention** stacks $h$ attentions in parallel, each with its own projections,
# then concatenates the heads and applies $W^O$:
#
# $$\text{head}_a = \text{Attention}(XW^Q_a,\; XW^K_a,\; XW^V_a), \qquad
#   \text{MultiHead}(X) = \text{Concat}(\text{head}_1, \ldots, \text{head}_h)\, W^O$$
#
# with the heads counted $1 \ldots h$ as in the paper (which writes $\text{head}_i$; we use $a$). Python counts from 0, so in the
# code below `W_Q[0]` and "head 0" are the paper's first head, $W^Q_1$.
#
# Several heads are often said to let the model capture many relationship types at once
# (syntax, coreference, long vs short range, ...): $h$ heads *can* each learn their own pattern,
# and the head grid below says what trained heads were found to do. Each head works in
# $d_k = d_{model}/h$ dimensions, so $h$ heads cost about as much as one full-width head, and
# the concatenation is $d_{model}$ wide again.
#
# | quantity | running example | the paper |
# |---|---|---|
# | $d_{model}$ | 8 | 512 |
# | heads $h$ | 2 | 8 |
# | $d_k = d_v = d_{model}/h$ | 4 | 64 |
# | $X$ | (6, 8) | (n, 512) |
# | $W^Q_a, W^K_a, W^V_a$ of one head | (8, 4) | (512, 64) |
# | $Q_a, K_a, V_a$ of one head | (6, 4) | (n, 64) |
# | weights of one head | (6, 6) | (n, n) |
# | $\text{head}_a$ | (6, 4) | (n, 64) |
# | concatenated heads | (6, 8) | (n, 512) |
# | $W^O$ | (8, 8) | (512, 512) |
# | output | (6, 8) | (n, 512) |
#
# In general the paper's $W^O$ is $(h \cdot d_v, d_{model})$; it is square here only because
# $d_v = d_{model}/h$, so the $h$ concatenated heads are $d_{model}$ wide again.
#
# The paper's column, computed (random $X$ with $n = 10$ and seeded weights):

# %%
X_paper = np.random.default_rng(0).standard_normal((10, 512))  # (n, d_model)
W_paper = helpers.seeded_projections(512, n_heads=8, seed=0)
out_paper, A_paper = helpers.multi_head_attention(X_paper, **W_paper)  # src/helpers/multihead.py
print("W_Q of all heads:", W_paper["W_Q"].shape, "= (h, d_model, d_k)")
print("weights:", A_paper.shape, "= (h, n, n);  output:", out_paper.shape, "= (n, d_model)")

# %% [markdown]
# ## One big projection, cut into column blocks
#
# Implementations rarely keep $h$ small matrices. They keep **one** $(d_{model}, d_{model})$
# matrix $W^Q$ whose columns are the heads' matrices side by side,
# $W^Q = [W^Q_1 \mid W^Q_2 \mid \ldots]$, compute $Q = XW^Q$ in one product, and cut $Q$ into
# column blocks: code head `a` gets columns $a\,d_k$ to $(a+1) d_k - 1$. Because each column of $Q$
# depends only on the same column of $W^Q$, that is exactly the per-head projection.

# %%
W_Q_big = np.concatenate(list(W["W_Q"]), axis=1)  # (d_model, h * d_k): [W_Q_0 | W_Q_1]
Q_big = X @ W_Q_big  # (n, d_model), all heads' queries in one product
d_k = d_model // h
for a in range(h):
    block = Q_big[:, a * d_k : (a + 1) * d_k]  # (n, d_k): head a's columns
    print(f"head {a}: columns {a * d_k}..{(a + 1) * d_k - 1} of X @ W_Q == X @ W_Q[{a}]:",
          np.allclose(block, X @ W["W_Q"][a]))

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.4))
plot_heatmap(Q_big, tokens, [f"h{c // d_k}:{c % d_k}" for c in range(d_model)], ax=ax,
             signed=True, title="$Q = XW^Q$: rows = tokens, columns = head:dimension",
             xlabel="column (head, dimension within the head)", ylabel="token")
for a in range(1, h):
    ax.axvline(a * d_k - 0.5, color="black", lw=3)
show_figure(fig, heatmap_alt(Q_big, tokens, [f"h{c // d_k}:{c % d_k}" for c in range(d_model)],
                             "Q = X W^Q, all heads' columns", rows="token", cols="column")
            + f" Black lines cut it into h = {h} blocks of d_k = {d_k} columns, one per head.")

# %% [markdown]
# The black line cuts $Q$ into $h = 2$ blocks of $d_k = 4$ columns: head 0 on the left,
# head 1 on the right (the queries have signs, so the colours are centred on 0). Every head
# keeps **all six tokens** (all rows); heads split the *features*, never the tokens.

# %% [markdown]
# You cut a projection into heads by hand in lesson 02 (`head_slices`); from here on
# `helpers.split_heads(Q, h)` (in `src/helpers/projections.py`) does it: reshape to
# $(n, h, d_k)$, then move the head axis to the front, $(h, n, d_k)$. The transpose matters.
# A plain `reshape(h, n, d_k)` has the right shape, but reshape reads the numbers in memory
# order, row after row, so "head 0" would get the first rows' features instead of the first
# $d_k$ columns of every row:

# %%
wrong = Q_big.reshape(h, n, d_k)  # right shape, wrong numbers
right = helpers.split_heads(Q_big, h)  # the course's version, (h, n, d_k)
print("reshape only == per-head queries:", np.allclose(wrong, X @ W["W_Q"]))
print("reshape + transpose == per-head queries:", np.allclose(right, X @ W["W_Q"]))
print("head 0, token 1 ('cat'), reshape only:", np.round(wrong[0, 1], 3))
print("head 0, token 1 ('cat'), correct:     ", np.round(right[0, 1], 3))

# %% [markdown]
# ## h attentions in parallel
#
# With the queries, keys and values split, attention runs on every head at once: the
# `(h, n, d_k)` arrays are a batch of $h$ independent attentions, and
# `helpers.scaled_dot_product_attention` handles the leading head axis. A loop over the heads
# gives the same:

# %%
Q_heads = helpers.split_heads(X @ np.concatenate(list(W["W_Q"]), axis=1), h)  # (h, n, d_k)
K_heads = helpers.split_heads(X @ np.concatenate(list(W["W_K"]), axis=1), h)  # (h, n, d_k)
V_heads = helpers.split_heads(X @ np.concatenate(list(W["W_V"]), axis=1), h)  # (h, n, d_k)
# (h, n, d_k), (h, n, n): every head at once
heads, A_heads = helpers.scaled_dot_product_attention(Q_heads, K_heads, V_heads)
print("Q_heads, K_heads, V_heads:", Q_heads.shape, " head outputs:", heads.shape,
      " weights:", A_heads.shape)
loop = [helpers.scaled_dot_product_attention(Q_heads[a], K_heads[a], V_heads[a])
        for a in range(h)]
print("batched == one head at a time:",
      all(np.allclose(heads[a], o) and np.allclose(A_heads[a], w) for a, (o, w) in enumerate(loop)))
print("head 0 == the head we followed in lessons 03-05:", np.allclose(A_heads[0], A_self))

# %%
fig, axes = plt.subplots(1, h, figsize=(11, 4.2))
fig.subplots_adjust(wspace=0.3)
for a, ax in enumerate(axes):
    plot_heatmap(A_heads[a], tokens, tokens, ax=ax, vmin=0, vmax=1,
                 title=f"head {a}: rows = query, columns = key", xlabel="key", ylabel="query")
show_figure(fig, " ".join(f"Head {a}: " + heatmap_alt(A_heads[a], tokens, tokens, "its weights")
                          for a in range(h)))
for a in range(h):
    print(f"head {a}: each query's favourite key:",
          [f"{tokens[i]}->{tokens[j]}" for i, j in enumerate(A_heads[a].argmax(axis=1))])
sat, mat = 2, 5  # query rows
for a in range(h):
    for i in (sat, mat):
        print(f"head {a}, query {tokens[i]!r}:",
              ", ".join(f"{t} {w:.2f}" for t, w in zip(tokens, A_heads[a, i])))

# %% [markdown]
# Same sentence, same $X$, two different patterns: each head has its own $W^Q_a, W^K_a$, so
# it compares the tokens in its own way. For the query "sat", head 0 puts half its weight on
# "mat" (0.50); head 1 has no favourite for "sat": four keys get about a fifth each ("the" 0.23,
# "sat" 0.22, "mat" 0.21, "cat" 0.18) and "on" and the second "the" only 0.08. The other way round
# for "mat": head 1 sends two thirds of it to the second "the" (0.67), while head 0's largest
# weight for "mat" is 0.23. Two "views" of the same content, computed at once.

# %% [markdown]
# ## Concatenate, then $W^O$
#
# Each head returns $(n, d_k)$. Putting the heads back side by side, head 0 first (the inverse
# of the split, `helpers.combine_heads`), gives $(n, h \cdot d_k) = (n, d_{model})$; the output
# projection $W^O$ $(d_{model}, d_{model})$ then mixes what the heads found into one vector per
# token.
#
# ### Exercise 2 ★★ — `multi_head_attention(X, W_Q, W_K, W_V, W_O)`
#
# Put the whole layer together, in the general form a real model needs (the lesson above did
# one sentence, with $d_v = d_k$):
#
# - `X` $(\ldots, n, d_{model})$: **any number of leading batch axes**, e.g. $(b, n, d_{model})$
#   for a batch of $b$ sentences;
# - `W_Q`, `W_K` $(h, d_{model}, d_k)$ and `W_V` $(h, d_{model}, d_v)$, where $d_v$ may differ
#   from $d_k$: `W_Q[a]` is head `a`'s query projection, and so on;
# - `W_O` $(h \cdot d_v, d_{model})$, the paper's general shape.
#
# Return `(output, weights)`: `output` $= \text{Concat}(\text{head}_1, \ldots,
# \text{head}_h)\, W^O$ with shape $(\ldots, n, d_{model})$, and `weights`, every head's
# attention weights stacked just before the last two axes, shape $(\ldots, h, n, n)$. A loop
# over the heads is fine.
#
# *May use:* NumPy, `helpers.softmax`, `helpers.scaled_dot_product_attention`.

# %%
def multi_head_attention(X, W_Q, W_K, W_V, W_O):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.multi_head_attention.check(multi_head_attention)

# %% [markdown]
# Stuck? `checks.multi_head_attention.hint(1)` (then 2, 3), or
# `checks.multi_head_attention.solution()`. The rest of the lesson uses the course's
# `helpers.multi_head_attention` (in `src/helpers/multihead.py`), which also takes a mask and a
# second sequence. The same steps, on the heads computed above:

# %%
concat = helpers.combine_heads(heads)  # (n, h * d_k) = (n, d_model)
output = concat @ W["W_O"]  # (n, d_model)
print("concatenated heads:", concat.shape, " output:", output.shape)
print("concat == [head 0 | head 1]:", np.allclose(concat, np.concatenate(list(heads), axis=1)))
print("combine_heads undoes split_heads:",
      np.allclose(helpers.combine_heads(Q_heads), X @ W_Q_big))
mh_out, mh_A = helpers.multi_head_attention(X, **W)  # the course's version
print("output == helpers.multi_head_attention's:", np.allclose(mh_out, output),
      "| weights == A_heads:", np.allclose(mh_A, A_heads))
print("output row 1 ('cat'):", np.round(output[1], 3))

# %% [markdown]
# Without $W^O$, output columns 0–3 would come only from head 0 and columns 4–7 only from
# head 1; $W^O$ lets every output dimension draw on every head. The output has the shape of
# the input, $(n, d_{model})$, so layers can be stacked.
#
# `helpers.multi_head_attention` takes a mask and a second sequence too: multi-head **causal**
# self-attention (a GPT layer) and multi-head **cross**-attention (the decoder asking the
# encoder) are the same function.

# %%
causal_out, causal_A = helpers.multi_head_attention(X, **W, mask=helpers.causal_mask(n))
cross_out, cross_A = helpers.multi_head_attention(X_dec, **W, X_kv=X_enc)
print("causal multi-head: weights", causal_A.shape, "output", causal_out.shape,
      " future weights all 0:", bool(np.all(causal_A[:, ~helpers.causal_mask(n)] == 0)))
print("cross multi-head:  weights", cross_A.shape, "output", cross_out.shape)

# %% [markdown]
# ## A head grid: more heads, more patterns
#
# With a wider model there is room for more heads. The same sentence with $d_{model} = 32$ and
# $h = 8$ heads of $d_k = 4$: every head's weights, side by side.

# %%
X_32 = helpers.build_Z(tokens, 32)  # (n, 32)
W_32 = helpers.seeded_projections(32, n_heads=8, seed=0)
_, A_grid = helpers.multi_head_attention(X_32, **W_32)  # (8, n, n)
fig, axes = plt.subplots(2, 4, figsize=(13, 6.2), sharex=True, sharey=True)
fig.subplots_adjust(left=0.07, right=0.9, bottom=0.12, top=0.88, wspace=0.08, hspace=0.22)
for a, ax in enumerate(axes.flat):
    image = plot_heatmap(A_grid[a], tokens, tokens, ax=ax, vmin=0, vmax=1, annotate=False,
                         colorbar=False, title=f"head {a}",
                         xlabel="key" if a >= 4 else "",  # outer axes only: bottom row...
                         ylabel="query" if a % 4 == 0 else "")  # ...and left column
fig.colorbar(image, cax=fig.add_axes([0.92, 0.12, 0.015, 0.76]), label="attention weight")
fig.suptitle("8 heads, one sentence (rows = query, columns = key)")
show_figure(fig, f"A 2 by 4 grid of the attention weights of {len(A_grid)} heads over the "
                 f"{n} tokens (rows = query, columns = key); largest weight in each head: "
                 + ", ".join(f"{w:.2f}" for w in A_grid.max(axis=(1, 2))) + ".")
print("largest weight in each head:", np.round(A_grid.max(axis=(1, 2)), 2))
for a in (4, 5, 7):
    print(f"head {a}, each query's favourite key:",
          " ".join(f"{tokens[i]}->{tokens[j]}" for i, j in enumerate(A_grid[a].argmax(axis=1))))

# %% [markdown]
# Eight heads, eight patterns. In heads 5 and 7 most queries look at the same key ("mat",
# "sat": a bright column); in head 4 different queries pick different keys ("sat" → "mat",
# "on" → "cat"); heads 0 and 6 spread their weight thinly (flat colour, largest weight 0.40
# and 0.34). These are seeded, not trained, so the differences are random. In trained models
# heads do specialise, though rarely as neatly as a name suggests. Clark et al. (2019, "What
# Does BERT Look At?") examined every head of BERT: some attend to the previous or the next
# token, many put most of their weight on the separator token `[SEP]`, some spread it over the
# whole sentence, and a few follow one syntactic relation, e.g. a head in which direct objects
# attend to their verbs and one in which determiners attend to their nouns, each right for most
# words of its relation. Their best coreference head points a mention at one of its
# antecedents less often than a rule-based coreference system does, and no single head does
# syntax as a whole. That variety is what "many relationship types at once" means.
# [Lesson 09](09_real_model.ipynb) measures the heads of a real trained model: it finds a
# previous-token head, but in "The animal didn't cross the street because it was too
# tired / wide" the head whose weights move most still has "it" prefer "animal" when the
# street is meant, and the few heads that do switch give either noun little weight.

# %% [markdown]
# ## Explore it: flip between heads
#
# The attention explorer with $h = 2$ heads: click a token to see its weights, switch heads to
# see the other pattern, and toggle the causal mask from lesson 05.

# %%
ex = AttentionExplorer(sentence=helpers.RUNNING_SENTENCE, n_heads=h, causal=False, seed=0,
                       query=2)
ex.set_head(1)
ex.show()

# %% [markdown]
# Notice: on head 1, "sat" has no favourite (four keys get about 0.2 each); switch to head 0
# and half of its weight goes to "mat" (0.50). Then click "mat": head 1 sends it to the second
# "the" (0.67), head 0 spreads it.

# %% [markdown]
# It shows the same heads as our code:

# %%
for a in range(h):
    ex.set_head(a)
    print(f"explorer head {a} == A_heads[{a}]:", np.allclose(ex.weights, A_heads[a]))

# %% [markdown]
# ## Challenge ★★★ — `multi_query_attention(X, W_Q, W_K, W_V, W_O)`
#
# Optional. When a model generates text one token at a time, it keeps every earlier token's
# keys and values in memory (a *KV cache*, lesson 05's challenge), one key and one value per
# head, per token and per layer. **Multi-query attention** (Shazeer, 2019) keeps $h$ query heads
# but gives them **one** shared key projection and one shared value projection. Write it for a
# batch, with **any number of leading axes**, as your `multi_head_attention` above:
#
# - `X` $(\ldots, n, d_{model})$; `W_Q` $(h, d_{model}, d_k)$, one per head; `W_K`
#   $(d_{model}, d_k)$ and `W_V` $(d_{model}, d_v)$, shared by every head; `W_O`
#   $(h \cdot d_v, d_{model})$;
# - return `(output, weights)` with shapes $(\ldots, n, d_{model})$ and $(\ldots, h, n, n)$.
#
# The shared keys have no head axis, $(\ldots, n, d_k)$, while the queries do: make every head
# of sentence $s$ read sentence $s$'s keys and values (the check includes a batch with as many
# sentences as heads). Then, before you run the cell after the check: how many numbers does
# the KV cache hold per token and per layer with the paper's sizes ($h = 8$, $d_k = d_v = 64$),
# for multi-head and for multi-query attention?
#
# *May use:* NumPy, `helpers.softmax`, `helpers.scaled_dot_product_attention`.

# %%
def multi_query_attention(X, W_Q, W_K, W_V, W_O):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.multi_query_attention.check(multi_query_attention)

# %% [markdown]
# Stuck? `checks.multi_query_attention.hint(1)` (then 2, 3), or
# `checks.multi_query_attention.solution()`.
#
# **What the cache saves.** Per token and per layer a KV cache holds the token's keys and
# values: $h$ of each for multi-head attention, one of each for multi-query attention. With the
# paper's sizes, counted from the shapes the two layers' projections produce for one token:

# %%
x_token = np.zeros((1, 512))  # one token, d_model = 512
W_paper_K = helpers.seeded_projections(512, n_heads=8, seed=0)["W_K"]  # (h, d_model, d_k)
mha_keys = np.einsum("nd,hdk->hnk", x_token, W_paper_K)  # (h, 1, d_k): one key per head
mqa_keys = x_token @ W_paper_K[0]  # (1, d_k): one key shared by the heads
mha_floats, mqa_floats = 2 * mha_keys.size, 2 * mqa_keys.size  # keys and values (d_v = d_k)
print(f"per token and layer: multi-head {mha_floats} numbers, multi-query {mqa_floats}: "
      f"{mha_floats // mqa_floats} times fewer")
print(f"a 2048-token context, the paper's 6 layers, float32: {mha_floats * 2048 * 6 * 4 / 2**20:.0f} MiB "
      f"against {mqa_floats * 2048 * 6 * 4 / 2**20:.0f} MiB")

# %% [markdown]
# The cache shrinks by the number of heads, $h = 8$ here, while the $h$ query heads keep their
# own weight patterns. Grouped-query attention (Ainslie et al., 2023) sits between the two:
# $h$ query heads share $g$ key and value heads, one per group, so the cache is $h/g$ times
# smaller than multi-head attention's.

# %% [markdown]
# ## Summary
#
# - Self-attention takes Q, K and V from the same sequence. Cross-attention takes Q from one
#   sequence ($n_q$ tokens, e.g. the decoder's) and K, V from another ($n_k$ tokens, e.g. the
#   encoder's): the weights are $(n_q, n_k)$ and the output has one row per query,
#   $(n_q, d_v)$. Padded source tokens are masked as keys, for every query.
# - Multi-head attention runs $h$ attentions in parallel, each with its own projections into
#   $d_k = d_{model}/h$ dimensions (8, 2, 4 here; 512, 8, 64 in the paper). One big
#   projection cut into $h$ column blocks (`helpers.split_heads`: reshape to $(n, h, d_k)$,
#   then transpose to $(h, n, d_k)$) is exactly $h$ per-head projections.
# - The heads' outputs are concatenated back to $h \cdot d_v$ columns, first head first, and
#   mixed by $W^O$ (your `multi_head_attention`, for any batch axes); each head has its own
#   weight pattern, which lets one layer *learn* several kinds of relationship at once (lesson 09
#   measures some in a trained model).
#   Multi-query attention shares one key and one value projection among the heads, so its KV
#   cache is $h$ times smaller.
#
# **Next**: [07 · the cost of attention](07_cost_of_attention.ipynb): the $n \times n$ matrix,
# measured.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
