"""Pinned requirements as the tests compare them (requirements.txt, environment.yml)."""

import re


def normalise(name: str) -> str:
    """A package name as PEP 503 compares them: lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_pins(lines: list[str]) -> dict[str, str]:
    """``name==version`` lines (comments, blanks ignored) as {normalised name: version}."""
    pins = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;]+)(?:\s*;.*)?", line)
        assert match, f"not pinned as name==version: {line!r}"
        name = normalise(match.group(1))
        assert name not in pins, f"{name} listed twice"
        pins[name] = match.group(2)
    return pins
