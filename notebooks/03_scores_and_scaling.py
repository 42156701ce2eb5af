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
# # 03 · Scores and scaling
#
# **What you will learn**
# - how $QK^\top$ lets every query score every key in one matrix product, and how to read the
#   $n \times n$ score matrix (rows = queries, columns = keys);
# - why the paper divides the scores by $\sqrt{d_k}$, **measured**: how the size of $q \cdot k$
#   changes with $d_k$, and what that does to the softmax, with and without the scale;
# - to write the scaled scores $QK^\top / \sqrt{d_k}$ yourself, for a whole batch of sentences
#   and heads at once.
#
# **You need**: [02 · queries, keys, values](02_queries_keys_values.ipynb).

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks, scaling
from helpers.live import LiveFigure, pressed_states, show, slider
from helpers.plots import heatmap_alt, plot_heatmap, show_figure

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## The running example, one head
#
# The same sentence, $X = Z$, and the same seeded weights as lesson 02. We follow **head 0**:
# its queries and keys have $d_k = d_{model} / h = 4$ columns.

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model, h = len(tokens), helpers.D_MODEL, helpers.N_HEADS
X = helpers.build_Z(tokens, d_model)  # (n, d_model)
W = helpers.seeded_projections(d_model, n_heads=h, seed=0)
Q = X @ W["W_Q"][0]  # (n, d_k): head 0's queries
K = X @ W["W_K"][0]  # (n, d_k): head 0's keys
V = X @ W["W_V"][0]  # (n, d_k): head 0's values
d_k = Q.shape[1]
cat = tokens.index("cat")
print(f"Q, K shapes: {Q.shape}, {K.shape}; d_k = {d_k}")
print(f"query of 'cat' (as in lesson 02, head 0): {np.round(Q[cat], 3)}")

# %% [markdown]
# ## Every query scores every key: loops first
#
# How well does key $j$ match what query $i$ is looking for? The dot product
#
# $$\text{score}[i, j] = q_i \cdot k_j = \sum_{t=1}^{d_k} Q[i, t]\, K[j, t]$$
#
# is large when the two vectors point the same way. With plain loops, one pair at a time:

# %%
scores_loop = np.zeros((n, n))  # (n_q, n_k)
for i in range(n):  # query i
    for j in range(n):  # key j
        scores_loop[i, j] = sum(Q[i, t] * K[j, t] for t in range(d_k))
print(np.round(scores_loop, 3))

# %% [markdown]
# ## The matrix form: $QK^\top$
#
# Row $i$ of $Q$ times column $j$ of $K^\top$ is exactly $q_i \cdot k_j$, so one matrix
# product computes all $n \times n$ scores at once. That is the **parallelisation** of
# self-attention: no loop over positions, every pair in one operation.

# %%
scores = Q @ K.T  # (n_q, d_k) @ (d_k, n_k) -> (n_q, n_k)
print("scores shape:", scores.shape)
print("Q @ K.T == loops:", np.allclose(scores, scores_loop))

# %% [markdown]
# It is also the **direct long-range link**: the first "the" (position 0) scores "mat"
# (position 5) with one dot product, no matter how far apart they are; an RNN would have to
# carry the information through 5 steps.

# %%
print(f"score['the'(0) -> 'mat'(5)] = q_0 · k_5 = {Q[0] @ K[5]:.3f} = scores[0, 5] = {scores[0, 5]:.3f}")

# %%
fig, ax = plt.subplots(figsize=(5.6, 4.4))
plot_heatmap(
    scores,
    tokens,
    tokens,
    ax=ax,
    signed=True,  # scores have a sign: red positive, blue negative, white 0
    title="Scores $QK^\\top$, head 0 (rows = query, columns = key)",
    xlabel="key (position j)",
    ylabel="query (position i)",
)
show_figure(fig, heatmap_alt(scores, tokens, tokens, "the scores QKᵀ of head 0", fmt="{:.3f}"))

# %% [markdown]
# Read a row: it is one query comparing itself with every key. Notice the matrix is **not
# symmetric**: "cat" scoring "sat" uses $q_{cat} \cdot k_{sat}$, "sat" scoring "cat" uses
# $q_{sat} \cdot k_{cat}$, two different products, because queries and keys are different
# projections. The two "the" rows (0 and 4) differ too: their positions differ.

# %%
sat = tokens.index("sat")
print(f"scores[cat, sat] = {scores[cat, sat]:.3f}, scores[sat, cat] = {scores[sat, cat]:.3f}")
print("symmetric:", np.allclose(scores, scores.T))
for i, token in enumerate(tokens):
    print(f"query {i} {token!r:>6} scores key {tokens[int(np.argmax(scores[i]))]!r} highest")

# %% [markdown]
# ## Scaling: divide by $\sqrt{d_k}$
#
# The paper does not feed $QK^\top$ to the softmax directly; it divides first:
#
# $$\text{scores} = \frac{QK^\top}{\sqrt{d_k}}, \qquad A = \mathrm{softmax}(\text{scores}),
#   \qquad \mathrm{Attention}(Q, K, V) = AV$$
#
# With $d_k = 4$ that halves every score. The course's attention function does exactly this
# before its softmax (lesson 04 opens it up):

# %%
scaled = scores / np.sqrt(d_k)  # (n_q, n_k)
print(f"divide by sqrt(d_k) = {np.sqrt(d_k):.0f}:")
print(np.round(scaled, 3))
_, A = helpers.scaled_dot_product_attention(Q, K, V)  # A: (n_q, n_k)
print("helpers' weights == softmax(Q K^T / sqrt(d_k)):", np.allclose(A, helpers.softmax(scaled)))

# %% [markdown]
# ### Exercise 1 ★★ — `scaled_scores(Q, K)` for a batch of heads
#
# The cell above scaled one head's $(n, n)$ scores. A real model computes them for every head
# of every sentence in a batch at once: $Q$ of shape $(b, h, n_q, d_k)$, $K$ of shape
# $(b, h, n_k, d_k)$ for $b$ sentences and $h$ heads. Write `scaled_scores(Q, K)` for **any**
# number of leading axes, $(\dots, n_q, d_k)$ and $(\dots, n_k, d_k)$ with the same leading
# axes, returning $(\dots, n_q, n_k)$, rows = queries. The check tries a single matrix with
# $n_q \neq n_k$ (as in cross-attention, lesson 06), one leading axis and two, and a $d_k$
# that is not 4. Scores only: no softmax yet.
#
# *May use:* NumPy only.

# %%
def scaled_scores(Q, K):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.scaled_scores.check(scaled_scores)

# %% [markdown]
# Stuck? `checks.scaled_scores.hint(1)` (then 2, 3), or `checks.scaled_scores.solution()`.

# %% [markdown]
# ## Why $\sqrt{d_k}$? Measure it
#
# The claim to test: the **spread** of the dot products grows with $d_k$, and dividing by
# $\sqrt{d_k}$ keeps the scores in a range where the softmax behaves the same at every width.
# The paper's reason (section 3.2.1) comes after two predictions. How large do the scores get?
#
# **Predict first.** Take $q$ and $k$ with $d_k = 64$ entries each (the paper's head size),
# every entry an independent random number of mean 0 and variance 1. Roughly what is the
# variance of the unscaled score $q \cdot k$? Answer with a number.

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.unscaled_variance_at_64.check(guess)

# %% [markdown]
# The paper's footnote (section 3.2.1) gives the answer: *"assume that the components of q and k are
# independent random variables with mean 0 and variance 1. Then their dot product,
# $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$, has mean 0 and variance $d_k$."* (Its $i$ counts the
# entries of one vector, not positions.) Each term $q_t k_t$ has variance 1 and the variances
# of independent terms add, so $\mathrm{Var}(q \cdot k) = d_k$, and
# $\mathrm{Var}(q \cdot k / \sqrt{d_k}) = 1$ whatever $d_k$ is. (Real queries and keys are
# neither independent nor of variance 1: that depends on the inputs and on how the projections
# are initialised. The footnote's assumption is a model of the scale, not a measurement.)
# Measured under that assumption, with 3000 random
# pairs per $d_k$ (`helpers.scaling`, seeded; the scaled column uses fresh pairs, so it is a
# second measurement, not the first one divided by $d_k$):

# %%
d_ks = 2 ** np.arange(10)  # 1, 2, 4, ..., 512
var_raw = scaling.dot_product_variance(d_ks, n_samples=3000, seed=0, scale="none")
var_scaled = scaling.dot_product_variance(d_ks, n_samples=3000, seed=1, scale="sqrt")  # new pairs
print(" d_k   Var(q·k)   Var(q·k)/d_k   Var(q·k/√d_k)")
for d, v, s in zip(d_ks, var_raw, var_scaled):
    print(f"{d:4d} {v:10.2f} {v / d:14.3f} {s:15.3f}")
slope = np.polyfit(np.log(d_ks), np.log(var_raw), 1)[0]
print(f"\nfit log Var(q·k) = slope * log d_k + c: slope = {slope:.3f} (1 means Var ∝ d_k)")
print(f"d_k = 64: Var(q·k) = {var_raw[6]:.1f}; d_k = 512: Var(q·k) = {var_raw[-1]:.0f}, "
      f"a typical score of ±√{var_raw[-1]:.0f} = ±{np.sqrt(var_raw[-1]):.0f}")

# %%
fig, ax = plt.subplots(figsize=(6, 3.8))
ax.loglog(d_ks, var_raw, "o-", color="#440154", label="$q \\cdot k$ (no scale)")
ax.loglog(d_ks, var_scaled, "s-", color="#21918c", label="$q \\cdot k / \\sqrt{d_k}$")
ax.loglog(d_ks, d_ks, ":", color="grey", label="$d_k$ (theory)")
ax.axvline(64, color="black", ls="--", lw=1.2, zorder=0, label="the paper's $d_k = 64$")
ax.set(xlabel="$d_k$", ylabel="variance of the score", title="Measured variance of a score")
ax.set_xticks(d_ks, [str(d) for d in d_ks])
ax.legend(fontsize=8)
show_figure(fig, f"Log-log plot of the measured variance of a score against d_k from {d_ks[0]} "
                 f"to {d_ks[-1]}: without the scale it follows the d_k line (fitted slope "
                 f"{slope:.3f}; {var_raw[-1]:.0f} at d_k = {d_ks[-1]}); divided by √d_k it "
                 f"stays between {var_scaled.min():.3f} and {var_scaled.max():.3f}.")

# %% [markdown]
# Notice: without the scale the variance climbs along the $d_k$ line, to 527 at $d_k = 512$ (a
# typical score of $\pm 23$); with the scale it stays near 1 (between 0.907 and 1.023) for
# every $d_k$.

# %% [markdown]
# ### What the size of the scores does to the softmax
#
# The softmax turns one query's row of scores into weights that sum to 1 (lesson 04 opens it
# up). Its row can be anywhere between flat (every key the same weight) and one-hot (one key
# takes everything).
#
# **Predict first.** Without the scale, as $d_k$ grows from 1 to 512, does the softmax of one
# query's scores get `"flatter"` or `"peakier"`?

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.unscaled_softmax_trend.check(guess)

# %% [markdown]
# Large scores make the softmax **saturate**: the biggest score takes almost all the weight,
# the row becomes nearly one-hot, and small changes to its input no longer change the
# weights: the softmax's gradient with respect to its input vanishes. That is the paper's
# reason for the scale (section 3.2.1): *"We suspect that for large values of $d_k$, the dot
# products grow large in magnitude, pushing the softmax function into regions where it has
# extremely small gradients. To counteract this effect, we scale the dot products by
# $\frac{1}{\sqrt{d_k}}$."* Too much scaling does
# the opposite: everything is flat. We measure three ways of scaling the *same* random scores
# of one query against 16 keys (500 queries per $d_k$):
#
# - the mean **largest weight** of a row ($1/16$ is flat, 1 is one-hot);
# - the mean **entropy** of a row, in nats ($\log 16$ is flat, 0 is one-hot);
# - the mean size of the softmax's **gradient** with respect to its input (the scores after
#   scaling): the Frobenius norm (the square root of the sum of squared entries) of its
#   Jacobian $\mathrm{diag}(p) - pp^\top$, 0 for a one-hot row.

# %%
peaked = scaling.softmax_peakedness(d_ks, n_keys=16, n_queries=500, seed=0)
print(f"flat row of 16 keys: largest weight 1/16 = {1 / 16:.4f}, entropy log 16 = "
      f"{np.log(16):.3f} nats")
labels = {"none": "QKᵀ", "sqrt": "QKᵀ/√d_k", "linear": "QKᵀ/d_k"}
for stat in ("max_weight", "entropy", "grad_norm"):
    print(f"{stat:<11}" + "".join(f"{d:>7d}" for d in d_ks))
    for scale, label in labels.items():
        print(f"  {label:<9}" + "".join(f"{v:7.3f}" for v in peaked[scale][stat]))

# %%
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), gridspec_kw={"wspace": 0.3})
styles = {"none": ("o-", "#440154"), "sqrt": ("s-", "#21918c"), "linear": ("^-", "#5ec962")}
titles = {  # stat -> (title, y label)
    "max_weight": ("largest weight of a row (1 = one-hot)", "mean largest weight"),
    "entropy": ("entropy of a row (nats)", "mean entropy (nats)"),
    "grad_norm": ("softmax gradient size", "mean Frobenius norm of the Jacobian"),
}
for ax, (stat, (title, ylabel)) in zip(axes, titles.items()):
    for scale, (marker, colour) in styles.items():
        ax.plot(d_ks, peaked[scale][stat], marker, color=colour, mec="black", mew=0.5,
                label=labels[scale])
    ax.set_xscale("log", base=2)
    ax.set_xticks(d_ks, [str(d) for d in d_ks], fontsize=8)
    ax.axvline(64, color="black", ls="--", lw=1.2, zorder=0)
    ax.set(title=title, xlabel="$d_k$ (dashed: the paper's 64)", ylabel=ylabel)
axes[2].set_ylim(bottom=0)  # sizes start at 0
axes[0].axhline(1 / 16, color="grey", ls=":", label="flat: 1/16")
axes[1].axhline(np.log(16), color="grey", ls=":", label="flat: log 16")
axes[0].legend(fontsize=8)
axes[1].legend(fontsize=8)
i64 = list(d_ks).index(64)
show_figure(fig, "Three line plots against d_k, for scores unscaled, divided by √d_k and by "
                 "d_k: the mean largest weight of a row, its entropy, and the softmax gradient "
                 "size. At d_k = 64 the largest weight is "
                 + ", ".join(f"{peaked[s]['max_weight'][i64]:.3f} ({labels[s]})" for s in styles)
                 + ".")

# %%
at_64 = list(d_ks).index(64)
for scale in ("none", "sqrt"):
    stats = peaked[scale]
    print(
        f"d_k = 64, {labels[scale]:<9}: largest weight {stats['max_weight'][at_64]:.3f}, "
        f"entropy {stats['entropy'][at_64]:.3f}, gradient size {stats['grad_norm'][at_64]:.3f}"
    )

# %% [markdown]
# Notice the three regimes. Unscaled ($QK^\top$), the rows get more one-hot as $d_k$ grows,
# and the softmax's gradient, largest at $d_k = 4$ (0.324), shrinks beyond it; at the paper's
# $d_k = 64$ the largest weight is already 0.834.
# Divided by $d_k$ the rows drift towards flat ($1/16$): every key gets the same weight, and
# attention can no longer pick anything out. Divided by $\sqrt{d_k}$ all three curves are flat
# in $d_k$: the softmax works in the same regime, neither flat nor one-hot, at every width.
#
# ### Which gradient gets small?
#
# Careful here: the right panel is the Jacobian of the softmax with respect to **its own
# input**. That is the paper's statement, and the paper offers it as a hypothesis, not a
# measurement: *"We suspect that for large values of $d_k$, the dot products grow large in
# magnitude, pushing the softmax function into regions where it has extremely small
# gradients."* But the scale sits *between* $q \cdot k$ and the softmax, so the gradient that
# reaches $q$, $k$ and the weights $W^Q$, $W^K$ is also multiplied by it. And the size of a
# key's share of the gradient depends on its weight: the gradient a loss sends to key $j$'s
# score is $p_j\,(g_j - \sum_l p_l g_l)$, proportional to $p_j$ (lesson 08 derives it). So
# measure both, and count the keys of a row (of 16) whose weight is at least 0.01:

# %%
at_512 = list(d_ks).index(512)
print("size of the softmax's Jacobian (Frobenius norm), with respect to:")
for d, at in ((64, at_64), (512, at_512)):
    for scale in ("none", "sqrt"):
        stats = peaked[scale]
        print(
            f"  d_k = {d:>3}, {labels[scale]:<9}: its own input {stats['grad_norm'][at]:.3f}, "
            f"the raw q·k {stats['raw_grad_norm'][at]:.3f}; keys with weight >= 0.01: "
            f"{stats['keys_over_1pct'][at]:.2f} of 16"
        )

# %% [markdown]
# So the scale does **not** make the gradient larger. With respect to the softmax's own input
# the unscaled gradient is smaller (0.183 at $d_k = 64$ against 0.304 with the scale), as the
# paper suspects; but with respect to the raw $q \cdot k$ the scaled one carries the factor
# $1/\sqrt{d_k}$ and is the smaller one (0.038 against 0.183 at $d_k = 64$; 0.014 against
# 0.071 at $d_k = 512$). What the scale changes is **where** the signal goes. Unscaled, the
# rows saturate: at $d_k = 64$ only 2.46 of the 16 keys have a weight of at least 0.01 (1.40
# at $d_k = 512$), so the other keys' scores get almost no learning signal and the query can
# hardly learn to prefer a different key; scaled, 14.62 of 16 do (14.60 at $d_k = 512$).
# Keeping the softmax out of saturation, not making gradients bigger, is what $1/\sqrt{d_k}$
# does in this measurement (the paper frames it as avoiding small gradients).

# %% [markdown]
# ## Explore: 50 queries, eight keys each
#
# One random row can be noisy (a single query might happen to match two keys equally well), so
# the widget shows averages. For each $d_k$, 50 seeded queries each score 8 seeded keys
# (unit-variance entries), and the scale button divides those same scores. Left: the 8 scores
# of the first query, to see their size. Middle: each query's weights sorted from largest to
# smallest, averaged over the 50 queries (the first, orange bar is the mean largest weight).
# Right: that mean largest weight for every $d_k$ and scale, the current one circled. Move
# the $d_k$ slider to larger values (drag it, or Tab to it and use the arrow keys) with
# **no scale** chosen and watch the largest key take nearly everything; choose **÷ √d_k** and
# the rows stay spread out.

# %%
N_QUERIES, N_KEYS = 50, 8
rng = np.random.default_rng(0)
raw_scores = {int(d): scaling.random_dot_products(int(d), N_QUERIES, N_KEYS, rng) for d in d_ks}
rows = {  # (d_k, scale) -> (scores of query 0, mean of the sorted weight rows), from helpers
    (d, scale): (
        raw_scores[d][0] * scaling.scale_factor(d, scale),  # (N_KEYS,)
        -np.sort(-helpers.softmax(raw_scores[d] * scaling.scale_factor(d, scale)), axis=-1).mean(0),
    )
    for d in raw_scores
    for scale in scaling.SCALES
}
mean_max = {scale: np.array([rows[int(d), scale][1][0] for d in d_ks]) for scale in scaling.SCALES}
print(f"mean largest weight of {N_QUERIES} rows of {N_KEYS} keys (flat: 1/8 = 0.125)")
print(f"{'d_k':<9}" + "".join(f"{d:>6d}" for d in d_ks))
for scale, label in labels.items():
    print(f"{label:<9}" + "".join(f"{v:6.2f}" for v in mean_max[scale]))
for scale in ("none", "sqrt"):
    print(f"d_k = 512, {labels[scale]:<9}: the first query's largest |score| is "
          f"{np.abs(rows[512, scale][0]).max():.2f}")
print(f"sqrt(512) = {np.sqrt(512):.1f}")

# %%
live = LiveFigure(figsize=(10, 3.3))
live.figure.set_layout_engine(None)  # fixed margins
live.figure.subplots_adjust(left=0.07, right=0.99, bottom=0.15, top=0.91, wspace=0.3)
ax_s, ax_w, ax_c = live.figure.subplots(1, 3, width_ratios=[1, 1, 1.1])
score_bars = ax_s.bar([f"k{j}" for j in range(N_KEYS)], np.zeros(N_KEYS), color="#3b528b")
zero_line = ax_s.axhline(0, color="black", lw=0.8)
ax_s.set(xlabel="key", ylabel="score")
weight_bars = ax_w.bar(np.arange(1, N_KEYS + 1), np.zeros(N_KEYS), color="#21918c")
weight_bars[0].set_color("#e66101")  # the largest weight of each row
ax_w.axhline(1 / N_KEYS, color="grey", ls=":", lw=1)
ax_w.set(xlabel="rank of the weight in its row", ylabel="mean softmax weight", ylim=(0, 1.05),
         xticks=np.arange(1, N_KEYS + 1))
curves = {}
for scale, (marker, colour) in styles.items():
    (curves[scale],) = ax_c.plot(d_ks, mean_max[scale], marker, color=colour, mec="black",
                                 mew=0.5, label=labels[scale], alpha=0.35, ms=5)
ax_c.axhline(1 / N_KEYS, color="grey", ls=":", lw=1)
ax_c.set_xscale("log", base=2)
ax_c.set_xticks(d_ks, [str(d) for d in d_ks], fontsize=8)
ax_c.set(ylim=(0, 1.05), xlabel="$d_k$", ylabel="mean largest weight")
ax_c.set_title(f"mean largest weight, {N_QUERIES} queries", fontsize=9)
(ring,) = ax_c.plot([1], [0], "o", ms=13, mfc="none", mec="black", mew=2.5)
ax_c.legend(fontsize=8, loc="upper left")
# Only the bars, two titles, the curves' emphasis and the ring change: the rest is drawn once
# per range of the score axis and reused.
live.animate([*score_bars, zero_line, *weight_bars, ax_s.title, ax_w.title, *curves.values(), ring])

# A slider for d_k (helpers.live.slider: named, keyboard-driven, says "d_k = 64"); buttons for
# the scale, three named choices with no order to scrub through (pressed_states() tells a
# screen reader which one is pressed).
dk_slider = slider("d_k", [int(d) for d in d_ks], value=4, text="d_k = {}")
scale_buttons = widgets.ToggleButtons(
    options=[("no scale", "none"), ("÷ √d_k", "sqrt"), ("÷ d_k", "linear")],
    value="sqrt",
    description="scale",
)


def score_limit(d, scale):
    """The score axis's half-height at d_k = d: 2, 4, 8, ... (few ranges, few backgrounds)."""
    return 2.0 ** np.ceil(np.log2(1.15 * max(np.abs(rows[d, scale][0]).max(), 1.0)))


def draw(d):
    """The figure at d_k = d with the scale picked; returns what it shows, in words."""
    scale = scale_buttons.value
    s, mean_row = rows[d, scale]  # (N_KEYS,), (N_KEYS,)
    for bar, value in zip(score_bars, s):
        bar.set_height(value)
    lim = score_limit(d, scale)
    ax_s.set_ylim(-lim, lim)
    ax_s.set_title(f"first query's scores, {labels[scale]}, d_k = {d}", fontsize=9)
    for bar, value in zip(weight_bars, mean_row):
        bar.set_height(value)
    ax_w.set_title(f"rows sorted, averaged: largest {mean_row[0]:.2f} (flat 0.125)", fontsize=9)
    for name, line in curves.items():
        line.set_alpha(1.0 if name == scale else 0.35)
    ring.set_data([d], [mean_row[0]])
    return (f"Bar charts at d_k = {d}, {labels[scale]}: the first query's 8 scores reach "
            f"{np.abs(s).max():.1f} in size; the mean largest softmax weight of "
            f"{N_QUERIES} queries is {mean_row[0]:.2f} (flat: 0.125).")


def film(change=None):
    """Every d_k's picture for the scale picked, held in the browser: the slider shows each at
    once. A new scale films its ten pictures (once: they are kept)."""
    scale = scale_buttons.value
    live.film(dk_slider, draw, background=lambda d: score_limit(d, scale), key=scale)


scale_buttons.observe(film, names="value")
film()
show(
    widgets.VBox([dk_slider, scale_buttons, live.image, pressed_states()]),
    live,
    alt=draw(dk_slider.value),
)

# %% [markdown]
# Try $d_k = 512$ with no scale: the first query's scores reach 43.00 in size, and on average
# the largest key takes 0.96 of a row. Switch to $\div\sqrt{d_k}$: the same scores shrink by
# $\sqrt{512} \approx 22.6$ (to 1.90) and the mean largest weight is back to 0.37, about where it
# is at every $d_k$ with this scale; $\div d_k$ flattens the rows towards $1/8$ (0.13). The
# single query on the left still jumps around from one $d_k$ to the next: that is why the
# other two panels average over 50.

# %% [markdown]
# ## Challenge ★★★ — choose the scale: `scale_for_entropy(scores, target)`
#
# $1/\sqrt{d_k}$ is one scale fixed in advance for every input. Turn the question around:
# given a matrix of scores, shape $(n_q, n_k)$, and a target entropy in nats, find the scale
# $c > 0$ such that the rows of $\mathrm{softmax}(c \cdot \text{scores})$ have that **mean**
# entropy (within $10^{-3}$ nats). The check uses fresh scores and targets between flat
# ($\log n_k$) and one-hot (0). Design the search yourself; the hints say what property of the
# entropy makes it easy. Optional; hints and a solution as usual.
#
# *May use:* NumPy, `helpers.softmax`.

# %%
def scale_for_entropy(scores, target):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.scale_for_entropy.check(scale_for_entropy)

# %% [markdown]
# What it tells us about $\sqrt{d_k}$. So that this runs before you have an answer, the cell
# uses the course's own version, `scaling.entropy_scale` (in `src/helpers/scaling.py`; its
# source is one answer to the challenge, so read it after yours). Take the mean entropy that scaled rows of 16 keys have at $d_k = 4$ as the target,
# and ask which $c$ gives *unscaled* scores at larger $d_k$ that same entropy.

# %%
target = peaked["sqrt"]["entropy"][list(d_ks).index(4)]  # mean entropy at d_k = 4, scaled
rng = np.random.default_rng(1)
print(f"target: the mean entropy of scaled rows at d_k = 4, {target:.3f} nats")
for d in (16, 64, 256):
    raw = scaling.random_dot_products(d, 300, 16, rng)  # (300, 16) unscaled scores
    c = scaling.entropy_scale(raw, target)
    print(f"d_k = {d:>3}: c = {c:.4f}, 1/sqrt(d_k) = {1 / np.sqrt(d):.4f}, "
          f"c * sqrt(d_k) = {c * np.sqrt(d):.3f}")

# %% [markdown]
# The scale that keeps the entropy where it was is close to $1/\sqrt{d_k}$ at every width:
# $c \sqrt{d_k}$ stays near 1. The paper's choice is the one that keeps the softmax's regime
# the same as $d_k$ grows.

# %% [markdown]
# ## Summary
#
# - $QK^\top$ computes every query-key dot product $q_i \cdot k_j$ in one matrix product: an
#   $(n_q, n_k)$ matrix, rows = queries, columns = keys, not symmetric; loops give the same
#   numbers, one pair at a time.
# - For unit-variance entries $\mathrm{Var}(q \cdot k) = d_k$ (measured slope 1.004 on log-log);
#   dividing by $\sqrt{d_k}$ brings it back to 1. Without the scale the softmax saturates
#   towards one-hot: its gradient with respect to its input shrinks, and only a couple of keys
#   per row keep a weight (and so a learning signal) worth the name; dividing by $d_k$ makes
#   it flat instead; $\sqrt{d_k}$ keeps the same regime at every width. The scale does not
#   make the gradient reaching $q \cdot k$ larger (it multiplies it by $1/\sqrt{d_k}$); it
#   spreads it over the keys.
# - You wrote `scaled_scores(Q, K)`, the scaled scores for any $n_q$, $n_k$, $d_k$ and any
#   leading batch and head axes (swap only the last two axes of $K$). From lesson 04 on,
#   `helpers.scaled_dot_product_attention` computes them inside (its `scale` defaults to
#   $1/\sqrt{d_k}$).
#
# **Next**: [04 · softmax and attention](04_softmax_and_attention.ipynb): turn each row of
# scores into weights that sum to 1, and mix the values with them.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
