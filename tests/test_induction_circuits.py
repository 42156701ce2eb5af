"""helpers.induction.circuits: ablation, path patching and direct logit attribution, checked
against the model's own forward pass and against what the residual stream's sum implies."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.induction import circuits, init_params
from helpers.induction.model import InductionModel


@pytest.fixture(scope="module")
def model() -> InductionModel:
    return InductionModel(init_params(11, 12, 3, 9, 2, seed=5), 3)


@pytest.fixture(scope="module")
def tokens() -> np.ndarray:
    return np.random.default_rng(0).integers(0, 11, (4, 9))


def test_no_replacement_is_the_forward_pass(model, tokens):
    ran = circuits.run(model, tokens)
    cache = model.run(tokens)
    np.testing.assert_allclose(ran.logits, cache.logits, rtol=1e-10, atol=1e-12)
    for mine, theirs in zip(ran.A, cache.A):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    # The residual stream is an exact sum: embedding + every head's output, then W_U.
    total = ran.embedding + ran.outputs.sum(axis=(1, 2))
    np.testing.assert_allclose(total @ model.params["W_U"], cache.logits, atol=1e-10)


@pytest.mark.parametrize("head", [(0, 0), (0, 2), (1, 1)])
def test_zero_ablation_everywhere_is_the_models_ablation(model, tokens, head):
    ran = circuits.run(model, tokens, {head: 0.0})
    np.testing.assert_allclose(ran.logits, model.run(tokens, ablate=[head]).logits, atol=1e-10)


def test_replacing_a_head_by_itself_changes_nothing(model, tokens):
    own = circuits.run(model, tokens).outputs[:, 0, 1]
    for reads in (("q",), ("k",), ("v",), ("out",), circuits.READS):
        ran = circuits.run(model, tokens, {(0, 1): own}, reads=reads)
        np.testing.assert_allclose(ran.logits, circuits.run(model, tokens).logits, atol=1e-10)


def test_each_path_changes_only_what_reads_it(model, tokens):
    plain = circuits.run(model, tokens)
    keys_only = circuits.run(model, tokens, {(0, 0): 0.0}, reads=("k",))
    # Layer 0 reads only the embeddings: its maps are untouched; layer 1's keys change, so its
    # maps do; the direct path of head (0, 0) to the logits is kept.
    np.testing.assert_allclose(keys_only.A[0], plain.A[0], atol=1e-12)
    assert not np.allclose(keys_only.A[1], plain.A[1])
    values_only = circuits.run(model, tokens, {(0, 0): 0.0}, reads=("v",))
    np.testing.assert_allclose(values_only.A[1], plain.A[1], atol=1e-12)  # V does not move A
    assert not np.allclose(values_only.logits, plain.logits)
    out_only = circuits.run(model, tokens, {(0, 0): 0.0}, reads=("out",))
    direct = plain.outputs[:, 0, 0] @ model.params["W_U"]
    np.testing.assert_allclose(out_only.logits, plain.logits - direct, atol=1e-10)


def test_mean_ablation_by_the_batch_mean_of_a_constant_head_changes_nothing(model, tokens):
    # A head whose output does not depend on the sequence loses nothing under mean ablation.
    same = np.repeat(tokens[:1], 5, axis=0)
    means = circuits.head_means(model, same)
    ran = circuits.run(model, same, {(0, 2): means[0, 2]})
    np.testing.assert_allclose(ran.logits, circuits.run(model, same).logits, atol=1e-10)
    assert means.shape == (2, 3, 9, 12)


def test_logit_attribution_adds_up(model, tokens):
    where = np.zeros(tokens.shape, dtype=bool)
    where[:, 3:8] = True
    parts = circuits.logit_attribution(model, tokens, where)
    assert set(parts) == {"direct", "total"} | {f"L{a}H{b}" for a in range(2) for b in range(3)}
    total = sum(v for k, v in parts.items() if k != "total")
    assert total == pytest.approx(parts["total"], abs=1e-9)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"replace": {(2, 0): 0.0}}, "replace keys"),
        ({"replace": {(0, 3): 0.0}}, "replace keys"),
        ({"replace": {0: 0.0}}, "replace keys"),
        ({"reads": ("keys",)}, "reads must be"),
        ({"reads": ()}, "reads must be"),
    ],
)
def test_bad_arguments_say_what_to_fix(model, tokens, kwargs, message):
    with pytest.raises(ValueError, match=message):
        circuits.run(model, tokens, **kwargs)


def test_bad_tokens_and_masks(model, tokens):
    with pytest.raises(ValueError, match="token"):
        circuits.run(model, tokens + 20)
    with pytest.raises(ValueError, match="where"):
        circuits.logit_attribution(model, tokens, np.ones(tokens.shape, dtype=bool))
    with pytest.raises(ValueError, match="where"):
        circuits.logit_attribution(model, tokens, np.zeros(tokens.shape, dtype=bool))


def test_composed_qk_is_the_challenges_matrix(model):
    from helpers import checks

    w, r = model.head_weights(0, 1), model.head_weights(1, 2)
    expected = checks.induction_qk.reference(
        model.params["W_E"], w["W_V"], w["W_O"], r["W_Q"], r["W_K"]
    )
    np.testing.assert_allclose(circuits.composed_qk(model, (0, 1), (1, 2)), expected, atol=1e-12)
    with pytest.raises(ValueError, match="earlier layer"):
        circuits.composed_qk(model, (1, 0), (1, 2))


def test_composed_qk_through_a_query_writer(model):
    q, w, r = model.head_weights(0, 0), model.head_weights(0, 1), model.head_weights(1, 2)
    W_E = model.params["W_E"]
    expected = (W_E @ q["W_V"] @ q["W_O"] @ r["W_Q"]) @ (W_E @ w["W_V"] @ w["W_O"] @ r["W_K"]).T
    got = circuits.composed_qk(model, (0, 1), (1, 2), query_writer=(0, 0))
    np.testing.assert_allclose(got, expected / np.sqrt(model.d_head), atol=1e-12)
    with pytest.raises(ValueError, match="earlier layer"):
        circuits.composed_qk(model, (0, 1), (1, 2), query_writer=(1, 0))
