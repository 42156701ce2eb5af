"""Grade a whole class's notebooks in one command: ``python -m course_grader`` (``make grade``).

    python -m course_grader --submissions SUBMISSIONS --out OUT [--roster CSV] [--points TOML]
    python -m course_grader --submissions SUBMISSIONS --out OUT --students "ada bob"
    python -m course_grader --one NOTEBOOK [--json]

``SUBMISSIONS`` holds one folder per student, ``<student>/<any name>.ipynb`` (as nbgrader and
LMS bulk downloads lay them out). Each notebook runs in its own fresh kernel, in its own
temporary folder holding a copy, with time limits per cell and per notebook (the kernel is
killed), a memory limit and its output dropped, in bubblewrap's sandbox where it can run
(:mod:`._bubblewrap`); several run at once, one kernel per core. The verdicts are the
grader's own, computed in its process: the checks draw their cases and judge the outputs there,
and only the student's functions run in the kernel (:mod:`._remote` here, :mod:`._runner` in
the kernel, :mod:`._wire` between them: plain values, never pickles).

The grader is a pipeline of stages (:mod:`._cli`: find → recognise → run → collect →
results) and a list of writers (:mod:`._writers`), each a function of the class's results
(:mod:`._results`, totals computed once). ``OUT`` receives ``grades.csv``
(``student,lesson,exercise,status,mistake,message``), ``scores.csv`` (:mod:`._points`),
``lms/canvas.csv`` and ``lms/moodle.csv`` (:mod:`._roster`), ``similarity.csv``
(:mod:`._similarity`), ``feedback/<student>.md`` and ``report.html``, and ``.grade/`` (the
cache, :mod:`._cache`, and the results kept for ``--students`` regrades). ``--one`` grades a
single notebook (:mod:`._one`), for GitHub Classroom or a JupyterHub. See docs/INSTRUCTORS.md.

This package's ``__init__`` imports nothing heavy: the notebook's kernel imports
:mod:`helpers.checks.grading` from it.
"""

STATUSES = ("correct", "not_yet", "not_attempted", "error", "timeout", "missing")
COLUMNS = ("student", "lesson", "exercise", "status", "mistake", "message")


def main(argv: list[str] | None = None) -> int:
    """The command line (see ``python -m course_grader --help``)."""
    from ._cli import main as cli_main

    return cli_main(argv)
