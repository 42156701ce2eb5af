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
# # 10 · What a causal model learns: induction heads
#
# **What you will learn**
# - the task that a causal model can only solve by reading its own context: continue a sequence
#   that repeats what came earlier (in-context copying), and why that is what lesson 05's mask
#   and `decode_step`'s KV cache are for;
# - that a two-layer, attention-only Transformer, trained here in NumPy, learns it **suddenly**
#   (a phase change) with two heads that work together: a **previous-token head** in layer 0
#   and an **induction head** in layer 1, measured, watched in the explorer and ablated;
# - **why** the pair finds the match: the first head's $W_{OV}$ feeds the second head's
#   $W_{QK}$, and their product is a matrix you can read.
#
# **You need**: [05 · causal masking](05_causal_masking.ipynb) (the mask and `decode_step`),
# [06 · cross-attention and heads](06_cross_attention_and_heads.ipynb) (heads and $W^O$),
# [08 · training attention](08_training_attention.ipynb) (a backward pass by hand) and
# [09 · a real model](09_real_model.ipynb) (scores that say what a head does).
#
# Lesson 09's model was an encoder, trained by others. This one is a **decoder** (causal, like
# GPT), small enough to train on a laptop in NumPy: its weights ship with the course, made by
# `python -m helpers.induction` from a fixed seed (every load checks the file's sha256), and
# section 3 lets you retrain it yourself, and says how closely a retraining matches it
# (`make reproduce-weights` retrains all of it into `build/`, never over the shipped file).

# %%
import inspect

import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import blas, checks, induction
from helpers.induction import repeat_task, reproduce
from helpers.induction.model import decode, encode
from helpers.induction_explorer import InductionExplorer
from helpers.plots import plot_heatmap, show_figure

np.set_printoptions(precision=3, suppress=True)

model = induction.load()  # reads weights.npz, checks its sha256
print(model)
print("trained with:", {k: v for k, v in model.settings.items() if k not in ("eval_every",)})

# %% [markdown]
# ## 1 · The task: continue what already happened
#
# The model reads sequences of 32 tokens drawn at random from a vocabulary of 64, so no token
# says anything about the next one, with one exception: a **segment** of 5 to 10 tokens that
# occurs again later (two or three times in all, at random places; the other tokens are all
# different). Once the model has seen the
# segment, it can predict every token of a later copy after the copy's first, but only by
# finding the earlier copy **in its context**. To type sequences, each token id is one
# character: letters, digits, space and '.'.

# %%
rng = np.random.default_rng(3)
data = repeat_task(rng, 1, model.max_len, model.vocab_size)
seq = data.tokens[0]  # (32,) token ids
starts = data.starts[0, : data.count[0]]
print("tokens as characters:", repr(decode(seq)))
print(f"the segment: {data.length[0]} tokens at positions {[int(p) for p in starts]}:",
      repr(decode(seq[starts[0] : starts[0] + data.length[0]])))
print("predictable (1) or not (0), per position:", "".join(str(int(v)) for v in data.is_repeat[0]))

# %% [markdown]
# A position is predictable when the token it must predict, the next one, continues a copy.
# Here is the trained model's loss at every position (the negative log of the probability it
# gave the token that came next), on the predictable positions and on the others, beside
# $\log 64$, the loss of a uniform guess:

# %%
logits, attention = model.forward(seq)  # (32, 64), (2, 4, 32, 32)
log_probs = logits - logits.max(-1, keepdims=True)
log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
loss = -log_probs[np.arange(31), seq[1:]]  # (31,): position i predicts token i + 1
predictable = data.is_repeat[0, :31]
print(f"loss on the predictable positions: {loss[predictable].mean():.3f} nats")
print(f"loss on the other positions:       {loss[~predictable].mean():.3f} nats")
print(f"log 64 (a uniform guess):          {np.log(64):.3f} nats")

# %% [markdown]
# On the predictable positions the model gives the right token most of its probability; on the
# others it does about as well as a uniform guess, which is the best it can do there (short of
# never guessing a token already used). **Why a causal model needs this.** Lesson 05's
# mask lets position $i$ read only positions $0..i$: the model cannot look ahead, so to predict
# well it must use what it has already read. When it generates text, `decode_step`'s KV cache
# keeps the key and value of every earlier token for exactly that: each new token's query
# searches the cache. Copying from context is the simplest use of that search; Olsson et al.
# (2022, [In-context Learning and Induction Heads](https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html))
# argue that the heads doing it are behind much of the in-context learning of large models.
#
# ## 2 · The model: two layers of attention, nothing else
#
# The model is the attention-only Transformer that Elhage et al. (2021, [A Mathematical
# Framework for Transformer Circuits](https://transformer-circuits.pub/2021/framework/index.html))
# studied: token and position embeddings, two layers of causal multi-head attention (lessons
# 05 and 06) whose outputs are **added** to the running vector of each position (the residual
# stream), and an unembedding to 64 scores. No feed-forward block, no LayerNorm, no biases: every
# path from input to output goes through attention heads, so we can read it off the weights.

# %%
print(inspect.getsource(induction.model.forward))

# %%
for name, W in model.params.items():
    print(f"{name:6s} {str(W.shape):14s}")
print("parameters:", sum(W.size for W in model.params.values()))
print(f"h = {model.n_heads} heads per layer, d_head = d_model / h = {model.d_model} / "
      f"{model.n_heads} = {model.d_head}")
print("logits:", logits.shape, " attention:", attention.shape, "= (layers, heads, n, n)")
print("every weight above the diagonal is 0 (causal):",
      bool(np.all(attention[..., ~helpers.causal_mask(32)] == 0)))

# %% [markdown]
# `forward` runs lesson 04's attention on all heads at once and keeps every intermediate;
# `loss_and_grads` (in the same module) goes back through it line by line, the way lesson 08
# did for one layer, with lesson 08's `softmax_backward` inside. A test compares it with finite
# differences.
#
# ## 3 · Training, and the phase change
#
# The shipped model was trained with Adam on fresh random batches of 64 sequences. Every
# 50 steps the training recorded, on a fixed set of 256 other sequences, the loss on the
# predictable positions and on the others, and each head's scores (defined in section 4).
#
# **Predict first.** How does the loss on the predictable tokens fall during training:
# `"steadily"` (a little every step) or `"suddenly"` (flat for a long time, then a drop within
# a few hundred steps)?

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.phase_prediction.check(guess)

# %%
history = model.history
steps = np.array(history.steps)
loss_repeat, loss_other = np.array(history.loss_repeat), np.array(history.loss_other)
previous_best = np.array(history.previous_token)[:, 0].max(axis=-1)  # best layer-0 head
induction_best = np.array(history.induction)[:, 1].max(axis=-1)  # best layer-1 head
half = (loss_repeat[0] + loss_repeat[-1]) / 2
change = int(steps[np.argmax(loss_repeat < half)])  # first record below halfway
fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, layout="constrained")
top.plot(steps, loss_other, label="other positions (first occurrences)", color="#440154")
top.plot(steps, loss_repeat, label="predictable positions (repeats)", color="#21918c", lw=2)
top.axhline(np.log(64), color="grey", ls=":", label="log 64, a uniform guess")
top.set(ylabel="loss (nats)", title="loss on 256 held-out sequences during training")
top.legend()
bottom.plot(steps, previous_best, label="best previous-token score, layer 0", color="#3b528b")
bottom.plot(steps, induction_best, label="best induction score, layer 1", color="#5ec962",
            lw=2)
bottom.set(xlabel="training step", ylabel="attention weight", ylim=(0, 1),
           title="the two heads' scores")
bottom.legend()
for ax in (top, bottom):
    ax.axvline(change, color="black", lw=0.8)
alt = (f"Loss and scores against the training step, {steps[-1]} steps. The loss on repeats "
       f"falls below halfway ({half:.2f} nats) at step {change} (black line).")
show_figure(fig, alt)
print("Figure:", alt)
for step in (change - 200, change - 100, change, change + 100, change + 200):
    j = int(np.searchsorted(steps, step))
    print(f"step {steps[j]:5d}: loss on repeats {loss_repeat[j]:.2f}, others {loss_other[j]:.2f}"
          f" | previous-token {previous_best[j]:.2f}, induction {induction_best[j]:.2f}")
print(f"at the end (step {steps[-1]}): loss on repeats {loss_repeat[-1]:.3f}, others "
      f"{loss_other[-1]:.3f}; previous-token {previous_best[-1]:.2f}, induction "
      f"{induction_best[-1]:.2f}")

# %% [markdown]
# Notice: for hundreds of steps the loss on repeats falls slowly, then it drops within about
# two hundred (the rows printed around the black line), and both heads' scores rise in the
# same window. Olsson et al. saw the same in real language models: a **phase change** early in
# training, in every model with more than one layer, during which induction heads form and
# in-context learning improves at once. Neither head lowers the loss alone: the
# previous-token head only helps once a layer-1 head reads what it writes, and that head has
# nothing to read before. The loss on the other positions stays close to $\log 64$ and even
# rises a little during the drop: for a while the model also copies where nothing repeats.
#
# **Retrain it yourself.** The cell below trains the same model from the same seed (set
# `RETRAIN = True` and run it). It stops after `SECONDS` seconds or 1,200 steps, whichever
# comes first, prints the loss, the two best scores and the seconds so far every 100 steps,
# and at the end the step and the time at which the loss on repeats fell below 1 nat. With
# the same seed it retraces the shipped run (how closely depends on the BLAS NumPy uses here:
# after the cell).
# Try another `seed`: some
# runs also grow a layer-0 head that attends to the earlier copy of the query's own token
# (a *duplicate-token* head, the `duplicate_token` scores of the history), the other way a first
# layer can help find the match. It does not run by default, to keep this notebook fast.

# %% tags=["nbval-ignore-output"]
RETRAIN = False  # set to True to train (about a minute)
SECONDS = 60  # stop after this long (or 1,200 steps)
print(f"NumPy and BLAS here:       {blas.describe()}")
print(f"the shipped run's:         {reproduce.SHIPPED_BLAS}")
print(f"tolerance on another kernel: {reproduce.TOLERANCE['loss_repeat']} nats in a recorded loss, "
      f"{reproduce.TOLERANCE['induction']} in a head score")
for kernel, largest in reproduce.MEASURED.items():
    print(f"retrained under {kernel}: largest differences " +
          ", ".join(f"{what} {value}" for what, value in largest.items()))
print("(0.1 + 0.2) + 0.3 == 0.1 + (0.2 + 0.3):", (0.1 + 0.2) + 0.3 == 0.1 + (0.2 + 0.3))
if RETRAIN:
    import time

    start = time.perf_counter()

    shipped = model.history  # the shipped run's records, at the same steps

    def report(step, h):
        if step % 100 == 0:
            j = len(h.steps) - 1  # this record's index in both histories
            gap = max(np.max(np.abs(np.asarray(getattr(h, name)[j]) -
                                    np.asarray(getattr(shipped, name)[j])))
                      for name in reproduce.HISTORY_FIELDS)
            print(f"step {step:5d} {time.perf_counter() - start:5.1f} s | loss on repeats "
                  f"{h.loss_repeat[-1]:.2f}, others {h.loss_other[-1]:.2f} | previous-token "
                  f"{np.max(h.previous_token[-1][0]):.2f}, induction {np.max(h.induction[-1][1]):.2f}"
                  f" | largest difference from the shipped run {gap:.1e}")
        return time.perf_counter() - start > SECONDS  # True: stop

    mine, my_history = induction.train(seed=0, steps=1200, callback=report)
    below = [j for j, value in enumerate(my_history.loss_repeat) if value < 1.0]
    if below:
        j = below[0]
        print(f"the loss on repeats fell below 1 nat at step {my_history.steps[j]}, after "
              f"{my_history.seconds[j]:.0f} s")
    else:
        print(f"no phase change within {SECONDS} s: raise SECONDS and run the cell again")
else:
    print("RETRAIN is False: set it to True and run this cell to train the model yourself.")

# %% [markdown]
# **Exactly, or within a tolerance.** Each printed line ends with the largest difference between
# your run's records and the shipped run's at the same step. It is 0 only with the same NumPy and
# the same BLAS kernel as the shipped run (the first two lines above), on a CPU with the same
# vector instructions that NumPy's own loops use (AVX2 for the shipped run). Floating-point addition is
# not associative (the last line above), and each BLAS kernel groups, orders and rounds the terms
# of a matrix product its own way, so the last few bits of a product differ from one kernel to
# another: with NumPy's pip wheel, OpenBLAS's `Haswell` kernel on x86-64 CPUs with AVX2,
# `SkylakeX` with AVX-512, an Arm kernel on Arm; Apple's Accelerate on macOS 14 or later.
# Training runs in float32 and amplifies those bits step by step: elsewhere the difference is
# tiny for the first few hundred steps and then grows, and the weights end up visibly different
# (the lines above: by up to 0.09), while what the model does, measured, stays well within the
# tolerance (losses within 0.003 nats, head scores within 0.01 under those two kernels).
# `make reproduce-weights` retrains all 2,000 steps and checks that, printing the largest
# differences; on an x86-64 CPU with AVX2 and NumPy's OpenBLAS (Linux, Windows, or macOS before
# 14), `OPENBLAS_CORETYPE=Haswell make reproduce-weights EXACT=1` rebuilds the shipped file byte
# for byte. A Mac with Apple silicon cannot run that kernel: there a retraining matches the
# shipped one within the tolerance, never bit for bit.

# %% [markdown]
# ## 4 · The two heads
#
# Which heads did the training make? The explorer shows the shipped model's attention on a
# sequence with a repeat; pick layer 0 or 1 and a head, and click a character (or use the arrow
# keys) to see that query's weights as bars. Look through layer 0's heads for one whose bright
# cells sit just below the diagonal, then layer 1 with a query in the second copy, and type
# your own sequence (letters, digits, space and '.', up to 32).

# %%
text = "dog jumps.dog jumps."
second_j = text.index("j", 10)  # the second copy's "j"
explorer = InductionExplorer(text, layer=1, head=0, query=second_j, model=model)
explorer.show()
_, A_text = model.forward(encode(text))  # (2, 4, 29, 29)
row = A_text[1, 0, second_j]
print(f"layer 1, head 0: the second 'j' (position {second_j}) puts {row.max():.2f} of its weight "
      f"on {text[row.argmax()]!r} at position {row.argmax()}; the first 'j' is at "
      f"{text.index('j')}")

# %% [markdown]
# Two patterns to look for. In layer 0, one head puts its weight on the key just **before**
# each query: a previous-token head, like the one lesson 09 found in a real model. In layer 1,
# a query in the second copy, say the second `j`, puts its weight on the character **after**
# the first `j`, the `u`: the token that should come next. That is an **induction head**: it
# looks up the earlier occurrence of the current token and reads what followed it. To compare
# heads we need scores.
#
# ### Exercise 1 ★ — `previous_token_score(A)`: one score per map
#
# `A` has shape `(..., n, n)`: one causal map, a model's `(layers, heads, n, n)`, or a batch of
# them. Return the mean weight a query puts on the key just before it, $A[i, i-1]$, over the
# queries that have one; one number per map (shape `(...)`).
#
# *May use:* NumPy only.

# %%
def previous_token_score(A):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.previous_token_score.check(previous_token_score)

# %% [markdown]
# Stuck? `checks.previous_token_score.hint(1)` (then 2, 3), or
# `checks.previous_token_score.solution()`.
#
# ### Exercise 2 ★★ — `induction_score(A, L)`: looking at what came next
#
# The sequence repeats with period $L$: token $i$ equals token $i - L$ for every $i \ge L$ (a
# segment of length $L$, then again, maybe a third time in part). Query $i \ge L$ has an
# earlier occurrence of its token at $i - L$; an induction head looks at the token just after
# it, key $i - L + 1$ (the diagonal at offset $-L + 1$). Return the mean of $A[i, i - L + 1]$
# over the queries $i = L, \dots, n - 1$, one number per map of `A` `(..., n, n)`.
#
# *May use:* NumPy only.

# %%
def induction_score(A, L):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.induction_score.check(induction_score)

# %% [markdown]
# Stuck? `checks.induction_score.hint(1)` (then 2, 3), or `checks.induction_score.solution()`.
# The cells below use the helpers' versions (`helpers.induction.previous_token_score` and
# `induction_score`), so they run either way.
#
# **Every head, on fresh sequences.** A batch of 200 random segments of length 10, as long as
# the longest in training, each followed by its copy ($n = 20$): both scores for all 8 heads.

# %%
L = 10
segments = np.argsort(np.random.default_rng(7).random((200, model.vocab_size)), axis=1)[:, :L]
repeated = np.concatenate([segments, segments], axis=1)  # (200, 24): token i = token i - 12
_, maps = model.forward(repeated)  # (200, 2, 4, 24, 24)
prev_table = induction.previous_token_score(maps).mean(axis=0)  # (2, 4)
ind_table = induction.induction_score(maps, L).mean(axis=0)  # (2, 4)
print("previous-token score, rows = layer 0..1, columns = head 0..3:\n", np.round(prev_table, 2))
print("induction score:\n", np.round(ind_table, 2))
prev_head = int(np.argmax(prev_table[0]))
ind_head = int(np.argmax(ind_table[1]))
print(f"previous-token head: layer 0, head {prev_head} ({prev_table[0, prev_head]:.2f}); "
      f"induction head: layer 1, head {ind_head} ({ind_table[1, ind_head]:.2f})")
even = np.mean([1 / (i + 1) for i in range(1, 2 * L)])  # query i spreads over keys 0..i
print(f"for comparison, a head spreading evenly scores {even:.2f} on the previous token")

# %% [markdown]
# The table shows the division of labour: one layer-0 head looks back one token, the layer-1
# heads all do induction. Their maps on one of these sequences, side by side:

# %%
labels = [decode([t]) for t in repeated[0]]
fig, axes = plt.subplots(1, 2, figsize=(12, 5.2), layout="constrained")
for ax, (layer, head, what) in zip(axes, ((0, prev_head, "previous token"),
                                          (1, ind_head, "induction"))):
    plot_heatmap(maps[0, layer, head], labels, labels, ax=ax, vmin=0, vmax=1, annotate=False,
                 masked=~helpers.causal_mask(2 * L),
                 title=f"layer {layer}, head {head} ({what}): rows = query, columns = key",
                 xlabel="key", ylabel="query")
alt = (f"Two attention maps over {2 * L} tokens (a segment of {L}, then its copy). "
       f"Left, the weight on the diagonal just below the main one: "
       f"{induction.previous_token_score(maps[0, 0, prev_head]):.2f} on average. Right, in the "
       f"second half, the weight on the diagonal {L - 1} below the main one: "
       f"{induction.induction_score(maps[0, 1, ind_head], L):.2f}.")
show_figure(fig, alt)
print("Figure:", alt)

# %% [markdown]
# Notice the right map: in its lower half the bright cells form a line parallel to the
# diagonal, $L - 1 = 9$ columns to its left: query $i$ looks at key $i - 9$, the token after the
# earlier copy of token $i$. In its upper half (the first copy) there is nothing to find, and
# the head parks its weight on the first token.
#
# ## 5 · Ablation: take one head out
#
# If the layer-1 heads find the earlier copy *through* the previous-token head, removing that
# head should break them. We **ablate** it: its output is set to zero (it still computes its
# weights, but adds nothing to the residual stream), and we measure the loss on the repeats of
# 128 fresh sequences of the training task.
#
# **Predict first.** Zero the output of the layer-0 previous-token head. Does the loss on the
# predictable tokens `"stay"` low, `"rise a little"`, or go back `"up"` near $\log 64$?

# %%
guess = None  # YOUR GUESS HERE, before you run the next cell
checks.ablation_prediction.check(guess)

# %%
fresh = repeat_task(np.random.default_rng(11), 128, model.max_len, model.vocab_size)
targets = np.where(fresh.is_repeat, fresh.targets, -1)  # only the predictable positions count
_, fresh_maps = model.forward(fresh.tokens)  # (128, 2, 4, 32, 32)
self_weight = np.diagonal(fresh_maps, 0, -2, -1).mean(axis=(0, -1))  # (2, 4): A[i, i]
back_weight = induction.previous_token_score(fresh_maps).mean(axis=0)  # (2, 4): A[i, i - 1]
print(f"loss on repeats, whole model: {model.loss(fresh.tokens, targets):.3f} nats")
for layer in range(2):
    for head in range(model.n_heads):
        ablated = model.loss(fresh.tokens, targets, ablate=[(layer, head)])
        print(f"  without layer {layer}, head {head}: {ablated:.3f}   (this head's weight on "
              f"itself {self_weight[layer, head]:.2f}, on the previous token "
              f"{back_weight[layer, head]:.2f})")
all_layer1 = [(1, head) for head in range(model.n_heads)]
print(f"without all of layer 1: {model.loss(fresh.tokens, targets, ablate=all_layer1):.3f}")

# %% [markdown]
# Without the previous-token head, the loss on repeats climbs most of the way back to
# $\log 64$: the induction heads still run, but their keys no longer say which token came
# before, so they cannot find the match. One other layer-0 head matters too, less: the one
# that attends mostly to **itself** (printed), so it writes a transformed copy of each token
# into its own position, which the model also uses; the two heads that spread their weight
# cost nothing. Any single layer-1 head costs a little, because the four layer-1 heads do the
# same job and cover for each other; without all four, nothing copies.
#
# ## 6 · Why it finds the match: $W_{OV}$ then $W_{QK}$
#
# Elhage et al. describe a head as two circuits. Its **QK circuit**, $W^Q (W^K)^\top$, decides
# where it looks; its **OV circuit**, $W^V W^O$, decides what it writes into the residual
# stream of the position that looks. The induction head's **key** at position $j$ is computed
# from that residual stream, which holds token $j$'s own embedding **plus** what the
# previous-token head wrote there: token $j - 1$'s embedding times the previous-token head's
# $W_{OV}$. So one term of the score between a query holding token $a$ and a key whose
# previous token is $b$ is
#
# $$\frac{1}{\sqrt{d_{head}}}\,\big(W_E[a]\, W^Q\big) \cdot \big(W_E[b]\, W^V W^O\, W^K\big),$$
#
# the previous-token head's OV circuit **composed** with the induction head's QK circuit
# (Elhage et al. call it K-composition: the first head changes the second head's keys). If the
# circuit works, this $64 \times 64$ matrix is largest where $a = b$: a query finds the key
# whose previous token is the query's own token.
#
# ### Challenge ★★★ — `induction_qk(W_E, W_V, W_O, W_Q, W_K)`: the composed circuit
#
# `W_E` is the embedding `(vocab, d_model)`; `W_V (d_model, d_head)` and `W_O (d_head, d_model)`
# are the previous-token head's; `W_Q, W_K (d_model, d_head)` the induction head's. Return the
# `(vocab, vocab)` matrix whose entry `[a, b]` is the term above. Derive it on paper first: what
# does position $j$'s residual stream hold after layer 0, and which part of it reads token
# $j - 1$?
#
# *May use:* NumPy only.

# %%
def induction_qk(W_E, W_V, W_O, W_Q, W_K):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.induction_qk.check(induction_qk)

# %% [markdown]
# Stuck? `checks.induction_qk.hint(1)` (then 2, 3). Here it is for the shipped model (with
# the helpers' weights, so the cell runs either way): the previous-token head found above
# against each layer-1 head.

# %%
W_E = model.params["W_E"]
prev = model.head_weights(0, prev_head)
for head in range(model.n_heads):
    ind = model.head_weights(1, head)
    M = (W_E @ ind["W_Q"]) @ (W_E @ prev["W_V"] @ prev["W_O"] @ ind["W_K"]).T
    M /= np.sqrt(model.d_head)  # (64, 64): [a, b]
    diagonal_wins = np.mean(M.argmax(axis=1) == np.arange(model.vocab_size))
    off = M[~np.eye(model.vocab_size, dtype=bool)]
    print(f"layer 1, head {head}: diagonal the largest in {100 * diagonal_wins:.0f} % of rows; "
          f"mean diagonal {np.mean(np.diag(M)):.1f} against {off.mean():.1f} off it "
          f"(spread {off.std():.1f})")
    if head == ind_head:
        M_shown = M

# %%
fig, ax = plt.subplots(figsize=(6.4, 5.6), layout="constrained")
plot_heatmap(M_shown, ax=ax, signed=True, annotate=False,
             title=f"composed score, layer 0 head {prev_head} -> layer 1 head {ind_head}",
             xlabel="b, the key's previous token", ylabel="a, the query's token")
ax.set_xticks([]), ax.set_yticks([])
alt = (f"The 64 x 64 matrix M[a, b] in a diverging map centred on 0 (red positive, blue "
       f"negative); its diagonal is the dark red line, mean {np.mean(np.diag(M_shown)):.1f} "
       f"against {M_shown[~np.eye(64, dtype=bool)].mean():.1f} elsewhere.")
show_figure(fig, alt)
print("Figure:", alt)

# %% [markdown]
# Notice the dark red diagonal: for every token, the composed circuit scores "my token" against
# "the key's previous token" far above any other pair. Nobody wrote this rule; gradient descent
# found it, split across two heads in two layers, which is why a single layer cannot do it
# (Elhage et al. found no induction heads in one-layer models).
#
# ## 7 · Generation with a KV cache
#
# Last, the model at work: give it a prompt that starts a second copy and let it write, one
# token at a time. `model.generate` does what lesson 05's `decode_step` did: each new token runs
# through the two layers alone, appends its key and value to each layer's cache, and its query
# attends to everything in the cache. The first copy is in the cache; the induction heads find
# it.

# %%
prompt = encode("dog jumps.dog")
sequence, cache = model.generate(prompt, 7)
print("prompt:   ", repr(decode(prompt)))
print("generated:", repr(decode(sequence[len(prompt):])))
print("K cache per layer:", cache["K"][0].shape, "= (heads, tokens so far, d_head)")
full_logits, _ = model.forward(sequence[:-1])
print("each new token is the full forward pass's most likely one:",
      bool(np.array_equal(full_logits.argmax(-1)[len(prompt) - 1:], sequence[len(prompt):])))

# %% [markdown]
# It continues the copy, character by character, from a context it has never seen in training
# (its sequences were random tokens, not words): what it learned is the rule *find the earlier
# copy, say what came next*, not any particular text. The rule has a limit that comes from its
# training data, where only the copies recur. In ordinary text, characters recur inside the
# segment too:

# %%
prompt = encode("the dog jumps. the")
sequence, _ = model.generate(prompt, 11)
written = decode(sequence)
print("prompt:   ", repr(decode(prompt)))
print("generated:", repr(written[len(prompt):]), " (the text goes on ' dog jumps.')")
wrong = next(i for i in range(len(prompt), len(written))
             if written[i] != "the dog jumps. the dog jumps."[i])
token = written[wrong - 1]
followers = [written[i + 1] for i in range(wrong - 1) if written[i] == token]
print(f"first wrong character: {written[wrong]!r} at position {wrong}, after {token!r}; "
      f"earlier {token!r} were followed by {followers}")

# %% [markdown]
# The model starts the copy right, then goes wrong where the character it reads has occurred
# several times before, followed by different characters (printed): a head that matches one
# token cannot tell which earlier occurrence to follow. Induction heads in real language models
# can use more than the current token: Olsson et al. describe them as attending to earlier
# tokens that were followed by the current and/or recent tokens ("prefix matching").
#
# ## Summary
#
# - A causal model must predict from what it has read. The task here, random tokens with a
#   segment that recurs, can only be solved by finding the earlier copy in context: the search
#   that lesson 05's mask allows and that a KV cache serves at generation time.
# - A two-layer attention-only Transformer, trained in NumPy, learns it in a **phase change**:
#   the loss on repeats falls slowly, then drops within a few hundred steps, while a layer-0
#   **previous-token head** and the layer-1 **induction heads** form together. Ablating the
#   previous-token head sends the loss on repeats most of the way back up; other single heads
#   matter less.
# - The two heads compose: the previous-token head's $W_{OV}$ writes each token's predecessor
#   into its position, the induction head's $W_{QK}$ matches the query's token against it, and
#   the product is a $64 \times 64$ matrix with a strong diagonal. The data decide the
#   mechanism: on other repeated sequences the same model can learn another one (a layer-0
#   head that attends to the earlier copy of the query's own token, and layer-1 heads that
#   look one position after it). The notes at the top of `helpers/induction/task.py` list the
#   settings and seeds tried, and what each learned.
#
# **Next**: back to [00 · start here](00_start_here.ipynb) for the map of the course. Olsson et
# al.'s paper goes on to larger models, where induction heads also complete "fairly abstract
# and fuzzy" versions of a pattern, not only exact copies.
