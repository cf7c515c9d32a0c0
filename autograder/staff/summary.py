"""summary.html: the class in one page, its plots inside it, made from the gradebook's entries."""

from __future__ import annotations

import base64
import io
import statistics
from collections import Counter
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from ..config import Grading
from ..escape import html
from ..intake.zips import NOT_READ
from ..misconceptions import CATALOGUE
from ..worker import TIMED_OUT
from .gradebook import Entry
from .outcomes import grade_of, maximum, passed, points
from .pages import inline, number, page, put, table

OLD_PLOTS = ("totals.png", "parts.png", "misconceptions.png")  # summary.html holds its plots now
# What a worker left and the sweep could not remove: said of each in the console and the summary.
LEFT_BEHIND = ("left by a worker and could not be removed: closed to every account meanwhile, so that "
               "no later worker reaches it, and no grade changes for it; the next grading on this "
               "machine removes it (else remove it by hand)")


@dataclass
class ClassNumbers:
    """What the summary says of the class, counted over the students with a grade in grades.csv."""

    totals: list[float]
    pass_rates: dict[str, float]
    met: dict[str, list[str]]  # each misconception met, and the graded students who met it
    frequent: list[tuple[str, int]]


def class_numbers(counted: dict[str, Entry], grading: Grading) -> ClassNumbers:
    """Totals and pass rates over every counted student (one that could not be graded as zero),
    the misconceptions over the graded ones."""
    totals = [round(sum(points(e, grading).values()) + e.total_change, 2) for e in counted.values()]
    got = {student: {score.part: score for score in entry.scores} for student, entry in counted.items()}
    pass_rates = {part: sum(part in mine and passed(mine[part]) for mine in got.values()) / len(counted)
                  if counted else 0.0 for part in grading.parts}
    met: dict[str, list[str]] = {}
    for student, entry in counted.items():
        if entry.status != "graded":
            continue
        for misconception in sorted({m for score in entry.scores for m in score.misconceptions}):
            met.setdefault(misconception, []).append(student)
    frequent = Counter({m: len(students) for m, students in met.items()}).most_common()
    return ClassNumbers(totals, pass_rates, met, frequent)


def write_summary(out: Path, counted: dict[str, Entry], entries: list[Entry], several: dict[str, list[Entry]],
                  grading: Grading, names: dict[str, str], nbgrader: bool = False,
                  lms: list[str] | None = None, left: list[str] | None = None) -> None:
    """summary.html, its plots inside it. Every statistic counts the same students, those with
    a grade in grades.csv: a submission that could not be graded counts as zero in the mean and
    the pass rates alike. The misconceptions come from the graded ones. `left`: what workers
    left on this machine that could not be removed."""
    numbers = class_numbers(counted, grading)
    plots = figures(numbers.totals, maximum(grading), numbers.pass_rates, numbers.frequent)
    images = {name: png(figure) for name, figure in plots.items()}
    for old in OLD_PLOTS:
        (out / old).unlink(missing_ok=True)
    counted_line = counted_sentence(counted, several)
    body = summary_head(counted, entries, several, grading, numbers, nbgrader, counted_line)
    body += summary_parts(grading, numbers, images, counted_line)
    body += summary_misconceptions(counted, numbers, images, names)
    body += summary_problems(entries, several, grading, names)
    body += summary_timeouts(entries)
    body += summary_not_read(entries, names)
    body += lms or []
    body += summary_left(left or [])
    body.append("<h2>Students</h2>")
    body.append(table(["student", "source", "total", "status"],
                      [[link(names[e.source]), html(e.source), number(t), escape(e.status)]
                       for e, t in zip(counted.values(), numbers.totals)], numeric=(2,)))
    put(out / "summary.html", page("Class summary", "\n".join(body)))


def counted_sentence(counted: dict[str, Entry], several: dict[str, list[Entry]]) -> str:
    """The sentence that says which students the statistics count."""
    ungraded = sum(e.status == "failed" for e in counted.values())
    return f"Over the {len(counted)} students with a grade in grades.csv" + (
        f"; the {ungraded} whose submission could not be graded count as 0" if ungraded else "") + (
        f"; the {len(several)} with several entries are left out" if several else "") + "."


def summary_head(counted: dict[str, Entry], entries: list[Entry], several: dict[str, list[Entry]],
                 grading: Grading, numbers: ClassNumbers, nbgrader: bool, counted_line: str) -> list[str]:
    """The summary's heading, its count of submissions and students, and the totals."""
    failed = sum(e.status == "failed" for e in entries)
    students = len(counted) + len(several)
    body = [f"<h1>Class summary</h1><p>{len(entries)} submissions from {students} students: "
            f"{len(entries) - failed} graded, {failed} could not be graded.</p>"]
    if nbgrader:
        body.append("<p>The numbers here are the kit's autograding. grades.csv and the import files hold "
                    "nbgrader's grades, its grade of record: with the grades typed in formgrader and the "
                    "late penalties.</p>")
    totals = numbers.totals
    if totals:
        body.append(f"<p>Total out of {number(maximum(grading))}: mean {statistics.mean(totals):.1f}, "
                    f"median {number(statistics.median(totals))}, lowest {number(min(totals))}, "
                    f"highest {number(max(totals))}. {counted_line}</p>")
    return body


def summary_parts(grading: Grading, numbers: ClassNumbers, images: dict[str, bytes],
                  counted_line: str) -> list[str]:
    """The histogram of totals, and the pass rate of every part."""
    return ["<h2>Totals</h2>" + image(images["totals"], "histogram of the totals"),
            "<h2>Pass rate per part</h2><p>The share of students who passed every check of the part "
            "(a part whose file is missing or did not import is not passed, whatever it is worth). "
            f"{counted_line}</p>" + image(images["parts"], "pass rate per part"),
            table(["part", "title", "passed"],
                  [[escape(part), escape(grading.parts[part].title), f"{rate:.0%}"]
                   for part, rate in numbers.pass_rates.items()], numeric=(2,))]


def summary_misconceptions(counted: dict[str, Entry], numbers: ClassNumbers, images: dict[str, bytes],
                           names: dict[str, str]) -> list[str]:
    """The misconceptions the class met most, and who met each."""
    body = ["<h2>Misconceptions</h2>"]
    if not numbers.frequent:
        return [*body, "<p>No graded submission showed a known misconception.</p>"]
    body.append(image(images["misconceptions"], "most frequent misconceptions"))
    body.append(table(["misconception", "what it is", "students", "who"],
                      [[escape(m), inline(CATALOGUE[m].title if m in CATALOGUE else ""), str(count),
                        ", ".join(link(names[counted[s].source]) for s in numbers.met[m])]
                       for m, count in numbers.frequent], numeric=(2,)))
    return body


def summary_problems(entries: list[Entry], several: dict[str, list[Entry]], grading: Grading,
                     names: dict[str, str]) -> list[str]:
    """The submissions that could not be graded, and the students with several entries."""
    body = []
    failed = [e for e in entries if e.status == "failed"]
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
    return body


def summary_not_read(entries: list[Entry], names: dict[str, str]) -> list[str]:
    """The members of submissions' zips that were passed over, with the reason (also in each
    student's feedback)."""
    rows = [[html(e.source), link(names[e.source]), html(note)] for e in entries for note in e.notes
            if NOT_READ in note]
    if not rows:
        return []
    return ["<h2>Files not read from zips</h2><p>Each student is told in their feedback.</p>",
            table(["source", "student", "files passed over, and why"], rows)]


def summary_left(left: list[str]) -> list[str]:
    """What workers left that could not be removed: no grade changes for it."""
    if not left:
        return []
    return [f"<h2>Left by workers</h2><p>Each of these was {LEFT_BEHIND}.</p>",
            table(["path"], [[html(path)] for path in left])]


def summary_timeouts(entries: list[Entry]) -> list[str]:
    """How much of the class's grading time went to the submissions with a check that timed out
    (a hang, or code far slower than the reference), and how much CPU time those checks had."""
    timed_out = [e for e in entries if any(TIMED_OUT.search(score.messages) for score in e.scores)]
    total = sum(e.seconds for e in entries)
    if not timed_out or not total:
        return []
    took = sum(e.seconds for e in timed_out)
    given = sum(float(limit) for e in timed_out for score in e.scores
                for limit in TIMED_OUT.findall(score.messages))
    count = f"{len(timed_out)} submission{'s' if len(timed_out) > 1 else ''}"
    return [f"<h2>Timeouts</h2><p>Grading took {total:.1f} s, each submission's time added up; {took:.1f} s "
            f"of it ({took / total:.0%}) went to the {count} with a check that timed out (a hang, or code "
            f"far slower than the reference), whose checks that timed out had {given:.1f} s of CPU time.</p>"]


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
