"""Where the course's own folder is, for what lives beside the package in a checkout (lesson
09's model cache, the kernel settings ``make setup`` installs): found from pip's record of an
editable install (PEP 610's ``direct_url.json``), never by climbing from a module's file, so
that an installed copy behaves as one.
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path

__all__ = ["course_checkout"]


def course_checkout() -> Path | None:
    """The course's folder when it is installed from it in editable mode (``make setup``,
    ``pip install -e .``), else None (a wheel, ``pip install git+...``, no install at all)."""
    import urllib.parse

    try:
        record = json.loads(metadata.distribution("self-attention-course").read_text(
            "direct_url.json") or "{}")  # fmt: skip
    except (metadata.PackageNotFoundError, ValueError):
        return None
    url = urllib.parse.urlparse(record.get("url", ""))
    if not record.get("dir_info", {}).get("editable") or url.scheme != "file":
        return None
    if os.name == "nt":
        from urllib.request import url2pathname  # Windows drive letters and separators

        return Path(url2pathname(url.path))
    return Path(urllib.parse.unquote(url.path))
