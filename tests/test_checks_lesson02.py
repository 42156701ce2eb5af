"""The lesson 02 checks: correct answers pass, every named mistake gets its own message and id."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support.check_tables import assert_mistakes_distinct

from helpers import checks, softmax

qkv = checks.project_qkv
heads = checks.head_slices
bilinear = checks.head_bilinear_form


def _run_table(exercise, table, name, repeats=3):
    answer, pattern, mistake = table[name]
    for _ in range(repeats):  # fresh sizes every time
        result = exercise.check(answer)
        assert result.passed is False
        assert re.search(pattern, result.message), result.message
        assert result.mistake == f"{exercise.name}.{mistake}", result.mistake


# ---------------------------------------------------------------------------------------------
# project_qkv(X, W_qkv)


def _qkv_loops(X, W_qkv):
    d_out = W_qkv.shape[1] // 3
    flat = X.reshape(-1, X.shape[-1])  # every token of every batch, one row each
    out = np.zeros((flat.shape[0], W_qkv.shape[1]))
    for r in range(flat.shape[0]):
        for c in range(W_qkv.shape[1]):
            out[r, c] = sum(flat[r, t] * W_qkv[t, c] for t in range(flat.shape[1]))
    out = out.reshape(*X.shape[:-1], -1)
    return [out[..., k * d_out : (k + 1) * d_out] for k in range(3)]  # a list of three is fine


QKV_CORRECT = {
    "slices of the fused product": lambda X, W: (
        lambda QKV, d: (QKV[..., :d], QKV[..., d : 2 * d], QKV[..., 2 * d :])
    )(np.asarray(X, dtype=np.float64) @ W.copy(), W.shape[-1] // 3),
    "loops": _qkv_loops,
    "np.split": lambda X, W: tuple(np.split(X @ W, 3, axis=-1)),
    "weights first": lambda X, W: tuple(X @ w for w in np.split(W, 3, axis=1)),
    "einsum float32": lambda X, W: tuple(
        np.split(np.einsum("...nd,de->...ne", X.astype(np.float32), W.astype(np.float32)), 3, -1)
    ),
}

QKV_MISTAKES = {
    "fused only": (lambda X, W: X @ W, r"that is X @ W_qkv, all three", "fused_only"),
    "K, Q, V": (
        lambda X, W: (lambda q, k, v: (k, q, v))(*np.split(X @ W, 3, axis=-1)),
        r"your Q is the second block of X @ W_qkv, which is K",
        "wrong_order",
    ),
    "every third column": (
        lambda X, W: tuple((X @ W)[..., k::3] for k in range(3)),
        r"took every third column",
        "interleaved",
    ),
    "split axis 1": (
        lambda X, W: tuple(np.split(X @ W, 3, axis=1)),
        r"you cut the tokens axis into three",
        "split_tokens",
    ),
    "weight blocks": (
        lambda X, W: tuple(np.split(W, 3, axis=-1)),
        r"the shape of a weight block",
        "weight_blocks",
    ),
    "blocks d_model wide": (
        lambda X, W: tuple((X @ W)[..., k * X.shape[-1] : (k + 1) * X.shape[-1]] for k in range(3)),
        r"your Q has \d+ = d_model columns",
        "blocks_of_d_model",
    ),
    "X itself": (lambda X, W: (X, X, X), r"your Q is X itself", "x_itself"),
    "None": (lambda X, W: None, r"returned None; did you forget `return Q, K, V`", "returned_none"),
    "two arrays": (
        lambda X, W: tuple(np.split(X @ W, 3, -1))[:2],
        "returned 2 values; return",
        "returned_one",
    ),
}


@pytest.mark.parametrize("name", QKV_CORRECT)
def test_project_qkv_correct_answers_pass(name):
    for _ in range(3):
        result = qkv.check(QKV_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", QKV_MISTAKES)
def test_project_qkv_each_mistake_fails_with_its_own_message(name):
    _run_table(qkv, QKV_MISTAKES, name)


def test_project_qkv_mistake_messages_are_distinct():
    assert_mistakes_distinct(qkv, {k: v[:2] for k, v in QKV_MISTAKES.items()})


def test_project_qkv_stub_exception_hints_and_solution():
    def stub(X, W_qkv):
        raise NotImplementedError

    assert qkv.check(stub).passed is None

    def broken(X, W_qkv):
        QKV = X @ W_qkv.T  # W_qkv is already (d_model, 3 d_out): shapes do not line up
        return np.split(QKV, 3, axis=-1)

    result = qkv.check(broken)
    assert result.passed is False and result.mistake == "project_qkv.raised"
    assert "QKV = X @ W_qkv.T" in result.message and "at line" in result.message
    assert qkv.stars == 1 and len(qkv._hints) >= 3
    assert "def project_qkv(X, W_qkv)" in str(qkv.solution())


# ---------------------------------------------------------------------------------------------
# head_slices(M, h)


HEADS_CORRECT = {
    "reshape and swapaxes": lambda M, h: np.swapaxes(
        M.copy().reshape(*M.shape[:-1], h, M.shape[-1] // h), -3, -2
    ),
    "stack of slices": lambda M, h: np.stack(np.split(M, h, axis=-1), axis=-3),
    "moveaxis": lambda M, h: np.moveaxis(M.reshape(*M.shape[:-1], h, -1), -2, -3),
    "loops": lambda M, h: np.stack(
        [M[..., a * (M.shape[-1] // h) : (a + 1) * (M.shape[-1] // h)] for a in range(h)], -3
    ),
}

HEADS_MISTAKES = {
    "split rows": (
        lambda M, h: np.stack(np.split(M, h, axis=-2), axis=-3),
        r"you split the rows",
        "split_rows",
    ),
    "reshape without move": (
        lambda M, h: M.reshape(*M.shape[:-2], h, M.shape[-2], -1),
        r"you reshaped M straight to \(\.\.\., h, n, d_k\)",
        "reshaped_straight",
    ),
    "no head axis move": (
        lambda M, h: M.reshape(*M.shape[:-1], h, -1),
        r"did not move the head axis in front of the tokens",
        "head_axis_not_moved",
    ),
    "block transposed": (
        lambda M, h: np.moveaxis(M.reshape(*M.shape[:-1], h, -1), -3, -1),
        r"each head's block is transposed",
        "block_transposed",
    ),
    "interleaved": (
        lambda M, h: np.moveaxis(M.reshape(*M.shape[:-1], -1, h), -1, -3),
        r"head a got every h-th column",
        "interleaved",
    ),
    "h hard-coded": (
        lambda M, h: np.swapaxes(M.reshape(*M.shape[:-1], 2, -1), -3, -2),
        r"h = 2 is hard-coded",
        "h_hard_coded",
    ),
    "d_k hard-coded": (
        lambda M, h: np.swapaxes(M.reshape(*M.shape[:-1], -1, 4), -3, -2),
        r"d_k = 4 is hard-coded",
        "d_k_hard_coded",
    ),
    "stacked on axis 0": (
        lambda M, h: np.stack(np.split(M, h, axis=-1)),
        r"the head axis went in front of the batch axes",
        "head_axis_before_batch",
    ),
    "swapped axes 0 and 1": (
        lambda M, h: np.swapaxes(M.reshape(*M.shape[:-1], h, -1), 0, 1),
        r"with a batch axis in front those are the batch and the tokens",
        "batch_axis_moved",
    ),
    "2-D only, unpacking the shape": (
        lambda M, h: (lambda n, d: M.reshape(n, h, d // h).transpose(1, 0, 2))(*M.shape),
        r"works on a single \(n, d_model\) matrix but not with one leading axis",
        "only_2d",
    ),
    "2-D only, M.shape[0] as n": (
        lambda M, h: M.reshape(M.shape[0], h, -1).transpose(1, 0, 2),
        r"M.shape\[0\] is the batch size b, not n",
        "only_2d",
    ),
    "None": (lambda M, h: None, r"returned None", "returned_none"),
}


@pytest.mark.parametrize("name", HEADS_CORRECT)
def test_head_slices_correct_answers_pass(name):
    for _ in range(5):
        result = heads.check(HEADS_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", HEADS_MISTAKES)
def test_head_slices_each_mistake_fails_with_its_own_message(name):
    _run_table(heads, HEADS_MISTAKES, name, repeats=5)


def test_head_slices_mistake_messages_are_distinct():
    table = {k: v[:2] for k, v in HEADS_MISTAKES.items() if v[2] != "only_2d"}
    assert_mistakes_distinct(heads, table)


def test_head_slices_stub_exception_and_hard_coded_answer():
    def stub(M, h):
        raise NotImplementedError

    assert heads.check(stub).passed is None

    def broken(M, h):
        d_k = M.shape[-1] / h  # a float: reshape refuses it
        return np.swapaxes(M.reshape(*M.shape[:-1], h, d_k), -3, -2)

    result = heads.check(broken)
    assert result.passed is False and result.mistake == "head_slices.raised"
    assert "raised TypeError" in result.message and "at line" in result.message
    fixed = heads.reference(np.arange(48.0).reshape(6, 8), 2)
    assert heads.check(lambda M, h: fixed).passed is False
    assert heads.stars == 2 and len(heads._hints) >= 3


# ---------------------------------------------------------------------------------------------
# The prediction and the challenge


def test_the_rnn_prediction_is_explained_either_way():
    right, wrong = checks.rnn_nudge_fades.check("shrunk"), checks.rnn_nudge_fades.check("grown")
    assert right.passed is True and "r_1, r_2" in right.message
    assert wrong.passed is False and wrong.mistake == "rnn_nudge_fades.picked_grown"
    assert "slope is at most 1" in wrong.message and "r_1, r_2" in wrong.message


def _bilinear_loops(W_Q, W_K, b_Q, b_K):
    """Term by term, with plain loops: (x_i W_Q + b_Q) · (x_j W_K + b_K) sorted by what it holds."""
    h, d_model, d_k = W_Q.shape
    B = np.zeros((h, d_model + 1, d_model + 1))
    for a in range(h):
        for r in range(d_model + 1):
            for c in range(d_model + 1):
                left = W_Q[a, r] if r < d_model else b_Q[a]  # row r of [W_Q; b_Q]
                right = W_K[a, c] if c < d_model else b_K[a]  # row c of [W_K; b_K]
                B[a, r, c] = sum(left[t] * right[t] for t in range(d_k))
    return B


def _bilinear_blocks(W_Q, W_K, b_Q, b_K):
    """The four blocks, each written out, float32 and assembled with np.block."""
    W_Q, W_K = np.asarray(W_Q, dtype=np.float32), W_K.copy().astype(np.float32)
    out = []
    for wq, wk, bq, bk in zip(W_Q, W_K, b_Q, b_K):
        out.append(np.block([[wq @ wk.T, (wq @ bk)[:, None]], [(wk @ bq)[None, :], bq @ bk]]))
    return out  # a list of h matrices is fine


def _bilinear_einsum(W_Q, W_K, b_Q, b_K):
    W_Q1 = np.concatenate([W_Q, b_Q[:, None]], axis=1)
    W_K1 = np.concatenate([W_K, np.asarray(b_K, dtype=np.float64)[:, None]], axis=1)
    return np.einsum("adk,aek->ade", W_Q1, W_K1)


def _bilinear_from_blocks(W_Q, W_K, b_Q, b_K, query_only=True, key_only=True, constant=True):
    h, d_model, _ = W_Q.shape
    B = np.zeros((h, d_model + 1, d_model + 1))
    B[:, :d_model, :d_model] = W_Q @ np.swapaxes(W_K, -1, -2)
    if query_only:
        B[:, :d_model, d_model] = np.einsum("adk,ak->ad", W_Q, b_K)
    if key_only:
        B[:, d_model, :d_model] = np.einsum("adk,ak->ad", W_K, b_Q)
    if constant:
        B[:, d_model, d_model] = np.sum(b_Q * b_K, axis=-1)
    return B


BILINEAR_CORRECT = {
    "loops": _bilinear_loops,
    "blocks, float32, list of heads": _bilinear_blocks,
    "einsum on stacked weights": _bilinear_einsum,
    "four blocks into zeros": _bilinear_from_blocks,
}

BILINEAR_MISTAKES = {
    "no bias terms": (
        lambda W_Q, W_K, b_Q, b_K: W_Q @ np.swapaxes(W_K, -1, -2),
        r"has no room for the terms the biases add",
        "no_bias_terms",
    ),
    "no constant": (
        lambda *w: _bilinear_from_blocks(*w, constant=False),
        r"entry \[a, -1, -1\] is 0 in yours",
        "missing_constant",
    ),
    "no query-only term": (
        lambda *w: _bilinear_from_blocks(*w, query_only=False),
        r"your last column is 0 apart from its corner",
        "missing_query_only_term",
    ),
    "no key-only term": (
        lambda *w: _bilinear_from_blocks(*w, key_only=False),
        r"your last row is 0 apart from its corner",
        "missing_key_only_term",
    ),
    "1 first": (
        lambda *w: np.roll(_bilinear_einsum(*w), 1, axis=(1, 2)),
        r"you put the appended 1 first",
        "one_first",
    ),
    "keys first": (
        lambda *w: np.swapaxes(_bilinear_einsum(*w), -1, -2),
        r"each head's matrix is transposed",
        "keys_first",
    ),
    "inner product": (
        lambda W_Q, W_K, b_Q, b_K: np.swapaxes(W_Q, -1, -2) @ W_K,
        r"a d_k x d_k matrix per head",
        "inner_product",
    ),
    "summed heads": (
        lambda *w: _bilinear_einsum(*w).sum(0),
        r"one matrix for all heads",
        "summed_heads",
    ),
    "every head the sum": (
        lambda *w: np.broadcast_to(_bilinear_einsum(*w).sum(0), _bilinear_einsum(*w).shape),
        r"every head got the same matrix",
        "summed_heads",
    ),
    "element-wise": (
        lambda W_Q, W_K, b_Q, b_K: W_Q * W_K,
        r"that still has the d_k axis",
        "elementwise",
    ),
    "W_Q twice": (
        lambda W_Q, W_K, b_Q, b_K: _bilinear_einsum(W_Q, W_Q, b_Q, b_Q),
        r"the query's weights and bias on both sides",
        "query_twice",
    ),
    "scaled": (
        lambda *w: _bilinear_einsum(*w) / np.sqrt(w[0].shape[-1]),
        r"you divided by √d_k",
        "scaled",
    ),
}


def _swap_cross(W_Q, W_K, b_Q, b_K):
    B = _bilinear_einsum(W_Q, W_K, b_Q, b_K)
    d = W_Q.shape[1]
    column, row = B[:, :d, d].copy(), B[:, d, :d].copy()
    B[:, :d, d], B[:, d, :d] = row, column
    return B


BILINEAR_MISTAKES["cross terms swapped"] = (
    _swap_cross,
    r"your last row and last column hold each other's terms",
    "cross_terms_swapped",
)


@pytest.mark.parametrize("name", BILINEAR_CORRECT)
def test_bilinear_form_correct_answers_pass(name):
    for _ in range(3):
        result = bilinear.check(BILINEAR_CORRECT[name])
        assert result.passed is True, result.message


@pytest.mark.parametrize("name", BILINEAR_MISTAKES)
def test_bilinear_form_each_mistake_fails_with_its_own_message(name):
    _run_table(bilinear, BILINEAR_MISTAKES, name)


def test_bilinear_form_mistake_messages_are_distinct_and_the_rest_is_generic():
    table = {k: v[:2] for k, v in BILINEAR_MISTAKES.items() if k != "every head the sum"}
    assert_mistakes_distinct(bilinear, table)
    result = bilinear.check(lambda *w: 2 * _bilinear_einsum(*w))
    assert result.passed is False and result.mistake is None
    assert "x~_i B~[a] x~_jᵀ should equal" in result.message
    assert bilinear.stars == 3 and len(bilinear._hints) >= 3


def test_bilinear_form_first_messages_point_at_the_term_not_the_formula():
    """Issue 17: the first message gave the whole formula (W_Q W_Kᵀ); the formula is for the
    last hint only."""
    formula = re.compile(r"W_Q\s*@|W_Q W_Kᵀ|W_Q b_K|b_Q W_K|np\.concatenate|\[W; b\]")
    for name, (answer, _, _) in BILINEAR_MISTAKES.items():
        message = bilinear.check(answer).message
        assert not formula.search(message), (name, message)
    assert not formula.search(bilinear.hint(1).text)
    assert "np.concatenate" in bilinear.hint(len(bilinear._hints)).text


def test_bilinear_form_gives_the_scores_of_each_head_and_b_k_cancels_in_the_softmax():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 8))
    W_Q, W_K = rng.standard_normal((2, 2, 8, 4))
    b_Q, b_K = rng.standard_normal((2, 2, 4))
    B = bilinear.reference(W_Q, W_K, b_Q, b_K)
    X1 = np.concatenate([X, np.ones((12, 1))], axis=1)
    for a in range(2):
        scores = (X @ W_Q[a] + b_Q[a]) @ (X @ W_K[a] + b_K[a]).T
        assert np.allclose(X1 @ B[a] @ X1.T, scores)
        assert np.linalg.matrix_rank(B[a]) == 4
        other = (X @ W_Q[a] + b_Q[a]) @ (X @ W_K[a] + b_K[a] + 1.0).T
        assert np.allclose(softmax(other), softmax(scores))


def test_lesson_02_does_not_call_a_checks_reference_on_screen():
    """Issue 17: lesson 02 ran checks.head_bilinear_form.reference right under the challenge."""
    from pathlib import Path

    source = (Path(__file__).parents[1] / "solutions" / "02_queries_keys_values.py").read_text()
    assert ".reference" not in source
    assert "$(d_{model}, 3\\,d_{out})$" in source  # the same shape as the exercise's


# ---------------------------------------------------------------------------------------------
# The sweep (tests/test_checks_sweep.py runs these over hundreds of seeds): every exercise of
# lesson 02, correct answers in several styles and every mistake its check names.


def _mistakes_by_id(table):
    """{mistake id: answer} from a table of (answer, pattern, id); the first answer per id."""
    out = {}
    for answer, _, mistake in table.values():
        out.setdefault(mistake, answer)
    return out


SWEEP = {
    "project_qkv": {
        "correct": list(QKV_CORRECT.values()),
        "mistakes": _mistakes_by_id(QKV_MISTAKES),
    },
    "head_slices": {
        "correct": list(HEADS_CORRECT.values()),
        "mistakes": _mistakes_by_id(HEADS_MISTAKES),
    },
    "head_bilinear_form": {
        "correct": list(BILINEAR_CORRECT.values()),
        "mistakes": _mistakes_by_id(BILINEAR_MISTAKES),
    },
}


def test_the_challenge_does_not_answer_its_own_questions_before_the_learner_does():
    """Issue 34: the ✓ message stated the rank bound and the cancelling column, and the
    markdown right under the check named the entries, before the two questions were answered."""
    from pathlib import Path

    namespace = {"np": np}
    exec(checks.head_bilinear_form.solution().text, namespace)  # the answer, as a learner's
    result = checks.head_bilinear_form.check(namespace["head_bilinear_form"])
    assert result.passed is True
    assert "rank" not in result.message and "cancel" not in result.message
    source = (Path(__file__).parents[1] / "solutions" / "02_queries_keys_values.py").read_text()
    after_check = source.split("checks.head_bilinear_form.check(head_bilinear_form)")[1]
    before_measurement = after_check.split("# %%\nrng = np.random.default_rng(0)")[0]
    assert "last column" not in before_measurement and "corner" not in before_measurement
