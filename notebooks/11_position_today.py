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
# # 11 · Where position goes today: RoPE, ALiBi, and no positions at all
#
# **What you will learn**
# - how most open-weight language models since about 2023 give attention the order of the
#   tokens: not by adding
#   a position vector to each embedding (lesson 01) but **inside the dot product**, by rotating
#   queries and keys (RoPE) or by a penalty on distance (ALiBi); and that a causal model can
#   do without any (NoPE);
# - what each scheme does to the score matrix, measured: which scores depend on where a
#   sentence starts and which only on how far apart two tokens are;
# - what happens when a model reads a **longer** context than it was trained on, measured on
#   lesson 10's model trained four ways, and what the one-line change, position
#   interpolation, does without fine-tuning.
#
# **You need**: [01 · the input Z](01_input_Z.ipynb) (sinusoidal encodings and the ★★★ shift
# matrix), [05 · causal masking](05_causal_masking.ipynb) (`decode_step` and the KV cache) and
# [10 · induction heads](10_induction_heads.ipynb) (the model, its task and its head scores).
#
# Lesson 01 added a position vector to each token's embedding, $Z = E + PE$; lesson 10's model
# learned a table of them. Llama, Mistral, Qwen, Gemma and GPT-NeoX do something else: they
# leave the embeddings alone and rotate each query and key by an angle proportional to its
# position (Su et al. 2021, [RoFormer](https://arxiv.org/abs/2104.09864)). ALiBi (Press et al.
# 2022, [Train Short, Test Long](https://arxiv.org/abs/2108.12409)) adds a penalty
# proportional to distance to the scores instead. And Haviv et al. (2022) found that causal
# language models with no positional encoding at all still learn order (they suggest from the
# causal mask); Kazemnejad et al. (2023) proved that such a model can recover positions.

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks, induction
from helpers.induction.lengths import far_repeats, measure
from helpers.induction.probes import next_token_losses
from helpers.live import LiveFigure, show, slider
from helpers.plots import plot_heatmap, show_figure
from helpers.rope import alibi_slopes, frequencies, rotate

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# **Predict first**, from the description above. Take a sentence and put three other tokens in
# front of it, so that every word moves three positions along. With which ways of giving
# positions do the attention *scores* between the sentence's own words (before the softmax)
# stay exactly the same: sinusoidal encodings added to the embeddings (lesson 01), RoPE,
# ALiBi, no positions at all? Section 3 measures it.

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.shift_prediction.check(guess)

# %% [markdown]
# ## 1 · From lesson 01's shift to RoPE
#
# Lesson 01's challenge built $M_k$, the matrix that moves a sinusoidal encoding $k$ positions
# along: $PE[pos + k] = PE[pos]\,M_k$. It turns every (sin, cos) pair of dimensions by the angle
# $k\,\theta_i$, with one frequency per pair, $\theta_i = 10000^{-2i/d}$. Lesson 01 also found
# its limit: applied to $Z = E + PE$, $M_k$ would turn $E$'s dimensions too, so no fixed map of
# $Z$ moves the position alone.
#
# RoPE moves the rotation to where it does no harm: after the projections, onto the query and
# the key only. The query of position $m$ is turned by the angles $m\,\theta_i$, the key of
# position $n$ by $n\,\theta_i$, pair by pair. A rotation keeps lengths, and turning back by $m$
# and then forward by $n$ is one turn by $n - m$ ($R_m^\top R_n = R_{n - m}$), so
#
# $$\mathrm{rot}_m(q) \cdot \mathrm{rot}_n(k) = q \cdot \mathrm{rot}_{n - m}(k):$$
#
# the score depends on the two vectors and on $m - n$, never on $m$ or $n$ alone. Which
# dimensions form a pair is a convention. The RoFormer paper pairs $2i$ with $2i + 1$
# ("interleaved", as lesson 01's sin/cos columns); GPT-NeoX and Hugging Face's Llama pair
# dimension $i$ with $i + d/2$ ("rotate half"; Meta's original Llama code is interleaved, and the
# conversion to Hugging Face's layout permutes the columns of $W^Q$ and $W^K$ to match; GPT-NeoX
# also rotates only part of each head). `helpers.rope.rotate` uses rotate-half and offers the
# other. The
# claim, measured: one query and one key, placed at every pair of positions up to 64.

# %%
rng = np.random.default_rng(0)
d = 16
q, k = rng.standard_normal(d), rng.standard_normal(d)
P = 64
Q_at = rotate(np.tile(q, (P, 1)))  # (64, 16): q at positions 0..63
K_at = rotate(np.tile(k, (P, 1)))  # k at positions 0..63
S = Q_at @ K_at.T  # S[m, n] = rot_m(q) . rot_n(k)
spread = max(np.ptp(np.diagonal(S, offset)) for offset in range(-P + 1, P))
print(f"every pair at the same distance m - n has the same q_m . k_n, to 1e-12: {spread < 1e-12}")
kept = np.abs(np.linalg.norm(Q_at, axis=1) - np.linalg.norm(q)).max()
print(f"|rot(q)| = |q| at every position, to 1e-12: {kept < 1e-12}")
half = np.r_[0:d:2, 1:d:2]  # interleaved dimension order -> rotate-half order
same = rotate(q[None, half], [5.0])[0] - rotate(q[None], [5.0], interleaved=True)[0][half]
print(f"interleaved = rotate-half with the dimensions permuted, to 1e-12: "
      f"{np.abs(same).max() < 1e-12}")  # fmt: skip

# %% [markdown]
# Every diagonal of $S$ (a fixed distance $m - n$) holds one number, to rounding; lengths do not
# change; and the two conventions are the same rotation with the dimensions listed in another
# order.
#
# **The frequencies, and what they do to far-apart tokens.** Pair 0 turns by one radian per
# position; the last pair of a 64-dimensional head by $10000^{-62/64}$ radians, thousands of
# times slower (the figure's left panel).
# The RoFormer paper (section 3.4.3) bounds the score of any query and key by
# $\max_i |h_{i+1} - h_i| \cdot \sum_{j=1}^{d/2} |S_j|$, where $h_i$ is the product of their
# $i$-th pairs (as complex numbers) and $S_j = \sum_{i<j} e^{\mathrm{i}(m-n)\theta_i}$; the
# part that depends on the distance, $\frac{1}{d/2}\sum_{j} |S_j|$ (the paper's "relative upper
# bound"), shrinks on average as the distance grows. Both are plotted below for $d = 64$.

# %%
d_head = 64
theta = frequencies(d_head)  # (32,): radians per position, pair by pair
distance = np.arange(0, 1001)
partial = np.cumsum(np.exp(1j * distance[:, None] * theta[None, :]), axis=1)  # S_1 .. S_32
bound = np.abs(partial).mean(axis=1)

fig, (ax_f, ax_b) = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained")
ax_f.semilogy(np.arange(d_head // 2), theta, "o-", ms=3)
ax_f.set(xlabel="pair i", ylabel="radians per position (log scale)",
         title=f"RoPE's frequencies, d = {d_head}: 10000^(-2i/d)")  # fmt: skip
ax_b.plot(distance, bound)
ax_b.set(xlabel="distance m - n", ylabel="bound (mean of |S_j|)",
         title="RoFormer's long-range decay bound, d = 64")  # fmt: skip
ax_b.set_ylim(bottom=0)
show_figure(
    fig,
    f"Left: RoPE's {d_head // 2} frequencies on a log scale, falling from 1 radian per position "
    f"(pair 0) to {theta[-1]:.1e} (pair {d_head // 2 - 1}). Right: the RoFormer bound against "
    f"distance 0 to 1000: {bound[0]:.1f} at distance 0, {bound[10]:.1f} at 10, "
    f"{bound[100]:.1f} at 100, {bound[1000]:.1f} at 1000, falling with ripples.",
)
print(f"bound at distance 0, 10, 100, 1000: {bound[[0, 10, 100, 1000]]}")

# %% [markdown]
# The fast pairs tell near positions apart and wrap around many times over long distances;
# the slow pairs barely move over a sentence and tell far positions apart. The bound falls
# with distance (printed), which the paper reads as attention between far-apart tokens being
# weaker; it is a bound on one kind of score, not a measurement of what a trained model does,
# and section 4 measures one.
#
# ### Exercise 1 ★★ — `rope_rotate(X, positions)`
#
# `X` has shape `(..., n, d)` with `d` even: $n$ queries or keys, one per row; `positions`
# has shape `(n,)`, each row's position. Return `X` with row $t$ turned by RoPE at
# `positions[t]`, in the rotate-half convention: dimension $i$ paired with $i + d/2$, pair $i$
# turned by the angle `positions[t] * 10000 ** (-2 * i / d)`, for $i = 0 \dots d/2 - 1$. A turn by
# angle $a$ maps a pair $(x_1, x_2)$ to $(x_1 \cos a - x_2 \sin a,\; x_1 \sin a + x_2 \cos a)$.
#
# *May use:* NumPy only.


# %%
def rope_rotate(X, positions):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.rope_rotate.check(rope_rotate)

# %% [markdown]
# Stuck? `checks.rope_rotate.hint(1)` (then 2, 3), or `checks.rope_rotate.solution()`. The
# cells below use `helpers.rope.rotate`, so they run either way.
#
# ## 2 · ALiBi: a penalty on distance
#
# ALiBi rotates nothing and adds nothing to the embeddings. Each head $h$ adds
# $-m_h\,(i - j)$ to the score of query $i$ and key $j \le i$: every step back costs $m_h$. The
# slopes are fixed, not learned: for $h$ heads, a geometric sequence that starts at
# $2^{-8/h}$ and has that ratio (for 8 heads: $1/2, 1/4, \dots, 1/256$). The paper trains only
# powers of two; for other head counts, the rule in Press et al.'s released code: the slopes of
# the power of two below, then every other slope of twice that power. So some heads look only
# nearby and others far.

# %%
for h in (4, 8, 12):
    print(f"{h:2d} heads: slopes {alibi_slopes(h)}")

# %% [markdown]
# ### Exercise 2 ★ — `alibi_bias(n, slopes)`
#
# Return the bias that ALiBi adds to the scores of $h$ heads, shape `(h, n, n)` for `slopes` of
# shape `(h,)`: entry $[h, i, j] = -m_h\,(i - j)$ for the keys $j \le i$, and $-\infty$ for
# $j > i$ (ALiBi is used with the causal mask, and the bias carries it).
#
# *May use:* NumPy only.


# %%
def alibi_bias(n, slopes):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.alibi_bias.check(alibi_bias)

# %% [markdown]
# Stuck? `checks.alibi_bias.hint(1)` (then 2, 3), or `checks.alibi_bias.solution()`.
#
# ## 3 · The same sentence, shifted
#
# What each scheme does to the scores, on lesson 01's sentence: seeded embeddings $E$ and one
# head's seeded $W^Q, W^K$ ($d_{model} = 16$), four ways. **Sinusoidal**: lesson 01's
# $Z = E + PE$, projected. **RoPE**: $E$ projected, queries and keys rotated. **ALiBi**: $E$
# projected, scores plus the bias of a head with slope $1/4$. **None**: $E$ projected, nothing
# else.
# Then put $k$ other tokens in front of the sentence, and compare the scores between the
# sentence's own six words: your prediction from the start of the lesson, measured.

# %%
words = "the cat sat on the mat".split()
filler = "so then well yes and but or now".split()
D = 16
W = helpers.seeded_projections(D, n_heads=1, seed=3)
W_Q, W_K = W["W_Q"][0], W["W_K"][0]  # (16, 16) each
SLOPE = 0.25
SCHEMES = ("sinusoidal", "RoPE", "ALiBi", "none")


def sentence_scores(shift):
    """The (6, 6) scores between the sentence's words with `shift` tokens in front, per scheme
    (future keys -inf)."""
    tokens = filler[:shift] + words
    n = len(tokens)
    E = helpers.token_embeddings(tokens, D)
    positions = np.arange(n)
    Zs = E + helpers.sinusoidal_positional_encoding(n, D)
    raw = {
        "sinusoidal": (Zs @ W_Q) @ (Zs @ W_K).T,
        "RoPE": rotate(E @ W_Q, positions) @ rotate(E @ W_K, positions).T,
        "ALiBi": (E @ W_Q) @ (E @ W_K).T,
        "none": (E @ W_Q) @ (E @ W_K).T,
    }
    scores = {s: M / np.sqrt(D) for s, M in raw.items()}
    scores["ALiBi"] = scores["ALiBi"] - SLOPE * (positions[:, None] - positions[None, :])
    future = ~helpers.causal_mask(n)
    return {s: np.where(future, -np.inf, M)[shift:, shift:] for s, M in scores.items()}


base = sentence_scores(0)
print("largest change of a score between the sentence's words, per number of tokens in front:")
for shift in (1, 3, 8):
    moved = sentence_scores(shift)
    seen = np.isfinite(base["none"])  # the scores of keys at or before the query
    change = {s: np.abs(moved[s][seen] - base[s][seen]).max() for s in SCHEMES}
    print(f"  {shift} in front: " + ", ".join(f"{s} {v:.2f}" for s, v in change.items()))

# %% [markdown]
# The scores with RoPE, with ALiBi and with no positions do not move (0.00 to two decimals: the
# differences are rounding); with the
# sinusoidal encoding added to the embeddings, every score moves. Move the slider (Tab to it,
# then the arrow keys, Page Up/Down, Home and End) to put 0 to 8 tokens in front and watch the
# four maps; each panel's title gives the largest change from the sentence alone.

# %%
live = LiveFigure(figsize=(12, 3.3))
axes = live.figure.subplots(1, 4)
limit = max(np.abs(M[np.isfinite(M)]).max() for shift in range(9)
            for M in sentence_scores(shift).values())  # fmt: skip
images = {}
for ax, scheme in zip(axes, SCHEMES):
    M = base[scheme]
    images[scheme] = plot_heatmap(
        np.where(np.isfinite(M), M, 0.0), words, words, ax=ax, signed=True, vmin=-limit,
        vmax=limit, masked=~np.isfinite(M), annotate=False, colorbar=scheme == "none",
        title=scheme, xlabel="key", ylabel="query" if scheme == "sinusoidal" else "",
    )  # fmt: skip
live.animate([*images.values(), *(ax.title for ax in axes)])
shift_slider = slider("tokens in front", range(9), value=0,
                      text=lambda k: f"{k} token{'s' if k != 1 else ''} in front")  # fmt: skip


def draw_shift(shift):
    """The four maps with `shift` tokens in front; returns what they show, in words."""
    scores = sentence_scores(shift)
    changes = []
    for ax, scheme in zip(axes, SCHEMES):
        M = scores[scheme]
        images[scheme].set_data(np.ma.masked_array(np.where(np.isfinite(M), M, 0.0),
                                                   mask=~np.isfinite(M)))  # fmt: skip
        seen = np.isfinite(M)
        change = np.abs(M[seen] - base[scheme][seen]).max()
        ax.set_title(f"{scheme}: change {change:.2f}", fontsize=9)
        changes.append(f"{scheme} {change:.2f}")
    return (f"Four 6 by 6 score maps of 'the cat sat on the mat' (queries as rows, keys as "
            f"columns, future keys grey) with {shift} tokens in front; largest change of a score "
            f"from the sentence alone: {', '.join(changes)}.")  # fmt: skip


live.film(shift_slider, draw_shift)
show(widgets.VBox([shift_slider, live.image]), live, alt=draw_shift(0))

# %% [markdown]
# So RoPE and ALiBi give what the additive encoding only hoped for (lesson 01: the paper
# "hypothesized it would allow the model to easily learn to attend by relative positions"):
# scores that depend on how far apart two tokens are, wherever the sentence starts. The
# attention *weights* still change a little with tokens in front: each row's softmax also
# spreads over the new keys. And with no positions at all nothing in a score depends on
# position; a causal model has only the mask to tell where it is, and section 4 measures how
# little two attention-only layers get from it.
#
# ## 4 · The experiment: train four ways, read longer
#
# Lesson 10's model and task (two attention-only layers, 4 heads, 32 tokens drawn with
# replacement, a repeated segment to copy), trained four times with the same settings, seed and
# 5,000 steps, and only the position scheme changed: **learned** (lesson 10's shipped model: a
# table of 32 position vectors added to the embeddings), **RoPE** (queries and keys rotated,
# base 10000 as in `rotate`), **ALiBi** (the four slopes $1/4, 1/16, 1/64, 1/256$) and **none**.
# Each is loaded from the weights that ship with the course (each file's sha256 is checked),
# made by `python -m helpers.induction --positions rope` (or `alibi`, `none`).

# %%
models = {scheme: induction.load(positions=scheme) for scheme in ("learned", "rope", "alibi", "none")}
for scheme, model in models.items():
    print(f"{scheme:8s} {model}")
print(f"ALiBi's slopes for {models['alibi'].n_heads} heads: {alibi_slopes(models['alibi'].n_heads)}")

# %% [markdown]
# Then each reads sequences of 32, 64 and 128 tokens: random tokens with a segment of 10
# repeated right after itself, the copy placed anywhere at 32 tokens and **past position 32**
# at 64 and 128, so that each query of the copy has more than 32 keys before it, some further
# back than any distance seen in training. The table gives the loss on the repeated
# tokens (the copy's tokens after its first), on first occurrences (divided by $\log 64$: 1 is
# a uniform guess, right for tokens nothing can predict), and the best previous-token and
# induction scores of lesson 10.
#
# **Predict first.** The RoPE model, 0.3 nats or so on the repeats at 32 tokens: at 128 tokens,
# is its loss below 0.5, 0.5 to 2, or above 2 nats?

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.length_prediction.check(guess)

# %%
LENGTHS = (32, 64, 128)
probes_at = {n: far_repeats(np.random.default_rng(n), 128, n, 64, length=10,
                            after=0 if n == 32 else 32) for n in LENGTHS}  # fmt: skip
table = {}
print(f"{'':10s} {'n':>4s}  repeats  first/log 64  previous-token  induction")
for scheme, model in models.items():
    for n in LENGTHS:
        try:
            row = measure(model, probes_at[n])
        except ValueError as error:  # the learned table has 32 rows
            print(f"{scheme:10s} {n:4d}  refused: {str(error)[:70]}")
            continue
        table[scheme, n] = row
        print(f"{scheme:10s} {n:4d}  {row['repeats']:7.2f}  {row['first']:12.2f}"
              f"  {row['previous']:14.2f}  {row['induction']:9.2f}")  # fmt: skip

# %%
fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
styles = {"learned": dict(marker="s", ms=11, mfc="none", label="learned table (32 only)"),
          "rope": dict(marker="o", label="RoPE"), "alibi": dict(marker="^", label="ALiBi"),
          "none": dict(marker="v", label="none")}  # fmt: skip
for scheme in models:
    lengths = [n for n in LENGTHS if (scheme, n) in table]
    ax.plot(lengths, [table[scheme, n]["repeats"] for n in lengths], **styles[scheme])
ax.axhline(np.log(64), color="grey", ls=":", label="uniform guess, log 64")
ax.axvline(32, color="black", lw=0.8)
ax.set_xscale("log", base=2)
ax.minorticks_off()
ax.set(xticks=LENGTHS, xticklabels=[str(n) for n in LENGTHS], ylim=(0, 4.6),
       xlabel="tokens read (trained on 32: black line)", ylabel="loss on the repeats (nats)",
       title="Reading longer than the training length")  # fmt: skip
ax.legend(fontsize=8, loc="center right")
show_figure(
    fig,
    "Loss on the repeated tokens against the number of tokens read, 32, 64 and 128, per "
    "scheme: " + "; ".join(
        f"{scheme} " + ", ".join(f"{table[scheme, n]['repeats']:.2f}" for n in LENGTHS
                                 if (scheme, n) in table)
        for scheme in models
    ) + " (learned: 32 only). A dotted line marks log 64, a uniform guess.",
)  # fmt: skip

# %% [markdown]
# What the table and the figure say, scheme by scheme.
#
# - **Learned** positions have 32 rows: the model refuses longer input (the error printed).
#   There is no position vector for token 33 to add.
# - **RoPE** learns the task as well as the learned table at 32 tokens and forms the same
#   circuit (a previous-token head and induction heads). Past the training length its loss
#   on the repeats rises with the length, its previous-token head holds and its induction
#   heads weaken. The copy is as far back as in training (10 tokens), so what changed? Each
#   query of the copy now has up to 127 keys before it instead of at most 31, some further back
#   than any distance seen in training. Whether those far keys are *misread* (their unseen
#   angles giving them high scores) or simply *too many* is measured below.
# - **ALiBi** is worse at 32 tokens but degrades more slowly, and it has no previous-token head
#   (best score about 0.2). Its route is measured below.
# - With **no positions** the two-layer attention-only model learns the task only in part in
#   5,000 steps (about 2 nats on the repeats at 32 tokens, no previous-token head, weak
#   induction heads), and not at all past 32. Its first layer has nothing to tell the previous
#   token from any other earlier one, so it cannot build a previous-token head there.
#   Kazemnejad et al. prove that a model without positions can recover them, in its first layer,
#   from the causal mask and a start-of-sequence token (it counts how many tokens it sees); these
#   sequences have no such token, and the model has no MLPs. In their decoder-only models (with
#   MLPs, on reasoning tasks), no positions at all generalised to longer inputs better than
#   RoPE, ALiBi and learned positions.
#
# **Why RoPE degrades.** For the queries of the copy at 128 tokens, in layer 1: the mean score
# of the keys that are neither the right key nor after another occurrence of the query's
# token, near (less than 32 back) and far (32 or more back); the weight on all far keys beside
# the share they would get from a uniform guess; and the weight on the right key (the
# induction score) at 32 and at 128 tokens. Then the same model with a mask that lets each
# query read only its last 32 keys.

# %%
rope, alibi = models["rope"], models["alibi"]


def copy_query_stats(model, data):
    """Per layer-1 head, over the queries of the copy: the mean score of ordinary keys near
    and far, the weight on far keys, and the share of keys that are far."""
    ran = model.run(data.tokens)
    n = data.tokens.shape[1]
    scores = ran.Q[1] @ np.swapaxes(ran.K[1], -1, -2) / np.sqrt(model.d_head)  # (b, h, n, n)
    if model.positions == "alibi":
        scores = scores + helpers.rope.alibi_bias(n, model.n_heads)
    back = np.subtract.outer(np.arange(n), np.arange(n))  # [i, j]: how far back key j is
    # (b, n, n): key j comes right after an earlier occurrence of query i's token
    after_match = np.zeros((len(data.tokens), n, n), dtype=bool)
    after_match[:, :, 1:] = data.tokens[:, :, None] == data.tokens[:, None, :-1]
    # ordinary keys of the copy's queries: at or before the query, neither the right key (9
    # back in a 10-token copy) nor after another occurrence of the query's token
    ordinary = data.is_repeat[:, :, None] & (back >= 0) & (back != 9) & ~after_match
    near, far = ordinary & (back < 32), ordinary & (back >= 32)

    def mean_over(mask):  # the mean score, per head, over the (query, key) pairs in mask
        return np.where(mask[:, None], scores, 0.0).sum(axis=(0, 2, 3)) / mask.sum()

    queries = data.is_repeat.sum()
    weight = (ran.A[1] * (data.is_repeat[:, :, None] & (back >= 32))[:, None]).sum(axis=(0, 2, 3))
    far_share = (back >= 32).sum(axis=1) / (np.arange(n) + 1)  # of query i's keys, if uniform
    return mean_over(near), mean_over(far), weight / queries, np.broadcast_to(far_share, data.is_repeat.shape)[data.is_repeat].mean()


data = probes_at[128]
for scheme, model in (("rope", rope), ("alibi", alibi)):
    near, far, weight, share = copy_query_stats(model, data)
    print(f"{scheme}, 128 tokens, the copy's queries, layer-1 heads:")
    print(f"  mean score of ordinary keys, near {np.round(near, 2)}, far {np.round(far, 2)}")
    print(f"  weight on keys 32 or more back {np.round(weight, 2)} (a uniform guess: {share:.2f})")
for n in (32, 128):
    right = induction.head_scores(np.stack(rope.run(probes_at[n].tokens).A, axis=1), probes_at[n])
    print(f"rope, {n} tokens: weight on the right key, per layer-1 head {np.round(right[1][1], 2)}")
print(f"rope, 128 tokens, every key: repeats {table['rope', 128]['repeats']:.2f}; only the last "
      f"32 keys: {measure(rope.windowed(32), data)['repeats']:.2f}; "
      f"(at 32 tokens: {table['rope', 32]['repeats']:.2f})")  # fmt: skip

# %% [markdown]
# The far keys are not misread: an ordinary key 32 or more back scores about as an ordinary
# near key does (printed). There are just many of them. Each takes a little weight, and
# together they take a good part of the layer-1 heads' attention (less than a uniform guess
# would give them, printed beside it) away from the right key, whose weight falls (printed).
# Hiding them with a 32-key window brings most of the loss back. So what hurts RoPE past its
# training length here is **dilution**: more keys sharing each softmax, not scores the unseen
# angles make unusually high (the failure Chen et al. warn extrapolation can lead to). ALiBi's
# penalty keeps its layer-1 weight near (printed), which is why it degrades more slowly.
#
# **ALiBi's route.** Take out each of the ALiBi model's layer-0 heads (its output set to zero)
# and measure the loss on the repeats at 32 tokens; beside it, the head's mean weight on the
# keys 0, 1, 2 and 3 positions back. Then each layer-1 head's weight on the right key, beside
# the penalty its slope puts on that key, 9 positions back in a 10-token copy.

# %%
data32 = probes_at[32]
marked = data32.is_repeat[:, :-1]


def repeat_loss(model, ablate=()):
    """The loss on the repeats at 32 tokens with the heads in `ablate` zeroed."""
    logits = model.run(data32.tokens, ablate=ablate).logits
    return next_token_losses(logits, data32.tokens)[marked].mean()


A0 = alibi.run(data32.tokens).A[0]  # (128, heads, 32, 32): layer 0
print(f"ALiBi model, whole: loss on the repeats {repeat_loss(alibi):.2f}")
for head, slope in enumerate(alibi_slopes(alibi.n_heads)):
    back = [np.diagonal(A0[:, head], -k, axis1=-2, axis2=-1)[:, 8:].mean() for k in range(4)]
    print(f"  layer 0, head {head} (slope {slope:.4f}) out: {repeat_loss(alibi, [(0, head)]):.2f};"
          f" its weight 0, 1, 2, 3 back: {np.round(back, 2)}")  # fmt: skip
print(f"e^(-1/4) = {np.exp(-0.25):.2f}")
right = {s: induction.head_scores(np.stack(m.run(data32.tokens).A, axis=1), data32)[1][1]
         for s, m in (("rope", rope), ("alibi", alibi))}  # fmt: skip
for head, slope in enumerate(alibi_slopes(alibi.n_heads)):
    print(f"  layer 1, head {head}: weight on the right key, ALiBi {right['alibi'][head]:.2f} "
          f"(penalty there {9 * slope:.2f}), RoPE {right['rope'][head]:.2f}")  # fmt: skip

# %% [markdown]
# Without one layer-0 head the model cannot copy: the loss is worse than a uniform guess. It is
# the head with the steepest slope, $1/4$, and its weights fall by about the same factor,
# $e^{-1/4}$, at every step back (printed): it averages the recent tokens, the previous one only
# a little more than the one before. With random tokens that is all a first-layer ALiBi head
# *can* do: nothing in a token's embedding says where it is, so on average the only thing that
# tells the previous key from the one before it is the penalty, and a slope of $1/4$ favours it
# by the factor $e^{1/4}$ only (the inverse of the 0.78 printed). The fixed slopes cost it a
# second time in layer 1: the heads with the steepest slopes put much less weight on the right
# key, 9 back, than the others (printed beside their penalty there), while RoPE's four heads
# all find it. These
# numbers show both costs; they do not say how much of the gap at 32 tokens each one makes.
# Press et al. used more heads (steeper slopes: 1/2 with 8) and deep models with MLPs.
#
# **Position interpolation** (Chen et al. 2023, [Extending Context Window of Large Language
# Models via Positional Interpolation](https://arxiv.org/abs/2306.15595)) squeezes the
# positions of a longer sequence into the trained range: read $n$ tokens with every position
# multiplied by $32/n$, so that every position stays below 32. One line:
# `rope.interpolate(32 / n)`. Without fine-tuning:

# %%
for n in (64, 128):
    plain, squeezed = table["rope", n], measure(rope.interpolate(32 / n), probes_at[n])
    print(f"{n} tokens: repeats {plain['repeats']:.2f} -> {squeezed['repeats']:.2f} "
          f"interpolated; previous-token {plain['previous']:.2f} -> {squeezed['previous']:.2f};"
          f" induction {plain['induction']:.2f} -> {squeezed['induction']:.2f}")  # fmt: skip

# %% [markdown]
# Interpolation alone makes this model worse, not better: its previous-token head collapses
# (printed). That head needs the key **one** position back, and interpolated by $32/128$, one
# position back turns by a quarter of the angle it was trained on: a distance the model never
# saw, for the one head that matters most. Chen et al. interpolate *and then fine-tune* ("within
# 1000 steps", their abstract says). A one-line change, then, and not a fix on its own, at least
# for a model whose work rests on telling distance 1 from distance 2. Fine-tuned for a few
# hundred steps on 64-token sequences, the interpolated model copies again, but no better than
# the same fine-tuning without interpolation (measured with `induction.train(init=rope,
# position_scale=0.5, ...)`; the numbers are in the notes at the top of
# `helpers/induction/lengths.py`, too slow to train here): for this small model, the fine-tuning
# on longer sequences does the work. That loss of resolution
# between near positions is what later schemes address by stretching the slow pairs and leaving
# the fast ones, which tell near positions apart, nearly or wholly as they are ("NTK-aware"
# scaling; YaRN, Peng et al. 2023).
#
# ## 5 · RoPE and the KV cache
#
# Lesson 05's `decode_step` kept the keys and values of every earlier token, so that a new
# token's query could attend to them without computing them again; lesson 10's `generate` does
# the same. With RoPE the cache holds keys **already rotated**, each at its own position: a key
# is rotated once, when it is computed, and never again, because its position never changes.
# Each new token's query and key are rotated at the new token's position. Checked on the RoPE
# model: its cached keys against those of a full forward pass over the same tokens.

# %%
prompt = induction.model.encode("abc def ghi. abc")
generated, cache = rope.generate(prompt, 6)
full = rope.run(generated[:-1])  # the pass over every token generate has cached
for layer in range(rope.n_layers):
    difference = np.abs(cache["K"][layer] - full.K[layer][0]).max()
    print(f"layer {layer}: cached keys {cache['K'][layer].shape}, the full pass's rotated keys "
          f"to 1e-12: {difference < 1e-12}")  # fmt: skip
print("generated:", repr(induction.model.decode(generated)))

# %% [markdown]
# ### Challenge ★★★ — `rope_decode_step(q, k, v, K_cache, V_cache, position)`
#
# One decoding step of one layer with RoPE. The new token is at `position`; `q`, `k`, `v`
# (shape `(h, d)`) are its query, key and value before any rotation; `K_cache` `(h, t, d)`
# holds the keys of positions $0 \dots t - 1$, each already rotated at its position, and
# `V_cache` `(h, t, d)` their values, with $t$ = `position`. Return `(output, K_cache, V_cache)`:
# the new token's attention output `(h, d)` over every cached key, its own included, with
# scores divided by $\sqrt{d}$; and both caches with the new token appended `(h, t + 1, d)`.
#
# *May use:* NumPy, `helpers.rope.rotate`, `helpers.softmax`.


# %%
def rope_decode_step(q, k, v, K_cache, V_cache, position):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.rope_decode_step.check(rope_decode_step)

# %% [markdown]
# Stuck? `checks.rope_decode_step.hint(1)` (then 2, 3), or `checks.rope_decode_step.solution()`.
#
# ## Summary
#
# - **RoPE** rotates each query and key by angles proportional to its position, one frequency
#   per pair of dimensions: lesson 01's shift matrix, applied to $Q$ and $K$ instead of $Z$. A
#   score then depends on the two vectors and their distance only (measured to rounding).
#   **ALiBi** adds $-m_h(i - j)$ to the scores, with fixed slopes per head. Neither changes the
#   scores between a sentence's words when tokens are put in front; an added encoding does.
# - Lesson 10's model trained four ways, read past its 32 training positions: the **learned**
#   table cannot; **RoPE** copies as well as the learned table at 32 tokens and degrades
#   with length: its far keys are scored like near ones, but there are many more of them, and
#   together they dilute the weight on the right key (a 32-key window restores most of it);
#   **ALiBi** copies less well at 32 tokens (its fixed slopes blur its first layer and keep its
#   steepest second-layer heads from the copy) but its penalty keeps its attention near, so it
#   degrades more slowly; with **no positions**, two attention-only layers learn the task only
#   in part at 32 tokens, and not at all beyond.
# - **Position interpolation** without fine-tuning breaks this model's previous-token head:
#   squeezed positions are distances it never saw. The fix in the paper includes fine-tuning.
# - With RoPE the **KV cache** holds rotated keys: each key is rotated once, at its position,
#   and each new query at its own.
#
# **Next**: back to [00 · start here](00_start_here.ipynb) for the map of the course. The
# numbers here come from one small model per scheme (seed 0); the notes at the top of
# `helpers/induction/lengths.py` give a second seed's, which tell the same story.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
