"""The TA's hand on the grade: adjustments (`--adjustments FILE`) and extensions (`--extensions FILE`).

An adjustment file is a CSV of `student,part,points,reason`: `part` is a part id of grading.toml
or `total`, `points` a change (`+2`, `-10`) or a set value (`=0`), with a trailing `!` where it
may leave 0 .. the maximum. An extension file is `student,due`: the student's own due time for
the late policy. A student is the kit's id, as the `student` column of grades.csv writes it.

Both files are read in full before anything is graded or written (`read`); every problem is one
line naming the file, the line and the fix. They are applied afresh to the gradebook's grades
on every run (`ByHand.apply`), never stored into them: an adjustment counts once however often
the class is graded again, follows the student to a resubmission, and a changed file changes
every report of the next run.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import re
from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from pathlib import Path

from ..config import Grading
from ..escape import FORMULA_START, csv_cell, html
from ..safe_files import UnreadableFile, read_regular
from .gradebook import Entry, Score
from .pages import number, table
from .policies import Policy, parse_time
from .roster import Roster, join, name_keys

MAX_FILE_BYTES = 5 * 1024 * 1024
ADJUSTMENT_COLUMNS = ("student", "part", "points", "reason")
EXTENSION_COLUMNS = ("student", "due")
TOTAL = "total"
NO_ENTRY = "no entry of this student in the gradebook"
POINTS = re.compile(r"^(?P<kind>[+=-])\s*(?P<value>\d+(\.\d+)?)\s*(?P<beyond>!?)$")


class ByHandError(Exception):
    """An adjustment or extension file cannot be used; `problems` says each, with its line and fix."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in the adjustments "
                         "and extensions")
        self.problems = problems


@dataclass(frozen=True)
class Adjustment:
    """One row of the adjustment file."""

    student: str
    part: str  # a part id, or "total"
    points: str  # as written: "+2", "=0", "+5!"
    change: float  # the signed change, or the value set
    sets: bool  # "=": the points become `change`
    beyond: bool  # "!": may leave 0 .. the maximum
    reason: str
    file: Path
    line: int

    def words(self) -> str:
        """The adjustment as the student reads it: `value.mul +2: the message was unclear`."""
        what = f"set to {number(self.change)}" if self.sets else f"{self.change:+g}"
        return f"{self.part} {what}: {self.reason}"


@dataclass(frozen=True)
class Extension:
    """One row of the extension file: the student's own due time."""

    student: str
    due: datetime
    file: Path
    line: int


@dataclass
class Applied:
    """What one adjustment did this run: to which submission, the points before and after, and
    what was said of it; or why it was not applied (`source` empty)."""

    adjustment: Adjustment
    source: str = ""
    content_hash: str = ""
    before: float | None = None
    after: float | None = None
    note: str = ""


@dataclass
class ByHand:
    """The run's adjustments and extensions, and, once applied, what each did."""

    given: set[str] = field(default_factory=set)  # "adjustments", "extensions": the files this run was given
    adjustments: list[Adjustment] = field(default_factory=list)
    extensions: list[Extension] = field(default_factory=list)
    absent: dict[str, str] = field(default_factory=dict)  # student -> why not in this run's class
    applied: list[Applied] = field(default_factory=list)
    extended: dict[str, str] = field(default_factory=dict)  # student -> the source it was applied to
    unextended: dict[str, str] = field(default_factory=dict)  # student -> why not applied

    def apply(self, entries: list[Entry], grading: Grading) -> list[Entry]:
        """Every entry, with the adjustments and the extension of its student applied to a copy
        (part rows first, then the total). A student with several entries, or whose submission
        could not be graded, keeps the grade as graded: the row is listed with why."""
        mine: dict[str, list[Entry]] = {}
        for entry in entries:
            mine.setdefault(entry.student, []).append(entry)
        self.applied, self.extended, self.unextended = [], {}, {}
        changed = {}
        for student, found in mine.items():
            rows = [a for a in self.adjustments if a.student == student]
            extension = next((e for e in self.extensions if e.student == student), None)
            why = not_applied(found)
            if why:
                self.applied += [Applied(row, note=why) for row in rows]
                if extension:
                    self.unextended[student] = why
                continue
            if rows or extension:
                changed[found[0].source] = self.adjusted(found[0], rows, extension, grading)
        for adjustment in self.adjustments:
            if adjustment.student not in mine:
                self.applied.append(Applied(adjustment, note=self.absent.get(adjustment.student, NO_ENTRY)))
        for extension in self.extensions:
            if extension.student not in mine:
                self.unextended[extension.student] = self.absent.get(extension.student, NO_ENTRY)
        self.applied.sort(key=lambda a: (a.adjustment.file, a.adjustment.line))
        return [changed.get(entry.source, entry) for entry in entries]

    def adjusted(self, entry: Entry, rows: list[Adjustment], extension: Extension | None,
                 grading: Grading) -> Entry:
        """A copy of a graded entry with its rows applied, each said in `entry.by_hand`."""
        best = sum(part.points for part in grading.parts.values())
        scores = {score.part: dataclasses.replace(score) for score in entry.scores}
        said, total_change = [], 0.0
        for row in sorted(rows, key=lambda a: a.part == TOTAL):
            if row.part == TOTAL:
                before = round(sum(score.points for score in scores.values()), 2)
                after, note = within(row, before, best, "the points with the bonus")
                total_change = round(after - before, 2)
            else:
                most = float(grading.parts[row.part].points)
                score = scores.setdefault(row.part, Score(row.part, 0.0, most))
                before = score.points
                after, note = within(row, before, score.max, "the part's maximum")
                score.points = after
            self.applied.append(Applied(row, entry.source, entry.content_hash, before, after, note))
            said.append(f"{row.words()} ({number(before)} → {number(after)})")
        copy = dataclasses.replace(entry, scores=list(scores.values()), by_hand=said,
                                   total_change=total_change)
        if extension is not None:
            copy.due = extension.due.isoformat(timespec="minutes")
            self.extended[entry.student] = entry.source
        return copy

    def lines(self) -> list[str]:
        """What the console says: each row not applied, or applied with a warning, and the count."""
        said = [f"{where(a.adjustment)}: {a.adjustment.student} {a.adjustment.part} {a.adjustment.points}: "
                f"{'not applied: ' if not a.source else ''}{a.note}" for a in self.applied if a.note]
        said += [f"{where(e)}: extension of {e.student} not applied: {self.unextended[e.student]}"
                 for e in self.extensions if e.student in self.unextended]
        done = sum(bool(a.source) for a in self.applied)
        if self.adjustments or self.extensions:
            said.append(f"by hand: {done} of {len(self.adjustments)} adjustments and {len(self.extended)} of "
                        f"{len(self.extensions)} extensions applied (listed in summary.html, and in the "
                        "gradebook's adjustments and extensions tables)")
        return said

    def grades_csv(self, entry: Entry) -> tuple[str, str]:
        """grades.csv's `adjustment` cells of a student: the net change in points and the reasons."""
        rows = [a for a in self.applied if a.source == entry.source]
        if not rows:
            return "", ""
        return (number(round(sum(a.after - a.before for a in rows), 2)),
                csv_cell("; ".join(a.adjustment.words() for a in rows)))

    def summary(self, grades: dict) -> list[str]:
        """summary.html's account of every adjustment and extension, applied or not, with its reason,
        the file and line it came from; `grades` is each student's Grade (outcomes.py)."""
        if not self.adjustments and not self.extensions:
            return []
        body = ["<h2>By hand: adjustments and extensions</h2>"]
        if self.adjustments:
            rows = [[html(a.adjustment.student), escape(a.adjustment.part), escape(a.adjustment.points),
                     "" if a.before is None else number(a.before), "" if a.after is None else number(a.after),
                     html(a.adjustment.reason), html(a.note) if a.source else f"not applied: {html(a.note)}",
                     escape(where(a.adjustment))]
                    for a in self.applied]
            body.append("<p>Applied to the grades as graded, before the late policy and the LMS's points, "
                        "on every run; a part's points stay within 0 and its maximum unless the row ends "
                        "in <code>!</code>.</p>")
            header = ["student", "part", "points", "before", "after", "reason", "note", "from"]
            body.append(table(header, rows, numeric=(3, 4)))
        if self.extensions:
            rows = []
            for extension in self.extensions:
                grade = grades.get(extension.student)
                if extension.student in self.extended and grade is not None:
                    how = grade.late_how or "on time"
                    outcome = f"{html(how)}; late penalty {number(grade.penalty)}"
                else:
                    outcome = f"not applied: {html(self.unextended.get(extension.student, 'no grade'))}"
                handed_in = html(grade.submitted_at) if grade is not None else ""
                rows.append([html(extension.student), escape(extension.due.isoformat(timespec="minutes")),
                             handed_in, outcome, escape(where(extension))])
            body.append(table(["student", "due", "handed in", "outcome", "from"], rows))
        return body

    def records(self) -> dict[str, list[tuple]]:
        """The gradebook's rows of this run, by table, for the files it was given
        (gradebook.Gradebook.record_by_hand)."""
        adjustments = [(row.student, row.part, row.points, row.reason, str(row.file), row.line, a.source,
                        a.content_hash, a.before, a.after, a.note)
                       for a in self.applied for row in [a.adjustment]]
        extensions = [(e.student, e.due.isoformat(timespec="minutes"), str(e.file), e.line,
                       self.extended.get(e.student, ""), self.unextended.get(e.student, ""))
                      for e in self.extensions]
        tables = {"adjustments": adjustments, "extensions": extensions}
        return {name: rows for name, rows in tables.items() if name in self.given}


def where(row: Adjustment | Extension) -> str:
    """`adjustments.csv:4`: the row's file, by its name, and line."""
    return f"{row.file.name}:{row.line}"


def not_applied(found: list[Entry]) -> str:
    """Why a student's entries take no adjustment, or ""."""
    if len(found) > 1:
        return (f"{len(found)} entries are this student's ({', '.join(e.source for e in found)}) and none "
                "counts; applied once all but one are removed")
    if found[0].status != "graded":
        return f"held back: {found[0].source} could not be graded"
    return ""


def within(row: Adjustment, before: float, most: float, named: str) -> tuple[float, str]:
    """The points after `row`, kept within 0 and `most` unless it ends in `!`, and what to say."""
    after = round(row.change if row.sets else before + row.change, 2)
    if 0 <= after <= most:
        return after, ""
    if row.beyond:
        return after, f"{number(after)}, outside 0 .. {number(most)} ({named}), as its `!` asks"
    kept = min(max(after, 0.0), most)
    return kept, (f"{number(after)} would leave 0 .. {number(most)} ({named}): kept at {number(kept)}; end "
                  f"the points with ! ({row.points}!) to go past it")


# -- reading the files ---------------------------------------------------------------------------

def read(adjustments: Path | None, extensions: Path | None, students: set[str], grading: Grading,
         policy: Policy, roster: Roster | None = None, entries: list | None = None,
         submissions_folder: Path | None = None) -> ByHand | None:
    """Both files, checked against the class (`students`: the kit's id of every entry of the class
    folder; `entries`, the class's entries or submissions, for the roster's join); None when
    neither is given. Raises ByHandError with every problem of both."""
    if adjustments is None and extensions is None:
        return None
    problems: list[str] = []
    found = ByHand()
    if extensions is not None and policy.late is None:
        problems.append(f"{extensions}: an extension moves a student's due time for the late policy, and "
                        "this run has none: give --late-per-day POINTS (and --due WHEN) too")
    claimed = claimed_people(roster, entries or [])
    found.given = {name for name, path in (("adjustments", adjustments), ("extensions", extensions)) if path}
    for path, columns in ((adjustments, ADJUSTMENT_COLUMNS), (extensions, EXTENSION_COLUMNS)):
        if path is None:
            continue
        if submissions_folder is not None and path.absolute().is_relative_to(submissions_folder.absolute()):
            problems.append(f"{path}: inside the class folder, where it would be taken for a student's "
                            "entry; keep it beside the class folder")
            continue
        rows = table_of(path, columns, problems)
        for line, row in rows:
            student = who(path, line, row["student"], students, roster, claimed, found, problems)
            if student is None:
                continue
            if columns is ADJUSTMENT_COLUMNS:
                made = adjustment(path, line, student, row, grading, problems)
                if made is not None:
                    found.adjustments.append(made)
            else:
                made = extension(path, line, student, row["due"], problems)
                if made is not None:
                    found.extensions.append(made)
    problems += contradictions(found)
    if problems:
        raise ByHandError(problems)
    return found


def table_of(path: Path, columns: tuple[str, ...], problems: list[str]) -> list[tuple[int, dict[str, str]]]:
    """The rows of a file with `columns` (any order, any case), by line; blank lines skipped."""
    example = ",".join(columns)
    try:
        text = read_regular(path, MAX_FILE_BYTES).decode("utf-8-sig")
    except UnreadableFile as error:
        problems.append(f"{path}: {error}")
        return []
    except UnicodeDecodeError as error:
        line = error.object[:error.start].count(b"\n") + 1
        problems.append(f"{path}, line {line}: not UTF-8; save the file as 'CSV UTF-8' from the spreadsheet")
        return []
    if not text.strip():
        problems.append(f"{path}: the file is empty; its first line is the header {example}, then a row "
                        "each")
        return []
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","  # a spreadsheet in some locales
    lines = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    header = [cell.strip().casefold() for cell in lines[0]]
    if sorted(header) != sorted(columns):
        problems.append(f"{path}, line 1: the header is {','.join(lines[0])!r}; write {example}")
        return []
    rows = []
    for line, cells in enumerate(lines[1:], 2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(columns):
            problems.append(f"{path}, line {line}: {len(cells)} fields where the header has {len(columns)} "
                            f"({example}); quote a cell that holds a comma")
            continue
        rows.append((line, {name: cell.strip() for name, cell in zip(header, cells)}))
    return rows


def who(path: Path, line: int, student: str, students: set[str], roster: Roster | None,
        claimed: dict[int, str], found: ByHand, problems: list[str]) -> str | None:
    """The kit's id a row names, or None: said as a problem where it names no one, or kept in
    `found.absent` where it names a student of the roster with no entry in this class."""
    where_ = f"{path}, line {line}"
    if student.startswith("'") and student[1:].startswith(FORMULA_START):
        student = student[1:]  # as grades.csv writes an id a spreadsheet would take for a formula
    if student in students:
        return student
    if not student:
        problems.append(f"{where_}: no student; write the student's id as grades.csv's student column has it")
        return None
    people = people_named(roster, student)
    if len(people) == 1:
        index = people[0]
        if index in claimed:
            problems.append(f"{where_}: {student!r} is {roster.people[index].name} of the roster, whose id "
                            f"in this class is {claimed[index]!r}: write that, as grades.csv has it")
            return None
        found.absent[student] = (f"{roster.people[index].name} (line {roster.people[index].line} of the "
                                 "roster) has no entry in this run's class")
        return student
    close = difflib.get_close_matches(student, sorted(students), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    nowhere = "the class folder or the roster" if roster else "the class folder"
    problems.append(f"{where_}: no student {student!r} in {nowhere}{hint}; write the id as grades.csv's "
                    "student column has it, or remove the line")
    return None


def people_named(roster: Roster | None, text: str) -> list[int]:
    """The roster's people that `text` names: by an identifier, else by the name."""
    if roster is None:
        return []
    ids = [i for i, person in enumerate(roster.people) if text.casefold() in person.identifiers()]
    if ids:
        return ids
    keys = name_keys(text)
    return [i for i, person in enumerate(roster.people) if keys & name_keys(person.name)]


def claimed_people(roster: Roster | None, entries: list) -> dict[int, str]:
    """The roster's people an entry of the class joins, and that entry's id."""
    if roster is None or not entries:
        return {}
    joined = join(roster, entries)
    claimed = {index: entry.student for index, entry in joined.matched.items()}
    claimed.update({index: mine[0].student for index, mine in joined.several.items()})
    return claimed


def adjustment(path: Path, line: int, student: str, row: dict[str, str], grading: Grading,
               problems: list[str]) -> Adjustment | None:
    """One adjustment row, or None with its problems said."""
    where_ = f"{path}, line {line}"
    before = len(problems)
    part = row["part"]
    if part != TOTAL and part not in grading.parts:
        close = difflib.get_close_matches(part, [*grading.parts, TOTAL], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(f"{where_}: no part {part!r} in grading.toml{hint}; write a part id such as "
                        f"{next(iter(grading.parts))} or {TOTAL}")
    points = POINTS.match(row["points"])
    if points is None:
        problems.append(f"{where_}: points {row['points']!r}: write a change as +2 or -10, a set value as "
                        "=0, with a decimal point (2.5), and ! at the end to allow leaving 0 .. the maximum")
    if not row["reason"]:
        problems.append(f"{where_}: no reason; every adjustment says why (the student reads it in the "
                        "feedback)")
    if len(problems) > before:
        return None
    value = float(points["value"])
    sets, beyond = points["kind"] == "=", bool(points["beyond"])
    most = (sum(p.points for p in grading.parts.values()) if part == TOTAL
            else float(grading.parts[part].points))
    if sets and value > most and not beyond:
        problems.append(f"{where_}: ={points['value']} is above {part}'s {number(most)} points; write "
                        f"={points['value']}! if that is meant")
        return None
    change = -value if points["kind"] == "-" else value
    written = row["points"].replace(" ", "")
    return Adjustment(student, part, written, change, sets, beyond, row["reason"], path, line)


def extension(path: Path, line: int, student: str, due: str, problems: list[str]) -> Extension | None:
    """One extension row, or None with its problem said."""
    when = parse_time(due)
    if when is None or when.tzinfo is None or len(due) <= len("2026-12-01"):
        problems.append(f"{path}, line {line}: due {due!r}: write a date and time with its zone, as "
                        "2026-12-03T23:59+01:00 (or Z for UTC)")
        return None
    return Extension(student, when, path, line)


def contradictions(found: ByHand) -> list[str]:
    """Two rows for one student and part, or two extensions for one student."""
    problems = []
    seen: dict[tuple[str, str], Adjustment] = {}
    for row in found.adjustments:
        key = (row.student, row.part)
        if key in seen:
            first = seen[key]
            problems.append(f"{first.file}, lines {first.line} and {row.line}: two adjustments of "
                            f"{row.student}'s {row.part} ({first.points}, {row.points}); keep one row per "
                            "student and part (one change, with both reasons)")
        seen.setdefault(key, row)
    due: dict[str, Extension] = {}
    for row in found.extensions:
        if row.student in due:
            first = due[row.student]
            problems.append(f"{first.file}, lines {first.line} and {row.line}: two due times for "
                            f"{row.student}; keep one")
        due.setdefault(row.student, row)
    return problems


def said(entry: Entry) -> list[str]:
    """The lines of a student's feedback that say what the course staff changed, each on its own:
    every adjustment with its reason, and the student's own due time."""
    lines = [f"Adjusted by the course staff: {line}" for line in entry.by_hand]
    if entry.due:
        lines.append(f"Your due time, by an extension: {entry.due}")
    return lines
