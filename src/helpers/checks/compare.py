"""Comparing an answer with the reference, and naming the mistake when it matches a known one:
the learner's return value as an array of the expected shape (:func:`as_result_array`), several
return values (:func:`unpack_returns`; an ``(output, weights)`` pair: :func:`unpack_pair`), and
:func:`compare` with its catalogue of wrong answers."""

from __future__ import annotations

from typing import Any

import numpy as np

from .messages import type_name
from .mistakes import Mistake


def complex_mistake(returned: str) -> Mistake:
    """The ``complex`` mistake; ``returned`` says who, e.g. ``"softmax(x) returned"``."""
    return Mistake(
        f"{returned} complex numbers; every quantity here is real. A square root or a "
        "fractional power of a negative number, or a stray `j`, makes them.",
        "complex",
    )


def is_complex(value: Any, depth: int = 0) -> bool:
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if type(value) in (tuple, list) and depth < 3:
        return any(is_complex(v, depth + 1) for v in value)
    return False


# ----------------------------------------------------------------------------------------------
# Comparing an answer with the reference, and naming the mistake when it matches a known one.


def as_result_array(
    value: Any, what: str, expected_shape: tuple[int, ...], part: str | None = None
) -> np.ndarray:
    """The learner's return value as a float array of ``expected_shape``, or a :class:`Mistake`.

    ``part`` names one of several returned values (``"output"``, ``"weights"``), so that the
    messages read "<what>: your output has shape ...".
    """
    expected_shape = tuple(expected_shape)
    # "f(x) returned shape (2, 3)" for the one return value; "f(x): your weights have ..." for
    # one of several (a plural part such as "weights" takes "are" / "have").
    plural = part is not None and part.endswith("s")
    returned = (
        f"{what} returned" if part is None else f"{what}: your {part} {'are' if plural else 'is'}"
    )
    if value is None:
        if part is None:
            raise Mistake(
                f"{what} returned None; did you forget the `return` statement?", "returned_none"
            )
        raise Mistake(f"{returned} None; did you forget to compute or return it?", "returned_none")
    if isinstance(value, tuple):
        raise Mistake(f"{returned} a tuple of {len(value)}; it should be one array", "tuple")
    if is_complex(value) or (
        isinstance(value, list) and any(is_complex(np.asarray(v)) for v in value[:1000])
    ):
        raise complex_mistake(returned)
    try:
        arr = np.asarray(value, dtype=float)
    except OverflowError:  # an int beyond any float, 10**400
        raise Mistake(
            f"{returned} a number too large for a float (over 1.8e308)", "nan_or_inf"
        ) from None
    except (TypeError, ValueError):
        raise Mistake(
            f"{returned} a {type_name(value)}, which is not an array of numbers", "not_numbers"
        ) from None
    if arr.shape != expected_shape:
        has = "have" if plural else "has"
        has = f"{what} returned shape" if part is None else f"{what}: your {part} {has} shape"
        message = f"{has} {arr.shape}; expected {expected_shape}"
        if arr.ndim == 2 and arr.shape[::-1] == expected_shape:
            message += ": it looks transposed"
            raise Mistake(message, "transposed")
        raise Mistake(message, "wrong_shape")
    return arr


def as_result_pair(
    pair: Any, what: str, out_shape: tuple[int, ...], w_shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """An ``(output, weights)`` pair (from :func:`unpack_pair`), each part checked by
    :func:`as_result_array` against its own shape."""
    out, weights = pair
    return (
        as_result_array(out, what, out_shape, part="output"),
        as_result_array(weights, what, w_shape, part="weights"),
    )


_COUNTS = {2: "two", 3: "three", 4: "four"}


def unpack_returns(
    value: Any, what: str, names: tuple[str, ...], wrong_count: str = "returned_one", hint: str = ""
) -> tuple:
    """The learner's ``len(names)`` return values as they came, or a :class:`Mistake`.

    Every exercise that returns several values parses them here: None (no ``return``, id
    ``returned_none``), and one value or the wrong number of them (id ``wrong_count``), each
    told to write ``return <names>``; ``hint`` follows that, e.g. what one of the values means.
    The exercise checks each value further (:func:`as_result_array`).
    """
    returns = ", ".join(names)
    if value is None:
        raise Mistake(f"{what} returned None; did you forget `return {returns}`?", "returned_none")
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        if isinstance(value, (tuple, list)):
            kind = f"{len(value)} values"
        elif isinstance(value, np.ndarray):
            kind = f"one array of shape {value.shape}"
        else:
            kind = f"a {type_name(value)}"
        count = _COUNTS.get(len(names), str(len(names)))
        raise Mistake(
            f"{what} returned {kind}; return {count} values: `return {returns}`{hint}.", wrong_count
        )
    return tuple(value)


def unpack_pair(
    value: Any, what: str, output_shape: tuple[int, ...], weights_shape: tuple[int, ...]
) -> tuple[Any, Any]:
    """The learner's ``(output, weights)`` pair, or a :class:`Mistake` naming the usual slips.

    Recognises None (no ``return``), a single array (only the output, or only the weights, by
    its shape), a tuple of the wrong length and the two values in the wrong order (by their
    shapes). The two values are returned as they came, for the exercise to check further.
    """
    if isinstance(value, np.ndarray) and tuple(output_shape) != tuple(weights_shape):
        names = {tuple(output_shape): "only the output", tuple(weights_shape): "only the weights"}
        if value.shape in names:
            raise Mistake(
                f"{what} returned {names[value.shape]} (shape {value.shape}); return both: "
                "`return output, weights`.",
                "returned_one",
            )
    value = unpack_returns(value, what, ("output", "weights"))
    shapes = (np.shape(value[0]), np.shape(value[1]))
    if tuple(output_shape) != tuple(weights_shape) and shapes == (
        tuple(weights_shape),
        tuple(output_shape),
    ):
        raise Mistake(
            f"{what} returned (weights, output); the order is `output, weights`, like "
            "helpers.scaled_dot_product_attention.",
            "swapped_pair",
        )
    return value[0], value[1]


def raw_softmax(s: np.ndarray, axis: int | tuple[int, ...] | None = -1) -> np.ndarray:
    """Softmax along ``axis`` (an axis, a tuple of axes, or None for all) that lets NaN and inf
    through, silently: what a (wrong) answer's arithmetic returns, to recognise it. Not for the
    learner's own result."""
    with np.errstate(all="ignore"):
        e = np.exp(s - np.max(s, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """Equal within float32-friendly tolerances (NaN anywhere, or complex, counts as not equal)."""
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return False
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def compare(
    got: np.ndarray,
    expected: np.ndarray,
    known_mistakes: dict[str, np.ndarray],
    generic: str,
    name: str | None = None,
) -> None:
    """Raise :class:`Mistake` unless ``got`` matches ``expected``.

    ``known_mistakes`` maps a message (made with :func:`named`, so it carries its id) to what a
    specific wrong implementation returns on the same input; the first one that ``got``
    matches names the mistake. Otherwise NaN/inf and a
    transposed result are recognised before falling back to ``generic``, which is followed by
    the first entry that differs when ``name`` (e.g. ``"PE"``) is given. A complex ``got`` is
    a mistake of its own (id ``complex``), never compared by its real part.
    """
    if np.iscomplexobj(got):
        raise Mistake(
            f"{generic} Your result holds complex numbers; every quantity here is real.",
            "complex",
        )
    if close(got, expected):
        return
    for message, wrong in known_mistakes.items():
        wrong = np.asarray(wrong, dtype=float)
        if wrong.shape == got.shape and np.array_equal(np.isnan(wrong), np.isnan(got)):
            if close(np.nan_to_num(got), np.nan_to_num(wrong)):
                raise Mistake(message)
    if not np.all(np.isfinite(got)):
        raise Mistake(f"{generic} Your result contains NaN or inf.", "nan_or_inf")
    if got.ndim == 2 and got.shape[0] == got.shape[1] and close(got.T, expected):
        raise Mistake(
            f"{generic} Your result looks transposed (rows and columns swapped).", "transposed"
        )
    if name is not None:
        raise Mistake(f"{generic} {first_difference(got, expected, name)}")
    raise Mistake(generic)


def first_difference(got: np.ndarray, expected: np.ndarray, name: str) -> str:
    """'PE[1, 3] is 0.995 in yours, 1 expected.': the first entry (row by row) that differs."""
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    far = ~np.isclose(got, expected, rtol=1e-4, atol=1e-5)
    if not far.any():
        return ""
    index = tuple(int(i) for i in np.argwhere(far)[0])
    a, b = got[index], expected[index]
    digits = 3  # as few digits as show the difference
    while digits < 10 and f"{a:.{digits}g}" == f"{b:.{digits}g}":
        digits += 1
    where = ", ".join(map(str, index))
    return f"{name}[{where}] is {a:.{digits}g} in yours, {b:.{digits}g} expected."
