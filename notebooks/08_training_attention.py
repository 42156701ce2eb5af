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
# # 08 · Training attention
#
# **What you will learn**
# - how an attention layer learns: forward pass, loss, and the backward pass written by hand
#   (the softmax's gradient by you), checked against finite differences;
# - a task that can only be solved through **position** (output the previous token), learned
#   by one causal self-attention layer in NumPy: how its accuracy climbs from about chance,
#   and why it fails without the positional encodings;
# - what learned attention looks like next to the seeded parameters of the earlier lessons, and
#   how the pattern forms during training.
#
# **You need**: [01 · the input Z](01_input_Z.ipynb) (positional encodings),
# [04 · softmax and attention](04_softmax_and_attention.ipynb) and
# [05 · causal masking](05_causal_masking.ipynb).

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks, training
from helpers.live import LiveFigure, show, slider
from helpers.plots import BLACK_TEXT_FROM, heatmap_alt, plot_heatmap, show_figure

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## Seeded, not trained
#
# Every heatmap so far came from **seeded** random parameters $W^Q, W^K, W^V$: the mechanics
# were real, the patterns meaningless. In a trained model the parameters are learned from data,
# so that each query looks for what it needs. Here we train the smallest interesting case: one
# causal self-attention layer on the running sentence's five-word vocabulary.

# %%
vocab = list(helpers.VOCAB)
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
sentence = np.array([vocab.index(t) for t in tokens])  # token ids, (n,)
n, d_model = len(tokens), helpers.D_MODEL
E = helpers.token_embeddings(vocab, d_model)  # the embedding table, (vocab_size, d_model)
labels = [f"{i} {t}" for i, t in enumerate(tokens)]
SEED = 5  # seeds the starting weights, the training batches and the held-out set
print("vocabulary:", vocab)
print("running sentence as ids:", sentence, "-> labels", labels)
print("E:", E.shape, "n =", n, "d_model =", d_model)

# %% [markdown]
# ## A task that needs position: output the previous token
#
# At every position $i \ge 1$ the layer must output the token at position $i - 1$. Nothing
# about the token at $i$ says what that is: the layer has to **look one position back**.
# Training data are random sequences of 6 words (`helpers.training.previous_token_task`);
# position 0 has no previous token, so it has no target (`-1`).

# %%
rng = np.random.default_rng(0)
example_tokens, example_targets = training.previous_token_task(rng, batch=2, n=n, vocab_size=5)
for seq, target in zip(example_tokens, example_targets):
    print("input :", " ".join(f"{vocab[t]:>4}" for t in seq))
    print("target:", " ".join(f"{vocab[t] if t >= 0 else '-':>4}" for t in target))

# %% [markdown]
# ## The model
#
# The lesson-01 input and one attention head (lesson 04) with the causal mask (lesson 05), then
# a linear read-out to one score (logit) per vocabulary word:
#
# $$X = E[\text{tokens}] + PE, \quad Q = XW^Q,\ K = XW^K,\ V = XW^V,$$
# $$O = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + \text{mask}\right) V, \quad
#   \text{logits} = O\,W^{out}$$
#
# The loss is the cross-entropy of $\text{softmax}(\text{logits})$ against the targets,
# averaged over the positions that have one. The embeddings $E$ and the positional encodings
# stay fixed; training changes $W^Q, W^K, W^V$ $(d_{model}, d_k)$ and $W^{out}$
# $(d_k, \text{vocab})$. One head as wide as the model: $d_k = d_{model} = 8$ here, not the
# $d_k = 4$ of lessons 02–07 (two heads of 4), so the scale is $1/\sqrt{8}$. The forward pass
# (`helpers.training.forward`) calls the course's `helpers.scaled_dot_product_attention`.

# %%
params = training.init_params(d_model, d_k=d_model, vocab_size=len(vocab), seed=SEED)
for name, W in params.items():
    print(f"{name}: {W.shape}")
X = training.embed(sentence[None], E)  # (1, n, d_model): a batch of one sequence
cache = training.forward(params, X)
print("attention weights A:", cache.A.shape, " logits:", cache.logits.shape)
print("untrained weights on the running sentence (rows = query):")
print(np.round(cache.A[0], 3))
print("column 0 (the first 'the'), rows 1-4:", np.round(cache.A[0, 1:5, 0], 2))

# %% [markdown]
# ## The backward pass, by hand
#
# Gradient descent needs $\partial \text{loss} / \partial W$ for every weight. Going backwards
# through each line of the forward pass, with $c = 1/\sqrt{d_k}$ the scale and $S$ the scaled
# scores:
#
# | forward | backward |
# |---|---|
# | $\text{logits} = O W^{out}$ | $dW^{out} = O^\top d\text{logits}$, $dO = d\text{logits}\,{W^{out}}^\top$ |
# | $O = AV$ | $dA = dO\,V^\top$, $\ dV = A^\top dO$ |
# | $A = \text{softmax}(S)$ row by row | $dS$ = `softmax_backward(A, dA)`: your exercise below |
# | $S = c\,QK^\top$ (+ mask) | $dQ$ and $dK$ from $dS$: the challenge at the end of the lesson |
# | $Q = XW^Q$, ... | $dW^Q = X^\top dQ$, $\ dW^K = X^\top dK$, $\ dW^V = X^\top dV$ |
#
# The cross-entropy's gradient is $d\text{logits} = \text{softmax}(\text{logits}) -
# \text{onehot}(\text{target})$, divided by the number of targets. The training code below uses
# the course's complete backward pass, `helpers.training.loss_and_grads`.
#
# ### The softmax's gradient, on one row
#
# Every line of the table is a matrix product, except the softmax: each weight $a_j$ of a row
# depends on **every** score $s_k$ of that row, through the shared denominator. Its Jacobian,
# $\partial a_j / \partial s_k$, is an $n_k \times n_k$ matrix per row. Here it is for the
# last row of the untrained layer ("mat", which sees all six keys), measured by nudging each
# score by $\pm\varepsilon$, next to the formula
# $\partial a_j / \partial s_k = a_j(\delta_{jk} - a_k)$, i.e. $\text{diag}(a) - a a^\top$:

# %%
s_row = cache.Q[0, 5] @ cache.K[0].T / np.sqrt(cache.Q.shape[-1])  # scores of "mat", (n,)
a_row = helpers.softmax(s_row)  # its weights, (n,)
eps = 1e-6
jacobian = np.zeros((n, n))  # jacobian[j, k] = d a_j / d s_k
for k in range(n):
    nudge = np.zeros(n)
    nudge[k] = eps
    jacobian[:, k] = (helpers.softmax(s_row + nudge) - helpers.softmax(s_row - nudge)) / (2 * eps)
print("weights a of 'mat':", np.round(a_row, 3))
print("d a_j / d s_k, measured (rows j, columns k):")
print(np.round(jacobian, 3))
print("equals diag(a) - a a^T:", np.allclose(jacobian, np.diag(a_row) - np.outer(a_row, a_row),
                                             atol=1e-8))
# Each sum is 0 up to the finite differences' rounding noise (about 1e-16 / eps = 1e-10), whose
# sign depends on the last bits of the scores (a BLAS product) and of np.exp (NumPy's code for
# this CPU); + 0.0 turns the -0.0 that rounding a tiny negative number gives into 0.0.
print("column sums:", np.round(jacobian.sum(axis=0), 8) + 0.0)

# %% [markdown]
# The diagonal is positive (raising a score raises its own weight), everything else negative
# (it takes weight from the others), and every column sums to 0 (the weights still sum to 1).
#
# ### Exercise 1 ★★ — `softmax_backward(A, dA)`
#
# The backward pass gets `dA`, the gradient of the loss with respect to the weights, and needs
# `dS`, the gradient with respect to the scores. Write it for **every row at once**: `A` and
# `dA` have shape $(\ldots, n_q, n_k)$ (any leading batch axes; `A` each row a softmax, rows
# may hold masked zeros), and `dS` has the same shape. Start from the chain rule for one row,
# $dS_k = \sum_j dA_j\, \partial a_j / \partial s_k$, and simplify it until no $n_k \times n_k$
# Jacobian is needed. The check compares your `dS` with finite differences on fresh scores.
#
# *May use:* NumPy only.

# %%
def softmax_backward(A, dA):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.softmax_backward.check(softmax_backward)

# %% [markdown]
# Stuck? `checks.softmax_backward.hint(1)` (then 2, 3), or `checks.softmax_backward.solution()`.
# The training code below calls the course's copy, `helpers.training.softmax_backward`, so it
# runs whether or not you have answered. Masked entries have $A = 0$, so their $dS$ is 0 too:
# the future gets no gradient.
#
# ### The whole backward pass, checked
#
# Hand-written gradients are easy to get wrong, so we check them against **finite
# differences**: nudge one weight by $\pm\varepsilon$ and see how the loss moves,
# $\frac{\text{loss}(w + \varepsilon) - \text{loss}(w - \varepsilon)}{2\varepsilon}$.
# `helpers.training.gradient_check` does that for every entry of every matrix and reports
# $\|g - g_{num}\| / (\|g\| + \|g_{num}\|)$ per matrix. The exact digits depend on floating
# point rounding (this cell is not compared when the notebook is tested):

# %% tags=["nbval-ignore-output"]
check_tokens, check_targets = training.previous_token_task(
    np.random.default_rng(1), batch=4, n=n, vocab_size=len(vocab)
)
errors = training.gradient_check(params, training.embed(check_tokens, E), check_targets)
for name, error in errors.items():
    print(f"{name}: relative error {error:.1e}")
print(f"max relative error: {max(errors.values()):.1e}")

# %%
print("hand-written gradients agree with finite differences (max error < 1e-6):",
      max(errors.values()) < 1e-6)

# %% [markdown]
# A wrong term gives an error many orders of magnitude above the errors just printed. Here is a
# backward pass that forgets the scale $c$ on the way back through $S = c\,QK^\top$: its
# gradients for $W^Q$ and $W^K$ are $\sqrt{d_k}$ times too large;
# `gradient_check(..., grads_fn=...)` checks it instead of the right one.

# %%
def forgot_the_scale(params, X, targets):
    """helpers.training.loss_and_grads, but dQ and dK without the factor c = 1/sqrt(d_k)."""
    loss, grads, cache = training.loss_and_grads(params, X, targets)
    d_k = params["W_Q"].shape[1]
    return loss, dict(grads, W_Q=grads["W_Q"] * np.sqrt(d_k), W_K=grads["W_K"] * np.sqrt(d_k)), cache


wrong_errors = training.gradient_check(
    params, training.embed(check_tokens, E), check_targets, grads_fn=forgot_the_scale
)
for name in errors:
    right, wrong = (f"{e:.2f}" if e >= 1e-6 else "< 1e-6" for e in (errors[name], wrong_errors[name]))
    print(f"{name:5}: relative error {right} with the right backward pass, {wrong} without c")

# %% [markdown]
# The check also says where the mistake is: $W^Q$ and $W^K$ are off by
# $(\sqrt{8} - 1)/(\sqrt{8} + 1) \approx 0.48$, while $W^V$ and $W^{out}$, whose gradients do
# not go through $c$, are still right.

# %% [markdown]
# ## Train
#
# 300 steps of Adam (learning rate 0.02) on fresh batches of 64 random sequences, all seeded.
# Every 10 steps `helpers.training.train` saves the attention weights on our running
# sentence, and the loss and accuracy on 500 held-out sequences.

# %%
run = training.train(E, n=n, steps=300, batch=64, lr=0.02, probe=sentence, seed=SEED)
print(f"snapshots at steps {run.steps[:4]} ... {run.steps[-1]} ({len(run.steps)} in all)")
print(f"held-out accuracy: {100 * run.test_accuracy[0]:.1f} % before training "
      f"(chance is 1/5 = 20 %), {100 * run.test_accuracy[-1]:.1f} % after")
print(f"held-out loss:     {run.test_loss[0]:.3f} before, {run.test_loss[-1]:.3f} after")

# %% [markdown]
# From below chance to every previous token right. What did the layer learn to look at?

# %%
future = ~helpers.causal_mask(n)  # True above the diagonal: keys a query may not see
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
for ax, A, title in (
    (axes[0], run.weights[0], "untrained (seeded) weights"),
    (axes[1], run.weights[-1], f"after {run.steps[-1]} training steps"),
):
    plot_heatmap(A, labels, labels, ax=ax, masked=future, vmin=0, vmax=1,
                 title=f"{title}\nrows = query, columns = key",
                 xlabel="key (attended to)", ylabel="query (attending)")
show_figure(fig, "Left, untrained: " + heatmap_alt(run.weights[0], labels, labels, "the weights",
                                                 masked=future)
                 + f" Right, after {run.steps[-1]} steps: "
                 + heatmap_alt(run.weights[-1], labels, labels, "the weights", masked=future)
                 + " Mean weight on the previous position, untrained then trained: "
                 + ", ".join(f"{np.mean(np.diagonal(A, -1)):.2f}"
                             for A in (run.weights[0], run.weights[-1])) + ".")

# %%
A_untrained, A_learned = run.weights[0], run.weights[-1]
print("untrained: weight on column 0, rows 1-4:      ", np.round(A_untrained[1:5, 0], 2))
print("untrained: weight on the previous position, rows 1-5:",
      np.round([A_untrained[i, i - 1] for i in range(1, n)], 2))
previous = [A_learned[i, i - 1] for i in range(1, n)]
print("trained:   weight on the previous position, rows 1-5:", np.round(previous, 2))
print("every row's largest weight is on the previous position:",
      bool(np.all(A_learned.argmax(axis=1)[1:] == np.arange(n - 1))))

# %% [markdown]
# Notice: before training the weights lean towards column 0, the first "the": rows 1–4 put
# 0.61, 0.56, 0.46 and 0.35 of their weight there, while row 5 ("mat") spreads its weight.
# That is a leaning of the random starting weights, not the previous position (only in row 1
# do the two coincide; rows 2–5 give the previous position 0.26, 0.08, 0.13, 0.08). After
# training the largest weight of every row sits one cell left of the diagonal, from 0.75
# (row 3) to 0.94 (row 1): "cat" looks at "the", "sat" at "cat", and the second "the"
# (position 4) at "on", not at the first "the": the layer found the *position* before it, not
# a word. Grey cells are the future, masked out. (Row 0 has only itself to look at; it has no
# target.)

# %% [markdown]
# ## Without positions it cannot be done
#
# Train the same layer on the same data, with $X = E[\text{tokens}]$ only (no $PE$):

# %%
run_no_pe = training.train(E, n=n, steps=300, batch=64, lr=0.02, probe=sentence, seed=SEED,
                           positions=False)
test_tokens, test_targets = training.previous_token_task(
    np.random.default_rng(5), batch=2000, n=n, vocab_size=len(vocab)
)
for name, trained_run, with_pe in (("with PE", run, True), ("without PE", run_no_pe, False)):
    predictions = training.forward(
        trained_run.params, training.embed(test_tokens, E, positions=with_pe)
    ).logits.argmax(axis=-1)  # (batch, n)
    per_position = (predictions == test_targets)[:, 1:].mean(axis=0)
    print(f"{name:>10}: accuracy at positions 1-5 = {np.round(100 * per_position, 1)} %")

# %% [markdown]
# Without positional encodings the keys are a *set*: a query can tell them apart only by
# their words. At position 1 that is still enough (the previous token is "the other one"),
# but from position 2 on the layer must guess among several earlier words, and the accuracy
# falls with every extra candidate. The positional encodings of lesson 01 are what make
# "one position back" something attention can find.

# %% [markdown]
# ## Watch the pattern form
#
# Slide through the saved training steps (it opens at step 60; Home goes to the start):
# the heatmap shows the weights on the running sentence at that step, the dot on the vertical
# line the held-out accuracy then.

# %%
live = LiveFigure(figsize=(10, 4))
heat_ax, curve_ax = live.figure.subplots(1, 2, width_ratios=[1.15, 1])
heat = plot_heatmap(run.weights[0], labels, labels, ax=heat_ax, masked=future, vmin=0, vmax=1,
                    xlabel="key", ylabel="query")
cell_texts = list(heat_ax.texts)  # one per visible (unmasked) cell, row by row
visible = [(i, j) for i in range(n) for j in range(n) if not future[i, j]]
steps = np.array(run.steps)
curve_ax.plot(steps, 100 * np.array(run.test_accuracy), "-", color="#1f77b4")
(dot,) = curve_ax.plot([0], [100 * run.test_accuracy[0]], "o", color="#d62728", ms=8)
step_line = curve_ax.axvline(0, color="#d62728", lw=1)
curve_ax.axhline(20, ls="--", color="grey", lw=1)
curve_ax.text(steps[-1], 22, "chance", color="grey", ha="right", fontsize=9)
curve_ax.set(xlabel="training step", ylabel="held-out accuracy (%)", ylim=(0, 105),
             title="accuracy on 500 held-out sequences")
curve_ax.grid(True, alpha=0.3)

# Only the cells, their numbers, the title, the line and the dot change: the rest is drawn once.
live.animate([heat, *cell_texts, heat_ax.title, step_line, dot])

# A slider over the saved steps (helpers.live.slider: named, keyboard-driven, its value said as
# "step 60 of 300").
step_picker = slider("training step", run.steps, value=60,
                     text=lambda s: f"step {s} of {run.steps[-1]}")


def looking_back(A):
    """How many rows (queries 1..n-1) put their largest weight on the token just before."""
    return sum(A[i].argmax() == i - 1 for i in range(1, n))


def draw(step):
    """The figure at a saved training step; returns what it shows, in words."""
    snap = run.steps.index(step)  # which saved snapshot
    A = run.weights[snap]
    heat.set_data(np.ma.masked_array(A, mask=future))
    for text, (r, c) in zip(cell_texts, visible):
        text.set_text(f"{A[r, c]:.2f}")
        text.set_color("black" if A[r, c] >= BLACK_TEXT_FROM else "white")  # as plot_heatmap
    heat_ax.set_title(f"step {step}: rows = query, columns = key")
    step_line.set_xdata([step] * 2)
    dot.set_data([step], [100 * run.test_accuracy[snap]])
    return (f"Attention weights on '{' '.join(tokens)}' at training step {step}, next to the "
            f"held-out accuracy curve over {run.steps[-1]} steps; accuracy at step {step}: "
            f"{100 * run.test_accuracy[snap]:.1f} %; weight of 'sat' on 'cat': {A[2, 1]:.2f}; "
            f"rows whose largest weight is one position back: {looking_back(A)} of {n - 1}.")


# Every saved step's picture, drawn once and held in the browser: the slider shows each at once.
live.film(step_picker, draw)
show(widgets.VBox([step_picker, live.image]), bytes(live.image.value),
     alt=draw(step_picker.value))

# %%
print("step | held-out accuracy | weight of 'sat' on 'cat' | rows looking one position back")
for step in (0, 30, 60, 70, 80, 100, 130, 150, 300):
    snap = run.steps.index(step)
    A = run.weights[snap]
    locked = [i for i in range(1, n) if A[i].argmax() == i - 1]
    print(f"{step:4d} | {100 * run.test_accuracy[snap]:15.1f} % | {A[2, 1]:24.2f} | {locked}")

# %% [markdown]
# Notice: one row after another comes to put its largest weight on the cell just left of the
# diagonal: rows 4 and 5 by step 30, four rows by step 60, all five by step 80 (row 1 also
# does at step 0, by chance of the random start, and loses it by step 30). The accuracy climbs
# with them, from 57 % at step 30 to over 99 % by step 130. "sat" (row 2) locks on last: "cat"
# becomes its largest weight only at step 80, and reaches 0.80 at step 130. After that
# training only sharpens the pattern.

# %% [markdown]
# ## Challenge ★★★ — `attention_backward(Q, K, V, dO)`
#
# The table above leaves one line for you: $dQ$ and $dK$ from $dS$, through $S = c\,QK^\top$.
# Derive it, then write the backward pass of one attention head on its own, from $dO$ to $dQ$,
# $dK$ and $dV$. Without a mask, $O = \text{softmax}(QK^\top / \sqrt{d_k})\,V$ with `Q`
# $(n_q, d_k)$, `K` $(n_k, d_k)$, `V` $(n_k, d_v)$, and `dO` $(n_q, d_v)$ the gradient of the
# loss with respect to $O$; return `(dQ, dK, dV)`, each the shape of its input. You may call
# your `softmax_backward`, or the course's `helpers.training.softmax_backward`. The check
# compares all three with finite differences, for $n_q = n_k$ and for $n_q \ne n_k$
# (cross-attention, lesson 06), where a missing transpose shows.
#
# *May use:* NumPy, `helpers.softmax`, `helpers.scaled_dot_product_attention`, `helpers.training.softmax_backward`.

# %%
def attention_backward(Q, K, V, dO):
    # YOUR CODE HERE
    raise NotImplementedError("replace this line with your answer")


checks.attention_backward.check(attention_backward)

# %% [markdown]
# Stuck? `checks.attention_backward.hint(1)` (then 2, 3), or
# `checks.attention_backward.solution()`.

# %% [markdown]
# ## Summary
#
# - An attention layer learns by gradient descent like any other layer; its backward pass is
#   five lines (read-out, $AV$, softmax, $QK^\top$, projections). The only one that is not a
#   matrix product is the softmax's (your `softmax_backward`): each weight depends on every
#   score of its row, so its gradient needs the whole row, yet no $n_k \times n_k$ Jacobian.
#   Finite differences confirm them all (relative errors below $10^{-6}$).
# - Trained on "output the previous token", one causal attention layer goes from below chance
#   to 100 % held-out accuracy; without positional encodings it cannot, because nothing else
#   tells the keys' positions apart.
# - Learned attention has a clean structure (here: one step left of the diagonal) where seeded
#   parameters give none; the step slider shows it forming row by row, all five rows by step 80.
#
# **Next**: [09 · a real Transformer](09_real_model.ipynb). Real models stack many such layers,
# each with several heads, and learn the embeddings too; some of their heads learn exactly this
# "previous token" pattern. The map of the course is in [00 · start here](00_start_here.ipynb).

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
