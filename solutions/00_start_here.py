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
# - how the exercises check your answers and help you when you are stuck.
#
# **You need**: nothing before this. Some NumPy (`@`, `.T`, broadcasting) helps.

# %% [markdown]
# ## The question behind it all
#
# > *"Can we design a model that captures sequence relationships without recurrence or
# > convolution?"*
#
# Recurrent networks pass information along a chain of hidden states, one step per token.
# Self-attention links **every position to every other position directly, in one step**:
#
# - **Full parallelisation**: all positions are computed at once ("The", "cat", "sat" in
#   parallel), which is what GPUs, with their thousands of cores, are good at.
# - **Direct long-range links**: any token can attend to any other within a single layer,
#   without passing through every intermediate step of an RNN.
# - **Short mixing paths**: in one attention layer information moves between any two
#   positions in a single step, against O(n) steps along an RNN. (Deep stacks still add depth;
#   the comparison is with recurrence *within* a layer.)
#
# The price, which lesson 07 measures, is an n × n matrix of scores for n tokens.

# %% [markdown]
# ## The lessons
#
# One running example threads through all of them: the sentence **"the cat sat on the mat"**
# (6 tokens, with "the" twice, so you can see position matter), with a small
# $d_{model} = 8$ and $h = 2$ heads so that every matrix fits on screen.
#
# | # | lesson | what it teaches |
# |---|---|---|
# | 00 | [start here](00_start_here.ipynb) | this page |
# | 01 | [input Z](01_input_Z.ipynb) | token embeddings + positional encodings = Z |
# | 02 | [queries, keys, values](02_queries_keys_values.ipynb) | $Q = XW^Q$, $K = XW^K$, $V = XW^V$, and why they are not the embeddings |
# | 03 | [scores and scaling](03_scores_and_scaling.ipynb) | $QK^\top$, and why we divide by $\sqrt{d_k}$ |
# | 04 | [softmax and attention](04_softmax_and_attention.ipynb) | weights that sum to 1, output $= AV$, the attention explorer |
# | 05 | [causal masking](05_causal_masking.ipynb) | no peeking at the future: what makes GPT autoregressive |
# | 06 | [cross-attention and heads](06_cross_attention_and_heads.ipynb) | Q from one sequence, K and V from another; several heads |
# | 07 | [cost of attention](07_cost_of_attention.ipynb) | the O(n²) matrix, measured, and how blockwise attention avoids storing it |
# | 08 | [training attention](08_training_attention.ipynb) | an attention layer that learns where to look |
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

import ipywidgets
import matplotlib
import numpy as np

import helpers

print(f"Python     {sys.version.split()[0]}")
for module in (np, matplotlib, ipywidgets):
    print(f"{module.__name__:<10} {module.__version__}")
print(f"helpers    from {helpers.__file__}")

# %%
assert sys.version_info >= (3, 11), "the course needs Python 3.11 or newer"
print("Everything the course needs was imported.")

# %% [markdown]
# ### A live widget
#
# Drag the slider. The text beside it should change as you drag.
#
# If you see plain text such as `IntSlider(value=3, ...)` instead of a slider, or the words
# *Loading widget...* stay, the browser side of ipywidgets is missing: start the course with
# `make lab` (or on Binder), where it is installed, then reload the page. In VS Code, install
# the *Jupyter* extension.

# %%
slider = ipywidgets.IntSlider(value=3, min=1, max=8, description="tokens n")
label = ipywidgets.Label()


def show_pairs(change=None):
    n = slider.value
    label.value = f"{n} tokens -> {n * n} query-key pairs for attention to score"


slider.observe(show_pairs, names="value")
show_pairs()
ipywidgets.HBox([slider, label])

# %% [markdown]
# The same count, without the widget, so you can see the pattern: the number of pairs grows
# as $n^2$. Lesson 07 comes back to this.

# %%
for n in (1, 2, 4, 8):
    print(f"n = {n}: {n * n:>2} pairs")

# %% [markdown]
# ## How exercises work
#
# An exercise asks you to write a function. In your copy its body reads
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
# Until you write an answer, the check says *Not attempted yet*, and the rest of the
# lesson still runs: later cells use `helpers`, not your answer. Here is what a hint looks like:

# %%
from helpers import checks

checks.positional_encoding.hint(1)

# %% [markdown]
# ## Summary
#
# - The course is nine short lessons on one running sentence, from the input Z to causal
#   masking and a little beyond; work through them in order, top to bottom.
# - If the versions printed and the slider moved, your set-up works.
# - Exercises check themselves: `check`, `hint`, `solution`.
#
# **Next**: [01 · input Z](01_input_Z.ipynb): how a sentence becomes the matrix Z that
# attention starts from.
