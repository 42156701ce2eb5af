"""Lesson 10's model with position put elsewhere (issue 35): RoPE, ALiBi, none. The backward pass
against finite differences for each, RoPE's forward against helpers.rope.rotate, the KV-cache
decoding against the full forward pass, and lengths past the learned table."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.induction.backward import gradient_check
from helpers.induction.model import POSITIONS, InductionModel, forward, init_params
from helpers.rope import alibi_bias, rotate


@pytest.fixture(scope="module")
def small():
    params = init_params(vocab_size=11, d_model=8, n_heads=2, max_len=7, seed=3)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 11, (3, 7))
    targets = np.full_like(tokens, -1)
    targets[:, :-1] = tokens[:, 1:]
    return params, tokens, targets


@pytest.mark.parametrize("positions", POSITIONS)
def test_the_backward_pass_is_the_gradient_for_every_scheme(small, positions):
    params, tokens, targets = small
    errors = gradient_check(params, tokens, targets, 2, positions=positions)
    for name, error in errors.items():
        if positions != "learned" and name == "W_pos":
            continue  # unused: its gradient is 0 and so is the finite difference
        assert error < 1e-6, (positions, name, error)


def test_rope_rotates_the_queries_and_keys_as_the_helper_does(small):
    params, tokens, _ = small
    plain = forward(params, tokens, 2, positions="none")
    rope = forward(params, tokens, 2, positions="rope")
    # Layer 0 reads the same stream in both (no position added): its Q and K differ only by
    # the rotation, position t by angles t * base^(-2i/d_head).
    np.testing.assert_allclose(rope.Q[0], rotate(plain.Q[0]), atol=1e-12)
    np.testing.assert_allclose(rope.K[0], rotate(plain.K[0]), atol=1e-12)


def test_alibi_adds_the_papers_bias_to_the_scores(small):
    params, tokens, _ = small
    run = forward(params, tokens, 2, positions="alibi")
    Q, K = run.Q[0], run.K[0]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + alibi_bias(7, 2)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(run.A[0], expected, atol=1e-12)


@pytest.mark.parametrize("positions", POSITIONS)
def test_decoding_with_a_kv_cache_matches_the_full_forward_pass(small, positions):
    params, tokens, _ = small
    model = InductionModel(params, 2, positions)
    prompt = tokens[0, :4]
    sequence, _ = model.generate(prompt, 3)
    # Greedy: each new token is the argmax of the full forward pass on what came before.
    for t in range(4, 7):
        logits = model.run(sequence[:t]).logits[0, -1]
        assert sequence[t] == int(np.argmax(logits)), (positions, t)


def test_only_the_learned_table_has_a_length(small):
    params, _, _ = small
    long = np.zeros(4 * 7, dtype=int)  # four times the table
    with pytest.raises(ValueError, match="max_len=7"):
        InductionModel(params, 2, "learned").run(long)
    for positions in ("rope", "alibi", "none"):
        assert InductionModel(params, 2, positions).run(long).logits.shape == (1, 28, 11)
    with pytest.raises(ValueError, match="positions must be one of"):
        InductionModel(params, 2, "sinusoidal")


@pytest.mark.parametrize("positions", POSITIONS)
def test_the_training_record_reads_the_model_as_it_runs(small, positions):
    """train.evaluate (the history recorded while training) runs the model with its own scheme:
    its loss on repeats equals the one from InductionModel.run."""
    from helpers.induction.task import repeat_task
    from helpers.induction.trainer import evaluate

    params, _, _ = small
    model = InductionModel(params, 2, positions)
    data = repeat_task(np.random.default_rng(4), 6, 7, 11, min_repeat=2, max_repeat=3,
                       distinct=False, max_copies=2)  # fmt: skip
    logits = model.run(data.tokens).logits
    log_probs = logits - logits.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
    safe = np.where(data.targets >= 0, data.targets, 0)[..., None]
    nll = -np.take_along_axis(log_probs, safe, -1)[..., 0]
    assert evaluate(model, data)["loss_repeat"] == pytest.approx(nll[data.is_repeat].mean())


def test_the_backward_pass_with_interpolated_rope_positions(small):
    params, tokens, targets = small
    errors = gradient_check(params, tokens, targets, 2, positions="rope", position_scale=0.37)
    assert all(error < 1e-6 for name, error in errors.items() if name != "W_pos"), errors


def test_fine_tuning_starts_from_the_given_model_and_reads_its_positions_scaled(small):
    from helpers.induction.task import repeat_task
    from helpers.induction.trainer import evaluate, train

    params, _, _ = small
    start = InductionModel(params, 2, "rope")
    settings = dict(vocab_size=11, d_model=8, n_heads=2, max_len=12, batch=4, min_repeat=2,
                    max_repeat=4, positions="rope", eval_every=1, dtype=np.float64,
                    mix=False)  # fmt: skip
    untouched = {k: v.copy() for k, v in start.params.items()}
    model, history = train(seed=0, steps=0, init=start, position_scale=0.5, **settings)
    for name in untouched:  # no step: the start's weights, copied (the start is not trained)
        np.testing.assert_array_equal(model.params[name], untouched[name])
        assert not np.shares_memory(model.params[name], start.params[name])
    assert model.position_scale == 0.5
    data = repeat_task(np.random.default_rng(0), 4, 12, 11, 2, 4, False, 2)
    record = evaluate(start.interpolate(0.5), data)["loss_repeat"]
    assert evaluate(model, data)["loss_repeat"] == pytest.approx(record)
    trained, _ = train(seed=0, steps=3, init=start, position_scale=0.5, **settings)
    assert not np.allclose(trained.params["W_Q"], start.params["W_Q"])
    np.testing.assert_array_equal(start.params["W_Q"], untouched["W_Q"])
    with pytest.raises(ValueError, match="init is"):
        train(seed=0, steps=1, init=InductionModel(params, 2, "alibi"), **settings)
    learned = InductionModel(params, 2, "learned")
    with pytest.raises(ValueError, match="rows"):
        train(seed=0, steps=1, init=learned, **{**settings, "positions": "learned"})
    with pytest.raises(ValueError, match="scale"):
        train(seed=0, steps=1, init=start, position_scale=2.0, **settings)
