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
# # 02 · Queries, keys, values
#
# **What you will learn**
# - how three learned projections turn the same input $X$ into $Q = XW^Q$, $K = XW^K$,
#   $V = XW^V$, and what a row of each is for;
# - the shapes involved, in the running example ($d_{model} = 8$, $h = 2$, $d_k = 4$) and at
#   the paper's sizes ($d_{model} = 512$, $h = 8$, $d_k = 64$);
# - the three reasons Q, K and V are **not** the embeddings: they are rebuilt in every layer,
#   they differ from head to head, and with several heads they live in a smaller space,
#   $d_k = d_{model} / h$ (even at full width, with one head, they are projections with roles
#   of their own, as lesson 08's one-head layer shows).
#
# **You need**: [01 · the input Z](01_input_Z.ipynb).

# %%
import ipywidgets as widgets
import numpy as np

import helpers
from helpers import checks
from helpers.live import LiveFigure, pressed_states, show
from helpers.plots import plot_heatmap

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## Where we are
#
# The question behind the course (lesson 00): can a model capture the relationships within a
# sequence without recurrence or convolution? Self-attention is Vaswani et al.'s (2017)
# answer. Instead of passing a
# hidden state along a chain, as an RNN does, every position builds its new representation by
# looking at **every** position of the same sequence in one step. The paper's section 4 ("Why
# Self-Attention") compares it with recurrence on three counts:
#
# - **parallel computation**: all positions are computed at once (one matrix product, not a
#   loop over time steps, each waiting for the one before), which is what GPUs are good at;
# - **path length**: any token reaches any other within one layer, in one step, instead of
#   $O(n)$ steps along an RNN, so long-range links are direct (a deep stack still adds depth,
#   layer by layer; the comparison is with the sequential recurrence inside one layer). The end
#   of this lesson measures it;
# - **computation per layer**: $O(n^2 d)$ for attention against $O(n d^2)$ for recurrence, so
#   attention is the cheaper of the two only while the sequence is shorter than the width,
#   $n < d$ ([lesson 07](07_cost_of_attention.ipynb) measures the $n^2$).
#
# It does this with *queries*, *keys* and *values* derived from the sequence itself. This
# lesson builds them; lesson 03 scores queries against keys.

# %% [markdown]
# ## X: the input to the attention sublayer
#
# Lesson 01 built $Z$ = token embeddings + positional encodings, one $d_{model}$ row per
# position. Call the input of an attention sublayer $X$. In the first layer $X$ is $Z$, up to
# where the layer normalisation sits: the paper applies layer normalisation *after* each sublayer, so the
# first layer sees $Z$ itself; many later models normalise *before* it and see
# $\mathrm{LayerNorm}(Z)$. Either way $X$ is the sequence, not yet Q, K or V. We use $X = Z$.

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model, h = len(tokens), helpers.D_MODEL, helpers.N_HEADS
d_k = d_model // h
X = helpers.build_Z(tokens, d_model)  # (n, d_model); the first layer's X is Z
print(tokens)
print(f"n = {n}, d_model = {d_model}, h = {h}, d_k = d_model / h = {d_k}")
print("X shape:", X.shape)
print(np.round(X, 3))

# %% [markdown]
# ## Three projections of the same X
#
# Self-attention multiplies the same $X$ by three learned matrices:
#
# $$Q = XW^Q, \qquad K = XW^K, \qquad V = XW^V$$
#
# In the simplest telling each $W$ has shape $(d_{model}, d_{model})$. Ours are seeded
# stand-ins for learned weights (`helpers.seeded_projections`, the same ones lessons 03 and 04
# use). It stores them per head, shape $(h, d_{model}, d_k)$; putting the $h$ heads' matrices
# side by side gives one $(d_{model}, h \cdot d_k) = (d_{model}, d_{model})$ matrix each.
# Why there are heads at all is reason 2 below.

# %%
W = helpers.seeded_projections(d_model, n_heads=h, seed=0)
print("per head: W['W_Q'] shape", W["W_Q"].shape, "= (h, d_model, d_k)")
W_Q = np.concatenate(W["W_Q"], axis=1)  # (d_model, d_model): head 0's columns, then head 1's
W_K = np.concatenate(W["W_K"], axis=1)  # (d_model, d_model)
W_V = np.concatenate(W["W_V"], axis=1)  # (d_model, d_model)
print("W_Q, W_K, W_V shapes:", W_Q.shape, W_K.shape, W_V.shape)

Q = X @ W_Q  # (n, d_model): one query per token
K = X @ W_K  # (n, d_model): one key per token
V = X @ W_V  # (n, d_model): one value per token
print("Q, K, V shapes:", Q.shape, K.shape, V.shape)
print("Q =")
print(np.round(Q, 3))

# %% [markdown]
# A matrix product is one vector-matrix product per row: row $i$ of $Q$ is $x_i W^Q$, built
# from token $i$ alone. Check it with a loop:

# %%
Q_loop = np.stack([X[i] @ W_Q for i in range(n)])  # (n, d_model), one row at a time
print("loop == matrix form:", np.allclose(Q_loop, Q))

# %% [markdown]
# ### What each row is for
#
# - Row $i$ of $Q$ is the **query** of position $i$: *"what am I looking for?"*
# - Row $j$ of $K$ is the **key** of position $j$: *"how do I label myself for matching?"*
#   Lesson 03 scores query $i$ against key $j$ with the dot product $q_i \cdot k_j$.
# - Row $j$ of $V$ is the **value** of position $j$: *"what vector do I pass on if I am
#   selected?"* Lesson 04 mixes the value rows with the attention weights.
#
# Three different jobs, so three different vectors for the same token. For "cat":

# %%
cat = tokens.index("cat")
print(f"x_cat = {np.round(X[cat], 3)}")
print(f"q_cat = {np.round(Q[cat], 3)}")
print(f"k_cat = {np.round(K[cat], 3)}")
print(f"v_cat = {np.round(V[cat], 3)}")
print("q_cat == k_cat:", np.allclose(Q[cat], K[cat]), "| k_cat == v_cat:", np.allclose(K[cat], V[cat]))

# %% [markdown]
# ### What *self* means
#
# **Self**-attention: the queries, the keys and the values all come from the **same**
# sequence $X$. Every token asks its question (its query) of the tokens of its own sentence,
# itself included, and mixes their values: the sentence attends to itself. Nothing outside
# the sequence takes part. So all three follow the sentence: give it one more token and each
# of Q, K and V gains a row, and the scores, every query against every key of the same
# sentence, grow from $n \times n$ to $(n+1) \times (n+1)$. (The old rows stay as they were:
# each row is the projection of its own token.)

# %%
X_longer = helpers.build_Z(tokens + ["."], d_model)  # the same sentence and a full stop
Q_, K_, V_ = X_longer @ W_Q, X_longer @ W_K, X_longer @ W_V
print(f"X {X.shape} -> Q, K, V {Q.shape}; scores Q Kᵀ {(Q @ K.T).shape}")
print(f"X {X_longer.shape} -> Q, K, V {Q_.shape}; scores Q Kᵀ {(Q_ @ K_.T).shape}")
print("the first 6 rows of Q, K, V unchanged:",
      all(np.allclose(new[:n], old) for new, old in ((Q_, Q), (K_, K), (V_, V))))

# %% [markdown]
# **Cross**-attention (encoder-decoder, lesson 06) is the one change: the queries come from one
# sequence (the decoder's), the keys and values from another (the encoder's output), so the
# score matrix is $n_q \times n_k$ instead of $n \times n$. Everything else, the scores, the
# softmax and the mixing of values, stays the same. Later lessons link back here.

# %% [markdown]
# ### Exercise 1 ★ — `project_qkv(X, W_qkv)`: one fused matrix
#
# Many implementations run one matrix product instead of three: they store $W^Q$, $W^K$ and
# $W^V$ side by side as **one** matrix $W_{qkv} = [\,W^Q \mid W^K \mid W^V\,]$ of shape
# $(d_{model}, 3\,d_{out})$, where $d_{out}$ is the width of each block. GPT-2 puts all $h$ heads
# in each block, so $d_{out} = d_{model}$ (Karpathy's nanoGPT: its `c_attn` layer has
# $3 \cdot d_{model}$ outputs); a single head's block would be $d_{out} = d_k$ wide. Write
# `project_qkv(X, W_qkv)` that returns the tuple `(Q, K, V)`, each of shape
# $(\dots, n, d_{out})$, for an `X` of shape $(n, d_{model})$ or with leading batch axes, e.g.
# $(b, n, d_{model})$ for $b$ sentences. $d_{out}$ need not equal $d_{model}$: read it from
# `W_qkv`.
#
# *May use:* NumPy only.

# %%
def project_qkv(X, W_qkv):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.project_qkv.check(project_qkv)

# %% [markdown]
# Stuck? `checks.project_qkv.hint(1)` (then 2, 3), or `checks.project_qkv.solution()`.

# %% [markdown]
# ## Shapes: the running example and the paper
#
# The same code at the running example's sizes and at the paper's (seeded random $X$ with
# $n = 10$):

# %%
for label, n_, d_model_, h_ in (("running example", n, d_model, h), ("paper", 10, 512, 8)):
    X_ = np.random.default_rng(0).standard_normal((n_, d_model_))  # (n, d_model)
    W_ = helpers.seeded_projections(d_model_, n_heads=h_, seed=0)
    Q_heads_ = X_ @ W_["W_Q"]  # (h, n, d_k): each head uses its own W^Q_a = W_["W_Q"][head]
    print(
        f"{label:>15}: X {X_.shape}, W^Q_a {W_['W_Q'].shape[1:]}, Q_a {Q_heads_.shape[1:]} "
        f"x {h_} heads, concatenated {helpers.combine_heads(Q_heads_).shape}"
    )

# %% [markdown]
# The shapes it printed, with the rest of the family:
#
# | quantity | running example | paper (base model) |
# |---|---|---|
# | tokens $n$ | 6 | any, e.g. 10 |
# | $d_{model}$ | 8 | 512 |
# | heads $h$ | 2 | 8 |
# | $d_k = d_v = d_{model} / h$ | 4 | 64 |
# | $X$ | (6, 8) | (n, 512) |
# | $W^Q, W^K, W^V$, all heads side by side | (8, 8) | (512, 512) |
# | $W^Q_a$ of head $a$ | (8, 4) | (512, 64) |
# | $Q, K, V$, all heads | (6, 8) | (n, 512) |
# | $Q_a, K_a, V_a$ of head $a$ | (6, 4) | (n, 64) |
# | $h$ heads concatenated | (6, 8) | (n, 512) |

# %% [markdown]
# ## Why Q, K, V are not the input embeddings
#
# A common confusion: "aren't Q, K and V just the embeddings?" No, for three separate
# reasons. Each one below is shown in code.
#
# ### Reason 1 · They change every layer
#
# The token (+ position) embeddings are fixed at the input of the stack. At each layer, Q, K
# and V are recomputed from that layer's input: $X^{(1)} = Z$ for the first layer, $X^{(2)}$ for
# the second, and so on (often written $H$, the hidden sequence), which already
# contains context mixed in by the layers below. If Q, K, V were the raw embeddings they could
# not evolve with depth, yet depth is what builds richer context.
#
# A two-layer stack makes this concrete. Layer 1 runs multi-head attention on $X^{(1)} = Z$
# (with `helpers.scaled_dot_product_attention`, lesson 04 opens it up) and adds its input back
# (the residual connection); the result is $X^{(2)}$, the input of layer 2, which has its own
# seeded weights. Real layers also have a feed-forward sublayer and layer normalisation; we
# leave them out, they would only change $X^{(2)}$ further.
#
# You don't need to follow `attention_sublayer` yet: lessons 03–06 open up each piece. Two
# things in it are new: `W["W_O"]`, the output projection $W^O$ (lesson 06), mixes the heads'
# outputs back into one $d_{model}$ row per token; and `X @ W["W_Q"]` multiplies the
# $(n, d_{model})$ matrix $X$ by a stack of $h$ matrices $(d_{model}, d_k)$: `@` broadcasts
# over the leading head axis and gives $(h, n, d_k)$, one $Q_a$ per head. All you need here is
# that its output $X^{(2)}$ has the same shape as $X$ and is the next layer's input.

# %%
def attention_sublayer(X, W):
    """Multi-head self-attention plus the residual: X + concat(heads) W_O, shape (n, d_model)."""
    Q_heads, K_heads, V_heads = X @ W["W_Q"], X @ W["W_K"], X @ W["W_V"]  # each (h, n, d_k)
    heads, _ = helpers.scaled_dot_product_attention(Q_heads, K_heads, V_heads)  # (h, n, d_k)
    return X + helpers.combine_heads(heads) @ W["W_O"]  # (n, d_model)


W_layers = [W, helpers.seeded_projections(d_model, n_heads=h, seed=1)]  # layer 1, layer 2
X_layers = [X, attention_sublayer(X, W_layers[0])]  # X^(1) = Z, X^(2)
for layer, X_layer in enumerate(X_layers, start=1):
    print(f"X^({layer}) shape {X_layer.shape}, row 'cat': {np.round(X_layer[cat], 3)}")

Q1 = X_layers[0] @ W_layers[0]["W_Q"]  # (h, n, d_k): layer 1's queries
Q2 = X_layers[1] @ W_layers[1]["W_Q"]  # (h, n, d_k): layer 2's queries
print("\nhead 0 query of 'cat', layer 1:", np.round(Q1[0, cat], 3))
print("head 0 query of 'cat', layer 2:", np.round(Q2[0, cat], 3))
print("layer 2's queries differ from layer 1's:", not np.allclose(Q1, Q2))

# %% [markdown]
# Two things changed between the layers: the weights, and the input. The input alone is
# enough: even with layer 1's weights reused, the new $X^{(2)}$ gives new queries. The
# embeddings, meanwhile, did not move.

# %%
Q2_same_weights = X_layers[1] @ W_layers[0]["W_Q"]  # layer 1's W_Q on layer 2's input
print("layer 1's W_Q on X^(2) gives new queries:", not np.allclose(Q2_same_weights, Q1))
print("Z unchanged by the stack:", np.array_equal(X_layers[0], helpers.build_Z(tokens, d_model)))

# %% [markdown]
# ### Reason 2 · They differ across heads
#
# Multi-head attention runs $h$ attentions in parallel, and each head $a$ has its own
# matrices:
#
# $$Q_a = X W^Q_a, \qquad K_a = X W^K_a, \qquad V_a = X W^V_a$$
#
# (The paper writes $W_i^Q$ for head $i$, $i = 1, \dots, h$. We write $a$ for the head, so that
# $i$ stays the query position and $j$ the key position, and $h$ the number of heads. In code
# heads are counted from 0, like every NumPy axis: head 0 and head 1 here.) So the same token
# row of $X$ becomes $h$ different triples $(q, k, v)$, different "views" of the same content.
# One embedding vector per token could not be $h$ different queries.
# (Lesson 06 runs the heads in full and joins their outputs with $W^O$.)

# %%
Q_heads = X @ W["W_Q"]  # (h, n, d_k): head a uses W^Q_a = W["W_Q"][head]
print("Q_heads shape:", Q_heads.shape, "= (h, n, d_k)")
for head in range(h):
    print(f"head {head}, query of 'cat': {np.round(Q_heads[head, cat], 3)}")
print("head 0 and head 1 give 'cat' different queries:",
      not np.allclose(Q_heads[0, cat], Q_heads[1, cat]))

# %% [markdown]
# Since our big $W^Q$ is the heads' matrices side by side, head $a$'s queries are exactly the
# block of columns $a \cdot d_k$ to $(a+1) \cdot d_k - 1$ of the big $Q$. Computing $Q$ once
# and slicing it is how implementations usually do it.

# %%
print("head 0 == Q[:, 0:4]:", np.allclose(Q_heads[0], Q[:, 0:d_k]))
print("head 1 == Q[:, 4:8]:", np.allclose(Q_heads[1], Q[:, d_k : 2 * d_k]))

# %% [markdown]
# ### Exercise 2 ★★ — `head_slices(M, h)`, for a batch too
#
# The cell above sliced one sentence's $Q$ by hand, for $h = 2$. Real code splits whole
# batches at once: write `head_slices(M, h)` for `M` of shape $(\dots, n, d_{model})$, a single
# $(n, d_{model})$ matrix, a batch $(b, n, d_{model})$ of $b$ sentences, or more leading axes.
# Return shape $(\dots, h, n, d_k)$ with $d_k = d_{model} / h$: the batch axes stay in front,
# and block `a` of each matrix is its columns `a*d_k` to `(a+1)*d_k - 1` (all $n$ rows).
# `d_model` is a multiple of `h`; the check uses fresh sizes, not $h = 2$ and $d_k = 4$.
#
# *May use:* NumPy only.

# %%
def head_slices(M, h):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.head_slices.check(head_slices)

# %% [markdown]
# Stuck? `checks.head_slices.hint(1)` (then 2, 3), or `checks.head_slices.solution()`.
#
# From here on the course uses `helpers.split_heads` (in `src/helpers/projections.py`), which
# does the same:

# %%
print("split_heads(Q, h) == per-head Q:", np.allclose(helpers.split_heads(Q, h), Q_heads))

# %% [markdown]
# ### Reason 3 · Dimensionality: $d_k$ vs $d_{model}$
#
# Input rows live in $d_{model}$ dimensions (512 in the paper). Each head projects to
# $d_k = d_{model} / h$ (64), so that the $h$ heads concatenated restore the width
# $h \cdot d_k = d_{model}$. Per head, Q, K and V live in that smaller working space: not the
# same shape, nor the same role, as an embedding row. (With one head, $d_k = d_{model}$, the
# shapes match, and the roles still differ: reasons 1 and 2 still hold.)

# %%
print(f"X row: {X.shape[1]} numbers; one head's query: {Q_heads.shape[2]} numbers")
print(f"d_k = d_model / h = {d_model} / {h} = {d_k}; paper: 512 / 8 = {512 // 8}")
concatenated = helpers.combine_heads(Q_heads)  # (n, h * d_k)
print("heads concatenated:", concatenated.shape, f"= (n, h * d_k) = ({n}, {h * d_k})")
print("concatenation gives back the full Q:", np.allclose(concatenated, Q))
print("parameters of h heads == one d_model x d_model matrix:", h * d_model * d_k == d_model**2)

# %% [markdown]
# The last line is why the split is cheap: $h$ heads of width $d_k$ have together exactly the
# parameters (and the multiplications) of one full-width projection.
#
# ## Representation vs role
#
# | Representation | Role |
# |---|---|
# | Input $Z$ / hidden $X$ | Meaning + position (and deeper context after layers). |
# | $Q$, $K$, $V$ | Projections for matching ($Q \cdot K$) and mixing ($V$), rebuilt per layer and per head. |

# %% [markdown]
# ## Explore: every layer, every head
#
# Pick a layer and a head. Left: that layer's input, $X^{(1)}$ or $X^{(2)}$ (shared by all
# heads). Right: head $a$'s $Q_a, K_a, V_a$, one row per token. The matrices are signed, so the
# colours diverge from white at 0: red positive, blue negative. Every panel has its colour bar,
# and all share one range, so colours compare across panels, layers and heads.

# %%
views = {  # (layer, head), counted from 0 -> the four matrices shown
    (layer, head): {
        "X": X_layers[layer],
        **{name: X_layers[layer] @ W_layers[layer][f"W_{name}"][head] for name in "QKV"},
    }
    for layer in range(2)
    for head in range(h)
}
limit = max(np.abs(M).max() for view in views.values() for M in view.values())
FMT = "{:.1f}"

live = LiveFigure(figsize=(11, 3.4))
axes = live.figure.subplots(1, 4, width_ratios=[d_model, d_k, d_k, d_k])
images = {}
for ax, name in zip(axes, "XQKV"):
    M = views[0, 0][name]
    images[name] = plot_heatmap(
        M,
        tokens,
        [f"d{c}" for c in range(M.shape[1])],
        ax=ax,
        signed=True,  # diverging, white at 0; one shared range
        vmin=-limit,
        vmax=limit,
        annotate=name != "X",  # X's numbers are printed above; Q, K, V get theirs written in
        fmt=FMT,
        xlabel="dimension",
    )
for ax in axes[1:]:
    ax.set_yticklabels([])  # the rows are the same tokens as in X
# Only the cells, their numbers and the titles change: the axes, ticks and colour bars are drawn
# once and reused, so a click redraws just these.
live.animate([*images.values(), *(s for ax in axes for s in ax.spines.values()),
              *(t for ax in axes for t in ax.texts), *(ax.title for ax in axes)])

layer_buttons = widgets.ToggleButtons(options=[("layer 1", 0), ("layer 2", 1)], description="layer")
head_buttons = widgets.ToggleButtons(options=[(f"head {a}", a) for a in range(h)],
                                     description="head")


def draw(layer, head):
    """Show the input of layer+1 and that head's projections (the PNG is kept per pair)."""
    for ax, name in zip(axes, "XQKV"):
        M = views[layer, head][name]
        images[name].set_data(M)
        for text, value in zip(ax.texts, M.flat):  # the cell labels plot_heatmap wrote
            text.set_text(FMT.format(value))
            # as plot_heatmap does on a diverging map: dark ends, light middle
            text.set_color("black" if 0.25 < (value + limit) / (2 * limit) < 0.75 else "white")
    axes[0].set_title(f"$X^{{({layer + 1})}}$ (layer {layer + 1}): rows = tokens", fontsize=9)
    for ax, name in zip(axes[1:], "QKV"):
        ax.set_title(f"${name}_{head} = X^{{({layer + 1})}} W^{name}_{head}$", fontsize=9)
    live.refresh(key=(layer, head), alt=said(layer, head))  # the text alternative follows


def said(layer, head):
    """What the picture of (layer, head) shows, in words."""
    n_tokens, width = views[layer, head]["X"].shape
    return (f"Heatmaps of X in layer {layer + 1} ({n_tokens} tokens by {width} dimensions) and "
            f"of head {head}'s Q, K and V ({n_tokens} by {d_k}), rows labelled with the tokens; "
            f"red positive, blue negative, white 0, one scale for all.")


def update(change=None):
    draw(layer_buttons.value, head_buttons.value)


for layer, head in reversed(views):  # draw the four pictures once now: a click resends one
    draw(layer, head)
layer_buttons.observe(update, names="value")
head_buttons.observe(update, names="value")
show(
    # pressed_states(): a screen reader hears which layer and head button is pressed
    widgets.VBox([widgets.HBox([layer_buttons, head_buttons]), live.image, pressed_states()]),
    live,
    alt=said(layer_buttons.value, head_buttons.value),
)

# %% [markdown]
# Notice: switching the **head** leaves $X$ alone but changes all of $Q, K, V$ (reason 2);
# switching the **layer** changes $X$ itself, and with it every projection (reason 1); and
# every head's panels are 4 columns wide against $X$'s 8 (reason 3). Within one panel, the
# two "the" rows (0 and 4) differ, because $X$ carries their positions.

# %% [markdown]
# ## Path length, counted
#
# Back to the opening claim. Nudge token 0 (the first "the") and ask: how many mixing steps
# before the output at position 5 ("mat") moves? A toy RNN (seeded, $d = 8$) passes a hidden
# state along the chain, $r_t = \tanh(W r_{t-1} + U x_t)$, one position per step; the change
# to $x_0$ can only reach position 5 through $r_1, r_2, r_3, r_4$, in 5 steps computed one
# after another. One attention layer (the `attention_sublayer` of reason 1) computes all
# positions at once, and position 5 reads token 0's key and value directly.
#
# **Predict first.** By the time this seeded RNN's state reaches position 5, has the change
# `"grown"` or `"shrunk"` compared with the change at position 0? (Its weights are small, std
# $1/\sqrt{d}$, and $\tanh$ flattens large inputs.)

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.rnn_nudge_fades.check(guess)

# %%
rng = np.random.default_rng(0)
W_rnn = rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_model))  # hidden -> hidden, (d, d)
U_rnn = rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_model))  # input -> hidden, (d, d)
X_nudged = X.copy()
X_nudged[0] += 0.5  # change token 0 only

r_old, r_new = np.zeros(d_model), np.zeros(d_model)  # r_{-1} = 0
for t in range(n):  # sequential: step t needs r_{t-1}
    r_old = np.tanh(W_rnn @ r_old + U_rnn @ X[t])
    r_new = np.tanh(W_rnn @ r_new + U_rnn @ X_nudged[t])
    print(f"RNN step {t}: r_{t} ({tokens[t]!r}) moved by {np.abs(r_new - r_old).max():.3f}")

moved = np.abs(attention_sublayer(X_nudged, W) - attention_sublayer(X, W)).max(axis=1)  # (n,)
print("one attention layer, every position at once, moved by:", np.round(moved, 3))
print("position 5 moved after 1 attention layer:", moved[5] > 0.01)

# %% [markdown]
# The RNN needs 5 sequential steps to carry the change from position 0 to position 5, and here
# the change fades along the way (0.533 → 0.028): a property of these weights (with larger ones
# a change can grow), not of recurrence itself. What holds for every RNN is the count: with $n$
# tokens the path is $O(n)$ steps.
# Attention moves it in a single step, for any distance. A deep stack of attention layers
# still adds depth; the comparison is with the recurrence inside one layer.

# %% [markdown]
# ## Challenge ★★★ — what a head can see: `head_bilinear_form(W_Q, W_K, b_Q, b_K)`
#
# Lesson 03 scores query $i$ against key $j$ with $q_i \cdot k_j$. Projection layers often add
# a bias too (PyTorch's `nn.Linear` has one unless told `bias=False`; lesson 09's trained model
# has them, many recent models do not), so head $a$ computes
# $q_i = x_i W^Q_a + b^Q_a$ and $k_j = x_j W^K_a + b^K_a$, with $b^Q_a$, $b^K_a$ of length
# $d_k$. Show that the score still depends on the weights only through **one** matrix per
# head: append a 1 to each row of $X$, $\tilde{x} = [\,x, 1\,]$ ($d_{model} + 1$ numbers, the 1
# last), and find the $(d_{model} + 1) \times (d_{model} + 1)$ matrix $\tilde{B}_a$ with
#
# $$q_i \cdot k_j = \tilde{x}_i\, \tilde{B}_a\, \tilde{x}_j^\top \quad \text{for every }
#   x_i, x_j.$$
#
# Derive it, then write `head_bilinear_form(W_Q, W_K, b_Q, b_K)`: the weights have shape
# $(h, d_{model}, d_k)$ (as `helpers.seeded_projections` stores them), the biases $(h, d_k)$;
# return all $h$ matrices, shape $(h, d_{model} + 1, d_{model} + 1)$. Then, before running the
# cell under the check, answer two questions from your $\tilde{B}_a$: what is its largest
# possible rank, and which of its entries cannot change the attention weights (the softmax of
# a row of scores)? Optional; hints and a solution as usual.
#
# *May use:* NumPy only.

# %%
def head_bilinear_form(W_Q, W_K, b_Q, b_K):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.head_bilinear_form.check(head_bilinear_form)

# %% [markdown]
# The answers, measured on the scores themselves (so this runs before you have a
# $\tilde{B}_a$, and shows none): give head 0 seeded biases and 12 random rows of $X$. The
# $12 \times 12$ score matrix $\tilde{X} \tilde{B}_0 \tilde{X}^\top$ can have no larger rank than
# $\tilde{B}_0$ has; and the key bias $b^K_0$ is changed (to $b^K_0 + 1$) to see what it does
# to the scores and to the weights.

# %%
rng = np.random.default_rng(0)
X12 = rng.standard_normal((12, d_model))  # (12, d_model): more rows than d_k
b_Q0, b_K0 = rng.normal(0, 0.5, (2, d_k))  # head 0's biases, (d_k,) each
q12 = X12 @ W["W_Q"][0] + b_Q0  # (12, d_k)
scores12 = {}  # b_K -> (12, 12) scores
for label, bias in (("b_K", b_K0), ("b_K + 1", b_K0 + 1.0)):
    scores12[label] = q12 @ (X12 @ W["W_K"][0] + bias).T
print(f"rank of the 12 x 12 scores: {np.linalg.matrix_rank(scores12['b_K'])} "
      f"(d_k = {d_k}, d_model + 1 = {d_model + 1})")
moved = np.abs(scores12["b_K + 1"] - scores12["b_K"]).max()
same = np.allclose(helpers.softmax(scores12["b_K + 1"]), helpers.softmax(scores12["b_K"]))
print(f"b_K + 1 instead of b_K: scores move by up to {moved:.3f}; weights unchanged: {same}")

# %% [markdown]
# Rank 4, not 9: $\tilde{B}_a$ is a product through $d_k = 4$ columns, so whatever the weights
# and biases its rank is at most 4, and a head compares tokens through a 4-dimensional view of
# their 8 numbers (and the 1), and ignores the rest. That is reason 3 seen from the
# scores' side, and one reason models use several heads (each with its own view). And the key
# bias does nothing to the weights: the terms it adds,
# $x_i W^Q_a (b^K_a)^\top + b^Q_a \cdot b^K_a$, hold no $x_j$, so they are the same for every
# key of a row, and the softmax ignores a constant added to a whole row (lesson 04 shows why).
# In $\tilde{B}_a$ they are its last column and its corner: those entries cannot change the
# weights.

# %% [markdown]
# ## Summary
#
# - $Q = XW^Q$, $K = XW^K$, $V = XW^V$ are three learned projections of the same input $X$
#   ($X = Z$ in the first layer): row $i$ of $Q$ asks "what am I looking for?", rows of $K$
#   say "how do I label myself for matching?", rows of $V$ hold "what I pass on if selected".
# - Shapes: $X$ is $(n, d_{model})$; head $a$'s $W^Q_a$ is $(d_{model}, d_k)$ and its $Q_a$
#   is $(n, d_k)$, with $d_k = d_{model}/h$: $(6, 4)$ here, $(n, 64)$ in the paper. One fused
#   $(d_{model}, 3\,d_{out})$ matrix gives all three at once ($d_{out} = d_{model}$ for all
#   heads, $d_k$ for one), and a batch of sentences just adds
#   leading axes, $(b, h, n, d_k)$ after the head split.
# - Q, K, V are not the embeddings: they are rebuilt from each layer's input, each head
#   has its own, and they live in $d_k < d_{model}$ dimensions; $h$ heads concatenated give
#   back the width $d_{model}$.
#
# **Next**: [03 · scores and scaling](03_scores_and_scaling.ipynb): every query scores every
# key, $QK^\top$, and why the paper divides by $\sqrt{d_k}$.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
