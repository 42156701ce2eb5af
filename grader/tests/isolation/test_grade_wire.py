"""What a student's kernel sends the grader (course_grader.isolation.wire): values only,
checked on the way in; and the grader's own check of an answer reached through it
(course_grader.isolation.remote)."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections import namedtuple

import numpy as np
import pytest
from course_grader.isolation import wire as _wire

from helpers.checks import wire as kernel_wire


def _round_trip(value):
    text, arrays = kernel_wire.encode(value)
    packed = io.BytesIO()
    np.savez(packed, **arrays)
    return _wire.decode(text, packed.getvalue())


def test_values_cross_as_they_were():
    Pair = namedtuple("Pair", "a b")
    value = {
        "array32": np.arange(6, dtype=np.float32).reshape(2, 3),
        "scalar": np.float64(2.5),
        "int": 3,
        "big": 2**80,
        "float": float("nan"),
        "inf": -np.inf,
        "bool": True,
        "npbool": np.bool_(False),
        "none": None,
        "text": "héllo",
        "complex": np.array([1 + 2j]),
        "nested": [(1, np.int8(-3)), Pair(np.zeros(2), "x")],
    }
    back = _round_trip(value)
    assert back["array32"].dtype == np.float32 and back["array32"].shape == (2, 3)
    assert isinstance(back["scalar"], np.float64) and back["scalar"] == 2.5
    assert back["int"] == 3 and back["big"] == 2**80 and type(back["big"]) is int
    assert np.isnan(back["float"]) and back["inf"] == -np.inf
    assert back["bool"] is True and isinstance(back["npbool"], np.bool_)
    assert back["none"] is None and back["text"] == "héllo"
    assert back["complex"].dtype.kind == "c"
    first, second = back["nested"]
    assert first == (1, np.int8(-3)) and isinstance(first[1], np.int8)
    assert isinstance(second, tuple) and np.array_equal(second[0], np.zeros(2))


def test_objects_cross_as_their_type_name_only():
    class Mine:
        def __reduce__(self):  # a pickle would run this: nothing here unpickles
            raise AssertionError("unpickled")

    back = _round_trip([Mine(), (x for x in ()), np.array([object()], dtype=object)])
    assert [b.type_name for b in back] == ["Mine", "generator", "ndarray"]
    assert all(isinstance(b, _wire.Opaque) for b in back)


def _packed(**arrays) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


@pytest.mark.parametrize(
    "text, packed",
    [
        ("not json", _packed()),
        (json.dumps({"t": "array", "k": "a0"}), _packed()),  # no such array
        (json.dumps({"t": "scalar", "k": "a0"}), _packed(a0=np.zeros(3))),  # not a scalar
        (json.dumps({"t": "float", "v": 1.5}), _packed()),  # not the writer's form
        (json.dumps({"t": "eval", "v": "__import__('os')"}), _packed()),
        (json.dumps(1.5), _packed()),
        (json.dumps({"t": "array", "k": "a0"}), b"PK\x03\x04 not a zip"),
        (json.dumps({"t": "list", "v": [[]] * 10}), _packed()),  # raw lists are not values
    ],
)
def test_anything_else_is_refused(text, packed):
    with pytest.raises(_wire.WireError):
        _wire.decode(text, packed)


def test_object_arrays_and_pickles_are_refused():
    out = io.BytesIO()
    np.save(out, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a0.npy", out.getvalue())
    with pytest.raises(_wire.WireError):
        _wire.decode(json.dumps({"t": "array", "k": "a0"}), archive.getvalue())
    with pytest.raises(_wire.WireError):
        _wire.decode(pickle.dumps([1, 2]), _packed())


def test_sizes_are_bounded(monkeypatch):
    deep = {"t": "str", "v": "x"}
    for _ in range(_wire.LIMITS.MAX_DEPTH + 5):
        deep = {"t": "list", "v": [deep]}
    with pytest.raises(_wire.WireError):
        _wire.decode(json.dumps(deep), _packed())
    # An archive that says it unpacks to more than the limit (a zip bomb) is not unpacked.
    monkeypatch.setattr(_wire.LIMITS, "MAX_BYTES", 2**20)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("a0.npy", b"\0" * (_wire.LIMITS.MAX_BYTES + 1))
    with pytest.raises(_wire.WireError, match="unpack"):
        _wire.decode(json.dumps({"t": "array", "k": "a0"}), bomb.getvalue())
    longest = _wire.LIMITS.MAX_TEXT
    assert kernel_wire.encode("y" * (longest + 10))[0].count("y") == longest
