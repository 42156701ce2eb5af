"""Lesson 10's checks accept every correct implementation and name each catalogued mistake."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import checks, induction
from helpers.checks import draws
from helpers.pretrained import head_offset_score as helpers_head_offset_score

# ------------------------------------------------------------------------ previous_token_score

previous_check = checks.previous_token_score.check


def previous_loops(A):
    A = np.asarray(A)
    n = A.shape[-1]
    out = np.zeros(A.shape[:-2])
    for index in np.ndindex(*A.shape[:-2]):
        out[index] = sum(A[index][i, i - 1] for i in range(1, n)) / (n - 1)
    return out


def previous_fancy_indexing(A):
    i = np.arange(1, A.shape[-1])
    return A[..., i, i - 1].mean(axis=-1)


def previous_eye_mask(A):
    mask = np.eye(A.shape[-1], k=-1)
    return np.einsum("...ij,ij->...", A, mask) / mask.sum()


def previous_float32_copy(A):
    B = np.array(A, dtype=np.float32)  # a copy, in float32
    return np.trace(B, -1, axis1=-2, axis2=-1) / (B.shape[-1] - 1)


def diag(A, k):
    return np.diagonal(A, k, axis1=-2, axis2=-1)


PREVIOUS_MISTAKES = {
    "next_token": (lambda A: diag(A, 1).mean(-1), "*next* token"),
    "self_token": (lambda A: diag(A, 0).mean(-1), "on itself"),
    "divides_by_n": (lambda A: diag(A, -1).sum(-1) / A.shape[-1], "divided by n"),
    # np.roll pairs query 0 with the last key, 0 in a causal map: the same numbers.
    "divides_by_n_rolled": (
        lambda A: np.roll(A, 1, axis=-1).diagonal(0, -2, -1).mean(-1),
        "np.roll",
    ),
    "sum_not_mean": (lambda A: diag(A, -1).sum(-1), "that is the sum"),
    "one_number": (lambda A: diag(A, -1).mean(), "one number"),
}


def test_previous_token_score_stub_helper_and_hard_coded_answers():
    def stub(A):
        raise NotImplementedError

    assert previous_check(stub).passed is None
    assert previous_check(lambda A: 0.5).passed is False
    helper = previous_check(lambda A: helpers_head_offset_score(A, -1))
    assert helper.mistake == "previous_token_score.calls_helper", helper
    assert len(checks.previous_token_score._hints) >= 3
    assert checks.previous_token_score.stars == 1 and checks.previous_token_score.allowed == ()


# ----------------------------------------------------------------------------- induction_score

induction_check = checks.induction_score.check


def induction_loops(A, L):
    A = np.asarray(A)
    n = A.shape[-1]
    out = np.zeros(A.shape[:-2])
    for index in np.ndindex(*A.shape[:-2]):
        out[index] = np.mean([A[index][i, i - L + 1] for i in range(L, n)])
    return out


def induction_diagonal(A, L):
    return np.diagonal(A, 1 - L, axis1=-2, axis2=-1)[..., 1:].mean(axis=-1)


def induction_mask(A, L):
    n = A.shape[-1]
    mask = np.eye(n, k=1 - L)
    mask[L - 1] = 0.0  # query L - 1 is the end of the first copy: not counted
    return (np.array(A) * mask).sum(axis=(-2, -1)) / (n - L)


def induction_float32(A, L):
    B = np.asarray(A, dtype=np.float32).copy()
    q = np.arange(L, B.shape[-1])
    return B[..., q, q - L + 1].sum(axis=-1) / len(q)


def _q(A, L):
    return np.arange(L, A.shape[-1])


INDUCTION_MISTAKES = {
    "duplicate_token": (lambda A, L: A[..., _q(A, L), _q(A, L) - L].mean(-1), "own token"),
    "includes_end_of_first_copy": (lambda A, L: diag(A, 1 - L).mean(-1), "query L - 1"),
    "two_after": (
        lambda A, L: A[..., _q(A, L)[:-1], _q(A, L)[:-1] - L + 2].mean(-1),
        "two tokens after",
    ),
    "divides_by_n": (
        lambda A, L: A[..., _q(A, L), _q(A, L) - L + 1].sum(-1) / A.shape[-1],
        "divided by n",
    ),
    "sum_not_mean": (lambda A, L: A[..., _q(A, L), _q(A, L) - L + 1].sum(-1), "that is the sum"),
    "previous_token": (lambda A, L: diag(A, -1).mean(-1), "previous-token score"),
    "one_number": (lambda A, L: diag(A, 1 - L)[..., 1:].mean(), "one number"),
}


def test_induction_score_stub_helper_and_hard_coded_answers():
    def stub(A, L):
        raise NotImplementedError

    assert induction_check(stub).passed is None
    assert induction_check(lambda A, L: 1.0).passed is False
    # Right on one map, a ragged tuple for a stack: np.shape cannot take it.
    ragged = induction_check(
        lambda A, L: induction_diagonal(A, L) if A.ndim == 2 else (np.ones(2), np.ones(3))
    )
    assert ragged.mistake == "induction_score.tuple", ragged
    helper = induction_check(lambda A, L: helpers_head_offset_score(A, 1 - L))
    assert helper.mistake == "induction_score.calls_helper", helper
    assert checks.induction_score.stars == 2 and len(checks.induction_score._hints) >= 3


# -------------------------------------------------------------------------------- induction_qk

qk_check = checks.induction_qk.check


def qk_matrices(W_E, W_V, W_O, W_Q, W_K):
    W_OV = W_V @ W_O  # (d_model, d_model): the previous-token head's OV circuit
    W_QK = W_Q @ W_K.T  # (d_model, d_model): the induction head's QK circuit
    return W_E @ W_QK @ (W_E @ W_OV).T / np.sqrt(W_Q.shape[1])


def qk_loops(W_E, W_V, W_O, W_Q, W_K):
    vocab = W_E.shape[0]
    out = np.zeros((vocab, vocab))
    for a in range(vocab):
        q = W_E[a] @ W_Q
        for b in range(vocab):
            k = ((W_E[b] @ W_V) @ W_O) @ W_K
            out[a, b] = q @ k / np.sqrt(len(q))
    return out


def qk_einsum(W_E, W_V, W_O, W_Q, W_K):
    q = np.einsum("ad,de->ae", W_E, W_Q)
    k = np.einsum("bd,dv,vm,me->be", W_E, W_V, W_O, W_K)
    return np.einsum("ae,be->ab", q, k) / np.sqrt(W_K.shape[-1])


def qk_float32_copies(W_E, W_V, W_O, W_Q, W_K):
    E, V, O, Q, K = (np.array(M, dtype=np.float32) for M in (W_E, W_V, W_O, W_Q, W_K))
    return (E @ Q) @ (E @ V @ O @ K).T / np.float32(np.sqrt(Q.shape[1]))


def _c(W_Q):
    return 1 / np.sqrt(W_Q.shape[1])


QK_MISTAKES = {
    "unscaled": (lambda E, V, O, Q, K: (E @ Q) @ (E @ V @ O @ K).T, "sqrt(d_head)"),
    "query_key_swapped": (
        lambda E, V, O, Q, K: _c(Q) * (E @ V @ O @ K) @ (E @ Q).T,
        "transposed",
    ),
    "skips_previous_head": (
        lambda E, V, O, Q, K: _c(Q) * (E @ Q) @ (E @ K).T,
        "duplicate-token",
    ),
    "ov_on_query_side": (
        lambda E, V, O, Q, K: _c(Q) * (E @ V @ O @ Q) @ (E @ K).T,
        "on the query side",
    ),
}


def test_induction_qk_stub_and_shape():
    def stub(W_E, W_V, W_O, W_Q, W_K):
        raise NotImplementedError

    assert qk_check(stub).passed is None
    wrong_shape = qk_check(lambda E, V, O, Q, K: E @ Q)
    assert wrong_shape.passed is False and wrong_shape.mistake == "induction_qk.wrong_shape"
    assert checks.induction_qk.stars == 3 and len(checks.induction_qk._hints) >= 3


# -------------------------------------------------------------------------------- predictions


def test_predictions_accept_the_answer_and_explain_a_wrong_guess():
    assert checks.phase_prediction.check("suddenly").passed is True
    wrong = checks.phase_prediction.check("steadily")
    assert wrong.passed is False and "falls slowly" in wrong.message
    assert checks.ablation_prediction.check("above 2").passed is True
    assert checks.ablation_prediction.check(None).passed is None
    for guess in ("below 0.5", "0.5 to 2"):
        assert checks.ablation_prediction.check(guess).passed is False
    assert checks.composition_prediction.check("Keys ").passed is True
    for guess in ("queries", "values"):
        result = checks.composition_prediction.check(guess)
        assert result.passed is False and "K-composition" in result.message


@pytest.mark.parametrize("name", ["previous_token_score", "induction_score", "induction_qk"])
def test_correct_answers_pass_on_many_draws(name):
    exercise = getattr(checks, name)
    for seed in range(20):
        with draws.seeded_draws(seed):
            for answer in SWEEP[name]["correct"]:
                result = exercise.check(answer)
                assert result.passed is True, (seed, answer.__name__, result.message)


def test_the_score_helpers_match_the_exercises_references():
    A = np.random.default_rng(0).dirichlet(np.ones(9), size=(2, 3, 9))
    np.testing.assert_allclose(
        induction.previous_token_score(A), checks.previous_token_score.reference(A)
    )
    np.testing.assert_allclose(
        induction.induction_score(A, 4), checks.induction_score.reference(A, 4)
    )
    with pytest.raises(ValueError, match="L must be"):
        induction.induction_score(A, 9)
    with pytest.raises(ValueError, match=r"\(\.\.\., n, n\)"):
        induction.previous_token_score(np.ones(3))


SWEEP = {
    "previous_token_score": {
        "correct": [
            previous_loops,
            previous_fancy_indexing,
            previous_eye_mask,
            previous_float32_copy,
        ],
        "mistakes": {
            **{
                name: answer
                for name, (answer, _) in PREVIOUS_MISTAKES.items()
                if not name.endswith("_rolled")
            },
            "calls_helper": lambda A: helpers_head_offset_score(A, -1),
        },
    },  # fmt: skip
    "induction_score": {
        "correct": [induction_loops, induction_diagonal, induction_mask, induction_float32],
        "mistakes": {
            **{name: answer for name, (answer, _) in INDUCTION_MISTAKES.items()},
            "calls_helper": lambda A, L: helpers_head_offset_score(A, 1 - L),
        },
    },
    "induction_qk": {
        "correct": [qk_matrices, qk_loops, qk_einsum, qk_float32_copies],
        "mistakes": {name: answer for name, (answer, _) in QK_MISTAKES.items()},
    },
}


def test_the_ready_made_helpers_are_refused_as_answers():
    # helpers.induction.previous_token_score and induction_score are the answers, ready-made.
    for exercise, answer in (
        (checks.previous_token_score, lambda A: induction.previous_token_score(A)),
        (checks.previous_token_score, induction.previous_token_score),
        (checks.induction_score, lambda A, L: induction.induction_score(A, L)),
    ):
        result = exercise.check(answer)
        assert result.mistake == f"{exercise.name}.calls_helper", result
        assert "helpers.induction" in result.message


# Each exercise's correct answers pass and each catalogued mistake is named, with a word of its
# message (the ``_rolled`` variant of a mistake has the same id).
WORDED_MISTAKES = {
    "previous_token_score": PREVIOUS_MISTAKES,
    "induction_score": INDUCTION_MISTAKES,
    "induction_qk": QK_MISTAKES,
}


@pytest.mark.parametrize(
    ("name", "answer"),
    [(name, answer) for name in WORDED_MISTAKES for answer in SWEEP[name]["correct"]],
    ids=lambda x: x if isinstance(x, str) else x.__name__,
)
def test_each_check_accepts_correct_implementations(name, answer):
    result = getattr(checks, name).check(answer)
    assert result.passed is True, result.message
    assert result.exercise == name and result.mistake is None


@pytest.mark.parametrize(
    ("name", "mistake"),
    [(name, mistake) for name, table in WORDED_MISTAKES.items() for mistake in sorted(table)],
)
def test_each_check_names_each_mistake(name, mistake):
    answer, words = WORDED_MISTAKES[name][mistake]
    result = getattr(checks, name).check(answer)
    assert result.passed is False, result.message
    assert result.mistake == f"{name}.{mistake.removesuffix('_rolled')}", result
    assert words in result.message, result.message


def test_a_refused_helper_imported_inside_the_answer_is_named_as_the_learner_wrote_it():
    """Issue 34: importing helpers.induction inside the answer (its first import in a fresh
    kernel) was refused as a call of ``helpers.induction.<module>``."""
    import subprocess
    import sys

    script = (
        "from helpers import checks\n"
        "def induction_score(A, L):\n"
        "    from helpers.induction import induction_score as theirs\n"
        "    return theirs(A, L)\n"
        "print(checks.induction_score.check(induction_score))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert "calls helpers.induction.induction_score," in run.stdout, run.stdout + run.stderr
    assert "<module>" not in run.stdout
