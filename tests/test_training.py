"""Training one causal attention layer: the hand-written gradients are right, and it learns."""

import numpy as np
import pytest

import helpers
from helpers import training as T

E = helpers.token_embeddings(list(helpers.VOCAB))  # (5, 8): the running example's vocabulary
PROBE = np.array([helpers.VOCAB.index(w) for w in helpers.tokenize(helpers.RUNNING_SENTENCE)])


@pytest.fixture(scope="module")
def trained():
    return T.train(E, n=6, probe=PROBE, seed=0)


def small_problem(seed=1, d_k=4):
    rng = np.random.default_rng(seed)
    tokens, targets = T.previous_token_task(rng, 3, 5, len(E))
    return T.init_params(E.shape[1], d_k, len(E), seed=seed), T.embed(tokens, E), targets


def test_hand_written_gradients_match_finite_differences():
    params, X, targets = small_problem()
    errors = T.gradient_check(params, X, targets)
    assert set(errors) == {"W_Q", "W_K", "W_V", "W_out"}
    assert max(errors.values()) < 1e-7, errors


def test_gradient_check_catches_a_wrong_gradient(monkeypatch):
    """A gradient that is 50% too large for W_Q: the check must notice."""
    params, X, targets = small_problem()
    real = T.loss_and_grads

    def wrong(params, X, targets):
        loss, grads, cache = real(params, X, targets)
        grads = dict(grads, W_Q=grads["W_Q"] * 1.5)
        return loss, grads, cache

    monkeypatch.setattr(T, "loss_and_grads", wrong)
    assert T.gradient_check(params, X, targets)["W_Q"] > 0.1


def test_gradient_check_of_a_backward_pass_that_forgets_the_scale():
    """dQ and dK without c = 1/sqrt(d_k): W_Q's and W_K's gradients are sqrt(d_k) too large,
    so their error is (sqrt(d_k) - 1) / (sqrt(d_k) + 1), of order 1; the others stay right."""
    params, X, targets = small_problem()
    d_k = params["W_Q"].shape[1]

    def forgot_the_scale(params, X, targets):
        loss, grads, cache = T.loss_and_grads(params, X, targets)
        grads = dict(grads, W_Q=grads["W_Q"] * np.sqrt(d_k), W_K=grads["W_K"] * np.sqrt(d_k))
        return loss, grads, cache

    errors = T.gradient_check(params, X, targets, grads_fn=forgot_the_scale)
    expected = (np.sqrt(d_k) - 1) / (np.sqrt(d_k) + 1)
    np.testing.assert_allclose([errors["W_Q"], errors["W_K"]], expected, rtol=1e-6)
    assert max(errors["W_V"], errors["W_out"]) < 1e-7


def test_positions_without_a_target_do_not_contribute():
    params, X, targets = small_problem()
    cache = T.forward(params, X)
    loss, dlogits = T.cross_entropy(cache.logits, targets)
    assert np.all(dlogits[:, 0] == 0)  # position 0 has no previous token, so no target
    changed = cache.logits.copy()
    changed[:, 0] += np.arange(len(E))  # any change to position 0's logits...
    assert T.cross_entropy(changed, targets)[0] == loss  # ...leaves the loss unchanged


def test_previous_token_targets_shift_by_one():
    tokens = np.array([[3, 1, 4, 1, 5]])
    assert T.previous_token_targets(tokens).tolist() == [[-1, 3, 1, 4, 1]]


def test_attention_never_looks_at_future_tokens():
    params, X, _ = small_problem()
    A = T.forward(params, X).A  # (batch, n, n)
    assert np.all(A[:, ~helpers.causal_mask(X.shape[1])] == 0)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_training_learns_the_previous_token_task(trained):
    assert trained.test_accuracy[0] < 0.3  # chance is 1/5
    assert trained.test_accuracy[-1] > 0.97
    assert trained.test_loss[-1] < 0.1 * trained.test_loss[0]


def test_learned_attention_looks_at_the_previous_position(trained):
    A = trained.weights[-1]  # (6, 6) on "the cat sat on the mat"
    previous = np.array([A[i, i - 1] for i in range(1, 6)])
    assert np.all(previous > 0.5), np.round(A, 2)
    assert np.all(A.argmax(axis=1)[1:] == np.arange(5))


def test_without_positions_the_task_cannot_be_learned():
    run = T.train(E, n=6, positions=False, seed=0)
    assert run.test_accuracy[-1] < 0.75  # the causal mask alone gives the first rows away


def test_training_is_deterministic(trained):
    again = T.train(E, n=6, probe=PROBE, seed=0, steps=30)
    np.testing.assert_array_equal(again.weights[-1], trained.weights[3])
    assert again.steps == trained.steps[:4]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: T.embed(np.array([[0, 5]]), E), "token ids must lie in 0..4"),
        (lambda: T.embed(np.array([0, 1]), E), "tokens must be a \\(batch, n\\) array"),
        (lambda: T.forward(T.init_params(8, 4, 5), np.ones((2, 3))), "X must be"),
        (lambda: T.forward(T.init_params(6, 4, 5), np.ones((1, 3, 8))), "d_model=8"),
        (lambda: T.forward({"W_Q": 1}, np.ones((1, 3, 8))), "missing"),
        (lambda: T.init_params(8, 0, 5), "d_k must be a positive"),
        (
            lambda: T.loss_and_grads(
                T.init_params(8, 4, 5), np.ones((1, 3, 8)), -np.ones((1, 3), int)
            ),
            "no target",
        ),
        (
            lambda: T.loss_and_grads(
                T.init_params(8, 4, 5), np.ones((1, 3, 8)), np.ones((1, 4), int)
            ),
            "targets must have shape",
        ),
        (lambda: T.Adam({}, lr=0), "learning rate"),
    ],
)
def test_bad_input_raises_a_value_error_that_names_the_problem(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_softmax_backward_matches_finite_differences_and_masks_get_no_gradient():
    rng = np.random.default_rng(4)
    S = rng.normal(size=(2, 4, 4))
    S = np.where(helpers.causal_mask(4), S, -np.inf)  # a causal mask: -inf above the diagonal
    A, dA = helpers.softmax(S, axis=-1), rng.normal(size=(2, 4, 4))
    numerical = np.zeros_like(S)
    for index in np.ndindex(S.shape):
        plus, minus = S.copy(), S.copy()
        plus[index] += 1e-6
        minus[index] -= 1e-6
        loss_plus = (dA * helpers.softmax(plus, axis=-1)).sum()
        loss_minus = (dA * helpers.softmax(minus, axis=-1)).sum()
        numerical[index] = (loss_plus - loss_minus) / 2e-6
    dS = T.softmax_backward(A, dA)
    np.testing.assert_allclose(dS, numerical, atol=1e-8)
    assert np.all(dS[:, ~helpers.causal_mask(4)] == 0)


def test_softmax_backward_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="same shape"):
        T.softmax_backward(np.ones((2, 3)) / 3, np.ones((3, 2)))
