"""The class roster: who the LMS knows, matched to the submission folders by name.

``--roster roster.csv`` (``ROSTER=`` for make) has the columns
``student,name,id,sis_user_id,sis_login_id,section,email``; ``student`` is the name of the
student's submission folder, the others are copied into the LMS files (Canvas: ``name``, ``id``,
``sis_user_id``, ``sis_login_id``, ``section``; Moodle: ``email``). Empty cells are allowed.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("student", "name", "id", "sis_user_id", "sis_login_id", "section", "email")


class RosterError(ValueError):
    """The roster cannot be used (says why)."""


@dataclass(frozen=True)
class Person:
    student: str
    name: str = ""
    id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    email: str = ""


def read_roster(path: Path) -> list[Person]:
    """The roster's people in file order; :class:`RosterError` on a missing column, an empty
    ``student`` cell or a student listed twice."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # Excel writes a BOM
    except FileNotFoundError:
        raise RosterError(f"no such roster file: {path}") from None
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise RosterError(
            f"{path}: no column {', '.join(missing)}; the roster's header is {','.join(COLUMNS)}"
        )
    people, seen = [], set()
    for number, raw in enumerate(reader, start=2):
        row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        if not row["student"]:
            raise RosterError(f"{path}, line {number}: the student (folder name) is empty")
        if row["student"] in seen:
            raise RosterError(f"{path}, line {number}: {row['student']} is listed twice")
        seen.add(row["student"])
        people.append(Person(**{c: row[c] for c in COLUMNS}))
    return people
