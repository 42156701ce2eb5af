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
# # 00 · Start here: self-attention, from Z to causal masking
#
# This course builds **self-attention**, the core of the Transformer
# (Vaswani et al., 2017, *Attention Is All You Need*), one small step at a time, in NumPy,
# with figures you can read and widgets you can play with.
#
# **What you will learn here**
# - how the course is laid out and how to move through it;
# - how to check that your set-up works (packages and interactive widgets);
# - how the exercises check your answers and help you when you are stuck, what the stars
#   mean, and how predictions work; and the list of every exercise of the course.
#
# **You need**: nothing before this. Some NumPy (`@`, `.T`, broadcasting) helps.

# %% [markdown]
# ## The question behind it all
#
# Can we design a model that captures the relationships within a sequence without recurrence
# or convolution? (The question is ours; the Transformer paper, Vaswani et al. 2017, answers it
# with a model "based solely on attention mechanisms, dispensing with recurrence and
# convolutions entirely".)
#
# Recurrent networks pass information along a chain of hidden states, one step per token.
# Self-attention links **every position to every other position directly, in one step**. The
# paper's section 4 weighs it against recurrence on three counts: the computation it can run in
# parallel (all positions at once, not one step after another), the path a signal travels
# between two positions (one step, not up to $n$: long-range links are direct), and the
# computation per layer, where attention's $n^2 d$ beats recurrence's $n d^2$ only when the
# sequence is shorter than the width, $n < d$. [Lesson 02](02_queries_keys_values.ipynb#Where-we-are)
# measures the path; [lesson 07](07_cost_of_attention.ipynb) the cost, an $n \times n$ matrix of
# scores for $n$ tokens.

# %% [markdown]
# ## The lessons
#
# One running example threads through all of them: the sentence **"the cat sat on the mat"**
# ("the" twice, so you can see position matter), with a small $d_{model}$ and few heads, so
# that every matrix fits on screen (the cell under the set-up check prints the sizes).
#
# | # | lesson | what it teaches |
# |---|---|---|
# | 00 | [start here](00_start_here.ipynb) | this page |
# | 01 | [input Z](01_input_Z.ipynb) | token embeddings + positional encodings = Z |
# | 02 | [queries, keys, values](02_queries_keys_values.ipynb) | $Q = XW^Q$, $K = XW^K$, $V = XW^V$, and why they are not the embeddings |
# | 03 | [scores and scaling](03_scores_and_scaling.ipynb) | $QK^\top$, and why we divide by $\sqrt{d_k}$ |
# | 04 | [softmax and attention](04_softmax_and_attention.ipynb) | weights that sum to 1, output $= AV$, the attention explorer |
# | 05 | [causal masking](05_causal_masking.ipynb) | no peeking at the future: how GPT trains every next-token prediction at once; batches and padding masks |
# | 06 | [cross-attention and heads](06_cross_attention_and_heads.ipynb) | Q from one sequence, K and V from another; several heads |
# | 07 | [cost of attention](07_cost_of_attention.ipynb) | the O(n²) matrix, measured, and how blockwise attention avoids storing it |
# | 08 | [training attention](08_training_attention.ipynb) | an attention layer that learns where to look |
# | 09 | [a real model](09_real_model.ipynb) | the same attention inside a real trained Transformer, run in NumPy |
# | 10 | [induction heads](10_induction_heads.ipynb) | what a causal model learns: a two-layer model trained in NumPy copies from context with a previous-token head and an induction head |
# | 11 | [position today](11_position_today.ipynb) | where position goes in today's models: RoPE, ALiBi and no positions, and what happens past the training length |
#
# Work through them in order: each one starts with **What you will learn** and ends with a
# **Summary** and what comes **Next**. Run the cells top to bottom (Shift+Enter runs one;
# *Run → Run All Cells* runs them all).
#
# `notebooks/` holds your copy, with the exercise answers left for you;
# `solutions/` holds the same lessons answered and run.

# %% [markdown]
# ## Check your set-up
#
# The course needs NumPy for the math, matplotlib for the figures, ipywidgets for the
# sliders and buttons, and a small package of its own, `helpers`, which the lessons import.
# If the next cell fails with `ModuleNotFoundError`, start JupyterLab with `make lab` from the
# course folder (it installs everything into `.venv`), or choose the kernel of that
# environment (*Kernel → Change Kernel*).

# %% tags=["nbval-ignore-output"]
# Versions differ from machine to machine, so this cell's output is not checked by the tests.
import sys
from pathlib import Path

import ipywidgets
import matplotlib
import numpy as np

import helpers
from helpers.live import slider

print(f"Python     {sys.version.split()[0]}")
for module in (np, matplotlib, ipywidgets):
    print(f"{module.__name__:<10} {module.__version__}")
where = Path(helpers.__file__).resolve().parent  # the course's folder, or an installed copy
course = Path.cwd().resolve().parent  # this notebook sits in the course's notebooks/ folder
print(f"helpers    from {where.relative_to(course) if where.is_relative_to(course) else where}")

# %%
assert sys.version_info >= (3, 11), "the course needs Python 3.11 or newer"
print("Everything the course needs was imported.")
tokens = helpers.tokenize(helpers.RUNNING_SENTENCE)
print(f"the running example: {tokens}, n = {len(tokens)} tokens, "
      f"d_model = {helpers.D_MODEL}, h = {helpers.N_HEADS} heads")

# %% [markdown]
# ### A live widget
#
# Move the slider: drag it, or Tab to it and use the arrow keys (Page Up/Down, Home and End
# jump), or press its − and + buttons. The sentence below it should change with it.
#
# If you see plain text such as `Slider(...)` instead of a slider, or the words
# *Loading widget...* stay, the browser side of ipywidgets is missing: start the course with
# `make lab` (or on Binder), where it is installed, then reload the page. In VS Code, install
# the *Jupyter* extension.

# %%
# The course's slider (helpers.live.slider): a screen reader names it and reads "n = 3 tokens".
n_slider = slider("number of tokens", range(1, 9), value=3,
                  text=lambda n: f"n = {n} token{'s' if n > 1 else ''}")
pairs = ipywidgets.Label()


def pairs_of(n):
    return f"{n * n} query-key pair{'s' if n > 1 else ''} to score"


# Every value's sentence, held in the browser: a move shows its sentence at once. The status
# line says the count to a screen reader (the slider itself says "n = 4 tokens").
n_slider.hold_texts(pairs, [f"{n} token{'s give' if n > 1 else ' gives'} {pairs_of(n)}"
                            for n in n_slider.options],
                    said=[pairs_of(n) for n in n_slider.options])
ipywidgets.VBox([n_slider, pairs])

# %% [markdown]
# The same count, without the widget, so you can see the pattern: the number of pairs grows
# as $n^2$. Lesson 07 comes back to this.

# %%
for n in (1, 2, 4, 8):
    print(f"n = {n}: {n * n:>2} pairs")

# %% [markdown]
# ## How exercises work
#
# Each lesson first shows an idea on the running example; its exercises then ask for what the
# lesson has not written out: the general function (any batch of sentences, any number of
# heads), a variant, or the next step: something to think through, not to retype. An exercise
# asks you to write a function. In your copy its body reads
#
# ```python
# def positional_encoding(n_positions, d_model):
#     # YOUR CODE HERE
#     raise NotImplementedError("replace this line with your answer")
# ```
#
# Replace those two lines with your answer, run the cell, then run the check under it:
#
# | call | what it does |
# |---|---|
# | `checks.NAME.check(your_function)` | tests your function on **fresh random inputs** (not the worked example) and says ✓ *Correct*, or ✗ what is wrong, e.g. *"sin and cos are swapped"* |
# | `checks.NAME.hint(1)`, `hint(2)`, ... | hints, gentle first, the last one nearly the answer |
# | `checks.NAME.solution()` | shows the reference code (it does not change your notebook) |
#
# `hint` and `solution` work for **every** exercise, the optional ★★★ challenges included;
# the lessons mention the hints under each exercise, and the solution is always one call away
# when you want to compare yours with it, or are stuck for good.
#
# Each exercise also says what your answer may call, on a line such as *May use:* NumPy,
# `helpers.softmax`: the course's ready-made helpers that are not the exercise's own answer.
# A call to any other function of `helpers` (or to the check's own answer) is refused, with a
# message that says so.
#
# Until you write an answer, the check says *Not attempted yet*, and the rest of the
# lesson still runs: later cells use `helpers`, not your answer. A wrong answer gets a message
# that names the mistake when the check recognises it ("you divided by d_k; the paper divides
# by its square root") and otherwise says what should hold (often with the first entry that
# differs). Here is what a hint looks like:

# %%
from helpers import checks

checks.positional_encoding.hint(1)

# %% [markdown]
# **Stars** say what kind of thinking an exercise asks for:
#
# | stars | kind | what you do |
# |---|---|---|
# | ★ | apply | use the idea of the lesson on new inputs |
# | ★★ | generalise | make it work for any size, batch or variant |
# | ★★★ | derive or design | prove a property, or design a method; most lessons from 01 on end with one, optional |
#
# **Predictions.** Before a widget or a figure shows an answer, a lesson sometimes asks you to
# guess it first, in a cell like
#
# ```python
# guess = None  # YOUR GUESS HERE, before you run the next cell
# checks.NAME.check(guess)
# ```
#
# Replace `None` with your guess (one of the words the question offers, or a number), run the
# cell, then the figure. Right or wrong, the answer comes with its explanation (✓ *Right*, or
# ✗ *Not what happens* and what does): a wrong guess that you then see explained teaches as much
# as a right one.
#
# ## Every exercise and prediction of the course
#
# This list is built from the checks themselves (`checks.catalogue()`), so it is always up to
# date:

# %%
import textwrap

entries = checks.catalogue()
for lesson in sorted({entry.lesson for entry in entries}):
    print(f"lesson {lesson}")
    for entry in (e for e in entries if e.lesson == lesson):
        kind = "predict" if isinstance(entry, checks.Prediction) else "exercise"
        name = "" if kind == "predict" else f"{entry.name}: "
        title = entry.title.removeprefix("predict: ")
        lines = textwrap.wrap(f"{name}{title}", width=80)  # 80 + the 16 columns in front
        print(f"  {'★' * entry.stars:<4}{kind:<10}" + ("\n" + " " * 16).join(lines))
n_exercises = sum(not isinstance(e, checks.Prediction) for e in entries)
print(f"\n{n_exercises} exercises and {len(entries) - n_exercises} predictions in all")

# %% [markdown]
# ## Summary
#
# - The course is short lessons on one running sentence, from the input Z to causal masking
#   and a little beyond, up to a real trained model, the induction heads of a causal model
#   trained in the course, and where today's models put position; work through them in order,
#   top to bottom.
# - If the versions printed and the text followed the slider, your set-up works.
# - Exercises check themselves: `check`, `hint`, `solution`; stars say how hard they are
#   (★ apply, ★★ generalise, ★★★ derive or design), and predictions ask you to guess before a
#   figure answers.
#
# **Next**: [01 · input Z](01_input_Z.ipynb): how a sentence becomes the matrix Z that
# attention starts from.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
