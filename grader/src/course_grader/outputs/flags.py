"""What the grader tells the instructor besides the grades: whether the kernels ran in a sandbox
(:func:`sandbox_status`, in the terminal and at the top of the report) and what each notebook
tried that deserves a look (:func:`flags_for`). Used by the class run (:mod:`course_grader.cli`)
and by ``--one`` (:mod:`course_grader.one`)."""

from __future__ import annotations

import ast
import functools
import json
import os
import re

from ..isolation import bubblewrap, cgroup, seccomp
from ..isolation.sandbox import Limits
from ..pipeline.grading import Submission, cell_label


def sandbox_status(limits: Limits) -> str:
    """One line for the terminal and the report: whether the kernels run in a sandbox."""
    if not limits.sandbox:
        return (
            "WARNING: NO SANDBOX (--no-sandbox): the students' notebooks ran as you, with your "
            "files and network; grades are still computed by the grader itself"
        )
    why = bubblewrap.unavailable()
    if why and bubblewrap.own_user_only():
        return (
            f"WARNING: NO SANDBOX: {why}. Run as root, the grader ran each student's kernel as a "
            "user of its own (setpriv, no capabilities): it could not write the grader's files "
            "or results, but it could read what any user can and use the network; see "
            "docs/INSTRUCTORS.md, 'Grading safely'"
        )
    if why and os.geteuid() == 0 and bubblewrap.closed_to_other_users():
        why += (
            "; and the kernels could not run as users of their own, as "
            f"{bubblewrap.closed_to_other_users()} is closed to other users (install the course "
            "where any user can read it)"
        )
    if why:
        return (
            f"WARNING: NO SANDBOX: {why}. The students' notebooks ran as you, with your files "
            "and network (grades are still computed by the grader itself); see "
            "docs/INSTRUCTORS.md, 'Grading safely', for a container"
        )
    sandbox = (
        "Sandbox: bubblewrap (each kernel without network, with its own processes, a private "
        "/tmp and HOME, and only its own folder writable"
    )
    warnings = []
    no_filter = bubblewrap.seccomp_unavailable()
    if no_filter:
        warnings.append(f"{no_filter}: the kernels may use every system call")
    else:
        sandbox += "; a seccomp filter"
        unknown = seccomp.unknown()  # an older libseccomp: these calls are not filtered
        if unknown:
            warnings.append(f"this machine's libseccomp does not know {', '.join(unknown)}: "
                            "the filter leaves them alone")  # fmt: skip
    no_groups = cgroup.unavailable()
    if no_groups:
        warnings.append(
            f"{no_groups}: a notebook's memory outside its address space, its files and its "
            "CPU time are not limited (run as root, or see docs/INSTRUCTORS.md, 'Grading safely')"
        )
    else:
        sandbox += "; a control group each: memory with its files, processes, a CPU share"
    return f"{sandbox})" + "".join(f". WARNING: {w}" for w in warnings)


# What a cell raises when the sandbox refuses it: a file outside its folder, the network, more
# processes (or when the notebook looks for a file that is not there).
_REFUSED = {"PermissionError", "FileNotFoundError", "OSError", "ConnectionRefusedError",
            "ConnectionError", "BlockingIOError", "gaierror", "TimeoutError",
            "ReadOnlyFileSystemError"}  # fmt: skip


# What no lesson's code writes: the checks' and the grader's insides (lesson code reaches the
# checks only as `from helpers import checks` and `checks.<exercise>`, so any `helpers.checks`
# path, and any `checks.` name that is one of the package's modules, a lesson's check module or
# its answers, is the insides), the profile and trace hooks the checks' watch and time limit
# set, the time limit's own names, the grading variables, a check's own answer. The grades do
# not depend on any of them: the grader checks every answer from its own process.
_INTERNALS = re.compile(
    r"\bhelpers\s*\.\s*checks\b"
    r"|\bchecks\.(?:answers|lesson\d\d\w*|calling|compare|draws|exercise|grading|messages|mistakes"
    r"|policy|prediction|record|results|scores|timelimit|wire|withheld)\b"
    r"|\b(HelperWatch|call_learner|LocalAnswer|with_time_limit|TIME_LIMIT_SECONDS"
    r"|CHECK_TIME_LIMIT_SECONDS|MACHINERY|never_interrupt|called_back"
    r"|setprofile|settrace|HELPERS_GRADE_\w+|HELPERS_CHECK_\w+)\b|\.reference\b"
    r"|\bcourse_grader\b|\bgrading\.serve\b|\bASKED\b"  # the grader, its door, the order
)

# What the self-study build shows of an answer, one call away (the graded build leaves them
# out): each its own flag, as a grade may rest on what was read.
# .solution or .hint called, or taken to be called later (``show = checks.softmax.solution``).
_SOLUTION = re.compile(r"\bchecks\s*\.\s*(\w+)\s*\.\s*solution\b")
_ANSWER = re.compile(r"\bchecks\s*\.\s*(\w+)\s*\.\s*answer\b")
_HINT = re.compile(r"\bchecks\s*\.\s*(\w+)\s*\.\s*hint\s*\(([^()]*)\)")
_HINT_TAKEN = re.compile(r"\bchecks\s*\.\s*(\w+)\s*\.\s*hint\b(?!\s*\()")


def _hint_level(text: str, last: int) -> int | None:
    """The hint a call's argument text asks for, as ``Exercise.hint`` reads it (clamped to
    1..last; anything but an int is 1); None when it is not a literal the grader can read."""
    text = re.sub(r"^level\s*=", "", text.strip()).strip()
    if not text:
        return 1
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return 1
    return min(max(value, 1), last)


@functools.cache
def _hint_counts() -> dict[str, int]:
    """Each exercise's number of hints (its last is nearly the answer), read once per run."""
    from helpers.checks.grading import Exercise, catalogue

    return {item.name: item.hint_count for item in catalogue() if isinstance(item, Exercise)}


def cell_flags(source: str) -> list[str]:
    """What one code cell does that the instructor should know of (the cell's label goes in
    front): read an answer the course shows, or reach into the checks' or the grader's insides."""
    levels = _hint_counts()
    found = [
        f"calls `checks.{name}.solution()`, which shows the course's answer to {name}"
        for name in dict.fromkeys(_SOLUTION.findall(source))
    ]
    for name in dict.fromkeys(_ANSWER.findall(source)):
        found.append(
            f"reads `checks.{name}.answer`, a prediction's answer: a point scored after it was "
            "read, not predicted"
        )
    for name, argument in dict.fromkeys(_HINT.findall(source)):
        last = levels.get(name)
        if last is None:
            continue
        level = _hint_level(argument, last)
        if level is None:
            found.append(
                f"asks for `checks.{name}.hint({argument.strip()})`, a level the grader cannot "
                f"read: it may be the last hint of {last}, which is nearly the answer"
            )
        elif level == last:
            found.append(
                f"asks for `checks.{name}.hint({argument.strip()})`: the last hint of {last}, "
                "which is nearly the answer"
            )
    for name in dict.fromkeys(_HINT_TAKEN.findall(source)):
        if name in levels:
            found.append(
                f"takes `checks.{name}.hint` to call later: any of its hints, the last of "
                f"{levels[name]} too, which is nearly the answer"
            )
    match = _INTERNALS.search(source)
    if match:
        found.append(
            f"reaches into the checks' or the grader's insides (`{match.group(0)}`): the grades "
            "do not depend on them, but look at what it tried"
        )
    return found


def solution_notebook_flags(submission: Submission) -> list[str]:
    """Whether the notebook is (or was made from) the course's own answered one: the metadata
    only ``make notebooks`` writes into ``solutions/`` (``helpers_sha256``), or cells with the
    ids of the solution notebook's answered cells (the learner's copy gives those cells other
    ids; the solutions are read from the course's folder when the grader runs beside it)."""
    nb = submission.nb
    if nb is None:
        return []
    found = []
    course = nb.metadata.get("course", {})
    if isinstance(course, dict) and "helpers_sha256" in course:
        found.append(
            "carries the metadata of the course's executed solution notebook "
            "(`helpers_sha256`): it may be the course's `solutions/` notebook, handed in"
        )
    ids = {str(cell.get("id")) for cell in nb.cells}
    shared = sorted(ids & _solution_cell_ids(submission.lesson or ""))
    if shared:
        found.append(
            f"holds {len(shared)} cell(s) with the ids of the course's answered solution cells "
            f"({', '.join(shared[:3])}): copied from the course's `solutions/` notebook"
        )
    return found


@functools.cache
def _solution_cell_ids(lesson: str) -> frozenset[str]:
    """The ids of lesson ``lesson``'s cells that only its solution notebook has (its answered
    exercise and prediction cells), from the course's folder; empty without one."""
    from helpers.checkout import course_checkout

    root = course_checkout()
    if root is None or not re.fullmatch(r"\d\d", lesson):
        return frozenset()
    ids = {}
    for folder in ("solutions", "notebooks"):
        paths = sorted((root / folder).glob(f"{lesson}_*.ipynb"))
        try:
            cells = json.loads(paths[0].read_text(encoding="utf-8"))["cells"] if paths else []
        except (OSError, ValueError, KeyError):
            return frozenset()
        ids[folder] = {str(cell.get("id")) for cell in cells}
    return frozenset(ids["solutions"] - ids["notebooks"])


def flags_for(submission: Submission) -> list[str]:
    """What an instructor should know about a notebook beyond its grades: records in its
    checks' log that no check wrote, a notebook made from the course's solutions, cells that
    read an answer the course shows (:func:`cell_flags`) or reach into the checks' or the
    grader's insides, and cells that tried what the sandbox refuses."""
    outcome, found = submission.outcome, []
    assert outcome is not None
    # While grading, a check only notes what it was given (helpers.checks.exercise.deferred): a
    # record with a verdict, or of another lesson's exercise, was written by the notebook itself.
    names = {v["exercise"] for v in outcome.verdicts}
    forged = sorted({str(r.get("exercise"))[:40] for r in outcome.log
                     if r.get("passed") is not None or r.get("exercise") not in names
                     or r.get("lesson") != submission.lesson})  # fmt: skip
    if forged:
        found.append(
            f"its checks' log holds verdicts no check wrote (on {', '.join(forged)}): the "
            "notebook wrote them itself; the grades are the grader's own"
        )
    found += solution_notebook_flags(submission)
    for index, cell in enumerate(submission.nb.cells if submission.nb is not None else []):
        if cell.cell_type == "code":
            found += [f"{cell_label(submission.nb, index)} {f}" for f in cell_flags(cell.source)]
    for error in outcome.errors:
        if error.ename in _REFUSED and submission.nb is not None:
            found.append(
                f"{cell_label(submission.nb, error.index)} raised {error.ename}: "
                f"{error.evalue[:120]} "
                "(a file, network or process outside its sandbox?)"
            )
    return found
