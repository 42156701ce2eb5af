"""``python -m helpers.grade --submissions DIR --out DIR`` (or ``--one NOTEBOOK``)."""

import sys

# nbformat validates notebooks with jsonschema, which imports its optional IRI format checker,
# rfc3987_syntax, when installed; that one builds a grammar at import: 3-5 s measured on this
# machine, against 0.6 s for all of nbformat without it. The notebook schema uses no IRI
# format, so the grader's own process (only this one: not the kernels, not a caller importing
# helpers.grade) goes without it. A rerun after one late notebook pays this import.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)

from . import main  # noqa: E402

sys.exit(main())
