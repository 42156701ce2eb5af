"""A pytest plugin, loaded first (``-p tests.pytest_lazy_imports``, tools/run_tests.py), that
defers one import every pytest process would otherwise pay for at start-up.

nbval imports nbformat, nbformat imports jsonschema, and jsonschema's format checkers import
``rfc3987_syntax`` (installed with jupyter-events' ``jsonschema[format-nongpl]``), which builds
an Earley parser of RFC 3987 at import: 3.0 s of CPU in each of pytest's processes (the
controller and every worker) on the course's 2-core machine, for a checker of the formats
``iri`` and ``iri-reference`` that no notebook schema uses. Here ``rfc3987_syntax`` stands in
for itself until ``is_valid_syntax`` (all jsonschema takes from it) is first called, and the real
module is imported then: every answer is the real parser's.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


def _install() -> None:
    if "rfc3987_syntax" in sys.modules:
        return
    spec = importlib.util.find_spec("rfc3987_syntax")  # finds it without running it
    if spec is None or spec.submodule_search_locations is None:
        return

    def is_valid_syntax(term: str, value: str) -> bool:
        real = importlib.import_module("rfc3987_syntax.syntax_helpers")
        return real.is_valid_syntax(term, value)

    def __getattr__(name: str):  # anything else: the real module's
        return getattr(importlib.import_module("rfc3987_syntax.syntax_helpers"), name)

    stand_in = types.ModuleType("rfc3987_syntax", __doc__)
    stand_in.__path__ = list(spec.submodule_search_locations)  # its submodules are the real ones
    stand_in.__spec__ = spec
    stand_in.is_valid_syntax = is_valid_syntax
    stand_in.__getattr__ = __getattr__
    sys.modules["rfc3987_syntax"] = stand_in


_install()
