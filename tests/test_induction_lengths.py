"""Lesson 11's models and experiment: the shipped weights per position scheme, reading past the
training length, and what the lesson says about it, measured on fresh sequences (other seeds
than the lesson's)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from helpers import induction
from helpers.induction.lengths import far_repeats, measure
from helpers.induction.probes import next_token_losses
from helpers.induction.weights import SHIPPED_FILES, shipped_file

SCHEMES = ("learned", "rope", "alibi", "none")


@pytest.fixture(scope="module")
def models():
    return {scheme: induction.load(positions=scheme) for scheme in SCHEMES}


@pytest.fixture(scope="module")
def fresh():
    """Sequences of 32, 64 and 128 tokens, the copy past position 32 in the longer ones."""
    return {
        n: far_repeats(np.random.default_rng([7, n]), 160, n, 64, length=10,
                       after=0 if n == 32 else 32)
        for n in (32, 64, 128)
    }  # fmt: skip


def test_every_scheme_ships_a_file_whose_sha256_is_checked(models, tmp_path):
    assert set(SHIPPED_FILES) == set(SCHEMES)
    for scheme, (path, digest) in SHIPPED_FILES.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        assert models[scheme].positions == scheme
        assert models[scheme].settings.get("positions", "learned") == scheme
    broken = tmp_path / "weights-rope.npz"
    data = bytearray(shipped_file("rope")[0].read_bytes())
    data[len(data) // 2] ^= 1  # one bit flipped in the middle
    broken.write_bytes(bytes(data))
    with pytest.raises(induction.WeightsError, match="sha256"):
        induction.load(broken, sha256=shipped_file("rope")[1])
    with pytest.raises(ValueError, match="positions must be one of"):
        induction.load(positions="sinusoidal")


def test_all_but_the_learned_table_read_four_times_the_training_length(models, fresh):
    tokens = fresh[128].tokens[:2]
    with pytest.raises(ValueError, match="max_len=32"):
        models["learned"].run(tokens)
    for scheme in ("rope", "alibi", "none"):
        assert np.isfinite(models[scheme].run(tokens).logits).all()


def test_the_length_table_on_fresh_sequences(models, fresh):
    at = {(s, n): measure(models[s], fresh[n]) for s in SCHEMES for n in fresh
          if s != "learned" or n == 32}  # fmt: skip
    # At the training length the learned table and RoPE copy about equally well, with the
    # classic circuit; ALiBi copies less well, with no previous-token head; with no positions
    # the model learns the task only in part.
    assert at["learned", 32]["repeats"] < 0.4 and at["rope", 32]["repeats"] < 0.4
    for scheme in ("learned", "rope"):
        assert at[scheme, 32]["previous"] > 0.9 and at[scheme, 32]["induction"] > 0.7
    assert 0.5 < at["alibi", 32]["repeats"] < 1.0 and at["alibi", 32]["previous"] < 0.3
    assert 1.5 < at["none", 32]["repeats"] < 3.0 and at["none", 32]["previous"] < 0.2
    # Past it: RoPE degrades with length (0.5 to 2 nats at 128, the prediction's answer), its
    # previous-token head holds and its induction heads weaken; ALiBi degrades less.
    assert at["rope", 32]["repeats"] < at["rope", 64]["repeats"] < at["rope", 128]["repeats"]
    assert 0.5 < at["rope", 128]["repeats"] < 2.0
    assert at["rope", 128]["previous"] > 0.8 and at["rope", 128]["induction"] < 0.65
    assert at["alibi", 128]["repeats"] < at["rope", 128]["repeats"]
    assert at["alibi", 128]["repeats"] - at["alibi", 32]["repeats"] < 0.6
    assert at["none", 128]["repeats"] > 3.5
    # First occurrences: nothing to predict, about log 64 for every scheme and length.
    for row in at.values():
        assert 0.97 < row["first"] < 1.12


def test_a_window_of_32_keys_brings_most_of_ropes_loss_back(models, fresh):
    rope, data = models["rope"], fresh[128]
    whole, windowed = measure(rope, data)["repeats"], measure(rope.windowed(32), data)["repeats"]
    at_32 = measure(rope, fresh[32])["repeats"]
    assert windowed < at_32 + 0.35 and (whole - windowed) > 0.7 * (whole - at_32)
    # and its layer-1 heads put much more weight on keys 32 or more back than ALiBi's
    far = np.subtract.outer(np.arange(128), np.arange(128)) >= 32
    share = {
        s: (models[s].run(data.tokens).A[1] * far).sum(-1)[:, :, 32:].mean()
        for s in ("rope", "alibi")
    }
    assert share["rope"] > 2 * share["alibi"]


def test_alibis_copying_rests_on_its_steepest_first_layer_head(models, fresh):
    alibi, data = models["alibi"], fresh[32]
    marked = data.is_repeat[:, :-1]

    def repeat_loss(ablate):
        logits = alibi.run(data.tokens, ablate=ablate).logits
        return next_token_losses(logits, data.tokens)[marked].mean()

    assert repeat_loss([(0, 0)]) > np.log(64)  # slope 1/4: worse than a uniform guess without it
    assert all(repeat_loss([(0, h)]) < 1.5 for h in (1, 2, 3))
    A0 = alibi.run(data.tokens).A[0][:, 0]  # head 0
    back = [np.diagonal(A0, -k, axis1=-2, axis2=-1)[:, 8:].mean() for k in range(1, 4)]
    ratios = np.array(back[1:]) / np.array(back[:-1])
    assert np.allclose(ratios, np.exp(-0.25), atol=0.05)  # the penalty's factor per step back


def test_position_interpolation_without_fine_tuning_breaks_the_previous_token_head(models, fresh):
    rope = models["rope"]
    for n in (64, 128):
        squeezed = measure(rope.interpolate(32 / n), fresh[n])
        assert squeezed["previous"] < 0.3 and squeezed["repeats"] > 3.5


def test_interpolate_and_windowed_keep_the_weights_and_check_their_arguments(models):
    rope = models["rope"]
    half = rope.interpolate(0.5)
    assert all(np.shares_memory(half.params[k], rope.params[k]) for k in rope.params)
    assert half.position_scale == 0.5 and rope.position_scale == 1
    assert "position_scale=0.5" in repr(half) and "window=4" in repr(rope.windowed(4))
    tokens = np.arange(12) % 64
    # interpolation by 1/2 is RoPE at half positions: the same as rotating at t/2
    from helpers.rope import rotate

    cache = half.run(tokens)
    plain = rope.run(tokens)
    K_unrotated = rotate(plain.K[0], -np.arange(12))  # undo the rotation at t ...
    np.testing.assert_allclose(cache.K[0], rotate(K_unrotated, np.arange(12) * 0.5), atol=1e-9)
    for bad in (0, -1, 1.5, float("nan"), "1/2", True):
        with pytest.raises(ValueError, match="scale"):
            rope.interpolate(bad)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="window"):
            rope.windowed(bad)
    with pytest.raises(ValueError, match="RoPE"):
        models["alibi"].interpolate(0.5)


@pytest.mark.parametrize("scheme", ["rope", "alibi", "none"])
def test_a_window_masks_far_keys_in_the_forward_pass_and_in_generation(models, scheme):
    model = models[scheme].windowed(5)
    tokens = np.random.default_rng(3).integers(0, 64, 20)
    A = model.run(tokens).A
    far = np.subtract.outer(np.arange(20), np.arange(20)) >= 5
    for layer in A:
        assert np.all(layer[..., far] == 0)
    # generation with the KV cache takes the same window
    generated, _ = model.generate(tokens[:12], 8)
    for step in range(12, 20):
        logits = model.run(generated[:step]).logits[0, -1]
        assert generated[step] == int(np.argmax(logits))


def test_far_repeats_places_the_copy_where_asked():
    data = far_repeats(np.random.default_rng(0), 50, 64, 64, length=10, after=32)
    for s in range(50):
        first, copy = data.starts[s]
        assert copy >= 32 and copy + 10 <= 64 and first == copy - 10
        np.testing.assert_array_equal(data.tokens[s, copy : copy + 10], data.tokens[s, first:copy])
        assert data.is_repeat[s].sum() == 9 and data.is_repeat[s, copy : copy + 9].all()
    with pytest.raises(ValueError, match="does not fit"):
        far_repeats(np.random.default_rng(0), 2, 40, 64, length=10, after=32)
    with pytest.raises(ValueError, match="after"):
        far_repeats(np.random.default_rng(0), 2, 40, 64, after=-1)
