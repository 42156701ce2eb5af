"""Build one lesson's Gradescope autograder: build/gradescope-autograder-LESSON.zip.

    python tools/make_gradescope.py --lesson 03 [--points points.toml] [--visibility visible]
                                    [--out PATH]

(``make gradescope LESSON=03``.) Upload the zip as the assignment's autograder (Programming
Assignment, "Zip file upload"). At its root, as Gradescope's specification asks:

* ``setup.sh``, run once when Gradescope builds the image: Python 3.11+, bubblewrap, and a venv
  with the course's ``helpers`` and its grader, at requirements.txt's versions
  (``constraints.txt``);
* ``run_autograder``, run for each submission: ``python -m course_grader --gradescope``, which
  grades the notebook in ``/autograder/submission`` with the course's own grader and writes
  ``/autograder/results/results.json``, one test per exercise (course_grader.gradescope);
* ``course/`` (pyproject.toml, the licences, src/helpers/) and ``grader/`` (pyproject.toml,
  src/course_grader/), as git tracks them; ``points.toml`` when ``--points`` is given.

No solutions, lessons or tests are in it. The points are checked here, when it is built.
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from pathlib import Path

from course_grader.pipeline.grading import known_lessons
from course_grader.pipeline.points import PointsError, fmt, lesson_max, load_points
from learner_copy import tracked

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "grader" / "gradescope"
COURSE_FILES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE-CONTENT.md",
                "THIRD_PARTY_NOTICES.md", "src/helpers/")  # fmt: skip
GRADER_FILES = ("grader/pyproject.toml", "grader/LICENSE", "grader/src/course_grader/")
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def _chosen(files: list[str], wanted: tuple[str, ...]) -> list[str]:
    return [
        f for f in files if f in wanted or f.startswith(tuple(w for w in wanted if w[-1] == "/"))
    ]


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # the same bytes each build
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    archive.writestr(info, data)


def maximum(lesson: str, points: Path | None) -> str:
    """The lesson's maximum score under ``points`` (the default table without it)."""
    return fmt(lesson_max(lesson, load_points(points)))


def build(lesson: str, points: Path | None, visibility: str, out: Path) -> Path:
    known = known_lessons()
    if lesson not in known:
        raise SystemExit(f"--lesson {lesson!r}: the lessons with exercises are {', '.join(known)}")
    if visibility not in VISIBILITIES:
        raise SystemExit(f"--visibility {visibility!r}: one of {', '.join(VISIBILITIES)}")
    if points is not None:
        # The same check the grader makes, now rather than on the first student's submission.
        try:
            load_points(points)
        except PointsError as problem:
            raise SystemExit(str(problem)) from None
    fill = {
        "@LESSON@": lesson,
        "@VISIBILITY@": visibility,
        "@POINTS@": '--points "$ROOT/source/points.toml"' if points is not None else "",
    }
    files = tracked()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for script in ("setup.sh", "run_autograder"):
            text = (TEMPLATES / script).read_text(encoding="utf-8")
            for key, value in fill.items():
                text = text.replace(key, value)
            _add(archive, script, text.replace(" \n", "\n").encode(), executable=True)
        pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#")]  # fmt: skip
        _add(archive, "constraints.txt", ("\n".join(pins) + "\n").encode())
        for name in _chosen(files, COURSE_FILES):
            _add(archive, f"course/{name}", (ROOT / name).read_bytes())
        for name in _chosen(files, GRADER_FILES):
            _add(archive, name, (ROOT / name).read_bytes())
        if points is not None:
            _add(archive, "points.toml", Path(points).read_bytes())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", required=True, help="the assignment's lesson: two digits")
    parser.add_argument("--points", type=Path, help="points per exercise (TOML; make grade's)")
    parser.add_argument("--visibility", default="visible", help=", ".join(VISIBILITIES))
    parser.add_argument(
        "--out", type=Path, help="the zip (default build/gradescope-autograder-LESSON.zip)"
    )
    args = parser.parse_args(argv)
    lesson = args.lesson.zfill(2) if args.lesson.isdigit() else args.lesson
    out = args.out or ROOT / "build" / f"gradescope-autograder-{lesson}.zip"
    built = build(lesson, args.points, args.visibility, out.resolve())
    with zipfile.ZipFile(built) as archive:
        count = len(archive.namelist())
    print(
        f"wrote {built}: {count} files, {built.stat().st_size // 1024} KiB; upload it as the "
        f"autograder of the lesson {lesson} assignment (docs/INSTRUCTORS.md, 'Gradescope')\n"
        f"set the assignment's Autograder points to {maximum(lesson, args.points)}: lesson "
        f"{lesson}'s maximum"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
