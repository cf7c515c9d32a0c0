"""What a bulk run hands out, made from the gradebook's entries alone.

`write_all` writes grades.csv, the Canvas and Moodle import files, feedback/<student>.md and
.html, summary.html (its plots inside it) and failures.jsonl (README.md, "For TAs"). Feedback
carries each message as `pytest autograder` prints it (a check's message never quotes the
suites' code: conftest.crashed), never a hidden part's checks; whatever a submission named or
printed is escaped for where it goes (escape.py); every file is written whole, then put in
place, so an interrupted run leaves the last complete reports or the new ones.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from .. import graphs
from ..config import Grading
from ..escape import csv_cell, html, markdown, printable
from ..misconceptions import CATALOGUE
from . import adjustments, lmsfiles, preflight
from .gradebook import Entry
from .lmsfiles import Target
from .outcomes import (
    Grade,
    Outcome,
    console_lines,
    decide,
    grade_of,
    maximum,
    passed,
    points,
    summary_section,
)
from .pages import inline, number, page, put, put_zip, table
from .policies import Policy, Scale
from .roster import Roster
from .summary import write_summary

WIDTH = 88  # what check_results.py and graphs.py fill a message's sentences to
MIN_WIDTH = 60  # below this, a line is short because it ends, not because the next word would not fit
LABEL = re.compile(r"^[A-Z][\w ()\[\]-]{0,40}: ")  # `Came out: `, `Likely cause [id]: `: a line of its own
LMS_COLUMN = "Autograd engines"  # the import files' grade column, unless the TA names the assignment


class PreflightError(Exception):
    """An LMS file would break its LMS's rules; `problems` says each, and nothing was written."""

    def __init__(self, problems: list[str], scale: list[str]) -> None:
        super().__init__(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in the LMS files")
        self.problems = problems
        self.scale = scale  # the scale of each LMS, in one line each


def write_all(out: Path, entries: list[Entry], grading: Grading, lms_column: str = LMS_COLUMN,
              record: Mapping[str, tuple[dict[str, float], float]] | None = None,
              policy: Policy | None = None, roster: Roster | None = None,
              by_hand: adjustments.ByHand | None = None, left: list[str] | None = None) -> Outcome:
    """Every report of the run, once every LMS file has passed the pre-flight check (raises
    PreflightError, having written nothing, when one has not). `record`, in an nbgrader course,
    is nbgrader's grade of each submission by source (`submitted/<student>`): points per part
    and the late penalty, which grades.csv and the import files then hold in place of the kit's.
    `by_hand`, the run's adjustments and extensions, applies to every report alike. `left`: what
    workers left that could not be removed, named in the summary."""
    policy = policy or Policy()
    entries = by_hand.apply(entries, grading) if by_hand is not None else entries
    counted, several = by_student(entries)
    outcome = decide(entries, counted, several, grading, record, policy, roster, lms_column,
                     lambda student, mine: collision(student, mine, grading))
    names = feedback_names(counted, several)
    by_source = {e.source: e for e in entries}
    best = sum(part.points for part in grading.parts.values())
    scales = lmsfiles.scales_of(policy, roster, lms_column, maximum(grading), best)
    for target in outcome.targets:
        if target.entry is not None and target.total is not None:
            target.feedback = feedback_html(by_source[target.entry.source], grading)
            target.summary = comments_of(target, grading, scales.get("moodle"))
    outcome.files = lmsfiles.build(outcome.targets, scales, roster, lms_column,
                                   datetime.now(timezone.utc).isoformat(timespec="seconds"))
    outcome.scale = lmsfiles.scale_lines(outcome.files, lms_column, roster)
    problems = preflight.check(outcome.files)
    if problems:
        raise PreflightError(problems, outcome.scale)
    outcome.lines = console_lines(outcome)
    write_csv(out / "grades.csv", outcome.grades, several, grading, penalties=record is not None or
              policy.late is not None, outcome=outcome,
              by_hand=by_hand if by_hand is not None and "adjustments" in by_hand.given else None)
    for name, sheet in outcome.files.tables.items():
        put(out / name, rows_csv(sheet.header, sheet.rows))
    for name, members in outcome.files.zips.items():
        put_zip(out / name, members)
    feedback, fresh = out / "feedback", out / "feedback.new"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    for entry in entries:
        (fresh / f"{names[entry.source]}.md").write_text(feedback_markdown(entry, grading), encoding="utf-8")
        (fresh / f"{names[entry.source]}.html").write_text(feedback_html(entry, grading), encoding="utf-8")
    # feedback/ is at every moment the last whole one or the new one, never half removed.
    old = out / "feedback.old"
    shutil.rmtree(old, ignore_errors=True)
    if feedback.exists():
        feedback.rename(old)
    fresh.rename(feedback)
    shutil.rmtree(old, ignore_errors=True)
    write_failures(out / "failures.jsonl", entries, several, grading)
    stats = {student: entry for student, entry in counted.items() if student in outcome.grades}
    write_summary(out, stats, entries, several, grading, names, nbgrader=record is not None,
                  lms=summary_section(outcome) + (by_hand.summary(outcome.grades) if by_hand else []),
                  left=left)
    return outcome


def comments_of(target: Target, grading: Grading, scale: Scale | None) -> str:
    """The short form of a student's feedback, for Moodle's Feedback comments column, with the
    grade on the item's scale where it is not the kit's."""
    entry = target.entry
    lost = [(grading.parts[s.part].title, s.points, s.max) for s in entry.scores
            if s.part in grading.parts and not passed(s) and grading.parts[s.part].visibility != "hidden"]
    late = [f"Late: {target.late_how}."] if target.late_how else []
    note = " ".join([*late, *adjustments.said(entry)])
    posted = "" if scale is None or scale.points == scale.kit else \
        f"{number(scale.post(target.total))} / {number(scale.points)} in this assignment"
    return lmsfiles.comments(target.total, maximum(grading), lost, note, posted)


def by_student(entries: list[Entry]) -> tuple[dict[str, Entry], dict[str, list[Entry]]]:
    """The entry that counts for each student with one, and the students with several (whose
    entries, by source, none counts)."""
    found: dict[str, list[Entry]] = {}
    for entry in sorted(entries, key=lambda e: e.source):
        found.setdefault(entry.student, []).append(entry)
    counted = {student: mine[0] for student, mine in sorted(found.items()) if len(mine) == 1}
    several = {student: mine for student, mine in sorted(found.items()) if len(mine) > 1}
    return counted, several


def feedback_names(counted: dict[str, Entry], several: dict[str, list[Entry]]) -> dict[str, str]:
    """The feedback file of each entry (`by_student`'s two groups), by source: the student's id,
    numbered `jsmith (1)`, `jsmith (2)` where a student has several (an id never holds a space
    or a parenthesis)."""
    names = {entry.source: student for student, entry in counted.items()}
    for student, mine in several.items():
        names.update({entry.source: f"{student} ({number_})" for number_, entry in enumerate(mine, 1)})
    return names


# -- grades.csv ---------------------------------------------------------------------------------

def write_csv(path: Path, grades: dict[str, Grade], several: dict[str, list[Entry]], grading: Grading,
              penalties: bool = False, outcome: Outcome | None = None,
              by_hand: adjustments.ByHand | None = None) -> None:
    """One row per student; a student held back (could not be graded, or has several entries) has
    empty cells and the reason. A student id that a spreadsheet would take for a formula (`-2-3`,
    `=cmd`) is written with a leading `'`; the gradebook keeps the id as it is. With `penalties`,
    a late penalty column before the total; with `by_hand`, the net change of the adjustments and
    their reasons before those; then how late, when it was handed in where the LMS says, and why a
    row has no grade."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    before_total = ["adjustment", "adjustment reason"] if by_hand else []
    before_total += ["late penalty"] if penalties else []
    writer.writerow([csv_cell(cell) for cell in ["student", *grading.parts, *before_total, "total", "late",
                                                 "submitted", "held back"]])
    held = {**(outcome.held if outcome else {}), **{s: f"0 (--zeros): {r}" for s, r in
                                                    (outcome.zeroed.items() if outcome else [])}}
    for student in sorted({*grades, *several, *held}):
        grade = grades.get(student)
        reason = csv_cell(held.get(student, ""))
        if grade is None:
            empty = [""] * (len(grading.parts) + len(before_total) + 3)
            writer.writerow([csv_cell(student), *empty, reason])
            continue
        writer.writerow([csv_cell(student), *(number(grade.parts[part]) for part in grading.parts),
                         *(by_hand.grades_csv(grade.entry) if by_hand else []),
                         *([number(grade.penalty)] if penalties else []), number(grade.total),
                         csv_cell(grade.late_how), csv_cell(grade.submitted_at), reason])
    put(path, buffer.getvalue())


def rows_csv(header: list[str], rows: list[list[str]]) -> str:
    """A CSV of `header` and `rows` (each cell already made safe for where it goes)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def collision(student: str, mine: list[Entry], grading: Grading) -> str:
    """The sentence that says a student has several entries and none of them counts."""
    listed = ", ".join(f"{e.source} ({number(grade_of(e, grading).total)})" for e in mine)
    return (f"{len(mine)} entries for the student {student}: {listed}; each was graded, but none counts "
            f"in grades.csv and the import files until all but one are removed or renamed in the class "
            "folder")


def write_failures(path: Path, entries: list[Entry], several: dict[str, list[Entry]],
                   grading: Grading) -> None:
    """A JSON line per submission that could not be graded or does not count."""
    lines = []
    for entry in entries:
        reasons = [entry.reason] if entry.status == "failed" else []
        if entry.student in several:
            reasons.append(collision(entry.student, several[entry.student], grading))
        if reasons:
            lines.append(json.dumps({"source": entry.source, "student": entry.student, "format": entry.format,
                                     "reason": "; ".join(reasons), "notes": entry.notes,
                                     "content_hash": entry.content_hash, "graded_at": entry.graded_at}))
    put(path, "".join(line + "\n" for line in lines))


# -- feedback ------------------------------------------------------------------------------------

def sections(entry: Entry, grading: Grading) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(heading, messages, likely causes) for each part that lost points, a cause being the
    catalogue's title for it (Markdown of the kit's own) and its id; none for a submission
    that could not be graded (its reason, said once, is why every part is zero)."""
    if entry.status == "failed":
        return []
    found = []
    for score in entry.scores:
        part = grading.parts.get(score.part)
        if part is None or passed(score):
            continue
        heading = f"{part.title} ({number(score.points)} / {number(score.max)})"
        if part.visibility == "hidden":
            found.append((heading, "The checks of this part are hidden.", []))
            continue
        causes = [(CATALOGUE[m].title if m in CATALOGUE else "", m) for m in score.misconceptions]
        found.append((heading, score.messages, causes))
    return found


def score_rows(entry: Entry, grading: Grading) -> list[tuple[str, str, str]]:
    """The feedback's score table: (part, title, `points / most`) per part, then the total."""
    got = points(entry, grading)
    rows = [(part_id, part.title + (" (bonus)" if part.bonus and "bonus" not in part.title.lower() else ""),
             f"{number(got[part_id])} / {number(part.points)}") for part_id, part in grading.parts.items()]
    if entry.total_change:
        rows.append(("adjustment", "by the course staff", f"{entry.total_change:+g}"))
    total = round(sum(got.values()) + entry.total_change, 2)
    rows.append(("total", "", f"{number(total)} / {number(maximum(grading))}"))
    return rows


def fence(text: str) -> str:
    """A Markdown code fence longer than any run of backticks inside the text."""
    ticks = 3
    while "`" * ticks in text:
        ticks += 1
    return "`" * ticks


def verbatim(messages: str) -> str:
    """Messages as they are, line by line, with what a terminal would act on escaped."""
    return "\n".join(printable(line, keep="\t") for line in messages.splitlines())


def held_back(entry: Entry) -> str:
    """What a student whose submission could not be graded should do next, in one sentence."""
    if entry.fault:
        return ("This is the grader's doing, not yours: the course grades it again, and you need do "
                "nothing.")
    return ("No score was given (it is not a zero): check your files with `pytest autograder` in the "
            "kit, then hand in value.py, tensor.py and dual.py again, as a folder or a zip; if it "
            "still cannot be graded, ask your course staff.")


def feedback_markdown(entry: Entry, grading: Grading) -> str:
    """feedback/<student>.md: the score table, the notes on the files, the lost points' messages;
    for a submission that could not be graded, why and what to do instead of a score table."""
    lines = [f"# Feedback for {markdown(entry.student)}", "",
             f"Submission {markdown(entry.source)} ({markdown(entry.format)}), graded "
             f"{markdown(entry.graded_at)}.", ""]
    if entry.status == "failed":
        lines += [f"**This submission could not be graded:** {markdown(entry.reason)}", "",
                  markdown(held_back(entry))]
    else:
        lines += [line for said in adjustments.said(entry) for line in (markdown(said, starts_line=True), "")]
        lines += ["| part | | points |", "| --- | --- | ---: |"]
        lines += ["| " + " | ".join(markdown(cell, starts_line=False) for cell in row) + " |"
                  for row in score_rows(entry, grading)]
    if entry.notes:
        lines += ["", "## Your files", ""] + [f"- {markdown(note, starts_line=True)}" for note in entry.notes]
    for heading, messages, causes in sections(entry, grading):
        lines += ["", f"## {markdown(heading)}", ""]
        lines += ["- Likely cause: " + (f"{title} \\[{markdown(m)}\\]" if title else markdown(m))
                  for title, m in causes]
        lines += [""] if causes else []
        for block in graphs.blocks(messages):
            if isinstance(block, graphs.Table):
                lines += ["", graph_table(block, as_markdown=True), ""]
                continue
            text = verbatim(block)
            mark = fence(text)
            lines += [f"{mark}text", text, mark]
    return "\n".join(lines) + "\n"


def graph_table(block: graphs.Table, as_markdown: bool) -> str:
    """The table of a graph report (graphs.py) as a Markdown or an HTML table, its marked row
    in bold; its op labels are the submission's text, escaped as such."""
    def bold(cell: str, index: int) -> str:
        if index != block.marked or not cell:
            return cell
        return f"**{cell}**" if as_markdown else f"<b>{cell}</b>"

    rows = [[bold(markdown(cell) if as_markdown else html(cell), index) for cell in row]
            for index, row in enumerate(block.rows)]
    if as_markdown:
        lines = ["| " + " | ".join(block.header) + " |", "|" + " --- |" * len(block.header)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    body = "".join(("<tr class='bad'>" if index == block.marked else "<tr>")
                   + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>\n"
                   for index, row in enumerate(rows))
    head = "".join(f"<th>{html(name)}</th>" for name in block.header)
    return f"<table><tr>{head}</tr>\n{body}</table>"


def wrapped_here(line: str, after: str, width: int) -> bool:
    """Did textwrap break `line` before `after` (the next word would not fit `width`), rather than
    the message ending a line there (a label such as `Expected:` starts its own)?"""
    if LABEL.match(after) or len(line) > width:
        return False
    return len(line) + 1 + len(after.split(" ", 1)[0]) > width


def unwrapped(paragraph: list[str]) -> str:
    """A paragraph's lines as HTML, joined where the text was only filled to a width (the
    browser wraps those), with <br> where a line ends on purpose. The width is the paragraph's
    own longest line up to WIDTH, never below MIN_WIDTH (a suite's docstring fills narrower)."""
    width = max(MIN_WIDTH, max((len(line) for line in paragraph if len(line) <= WIDTH), default=0))
    html_text = inline(paragraph[0])
    for line, after in zip(paragraph, paragraph[1:]):
        html_text += (" " if wrapped_here(line, after, width) else "<br>\n") + inline(after)
    return html_text


def message_html(messages: str) -> str:
    """A part's messages as HTML: paragraphs, each snippet (its lines indented, blank lines
    between them included) as one code block, and `code` as <code>."""
    blocks: list[str] = []
    paragraph: list[str] = []
    snippet: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append("<p>" + unwrapped(paragraph) + "</p>")
            paragraph.clear()
        while snippet and not snippet[-1]:
            snippet.pop()
        if snippet:
            blocks.append("<pre><code>" + "\n".join(html(line[4:]) for line in snippet) + "</code></pre>")
            snippet.clear()

    for line in messages.expandtabs(4).splitlines():
        if not line.strip():
            if snippet:  # a blank line may be part of the snippet: the next line says
                snippet.append("")
            else:
                flush()
        elif line.startswith("    "):
            if paragraph:
                flush()
            snippet.append(line)
        else:
            if snippet:
                flush()
            paragraph.append(line)
    flush()
    return "\n".join(blocks)


def feedback_html(entry: Entry, grading: Grading) -> str:
    """feedback/<student>.html: what feedback_markdown holds, as HTML, each sentence wrapped where
    the browser wraps it."""
    parts = [f"<h1>Feedback for {html(entry.student)}</h1>",
             f"<p>Submission <code>{html(entry.source)}</code> ({html(entry.format)}), "
             f"graded {html(entry.graded_at)}.</p>"]
    if entry.status == "failed":
        parts.append(f"<p class='bad'><b>This submission could not be graded:</b> {html(entry.reason)}</p>"
                     f"<p>{inline(held_back(entry))}</p>")
    else:
        parts += [f"<p>{html(said)}</p>" for said in adjustments.said(entry)]
        rows = [[html(cell) for cell in row] for row in score_rows(entry, grading)]
        parts.append(table(["part", "", "points"], rows, numeric=(2,)))
    if entry.notes:
        parts.append("<h2>Your files</h2><ul>" + "".join(f"<li>{html(note)}</li>" for note in entry.notes)
                     + "</ul>")
    for heading, messages, causes in sections(entry, grading):
        parts.append(f"<h2>{html(heading)}</h2>")
        parts += ["<p>Likely cause: " + (f"{inline(title)} [{html(m)}]" if title else html(m)) + "</p>"
                  for title, m in causes]
        blocks = [graph_table(block, as_markdown=False) if isinstance(block, graphs.Table)
                  else message_html(block) for block in graphs.blocks(messages)]
        parts.append("<div class='messages'>" + "\n".join(blocks) + "</div>")
    return page(f"Feedback for {printable(entry.student)}", "\n".join(parts))
