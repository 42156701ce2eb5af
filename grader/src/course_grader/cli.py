"""``python -m course_grader``: grade a class (a pipeline of stages), or one notebook (``--one``).

The stages, each a function below: **find** the students' folders and notebooks → **recognise**
each notebook's lesson (or take it, with its rows, from ``OUT``'s cache) → **run** the rest in
sandboxed kernels → **collect** each run's rows and answers → **results** for the class (the
notebook chosen per lesson, missing rows, merged with ``OUT``'s earlier results for a regrade of
``--students``; points, roster and similar answers computed once) → the writers
(:mod:`course_grader.outputs.writers`), each a function of those results.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from pathlib import Path

from .arguments import names as _names
from .arguments import parser
from .isolation.sandbox import Limits, RunOutcome, kernel_config, run_all, run_notebook
from .outputs.flags import flags_for, sandbox_status
from .outputs.results import ClassResults, StudentResults, finish, load_state, save_state
from .outputs.similarity import answer_sources, load_store, save_store
from .outputs.writers import write_all
from .pipeline.cache import Cache, code_digest, file_sha256, key
from .pipeline.grading import (
    Row,
    Submission,
    exercise_names,
    find_submissions,
    known_lessons,
    lesson_items,
    missing_rows,
    recognise,
    rows_for,
    score,
    student_order,
)
from .pipeline.lms import LmsError, from_download, late_not_applied, read_manifest, unpack
from .pipeline.points import Late, PointsError, load_points, points_table_toml
from .pipeline.progress import Progress
from .pipeline.roster import RosterError, read_roster

# ----------------------------------------------------------------------------------------------
# The stages


def find(submissions: Path, only: list[str] | None) -> tuple[list[str], list[Submission], list]:
    """Every student folder, and the notebooks (of ``only``'s folders, if given), and notes.
    A folder with no student folder, or no notebook in any, is an error that says what the
    grader expects (grading nobody and exiting 0 would look like a class with no answers)."""
    folders, found, notes = find_submissions(submissions)
    if not folders:
        flat = sorted(p.name for p in submissions.glob("*.ipynb"))
        shown = ", ".join(flat[:3]) + (", ..." if len(flat) > 3 else "")
        raise SystemExit(
            f"no student folder in {submissions}: the grader expects one folder per student, "
            f"{submissions}/<student>/<notebook>.ipynb."
            + (
                f" It holds {len(flat)} notebook(s) directly ({shown}): a Canvas or Moodle "
                "download is one flat folder of files; sort it into one folder per student "
                "(docs/INSTRUCTORS.md, 'Grades into Canvas or Moodle')."
                if flat
                else ""
            )
        )
    if not found and only is None:
        raise SystemExit(
            f"{len(folders)} student folder(s) in {submissions}, but no notebook (.ipynb) in any "
            "of them: is this the folder the students' notebooks were collected into?"
        )
    if only is not None:
        found = [s for s in found if s.student in only]
    return folders, found, notes


def recognise_all(found: list[Submission], cache: Cache, limits: Limits) -> None:
    """Each notebook's lesson; an unchanged notebook's rows, outcome and answers come from the
    cache (and it is not even parsed)."""
    for submission in found:
        submission.sha256 = file_sha256(submission.path)
        entry = cache.get(key(submission.sha256, submission.student, submission.name, limits))
        if entry is not None:
            submission.lesson = entry["lesson"]
            submission.recognised_by = entry["recognised_by"]
            submission.unreadable = entry["unreadable"]
            submission.rows = [Row(*r) for r in entry["rows"]]
            submission.answers = entry["answers"]
            submission.flags = entry.get("flags", [])
            submission.outcome = RunOutcome(**entry["outcome"]) if entry["outcome"] else None
            submission.cached = True
        else:
            recognise(submission)


def run(
    to_run: list[Submission],
    jobs: int,
    limits: Limits,
    progress: Progress,
    collect_one,
) -> None:
    """Run each notebook in its own kernel, ``jobs`` at once; ``collect_one`` after each."""
    config = kernel_config()

    async def run_one(submission: Submission) -> None:
        try:
            submission.outcome = await run_notebook(
                submission.path,
                submission.nb,
                lesson_items(submission.lesson),
                limits,
                config,
                submission.student,
            )
            collect_one(submission)
        except Exception as failure:  # one notebook must never stop the class's grading
            why = f"the grader could not run it ({type(failure).__name__})"
            submission.outcome = RunOutcome(stopped="failed_to_start", detail=why)
            submission.answers = {}
            try:
                collect_one(submission)
            except Exception:  # its cells themselves break the collection: drop them
                submission.nb = None
                submission.unreadable = submission.unreadable or type(failure).__name__
                collect_one(submission)
        counts: dict[str, int] = {}
        for row in submission.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        summary = ", ".join(f"{v} {k}" for k, v in counts.items())
        ended = f", {submission.outcome.stopped}" if submission.outcome.stopped else ""
        progress.step(
            f"{submission.student}/{submission.name} (lesson {submission.lesson}): "
            f"{summary}{ended} [{submission.outcome.seconds:.1f} s]"
        )

    asyncio.run(run_all(to_run, jobs, run_one))


def collect(submission: Submission, limits: Limits, cache: Cache) -> None:
    """A run's (or an unreadable file's) rows and the answers' code, into the cache."""
    submission.rows = rows_for(submission, limits)
    if submission.outcome is not None:
        submission.flags = flags_for(submission)
    if submission.nb is not None:
        cells = [c.source for c in submission.nb.cells if c.cell_type == "code"]
        submission.answers = answer_sources(cells, exercise_names(submission.lesson))
    outcome = submission.outcome
    entry = {
        "lesson": submission.lesson,
        "recognised_by": submission.recognised_by,
        "unreadable": submission.unreadable,
        "rows": [list(r.as_tuple()) for r in submission.rows],
        "answers": submission.answers,
        "flags": submission.flags,
        "outcome": None
        if outcome is None
        else {
            "stopped": outcome.stopped,
            "stopped_at": outcome.stopped_at,
            "detail": outcome.detail,
            "output_bytes": outcome.output_bytes,
            "seconds": outcome.seconds,
        },
    }
    cache.put(key(submission.sha256, submission.student, submission.name, limits), entry)


def _student_results(
    student: str, found: list[Submission], graded: list[str], known: list[str], limits: Limits
) -> StudentResults:
    """One student's rows (the best notebook per lesson), notes and what needs a look."""
    mine = StudentResults()
    subs = [s for s in found if s.student == student]
    for submission in subs:
        where = f"{student}/{submission.name}"
        if submission.lesson is None:
            why = f"not readable ({submission.unreadable})" if submission.unreadable else ""
            text = f"{where}: no lesson of the course recognised {why}".strip()
            mine.notes.append(f"`{submission.name}`: not graded, {text}")
            mine.attention.append(text)
        elif submission.lesson not in known:
            mine.notes.append(
                f"`{submission.name}` is lesson {submission.lesson}, which has no exercises"
            )
        elif submission.lesson not in graded:
            mine.notes.append(
                f"`{submission.name}` is lesson {submission.lesson}, not graded in this run"
            )
        elif submission.unreadable:
            mine.attention.append(f"{where}: not a readable notebook ({submission.unreadable})")
        outcome = submission.outcome
        if outcome is None or submission.lesson not in graded:
            continue
        mine.notebooks += 1
        if outcome.stopped:
            what = {
                "cell_timeout": f"a cell ran past {limits.cell_seconds:g} s, kernel killed at",
                "notebook_timeout": f"ran past {limits.notebook_seconds:g} s, kernel killed at",
                "died": "the kernel died at",
                "failed_to_start": "the kernel did not start:",
            }[outcome.stopped]
            mine.attention.append(f"{where}: {what} `{outcome.detail}`")
        mine.attention += [f"{where}: {text}" for text in submission.flags]
        if outcome.output_bytes > 10 * 2**20:
            mb = outcome.output_bytes / 2**20
            mine.attention.append(f"{where}: printed {mb:.0f} MB of output (not kept)")
            mine.notes.append(
                f"`{submission.name}` printed {mb:.0f} MB of output; the grader kept none of it"
            )
    for lesson in graded:
        candidates = [s for s in subs if s.lesson == lesson]
        if not candidates:
            mine.rows += missing_rows(
                student, lesson, f"no notebook of lesson {lesson} in {student}/"
            )
            continue
        best = max(candidates, key=lambda s: score(s.rows))  # first of equals: name order
        mine.chosen[lesson] = best.name
        mine.rows += best.rows
        mine.answers.update(best.answers)
        for other in candidates:
            if other is not best:
                mine.notes.append(
                    f"`{other.name}` is also lesson {lesson}; graded `{best.name}`, which "
                    "scored higher (or came first)"
                )
    return mine


def _no_folder(student: str, lessons: list[str]) -> StudentResults:
    why = f"no folder named {student} in the submissions (the roster lists {student})"
    return StudentResults(
        rows=[r for lesson in lessons for r in missing_rows(student, lesson, why)],
        notes=[f"No folder named `{student}` was found among the submissions."],
    )


def _inputs(submissions: Path, out: Path, points: Path | None, roster: Path | None,
            download: tuple[str, Path] | None = None):  # fmt: skip
    """The points, the roster (or None) and the LMS manifest (or None), read and checked
    before anything runs; ``download`` (an LMS and its zip) unpacked into ``submissions``
    once they are; the folders checked too (``--out`` never inside ``--submissions``, which
    is never written)."""
    if out == submissions or submissions in out.parents:
        raise SystemExit("--out must be outside --submissions (the submissions are never written)")
    try:
        scheme = load_points(points)
        people = read_roster(roster) if roster is not None else None
        if download is not None:
            unpack(download[1], submissions, download[0])
        if not submissions.is_dir():
            raise SystemExit(f"no such folder: {submissions}")
        return scheme, people, read_manifest(submissions)
    except (PointsError, RosterError, LmsError) as problem:
        raise SystemExit(str(problem)) from None


def _with_download(table, people, manifest, submissions: Path, say):
    """The points and roster as the LMS download (if any) leaves them, each late-marked
    student's share lost, and the class notes the download gives; a late policy the source
    cannot apply is dropped (not claimed in the feedback) and said."""
    late, unapplied = {}, late_not_applied(table, manifest)
    if unapplied:
        table = dataclasses.replace(table, late=Late())
        if say:
            say(f"Note: {unapplied}")
    notes = [unapplied] if unapplied else []
    if manifest is not None:
        late, people = from_download(manifest, table, people)
        notes += [f"{manifest.lms} download: {why}" for why in manifest.skipped]
        if say:
            skipped = f"; {len(manifest.skipped)} file(s) skipped" if manifest.skipped else ""
            say(f"{manifest.lms.capitalize()} download: {len(manifest.students)} students in "
                f"{submissions}{skipped} (listed in {submissions / '.lms.json'})")  # fmt: skip
    return table, people, late, notes


def grade(
    submissions: Path,
    out: Path,
    limits: Limits,
    jobs: int = 1,
    lessons: list[str] | None = None,
    say=print,
    *,
    students: list[str] | None = None,
    points: Path | None = None,
    roster: Path | None = None,
    use_cache: bool = True,
    progress_stream=None,
    download: tuple[str, Path] | None = None,
) -> ClassResults:
    """Grade the class (or, with ``students``, regrade those and merge) and write every file.
    ``download``: ("canvas" or "moodle", its zip), unpacked into ``submissions`` first."""
    submissions, out = submissions.resolve(), out.resolve()
    start = time.monotonic()
    table, people, manifest = _inputs(submissions, out, points, roster, download)
    table, people, late, download_notes = _with_download(table, people, manifest, submissions, say)
    listed = [p.student for p in people] if people is not None else []

    # find
    folders, found, notes = find(submissions, students)
    previous = load_state(out) if students is not None else None
    if students is not None:
        unknown = [s for s in students if s not in folders and s not in listed]
        if unknown:
            raise SystemExit(f"--students: no folder named {', '.join(unknown)} in {submissions}")
    # recognise
    cache = Cache(out, enabled=use_cache)
    recognise_all(found, cache, limits)
    known = known_lessons()
    graded = _lessons_to_grade(lessons, previous, found, known)
    # run (what the cache does not have), then collect
    fresh = [s for s in found if s.lesson in graded and not s.cached]
    to_run = [s for s in fresh if s.nb is not None]
    for submission in fresh:
        if submission.nb is None:  # unreadable: rows without a run
            collect(submission, limits, cache)
    if say:
        _say_start(say, limits, found, graded, students, folders, to_run, jobs)
    progress = Progress(len(to_run), stream=progress_stream, enabled=bool(say))
    run(to_run, jobs, limits, progress, lambda s: collect(s, limits, cache))

    # results
    results = _class_results(found, folders, notes, graded, known, limits, previous, students,
                             table, people, listed)  # fmt: skip
    results.late, results.manifest = late, manifest
    results.notes += download_notes
    # What an earlier run worked out about the answers (--no-cache: worked out again).
    store = load_store(out, code_digest()) if use_cache else {"digest": code_digest()}
    finish(results, store)
    ran = f"{len(to_run)} notebook(s) run, {cache.hits} unchanged taken from the cache"
    merged = (
        f"; regraded {', '.join(students)} and kept the other students' results"
        if students is not None
        else ""
    )
    results.settings = f"{_settings(limits, jobs)}. {ran}{merged}. " + (
        f"Graded in {time.monotonic() - start:.0f} s."
    )
    # the writers
    write_all(results, out)
    save_state(results, out)
    save_store(store, out)
    if say:
        say(f"Done in {time.monotonic() - start:.1f} s: {len(results.rows)} rows.")
        say(
            f"  {out / 'grades.csv'}\n  {out / 'scores.csv'}\n  {out / 'lms'}/\n"
            f"  {out / 'report.html'}\n  {out / 'feedback'}/"
        )
    return results


def _say_start(say, limits, found, graded, students, folders, to_run, jobs) -> None:
    say(sandbox_status(limits))
    cached = sum(s.cached for s in found if s.lesson in graded)
    who = f"{len(students)} of {len(folders)}" if students is not None else f"{len(folders)}"
    say(
        f"Grading {len(to_run)} notebook(s) of {who} student(s), lesson(s) "
        f"{', '.join(graded) or 'none'}, {max(1, min(jobs, len(to_run)))} at a time"
        + (f"; {cached} unchanged, from the cache" if cached else "")
    )


def _lessons_to_grade(lessons, previous, found, known) -> list[str]:
    """The lessons asked for (``--lessons``), or a regrade's earlier ones, or those the
    notebooks handed in are of; refused if the course has no exercises for one."""
    if lessons:
        graded = sorted(set(lessons))
    elif previous is not None:
        graded = list(previous["lessons"])
    else:
        graded = sorted({s.lesson for s in found if s.lesson in known})
    unknown_lessons = set(graded) - set(known)
    if unknown_lessons:
        raise SystemExit(f"no exercises for lesson(s) {', '.join(sorted(unknown_lessons))}")
    return graded


def _class_results(found, folders, notes, graded, known, limits, previous, students, table,
                   people, listed) -> ClassResults:  # fmt: skip
    """Every student's results: those graded now, a regrade's others kept from ``previous``,
    and a roster's students without a folder (missing rows)."""
    graded_now = sorted(
        set(folders) if students is None else set(students) & set(folders), key=student_order
    )
    per_student: dict[str, StudentResults] = {}
    class_notes = list(notes)
    if previous is not None:
        per_student.update(
            {s: r for s, r in previous["students"].items() if s not in (students or [])}
        )
        class_notes = previous["notes"]
    for student in graded_now:
        per_student[student] = _student_results(student, found, graded, known, limits)
    without_folder = [s for s in listed if s not in folders]
    for student in without_folder:
        if student not in per_student or student in (students or []):
            per_student[student] = _no_folder(student, graded)
    return ClassResults(
        students=sorted(per_student, key=student_order),
        lessons=graded,
        per_student=per_student,
        notes=class_notes,
        points=table,
        roster=people,
        without_folder=without_folder,
    )


def _settings(limits: Limits, jobs: int) -> str:
    """The report's footer: the sandbox and the limits the class was graded under."""
    import helpers

    memory = f"{limits.memory_bytes / 2**30:g} GiB" if limits.memory_bytes else "none"
    return (
        f"{sandbox_status(limits)}. "
        f"Limits: {limits.cell_seconds:g} s per cell, {limits.notebook_seconds:g} s per "
        f"notebook, {limits.check_seconds:g} s per call inside a check, memory {memory} per "
        f"kernel; {jobs} kernel(s) at once; the course's version {helpers.__version__}"
    )


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.students is not None:
        args.students = [name for text in args.students for name in _names(text)]
    if args.points_table:
        sys.stdout.write(points_table_toml())
        return 0
    limits = Limits(
        cell_seconds=args.cell_timeout,
        notebook_seconds=args.notebook_timeout,
        check_seconds=args.check_time_limit,
        memory_bytes=args.memory_limit,
        sandbox=not args.no_sandbox,
    )
    if args.gradescope is not None:
        if args.one or args.submissions or args.out or args.students or args.roster:
            p.error("--gradescope grades Gradescope's one submission: no --one, --submissions, "
                    "--out, --students, --roster")  # fmt: skip
        if not args.lesson:
            p.error("--gradescope needs --lesson (the assignment's lesson, e.g. 03)")
        from .gradescope import Visibility
        from .gradescope import main as gradescope_main

        visibility = Visibility(args.visibility, args.prediction_visibility)
        return gradescope_main(args.gradescope, _names(args.lesson), limits, args.points,
                               visibility)  # fmt: skip
    if args.lesson:
        p.error("--lesson goes with --gradescope (to grade some lessons of a class: --lessons)")
    if args.one is not None:
        if args.submissions or args.out or args.students or args.roster:
            p.error("--one grades one notebook: no --submissions, --out, --students, --roster")
        from .one import grade_one

        return grade_one(
            args.one, limits, args.student, args.points, args.json, args.github, args.quiet
        )
    if args.json or args.student or args.github:
        p.error("--json, --student and --github go with --one")
    downloads = [(lms, path) for lms, path in (("canvas", args.from_canvas),
                                               ("moodle", args.from_moodle)) if path]  # fmt: skip
    if len(downloads) + (args.submissions is not None) > 1:
        p.error("give one of --submissions, --from-canvas and --from-moodle")
    if downloads and args.out is not None:
        args.submissions = args.out / "submissions"
    if args.submissions is None or args.out is None:
        p.error("give --submissions (or --from-canvas ZIP, --from-moodle ZIP) and --out "
                "(or --one NOTEBOOK, or --points-table)")  # fmt: skip
    grade(
        args.submissions,
        args.out,
        limits,
        jobs=max(1, args.jobs),
        lessons=args.lessons,
        say=None if args.quiet else print,
        students=args.students,
        points=args.points,
        roster=args.roster,
        use_cache=not args.no_cache,
        download=downloads[0] if downloads else None,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
