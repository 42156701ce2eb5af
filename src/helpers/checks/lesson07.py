"""Lesson 07 exercise: predict the memory of the attention weights.

``score_matrix_bytes(n, h, batch, dtype)`` returns the number of bytes needed to store the
attention weights of one layer for a batch: ``batch * h * n * n * itemsize``, where
``itemsize`` is the size of one number of ``dtype`` in bytes (``np.dtype(dtype).itemsize``:
2 for float16, 4 for float32, 8 for float64). ``dtype`` may be given as a NumPy type
(``np.float32``), a dtype or a name (``"float32"``). Any exact integer answer is accepted
(a Python int, a NumPy integer, or a float with no fractional part).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._core import Exercise, Mistake, fresh_rng


def _reference(n, h, batch, dtype):
    itemsize = np.dtype(dtype).itemsize  # bytes per number: 2, 4 or 8
    return batch * h * n * n * itemsize  # one (n, n) matrix per head per sequence


def _as_number(value, what: str) -> int | float:
    """The learner's return value as an int (exact) or a float, or a Mistake saying why not."""
    if value is None:
        raise Mistake(f"{what} returned None; did you forget the `return` statement?")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise Mistake(
            f"{what} returned a {type(value).__name__}; it should return one number of bytes"
        )
    if not np.isfinite(float(value)):
        raise Mistake(f"{what} returned {value!r}; it should return a whole number of bytes")
    return int(value) if float(value) == int(value) else float(value)


def _mistakes(n, h, batch, itemsize):
    """What each catalogued wrong formula returns, with its message."""
    return [
        (batch * n * n * itemsize, "you forgot the heads: every head has its own (n, n) matrix"),
        (h * n * n * itemsize, "you forgot the batch: every sequence has its own matrices"),
        (n * n * itemsize, "you forgot both the heads and the batch"),
        (batch * h * n * itemsize, "the score matrix is n x n: use n * n (n squared), not n"),
        (batch * h * n * n * itemsize * 8, "that is bits, not bytes: 1 byte = 8 bits"),
        (
            batch * h * n * n * 4,
            "the bytes per number depend on dtype: use np.dtype(dtype)"
            ".itemsize (2 for float16, 4 for float32, 8 for float64), not always 4",
        ),
        (
            batch * h * n * n * 8,
            "the bytes per number depend on dtype: use np.dtype(dtype)"
            ".itemsize (2 for float16, 4 for float32, 8 for float64), not always 8",
        ),
        (
            batch * h * n * n,
            "you counted numbers, not bytes: multiply by the bytes per number, "
            "np.dtype(dtype).itemsize",
        ),
        (batch * h * n * n * itemsize / 2**20, "that looks like MiB; return plain bytes"),
        (batch * h * n * n * itemsize / 1e6, "that looks like MB; return plain bytes"),
        (batch * h * n * n * itemsize / 2**30, "that looks like GiB; return plain bytes"),
        (batch * h * n * n * itemsize / 1e9, "that looks like GB; return plain bytes"),
    ]


def _cases(rng):
    """Fresh sizes on which the catalogued mistakes all give different numbers.

    h != batch (forgetting one differs from forgetting the other), n > 16 (n differs from
    h and from the itemsize), and h, batch not in {1, 2, 4, 8} (forgetting the heads would
    otherwise equal counting numbers instead of bytes when h equals the itemsize).
    """
    dtype_forms = [np.float16, "float32", np.dtype(np.float64), np.float32, "float16"]
    allowed = [k for k in range(3, 33) if k not in (4, 8)]
    cases = []
    for dtype in dtype_forms:
        n, h = int(rng.integers(20, 3000)), int(rng.choice([k for k in allowed if k <= 16]))
        batch = int(rng.choice([b for b in allowed if b != h]))
        cases.append((n, h, batch, dtype))
    cases.append((100_000, 1, 1, np.float32))  # the lesson's long context: 40 GB
    return cases


def _grade(call):
    rng = fresh_rng()
    for n, h, batch, dtype in _cases(rng):
        shown = dtype if isinstance(dtype, str) else f"np.{np.dtype(dtype).name}"
        shown = repr(shown) if isinstance(dtype, str) else shown
        what = f"score_matrix_bytes(n={n}, h={h}, batch={batch}, dtype={shown})"
        got = _as_number(call(n, h, batch, dtype), what)
        expected = _reference(n, h, batch, dtype)
        if got == expected:
            continue
        itemsize = np.dtype(dtype).itemsize
        for wrong, message in _mistakes(n, h, batch, itemsize):
            if wrong == expected:  # e.g. "always 4 bytes" is right for float32
                continue
            if got == wrong or (isinstance(wrong, float) and np.isclose(got, wrong, rtol=1e-9)):
                raise Mistake(f"{what} returned {got:,}: {message}. Expected {expected:,}.")
        if isinstance(got, float):
            raise Mistake(
                f"{what} returned {got!r}, which is not a whole number of bytes; bytes come "
                "from counting numbers and multiplying by their size, so no division is needed"
            )
        raise Mistake(
            f"{what} returned {got:,}, expected {expected:,} = batch * h * n * n * itemsize "
            f"= {batch} * {h} * {n} * {n} * {itemsize}."
        )
    return (
        "your byte count matches batch * h * n^2 * itemsize on fresh sizes, for float16, "
        "float32 and float64 given as types, dtypes or names, and for a 100k-token context "
        "(40,000,000,000 bytes for one float32 head)."
    )


score_matrix_bytes = Exercise(
    name="score_matrix_bytes",
    signature="score_matrix_bytes(n, h, batch, dtype)",
    grade=_grade,
    reference=_reference,
    hints=[
        "Count the numbers first: how many attention weights does one head hold for one "
        "sequence of n tokens? Then how many heads, how many sequences?",
        "There are batch * h matrices of n * n weights each. Each weight takes "
        "np.dtype(dtype).itemsize bytes (4 for float32).",
        "return batch * h * n * n * np.dtype(dtype).itemsize",
    ],
)
