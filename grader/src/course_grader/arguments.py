"""``python -m course_grader``'s command line: every option, with its help and its checks."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path


def _bytes(text: str) -> int | None:
    """'4G', '512M', '0' (no limit) as a number of bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (examples: 4G, 512M, 0)")
    value = float(match.group(1)) * 1024 ** " KMG".index((match.group(2) or " ").upper())
    return int(value) or None


def _seconds(limit: float):
    """A float type for argparse that must lie in (0, limit) seconds."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not 0 < value < limit:
            raise argparse.ArgumentTypeError(
                f"{value:g} s: give more than 0 and less than {limit:g}"
            )
        return value

    return parse


def names(text: str) -> list[str]:
    """'ada bob,cy' → ['ada', 'bob', 'cy'] (--students, --lesson)."""
    return [n for n in re.split(r"[\s,]+", text) if n]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m course_grader",
        description="Grade every student's notebooks: SUBMISSIONS/<student>/<any name>.ipynb. "
        "Writes OUT/grades.csv, scores.csv, lms/canvas.csv, lms/moodle.csv, similarity.csv, "
        "feedback/<student>.md and report.html. Or grade one notebook: --one NOTEBOOK.",
    )
    p.add_argument("--submissions", type=Path, help="one folder per student")
    p.add_argument(
        "--from-canvas",
        type=Path,
        metavar="ZIP",
        help="Canvas's 'Download Submissions' zip: sorted into OUT/submissions/<student>/ and "
        "graded; its late marks read, a feedback zip written for Canvas's re-upload",
    )
    p.add_argument(
        "--from-moodle",
        type=Path,
        metavar="ZIP",
        help="Moodle's 'Download all submissions' zip: as --from-canvas, for Moodle",
    )
    p.add_argument("--out", type=Path, help="where the reports go")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="kernels at once")
    p.add_argument("--cell-timeout", type=_seconds(86400), default=60.0, help="seconds per cell")
    p.add_argument(
        "--notebook-timeout", type=_seconds(86400), default=300.0, help="seconds per notebook"
    )
    p.add_argument(
        "--check-time-limit",
        type=_seconds(3600),  # the checks' own bound (helpers.checks.record)
        default=5.0,
        help="seconds for one call of a student's function inside a check",
    )
    p.add_argument(
        "--memory-limit", type=_bytes, default=4 * 2**30, help="per kernel, e.g. 4G; 0: none"
    )
    p.add_argument(
        "--lessons", nargs="*", default=None, help="grade these lessons (default: found)"
    )
    p.add_argument(
        "--students",
        nargs="+",
        default=None,
        help="grade only these folders ('ada bob') and merge their rows into what OUT holds",
    )
    p.add_argument("--points", type=Path, help="a TOML file of points per exercise id")
    p.add_argument(
        "--points-table", action="store_true", help="print the default points as TOML, exit"
    )
    p.add_argument(
        "--roster",
        type=Path,
        help="CSV: student,name,id,sis_user_id,sis_login_id,section,email (for the LMS files)",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="run every notebook, even unchanged ones"
    )
    _one_notebook_options(p)
    return p


def _one_notebook_options(p: argparse.ArgumentParser) -> None:
    """--one, --gradescope and what goes with them; --no-sandbox and --quiet."""
    p.add_argument("--one", type=Path, metavar="NOTEBOOK", help="grade this one notebook")
    p.add_argument("--json", action="store_true", help="with --one: print JSON")
    p.add_argument(
        "--student", help="with --one: whose notebook (seeds the draws; default: its folder)"
    )
    p.add_argument(
        "--github",
        action="store_true",
        help="with --one: also write the points to $GITHUB_STEP_SUMMARY and, for GitHub "
        "Classroom's reporter, a 'result' to $GITHUB_OUTPUT",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the students' kernels outside bubblewrap's sandbox (only for notebooks you "
        "trust: they can then read and write what you can)",
    )
    p.add_argument(
        "--gradescope",
        type=Path,
        metavar="ROOT",
        help="grade the one submission of Gradescope's layout under ROOT (/autograder) into "
        "ROOT/results/results.json (make gradescope builds the autograder that runs this)",
    )
    p.add_argument(
        "--lesson", help="with --gradescope: the assignment's lesson(s), two digits ('03 04')"
    )
    p.add_argument(
        "--visibility",
        choices=("visible", "hidden", "after_due_date", "after_published"),
        default="visible",
        help="with --gradescope: when students see the exercises' results (default: visible)",
    )
    p.add_argument(
        "--prediction-visibility",
        choices=("visible", "hidden", "after_due_date", "after_published"),
        default="after_due_date",
        help="with --gradescope: when students see the predictions' results, which give the "
        "answer (default: after_due_date)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
