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
# - what that means in bytes, from our 6-token sentence to a 100k-token context, and how to
#   predict it for any number of heads and batch size;
# - blockwise attention with an **online softmax** (the idea behind FlashAttention): the same
#   output, to $10^{-12}$, without ever holding the $n \times n$ matrix; and why cutting the
#   time too takes approximations (sparse, linear attention, etc.).
#
# **You need**: [04 · softmax and attention](04_softmax_and_attention.ipynb) and
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
from helpers.blockwise import blockwise_attention, online_softmax_steps
from helpers.live import LiveFigure, show

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
# Q, K and V grow like $n$ (one row per token), but $A$ grows like $n^2$: doubling the
# sentence quadruples the matrix.

# %%
for n_tokens in (6, 12, 24, 1024, 4096):
    print(f"n = {n_tokens:5d}: Q has {n_tokens * 4:6d} numbers, A has {n_tokens**2:10,d}")

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

# %%
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
plt.show()

# %% [markdown]
# Notice: the memory points sit on the slope-2 line from $n \approx 512$ on: each doubling of
# $n$ costs four times the memory. The time points also make a straight line at large $n$, a
# little steeper than 2: in repeated runs on the machine that built this notebook the slope for
# $n \ge 1024$ came out between 2.2 and 2.4 (between 1.8 and 2.6 while other programs kept the
# CPU busy). Once the matrix outgrows the CPU's caches, each number costs a little more to
# reach. Below $n = 512$ the line is flatter (a slope of about 1.6): a call takes well under a
# millisecond, and fixed costs (checks, function calls, the $(n, d_k)$ arrays) are a large part
# of it. Memory does not care about any of this.

# %% [markdown]
# ## What that means for a 100k-token context
#
# One float32 score matrix (4 bytes per number) for one head, one layer, $n = 100\,000$:

# %%
n_long = 100_000
one_matrix = n_long * n_long * 4  # bytes
print(f"{n_long:,} x {n_long:,} x 4 bytes = {one_matrix:,} bytes = {one_matrix / 1e9:.0f} GB")
print(f"helpers.blockwise.score_matrix_bytes({n_long:,}) = {blockwise.score_matrix_bytes(n_long):,}")

# %% [markdown]
# 40 GB for *one* head of *one* layer: more than a laptop's memory, half of a large GPU's.
# A model with 32 heads would need 1.28 TB for one layer's attention-weight (score) matrices
# (not its parameters: those do not depend on $n$). Long-context models therefore never store
# this matrix whole; the rest of this lesson shows the exact way to avoid it, and the end of
# the lesson the approximate ones.

# %% [markdown]
# ### Exercise: `score_matrix_bytes(n, h, batch, dtype)`
#
# Return the number of bytes needed to store the attention weights of **one layer** for a
# **batch** of `batch` sequences of length `n`, with `h` heads, in the number type `dtype`
# (`np.float16`, `np.float32`, `np.float64`, or their names such as `"float32"`).
# `np.dtype(dtype).itemsize` gives the bytes per number. Return a whole number (an `int`).

# %%
def score_matrix_bytes(n, h, batch, dtype):
    ### BEGIN SOLUTION
    itemsize = np.dtype(dtype).itemsize  # bytes per number: 2, 4 or 8
    return batch * h * n * n * itemsize  # one (n, n) matrix per head per sequence
    ### END SOLUTION


checks.score_matrix_bytes.check(score_matrix_bytes)

# %% [markdown]
# Stuck? `checks.score_matrix_bytes.hint(1)` (then 2, 3), or
# `checks.score_matrix_bytes.solution()`. The lesson continues with the course's version,
# `helpers.blockwise.score_matrix_bytes`, so it works whether or not you have answered.
#
# The paper's base model ($h = 8$) on a batch of 32 sequences of 512 tokens, float32:

# %%
base = blockwise.score_matrix_bytes(512, h=8, batch=32, dtype=np.float32)
print(f"{base:,} bytes = {base / 1e9:.2f} GB per layer")

# %% [markdown]
# ### Predict the memory: slide n
#
# The line is `score_matrix_bytes(n, h, batch=1, float32)` on log-log axes; the dashed lines
# mark 16 GB (a laptop) and 80 GB (a large GPU). Move $n$ and the number of heads.

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
plain_log_ticks(ax.xaxis, [64, 256, 1024, 4096, 16384, 65536],
                ["64", "256", "1,024", "4,096", "16,384", "65,536"])
plain_log_ticks(ax.yaxis, [1e-5, 1e-3, 1e-1, 1e1, 1e3],
                ["10 kB", "1 MB", "100 MB", "10 GB", "1 TB"])
ax.grid(True, which="major", alpha=0.3)

n_slider = widgets.SelectionSlider(options=[(f"{k:,}", k) for k in n_options], value=4096,
                                   description="n")
h_picker = widgets.Dropdown(options=[1, 8, 16, 32], value=8, description="heads h")


def readable_bytes(size):
    """A byte count in kB, MB, GB or TB (powers of 1000, as on the axis), 3 significant digits."""
    for unit, factor in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= factor:
            return f"{size / factor:.3g} {unit}"
    return f"{size} bytes"


def update(change=None):
    n_now, h_now = n_slider.value, h_picker.value
    curve.set_ydata(blockwise.score_matrix_bytes(1, h=h_now) * n_grid**2 / GB)
    size = blockwise.score_matrix_bytes(n_now, h=h_now, batch=1, dtype=np.float32)
    marker.set_data([n_now], [size / GB])
    ax.set_title(f"n = {n_now:,}, h = {h_now}, float32: {readable_bytes(size)} per layer")
    live.refresh()


n_slider.observe(update, names="value")
h_picker.observe(update, names="value")
update()
show(widgets.VBox([widgets.HBox([n_slider, h_picker]), live.image]), bytes(live.image.value),
     alt="Log-log line of the predicted attention-weight memory against n, for 8 heads in "
     "float32, with the point n = 4096 marked and 16 GB and 80 GB reference lines.")

# %% [markdown]
# Notice: with 8 heads, $n = 4096$ needs half a gigabyte per layer, and the line crosses the
# laptop's 16 GB before $n = 25\,000$. Slide to $n = 131\,072$ with 32 heads: over 2 TB.

# %% [markdown]
# ## Blockwise attention: the same output, without the n × n matrix
#
# The output row of query $i$ is $\sum_j a_{ij} v_j$ with $a_{ij} = e^{s_{ij}} / \sum_{j'}
# e^{s_{ij'}}$. The sum over keys can be done **a block of keys at a time**, if we keep three
# running quantities per query:
#
# - $m$, the largest score seen so far (subtracted before `exp`, as in the stable softmax);
# - $\ell$, the sum of $e^{s_{ij} - m}$ over the keys seen so far;
# - $\text{acc}$, the sum of $e^{s_{ij} - m}\, v_j$ over the keys seen so far.
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
m, ell, acc = -np.inf, 0.0, np.zeros(V.shape[1])
for block, keys in enumerate((range(0, 3), range(3, 6))):
    s = np.array([q @ K[j] * scale for j in keys])  # this block's scores, (3,)
    m_new = max(m, s.max())
    correction = np.exp(m - m_new)  # rescales what was summed with the old m (0 at first)
    ell = ell * correction + np.exp(s - m_new).sum()
    acc = acc * correction + sum(np.exp(s_j - m_new) * V[j] for s_j, j in zip(s, keys))
    m = m_new
    print(f"block {block} (keys {keys.start}-{keys.stop - 1}): scores {np.round(s, 3)}")
    print(f"   m = {m:.3f}, correction = {correction:.3f}, ell = {ell:.3f}, "
          f"partial output acc/ell = {np.round(acc / ell, 3)}")

print("naive attention, row 'sat':       ", np.round(out[2], 3))
print("same to 1e-12:", np.allclose(acc / ell, out[2], rtol=0, atol=1e-12))

# %% [markdown]
# After block 0 the partial output is attention over keys 0–2 only. Block 1 brought a larger
# score, so $m$ rose and the old $\ell$ and acc were scaled down by the correction; the final
# acc/ℓ equals the naive row.
#
# ### All queries at once, block by block
#
# `helpers.blockwise.online_softmax_steps` does the same for every query in parallel (one
# $(n, \text{block})$ tile of scores per step) and yields $m$, $\ell$ and the partial output
# after each block:

# %%
for step in online_softmax_steps(Q, K, V, block_size=3):
    print(f"after block {step.block} (keys {step.start}-{step.stop - 1}):")
    print("  m   =", np.round(step.m, 3))
    print("  ell =", np.round(step.ell, 3))
    print("  partial output (n, d_k):\n", np.round(step.output, 3))
print("final output equals naive attention:", np.allclose(step.output, out, rtol=0, atol=1e-12))
print("row 'sat' matches the hand computation:", np.allclose(step.output[2], acc / ell))

# %% [markdown]
# `helpers.blockwise.blockwise_attention(Q, K, V, block_size, causal)` runs all the blocks and
# returns the output. With the causal mask (lesson 05) it also skips the queries that cannot
# see a block at all. Same results as the naive version, with and without the mask:

# %%
mask = helpers.causal_mask(n)
naive_causal = helpers.scaled_dot_product_attention(Q, K, V, mask=mask)[0]
for block_size in (1, 2, 4, 6):
    plain = blockwise_attention(Q, K, V, block_size=block_size)
    causal = blockwise_attention(Q, K, V, block_size=block_size, causal=True)
    print(f"block_size {block_size}: max |blockwise - naive| < 1e-12: "
          f"{np.abs(plain - out).max() < 1e-12} (no mask), "
          f"{np.abs(causal - naive_causal).max() < 1e-12} (causal)")

# %% [markdown]
# ## Measured: blockwise memory grows like n, not n²
#
# Now at $n = 1024$ and $n = 4096$ (one head, $d_k = 64$, float64, blocks of 128 keys), against
# the naive peaks measured above. The largest score array blockwise attention ever holds is one
# $(n, 128)$ tile.

# %% tags=["nbval-ignore-output"]
block_peak, block_time, block_out = {}, {}, {}
for size in (1024, 4096):
    call = partial(blockwise_attention, *inputs[size], block_size=128)
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
# about 4 ($n$). The outputs are the same as the naive ones (same inputs), and with the causal
# mask too (checked at $n = 1024$ to keep the lesson fast; the tests check many more sizes):

# %%
for size in (1024, 4096):
    difference = np.abs(block_out[size] - naive_out[size]).max()
    print(f"n = {size}, no mask: max |blockwise - naive| < 1e-12:", difference < 1e-12)
Qn, Kn, Vn = inputs[1024]
naive_causal_1024 = helpers.scaled_dot_product_attention(
    Qn, Kn, Vn, mask=helpers.causal_mask(1024))[0]
difference = np.abs(blockwise_attention(Qn, Kn, Vn, causal=True) - naive_causal_1024).max()
print("n = 1024, causal:  max |blockwise - naive| < 1e-12:", difference < 1e-12)
print("n = 4096: blockwise peak <= 1/10 of the naive peak:", block_peak[4096] * 10 <= naive_peak[-1])

# %% [markdown]
# Blockwise attention does the same arithmetic, so its time is still $O(n^2)$; what it saves
# is memory. Compare the two times printed above: on a CPU they are of the same order.
# Blockwise can be a little slower, because here its block loop runs in Python, each block a
# separate small NumPy operation; or faster at large $n$, because the naive version's arrays of
# over 100 MB do not fit in the CPU's caches. On a GPU, FlashAttention runs the whole loop as
# one fused kernel: it also tiles the queries, keeps each tile in the GPU's fast on-chip memory
# and never writes the $n \times n$ matrix out to the GPU's main memory. Avoiding that memory
# traffic, which dominates the run time there, is what makes it faster.

# %% [markdown]
# ## Exact or approximate: what long-context systems do
#
# Blockwise attention (FlashAttention) is **exact**: same output, memory cut from $O(n^2)$ to
# $O(n)$, but every query still meets every key, so the time stays $O(n^2)$. To cut the time
# as well, long-context systems **approximate** full attention: *sparse* or *local* attention
# lets each query see only some keys (a sliding window of nearby tokens, plus a few global
# ones); *linear* (kernel) attention replaces $\text{softmax}(QK^\top)$ by a product of feature
# maps that can be computed as $\phi(Q)\,(\phi(K)^\top V)$ in $O(n)$; *low-rank* methods
# compress the $n$ keys and values to a fixed number of rows. Each gives up some accuracy
# (a query can no longer reach, or weigh exactly, every key) in exchange for speed.

# %% [markdown]
# ## Summary
#
# - Attention holds an $n \times n$ matrix per head: measured, its peak memory grows with
#   slope 2 on a log-log plot, and its time with a slope of about 2 for large $n$ (a little
#   more once the matrix outgrows the CPU's caches).
# - The weights take `batch * h * n * n * itemsize` bytes per layer: 40 GB for one float32
#   head at $n = 100\,000$.
# - An online softmax (running max $m$, running sum $\ell$, rescaled by $e^{m - m_{new}}$)
#   processes the keys block by block: the same output to $10^{-12}$, with memory
#   $O(n \cdot \text{block})$ instead of $O(n^2)$; the time stays $O(n^2)$. Approximations
#   (sparse or local windows, linear/kernel attention, low-rank) cut the time too, at some
#   cost in accuracy.
#
# **Next**: [08 · training attention](08_training_attention.ipynb): so far every weight was
# seeded; now we train an attention layer and watch the pattern form.
