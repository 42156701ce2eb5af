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
# # 01 · The input Z: token embeddings + positional encodings
#
# **What you will learn**
# - how a sentence becomes one $d_{model}$-dimensional row per token: the token embeddings;
# - the paper's sinusoidal positional encodings, and why attention needs them;
# - $Z = \text{token embeddings} + \text{positional encodings}$, the input every later lesson
#   starts from, and why the two "the" rows of Z differ.
#
# **You need**: [00 · start here](00_start_here.ipynb).

# %%
import ipywidgets as widgets
import matplotlib.patheffects as pe
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks
from helpers.live import LiveFigure, show
from helpers.plots import plot_heatmap

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## Story so far: one vector per position
#
# Before any attention math runs, the model forms one vector per position:
#
# $$\mathbf{Z} = \text{token embeddings} + \text{positional encodings}$$
#
# Each row $z_{pos}$ is $d_{model}$-dimensional and carries both **what** the token is and
# **where** it sits. That Z (or, deeper in a stack of $\ell$ layers, the hidden sequence
# $H^{(\ell)}$) is the *input* to the block that builds Q, K and V; it is not Q, K and V
# themselves. Lesson 02 makes that difference concrete.

# %% [markdown]
# ## Tokens
#
# Our running sentence, split into tokens. Real models split text into sub-word pieces;
# here one word is one token.

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model = len(tokens), helpers.D_MODEL
print(tokens)
print(f"n = {n} tokens, d_model = {d_model}")

# %% [markdown]
# ## Token embeddings: what the token is
#
# A learned embedding table gives every token of the vocabulary a $d_{model}$-vector. Ours is a
# seeded stand-in (`helpers.token_embeddings`): each word always gets the same random
# vector. Stacking one row per token gives the $(n, d_{model})$ matrix $E$.

# %%
E = helpers.token_embeddings(tokens, d_model)  # (n, d_model)
print("E shape:", E.shape)
print(np.round(E, 3))

# %% [markdown]
# Both "the" tokens (positions 0 and 4) get **the same row**: the embedding knows *which*
# token, not *where*.

# %%
print("E[0] == E[4] (both 'the'):", np.array_equal(E[0], E[4]))

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.2))
plot_heatmap(E, tokens, [f"d{j}" for j in range(d_model)], ax=ax, cmap="cividis",
             title="Token embeddings E (rows = tokens, columns = dimensions)",
             xlabel="embedding dimension", ylabel="token")
plt.show()

# %% [markdown]
# Rows 0 and 4 ("the") are identical, colour for colour. If attention only saw E, it could not
# tell the first "the" from the second, nor "cat sat" from "sat cat": attention itself treats
# its input as a *set* (lesson 04 shows this: shuffle the rows and the output rows shuffle the
# same way). Order has to be written into the vectors.

# %% [markdown]
# ## Positional encodings: where the token sits
#
# The paper adds a fixed vector that depends only on the position. Column pair $(2i, 2i+1)$
# is a sine and a cosine at one frequency:
#
# $$PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right), \qquad
#   PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)$$
#
# The first pair turns fastest (one radian per position, a wavelength of $2\pi$ positions);
# each later pair turns more slowly. The last pair's wavelength is
# $2\pi \cdot 10000^{(d_{model}-2)/d_{model}}$ positions, approaching $2\pi \cdot 10000$ as
# $d_{model}$ grows ($2\pi \cdot 1000$ here, with $d_{model} = 8$). Every position gets
# a different pattern, and the same offset between two positions looks the same anywhere in the
# sequence (a rotation of each sin/cos pair).
#
# First, one entry by hand, with plain Python, so the formula is concrete:

# %%
import math

pos, i = 3, 1  # position 3, column pair i = 1 -> columns 2 (sin) and 3 (cos)
angle = pos / 10000 ** (2 * i / d_model)
print(f"angle = 3 / 10000^(2/8) = {angle:.4f}")
print(f"PE[3, 2] = sin(angle) = {math.sin(angle):.4f}")
print(f"PE[3, 3] = cos(angle) = {math.cos(angle):.4f}")

# %% [markdown]
# ### Exercise: `positional_encoding(n_positions, d_model)`
#
# Return the $(n\_positions, d_{model})$ matrix of the formula above, sines in the even
# columns, cosines in the odd ones. You may use loops or broadcasting; `d_model` is even.

# %%
def positional_encoding(n_positions, d_model):
    ### BEGIN SOLUTION
    pos = np.arange(n_positions)[:, None]  # (n, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, d_model/2): 0, 2, 4, ...
    angles = pos / 10000 ** (two_i / d_model)  # (n, d_model/2)
    PE = np.zeros((n_positions, d_model))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
    ### END SOLUTION


checks.positional_encoding.check(positional_encoding)

# %% [markdown]
# Stuck? `checks.positional_encoding.hint(1)` (then 2, 3), or
# `checks.positional_encoding.solution()`.
#
# From here on the lesson uses the course's own version,
# `helpers.sinusoidal_positional_encoding` (in `src/helpers/positions.py`), so it works
# whether or not you have answered yet. It agrees with the hand computation:

# %%
PE = helpers.sinusoidal_positional_encoding(n, d_model)  # (n, d_model)
print("PE shape:", PE.shape)
print(f"PE[3, 2] = {PE[3, 2]:.4f}, PE[3, 3] = {PE[3, 3]:.4f}")
print(np.round(PE, 3))

# %% [markdown]
# ### Seeing the pattern
#
# With more positions and dimensions the structure shows. Each column is a wave along the
# positions; the waves slow down from left to right. Move the sliders: the top plot follows
# one **dimension** down all positions, the bottom one shows one **position**'s whole vector.

# %%
N_SHOW, D_SHOW = 64, 32
PE_big = helpers.sinusoidal_positional_encoding(N_SHOW, D_SHOW)  # (64, 32)

live = LiveFigure(figsize=(10, 4.6))
axes = live.figure.subplot_mosaic([["heat", "column"], ["heat", "row"]], width_ratios=[1.1, 1])
heat_ax, col_ax, row_ax = axes["heat"], axes["column"], axes["row"]
heat = plot_heatmap(PE_big, ax=heat_ax, cmap="viridis", annotate=False, vmin=-1, vmax=1,
                    title="PE (rows = position, columns = dimension)",
                    xlabel="dimension", ylabel="position")
outline = [pe.Stroke(linewidth=4, foreground="black"), pe.Normal()]  # visible on any colour
col_line = heat_ax.axvline(0, color="white", lw=2, path_effects=outline)
row_line = heat_ax.axhline(0, color="orange", lw=2, path_effects=outline)
(col_curve,) = col_ax.plot(np.arange(N_SHOW), PE_big[:, 0], color="black")
col_ax.set(ylim=(-1.1, 1.1), xlabel="position", ylabel="value")
bars = row_ax.bar(np.arange(D_SHOW), PE_big[0], color="orange")
row_ax.set(ylim=(-1.1, 1.1), xlabel="dimension", ylabel="value")

live.animate([col_line, row_line, col_curve, *bars, col_ax.title, row_ax.title])  # the rest stays

dim_slider = widgets.IntSlider(0, 0, D_SHOW - 1, description="dimension")
pos_slider = widgets.IntSlider(0, 0, N_SHOW - 1, description="position")


def update(change=None):
    d, p = dim_slider.value, pos_slider.value
    kind = "sin" if d % 2 == 0 else "cos"
    col_line.set_xdata([d, d])
    row_line.set_ydata([p, p])
    col_curve.set_ydata(PE_big[:, d])
    col_ax.set_title(f"dimension {d}: {kind}(pos / 10000^({d - d % 2}/{D_SHOW}))", fontsize=9)
    for bar, height in zip(bars, PE_big[p]):
        bar.set_height(height)
    row_ax.set_title(f"position {p}: its whole encoding vector", fontsize=9)
    live.refresh()


dim_slider.observe(update, names="value")
pos_slider.observe(update, names="value")
update()
show(widgets.VBox([widgets.HBox([dim_slider, pos_slider]), live.image]), live,
     alt="Heatmap of 64 positions by 32 dimensions of sinusoidal encodings, with the curve of "
     "dimension 0 and the vector of position 0.")

# %% [markdown]
# Notice: dimension 0 oscillates quickly (period $2\pi \approx 6.3$ positions), dimension 30
# barely moves over 64 positions. Neighbouring positions differ mostly in the fast (left)
# columns, while the slow (right) columns barely move. But a fast column repeats every few
# positions, so on its own it cannot say *which* turn of the wave a position is on; the slow
# columns change steadily over long distances and settle that. Together, every position gets
# its own vector. Even and odd dimensions of a pair are the same wave shifted by a quarter turn
# (sin and cos). Measured, on the fastest pair (dimensions 0-1) and the slow half:

# %%
fastest, slow = slice(0, 2), slice(16, 32)  # the first pair and the last 16 of 32 dimensions
for a, b in ((10, 11), (10, 54)):
    change = np.abs(PE_big[a] - PE_big[b])  # (32,)
    print(f"positions {a} and {b}: largest change in dimensions 0-1: {change[fastest].max():.3f}, "
          f"in dimensions 16-31: {change[slow].max():.3f}")

# %% [markdown]
# Neighbours (10 and 11) differ by 0.843 in the fastest pair while the slow columns barely
# move (0.010). Positions 10 and 54 are 44 apart, almost exactly 7 turns of the fastest wave
# ($7 \cdot 2\pi \approx 43.98$), so dimensions 0-1 hardly tell them apart (0.015); the slow
# columns do (0.414).

# %% [markdown]
# ## Z = token embeddings + positional encodings
#
# Adding the two gives the input to attention, one row per position.

# %%
Z = E + PE  # (n, d_model)
print("Z shape:", Z.shape)
print(np.round(Z, 3))
print("same as helpers.build_Z:", np.allclose(Z, helpers.build_Z(tokens, d_model)))

# %% [markdown]
# The two "the" rows had identical embeddings. In Z they differ, and by exactly the difference
# of their positional encodings:

# %%
print("E[0] == E[4]:", np.array_equal(E[0], E[4]))
print("Z[0] == Z[4]:", np.array_equal(Z[0], Z[4]))
print("Z[4] - Z[0] == PE[4] - PE[0]:", np.allclose(Z[4] - Z[0], PE[4] - PE[0]))
print("Z[4] - Z[0] =", np.round(Z[4] - Z[0], 3) + 0.0)  # + 0.0 turns -0.0 into 0.0

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.3), layout="constrained")
dims = [f"d{j}" for j in range(d_model)]
rows = [f"{pos} {token}" for pos, token in enumerate(tokens)]  # "0 the", "1 cat", ...
for ax, M, title, ylabel in zip(
    axes,
    (E, PE, Z),
    ("E (what): depends only on the token", "PE (where): depends only on the position",
     "Z = E + PE: token and position"),
    ("token", "position", "position and token"),
):
    plot_heatmap(M, rows, dims, ax=ax, cmap="cividis", vmin=-2.5, vmax=2.5, annotate=False,
                 title=title, xlabel="dimension", ylabel=ylabel)
plt.show()

# %% [markdown]
# In E the rows for "the" (0 and 4) match; PE adds a different pattern to each position,
# whatever token sits there; in Z the two "the" rows no longer match. Attention, which compares rows, can now tell them apart.

# %% [markdown]
# ## Summary
#
# - A sentence becomes one $d_{model}$-vector per token: the token embeddings $E$, identical for
#   identical tokens.
# - The sinusoidal positional encodings give each position its own pattern of sines and
#   cosines at geometrically spaced frequencies; without them attention could not see order.
# - $Z = E + PE$ is the $(n, d_{model})$ input to self-attention; the two "the" rows of Z differ
#   by exactly $PE_4 - PE_0$.
#
# **Next**: [02 · queries, keys, values](02_queries_keys_values.ipynb): three projections of
# the same Z, and why they are not the embeddings.
