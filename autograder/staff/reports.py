"""What a bulk run hands out, made from the gradebook's entries alone.

- grades.csv: one row per student, one column per part of grading.toml, and the total;
- feedback/<student>.md and .html: the score table and every message the student may see;
- summary.html with PNG plots: totals, the pass rate of each part, the misconceptions met;
- failures.jsonl: one JSON line per submission that could not be graded, with the reason.

Feedback never shows the checks of a hidden part, and no line of the suites' code (a
traceback of a failed check can quote it) reaches a student.
"""

from __future__ import annotations

import ast
import csv
import json
import shutil
import statistics
from collections import Counter
from functools import cache
from html import escape
from pathlib import Path

from .. import graphs
from ..config import Grading
from ..misconceptions import CATALOGUE
from .gradebook import Entry

SUITES = Path(__file__).parent.parent / "suites"
PLUGIN = Path(__file__).parent.parent / "conftest.py"
MIN_CODE_LINE = 8  # shorter lines (`)`, `else:`) say nothing about a suite
STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
td.n{text-align:right}pre{background:#f6f6f6;padding:.8rem;overflow-x:auto;white-space:pre-wrap}
.bad{color:#a00}img{max-width:100%}"""


def write_all(out: Path, entries: list[Entry], grading: Grading) -> None:
    chosen, duplicates = by_student(entries)
    write_csv(out / "grades.csv", chosen, grading)
    feedback = out / "feedback"
    shutil.rmtree(feedback, ignore_errors=True)
    feedback.mkdir()
    for student, entry in chosen.items():
        (feedback / f"{student}.md").write_text(feedback_markdown(entry, grading), encoding="utf-8")
        (feedback / f"{student}.html").write_text(feedback_html(entry, grading), encoding="utf-8")
    write_failures(out / "failures.jsonl", entries)
    write_summary(out, chosen, entries, duplicates, grading)


def by_student(entries: list[Entry]) -> tuple[dict[str, Entry], dict[str, list[str]]]:
    """The entry that counts for each student (the last by source) and the students with several."""
    chosen: dict[str, Entry] = {}
    sources: dict[str, list[str]] = {}
    for entry in sorted(entries, key=lambda e: e.source):
        chosen[entry.student] = entry
        sources.setdefault(entry.student, []).append(entry.source)
    duplicates = {student: found for student, found in sources.items() if len(found) > 1}
    return dict(sorted(chosen.items())), duplicates


def points(entry: Entry, grading: Grading) -> dict[str, float]:
    """Points per part of grading.toml; a part the entry has no score for (a failed run) is 0."""
    got = {score.part: score.points for score in entry.scores}
    return {part: got.get(part, 0.0) for part in grading.parts}


def maximum(grading: Grading) -> float:
    return sum(part.points for part in grading.parts.values() if not part.bonus)


def number(x: float) -> str:
    return f"{x:g}"


# -- grades.csv ----------------------------------------------------------------------------------

def write_csv(path: Path, chosen: dict[str, Entry], grading: Grading) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["student", *grading.parts, "total"])
        for student, entry in chosen.items():
            got = points(entry, grading)
            writer.writerow([student, *(number(got[part]) for part in grading.parts),
                             number(round(sum(got.values()), 2))])


def write_failures(path: Path, entries: list[Entry]) -> None:
    lines = [json.dumps({"source": e.source, "student": e.student, "format": e.format, "reason": e.reason,
                         "notes": e.notes, "content_hash": e.content_hash, "graded_at": e.graded_at})
             for e in entries if e.status == "failed"]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


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


def sections(entry: Entry, grading: Grading) -> list[tuple[str, str, list[str]]]:
    """(heading, messages, misconception lines) for each part that lost points."""
    found = []
    for score in entry.scores:
        part = grading.parts.get(score.part)
        if part is None or score.points >= score.max:
            continue
        heading = f"{score.part}: {part.title} ({number(score.points)} / {number(score.max)})"
        if part.visibility == "hidden":
            found.append((heading, "The checks of this part are hidden.", []))
            continue
        causes = [f"{CATALOGUE[m].title} [{m}]" if m in CATALOGUE else m for m in score.misconceptions]
        found.append((heading, shown(score.messages), causes))
    return found


def score_rows(entry: Entry, grading: Grading) -> list[tuple[str, str, str]]:
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


def feedback_markdown(entry: Entry, grading: Grading) -> str:
    lines = [f"# Feedback for {entry.student}", "",
             f"Submission `{entry.source}` ({entry.format}), graded {entry.graded_at}.", ""]
    if entry.status == "failed":
        lines += [f"**This submission could not be graded:** {entry.reason}", ""]
    lines += ["| part | | points |", "| --- | --- | ---: |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
              for row in score_rows(entry, grading)]
    if entry.notes:
        lines += ["", "## Your files", ""] + [f"- {note}" for note in entry.notes]
    for heading, messages, causes in sections(entry, grading):
        lines += ["", f"## {heading}", ""]
        lines += [f"- Likely cause: {cause}" for cause in causes] + ([""] if causes else [])
        lines += [rendered(messages, markdown=True)]
    return "\n".join(lines) + "\n"


def rendered(messages: str, markdown: bool) -> str:
    """A part's messages as text blocks (a code fence, or <pre>), with each graph report's
    table (graphs.py) as a table of its own, its marked row in bold."""
    out = []
    for block in graphs.blocks(messages):
        if isinstance(block, str):
            mark = fence(block)
            out.append(f"{mark}text\n{block}\n{mark}" if markdown else f"<pre>{escape(block)}</pre>")
        elif markdown:
            lines = ["| " + " | ".join(block.header) + " |", "|" + " --- |" * len(block.header)]
            for index, row in enumerate(block.rows):
                cells = [f"`{cell}`" if column == 2 and cell else cell.replace("|", "\\|")
                         for column, cell in enumerate(row)]  # column 2 is the submission's op label
                if index == block.marked:
                    cells = [f"**{cell}**" if cell else cell for cell in cells]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n" + "\n".join(lines) + "\n")
        else:
            rows = ""
            for index, row in enumerate(block.rows):
                cells = [f"<b>{escape(cell)}</b>" if index == block.marked else escape(cell) for cell in row]
                rows += ("<tr class='bad'>" if index == block.marked else "<tr>") \
                    + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>\n"
            head = "".join(f"<th>{escape(name)}</th>" for name in block.header)
            out.append(f"<table><tr>{head}</tr>\n{rows}</table>")
    return "\n".join(out)


def page(title: str, body: str) -> str:
    return (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def table(header: list[str], rows: list[list[str]], numeric: tuple[int, ...] = ()) -> str:
    """An HTML table; cells are already escaped."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>"


def feedback_html(entry: Entry, grading: Grading) -> str:
    parts = [f"<h1>Feedback for {escape(entry.student)}</h1>",
             f"<p>Submission <code>{escape(entry.source)}</code> ({escape(entry.format)}), "
             f"graded {escape(entry.graded_at)}.</p>"]
    if entry.status == "failed":
        parts.append(f"<p class='bad'><b>This submission could not be graded:</b> {escape(entry.reason)}</p>")
    rows = [[escape(cell) for cell in row] for row in score_rows(entry, grading)]
    parts.append(table(["part", "", "points"], rows, numeric=(2,)))
    if entry.notes:
        parts.append("<h2>Your files</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in entry.notes)
                     + "</ul>")
    for heading, messages, causes in sections(entry, grading):
        parts.append(f"<h2>{escape(heading)}</h2>")
        parts += [f"<p>Likely cause: {escape(cause)}</p>" for cause in causes]
        parts.append(rendered(messages, markdown=False))
    return page(f"Feedback for {entry.student}", "\n".join(parts))


# -- the class summary ---------------------------------------------------------------------------

def write_summary(out: Path, chosen: dict[str, Entry], entries: list[Entry],
                  duplicates: dict[str, list[str]], grading: Grading) -> None:
    graded = {s: e for s, e in chosen.items() if e.status == "graded"}
    totals = [round(sum(points(e, grading).values()), 2) for e in chosen.values()]
    pass_rates = {part: sum(points(e, grading)[part] >= grading.parts[part].points for e in graded.values())
                  / len(graded) if graded else 0.0 for part in grading.parts}
    met: dict[str, list[str]] = {}
    for student, entry in graded.items():
        for misconception in sorted({m for score in entry.scores for m in score.misconceptions}):
            met.setdefault(misconception, []).append(student)
    frequent = Counter({m: len(students) for m, students in met.items()}).most_common()
    plot(out, totals, maximum(grading), pass_rates, frequent)

    failed = [e for e in entries if e.status == "failed"]
    body = [f"<h1>Class summary</h1><p>{len(entries)} submissions from {len(chosen)} students: "
            f"{len(entries) - len(failed)} graded, {len(failed)} could not be graded.</p>"]
    if totals:
        body.append(f"<p>Total out of {number(maximum(grading))}: mean {statistics.mean(totals):.1f}, "
                    f"median {number(statistics.median(totals))}, lowest {number(min(totals))}, "
                    f"highest {number(max(totals))}.</p>")
    body.append("<h2>Totals</h2><img src='totals.png' alt='histogram of the totals'>")
    body.append("<h2>Pass rate per part</h2><p>The share of graded students with full points on the part."
                "</p><img src='parts.png' alt='pass rate per part'>")
    body.append(table(["part", "title", "full points"],
                      [[escape(part), escape(grading.parts[part].title), f"{rate:.0%}"]
                       for part, rate in pass_rates.items()], numeric=(2,)))
    body.append("<h2>Misconceptions</h2>")
    if frequent:
        body.append("<img src='misconceptions.png' alt='most frequent misconceptions'>")
        body.append(table(["misconception", "what it is", "students", "who"],
                          [[escape(m), escape(CATALOGUE[m].title if m in CATALOGUE else ""), str(count),
                            ", ".join(link(s) for s in met[m])] for m, count in frequent], numeric=(2,)))
    else:
        body.append("<p>No graded submission showed a known misconception.</p>")
    if failed:
        body.append("<h2>Could not be graded</h2><p>Also in failures.jsonl.</p>")
        body.append(table(["source", "student", "reason"],
                          [[escape(e.source), link(e.student), escape(e.reason)] for e in failed]))
    if duplicates:
        body.append("<h2>Students with several submissions</h2><p>grades.csv and the feedback use the last "
                    "one listed; remove the others from the class folder to choose another.</p>")
        body.append(table(["student", "submissions"], [[link(s), escape(", ".join(found))]
                                                       for s, found in duplicates.items()]))
    body.append("<h2>Students</h2>")
    body.append(table(["student", "source", "total", "status"],
                      [[link(s), escape(e.source), number(t), escape(e.status)]
                       for (s, e), t in zip(chosen.items(), totals)], numeric=(2,)))
    (out / "summary.html").write_text(page("Class summary", "\n".join(body)), encoding="utf-8")


def link(student: str) -> str:
    return f"<a href='feedback/{escape(student)}.html'>{escape(student)}</a>"


def plot(out: Path, totals: list[float], most: float, pass_rates: dict[str, float],
         frequent: list[tuple[str, int]]) -> None:
    """totals.png, parts.png and, when any were met, misconceptions.png."""
    import matplotlib  # imported here: only a bulk run that reaches its reports pays for it

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(7, 3.5))
    axes.hist(totals, bins=min(20, max(5, len(totals))), range=(0, max([most, *totals])), color="#4c72b0")
    axes.set(xlabel=f"total points (of {number(most)})", ylabel="students")
    save(figure, out / "totals.png")

    figure, axes = pyplot.subplots(figsize=(7, 0.4 * len(pass_rates) + 1))
    names = list(pass_rates)[::-1]
    axes.barh(names, [100 * pass_rates[n] for n in names], color="#55a868")
    axes.set(xlabel="students with full points (%)", xlim=(0, 100))
    save(figure, out / "parts.png")

    target = out / "misconceptions.png"
    target.unlink(missing_ok=True)
    if frequent:
        top = frequent[:12][::-1]
        figure, axes = pyplot.subplots(figsize=(7, 0.4 * len(top) + 1))
        axes.barh([m for m, _ in top], [c for _, c in top], color="#c44e52")
        axes.set(xlabel="students")
        axes.xaxis.get_major_locator().set_params(integer=True)
        save(figure, target)


def save(figure, path: Path) -> None:
    from matplotlib import pyplot

    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
