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
from helpers.live import LiveFigure, show, slider
from helpers.plots import heatmap_alt, plot_heatmap, show_figure

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## Story so far: one vector per position
#
# Before any attention math runs, the model forms one vector per position:
#
# $$\mathbf{Z} = \text{token embeddings} + \text{positional encodings}$$
#
# Each row $z_{pos}$ is $d_{model}$-dimensional and carries both **what** the token is and
# **where** it sits. That Z (or, deeper in the stack, the hidden sequence a layer receives,
# $X^{(2)}$ for the second layer and so on) is the *input* to the block that builds Q, K and V;
# it is not Q, K and V themselves. Lesson 02 makes that difference concrete.

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
plot_heatmap(E, tokens, [f"d{c}" for c in range(d_model)], ax=ax, signed=True,
             title="Token embeddings E (rows = tokens, columns = dimensions)",
             xlabel="embedding dimension", ylabel="token")
show_figure(fig, heatmap_alt(E, tokens, [f"d{c}" for c in range(d_model)], "token embeddings E",
                             rows="token", cols="dimension")
            + f" Rows 0 and 4 (both 'the') are identical: {np.array_equal(E[0], E[4])}.")

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
# Here $i$ is the paper's index of a **column pair** (one frequency), not a position. We keep
# the paper's letter for the encodings of this lesson; everywhere else, from lesson 02 on, $i$
# is the query position.
#
# Pair $i$ turns at the frequency $w_i = 1/10000^{2i/d_{model}}$ radians per position, so its
# wave repeats every $2\pi / w_i = 2\pi \cdot 10000^{2i/d_{model}}$ positions (its
# wavelength):

# %%
import math

for i in range(d_model // 2):  # column pairs (0, 1), (2, 3), ...
    w_i = 1 / 10000 ** (2 * i / d_model)
    print(f"pair i = {i} (columns {2 * i}, {2 * i + 1}): w_i = {w_i:.4f} radians per position, "
          f"wavelength 2π / w_i = {2 * math.pi / w_i:.3f} positions")

# %% [markdown]
# The first pair turns fastest (one radian per position, a wavelength of $2\pi$ = 6.283
# positions); each later pair turns more slowly, and the last one here needs 6283.185
# positions, $2\pi \cdot 1000$, for one turn (with the paper's $d_{model} = 512$ it approaches
# $2\pi \cdot 10000$). Every position gets a different pattern, and the same offset between two
# positions is the same linear map anywhere in the sequence (a rotation of each sin/cos pair:
# the challenge at the end of this lesson proves it), so the dot product
# $PE_{pos} \cdot PE_{pos+k}$ depends on the offset $k$ only.
#
# One entry by hand, with plain Python, so the formula is concrete:

# %%
pos, i = 3, 1  # position 3, column pair i = 1 -> columns 2 (sin) and 3 (cos)
angle = pos / 10000 ** (2 * i / d_model)
print(f"angle = 3 / 10000^(2/8) = {angle:.4f}")
print(f"PE[3, 2] = sin(angle) = {math.sin(angle):.4f}")
print(f"PE[3, 3] = cos(angle) = {math.cos(angle):.4f}")

# %% [markdown]
# ### Exercise 1 ★ — `positional_encoding(n_positions, d_model)`
#
# The cell above computed one entry. Write the whole $(n\_positions, d_{model})$ matrix of the
# formula: sines in the even columns, cosines in the odd ones, for any number of positions
# and any even `d_model`. Loops or broadcasting, as you like. The check tries fresh sizes, not
# the running example.
#
# *May use:* NumPy only.

# %%
def positional_encoding(n_positions, d_model):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


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
# positions; the waves slow down from left to right. Move the two sliders (drag one, or Tab to
# it and use the arrow keys, Page Up/Down, Home and End, or press its − and + buttons): the
# first follows one **dimension** (a column of the heatmap) down all positions, the second
# shows one **position**'s whole vector (a row).

# %%
N_SHOW, D_SHOW = 64, 32
PE_big = helpers.sinusoidal_positional_encoding(N_SHOW, D_SHOW)  # (64, 32)
outline = [pe.Stroke(linewidth=4, foreground="black"), pe.Normal()]  # visible on any colour


def heatmap_beside(title):
    """A figure: the PE heatmap on the left, an empty plot on the right (returned)."""
    live = LiveFigure(figsize=(10, 3.4))
    heat_ax, side_ax = live.figure.subplots(1, 2, width_ratios=[1, 1.25])
    plot_heatmap(PE_big, ax=heat_ax, signed=True, annotate=False, vmin=-1, vmax=1,
                 title=title, xlabel="dimension", ylabel="position")
    side_ax.set(ylim=(-1.1, 1.1), ylabel="value")
    return live, heat_ax, side_ax


# One figure per slider, each picture drawn once for every value and held in the browser
# (LiveFigure.film): a move shows its picture at once, without waiting for Python.
column_live, heat_ax, col_ax = heatmap_beside("PE: one column marked")
col_line = heat_ax.axvline(0, color="white", lw=2, path_effects=outline)
(col_curve,) = col_ax.plot(np.arange(N_SHOW), PE_big[:, 0], color="black")
col_ax.set(xlabel="position")
column_live.animate([col_line, col_curve, col_ax.title])  # the rest is drawn once

row_live, heat_ax, row_ax = heatmap_beside("PE: one row marked")
row_line = heat_ax.axhline(0, color="orange", lw=2, path_effects=outline)
# The bars as one collection of thick lines: one artist to redraw, not 32.
bars = row_ax.vlines(np.arange(D_SHOW), 0, PE_big[0], color="orange", lw=9)
row_ax.set(xlabel="dimension", xlim=(-1, D_SHOW))
row_live.animate([row_line, bars, row_ax.title])

# The course's sliders (helpers.live.slider): named, keyboard-driven, their value said in words.
dim_slider = slider("dimension", range(D_SHOW), value=0,
                    text=lambda d: f"dimension {d}, {'sine' if d % 2 == 0 else 'cosine'}")
pos_slider = slider("position", range(N_SHOW), value=0, text="position {}")


def draw_dimension(d):
    """The first figure at dimension d; returns what it shows, in words."""
    kind = "sin" if d % 2 == 0 else "cos"
    col_line.set_xdata([d, d])
    col_curve.set_ydata(PE_big[:, d])
    col_ax.set_title(f"dimension {d}: {kind}(pos / 10000^({d - d % 2}/{D_SHOW}))", fontsize=9)
    wavelength = 2 * np.pi * 10000 ** ((d - d % 2) / D_SHOW)  # positions per turn
    return (f"Heatmap of {N_SHOW} positions by {D_SHOW} dimensions of sinusoidal encodings, "
            f"column {d} marked, beside its curve: dimension {d} ({kind}) is a wave "
            f"{wavelength:,.0f} positions long ({N_SHOW / wavelength:.2g} turns over the "
            f"{N_SHOW} shown), from {PE_big[:, d].min():.2f} to {PE_big[:, d].max():.2f}.")


def draw_position(p):
    """The second figure at position p; returns what it shows, in words."""
    row_line.set_ydata([p, p])
    bars.set_segments([[(j, 0), (j, value)] for j, value in enumerate(PE_big[p])])
    row_ax.set_title(f"position {p}: its whole encoding vector", fontsize=9)
    return (f"The same heatmap, row {p} marked, beside its {D_SHOW} values as bars: position "
            f"{p}'s encoding runs from {PE_big[p].min():.2f} to {PE_big[p].max():.2f}.")


column_live.film(dim_slider, draw_dimension)
row_live.film(pos_slider, draw_position)
show(widgets.VBox([dim_slider, column_live.image]), column_live,
     alt=draw_dimension(dim_slider.value))
show(widgets.VBox([pos_slider, row_live.image]), row_live, alt=draw_position(pos_slider.value))

# %% [markdown]
# How far does each end of the heatmap move over the 64 positions?

# %%
for d in (0, 30):
    column = PE_big[:, d]  # (64,): one dimension down all positions
    print(f"dimension {d:>2} over {N_SHOW} positions: from {column.min():.3f} "
          f"to {column.max():.3f}")

# %% [markdown]
# Notice: dimension 0 oscillates quickly between -1 and 1 (its wavelength is $2\pi$ = 6.283
# positions, as printed above for pair 0); dimension 30 barely moves, from 0.000 to 0.011 over
# all 64 positions. Even and odd dimensions of a pair are the same wave shifted by a quarter
# turn (sin and cos).
#
# **Predict first.** Positions 10 and 54 are 44 apart. Which part of their encodings differs
# more: the fastest pair, dimensions 0-1 (`"fast"`), or the slow half, dimensions 16-31
# (`"slow"`)? Write your guess, run the check, then the measurement under it.

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.pe_far_positions.check(guess)

# %%
fastest, slow = slice(0, 2), slice(16, 32)  # the first pair and the last 16 of 32 dimensions
for a, b in ((10, 11), (10, 54)):
    change = np.abs(PE_big[a] - PE_big[b])  # (32,)
    print(f"positions {a} and {b}: largest change in dimensions 0-1: {change[fastest].max():.3f}, "
          f"in dimensions 16-31: {change[slow].max():.3f}")
print(f"7 turns of the fastest wave: 7 · 2π = {7 * 2 * math.pi:.2f} positions")

# %% [markdown]
# Neighbours (10 and 11) differ by 0.843 in the fastest pair while the slow columns barely
# move (0.010). Positions 10 and 54 are 44 apart, almost exactly 7 turns of the fastest wave
# ($7 \cdot 2\pi \approx 43.98$), so dimensions 0-1 hardly tell them apart (0.015); the slow
# columns do (0.414).
#
# So each end does one job. A fast column repeats every few positions, so on its own it cannot
# say *which* turn of the wave a position is on; the slow columns change steadily over long
# distances and settle that. Together, every position gets its own vector.

# %% [markdown]
# ## Z = token embeddings + positional encodings
#
# Adding the two gives the input to attention, one row per position.

# %% [markdown]
# **The paper scales the embeddings first.** Section 3.4: *"In the embedding layers, we
# multiply those weights by $\sqrt{d_{model}}$."* The same section shares this matrix with
# the output projection before the softmax, a common reason for its entries to be small. The
# paper does not say why it multiplies; one way to see what it does is to compare sizes.
# Assume an embedding table initialised with small entries, of standard deviation
# $1/\sqrt{d_{model}}$ (an assumption: the paper does not state its initialisation), and compare
# it with PE before and after the multiplication:

# %%
rng = np.random.default_rng(0)
table = rng.normal(0, 1 / np.sqrt(d_model), (1000, d_model))  # a small-init table, 1000 words
print(f"sqrt(d_model) = sqrt({d_model}) = {np.sqrt(d_model):.3f}")
print(f"std of the table: {table.std():.3f}; times sqrt(d_model): "
      f"{(table * np.sqrt(d_model)).std():.3f}")
print(f"root mean square of PE: {np.sqrt(np.mean(PE**2)):.3f} (1/sqrt(2) = {1 / np.sqrt(2):.3f})")
print(f"std of our E (drawn from a standard normal, 48 entries): {E.std():.3f}")
tables = {d_model: table, 512: rng.normal(0, 1 / np.sqrt(512), (1000, 512))}  # ours, the paper's
for d, small_table in tables.items():
    token_size = small_table.std()  # a small-init table's entries, unscaled
    position_size = np.sqrt(np.mean(helpers.sinusoidal_positional_encoding(1000, d) ** 2))
    share = token_size**2 / (token_size**2 + position_size**2)  # token's part of E + PE's size²
    print(f"d_model = {d:>3}, unscaled: token entries {token_size:.3f} against PE's "
          f"{position_size:.3f} ({position_size / token_size:.1f} times smaller); the token "
          f"is {share:.1%} of the sum's squared size; times sqrt({d}): "
          f"{token_size * np.sqrt(d):.3f}")

# %% [markdown]
# Unscaled, the table's entries (0.355) would be half the size of PE's (0.707) at our
# $d_{model} = 8$: the position would outweigh the token in the sum, 2.0 times over, though
# the token would still carry 20.1% of the sum's squared size. The gap grows with the width, because the initial
# entries shrink like $1/\sqrt{d_{model}}$ while PE's stay at $1/\sqrt{2}$: at the paper's
# $d_{model} = 512$ the token entries would measure 0.044 against 0.707, 16.0 times smaller,
# and the token only 0.4% of the sum: there the position would drown the token. Times
# $\sqrt{d_{model}}$ (2.828 here) they measure 1.003 (1.001 at 512), the same order as PE's
# 0.707. Our
# seeded $E$ is drawn from a standard normal to begin with (its 48 entries measure 0.862), the
# size the paper's multiplication produces, so the course adds $E + PE$ as they are.

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
dims = [f"d{c}" for c in range(d_model)]
limit = max(np.abs(E).max(), np.abs(Z).max())  # E and Z share one range, so colours compare
panels = (  # (matrix, row labels, title, y label, colour range)
    (E, tokens, "E (what): depends only on the token", "token", limit),
    (PE, [str(p) for p in range(n)], "PE (where): depends only on the position", "position",
     1.0),
    (Z, [f"{p} {token}" for p, token in enumerate(tokens)], "Z = E + PE: token and position",
     "position and token", limit),
)
for ax, (M, rows, title, ylabel, lim) in zip(axes, panels):
    plot_heatmap(M, rows, dims, ax=ax, signed=True, vmin=-lim, vmax=lim, annotate=False,
                 title=title, xlabel="dimension", ylabel=ylabel)
show_figure(fig, f"Three heatmaps, {n} rows by {d_model} dimensions: E (by token), PE (by "
                 f"position) and Z = E + PE; colour range ±{limit:.3f} for E and Z, ±1 for PE. "
                 f"Rows 0 and 4 ('the') are equal in E: {np.array_equal(E[0], E[4])}; in Z: "
                 f"{np.array_equal(Z[0], Z[4])}.")
print(f"colour ranges: E and Z ±{limit:.3f} (the larger of their largest |entries|), PE ±1")

# %% [markdown]
# Each panel has its own colour bar. E and Z share one range, so a colour means the same number
# in both; PE gets its own, $\pm 1$, because its entries never leave $[-1, 1]$ and on E's range
# they would all look pale. In E the rows for "the" (0 and 4) match; PE adds a different
# pattern to each position (its rows are positions 0 to 5, whatever token sits there); in Z the
# two "the" rows no longer match. Attention, which compares rows, can now tell them apart.

# %% [markdown]
# ## Challenge ★★★ — relative positions: `pe_shift_matrix(k, d_model)`
#
# The paper chose the sinusoids because, it says, *"for any fixed offset $k$, $PE_{pos+k}$ can
# be represented as a linear function of $PE_{pos}$"*. Prove it by building that linear
# function: return the $(d_{model}, d_{model})$ matrix $M_k$ with
#
# $$PE[pos + k] = PE[pos]\, M_k \quad \text{for every position } pos,$$
#
# one matrix for all positions (a row vector times $M_k$). Start from one column pair and the
# angle-sum formulas for $\sin(a + b)$ and $\cos(a + b)$. Optional; hints and a solution as
# usual.
#
# *May use:* NumPy, `helpers.sinusoidal_positional_encoding`.

# %%
def pe_shift_matrix(k, d_model):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.pe_shift_matrix.check(pe_shift_matrix)

# %% [markdown]
# What it means: moving $k$ positions along the sentence is the same rotation of every sin/cos
# pair, wherever you start. That is why the paper chose these functions: it *"hypothesized it
# would allow the model to easily learn to attend by relative positions"*, one fixed linear map
# per offset rather than one per position. A hypothesis, not a measurement: the paper also
# reports that learned positional embeddings *"produced nearly identical results"*, and $M_k$
# shifts PE alone: applied to $Z = E + PE$ it would rotate $E$'s columns too, so no fixed
# linear map of $Z$ shifts the position alone.

# %% [markdown]
# ## Summary
#
# - A sentence becomes one $d_{model}$-vector per token: the token embeddings $E$, identical for
#   identical tokens.
# - The sinusoidal positional encodings give each position its own pattern of sines and
#   cosines at geometrically spaced frequencies; without them attention with no mask (an
#   encoder's) could not see order. (A causal decoder of several layers can learn position
#   from its mask alone, Haviv et al. 2022 and Kazemnejad et al. 2023; lesson 08 shows what one
#   causal layer without positional encodings cannot do.)
# - $Z = E + PE$ is the $(n, d_{model})$ input to self-attention; the two "the" rows of Z differ
#   by exactly $PE_4 - PE_0$. (The paper first multiplies the embedding weights by
#   $\sqrt{d_{model}}$; our $E$ is already drawn at that scale.)
#
# **Next**: [02 · queries, keys, values](02_queries_keys_values.ipynb): three projections of
# the same Z, and why they are not the embeddings.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
