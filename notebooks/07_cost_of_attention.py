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
# # 07 · The cost of attention
#
# **What you will learn**
# - why attention costs $O(n^2)$ time and memory in the sequence length $n$, measured: time and
#   peak memory against $n$ on a log-log plot, with the fitted slope;
# - what that means in bytes, from our 6-token sentence to a 100k-token context, and the
#   paper's Table 1: when self-attention is cheaper than a recurrent layer, and why its paths
#   are shorter;
# - blockwise attention with an **online softmax** (the idea behind FlashAttention), which you
#   build yourself: the same output, to $10^{-12}$, without ever holding the $n \times n$
#   matrix; and why cutting the time too takes approximations (sparse, linear attention, etc.).
#
# **You need**: [02 · queries, keys, values](02_queries_keys_values.ipynb) (its RNN path
# demonstration), [04 · softmax and attention](04_softmax_and_attention.ipynb) and
# [05 · causal masking](05_causal_masking.ipynb).

# %%
import os

# One thread for NumPy's linear algebra (BLAS), set before NumPy is imported: see "Measured"
# below. It changes how fast the lesson runs, not any result.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS"):
    os.environ[variable] = "1"

import time
import tracemalloc
from functools import partial

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import blockwise, checks
from helpers.blockwise import online_softmax_steps
from helpers.live import LiveFigure, show, slider
from helpers.plots import show_figure

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## The n × n matrix
#
# Self-attention compares every query with every key: $QK^\top$ has one score per pair, so
# for $n$ tokens the weights $A = \text{softmax}(QK^\top/\sqrt{d_k})$ form an $n \times n$
# matrix, per head. Our running sentence, one head ($d_k = 4$):

# %%
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
n, d_model = len(tokens), helpers.D_MODEL
Z = helpers.build_Z(tokens)  # (n, d_model)
W = helpers.seeded_projections(d_model, helpers.N_HEADS)
Q, K, V = (Z @ W[name][0] for name in ("W_Q", "W_K", "W_V"))  # head 0: (n, d_k) each
out, A = helpers.scaled_dot_product_attention(Q, K, V)
print("Q, K, V:", Q.shape, K.shape, V.shape)
print("weights A:", A.shape, f"= {A.size} numbers, {A.nbytes} bytes in float64")

# %% [markdown]
# **Apply what lesson 00 counted.** Lesson 00's slider counted the query-key pairs of $n$
# tokens; Q, K and V have one row per token, and $A$ holds one weight per pair (8 bytes each
# in float64). If the sentence doubles in length ($n \to 2n$), by what factor does the memory
# of the weights $A$ grow? Put your number in `guess` and run the cell; the cell after it
# counts.

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.score_memory_doubling.check(guess)

# %%
for n_tokens in (6, 12, 24, 1024, 2048, 4096):
    print(f"n = {n_tokens:5d}: Q has {n_tokens * 4:6d} numbers, A has {n_tokens**2:10,d}")
print("A at n = 12 / A at n = 6:", 12**2 // 6**2, "  A at n = 4096 / A at n = 2048:",
      4096**2 // 2048**2)

# %% [markdown]
# Q, K and V grow like $n$ (one row per token), but $A$ grows like $n^2$: doubling the
# sentence quadruples the matrix.

# %% [markdown]
# ## Measured: time and memory against n
#
# The claim is $O(n^2)$. We time `helpers.scaled_dot_product_attention` for one head with the
# paper's $d_k = 64$, from $n = 64$ to $n = 4096$, and record its **peak memory** with
# `tracemalloc` (Python's allocation tracer, which also sees NumPy's arrays) during one more
# call.
#
# Timing is noisy: other programs take the CPU for a moment, and a call that is interrupted
# takes longer. So each size is timed several times and we keep the **minimum**, the run that
# was interrupted least: the best estimate of what the computation itself costs. A small $n$
# runs in well under a millisecond, so each timing there covers several calls; one call at
# $n = 4096$ already takes a good fraction of a second, so it gets just 2 timings and the lesson
# stays fast. That is also why the first cell set BLAS, the library behind `@`, to one thread:
# with more, each product is split between threads, and on a busy machine a thread can wait
# tens of milliseconds for a free core, so the times jump up and down with $n$. The times depend
# on your machine, so this cell's output will differ from the stored one.

# %% tags=["nbval-ignore-output"]
def best_time(fn, repeats, number=1):
    """Shortest wall time (s) of one call of `fn()`, over `repeats` timings of `number` calls."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def peak_memory(fn):
    """Peak traced memory (bytes) during one call of `fn()`, and its result."""
    tracemalloc.start()
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, result


rng = np.random.default_rng(0)
d_k = 64
sizes = [64, 128, 256, 512, 1024, 2048, 4096]
repeats = {64: 7, 128: 7, 256: 7, 512: 7, 1024: 7, 2048: 3, 4096: 2}  # timings per size
number = {64: 20, 128: 10, 256: 5, 512: 2, 1024: 1, 2048: 1, 4096: 1}  # calls per timing
naive_time, naive_peak, inputs, naive_out = [], [], {}, {}
for size in sizes:
    inputs[size] = rng.standard_normal((3, size, d_k))  # Q, K, V: (n, d_k) each, float64
    call = partial(helpers.scaled_dot_product_attention, *inputs[size])  # fn() = one call
    t = best_time(call, repeats[size], number[size])
    peak, (naive_out[size], _) = peak_memory(call)
    naive_time.append(t)
    naive_peak.append(peak)
    print(f"n = {size:4d}: {1e3 * t:8.2f} ms, peak {peak / 1e6:7.2f} MB")

# %% [markdown]
# On a log-log plot a power law $y = c\,n^p$ is a straight line of slope $p$. We fit the slope
# on the larger sizes ($n \ge 1024$), where the $n^2$ work dominates the costs that grow like
# $n$ or not at all (checking the input, the $(n, d_k)$ arrays, calling into BLAS).

# %% tags=["nbval-ignore-output"]
def slope(ns, ys, n_min=1024):
    """Slope of log(y) against log(n), fitted on the points with n >= n_min."""
    keep = np.asarray(ns) >= n_min
    return float(np.polyfit(np.log(np.asarray(ns)[keep]), np.log(np.asarray(ys)[keep]), 1)[0])


time_slope, memory_slope = slope(sizes, naive_time), slope(sizes, naive_peak)
print(f"time:   slope {time_slope:.2f} for n >= 1024 "
      f"(and {slope(sizes[:4], naive_time[:4], 0):.2f} for n <= 512)")
print(f"memory: slope {memory_slope:.2f} for n >= 1024")

# %% [markdown]
# The memory slope is the cleanest measurement (it does not depend on what else the machine is
# doing); rounded to one decimal it is exactly the 2 of $n^2$:

# %%
print("memory slope, rounded:", round(memory_slope, 1))
print("peak at n = 4096 is at least one float64 n x n matrix:", naive_peak[-1] >= 4096**2 * 8)

# %% tags=["nbval-ignore-output"]
def plain_log_ticks(axis, ticks, labels):
    """Fixed tick labels on a log axis (plain text, no minor ticks): quicker to draw, easier to read."""
    axis.set_ticks(ticks, labels)
    axis.set_minor_locator(plt.NullLocator())


fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
ns = np.array(sizes, dtype=float)
for ax, ys, unit, what, fitted in (
    (ax_t, np.array(naive_time) * 1e3, "ms", "time per call", time_slope),
    (ax_m, np.array(naive_peak) / 1e6, "MB", "peak memory", memory_slope),
):
    ax.loglog(ns, ys, "o-", color="#1f77b4", label=f"measured (fitted slope {fitted:.2f})")
    reference = ys[-1] * (ns / ns[-1]) ** 2
    ax.loglog(ns, reference, ":", color="black", label="n² (slope 2)")
    ax.set(xlabel="sequence length n", ylabel=f"{what} ({unit})", title=f"{what} against n")
    plain_log_ticks(ax.xaxis, ns, [str(s) for s in sizes])
    decades = 10.0 ** np.arange(np.floor(np.log10(min(ys.min(), reference.min()))),
                                np.ceil(np.log10(ys.max())) + 1)
    plain_log_ticks(ax.yaxis, decades, [f"{d:g}" for d in decades])
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)
fig.suptitle("scaled_dot_product_attention, one head, d_k = 64 (log-log axes)")
show_figure(fig, f"Two log-log plots against n from {sizes[0]} to {sizes[-1]} of one head's "
                 f"attention (d_k = 64), with an n² reference line: time per call (fitted slope "
                 f"{time_slope:.2f}) and peak memory (fitted slope {memory_slope:.2f}), "
                 f"{naive_peak[-1] / 1e6:.0f} MB at n = {sizes[-1]}.")

# %% [markdown]
# Notice: the memory points sit on the slope-2 line from $n \approx 512$ on: each doubling of
# $n$ costs four times the memory. The time points also make a straight line at large $n$:
# its slope, the first printed above, comes out near 2, a little above or below it from run to
# run and machine to machine. Where it is above 2, a likely cause, which this lesson does not
# measure: once the matrix outgrows the CPU's caches, each of its $n^2$ numbers takes longer
# to reach. At small $n$ the line is flatter (the second slope printed above): a call is
# short, and the costs that do not grow like $n^2$ (checking the input, calling functions, the
# $(n, d_k)$ arrays) weigh more. The memory count has none of this noise: it counts bytes.

# %% [markdown]
# ## What that means for a 100k-token context
#
# One float32 score matrix (4 bytes per number) for one head, one layer, $n = 100\,000$:

# %%
n_long = 100_000
one_matrix = n_long * n_long * 4  # bytes
print(f"{n_long:,} x {n_long:,} x 4 bytes = {one_matrix:,} bytes = {one_matrix / 1e9:.0f} GB")
print(f"helpers.blockwise.score_matrix_bytes({n_long:,}) = {blockwise.score_matrix_bytes(n_long):,}")
print(f"the same for 32 heads: {32 * one_matrix / 1e12:.2f} TB")

# %% [markdown]
# 40 GB for *one* head of *one* layer: more than a laptop's memory, half of a large GPU's
# 80 GB. A model with 32 heads would need 1.28 TB for one layer's attention-weight (score)
# matrices (not its parameters: those do not depend on $n$). Long-context models therefore
# never store this matrix whole; the rest of this lesson shows the exact way to avoid it, and
# the end of the lesson the approximate ones.

# %% [markdown]
# ### Exercise 1 ★ — `score_matrix_bytes(n, h, batch, dtype)`
#
# The cell above counted one head, one sequence, float32. Generalise: return the number of
# bytes needed to store the attention weights of **one layer** for a **batch** of `batch`
# sequences of length `n`, with `h` heads, in the number type `dtype` (`np.float16`,
# `np.float32`, `np.float64`, or their names such as `"float32"`).
# `np.dtype(dtype).itemsize` gives the bytes per number. Return an `int` (a Python or NumPy
# integer): the check refuses a float, even a whole one, because a float holds whole numbers
# exactly only up to $2^{53}$ (about $9 \times 10^{15}$) and the check also asks for more.
#
# *May use:* NumPy only.

# %%
def score_matrix_bytes(n, h, batch, dtype):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.score_matrix_bytes.check(score_matrix_bytes)

# %% [markdown]
# Stuck? `checks.score_matrix_bytes.hint(1)` (then 2, 3), or
# `checks.score_matrix_bytes.solution()`. The lesson continues with the course's version,
# `helpers.blockwise.score_matrix_bytes`, so it works whether or not you have answered.
#
# For example, a layer with $h = 8$ heads, as in the paper's base model, on a batch of 32
# sequences of 512 tokens in float32 (an illustration: the paper itself batched sentence pairs
# of similar length, counted in tokens):

# %%
base = blockwise.score_matrix_bytes(512, h=8, batch=32, dtype=np.float32)
print(f"{base:,} bytes = {base / 1e9:.2f} GB per layer")

# %% [markdown]
# ### Predict the memory: slide n
#
# The line is `score_matrix_bytes(n, h, batch=1, float32)` on log-log axes; the dashed lines
# mark 16 GB (a laptop) and 80 GB (a large GPU). Slide $n$ (each step doubles it) and pick the
# number of heads.

# %%
GB = 1e9
n_options = [2**k for k in range(6, 18)]  # 64 ... 131072
n_grid = np.logspace(np.log2(64), np.log2(2**17), 200, base=2)

live = LiveFigure(figsize=(7.5, 3.8))
ax = live.figure.subplots()
(curve,) = ax.loglog(n_grid, n_grid**2 * 4 / GB, color="#1f77b4", label="predicted")
(marker,) = ax.loglog([n_options[0]], [n_options[0] ** 2 * 4 / GB], "o", color="#d62728", ms=8)
for limit, name in ((16, "16 GB laptop"), (80, "80 GB GPU")):
    ax.axhline(limit, ls="--", color="grey", lw=1)
    ax.text(70, limit * 1.25, name, color="grey", fontsize=9)
ax.set(xlabel="sequence length n", ylabel="attention weights per layer", ylim=(1e-5, 1e4))
plain_log_ticks(ax.xaxis, [64, 512, 4096, 32768, 131072],  # up to the last point, 2**17
                ["64", "512", "4,096", "32,768", "131,072"])
plain_log_ticks(ax.yaxis, [1e-5, 1e-3, 1e-1, 1e1, 1e3],
                ["10 kB", "1 MB", "100 MB", "10 GB", "1 TB"])
ax.grid(True, which="major", alpha=0.3)

# A slider over n (helpers.live.slider: named, keyboard-driven, says "n = 4,096 tokens"); a
# drop-down for the four head counts, a short list of common choices.
n_picker = slider("sequence length", n_options, value=4096, text="n = {:,} tokens")
h_picker = widgets.Dropdown(options=[1, 8, 16, 32], value=8, description="heads h")


def readable_bytes(size):
    """A byte count in kB, MB, GB or TB (powers of 1000, as on the axis), 3 significant digits."""
    for unit, factor in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= factor:
            return f"{size / factor:.3g} {unit}"
    return f"{size} bytes"


def draw(n_now):
    """The figure at sequence length n_now with the heads picked; returns it in words."""
    h_now = h_picker.value
    curve.set_ydata(blockwise.score_matrix_bytes(1, h=h_now) * n_grid**2 / GB)
    size = blockwise.score_matrix_bytes(n_now, h=h_now, batch=1, dtype=np.float32)
    marker.set_data([n_now], [size / GB])
    ax.set_title(f"n = {n_now:,}, h = {h_now}, float32: {readable_bytes(size)} per layer")
    return (f"Log-log line of the predicted attention-weight memory against n, for {h_now} "
            f"heads in float32, with 16 GB and 80 GB reference lines; at n = {n_now:,}: "
            f"{readable_bytes(size)} per layer.")


def film(change=None):
    """Every n's picture for the heads picked, held in the browser: the slider shows each at
    once (a new head count films its 12 pictures, once)."""
    live.film(n_picker, draw, key=h_picker.value)


h_picker.observe(film, names="value")
film()
show(widgets.VBox([n_picker, h_picker, live.image]), bytes(live.image.value),
     alt=draw(n_picker.value))

# %% [markdown]
# The numbers behind the figure:

# %%
at_4096 = blockwise.score_matrix_bytes(4096, h=8)  # float32, batch 1
crossing = np.sqrt(16e9 / (8 * 4))  # 8 heads x n^2 x 4 bytes = 16 GB
at_max = blockwise.score_matrix_bytes(131_072, h=32)
print(f"n = 4,096, h = 8: {readable_bytes(at_4096)};  16 GB reached at n = {crossing:,.0f};  "
      f"n = 131,072, h = 32: {readable_bytes(at_max)}")

# %% [markdown]
# Notice: with 8 heads, $n = 4096$ needs about half a gigabyte (537 MB) per layer, and the line
# crosses the laptop's 16 GB at $n = 22\,361$. Pick $n = 131\,072$ with 32 heads:
# 2.2 TB.

# %% [markdown]
# ## The paper's Table 1: attention against recurrence
#
# Section 4 of the paper ("Why Self-Attention") compares layer types on three counts; $n$ is
# the sequence length, $d$ the representation width ($d_{model}$), $k$ a convolution's kernel
# size and $w$ the neighbourhood (window) size of a restricted self-attention (the paper calls
# it $r$; this course keeps $r_t$ for the RNN's state of lesson 02):
#
# | layer type | complexity per layer | sequential operations | maximum path length |
# |---|---|---|---|
# | self-attention | $O(n^2 \cdot d)$ | $O(1)$ | $O(1)$ |
# | recurrent | $O(n \cdot d^2)$ | $O(n)$ | $O(n)$ |
# | convolutional | $O(k \cdot n \cdot d^2)$ | $O(1)$ | $O(\log_k(n))$ |
# | self-attention (restricted) | $O(w \cdot n \cdot d)$ | $O(1)$ | $O(n/w)$ |
#
# - **Path length** is what [lesson 02](02_queries_keys_values.ipynb#Path-length,-counted)
#   counted: a change at position 0 reached position 5 of the toy RNN only after 5 steps of
#   the recurrence (fading on the way in that seeded RNN; another could amplify it), while in self-attention position 5 reads position 0
#   directly, in one step. With $n$ tokens the RNN's path is $n - 1$ steps: $O(n)$ against
#   $O(1)$. The convolution's $O(\log_k(n))$ is for *dilated* convolutions; with contiguous
#   kernels a path across the sequence needs a stack of $O(n/k)$ layers (the paper's text says
#   both).
# - **Sequential operations**: those $n$ RNN steps must run one after another (step $t$ needs
#   the state $r_{t-1}$); the $n^2$ scores of attention are independent products, all computed
#   at once: $O(n)$ against $O(1)$.
# - **Complexity per layer** counts orders of growth, not operations. Counted exactly, in
#   multiply-adds, with $d = d_{model}$ (all heads together):
#   - attention's **pairwise part**: $n \times n$ scores of $d$ multiply-adds each ($QK^\top$),
#     and as many to mix the values ($AV$): $2 n^2 d$. This is the $O(n^2 \cdot d)$ of the table;
#   - attention's **projections** $W^Q, W^K, W^V, W^O$, one $(d, d)$ matrix per token each:
#     $4 n d^2$, the same order as a recurrent layer's; the table's $O(n^2 \cdot d)$ does not
#     count them;
#   - the **recurrence**: one $(d, d)$ matrix times the state per token, $n d^2$: the
#     $O(n \cdot d^2)$ of the table. Lesson 02's toy RNN, $r_t = \tanh(W r_{t-1} + U x_t)$, also
#     multiplies its input by $U$ (another $n d^2$); an LSTM has four gates, each with a matrix
#     for the state and one for the input: $8 n d^2$.
#
#   At the paper's $d = 512$:

# %%
d = 512  # the paper's d_model


def pairwise(n):  # Q K^T and A V: n x n entries, d multiply-adds each, twice
    return 2 * n**2 * d


def projections(n):  # W^Q, W^K, W^V, W^O: a (d, d) matrix per token, four times
    return 4 * n * d**2


def recurrence(n):  # W r_{t-1}: a (d, d) matrix times the state, once per token
    return n * d**2


def lstm(n):  # four gates, each a (d, d) matrix for the state and one for the input
    return 8 * n * d**2


print(f"{'n':>5} | {'pairwise 2n^2d':>15} | {'projections 4nd^2':>17} | {'recurrence nd^2':>15} "
      f"| pairwise / recurrence | (pairwise + projections) / LSTM 8nd^2")
for n_tokens in (32, 128, 256, 512, 1024, 2048, 8192):
    print(f"{n_tokens:5d} | {pairwise(n_tokens):15,d} | {projections(n_tokens):17,d} | "
          f"{recurrence(n_tokens):15,d} | {pairwise(n_tokens) / recurrence(n_tokens):21.4g} | "
          f"{(pairwise(n_tokens) + projections(n_tokens)) / lstm(n_tokens):.4g}")
pairwise_equals_recurrence = next(n for n in range(1, 4 * d) if pairwise(n) >= recurrence(n))
layer_equals_lstm = next(n for n in range(1, 4 * d) if pairwise(n) + projections(n) >= lstm(n))
print("pairwise part = recurrence at n =", pairwise_equals_recurrence, "(= d/2)")
print("attention layer (pairwise + projections) = LSTM layer at n =", layer_equals_lstm, "(= 2d)")

# %% [markdown]
# The table's comparison, attention's pairwise part against the recurrence, crosses at
# $n = d/2 = 256$: below it the pairwise part does less arithmetic (a 32-token sentence: 1/8 of
# the recurrence), above it more, growing like $n$ (32 times as much at $n = 8192$). Whole layer
# against whole layer, attention with its projections against an LSTM, the crossing is at
# $n = 2d = 1024$. What is counted moves the crossing by a small factor, but it stays near
# $n = d$, which is what the paper's big-O comparison says: self-attention is the cheaper
# layer when $n$ is smaller than $d$, and the paper notes that this is most often the case
# for the word-piece and byte-pair sentences of machine translation. Beyond $n \approx d$ the
# $n^2$ term takes over, and its $n \times n$ matrix is what the rest of this lesson is about.
# The restricted row is the first of the long-context answers at the end of the lesson: each
# query sees only $w$ neighbours, $O(w \cdot n \cdot d)$, but a path across the sequence then
# takes $n/w$ layers.

# %% [markdown]
# ## Blockwise attention: the same output, without the n × n matrix
#
# The output row of query $i$ is $\sum_j a_{ij} v_j$ with $a_{ij} = e^{s_{ij}} / \sum_{j'}
# e^{s_{ij'}}$. The sum over keys can be done **a block of keys at a time**, if we keep three
# running quantities per query:
#
# - $m$, the largest score seen so far (subtracted before `exp`, as in the stable softmax);
# - $\ell$ (code: `l`), the sum of $e^{s_{ij} - m}$ over the keys seen so far;
# - $\text{acc}$, the sum of $e^{s_{ij} - m}\, v_j$ over the keys seen so far.
#
# In this lesson $b$ is the **block size**, the number of keys in a block (not a batch).
#
# When a new block brings a larger score, $m$ grows to $m_{new}$ and everything summed so far
# was computed with the old $m$: multiplying by $e^{m - m_{new}}$ corrects it. At the end,
# $\text{acc} / \ell$ is exactly the attention output. This is the **online softmax**
# (Milakov & Gimelshein 2018), the heart of FlashAttention (Dao et al. 2022).
#
# ### By hand: one query, two blocks of three keys
#
# Query "sat" (position 2) over our six keys, split into keys 0–2 and keys 3–5:

# %%
scale = 1 / np.sqrt(Q.shape[1])  # 1/sqrt(d_k), d_k = 4
q = Q[2]  # the query of "sat", (d_k,)
m, l, acc = -np.inf, 0.0, np.zeros(V.shape[1])  # running max, running sum, running output
for block, keys in enumerate((range(0, 3), range(3, 6))):
    s = np.array([q @ K[j] * scale for j in keys])  # this block's scores, (3,)
    m_new = max(m, s.max())
    correction = np.exp(m - m_new)  # rescales what was summed with the old m (0 at first)
    l = l * correction + np.exp(s - m_new).sum()
    acc = acc * correction + sum(np.exp(s_j - m_new) * V[j] for s_j, j in zip(s, keys))
    m = m_new
    print(f"block {block} (keys {keys.start}-{keys.stop - 1}): scores {np.round(s, 3)}")
    print(f"   m = {m:.3f}, correction = {correction:.3f}, l = {l:.3f}, "
          f"partial output acc/l = {np.round(acc / l, 3)}")

print("naive attention, row 'sat':     ", np.round(out[2], 3))
print("same to 1e-12:", np.allclose(acc / l, out[2], rtol=0, atol=1e-12))

# %% [markdown]
# After block 0 the partial output is attention over keys 0–2 only. Block 1 brought a larger
# score, so $m$ rose and the old $\ell$ and acc were scaled down by the correction; the final
# acc/ℓ equals the naive row.
#
# ### All queries at once, block by block
#
# `helpers.blockwise.online_softmax_steps` does the same for every query in parallel (one
# $(n, b)$ tile of scores per step) and yields $m$, $\ell$ (code: `l`) and the partial output
# after each block:

# %%
for step in online_softmax_steps(Q, K, V, block_size=3):
    print(f"after block {step.block} (keys {step.start}-{step.stop - 1}):")
    print("  m   =", np.round(step.m, 3))
    print("  l   =", np.round(step.l, 3))
    print("  partial output (n, d_v):\n", np.round(step.output, 3))
print("final output equals naive attention:", np.allclose(step.output, out, rtol=0, atol=1e-12))
print("row 'sat' matches the hand computation:", np.allclose(step.output[2], acc / l))

# %% [markdown]
# ### Exercise 2 ★★ — `online_softmax_update(m, l, acc, scores, V_block)`
#
# The hand computation did one query, with Python numbers and a loop over keys. Write the step
# for **every query at once**, as arrays:
#
# - `m` $(n_q,)$ running row max, `l` $(n_q,)$ running sum of $e^{s - m}$, `acc`
#   $(n_q, d_v)$ running sum of $e^{s - m} V$: the state before this block;
# - `scores` $(n_q, b)$ this block's (already scaled) scores, `V_block` $(b, d_v)$ its values;
# - return the new state `(m, l, acc)`. The state starts at $m = -\infty$, $\ell = 0$,
#   $\text{acc} = 0$, and after the last block the output is `acc / l[:, None]`.
#
# One case the hand computation never met: `scores` may hold $-\infty$, for keys a mask hides
# (lesson 05). A row whose keys so far are **all** masked must come out unchanged,
# $m = -\infty$, $\ell = 0$, $\text{acc} = 0$, not NaN; think about what
# $-\infty - (-\infty)$ is. The check tries a running state whose max rises in some rows and
# not in others, a first block with fully masked rows, and whole runs with scores up to about
# 800 (where `exp` without the max overflows).
#
# *May use:* NumPy only.

# %%
def online_softmax_update(m, l, acc, scores, V_block):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.online_softmax_update.check(online_softmax_update)

# %% [markdown]
# Stuck? `checks.online_softmax_update.hint(1)` (then 2, 3), or
# `checks.online_softmax_update.solution()`.
#
# ### Exercise 3 ★★ — `blockwise_attention(Q, K, V, block_size)`
#
# Now the whole attention, built from your `online_softmax_update`: `Q` $(n_q, d_k)$, `K`
# $(n_k, d_k)$, `V` $(n_k, d_v)$; walk over the keys `block_size` at a time (the last block
# may be shorter), scale each tile of scores by $1/\sqrt{d_k}$, fold it in, and return the
# output $(n_q, d_v)$. Never compute the whole `Q @ K.T`: the check runs your function on
# 256 queries and 8,192 keys and measures its memory.
#
# Your function has the same name as the course's `helpers.blockwise_attention`; the cells
# below call the course's version, as `blockwise.blockwise_attention`, so they run whether or
# not you have answered.
#
# *May use:* NumPy only.

# %%
def blockwise_attention(Q, K, V, block_size):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.blockwise_attention.check(blockwise_attention)

# %% [markdown]
# Stuck? `checks.blockwise_attention.hint(1)` (then 2, 3), or
# `checks.blockwise_attention.solution()`.
#
# The course's version, `blockwise.blockwise_attention(Q, K, V, block_size, causal)`, also
# takes leading batch/head axes and the causal mask (lesson 05); with the mask it skips the
# queries that cannot see a block at all. Same results as the naive version, with and without
# the mask:

# %%
mask = helpers.causal_mask(n)
naive_causal = helpers.scaled_dot_product_attention(Q, K, V, mask=mask)[0]
for block_size in (1, 2, 4, 6):
    plain = blockwise.blockwise_attention(Q, K, V, block_size=block_size)
    causal = blockwise.blockwise_attention(Q, K, V, block_size=block_size, causal=True)
    print(f"block_size {block_size}: max |blockwise - naive| < 1e-12: "
          f"{np.abs(plain - out).max() < 1e-12} (no mask), "
          f"{np.abs(causal - naive_causal).max() < 1e-12} (causal)")

# %% [markdown]
# ## Measured: blockwise memory
#
# Now at $n = 1024$ and $n = 4096$ (one head, $d_k = 64$, float64, blocks of 128 keys), against
# the naive peaks measured above.
#
# **Predict first.** Quadrupling $n$ multiplied the naive peak by about $4^2 = 16$ (the two
# naive peaks printed above). By what factor will it multiply the blockwise peak?

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.blockwise_memory_growth.check(guess)

# %% tags=["nbval-ignore-output"]
block_peak, block_time, block_out = {}, {}, {}
for size in (1024, 4096):
    call = partial(blockwise.blockwise_attention, *inputs[size], block_size=128)
    block_time[size] = best_time(call, repeats[size])
    block_peak[size], block_out[size] = peak_memory(call)
    naive_p = naive_peak[sizes.index(size)]
    print(f"n = {size}: naive peak {naive_p / 1e6:7.2f} MB, blockwise {block_peak[size] / 1e6:6.2f} "
          f"MB (1/{naive_p / block_peak[size]:.0f}); time naive "
          f"{1e3 * naive_time[sizes.index(size)]:.0f} ms, blockwise {1e3 * block_time[size]:.0f} ms")
print(f"n x 4: naive memory x {naive_peak[-1] / naive_peak[sizes.index(1024)]:.1f}, "
      f"blockwise x {block_peak[4096] / block_peak[1024]:.1f}")

# %% [markdown]
# Quadrupling $n$ multiplies the naive peak by about 16 ($n^2$) and the blockwise peak by
# about 4 ($n$): the largest score array blockwise attention ever holds is one $(n, 128)$ tile,
# and its running state $m$, $\ell$, acc has one row per query too. The outputs are the same
# as the naive ones (same inputs), and with the causal mask too (checked at $n = 1024$ to keep
# the lesson fast; the tests check many more sizes):

# %%
for size in (1024, 4096):
    difference = np.abs(block_out[size] - naive_out[size]).max()
    print(f"n = {size}, no mask: max |blockwise - naive| < 1e-12:", difference < 1e-12)
Qn, Kn, Vn = inputs[1024]
naive_causal_1024 = helpers.scaled_dot_product_attention(
    Qn, Kn, Vn, mask=helpers.causal_mask(1024))[0]
difference = np.abs(blockwise.blockwise_attention(Qn, Kn, Vn, causal=True) - naive_causal_1024).max()
print("n = 1024, causal:  max |blockwise - naive| < 1e-12:", difference < 1e-12)
print("n = 4096: blockwise peak <= 1/10 of the naive peak:", block_peak[4096] * 10 <= naive_peak[-1])

# %% [markdown]
# Blockwise attention does the same arithmetic, so its time is still $O(n^2)$; what it saves
# is memory. Compare the two times printed above: on a CPU they are of the same order, and
# which one is faster varies from machine to machine. Each has a cost the other lacks: here
# the blockwise loop runs in Python, one small NumPy operation per block, while the naive
# version's arrays of over 100 MB do not fit in the CPU's caches (a likely cost, not measured
# here). On a GPU, FlashAttention
# (Dao et al. 2022) runs the whole loop as one fused kernel: it also tiles the queries, keeps
# each tile in the GPU's fast on-chip memory and never writes the $n \times n$ matrix out to
# the GPU's main memory. On GPUs most of a Transformer's operations wait on memory accesses
# more than on arithmetic (the FlashAttention paper's argument), so avoiding that traffic is
# what makes FlashAttention faster, not only smaller.

# %% [markdown]
# ## Exact or approximate: what long-context systems do
#
# Blockwise attention (FlashAttention) is **exact**: same output, memory cut from $O(n^2)$ to
# $O(n)$, but every query still meets every key, so the time stays $O(n^2)$. Many long-context
# models keep exactly this: full attention, computed by a FlashAttention-style kernel. What they
# cut is another memory, the **KV cache**: when a model generates text, every layer keeps the
# keys and values of all earlier tokens, $h$ heads of them. *Multi-query attention*
# (Shazeer 2019, [lesson 06](06_cross_attention_and_heads.ipynb)'s challenge) gives all $h$
# query heads one shared key head and one value head, a cache $h$ times smaller;
# *grouped-query attention* (GQA, Ainslie et al. 2023) shares one key and value head per group
# of query heads, between the two (Llama 2's 34B and 70B models use it, Touvron et al. 2023).
# Each query head's attention is still computed exactly, over the keys and values the model
# has; but the model has fewer of them: it is a different architecture, with fewer key and value
# parameters, not a faster way to compute the same one. Ainslie et al. report that multi-query
# attention "can lead to quality degradation", that grouped-query attention reaches "quality
# close to multi-head attention", and that turning a trained multi-head checkpoint into either
# takes extra training ("uptraining": 5% of the original pre-training compute in their recipe).
#
# To cut the *time* below $O(n^2)$, a model must give up full attention and **approximate** it:
# *sparse* or *local* attention lets each query see only some keys (a sliding window of nearby
# tokens, plus a few global ones); *linear* (kernel) attention replaces
# $\text{softmax}(QK^\top)$ by a product of feature maps that can be computed as
# $\phi(Q)\,(\phi(K)^\top V)$ in $O(n)$; *low-rank* methods compress the $n$ keys and values to
# a fixed number of rows. Each gives up something (a query can no longer reach, or weigh
# exactly, every key) in exchange for speed.

# %% [markdown]
# ## Challenge ★★★ — `causal_blockwise_attention(Q, K, V, block_size)`
#
# Under the causal mask (lesson 05), query $i$ sees keys $0..i$ only. Cut the queries **and**
# the keys into blocks of `block_size` $= b$: a grid of $n_b \times n_b$ tiles, where
# $n_b = \lceil n/b \rceil$ is the number of blocks.
# A tile whose keys all come after its last query is entirely masked, so there is no need to
# compute it at all: that is how FlashAttention skips about half of a causal layer's tiles for
# long sequences (the FlashAttention-2 paper, Dao 2023, reports about 1.7–1.8 times the
# speed of the same attention without the mask). Write
# `causal_blockwise_attention(Q, K, V, block_size)` for self-attention (`Q`, `K` $(n, d_k)$,
# `V` $(n, d_v)$) that visits only the tiles on or below the diagonal, one
# $b \times b$ tile of scores at a time, masks inside the diagonal tiles, and returns
# `(output, tiles)`: the output $(n, d_v)$ and how many score tiles you computed. Use your
# `online_softmax_update` for each query block. (The check also measures your answer's memory
# on a long sequence: the tiles it reports are the tiles it must compute.)
#
# *May use:* NumPy, `helpers.causal_mask`.

# %%
def causal_blockwise_attention(Q, K, V, block_size):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.causal_blockwise_attention.check(causal_blockwise_attention)

# %% [markdown]
# Stuck? `checks.causal_blockwise_attention.hint(1)` (then 2, 3), or
# `checks.causal_blockwise_attention.solution()`.

# %% [markdown]
# ## Summary
#
# - Attention holds an $n \times n$ matrix per head: measured, its peak memory grows with
#   slope 2 on a log-log plot, and its time with a slope near 2 for large $n$ (the fitted
#   value varies from run to run and machine to machine).
# - The weights take `batch * h * n * n * itemsize` bytes per layer: 40 GB for one float32
#   head at $n = 100\,000$. The paper's Table 1: attention's pairwise part grows like
#   $O(n^2 d)$, a recurrence like $O(n d^2)$, so attention is the cheaper layer for $n$ below
#   about $d$ (counted exactly at $d = 512$: from $n = 256$ to $n = 1024$, depending on what is
#   counted), with $O(1)$ sequential operations and path length against $O(n)$.
# - An online softmax (running max $m$, running sum $\ell$, rescaled by $e^{m - m_{new}}$;
#   your `online_softmax_update` and `blockwise_attention`) processes the keys block by
#   block: the same output to $10^{-12}$, with memory $O(n \cdot b)$ instead of $O(n^2)$; the
#   time stays $O(n^2)$. Many long-context models keep this exact attention and shrink the
#   KV cache instead (multi-query, grouped-query attention); approximations (sparse or local
#   windows, linear/kernel attention, low-rank) cut the time too, at some cost in accuracy.
#
# **Next**: [08 · training attention](08_training_attention.ipynb): so far every weight was
# seeded; now we train an attention layer and watch the pattern form.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
