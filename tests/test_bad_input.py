"""Every public helper, given one bad argument, fails clearly or gives a finite answer.

A property test (issue 12): for every public function of the course's math (found at run time
in ``helpers.__all__`` and the math modules' ``__all__``, so new helpers are covered too) and
the attention explorer's constructor and control methods, one
argument of a good call is replaced by a random bad value (None, bools, strings, floats where
ints belong, NaN and inf, complex numbers, ragged lists, arrays of wrong shape or dtype,
overflowing values, ...). The helper must then either

* raise ``TypeError`` or ``ValueError`` from the course's own code, whose message names the
  argument (never NumPy's internal message, ``'NoneType' object is not iterable`` and the like),
* or return an answer whose numbers are all finite (never a silent NaN; a NaN passed in may
  come out of a helper that only rearranges numbers, such as ``split_heads``),

and do so within a few seconds (never a hang).
"""

from __future__ import annotations

import inspect
import re
import signal
import traceback
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import helpers
from helpers import attention, blockwise, embeddings, multihead, positions, projections, scaling

HELPERS_DIR = Path(helpers.__file__).parent
MATH_MODULES = [attention, blockwise, embeddings, multihead, positions, projections, scaling]
TIMEOUT_S = 10  # generous: the machine is shared; a hang is minutes


def public_functions() -> dict[str, object]:
    """Every public function of the math, by name (classes are not functions: the explorer's
    entry points are added below)."""
    found = {}
    for module in [helpers, *MATH_MODULES]:
        for name in getattr(module, "__all__", []):
            value = getattr(module, name)
            if inspect.isfunction(value):
                found[name] = value
    try:  # lesson 05's masks, added by another engineer
        from helpers import masks

        found.update({name: getattr(masks, name) for name in masks.__all__})
    except ImportError:
        pass
    return dict(sorted(found.items()))


FUNCTIONS = public_functions()


def explorer_entry_points() -> dict[str, object]:
    """The attention explorer's constructor and the methods its controls call."""
    from helpers.explorer.widget import AttentionExplorer

    shared = AttentionExplorer()
    return {
        "AttentionExplorer": AttentionExplorer,
        **{
            f"AttentionExplorer.{method}": getattr(shared, method)
            for method in (
                "select_query",
                "set_head",
                "set_causal",
                "set_temperature",
                "set_sentence",
            )
        },
    }


FUNCTIONS.update(explorer_entry_points())

# ------------------------------------------------------------------ one good call per helper

RNG = np.random.default_rng(0)
N, D_MODEL, H = 6, 8, 2
D_K = D_MODEL // H
GOOD_BY_NAME = {
    "Q": RNG.standard_normal((H, N, D_K)),
    "K": RNG.standard_normal((H, N, D_K)),
    "V": RNG.standard_normal((H, N, D_K)),
    "X": RNG.standard_normal((N, D_MODEL)),
    "X_q": RNG.standard_normal((N, D_MODEL)),
    "H": RNG.standard_normal((H, N, D_K)),
    "x": RNG.standard_normal((3, 5)),
    "W_Q": RNG.standard_normal((H, D_MODEL, D_K)),
    "W_K": RNG.standard_normal((H, D_MODEL, D_K)),
    "W_V": RNG.standard_normal((H, D_MODEL, D_K)),
    "W_O": RNG.standard_normal((D_MODEL, D_MODEL)),
    "W": RNG.standard_normal((H, D_MODEL, D_K)),
    "n": N,
    "n_positions": N,
    "d_model": D_MODEL,
    "n_heads": H,
    "h": H,
    "batch": 2,
    "seed": 0,
    "block_size": 2,
    "causal": False,
    "axis": -1,
    "tokens": ["the", "cat", "sat"],
    "text": "the cat sat",
    "lengths": [3, 6],
    "d_k": 4,
    "d_ks": [1, 4],
    "n_queries": 3,
    "n_keys": 4,
    "n_samples": 20,
    "rng": None,  # a fresh generator per call, see good_call
    "weights": np.full((3, 4), 0.25),
    "q": RNG.standard_normal(4),
    "scales": ("none", "sqrt"),
    "dtype": np.float32,
    "sentence": "the cat sat",
    "temperature": 1.0,
    "t": 1.0,
    "query": 0,
    "i": 0,
    "head": 0,
    "flag": True,
    "scores": RNG.standard_normal((3, 4)),
    "target": 0.8,  # nats: between one-hot (0) and flat (log 4) rows
    "c": 1.0,
}
GOOD_FOR = {  # where a name means something else in one helper
    ("scale_factor", "scale"): "sqrt",
    ("row_weights", "scale"): "sqrt",
    ("dot_product_variance", "scale"): "none",
    ("row_weights", "K"): RNG.standard_normal((5, 4)),
}
# Names passed on for information only (error messages), not data a learner passes.
NOT_DATA = {("head_projections", "name"), ("head_projections", "x_name")}


def parameters(name: str) -> list[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(FUNCTIONS[name]).parameters.values()
        if (name, p.name) not in NOT_DATA and p.kind is not p.VAR_KEYWORD
    ]


def good_value(function: str, param: inspect.Parameter):
    if (function, param.name) in GOOD_FOR:
        return GOOD_FOR[function, param.name]
    if param.name == "rng":
        return np.random.default_rng(0)
    if param.name in GOOD_BY_NAME:
        return GOOD_BY_NAME[param.name]
    if param.default is not param.empty:
        return param.default
    raise LookupError(
        f"tests/test_bad_input.py has no good value for {function}({param.name}=...): add one "
        "to GOOD_BY_NAME or GOOD_FOR so the new helper is covered"
    )


def good_call(function: str) -> dict:
    return {p.name: good_value(function, p) for p in parameters(function)}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_good_call_works_and_is_finite(function):
    check_finite(call(FUNCTIONS[function], good_call(function)), function)


# ------------------------------------------------------------------ bad values

NUMPY_WORDS = [  # phrases of NumPy's and Python's own errors: the learner cannot act on them
    "remapped shapes",
    "operands could not be broadcast",
    "zero-size array",
    "has no len",
    "'NoneType' object",
    "object is not iterable",
    "unsupported operand",
    "ufunc",
    "inhomogeneous",
    "setting an array element",
    "cannot be interpreted as an integer",
    "negative dimensions",
    "object cannot be",
    "surrogates not allowed",
]

small_floats = arrays(
    np.float64,
    array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
    elements=st.floats(-10, 10) | st.sampled_from([np.nan, np.inf, -np.inf, 1e200, -1e200]),
)
FIXED_BAD_VALUES = [
    None,
    True,
    False,
    "abc",
    "2",
    "",
    b"bytes",
    2.0,
    2.5,
    -1,
    0,
    float("nan"),
    float("inf"),
    -float("inf"),
    1 + 2j,
    [],
    [[1.0, 2.0], [3.0]],  # ragged
    {"a": 1},
    object(),
    np.array([]),
    np.zeros((0, 0)),
    np.array(["a", "b"]),
    np.ones((2, 3), dtype=bool),
    np.ones((2, 3), dtype=complex),
    np.full((N, D_MODEL), np.nan),
    np.full((H, N, D_K), 1e200),  # finite, but overflows in a product
    np.ones((2, 3, 4)),
    np.ones(7),
    np.float32(3.0),
    np.int64(3),
    ("the", 1),
    ["the", None],
]
bad_values = st.one_of(
    st.sampled_from(FIXED_BAD_VALUES),
    st.integers(-5, 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    small_floats,
)


class Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    def on_alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call(function, kwargs):
    with time_limit(TIMEOUT_S), np.errstate(all="ignore"):
        result = function(**kwargs)
        if inspect.isgenerator(result):
            result = list(result)
    return result


def check_finite(result, where: str) -> None:
    """Every float in ``result`` (arrays, tuples, dicts, dataclasses) is finite."""
    if isinstance(result, dict):
        for value in result.values():
            check_finite(value, where)
    elif isinstance(result, (list, tuple)):
        for value in result:
            check_finite(value, where)
    elif hasattr(result, "__dataclass_fields__"):
        for field in result.__dataclass_fields__:
            check_finite(getattr(result, field), where)
    elif isinstance(result, (np.ndarray, float, np.floating)):
        array = np.asarray(result)
        if np.issubdtype(array.dtype, np.inexact):
            assert np.isfinite(array).all(), f"{where} returned NaN/inf silently"


def raised_in_the_course(error: BaseException) -> bool:
    """Was the error raised by the course's own code (not inside NumPy or Python)?"""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve().is_relative_to(HELPERS_DIR)


# Problems found in helpers other engineers own, reported to them rather than fixed here.
KNOWN: dict[str, str] = {}


def known(function: str):
    reason = KNOWN.get(function)
    return pytest.param(function, marks=pytest.mark.xfail(reason=reason)) if reason else function


def check_one_bad_call(function: str, name: str, bad) -> None:
    """Call ``function`` with ``name=bad`` (the rest good); fail unless clear or finite."""
    kwargs = good_call(function)
    kwargs[name] = bad
    try:
        result = call(FUNCTIONS[function], kwargs)
    except Hang:
        pytest.fail(f"{function}({name}={_short(bad)}) did not answer within {TIMEOUT_S} s")
    except (TypeError, ValueError) as error:
        message = str(error)
        where = f"{function}({name}={_short(bad)}) raised {type(error).__name__}: {message}"
        assert raised_in_the_course(error), f"{where}\n... from inside NumPy/Python, not checked"
        assert re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message), (
            f"{where}\n... the message does not name the argument {name!r}"
        )
        for words in NUMPY_WORDS:
            assert words not in message, f"{where}\n... NumPy's internal words {words!r}"
    except Exception as error:  # anything else is a crash, not a clear error
        pytest.fail(f"{function}({name}={_short(bad)}) raised {type(error).__name__}: {error}")
    else:
        if not holds_non_finite(bad):  # NaN in, NaN out (split_heads) is not silent
            check_finite(result, f"{function}({name}={_short(bad)})")


@pytest.mark.parametrize("function", [known(f) for f in FUNCTIONS])
def test_every_argument_with_every_listed_bad_value(function):
    """The fixed list of bad values, exhaustively: each argument of each helper, each value."""
    for name in good_call(function):
        for bad in FIXED_BAD_VALUES:
            check_one_bad_call(function, name, bad)


@pytest.mark.parametrize("function", [known(f) for f in FUNCTIONS])
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
)
@given(data=st.data())
def test_a_bad_argument_gives_a_clear_error_or_a_finite_answer(function, data):
    """Random bad values (integers, floats, text, small arrays with NaN, inf or 1e200)."""
    name = data.draw(st.sampled_from(sorted(good_call(function))), label="argument")
    check_one_bad_call(function, name, data.draw(bad_values, label="bad value"))


def holds_non_finite(value) -> bool:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return not np.isfinite(array).all()


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."
