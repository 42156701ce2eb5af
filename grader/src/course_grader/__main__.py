"""``python -m course_grader --submissions DIR --out DIR`` (or ``--one NOTEBOOK``)."""

import sys

# nbformat validates notebooks with fastjsonschema but imports jsonschema too, and jsonschema
# imports every optional format checker that is installed: rfc3987_syntax builds a grammar at
# import (3-5 s measured on this machine, against 0.6 s for all of nbformat without it), and
# isoduration (with arrow), rfc3986/rfc3339 validators, idna, webcolors, uri_template, fqdn and
# jsonpointer cost 0.1-0.4 s more under load. The notebook schema uses no "format" keyword, so
# the grader's own process (only this one: not the kernels, not a caller importing
# course_grader) goes without them: each is then skipped by jsonschema's own
# ``suppress(ImportError)``. A rerun after one late notebook pays nbformat's import.
_FORMAT_CHECKERS = (
    "rfc3987_syntax",
    "rfc3987",
    "rfc3986_validator",
    "rfc3339_validator",
    "isoduration",
    "idna",
    "webcolors",
    "uri_template",
    "fqdn",
    "jsonpointer",
)
if "jsonschema" not in sys.modules:
    for _name in _FORMAT_CHECKERS:
        sys.modules.setdefault(_name, None)

from . import main  # noqa: E402

sys.exit(main())
