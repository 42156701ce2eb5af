"""What crosses from a student's kernel to the grader, the grader's side: the reply read back
and checked, never unpickled (:func:`decode`).

The kernel writes what a student's function returned with ``helpers.checks.wire.encode`` (through
:func:`helpers.checks.grading.serve`): a JSON document and an ``.npz`` of arrays. That side is
student territory and may write anything at all: :func:`decode` checks the sizes
(``MAX_BYTES`` in all, ``MAX_ITEMS`` values), the structure and the dtypes, and raises
:class:`WireError` on anything else. ``json.loads`` and ``np.load(allow_pickle=False)`` build
numbers, strings, lists and numeric arrays, never objects of the writer's choosing. What may
cross is listed in ``helpers.checks.wire``; anything else arrives as an :class:`Opaque`.
"""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from typing import Any

import numpy as np

from helpers.checks import grading

# The format's limits, as the kernel's side writes them: one definition, in the learner's package.
LIMITS = grading.wire


class WireError(ValueError):
    """What the kernel wrote is not a value the grader accepts."""


class Opaque:
    """Stands for a returned object that cannot cross (its type's name, a short description)."""

    def __init__(self, type_name: str, text: str = ""):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<a {self.type_name} returned by the answer>"


def read_file(name: str, dir_fd: int, limit: int) -> bytes:
    """The bytes of regular file ``name`` in the folder ``dir_fd`` (at most ``limit``), never
    through a link: the kernel owns that folder and could put a link to any file there, which
    the grader, with more rights than the kernel, must not read for it."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def read(stem: str, dir_fd: int) -> Any:
    """The value written as ``stem.json`` and ``stem.npz`` in the folder ``dir_fd`` (the
    grader's side): :func:`decode` of the two files."""
    try:
        text = read_file(stem + ".json", dir_fd, LIMITS.MAX_JSON)
        packed = read_file(stem + ".npz", dir_fd, LIMITS.MAX_BYTES)
    except OSError as missing:
        raise WireError(f"no reply it can read ({type(missing).__name__})") from None
    if len(text) > LIMITS.MAX_JSON or len(packed) > LIMITS.MAX_BYTES:
        raise WireError("the reply is larger than the grader reads")
    return decode(text, packed)


def _arrays(packed: bytes, wanted: set[str]) -> dict[str, np.ndarray]:
    """The ``wanted`` arrays of the archive (the others are never unpacked)."""
    if not wanted:
        return {}
    try:
        archive = zipfile.ZipFile(io.BytesIO(packed))
        infos = archive.infolist()
        if len(infos) > LIMITS.MAX_ARRAYS:
            raise WireError("too many arrays")
        # The sizes as stored in the archive: a small file must not unpack to gigabytes.
        if sum(info.file_size for info in infos if info.filename[:-4] in wanted) > LIMITS.MAX_BYTES:
            raise WireError(f"the arrays unpack to more than {LIMITS.MAX_BYTES // 2**20} MB")
        with np.load(io.BytesIO(packed), allow_pickle=False) as loaded:
            return {key: loaded[key] for key in loaded.files if key in wanted}
    except WireError:
        raise
    except Exception as bad:  # a corrupt archive, an object array (needs pickle), ...
        raise WireError(f"unreadable arrays ({type(bad).__name__})") from None


def _keys(tree) -> set[str]:
    """The array keys a JSON tree refers to; each may be referred to once (one array shared by
    many references would decode to many arrays' worth of memory in the checks)."""
    keys: list[str] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if node.get("t") in ("array", "scalar") and isinstance(node.get("k"), str):
                keys.append(node["k"])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    if len(keys) != len(set(keys)):
        raise WireError("an array referred to twice")
    return set(keys)


def decode(text: bytes | str, packed: bytes) -> Any:
    """The value in ``text`` (JSON) and ``packed`` (``.npz`` bytes); :class:`WireError` if it
    is anything but what :func:`encode` writes."""
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError):
        raise WireError("unreadable JSON") from None
    arrays = _arrays(packed, _keys(tree))
    count = [0]

    def build(node: Any, depth: int) -> Any:
        count[0] += 1
        if depth > LIMITS.MAX_DEPTH + 1 or count[0] > LIMITS.MAX_ITEMS + 1:
            raise WireError("nested too deep or too many values")
        if node is None or isinstance(node, bool) or type(node) is int:
            return node
        if not isinstance(node, dict) or not isinstance(node.get("t"), str):
            raise WireError("not a value the grader writes")
        kind = node["t"]
        if kind in ("str", "float", "int"):
            v = node.get("v")
            if not isinstance(v, str) or len(v) > LIMITS.MAX_TEXT:
                raise WireError(f"a bad {kind}")
            try:
                return v if kind == "str" else (float(v) if kind == "float" else int(v))
            except ValueError:
                raise WireError(f"a bad {kind}") from None
        if kind in ("array", "scalar"):
            array = arrays.get(node.get("k")) if isinstance(node.get("k"), str) else None
            if not isinstance(array, np.ndarray) or array.dtype.kind not in LIMITS.DTYPE_KINDS:
                raise WireError("a missing or unsupported array")
            if kind == "array":
                return array
            if array.ndim:
                raise WireError("a scalar with dimensions")
            return array[()]
        if kind in ("tuple", "list"):
            items = node.get("v")
            if not isinstance(items, list):
                raise WireError(f"a bad {kind}")
            built = [build(x, depth + 1) for x in items]
            return tuple(built) if kind == "tuple" else built
        if kind == "dict":
            items = node.get("v")
            if not isinstance(items, dict):
                raise WireError("a bad dict")
            return {str(k)[: LIMITS.MAX_TEXT]: build(x, depth + 1) for k, x in items.items()}
        if kind == "opaque":
            name = node.get("type")
            return Opaque(name[:100] if isinstance(name, str) else "object")
        raise WireError("not a value the grader writes")

    return build(tree, 0)
