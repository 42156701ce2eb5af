"""What a run of one notebook gave, kept in ``OUT/.grade/cache/`` so an unchanged notebook is
not run again (``--no-cache`` forces every run).

An entry is found by a key made of the notebook's sha256 and the code digest (the checks in
``src/helpers/`` and this grader: any change in either reruns everything), and also of what else
the rows depend on: the student's folder name (it seeds the checks' draws), the notebook's path
below that folder (messages name it) and the limits (messages quote them). Reusing an entry
gives the rows the run gave, byte for byte.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from ..isolation.sandbox import Limits


def digested_sources() -> list[tuple[Path, list[Path]]]:
    """What :func:`code_digest` reads: each package's folder (``helpers``, whose checks give the
    verdicts, and the whole grader, every layer) with its Python sources, in order."""
    import course_grader
    import helpers

    roots = (Path(helpers.__file__).resolve().parent, Path(course_grader.__file__).resolve().parent)
    return [(root, sorted(root.rglob("*.py"))) for root in roots]


@functools.cache
def code_digest() -> str:
    """sha256 of the sources :func:`digested_sources` lists, path and bytes of each."""
    digest = hashlib.sha256()
    for root, paths in digested_sources():
        digest.update(root.name.encode() + b"\0")
        for path in paths:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def key(notebook_sha256: str, student: str, name: str, limits: Limits) -> str:
    parts = [notebook_sha256, code_digest(), student, name, json.dumps(asdict(limits))]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


class Cache:
    def __init__(self, out: Path, enabled: bool = True):
        self.folder = out / ".grade" / "cache"
        self.enabled = enabled
        self.hits = 0

    def get(self, entry_key: str) -> dict | None:
        if not self.enabled:
            return None
        path = self.folder / f"{entry_key}.json"
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        self.hits += 1
        return entry

    def put(self, entry_key: str, entry: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{entry_key}.json"
        temporary = path.with_suffix(".tmp")
        # ASCII: a folder name the file system gave as undecodable bytes (surrogate escapes)
        # is kept, escaped, and read back the same.
        temporary.write_text(json.dumps(entry), encoding="ascii")
        temporary.replace(path)
