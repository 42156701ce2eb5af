"""Grade a whole class's notebooks in one command: ``python -m course_grader`` (``make grade``).

    python -m course_grader --submissions SUBMISSIONS --out OUT [--roster CSV] [--points TOML]
    python -m course_grader --submissions SUBMISSIONS --out OUT --students "ada bob"
    python -m course_grader --from-canvas ZIP --out OUT      (or --from-moodle ZIP)
    python -m course_grader --one NOTEBOOK [--json]

``SUBMISSIONS`` holds one folder per student, ``<student>/<any name>.ipynb`` (as nbgrader and
LMS bulk downloads lay them out). Each notebook runs in its own fresh kernel, in its own
temporary folder holding a copy, with time limits per cell and per notebook (the kernel is
killed), a memory limit and its output dropped, in bubblewrap's sandbox where it can run;
several run at once, one kernel per core. The verdicts are the grader's own, computed in its
process: the checks draw their cases and judge the outputs there, and only the student's
functions run in the kernel (plain values between them, never pickles).

Three layers, each importing only those below it:

* the commands: :mod:`.cli` (a class: find → recognise → run → collect → results → writers;
  its options in :mod:`.arguments`),
  :mod:`.one` (one notebook, for GitHub Classroom or a JupyterHub) and :mod:`.gradescope`;
* :mod:`.outputs`: what ``OUT`` receives, each a function of the class's results
  (:mod:`.outputs.results`, totals computed once): ``grades.csv``
  (``student,lesson,exercise,status,mistake,message``), ``scores.csv``, ``lms/canvas.csv`` and
  ``lms/moodle.csv``, ``similarity.csv``, ``feedback/<student>.md`` and ``report.html``;
* :mod:`.pipeline`: the stages' own data: the submissions and their lessons, the grade rows,
  points, the roster, the cache of unchanged notebooks (``OUT/.grade/``), progress;
* :mod:`.isolation`: running one notebook apart from everything else: the kernel, its
  sandbox (bubblewrap, a seccomp filter, a control group), and the grader's own checks
  of the answers across the kernel's wire.

See docs/INSTRUCTORS.md.

This package's ``__init__`` imports nothing heavy: the notebook's kernel imports
:mod:`helpers.checks.grading` from it.
"""

STATUSES = ("correct", "not_yet", "not_attempted", "error", "timeout", "missing")
COLUMNS = ("student", "lesson", "exercise", "status", "mistake", "message")


def main(argv: list[str] | None = None) -> int:
    """The command line (see ``python -m course_grader --help``)."""
    from .cli import main as cli_main

    return cli_main(argv)
