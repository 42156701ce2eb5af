"""The two documents ``make grade`` writes for people: feedback/<student>.md and report.html."""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from helpers.checks import grading
from helpers.checks.grading import Exercise

from ..pipeline.grading import Row, lesson_items, student_order
from ..pipeline.points import fmt

if TYPE_CHECKING:
    from .results import ClassResults

LABEL = {
    "correct": "correct",
    "not_yet": "not yet",
    "not_attempted": "not attempted",
    "error": "error",
    "timeout": "timeout",
    "missing": "missing",
}
SYMBOL = {
    "correct": "✓",
    "not_yet": "✗",
    "not_attempted": "…",
    "error": "!",
    "timeout": "◷",
    "missing": "–",
}
# Colour-blind-safe: green for correct, orange for not yet, purple for errors and time-outs,
# greys for what was not there to grade.
COLOUR = {
    "correct": ("#1b7837", "#ffffff"),
    "not_yet": ("#e08214", "#ffffff"),
    "not_attempted": ("#d9d9d9", "#333333"),
    "error": ("#762a83", "#ffffff"),
    "timeout": ("#c2a5cf", "#222222"),
    "missing": ("#f7f7f7", "#777777"),
}


def _items_by_name() -> dict:
    return {item.name: item for item in grading.catalogue()}


def feedback_markdown(
    student: str,
    rows: list[Row],
    notes: list[str],
    chosen: dict[str, str],
    results: ClassResults | None = None,
) -> str:
    """A student's feedback: per lesson, points, what went well and what to fix (messages,
    hints); ``chosen`` names the notebook graded per lesson."""
    items = _items_by_name()
    lines = [f"# Feedback for {student}", ""]
    totals = results.totals if results is not None else None
    if totals is not None and len(results.lessons) > 1:
        lines += [
            f"**{fmt(totals.overall[student])} of {fmt(totals.max_overall)} points** in all.",
            "",
        ]
    by_lesson: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_lesson[row.lesson].append(row)
    for lesson, lesson_rows in by_lesson.items():
        correct = sum(r.status == "correct" for r in lesson_rows)
        name = chosen.get(lesson)
        source = f" — `{name}`" if name else " — no notebook found"
        points = ""
        if totals is not None and (student, lesson) in totals.by_lesson:
            points = (
                f" {fmt(totals.by_lesson[(student, lesson)])} of "
                f"{fmt(totals.max_by_lesson[lesson])} points."
            )
        lines += [
            f"## Lesson {lesson}{source}",
            "",
            f"{correct} of {len(lesson_rows)} correct.{points}",
            "",
        ]
        good = [r for r in lesson_rows if r.status == "correct"]
        if good:
            lines += ["**Well done**", ""]
            lines += [f"- ✓ `{r.exercise}`: {_inert_markdown(r.message)}" for r in good]
            lines.append("")
        to_fix = [r for r in lesson_rows if r.status != "correct"]
        if to_fix:
            lines += ["**To work on**", ""]
            for r in to_fix:
                mistake = f" (`{r.mistake}`)" if r.mistake else ""
                lines.append(f"- {SYMBOL[r.status]} `{r.exercise}` — {LABEL[r.status]}{mistake}:")
                lines.append(f"  {_inert_markdown(r.message)}")
                item = items.get(r.exercise)
                if isinstance(item, Exercise) and r.status != "missing":
                    level = 1 if r.status == "not_attempted" else 2
                    level = min(level, len(grading.hints(item)))
                    lines.append(
                        f"  *Hint:* {grading.hints(item)[level - 1]} (more: "
                        f"`checks.{r.exercise}.hint({min(level + 1, len(grading.hints(item)))})`)"
                    )
            lines.append("")
    if notes:
        lines += ["## About your files", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def _inert_markdown(text: str) -> str:
    """A message for Markdown: it may quote the student's own code or exception text, and a
    Markdown viewer renders raw HTML (an <img> that loads when the file is previewed), so
    "<" is written as an entity (the viewer shows "<")."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _cell(row: Row) -> str:
    background, colour = COLOUR[row.status]
    mistake = f" ({row.mistake})" if row.mistake else ""
    title = html.escape(f"{row.exercise}: {LABEL[row.status]}{mistake}\n{row.message}")
    short = ""
    if row.status == "not_yet" and row.mistake:
        label = row.mistake.split(".", 1)[1].replace("_", " ")
        short = f'<span class="m">{html.escape(label)}</span>'
    return (
        f'<td class="s" style="background:{background};color:{colour}" title="{title}">'
        f"{SYMBOL[row.status]}{short}</td>"
    )


def report_html(results: ClassResults) -> str:
    """The class at a glance (with points), what to reteach (the most common named mistakes),
    the LMS files and the roster, answers that look alike, notebooks that need a look."""
    students, lessons, rows = results.students, results.lessons, results.rows
    attention, settings, notebooks = results.attention, results.settings, results.notebooks
    totals = results.totals
    assert totals is not None
    table = {(r.student, r.exercise): r for r in rows}
    columns = [(lesson, item) for lesson in lessons for item in lesson_items(lesson)]
    n = len(students)

    head_lessons = "".join(
        f'<th colspan="{len(lesson_items(lesson))}" class="lesson">Lesson {lesson}</th>'
        for lesson in lessons
    )
    head_items = "".join(
        f'<th class="ex"><div>{html.escape(item.name)}'
        f"{'' if isinstance(item, Exercise) else ' (predict)'}</div></th>"
        for _, item in columns
    )
    body = []
    for student in students:
        cells = []
        correct = 0
        for _, item in columns:
            row = table.get((student, item.name))
            if row is None:
                cells.append('<td class="s"></td>')
                continue
            correct += row.status == "correct"
            cells.append(_cell(row))
        body.append(
            f'<tr><th class="who">{html.escape(student)}</th>{"".join(cells)}'
            f'<td class="total">{correct}/{len(columns)}</td>'
            f'<td class="total">{fmt(totals.overall[student])}/{fmt(totals.max_overall)}</td>'
            "</tr>"
        )
    share = []
    for _, item in columns:
        done = sum(
            table.get((s, item.name)) is not None and table[(s, item.name)].status == "correct"
            for s in students
        )
        share.append(f'<td class="pct">{round(100 * done / n) if n else 0}%</td>')
    mean = sum(totals.overall.values()) / n if n else 0.0
    body.append(
        f'<tr class="foot"><th class="who">class ✓</th>{"".join(share)}<td></td>'
        f'<td class="total" title="mean points">{mean:.1f}</td></tr>'
    )

    # What to reteach: named mistakes (status not_yet), counted once per student.
    mistakes: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, str] = {}
    who: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.status == "not_yet" and r.mistake:
            mistakes[r.exercise][r.mistake] += 1
            examples.setdefault(r.mistake, r.message)
            who[r.mistake].append(r.student)
    overall = Counter()
    for counter in mistakes.values():
        overall.update(counter)
    top = "".join(
        f"<tr><td class='count'>{count}</td><td><code>{html.escape(mistake)}</code></td>"
        f"<td class='msg'>{html.escape(_short(examples[mistake]))}</td>"
        f"<td class='names'>{html.escape(', '.join(who[mistake]))}</td></tr>"
        for mistake, count in overall.most_common(10)
    )
    sections = []
    for lesson, item in columns:
        statuses = Counter(
            table[(s, item.name)].status for s in students if (s, item.name) in table
        )
        bar = "".join(
            f'<span class="seg" style="flex:{statuses[s]};background:{COLOUR[s][0]};'
            f'color:{COLOUR[s][1]}" title="{LABEL[s]}: {statuses[s]}">{statuses[s]}</span>'
            for s in COLOUR
            if statuses[s]
        )
        legend = ", ".join(f"{statuses[s]} {LABEL[s]}" for s in COLOUR if statuses[s])
        named = mistakes.get(item.name)
        if named:
            listed = "".join(
                f"<li><b>{count} student{'s' if count > 1 else ''}</b> "
                f"<code>{html.escape(m.split('.', 1)[1])}</code>: "
                f"{html.escape(_short(examples[m]))}</li>"
                for m, count in named.most_common()
            )
            listed = f"<ul>{listed}</ul>"
        else:
            listed = '<p class="none">no named mistake</p>'
        sections.append(
            f"<section><h3>{html.escape(item.name)} <small>lesson {lesson}</small></h3>"
            f'<div class="bar">{bar}</div><p class="legend">{legend}</p>{listed}</section>'
        )
    legend = " ".join(
        f'<span class="key" style="background:{COLOUR[s][0]};color:{COLOUR[s][1]}">'
        f"{SYMBOL[s]}</span> {LABEL[s]}"
        for s in COLOUR
    )
    needs = "".join(f"<li>{html.escape(a)}</li>" for a in attention)
    needs_block = f"<h2>Notebooks that need a look</h2><ul>{needs}</ul>" if attention else ""
    top_block = (
        "<h2>What to reteach: the most common named mistakes</h2>"
        "<table class='top'><tr><th>students</th><th>mistake</th><th>what the check said "
        f"(one example)</th><th>who</th></tr>{top}</table>"
        if top
        else "<h2>What to reteach</h2><p>No named mistakes in this class.</p>"
    )
    return _PAGE.format(
        lms=_lms_block(results),
        alike=_alike_block(results),
        title=f"Class report: {n} students, lesson{'s' if len(lessons) > 1 else ''} "
        + ", ".join(lessons),
        summary=html.escape(
            f"{notebooks} notebook{'s' if notebooks != 1 else ''} graded; "
            f"{sum(r.status == 'correct' for r in rows)} of {len(rows)} exercises correct"
            + (f"; {len(attention)} notebook(s) need a look (at the end)" if attention else "")
        ),
        legend=legend,
        head_lessons=head_lessons,
        head_items=head_items,
        body="".join(body),
        top=top_block,
        sections="".join(sections),
        needs=needs_block,
        settings=html.escape(settings),
        sandbox=(
            f'<p class="caveat" role="alert"><strong>{html.escape(settings.split(". ")[0])}'
            "</strong></p>"
            if "NO SANDBOX" in settings
            else ""
        ),
    )


def _short(message: str, limit: int = 220) -> str:
    message = re.sub(r"\s+", " ", message).strip()
    return message if len(message) <= limit else message[: limit - 3] + "..."


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       margin: 24px 32px; max-width: 1200px; }}
h1 {{ font-size: 1.5em; margin-bottom: 4px; }}
.summary {{ margin: 0 0 8px; color: #444; }}
h2 {{ font-size: 1.2em; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }}
h3 {{ font-size: 1em; margin: 0 0 6px; }} h3 small {{ color: #777; font-weight: normal; }}
.legend-line {{ margin: 8px 0 16px; color: #444; }}
.key {{ display: inline-block; width: 1.5em; text-align: center; border-radius: 3px;
        border: 1px solid #ccc; margin-left: 10px; }}
table.grid {{ border-collapse: collapse; }}
.grid th, .grid td {{ border: 1px solid #fff; }}
.grid th.lesson {{ background: #eef3fa; color: #2166ac; padding: 4px; }}
.grid th.ex {{ vertical-align: bottom; padding: 4px 2px; font-weight: normal; font-size: .85em; }}
.grid th.ex div {{ writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
                   margin: 0 auto; }}
.scroll {{ overflow-x: auto; padding-bottom: 4px; }}
.grid th.who {{ text-align: right; padding: 2px 10px 2px 0; font-weight: 600;
                white-space: nowrap; position: sticky; left: 0; background: #fff; z-index: 1; }}
.grid td.s {{ width: 56px; min-width: 56px; height: 34px; text-align: center; font-size: 1.05em;
              cursor: help; }}
.grid td.s .m {{ display: block; font-size: .58em; line-height: 1.05; white-space: normal;
                 overflow-wrap: normal; padding: 0 2px 2px; }}
.grid td.total, .grid td.pct {{ padding: 0 8px; color: #555; font-size: .9em; text-align: center; }}
.grid tr.foot th, .grid tr.foot td {{ border-top: 2px solid #999; }}
table.top {{ border-collapse: collapse; width: 100%; }}
.top th {{ text-align: left; font-weight: 600; border-bottom: 1px solid #ccc; padding: 4px; }}
.top td {{ border-bottom: 1px solid #eee; padding: 4px; vertical-align: top; }}
.top td.count {{ font-weight: 700; font-size: 1.2em; text-align: center; width: 4em; }}
.top td.msg {{ color: #444; font-size: .9em; }} .top td.names {{ color: #666; font-size: .85em; }}
.sections {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr));
             gap: 16px; }}
section {{ border: 1px solid #e3e3e3; border-radius: 6px; padding: 10px 12px; }}
.bar {{ display: flex; height: 20px; border-radius: 3px; overflow: hidden; font-size: .75em;
        line-height: 20px; text-align: center; }}
.legend {{ color: #555; font-size: .85em; margin: 4px 0; }}
section ul {{ padding-left: 18px; margin: 6px 0; font-size: .9em; }}
section li {{ margin-bottom: 4px; }} .none {{ color: #888; font-size: .9em; }}
code {{ background: #f3f3f3; padding: 0 3px; border-radius: 3px; }}
footer {{ margin-top: 32px; color: #888; font-size: .8em; }}
.caveat {{ background: #fff8e6; border-left: 4px solid #e08214; padding: 8px 12px; }}
table.alike {{ border-collapse: collapse; }}
.alike th, .alike td {{ text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #eee; }}
</style></head><body>
<h1>{title}</h1>
<p class="summary">{summary}</p>
{sandbox}
<div class="legend-line">{legend}</div>
<p style="color:#555;font-size:.9em">Hover over a square for the check's message; the small
text under ✗ is the named mistake. Each student's feedback is in <code>feedback/</code>, every
row in <code>grades.csv</code>, points per lesson in <code>scores.csv</code>.</p>
<div class="scroll"><table class="grid">
<tr><th class="who"></th>{head_lessons}<th></th><th></th></tr>
<tr><th class="who"></th>{head_items}<th class="ex"><div>correct</div></th>
<th class="ex"><div>points</div></th></tr>{body}</table>
</div>
{top}
<h2>Per exercise</h2>
<div class="sections">{sections}</div>
{lms}
{alike}
{needs}
<footer>{settings}</footer>
</body></html>
"""


def _names(names: list[str]) -> str:
    return ", ".join(f"<b>{html.escape(n)}</b>" for n in names)


def _lms_block(results: ClassResults) -> str:
    """Where the LMS files are, and how the roster matched the folders."""
    totals = results.totals
    assert totals is not None
    possible = ", ".join(
        f"lesson {lesson}: {fmt(totals.max_by_lesson[lesson])}" for lesson in results.lessons
    )
    parts = [
        "<h2>Grades for your LMS</h2>",
        "<p><code>lms/canvas.csv</code> (Canvas: <i>Grades → Import</i>) and "
        "<code>lms/moodle.csv</code> (Moodle: <i>Grades → Import → CSV file</i>, map "
        "<i>Email address</i> to <i>useremail</i>) hold each student's points per lesson; "
        f"points possible {html.escape(possible)}. Each lesson is one column, named "
        "<code>Lesson NN</code>: rename it to an existing assignment's name to fill that one "
        "instead of creating a new one.</p>",
    ]
    if results.roster is None:
        parts.append(
            "<p class='caveat'>No roster was given, so the LMS files are keyed by folder name "
            "only (no IDs, no email addresses) and your LMS may not match them to its "
            "students. Add one: a CSV with the columns "
            "<code>student,name,id,sis_user_id,sis_login_id,section,email</code>, where "
            "<code>student</code> is the submission folder's name (the other columns come "
            "from your LMS's gradebook export), then run again with "
            "<code>make grade ... ROSTER=roster.csv</code> (or <code>--roster</code>): "
            "nothing is run again.</p>"
        )
    else:
        parts.append(f"<p>Roster: {len(results.roster)} students.</p>")
        if results.not_in_roster:
            parts.append(
                f"<p class='caveat'>Folders not in the roster (graded, but left out of the LMS "
                f"files): {_names(results.not_in_roster)}. A typo in the folder or the "
                "roster?</p>"
            )
        if results.without_folder:
            parts.append(
                f"<p class='caveat'>In the roster, but no folder in the submissions: "
                f"{_names(results.without_folder)}. They get <code>missing</code> rows and 0 "
                "points.</p>"
            )
        if not results.not_in_roster and not results.without_folder:
            parts.append("<p>Every folder is in the roster, and every roster student has one.</p>")
    return "\n".join(parts)


def _alike_block(results: ClassResults, limit: int = 60) -> str:
    """Answers that look alike: groups of the same code, and near pairs; a prompt to look."""
    left_out = sum(results.alike_left_out.values())
    intro = (
        "<h2>Answers that look alike</h2>"
        "<p class='caveat'><b>A prompt to look, not proof of copying.</b> Each line names "
        "students whose answer to an exercise is the same code once names, comments, "
        "docstrings, blank lines and the order of definitions are set aside (their syntax "
        "trees are compared; similarity 1.00 is the same tree). Short exercises have few ways "
        "to be written, students may have worked together where that is allowed, and a shared "
        "source gives the same code: open both notebooks and judge. Answers equal to the "
        f"course's own solution or to the starter stub are left out ({left_out} of them); every "
        "pair is in <code>similarity.csv</code>.</p>"
    )
    if not results.alike:
        return intro + "<p>No two answers look alike.</p>"
    # Students sharing one tree form a group; other pairs are listed as pairs.
    lines, seen = [], set()
    for exercise, a, b, score in results.alike:
        if score == 1.0:
            if (exercise, a) in seen:
                continue
            group = {a, b}
            for e, x, y, s in results.alike:
                if e == exercise and s == 1.0 and (x in group or y in group):
                    group |= {x, y}
            seen |= {(exercise, s) for s in group}
            lines.append((exercise, sorted(group, key=student_order), "1.00 (the same tree)"))
        else:
            lines.append((exercise, [a, b], f"{score:.2f}"))
    rows = "".join(
        f"<tr><td><code>{html.escape(e)}</code></td><td>{_names(who)}</td><td>{s}</td></tr>"
        for e, who, s in lines[:limit]
    )
    more = (
        f"<p>… and {len(lines) - limit} more in similarity.csv.</p>" if len(lines) > limit else ""
    )
    return (
        intro + "<table class='alike'><tr><th>exercise</th><th>students</th><th>similarity</th>"
        f"</tr>{rows}</table>{more}"
    )
