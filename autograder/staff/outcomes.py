"""What a run gives each student: a grade, a zero the TA asked for, or held back with the reason;
who each is to the LMS (its download, or its roster); and the LMS files made from that.

A submission that could not be graded, and a student with several entries, is held back: no
grade in any LMS file, one line on the console, a row in the summary. `--zeros` gives them 0
instead, said the same way. With a roster, every LMS file covers the roster exactly: its
students with a grade, and each of the others listed with why they have none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from html import escape

from ..config import Grading
from ..escape import html
from . import lmsfiles
from .gradebook import Entry, Score
from .lmsfiles import LmsFiles, Target
from .policies import LMS_NAMES, Policy
from .roster import Join, Roster, join


@dataclass
class Grade:
    """What grades.csv and the import files say of one student: the entry that counts, its
    points per part, and a late penalty (nbgrader's, or the run's late policy)."""

    entry: Entry
    parts: dict[str, float]
    penalty: float = 0.0
    late_how: str = ""  # how late, in words ("" when on time or not known)
    submitted_at: str = ""  # when it was handed in, where the LMS, the roster or nbgrader says

    @property
    def total(self) -> float:
        """The points of every part, changed by a `total` adjustment, less the penalty, never below 0."""
        return round(max(0.0, sum(self.parts.values()) + self.entry.total_change - self.penalty), 2)


# A course's own late penalty for a grade it holds none of: (student, points per part, when it
# was handed in) -> (the points taken off, how late in words).
CoursePenalty = Callable[[str, Mapping[str, float], str], tuple[float, str]]


@dataclass
class CourseRecord(Mapping):
    """An nbgrader course's grade of record: nbgrader's grade of each submission it holds one for,
    by source (points per part, and its late penalty), and the course's own late penalty for the
    kit's grade of any other, so that no path escapes the course's penalty."""

    grades: dict[str, tuple[dict[str, float], float]]
    late: CoursePenalty | None = None

    def __getitem__(self, source: str) -> tuple[dict[str, float], float]:
        return self.grades[source]

    def __iter__(self) -> Iterator[str]:
        return iter(self.grades)

    def __len__(self) -> int:
        return len(self.grades)


@dataclass
class Outcome:
    """Every student's grade or why there is none, and the LMS files made from them."""

    grades: dict[str, Grade]  # by student: a grade (or a zero the TA asked for)
    held: dict[str, str]  # by student: why there is no grade anywhere
    zeroed: dict[str, str]  # by student: why the grade is a zero the TA asked for
    targets: list[Target]
    files: LmsFiles
    policy: Policy
    roster: Roster | None = None
    joined: Join | None = None
    lines: list[str] = field(default_factory=list)  # what the console says of them
    scale: list[str] = field(default_factory=list)  # each LMS's scale and the Canvas assignment, a line each


def points(entry: Entry, grading: Grading) -> dict[str, float]:
    """Points per part of grading.toml; a part the entry has no score for (a failed run) is 0."""
    got = {score.part: score.points for score in entry.scores}
    return {part: got.get(part, 0.0) for part in grading.parts}


def grade_of(entry: Entry, grading: Grading,
             record: Mapping[str, tuple[dict[str, float], float]] | None = None, policy: Policy | None = None,
             late: bool = False, submitted_at: str = "") -> Grade:
    """A student's grade: nbgrader's where it holds one for the entry (its own late penalty in
    it), the kit's otherwise, less the course's own late penalty in an nbgrader course, else the
    run's late policy."""
    late, submitted_at = late or entry.late, submitted_at or entry.submitted_at
    if record is not None and entry.source in record:
        parts, penalty = record[entry.source]
        how = "late" if late else "late: nbgrader's penalty" if penalty else ""
        return Grade(entry, {part: parts.get(part, 0.0) for part in grading.parts}, penalty, how,
                     submitted_at)
    if (course_late := getattr(record, "late", None)) is not None:  # the course's penalty, on the kit's grade
        got = points(entry, grading)
        penalty, how = course_late(entry.student, got, submitted_at)
        return Grade(entry, got, penalty, how, submitted_at)
    if policy is None or policy.late is None:
        return Grade(entry, points(entry, grading), 0.0, "late (the LMS says)" if late else "", submitted_at)
    penalty, how = policy.late_for(entry.due).penalty(late, submitted_at)
    how = "" if "by the due time" in how else how
    return Grade(entry, points(entry, grading), penalty, how, submitted_at)


def decide(entries: list[Entry], counted: dict[str, Entry], several: dict[str, list[Entry]], grading: Grading,
           record: Mapping | None, policy: Policy, roster: Roster | None, column: str, collision) -> Outcome:
    """Each student's grade or reason, and the LMS files; `collision(student, entries)` is the
    sentence that says a student has several entries."""
    joined = join(roster, entries) if roster is not None else None
    people = {joined.matched[i].source: roster.people[i] for i in joined.matched} if joined else {}
    grades, held, zeroed = {}, {}, {}
    for student, entry in counted.items():
        person = people.get(entry.source)
        grade = grade_of(entry, grading, record, policy, person.late if person else False,
                         person.submitted_at if person else "")
        if entry.status == "failed" and not (record is not None and entry.source in record):
            held[student] = f"could not be graded: {entry.reason}"
        grades[student] = grade
    for student, mine in several.items():
        held[student] = collision(student, mine)
    targets = {student: Target(student, grade.entry, None if student in held else grade.total,
                               held.get(student, ""), people.get(grade.entry.source), grade.late_how)
               for student, grade in grades.items()}
    for student in several:
        targets[student] = Target(student, None, None, held[student])
    chosen = lmsfiles.join_targets(targets, roster, joined) if roster is not None else list(targets.values())
    if policy.zeros:
        for target in chosen:
            if target.total is None:
                zeroed[target.student] = target.held
                target.total, target.held = 0.0, ""
    for student in zeroed:
        held.pop(student, None)
        if student in grades:
            grades[student] = Grade(grades[student].entry, dict.fromkeys(grading.parts, 0.0))
    for student in held:
        grades.pop(student, None)
    return Outcome(grades, held, zeroed, chosen, LmsFiles(), policy, roster, joined)


def console_lines(outcome: Outcome) -> list[str]:
    """One line for each student held back or zeroed, and each student the roster and the class
    folder do not share."""
    lines = [f"held back {student}: {reason} (no grade in any LMS file; --zeros gives 0)"
             for student, reason in sorted(outcome.held.items()) if reason.startswith("could not be graded")]
    lines += [f"0 for {student} (--zeros): {reason}" for student, reason in sorted(outcome.zeroed.items())]
    if outcome.joined is not None and outcome.roster is not None:
        lines += [f"{entry.source}: in the class folder, not in the roster ({why}); in no LMS file"
                  for entry, why in outcome.joined.unmatched]
        missing = [outcome.roster.people[i].name for i in outcome.joined.missing]
        if missing:
            shown = "; ".join(missing[:10]) + ("; ..." if len(missing) > 10 else "")
            lines.append(f"{len(missing)} student{'s' if len(missing) > 1 else ''} of the roster with no "
                         f"submission: {shown} (in the summary; --zeros gives them 0)")
    return lines


def counted(count: int, noun: str) -> str:
    """`1 row`, `4 rows`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def summary_section(outcome: Outcome) -> list[str]:
    """The summary's account of what went to the LMSs: each file's rows, the scale and the bonus
    and late policies, who is held back or zeroed and why, and the roster's students no entry
    joined, and back."""
    body = ["<h2>Grades for the LMS</h2>"]
    for name, table in outcome.files.tables.items():
        rows = len(table.students) - (1 if name == "grades-canvas.csv" else 0)  # its Points Possible row
        left = f"; {len(table.left_out)} of them left out (below)" if table.left_out else ""
        body.append(f"<p>{escape(name)}: {counted(rows, 'row')}, one per student with a grade, of "
                    f"{escape(table.covers)}{left}.</p>")
    for name, members in outcome.files.zips.items():
        if members:
            body.append(f"<p>{escape(name)}: {counted(len(members), 'feedback file')}, one per student with "
                        "a row in the grades file beside it that came from that LMS's download.</p>")
    if outcome.scale:
        body.append("<p>Scale: " + " ".join(escape(line) for line in outcome.scale) + "</p>")
    late = outcome.policy.late
    if late is None:
        body.append("<p>Late: no late policy; the <code>late</code> column says who the LMS marks late.</p>")
    else:
        cap = f", at most {late.cap:g} points" if late.cap is not None else ""
        due = f", due {late.due.isoformat()}" if late.due else ""
        body.append(f"<p>Late: {late.per_day:g} points a day late (a day begun counts){cap}{due}, on every "
                    "path alike; a submission the LMS marks late without its time counts as 1 day.</p>")
    rows = [[html(s), "held back", html(r)] for s, r in sorted(outcome.held.items())]
    rows += [[html(s), "0 (--zeros)", html(r)] for s, r in sorted(outcome.zeroed.items())]
    for name, table in outcome.files.tables.items():
        rows += [[html(s), f"not in {escape(name)}", html(r)] for s, r in sorted(table.left_out.items())
                 if s not in outcome.held and s not in outcome.zeroed]
    if rows:
        body.append("<h3>No grade, or a zero asked for</h3>" + simple_table(["student", "what", "why"], rows))
    if outcome.joined is not None and outcome.roster is not None:
        body += roster_section(outcome)
    return body


def roster_section(outcome: Outcome) -> list[str]:
    """The roster's students with no entry, and the entries with no student of the roster."""
    roster, joined = outcome.roster, outcome.joined
    name = LMS_NAMES.get(roster.lms, roster.lms)
    body = [f"<h3>Roster</h3><p>{escape(str(roster.path))} ({escape(roster.kind)}): {len(roster.people)} "
            f"students of {name}, {len(joined.matched)} joined to one entry each.</p>"]
    missing = [[html(roster.people[i].name), str(roster.people[i].line)] for i in joined.missing]
    if missing:
        body.append("<p>In the roster, with no submission:</p>" + simple_table(["student", "line"], missing))
    unmatched = [[html(entry.source), html(why)] for entry, why in joined.unmatched]
    if unmatched:
        body.append("<p>In the class folder, with no student of the roster (in no LMS file):</p>"
                    + simple_table(["entry", "why"], unmatched))
    return body


def simple_table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table of cells already escaped."""
    head = "".join(f"<th>{h}</th>" for h in header)
    return f"<table><tr>{head}</tr>\n" + "".join(
        "<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>\n" for row in rows) + "</table>"


def passed(score: Score) -> bool:
    """Every check of the part passed: full points and no message (a part worth nothing has full
    points however it went, and a file that is missing or did not import is never a pass)."""
    return score.points >= score.max and not score.messages


def maximum(grading: Grading) -> float:
    """The points possible, bonus left out."""
    return sum(part.points for part in grading.parts.values() if not part.bonus)
