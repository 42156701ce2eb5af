"""Lesson 10's causal model: the backward pass is right, training reproduces, the shipped weights
are checked and hold the classic induction circuit."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

import helpers
from helpers import induction
from helpers.induction import circuits, probes
from helpers.induction.model import causal_attention, forward, init_params
from helpers.induction.task import repeat_task
from helpers.induction.trainer import evaluate
from helpers.training import softmax_backward


def small_problem(seed=1):
    rng = np.random.default_rng(seed)
    data = repeat_task(rng, 3, 10, 7, min_repeat=2, max_repeat=4, distinct=False)
    return init_params(7, 8, 2, 10, seed=seed), data


def test_backward_pass_matches_finite_differences():
    params, data = small_problem()
    errors = induction.gradient_check(params, data.tokens, data.targets, n_heads=2, entries=30)
    assert set(errors) == set(induction.model.PARAM_NAMES)
    assert max(errors.values()) < 1e-6, errors


def test_gradient_check_catches_a_missing_residual_term(monkeypatch):
    """Drop layer 1's contribution to dx (the residual path's attention term): noticed."""
    params, data = small_problem()
    real = induction.backward.loss_and_grads

    def wrong(params, tokens, targets, n_heads, positions="learned", position_scale=1.0):
        loss, grads, cache = real(params, tokens, targets, n_heads, positions, position_scale)
        return loss, dict(grads, W_E=grads["W_E"] * 0.5), cache

    monkeypatch.setattr(induction.backward, "loss_and_grads", wrong)
    errors = induction.backward.gradient_check(params, data.tokens, data.targets, n_heads=2)
    assert errors["W_E"] > 0.1


def test_the_inline_softmax_backward_is_lesson_08s():
    params, data = small_problem()
    cache = forward(params, data.tokens, 2)
    A = cache.A[1]
    dA = np.random.default_rng(0).standard_normal(A.shape)
    inline = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(inline, softmax_backward(A, dA), atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_training_attention_equals_the_course_helper(dtype):
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((3, 2, 7, 4)).astype(dtype) for _ in range(3))
    bias = np.where(helpers.causal_mask(7), 0.0, -np.inf).astype(dtype)
    out, A = causal_attention(Q, K, V, bias)
    ref_out, ref_A = helpers.scaled_dot_product_attention(Q, K, V, mask=helpers.causal_mask(7))
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(A, ref_A, atol=tol)
    np.testing.assert_allclose(out, ref_out, atol=tol)
    assert A.dtype == dtype


@pytest.fixture(scope="module")
def untrained():
    return induction.InductionModel(induction.init_params(64, 64, 4, 32, seed=3), n_heads=4)


@pytest.fixture(scope="module")
def model():
    return induction.load()


def test_load_returns_the_documented_model(model):
    assert model.n_layers == 2
    assert (model.vocab_size, model.max_len, model.n_heads) == (64, 32, 4)
    assert model.settings == induction.SHIPPED.recorded()
    assert len(model.history.steps) == len(model.history.loss_repeat) > 10


def test_forward_shapes_and_causal_rows(untrained):
    model = untrained
    tokens = np.arange(10) % model.vocab_size
    logits, attention = model.forward(tokens)
    assert logits.shape == (10, model.vocab_size)
    assert attention.shape == (2, model.n_heads, 10, 10)
    np.testing.assert_allclose(attention.sum(-1), 1.0, atol=1e-12)
    assert np.all(attention[..., ~helpers.causal_mask(10)] == 0)
    batch_logits, batch_attention = model.forward(np.stack([tokens, tokens[::-1]]))
    assert batch_logits.shape == (2, 10, model.vocab_size)
    assert batch_attention.shape == (2, 2, model.n_heads, 10, 10)
    np.testing.assert_allclose(batch_logits[0], logits, atol=1e-12)


def test_a_later_token_never_changes_an_earlier_prediction(untrained):
    model = untrained
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, model.vocab_size, 20)
    changed = tokens.copy()
    changed[12:] = (changed[12:] + 1) % model.vocab_size
    np.testing.assert_allclose(model.forward(tokens)[0][:12], model.forward(changed)[0][:12])


@pytest.fixture(scope="module")
def fresh():
    # The training layout, fresh draws (tokens with replacement, a 5-14-token segment twice).
    return repeat_task(np.random.default_rng(2024), 512, 32, 64, 5, 14, False, 2)


# Fresh sequences of six layouts (three never trained on): name -> (tokens, is_repeat).
def layouts(rng):
    task = repeat_task(rng, 512, 32, 64, 5, 14, False, 2)
    return {
        "segment twice": (task.tokens, task.is_repeat),
        "right after itself": probes.back_to_back(rng, 512, 32, 64),
        "two interleaved": probes.two_segments(rng, 512, 32, 64),
        "held out: three copies": probes.three_copies(rng, 512, 32, 64),
        "held out: 15-16 twice": probes.back_to_back(rng, 512, 32, 64, lengths=(15, 16)),
        "held out: pairs of 2-3": probes.two_segments(rng, 512, 32, 64, lengths=(2, 3)),
    }


def test_shipped_model_has_the_classic_circuit(model, fresh):
    scores = evaluate(model, fresh)
    # Measured 0.29-0.32 on draws of 512 sequences: issue 32 asks for <= 0.3 (open: the loss at
    # a copy's first token, section 1 of lesson 10); this guards against a worse model.
    assert scores["loss_repeat"] <= 0.35, scores["loss_repeat"]
    assert scores["previous_token"][0].max() >= 0.5, scores["previous_token"]
    assert scores["induction"][1].max() >= 0.5, scores["induction"]
    # On a segment of length L followed by its copy: the diagonal at offset -L + 1.
    L = 12
    segments = np.random.default_rng(8).integers(0, 64, (100, L))
    _, maps = model.forward(np.concatenate([segments, segments], axis=1))
    assert induction.induction_score(maps[:, 1], L).mean(axis=0).max() >= 0.5
    assert induction.previous_token_score(maps[:, 0]).mean(axis=0).max() >= 0.5


@pytest.mark.parametrize("seed", [11, 12])
def test_on_every_layout_first_occurrences_cost_log_64_and_copies_reach_the_copier(model, seed):
    """What lesson 10 section 1 says, on other draws than its own: first occurrences within 7 %
    of log 64 on all six layouts (held-out ones too); the training layout's repeats at most
    0.35 nats; and from a copy's second token on, within 0.1 nats of the one-token copier."""
    for name, (tokens, is_repeat) in layouts(np.random.default_rng(seed)).items():
        m = probes.measure(model, tokens, is_repeat)
        assert 0.95 <= m["first_ratio"] <= 1.07, (name, m)
        if name == "segment twice":
            assert m["repeat"] <= 0.35, (name, m)  # measured 0.29-0.32 (see above)
    tokens, is_repeat = probes.back_to_back(np.random.default_rng(seed), 1000, 32, 64)
    nll = probes.position_losses(model, tokens)
    in_copy = np.cumsum(is_repeat, axis=1) - 1
    for k in range(1, 6):
        at = is_repeat & (in_copy == k)
        gap = nll[at[:, :-1]].mean() - probes.copier_loss(tokens, at, 64)
        assert gap <= 0.1, (k, gap)


def test_typed_text_is_copied_within_the_copiers_reach(model):
    for sentence in ("the cat sat. the cat sat.", "hello world. hello world.",
                     "the dog jumps. the dog jumps.", "abc def ghi. abc def ghi.",
                     "a big red box. a big red box.", "to be or not. to be or not."):  # fmt: skip
        tokens = induction.model.encode(sentence)[None, :]
        second = np.zeros(tokens.shape, dtype=bool)
        second[0, sentence.index(".") + 2 : -1] = True
        m = probes.measure(model, tokens, second)
        assert m["repeat"] <= m["copier"] + 0.3, (sentence, m)
        cut = sentence.index(".") + 4  # the second copy's first two characters given
        prompt = induction.model.encode(sentence[:cut])
        out, _ = model.generate(prompt, len(sentence) - cut)
        assert induction.model.decode(out) == sentence, (sentence, induction.model.decode(out))


@pytest.fixture(scope="module")
def interventions(model, fresh):
    reference = repeat_task(np.random.default_rng(99), 512, 32, 64, 5, 14, False, 2).tokens
    means = circuits.head_means(model, reference)
    marked = fresh.is_repeat[:, :-1]

    def loss(replace=None, reads=circuits.READS):
        return circuits.run(model, fresh.tokens, replace, reads).losses(fresh.tokens)[marked].mean()

    scores = evaluate(model, fresh)
    return loss, means, int(np.argmax(scores["previous_token"][0]))


def test_mean_ablation_of_the_previous_token_head_sends_the_repeats_above_2_nats(interventions):
    # lesson 10's ablation prediction: "above 2"
    loss, means, prev = interventions
    whole = loss()
    assert whole < 0.5
    assert loss({(0, prev): means[(0, prev)]}) > 2.0
    assert loss({(0, prev): 0.0}) > 2.0
    # layer 1's heads add up: each one alone costs less than any two, any two less than three
    one = [loss({(1, h): means[(1, h)]}) for h in range(4)]
    two = [loss({(1, a): means[(1, a)], (1, b): means[(1, b)]}) for a in range(4)
           for b in range(a + 1, 4)]  # fmt: skip
    assert max(one) < min(two)
    assert loss({(1, h): means[(1, h)] for h in range(4)}) > np.log(64) - 0.2


def test_the_previous_token_head_is_read_through_the_keys_most(interventions):
    # lesson 10's composition prediction: "keys"
    loss, means, prev = interventions
    h = (0, prev)
    q, k, v, out = (loss({h: means[h]}, (read,)) for read in circuits.READS)
    whole = loss()
    assert k > q > v and k > whole + 0.5 and abs(v - whole) < 0.1 and abs(out - whole) < 0.1


def test_direct_logit_attribution_credits_layer_1(model, fresh):
    where = fresh.is_repeat.copy()
    where[:, -1] = False
    parts = circuits.logit_attribution(model, fresh.tokens, where)
    layer1 = [parts[f"L1H{h}"] for h in range(4)]
    assert min(layer1) > 0.5 and abs(parts["direct"]) < 0.2
    assert all(abs(parts[f"L0H{h}"]) < 0.2 for h in range(4))


def test_generation_with_a_kv_cache_equals_the_full_forward_pass(untrained):
    model = untrained
    rng = np.random.default_rng(7)
    segment = rng.integers(0, model.vocab_size, 10)
    prompt = np.concatenate([segment, segment[:3]])
    sequence, cache = model.generate(prompt, 7)
    assert sequence.shape == (20,)
    np.testing.assert_array_equal(sequence[:13], prompt)
    for t in range(13, 20):  # each generated token is the full pass's argmax at t - 1
        assert sequence[t] == np.argmax(model.forward(sequence[:t])[0][-1])
    assert cache["K"][0].shape == (model.n_heads, 19, model.d_head)
    full = model.run(sequence[:19])
    np.testing.assert_allclose(cache["K"][1], full.K[1][0], atol=1e-10)


def test_the_trained_model_continues_a_repeat_token_by_token(model):
    rng = np.random.default_rng(7)
    completed = 0
    for _ in range(100):  # random segments of 10 tokens, drawn with replacement
        segment = rng.integers(0, model.vocab_size, 10)
        prompt = np.concatenate([segment, segment[:3]])
        sequence, _ = model.generate(prompt, 7)
        completed += np.array_equal(sequence[10:], segment)
    assert completed >= 90, completed


def test_training_from_a_seed_is_reproducible_and_seeds_differ():
    a, history_a = induction.train(seed=3, steps=4, eval_every=2, n_eval=16)
    b, history_b = induction.train(seed=3, steps=4, eval_every=2, n_eval=16)
    c, _ = induction.train(seed=4, steps=4, eval_every=2, n_eval=16)
    for name in induction.model.PARAM_NAMES:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    assert not np.array_equal(a.params["W_Q"], c.params["W_Q"])
    assert history_a.steps == [0, 2, 4] and history_a.loss_repeat == history_b.loss_repeat


def test_a_shorter_run_with_the_same_decay_start_retraces_a_longer_one():
    kwargs = dict(seed=2, eval_every=3, n_eval=16, mix=True, decay_start=3, distinct=False,
                  max_repeat=14, max_copies=2)  # fmt: skip
    short, _ = induction.train(steps=3, **kwargs)
    long, _ = induction.train(steps=6, **kwargs)
    plain, _ = induction.train(steps=3, **{**kwargs, "decay_start": None})
    for name in induction.model.PARAM_NAMES:  # the decay starts after step 3: same weights
        np.testing.assert_array_equal(short.params[name], plain.params[name])
    longer, _ = induction.train(steps=6, **{**kwargs, "decay_start": None})
    assert not np.array_equal(long.params["W_Q"], longer.params["W_Q"])  # it decayed after


def test_mixed_batches_draw_every_layout(monkeypatch):
    from helpers.induction import probes, task

    drawn = []
    for module, name in ((task, "repeat_task"), (probes, "back_to_back"),
                         (probes, "two_segments")):  # fmt: skip
        real = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _r=real, _n=name, **k: (drawn.append(_n), _r(*a, **k))[1]
        )
    rng = np.random.default_rng(0)
    for _ in range(60):
        tokens, targets = task.mixed_batch(rng, 8, 32, 64, 5, 14, False, 2)
        assert tokens.shape == (8, 32)
        np.testing.assert_array_equal(targets[:, :-1], tokens[:, 1:])
        assert (targets[:, -1] == -1).all()
    assert set(drawn) == {"repeat_task", "back_to_back", "two_segments"}
    assert min(drawn.count(n) for n in set(drawn)) >= 10  # about a third each


def test_the_command_writes_the_same_bytes_from_the_same_seed(tmp_path):
    """``python -m helpers.induction`` from a seed: same seed, same file, same sha256 (a few
    steps here; the shipped weights are the same command with the default steps)."""
    digests = []
    for name in ("a.npz", "b.npz"):
        out = tmp_path / name
        subprocess.run(
            [sys.executable, "-m", "helpers.induction", "--steps", "3", "--quiet",
             "--out", str(out)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        digests.append(induction.weights.sha256_of(out))
    assert digests[0] == digests[1]
    model = induction.load(tmp_path / "a.npz", sha256=digests[0])
    assert model.settings["steps"] == 3 and model.history.steps == [0, 3]


def test_load_refuses_a_changed_or_missing_file(tmp_path):
    copy = tmp_path / "weights.npz"
    shutil.copy(induction.WEIGHTS_PATH, copy)
    induction.load(copy)  # an intact copy loads
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 1
    copy.write_bytes(bytes(data))
    with pytest.raises(induction.WeightsError, match="sha256"):
        induction.load(copy)
    with pytest.raises(induction.WeightsError, match="missing"):
        induction.load(tmp_path / "nothing.npz")


def test_the_shipped_weights_are_small():
    # d_model 128 (issue 32: 64 plateaued at 0.57 nats on repeats): 580 kB compressed
    assert induction.WEIGHTS_PATH.stat().st_size < 800_000


@pytest.mark.parametrize(
    "tokens, message",
    [
        (np.array([1.5, 2.0]), "whole-number"),
        (np.array(["a", "b"]), "whole-number"),
        (np.array([1, 64]), r"0\.\.63"),
        (np.array([-1, 3]), r"0\.\.63"),
        (np.zeros(33, dtype=int), "max_len=32"),
        (np.zeros((2, 2, 2), dtype=int), r"\(n,\) or \(batch, n\)"),
        (np.zeros(0, dtype=int), "1 to max_len"),
        (np.array([True, False]), "whole-number"),
    ],
)
def test_bad_tokens_get_a_clear_error(untrained, tokens, message):
    with pytest.raises(ValueError, match=message):
        untrained.forward(tokens)


def test_bad_arguments_get_a_clear_error(untrained):
    model = untrained
    with pytest.raises(ValueError, match="no head"):
        model.forward([1, 2, 3], ablate=[(2, 0)])
    with pytest.raises(ValueError, match=r"\(layer, head\) pairs"):
        model.forward([1, 2, 3], ablate=[0])
    with pytest.raises(ValueError, match="steps must be"):
        model.generate([1, 2, 3], 40)
    with pytest.raises(ValueError, match="one sequence"):
        model.generate([[1, 2, 3]], 2)
    with pytest.raises(ValueError, match="whole-number"):
        model.forward([0.5])
    with pytest.raises(ValueError, match="no head"):
        model.head_weights(0, 9)
    with pytest.raises(ValueError, match="steps must be"):
        induction.train(steps=-1)
    with pytest.raises(ValueError, match="multiple of n_heads"):
        induction.init_params(10, 10, 3, 8)
    with pytest.raises(ValueError, match="max_repeat"):
        repeat_task(np.random.default_rng(0), 2, 10, 5, min_repeat=3, max_repeat=6)
    with pytest.raises(ValueError, match="vocab_size >= n"):
        repeat_task(np.random.default_rng(0), 2, 10, 5, min_repeat=2, max_repeat=4)
    with pytest.raises(ValueError, match="not among"):
        induction.model.encode("héllo")


def test_the_task_repeats_one_segment_and_marks_the_predictable_tokens():
    data = repeat_task(np.random.default_rng(1), 300, 32, 64)
    for s in range(300):
        L, k = data.length[s], data.count[s]
        starts = data.starts[s, :k]
        assert 5 <= L <= 10 and 2 <= k <= 3 and k * L <= 32
        assert np.all(np.diff(starts) >= L) and starts[-1] + L <= 32
        predictable = set()
        for c in starts[1:]:
            np.testing.assert_array_equal(
                data.tokens[s, c : c + L], data.tokens[s, starts[0] :][:L]
            )
            predictable |= set(range(c, c + L - 1))
        assert len(set(data.tokens[s])) == 32 - (k - 1) * L  # distinct: only the copies recur
        assert set(np.flatnonzero(data.is_repeat[s])) == predictable
    assert len(set(data.length)) == 6 and set(data.count) == {2, 3}
    assert len(set(data.second - data.first)) > 10  # the offset varies too


def test_with_replacement_tokens_also_recur_by_chance():
    data = repeat_task(np.random.default_rng(1), 100, 32, 64, distinct=False, max_copies=2)
    extra = [32 - len(set(t)) - L for t, L in zip(data.tokens, data.length)]
    assert np.mean(extra) > 3  # recurrences outside the segment's copy


def test_encode_and_decode_are_inverse():
    text = "the cat sat. The Cat 42"
    assert induction.model.decode(induction.model.encode(text)) == text
    assert len(induction.model.ALPHABET) == 64 == len(set(induction.model.ALPHABET))


def test_the_explorer_shows_the_models_heads(untrained):
    from helpers.explorer.induction import SPACE, InductionExplorer

    explorer = InductionExplorer("ab ab", layer=1, head=2, query=4, model=untrained)
    _, attention = untrained.forward(induction.model.encode("ab ab"))
    np.testing.assert_allclose(explorer.weights, attention[1, 2])
    assert explorer.tokens == ["a", "b", SPACE, "a", "b"]
    explorer.set_layer(0)
    explorer.set_head(3)
    np.testing.assert_allclose(explorer.weights, attention[0, 3])
    assert "layer 0, head 3" in explorer.alt_text() and "'ab ab'" in explorer.alt_text()
    explorer.set_sentence("x-y-x")  # '-' is not a token: left out, and the message says so
    assert explorer.tokens == ["x", "y", "x"] and "left out" in explorer.message
    with pytest.raises(ValueError, match="causal"):
        explorer.set_causal(False)
    assert explorer.static_png().startswith(b"\x89PNG")


def test_more_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match=r"0\.\.63"):
        induction.model.decode([0, 64])
    with pytest.raises(ValueError, match="learning rate"):
        induction.train(steps=1, lr=0.0, n_eval=4)
    with pytest.raises(ValueError, match="at least 1"):
        induction.train(steps=1, batch=0)
    with pytest.raises(ValueError, match="missing"):
        induction.InductionModel({"W_E": np.zeros((4, 4))}, n_heads=2)
    with pytest.raises(ValueError, match="text must be a string"):
        induction.model.encode(42)
