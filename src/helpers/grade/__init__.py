"""Grade a whole class's notebooks in one command: ``python -m helpers.grade`` (``make grade``).

    python -m helpers.grade --submissions SUBMISSIONS --out OUT [--roster CSV] [--points TOML]
    python -m helpers.grade --submissions SUBMISSIONS --out OUT --students "ada bob"
    python -m helpers.grade --one NOTEBOOK [--json]

``SUBMISSIONS`` holds one folder per student, ``<student>/<any name>.ipynb`` (as nbgrader and
LMS bulk downloads lay them out). Each notebook runs in its own fresh kernel, in its own
temporary folder holding a copy, with time limits per cell and per notebook (the kernel is
killed), a memory limit and its output dropped; several run at once, one kernel per core.
The results come from the checks themselves (each check leaves a record, with its exercise id
and mistake id, when ``HELPERS_GRADE_LOG`` is set: :mod:`helpers.checks._record`), never from
their messages.

The grader is a pipeline of stages (:mod:`._cli`: find → recognise → run → collect →
results) and a list of writers (:mod:`._writers`), each a function of the class's results
(:mod:`._results`, totals computed once). ``OUT`` receives ``grades.csv``
(``student,lesson,exercise,status,mistake,message``), ``scores.csv`` (:mod:`._points`),
``lms/canvas.csv`` and ``lms/moodle.csv`` (:mod:`._roster`), ``similarity.csv``
(:mod:`._similarity`), ``feedback/<student>.md`` and ``report.html``, and ``.grade/`` (the
cache, :mod:`._cache`, and the results kept for ``--students`` regrades). ``--one`` grades a
single notebook (:mod:`._one`), for GitHub Classroom or a JupyterHub. See docs/INSTRUCTORS.md.

This package's ``__init__`` imports nothing heavy: the notebook's kernel imports
:mod:`helpers.grade._kernel` from it.
"""

STATUSES = ("correct", "not_yet", "not_attempted", "error", "timeout", "missing")
COLUMNS = ("student", "lesson", "exercise", "status", "mistake", "message")


def main(argv: list[str] | None = None) -> int:
    """The command line (see ``python -m helpers.grade --help``)."""
    from ._cli import main as cli_main

    return cli_main(argv)
