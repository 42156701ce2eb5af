"""Lesson 01's check accepts correct encodings and names each catalogued mistake."""

import numpy as np
import pytest

from helpers import checks

# The wrong answers are written here, in the test, as a learner would write them: an answer that
# called into the helpers package (the check's own _variant) would be refused as a helper call.


def _variant(n, d, base=10000.0, exponent="2i", swap=False, halves=False, start=0):
    """A wrong (or right) encoding: exponent "i" (pair index instead of 2i) or "k" (each
    column's own index); ``start`` = the first position; ``halves`` = sin block, cos block."""
    pos = np.arange(start, start + n)[:, None]
    i = np.arange(d // 2)[None, :]
    power = i / d if exponent == "i" else 2 * i / d  # the sin columns' exponent
    angles = pos / base**power
    second_angles = pos / base ** ((2 * i + 1) / d) if exponent == "k" else angles
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    if halves:
        return np.concatenate([first(angles), second(second_angles)], axis=1)
    PE = np.empty((n, d))
    PE[:, 0::2], PE[:, 1::2] = first(angles), second(second_angles)
    return PE


def _shift_variant(k, d_model, sign=1.0, lower=-1.0, exponent="2i", halves=False):
    """M built from 2x2 blocks [[cos, lower*sin], [sign*sin, cos]]; (1, -1) is right."""
    i = np.arange(d_model // 2)
    w = 1.0 / 10000.0 ** ((i if exponent == "i" else 2 * i) / d_model)
    M = np.zeros((d_model, d_model))
    for i, w_i in enumerate(w):
        c, s = np.cos(k * w_i), np.sin(k * w_i)
        a, b = (i, i + d_model // 2) if halves else (2 * i, 2 * i + 1)
        M[a, a], M[a, b], M[b, a], M[b, b] = c, lower * s, sign * s, c
    return M


check = checks.positional_encoding.check


def loops(n_positions, d_model):
    PE = [[0.0] * d_model for _ in range(n_positions)]
    for pos in range(n_positions):
        for i in range(0, d_model, 2):
            PE[pos][i] = np.sin(pos / 10000 ** (i / d_model))
            PE[pos][i + 1] = np.cos(pos / 10000 ** (i / d_model))
    return PE  # a list of lists is fine


def float32(n_positions, d_model):
    pos = np.arange(n_positions, dtype=np.float32)[:, None]
    i = np.arange(0, d_model, 2, dtype=np.float32)
    angles = pos / np.float32(10000) ** (i / d_model)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(n_positions, d_model)


def broadcast(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]  # (n, 1)
    two_i = np.arange(0, d_model, 2)  # (d_model/2,)
    PE = np.zeros((n_positions, d_model))
    PE[:, 0::2] = np.sin(pos / 10000 ** (two_i / d_model))
    PE[:, 1::2] = np.cos(pos / 10000 ** (two_i / d_model))
    return PE


@pytest.mark.parametrize("answer", [broadcast, loops, float32])
def test_correct_implementations_pass(answer):
    result = check(answer)
    assert result.passed is True, result.message


@pytest.mark.parametrize(
    "kwargs, words, mistake",
    [
        (dict(swap=True), "sin and cos are swapped", "sin_cos_swapped"),
        (dict(exponent="i"), "exponent is off", "exponent_i"),
        (dict(base=1000.0), "base is off", "wrong_base"),
        (dict(halves=True), "two halves", "halves"),
        (dict(base=np.e), "e instead of 10000", "base_e"),
        (dict(exponent="k"), "each cos column has its own frequency", "own_frequency_per_column"),
        (dict(start=1), "positions start at 1", "positions_from_1"),
    ],
)
def test_each_mistake_gets_its_own_message(kwargs, words, mistake):
    result = check(lambda n, d: _variant(n, d, **kwargs))
    assert result.passed is False and words in result.message
    assert result.mistake == f"positional_encoding.{mistake}"


def test_a_hard_coded_answer_fails():
    PE = checks.positional_encoding.reference(6, 8)
    assert check(lambda n, d: PE).passed is False


def test_transposed_result_is_named():
    result = check(lambda n, d: broadcast(n, d).T)
    assert result.passed is False and "transposed" in result.message


def per_column_frequency(n_positions, d_model):
    """The blog-post bug: column k uses 10000^(k/d_model), so cos columns get their own."""
    PE = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for k in range(d_model):
            angle = pos / 10000 ** (k / d_model)
            PE[pos, k] = np.sin(angle) if k % 2 == 0 else np.cos(angle)
    return PE


def integer_array(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    angles = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    PE = np.zeros_like(pos * np.arange(d_model))  # int, like pos
    PE[:, 0::2], PE[:, 1::2] = np.sin(angles), np.cos(angles)  # truncated to whole numbers
    return PE


def test_the_per_column_frequency_bug_is_named():
    for _ in range(5):  # fresh sizes every time
        result = check(per_column_frequency)
        assert result.passed is False and "own frequency" in result.message, result.message
        assert result.mistake == "positional_encoding.own_frequency_per_column"


def test_an_integer_array_is_named():
    for _ in range(5):
        result = check(integer_array)
        assert result.passed is False and "integer dtype" in result.message, result.message
        assert result.mistake == "positional_encoding.integer_dtype"


def test_an_unrecognised_difference_names_the_first_entry_that_differs():
    def one_entry_off(n_positions, d_model):
        PE = broadcast(n_positions, d_model)
        PE[-1, -1] += 0.5
        return PE

    for _ in range(5):
        message = check(one_entry_off).message
        n, d = (int(x) for x in message[len("positional_encoding(") :].split(")")[0].split(","))
        expected = checks.positional_encoding.reference(n, d)[-1, -1]
        assert f"PE[{n - 1}, {d - 1}] is {expected + 0.5:.3g} in yours" in message, message


def comparison_instead_of_assignment(n_positions, d_model):
    PE = np.zeros((n_positions, d_model))  # float, as the exercise says
    for pos in range(n_positions):
        for i in range(0, d_model, 2):
            PE[pos, i] == np.sin(pos / 10000 ** (i / d_model))  # noqa: B015 ('==' for '=')
            PE[pos, i + 1] == np.cos(pos / 10000 ** (i / d_model))  # noqa: B015
    return PE


def test_an_array_left_at_zero_is_not_blamed_on_its_dtype():
    for _ in range(5):
        result = check(comparison_instead_of_assignment)
        message = result.message
        assert "all zeros" in message and "integer dtype" not in message, message
        assert result.mistake == "positional_encoding.all_zeros"


def test_positional_encoding_is_one_star_with_three_hints():
    ex = checks.positional_encoding
    assert ex.stars == 1 and len(ex._hints) >= 3 and ex.lesson == "01"


# ---------------------------------------------------------------------------------------------
# The prediction: which columns tell positions 10 and 54 apart


def test_the_far_positions_prediction_is_explained_either_way():
    right = checks.pe_far_positions.check("slow")
    wrong = checks.pe_far_positions.check("fast")
    assert right.passed is True and "7 turns" in right.message
    assert wrong.passed is False and wrong.mistake == "pe_far_positions.picked_fast"
    assert "repeats every 2π" in wrong.message and "7 turns" in wrong.message
    assert checks.pe_far_positions.check(None).passed is None


# ---------------------------------------------------------------------------------------------
# The challenge: pe_shift_matrix(k, d_model)

shift = checks.pe_shift_matrix


def _shift_loops(k, d_model):
    M = [[0.0] * d_model for _ in range(d_model)]
    for i in range(0, d_model, 2):
        b = k / 10000 ** (i / d_model)
        M[i][i], M[i][i + 1] = np.cos(b), -np.sin(b)
        M[i + 1][i], M[i + 1][i + 1] = np.sin(b), np.cos(b)
    return M  # a list of lists is fine


def _shift_least_squares(k, d_model):
    """Found, not derived: solve PE[pos] @ M = PE[pos + k] over many positions."""
    from helpers import sinusoidal_positional_encoding

    PE = sinusoidal_positional_encoding(k + 4 * d_model, d_model)
    return np.linalg.lstsq(PE[: 4 * d_model], PE[k:], rcond=None)[0]


def _shift_block_diag(k, d_model):
    w = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    c, s = np.cos(k * w), np.sin(k * w)
    blocks = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (d/2, 2, 2)
    M = np.zeros((d_model // 2, 2, d_model // 2, 2))
    M[np.arange(d_model // 2), :, np.arange(d_model // 2), :] = blocks
    return M.reshape(d_model, d_model)


@pytest.mark.parametrize("answer", [_shift_loops, _shift_block_diag, _shift_least_squares])
def test_shift_matrix_correct_implementations_pass(answer):
    for _ in range(3):
        result = shift.check(answer)
        assert result.passed is True, result.message


SHIFT_MISTAKES = {
    "block for column vectors": (
        lambda k, d: _shift_variant(k, d, sign=-1.0, lower=1.0),
        "a shift backwards",
        "rotates_backwards",
    ),
    "no minus sign": (
        lambda k, d: _shift_variant(k, d, lower=1.0),
        r"\+sin in both corners",
        "missing_minus",
    ),
    "k ignored": (
        lambda k, d: _shift_block_diag(1, d),
        "shifts by 1 position whatever k",
        "ignores_k",
    ),
    "identity": (lambda k, d: np.eye(d), "returned the identity", "identity"),
    "exponent i": (
        lambda k, d: _shift_variant(k, d, exponent="i"),
        "the frequencies are off",
        "exponent_i",
    ),
    "halves": (lambda k, d: _shift_variant(k, d, halves=True), "column i \\+ d_model/2", "halves"),
}


@pytest.mark.parametrize("name", SHIFT_MISTAKES)
def test_shift_matrix_each_mistake_is_named(name):
    import re

    answer, pattern, mistake = SHIFT_MISTAKES[name]
    for _ in range(3):
        result = shift.check(answer)
        assert result.passed is False and re.search(pattern, result.message), result.message
        assert result.mistake == f"pe_shift_matrix.{mistake}"


def test_shift_matrix_mistake_messages_are_distinct():
    from support.check_tables import assert_mistakes_distinct

    assert_mistakes_distinct(shift, {k: v[:2] for k, v in SHIFT_MISTAKES.items()})


def test_shift_matrix_found_by_least_squares_passes_too():
    assert shift.check(_shift_least_squares).passed is True


def test_shift_matrix_stub_hints_and_an_unnamed_error():
    def stub(k, d_model):
        raise NotImplementedError

    assert shift.check(stub).passed is None
    assert shift.stars == 3 and len(shift._hints) >= 3
    result = shift.check(lambda k, d: _shift_block_diag(k, d) * 1.5)
    assert result.passed is False and result.mistake is None and "M[0, 0]" in result.message


def test_lesson_01_says_the_position_drowns_the_token_only_at_the_papers_width():
    """Issue 17: at d_model = 8 an unscaled small-init table is 2x smaller than PE, not drowned;
    at d_model = 512 it is 16x smaller. The lesson prints both and says so."""
    from pathlib import Path

    from helpers import sinusoidal_positional_encoding

    ratios = {}
    for d in (8, 512):
        table = np.random.default_rng(0).normal(0, 1 / np.sqrt(d), (1000, d))
        pe_size = np.sqrt(np.mean(sinusoidal_positional_encoding(1000, d) ** 2))
        ratios[d] = pe_size / table.std()
    assert 1.8 < ratios[8] < 2.2 and 15 < ratios[512] < 17
    source = (Path(__file__).parents[1] / "solutions" / "01_input_Z.py").read_text()
    assert "512" in source.split("the position would drown the token")[0][-400:]


def test_lesson_00_promises_only_what_holds_and_says_solution_works_for_challenges():
    """Issue 17: "nothing to copy from the cell above" was not true of every lesson; and
    solution() shows the code of ★★★ challenges too while the lessons mentioned only hints."""
    from pathlib import Path

    source = (Path(__file__).parents[1] / "solutions" / "00_start_here.py").read_text()
    text = " ".join(line.lstrip("# ") for line in source.splitlines())
    assert "`hint` and `solution` work for **every** exercise, the optional ★★★ challenges" in text
    assert "*May use:*" in source
    assert checks.pe_shift_matrix.stars == 3
    assert "def pe_shift_matrix(k, d_model)" in str(checks.pe_shift_matrix.solution())


# ---------------------------------------------------------------------------------------------
# The sweep (tests/test_checks_sweep.py runs these over hundreds of seeds): every exercise of
# lesson 01, correct answers in several styles and every mistake its check names.


def _pe_copies_inputs(n_positions, d_model):
    n, d = int(np.asarray(n_positions)), int(np.asarray(d_model, dtype=np.float64))
    return broadcast(n, d).copy()


SWEEP = {
    "positional_encoding": {
        "correct": [broadcast, loops, float32, _pe_copies_inputs],
        "mistakes": {
            "sin_cos_swapped": lambda n, d: _variant(n, d, swap=True),
            "exponent_i": lambda n, d: _variant(n, d, exponent="i"),
            "wrong_base": lambda n, d: _variant(n, d, base=1000.0),
            "halves": lambda n, d: _variant(n, d, halves=True),
            "base_e": lambda n, d: _variant(n, d, base=np.e),
            "own_frequency_per_column": per_column_frequency,
            "positions_from_1": lambda n, d: _variant(n, d, start=1),
            "integer_dtype": integer_array,
            "all_zeros": comparison_instead_of_assignment,
        },
    },
    "pe_shift_matrix": {
        "correct": [_shift_loops, _shift_block_diag, _shift_least_squares],
        "mistakes": {
            "rotates_backwards": lambda k, d: _shift_variant(k, d, sign=-1.0, lower=1.0),
            "missing_minus": lambda k, d: _shift_variant(k, d, lower=1.0),
            "ignores_k": lambda k, d: _shift_block_diag(1, d),
            "identity": lambda k, d: np.eye(d),
            "exponent_i": lambda k, d: _shift_variant(k, d, exponent="i"),
            "halves": lambda k, d: _shift_variant(k, d, halves=True),
        },
    },
}


def test_lesson_01_gives_the_relative_position_argument_as_the_papers_hypothesis():
    """Fresh read (issue 17): "a layer ... can learn one fixed linear map" stated the paper's
    hypothesis as a fact; the lesson now quotes it as one, with the paper's own counterpoint."""
    from pathlib import Path

    source = (Path(__file__).parents[1] / "solutions" / "01_input_Z.py").read_text()
    assert "hypothesized it" in source and "nearly identical results" in source
