"""What a bulk run hands out, made from the gradebook's entries alone.

`write_all` writes grades.csv, the Canvas and Moodle import files, feedback/<student>.md and
.html, summary.html (its plots inside it) and failures.jsonl (README.md, "For TAs"). Feedback
never shows a hidden part's checks nor a line of the suites' code; whatever a submission named
or printed is escaped for where it goes (escape.py); every file is written whole, then put in
place, so an interrupted run leaves the last complete reports or the new ones.
"""

from __future__ import annotations

import ast
import base64
import csv
import io
import json
import os
import re
import shutil
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path
from urllib.parse import quote

from .. import graphs
from ..config import Grading
from ..escape import csv_cell, html, markdown, printable
from ..misconceptions import CATALOGUE
from .gradebook import Entry, Score

SUITES = Path(__file__).parent.parent / "suites"
PLUGIN = Path(__file__).parent.parent / "conftest.py"
MIN_CODE_LINE = 8  # shorter lines (`)`, `else:`) say nothing about a suite
STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
td.n{text-align:right}pre{background:#f6f6f6;padding:.8rem;overflow-x:auto;white-space:pre-wrap}
.bad{color:#a00}img{max-width:100%}code{background:#f6f6f6;padding:0 .2rem}pre code{padding:0}"""
OLD_PLOTS = ("totals.png", "parts.png", "misconceptions.png")  # summary.html holds its plots now
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LMS_COLUMN = "Autograd engines"  # the import files' grade column, unless the TA names the assignment
# Canvas's gradebook import (GradebookImporter in canvas-lms, and the layout its GradebookExporter
# writes): these five columns, then one per assignment, headed "<title> (<assignment id>)" to fill
# in that assignment; a row whose first cell says "Points Possible" gives each one's points.
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS = "    Points Possible"
# A Moodle assignment's grading worksheet upload (assignfeedback_offline): rows are found by
# "Identifier", "Participant <id>" as in the download's folder names; a grade is skipped where
# the assignment's grade was changed after "Last modified (grade)".
MOODLE_WORKSHEET_COLUMNS = ("Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)")


@dataclass
class Grade:
    """What grades.csv and the import files say of one student: the entry that counts, its
    points per part, and a late penalty (nbgrader's)."""

    entry: Entry
    parts: dict[str, float]
    penalty: float = 0.0

    @property
    def total(self) -> float:
        """The points of every part less the penalty, never below 0."""
        return round(max(0.0, sum(self.parts.values()) - self.penalty), 2)


def write_all(out: Path, entries: list[Entry], grading: Grading, lms_column: str = LMS_COLUMN,
              record: Mapping[str, tuple[dict[str, float], float]] | None = None) -> None:
    """Every report of the run. `record`, in an nbgrader course, is nbgrader's grade of each
    submission by source (`submitted/<student>`): points per part and the late penalty, which
    grades.csv and the import files then hold in place of the kit's."""
    counted, several = by_student(entries)
    grades = {student: grade_of(entry, grading, record) for student, entry in counted.items()}
    write_csv(out / "grades.csv", grades, several, grading, penalties=record is not None)
    write_canvas(out / "grades-canvas.csv", grades, grading, lms_column)
    write_moodle(out / "grades-moodle.csv", grades, lms_column)
    write_moodle_worksheet(out / "grades-moodle-worksheet.csv", grades, grading)
    names = feedback_names(counted, several)
    feedback, fresh = out / "feedback", out / "feedback.new"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    for entry in entries:
        (fresh / f"{names[entry.source]}.md").write_text(feedback_markdown(entry, grading), encoding="utf-8")
        (fresh / f"{names[entry.source]}.html").write_text(feedback_html(entry, grading), encoding="utf-8")
    shutil.rmtree(feedback, ignore_errors=True)
    fresh.rename(feedback)
    write_failures(out / "failures.jsonl", entries, several, grading)
    write_summary(out, counted, entries, several, grading, names, nbgrader=record is not None)


def put(path: Path, text: str) -> None:
    """Write a file whole, then put it in place of the old one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8", newline="")
    os.replace(partial, path)


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


def grade_of(entry: Entry, grading: Grading,
             record: Mapping[str, tuple[dict[str, float], float]] | None = None) -> Grade:
    """A student's grade: nbgrader's where it holds one for the entry, the kit's otherwise."""
    if record is not None and entry.source in record:
        parts, penalty = record[entry.source]
        return Grade(entry, {part: parts.get(part, 0.0) for part in grading.parts}, penalty)
    return Grade(entry, points(entry, grading))


def points(entry: Entry, grading: Grading) -> dict[str, float]:
    """Points per part of grading.toml; a part the entry has no score for (a failed run) is 0."""
    got = {score.part: score.points for score in entry.scores}
    return {part: got.get(part, 0.0) for part in grading.parts}


def passed(score: Score) -> bool:
    """Every check of the part passed: full points and no message (a part worth nothing has full
    points however it went, and a file that is missing or did not import is never a pass)."""
    return score.points >= score.max and not score.messages


def maximum(grading: Grading) -> float:
    """The points possible, bonus left out."""
    return sum(part.points for part in grading.parts.values() if not part.bonus)


def number(x: float) -> str:
    """A number as the reports write it: `3`, `2.5`."""
    return f"{x:g}"


# -- grades.csv and the import files -------------------------------------------------------------

def write_csv(path: Path, grades: dict[str, Grade], several: dict[str, list[Entry]], grading: Grading,
              penalties: bool = False) -> None:
    """One row per student; a student with several entries has empty cells. A student id that
    a spreadsheet would take for a formula (`-2-3`, `=cmd`) is written with a leading `'`; the
    gradebook keeps the id as it is. With `penalties`, a late penalty column before the total."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    penalty_column = ["late penalty"] if penalties else []
    writer.writerow([csv_cell(cell) for cell in ["student", *grading.parts, *penalty_column, "total"]])
    for student in sorted([*grades, *several]):
        grade = grades.get(student)
        if grade is None:
            writer.writerow([csv_cell(student), *([""] * (len(grading.parts) + len(penalty_column) + 1))])
            continue
        writer.writerow([csv_cell(student), *(number(grade.parts[part]) for part in grading.parts),
                         *([number(grade.penalty)] if penalties else []), number(grade.total)])
    put(path, buffer.getvalue())


def rows_csv(header: list[str], rows: list[list[str]]) -> str:
    """A CSV of `header` and `rows`, every cell of the rows safe from a spreadsheet's formulas."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([[csv_cell(cell) for cell in row] for row in rows])
    return buffer.getvalue()


def write_canvas(path: Path, grades: dict[str, Grade], grading: Grading, column: str) -> None:
    """Canvas's gradebook import: a row per student, found by Canvas's user id where the download
    gave one (else Canvas matches the name, or asks), and one assignment column, the total."""
    rows = [[CANVAS_POINTS, "", "", "", "", number(maximum(grading))]]
    for student, grade in grades.items():
        entry = grade.entry
        canvas_id = entry.lms_id if entry.lms == "canvas" and entry.lms_id.isdigit() else ""
        rows.append([student, canvas_id, "", "", "", number(grade.total)])
    put(path, rows_csv([*CANVAS_COLUMNS, column], rows))


def write_moodle(path: Path, grades: dict[str, Grade], column: str) -> None:
    """Moodle's gradebook import (Import > CSV file): the user, which the TA maps, and the grade;
    an LMS download's students are left out (Moodle stops the whole import at an unknown user)."""
    rows = [[student, number(grade.total)] for student, grade in grades.items() if not grade.entry.lms]
    put(path, rows_csv(["Student", column], rows))


def write_moodle_worksheet(path: Path, grades: dict[str, Grade], grading: Grading) -> None:
    """A Moodle assignment's grading worksheet (Upload grading worksheet), for the students of
    a Moodle download, by the participant id in their folder's name."""
    rows = [[f"Participant {grade.entry.lms_id}", grade.entry.lms_name, number(grade.total),
             number(maximum(grading)), grade.entry.graded_at]
            for grade in grades.values() if grade.entry.lms == "moodle"]
    put(path, rows_csv(list(MOODLE_WORKSHEET_COLUMNS), rows))


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

@cache
def suite_code() -> frozenset[str]:
    """Every line of the suites' and the plugin's code, docstrings left out (they describe the
    situation a check sets up, and students are meant to read them)."""
    lines = set()
    for path in [PLUGIN, *sorted(SUITES.glob("*.py"))]:
        source = path.read_text(encoding="utf-8")
        docstrings = set()
        for node in ast.walk(ast.parse(source)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings |= set(range(body[0].lineno, body[0].end_lineno + 1))
        for number_, line in enumerate(source.splitlines(), 1):
            if number_ not in docstrings and len(line.strip()) >= MIN_CODE_LINE:
                lines.add(line.strip())
    return frozenset(lines)


def shown(messages: str) -> str:
    """A part's messages without any line quoted from the suites' code."""
    code = suite_code()
    return "\n".join(line for line in messages.splitlines()
                     if line.lstrip("> ").strip() not in code and line.strip() not in code)


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
        found.append((heading, shown(score.messages), causes))
    return found


def score_rows(entry: Entry, grading: Grading) -> list[tuple[str, str, str]]:
    """The feedback's score table: (part, title, `points / most`) per part, then the total."""
    got = points(entry, grading)
    rows = [(part_id, part.title + (" (bonus)" if part.bonus and "bonus" not in part.title.lower() else ""),
             f"{number(got[part_id])} / {number(part.points)}") for part_id, part in grading.parts.items()]
    rows.append(("total", "", f"{number(round(sum(got.values()), 2))} / {number(maximum(grading))}"))
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


def feedback_markdown(entry: Entry, grading: Grading) -> str:
    """feedback/<student>.md: the score table, the notes on the files, the lost points' messages."""
    lines = [f"# Feedback for {markdown(entry.student)}", "",
             f"Submission {markdown(entry.source)} ({markdown(entry.format)}), graded "
             f"{markdown(entry.graded_at)}.", ""]
    if entry.status == "failed":
        lines += [f"**This submission could not be graded:** {markdown(entry.reason)}", ""]
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


def page(title: str, body: str) -> str:
    """An HTML page of the kit's style around `body` (already escaped)."""
    return (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def table(header: list[str], rows: list[list[str]], numeric: tuple[int, ...] = ()) -> str:
    """An HTML table; cells are already escaped."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>"


def inline(line: str) -> str:
    """One line of a message as HTML, with its `code` as <code>."""
    parts, at = [], 0
    for match in INLINE_CODE.finditer(line):
        parts += [html(line[at:match.start()]), f"<code>{html(match[2].strip())}</code>"]
        at = match.end()
    return "".join(parts) + html(line[at:])


def message_html(messages: str) -> str:
    """A part's messages as HTML: paragraphs, each snippet (its lines indented, blank lines
    between them included) as one code block, and `code` as <code>."""
    blocks: list[str] = []
    paragraph: list[str] = []
    snippet: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append("<p>" + "<br>\n".join(inline(line) for line in paragraph) + "</p>")
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
    """feedback/<student>.html: what feedback_markdown holds, as HTML."""
    parts = [f"<h1>Feedback for {html(entry.student)}</h1>",
             f"<p>Submission <code>{html(entry.source)}</code> ({html(entry.format)}), "
             f"graded {html(entry.graded_at)}.</p>"]
    if entry.status == "failed":
        parts.append(f"<p class='bad'><b>This submission could not be graded:</b> {html(entry.reason)}</p>")
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


# -- the class summary ---------------------------------------------------------------------------

def write_summary(out: Path, counted: dict[str, Entry], entries: list[Entry], several: dict[str, list[Entry]],
                  grading: Grading, names: dict[str, str], nbgrader: bool = False) -> None:
    """summary.html, its plots inside it. Every statistic counts the same students, those with
    a grade in grades.csv: a submission that could not be graded counts as zero in the mean and
    the pass rates alike. The misconceptions come from the graded ones."""
    graded = {s: e for s, e in counted.items() if e.status == "graded"}
    totals = [round(sum(points(e, grading).values()), 2) for e in counted.values()]
    got = {student: {score.part: score for score in entry.scores} for student, entry in counted.items()}
    pass_rates = {part: sum(part in mine and passed(mine[part]) for mine in got.values()) / len(counted)
                  if counted else 0.0 for part in grading.parts}
    met: dict[str, list[str]] = {}
    for student, entry in graded.items():
        for misconception in sorted({m for score in entry.scores for m in score.misconceptions}):
            met.setdefault(misconception, []).append(student)
    frequent = Counter({m: len(students) for m, students in met.items()}).most_common()
    plots = figures(totals, maximum(grading), pass_rates, frequent)
    images = {name: png(figure) for name, figure in plots.items()}
    for old in OLD_PLOTS:
        (out / old).unlink(missing_ok=True)

    failed = [e for e in entries if e.status == "failed"]
    ungraded = sum(e.status == "failed" for e in counted.values())
    students = len(counted) + len(several)
    body = [f"<h1>Class summary</h1><p>{len(entries)} submissions from {students} students: "
            f"{len(entries) - len(failed)} graded, {len(failed)} could not be graded.</p>"]
    if nbgrader:
        body.append("<p>The numbers here are the kit's autograding. grades.csv and the import files hold "
                    "nbgrader's grades, its grade of record: with the grades typed in formgrader and the "
                    "late penalties.</p>")
    counted_line = f"Over the {len(counted)} students with a grade in grades.csv" + (
        f"; the {ungraded} whose submission could not be graded count as 0" if ungraded else "") + (
        f"; the {len(several)} with several entries are left out" if several else "") + "."
    if totals:
        body.append(f"<p>Total out of {number(maximum(grading))}: mean {statistics.mean(totals):.1f}, "
                    f"median {number(statistics.median(totals))}, lowest {number(min(totals))}, "
                    f"highest {number(max(totals))}. {counted_line}</p>")
    body.append("<h2>Totals</h2>" + image(images["totals"], "histogram of the totals"))
    body.append("<h2>Pass rate per part</h2><p>The share of students who passed every check of the part "
                "(a part whose file is missing or did not import is not passed, whatever it is worth). "
                f"{counted_line}</p>" + image(images["parts"], "pass rate per part"))
    body.append(table(["part", "title", "passed"],
                      [[escape(part), escape(grading.parts[part].title), f"{rate:.0%}"]
                       for part, rate in pass_rates.items()], numeric=(2,)))
    body.append("<h2>Misconceptions</h2>")
    if frequent:
        body.append(image(images["misconceptions"], "most frequent misconceptions"))
        body.append(table(["misconception", "what it is", "students", "who"],
                          [[escape(m), inline(CATALOGUE[m].title if m in CATALOGUE else ""), str(count),
                            ", ".join(link(names[counted[s].source]) for s in met[m])]
                           for m, count in frequent], numeric=(2,)))
    else:
        body.append("<p>No graded submission showed a known misconception.</p>")
    if failed:
        body.append("<h2>Could not be graded</h2><p>Also in failures.jsonl.</p>")
        body.append(table(["source", "student", "reason"],
                          [[html(e.source), link(names[e.source]), html(e.reason)] for e in failed]))
    if several:
        body.append("<h2>Students with several entries</h2><p>Each entry was graded and has its feedback, "
                    "but none counts: grades.csv leaves the student's cells empty and the import files leave "
                    "the student out, until all but one entry are removed or renamed in the class folder (a "
                    "rerun then grades nothing again). Also in failures.jsonl.</p>")
        body.append(table(["student", "entry", "total", "status"],
                          [[html(student), link(names[e.source], e.source),
                            number(grade_of(e, grading).total), escape(e.status)]
                           for student, mine in several.items() for e in mine], numeric=(2,)))
    body.append("<h2>Students</h2>")
    body.append(table(["student", "source", "total", "status"],
                      [[link(names[e.source]), html(e.source), number(t), escape(e.status)]
                       for e, t in zip(counted.values(), totals)], numeric=(2,)))
    put(out / "summary.html", page("Class summary", "\n".join(body)))


def link(name: str, label: str | None = None) -> str:
    """A link to the feedback file `name`, shown as `label` (the name itself by default)."""
    return f"<a href='feedback/{escape(quote(name))}.html'>{html(name if label is None else label)}</a>"


def image(data: bytes, alt: str) -> str:
    """A PNG inside the page, so that summary.html is one file that can be mailed or moved."""
    return f"<img src='data:image/png;base64,{base64.b64encode(data).decode()}' alt='{escape(alt)}'>"


def figures(totals: list[float], most: float, pass_rates: dict[str, float],
            frequent: list[tuple[str, int]]) -> dict:
    """The summary's plots as matplotlib figures: totals, parts and, when any were met, misconceptions.
    Every axis that counts students has whole-number ticks."""
    import matplotlib  # imported here: only a bulk run that reaches its reports pays for it

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    made = {}
    figure, axes = pyplot.subplots(figsize=(7, 3.5))
    # Bars narrower than their bins: two full bins side by side stay two bars.
    axes.hist(totals, bins=min(20, max(5, len(totals))), range=(0, max([most, *totals])), color="#4c72b0",
              rwidth=0.85)
    axes.set(xlabel=f"total points (of {number(most)})", ylabel="students")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    made["totals"] = figure

    figure, axes = pyplot.subplots(figsize=(7, 0.4 * len(pass_rates) + 1))
    names = list(pass_rates)[::-1]
    axes.barh(names, [100 * pass_rates[n] for n in names], color="#55a868")
    axes.set(xlabel="students with full points (%)", xlim=(0, 100))
    made["parts"] = figure

    if frequent:
        top = frequent[:12][::-1]
        figure, axes = pyplot.subplots(figsize=(7, 0.4 * len(top) + 1))
        axes.barh([m for m, _ in top], [c for _, c in top], color="#c44e52")
        axes.set(xlabel="students")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        made["misconceptions"] = figure
    return made


def png(figure) -> bytes:
    """A matplotlib figure as PNG bytes; the figure is closed."""
    from matplotlib import pyplot

    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    pyplot.close(figure)
    return buffer.getvalue()
