"""What crosses from a student's kernel to the grader, the kernel's side: plain values, in a form
that runs no code (the grader reads them back with ``course_grader.isolation.wire``, which
checks them).

The grader reads what a student's function returned (through :func:`helpers.checks.grading.serve`,
inside the student's kernel) from two files the kernel writes: a JSON document and an ``.npz``
of arrays. Neither is a pickle: ``json.loads`` and ``np.load(allow_pickle=False)`` build
numbers, strings, lists and numeric arrays, never objects of the writer's choosing. What may
cross:

* ``None``, ``bool``, ``int``, ``float`` (``nan`` and ``inf`` too), ``str``;
* NumPy arrays and scalars of a numeric, boolean or string dtype (kept as they were: a
  ``float32`` array stays one, a ``np.float64`` stays a scalar, not a 0-d array);
* tuples, lists and dicts with ``str`` keys of these, nested at most :data:`MAX_DEPTH` deep.

Anything else the function returned (a generator, an object of its own class) crosses as an
:class:`Opaque` that names its type, so a check can say what came back. The kernel's side
(:func:`encode`) is student territory and may write anything at all: the grader's ``decode``
checks the sizes (:data:`MAX_BYTES` in all, :data:`MAX_ITEMS` values), the structure and the
dtypes, and refuses anything else.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

MAX_BYTES = 64 * 2**20  # the arrays, stored and as decoded (the largest honest reply: < 1 MB)
MAX_JSON = 4 * 2**20  # the JSON document (it holds the structure; the arrays are in the .npz)
MAX_ITEMS = 100_000  # values in the JSON tree
MAX_ARRAYS = 1_000  # entries in the .npz
MAX_DEPTH = 20
MAX_TEXT = 10_000  # characters of one string
DTYPE_KINDS = "biufcUS"  # bool, ints, floats, complex (a check names it), str, bytes


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)[:100]
    except Exception:
        return "object"


def encode(value: Any) -> tuple[str, dict[str, np.ndarray]]:
    """``(json_text, arrays)`` for ``value`` (the kernel's side; never raises on odd values)."""
    arrays: dict[str, np.ndarray] = {}
    count = [0]

    def walk(v: Any, depth: int) -> Any:
        count[0] += 1
        if depth > MAX_DEPTH or count[0] > MAX_ITEMS:
            return {"t": "opaque", "type": "nested too deep or too large"}
        # NumPy first: np.float64 is also a Python float.
        if isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype.kind in DTYPE_KINDS:
            key = f"a{len(arrays)}"
            arrays[key] = np.asarray(v)
            return {"t": "array" if isinstance(v, np.ndarray) else "scalar", "k": key}
        if v is None or isinstance(v, (bool, str)):
            return v if not isinstance(v, str) else {"t": "str", "v": v[:MAX_TEXT]}
        if isinstance(v, int):  # bool is handled above
            return {"t": "int", "v": str(int(v))} if abs(v) > 2**53 else int(v)
        if isinstance(v, float):
            return {"t": "float", "v": repr(float(v))}
        if isinstance(v, (tuple, list)):  # a named tuple crosses as a tuple
            kind = "tuple" if isinstance(v, tuple) else "list"
            return {"t": kind, "v": [walk(x, depth + 1) for x in v]}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"t": "dict", "v": {k[:MAX_TEXT]: walk(x, depth + 1) for k, x in v.items()}}
        return {"t": "opaque", "type": _type_name(v)}

    return json.dumps(walk(value, 0), allow_nan=True), arrays


def write(value: Any, stem: str) -> None:
    """Write ``value`` as ``stem.json`` and ``stem.npz`` (the kernel's side)."""
    text, arrays = encode(value)
    np.savez(stem + ".npz", **arrays)
    with open(stem + ".json", "w", encoding="utf-8") as out:
        out.write(text)
