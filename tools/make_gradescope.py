"""Build a Gradescope autograder for one or more lessons: build/gradescope-autograder-*.zip.

    python tools/make_gradescope.py --lesson "03 04" [--points points.toml]
        [--visibility visible] [--prediction-visibility after_due_date] [--out PATH]

(``make gradescope LESSON="03 04"``.) Upload the zip as the assignment's autograder
(Programming Assignment, "Zip file upload"); it prints the settings to choose. At its root, as
Gradescope's specification asks:

* ``setup.sh``, run once when Gradescope builds the image: Python 3.11+, bubblewrap, and a venv
  with the course's ``helpers`` and its grader, at requirements.txt's versions
  (``constraints.txt``);
* ``run_autograder``, run for each submission: ``python -m course_grader --gradescope``, which
  grades the notebook in ``/autograder/submission`` with the course's own grader and writes
  ``/autograder/results/results.json``, one test per exercise and prediction of each lesson
  (course_grader.gradescope);
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
from course_grader.pipeline.points import PointsError, fmt, load_points
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


def maximum(lessons: list[str], points: Path | None) -> str:
    """The lessons' maximum score under ``points`` (the default scheme without it): extra
    credit adds to a student's score, not to this."""
    scheme = load_points(points)
    return fmt(sum(scheme.lesson_max(lesson) for lesson in lessons))


def lessons_of(text: str) -> list[str]:
    """'3 04,5' → ['03', '04', '05'], each known and once, in order; SystemExit otherwise."""
    lessons = [n.zfill(2) if n.isdigit() else n for n in text.replace(",", " ").split()]
    known = known_lessons()
    wrong = [n for n in lessons if n not in known]
    if not lessons or wrong:
        raise SystemExit(f"--lesson {text!r}: the lessons with exercises are {', '.join(known)}")
    return sorted(set(lessons))


def build(lessons: list[str] | str, points: Path | None, visibility: str, out: Path,
          prediction_visibility: str = "after_due_date") -> Path:  # fmt: skip
    lessons = lessons_of(lessons if isinstance(lessons, str) else " ".join(lessons))
    for name, value in (("--visibility", visibility),
                        ("--prediction-visibility", prediction_visibility)):  # fmt: skip
        if value not in VISIBILITIES:
            raise SystemExit(f"{name} {value!r}: one of {', '.join(VISIBILITIES)}")
    if points is not None:
        # The same check the grader makes, now rather than on the first student's submission.
        try:
            load_points(points)
        except PointsError as problem:
            raise SystemExit(str(problem)) from None
    fill = {
        "@LESSON@": " ".join(lessons),
        "@VISIBILITY@": visibility,
        "@PREDICTION_VISIBILITY@": prediction_visibility,
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


def checklist(lessons: list[str], points: Path | None, built: Path) -> str:
    """What to choose in Gradescope's settings for this autograder, in order."""
    names = ", ".join(f"{lesson}_*.ipynb" for lesson in lessons)
    return "\n".join(
        [
            f"Gradescope, for lesson(s) {' '.join(lessons)}:",
            "  1. Create assignment → Programming Assignment; Autograder points: "
            f"{maximum(lessons, points)} (★★★ challenges are extra credit unless the points file "
            "counts them)",
            "  2. Configure Autograder → Zip file upload: " + str(built),
            "     Base image: Ubuntu 22.04 or 24.04 (Python 3.11+ is installed if missing)",
            # Measured: grading each lesson's solution notebook with --one, the summed resident
            # memory of the grader and its kernel peaked under 0.7 GB (lesson 10, the largest).
            "     Memory: 3 GB (grading the heaviest lesson peaks under 1 GB); timeout: "
            f"{max(10, 6 * len(lessons))} minutes (the grader stops a notebook at 5 minutes)",
            "  3. Settings: Late submissions as your term allows (a [late] table in the points "
            "file takes a share off; Gradescope's own due date is read if the file gives none)",
            f"  4. Students upload: their notebook(s) as JupyterLab saves them ({names}); "
            "File → Download, not a PDF",
            "  5. Predictions' results show after the due date (their output gives the answer); "
            "exercises' at once",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", required=True, help="the assignment's lesson(s): '03 04'")
    parser.add_argument("--points", type=Path, help="the points and policy (TOML; make grade's)")
    parser.add_argument("--visibility", default="visible", help=", ".join(VISIBILITIES))
    parser.add_argument(
        "--prediction-visibility",
        default="after_due_date",
        help="when predictions' results show: " + ", ".join(VISIBILITIES),
    )
    parser.add_argument(
        "--out", type=Path, help="the zip (default build/gradescope-autograder-LESSONS.zip)"
    )
    args = parser.parse_args(argv)
    lessons = lessons_of(args.lesson)
    out = args.out or ROOT / "build" / f"gradescope-autograder-{'-'.join(lessons)}.zip"
    built = build(lessons, args.points, args.visibility, out.resolve(),
                  args.prediction_visibility)  # fmt: skip
    with zipfile.ZipFile(built) as archive:
        count = len(archive.namelist())
    print(f"wrote {built}: {count} files, {built.stat().st_size // 1024} KiB "
          "(docs/INSTRUCTORS.md, 'Gradescope')")  # fmt: skip
    print(checklist(lessons, args.points, built))
    return 0


if __name__ == "__main__":
    sys.exit(main())
