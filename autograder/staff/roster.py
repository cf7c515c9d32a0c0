"""The LMS's own list of the class (`--roster FILE`), and the class's entries joined to it.

A roster is what the LMS exports of its students: Canvas's Grades export (GradebookExporter in
canvas-lms: Student, ID, SIS User ID, SIS Login ID, Section, then the assignments), a Moodle
assignment's grading worksheet (assign_feedback_offline: Identifier "Participant N", Full
name, Email address, Status, Grade, Maximum Grade, ...), Moodle's grade export (First name,
Last name, ID number, Email address, ...) or GitHub Classroom's roster (identifier,
github_username, github_id, name). Each entry is joined to one student by the id its LMS
download gave it, then by SIS id, login, email or ID number, then by its name, normalised.
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..safe_files import UnreadableFile, read_regular
from .gradebook import Entry

MAX_ROSTER_BYTES = 20 * 1024 * 1024
ASSIGNMENT_HEADING = re.compile(r"^(.*)\s\((\d+)\)$")  # canvas-lms Assignment.title_and_id
CANVAS_FORMULA = re.compile(r'^="(.*)"$')  # GradebookExporter#student_name quotes a name starting with =
MOODLE_TIME = "%A, %d %B %Y, %I:%M %p"  # Moodle's strftimedatetime, as its worksheet writes times
# A grading worksheet's columns are Moodle's strings in the downloading user's language, and its
# importer finds them by the importing user's (assignfeedback_offline_grade_importer::init:
# get_string('recordid', 'assign'), get_string('grade'), get_string('lastmodifiedgrade', 'assign')).
# The names of the languages the kit knows, from Moodle's language packs; the Identifier is
# always the first column and the Full name the second (mod_assign's grading table).
WORKSHEET_NAMES = {
    "Grade": ("Grade", "Note", "Calificación"),
    "Last modified (grade)": ("Last modified (grade)", "Dernière modification (note)",
                              "Última modificación (calificación)"),
    "Maximum Grade": ("Maximum Grade", "Maximum grade", "Note maximale", "Calificación máxima"),
    "Feedback comments": ("Feedback comments",),
    "Email address": ("Email address",),
    "Status": ("Status",),
    "Last modified (submission)": ("Last modified (submission)", "Dernière modification (travail remis)"),
}
WORKSHEET_IDENTIFIERS = ("Identifier", "Identifiant", "Identificador")
PARTICIPANT_CELL = re.compile(r"^(\D*?)(\d+)$")  # get_string('hiddenuser', 'assign'), then the id


@dataclass(frozen=True)
class WorksheetWords:
    """A Moodle grading worksheet's column names and participant prefix, in the language of the
    user who downloaded it: what a worksheet written for that user's upload must say."""

    header: dict[str, str]  # each column's English name -> its name in the worksheet
    prefix: str  # "Participant " in English, "Participante" in Spanish


WORKSHEET_ENGLISH = WorksheetWords({name: name for name in (
    "Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)", "Feedback comments")},
    "Participant ")


class RosterError(Exception):
    """The roster cannot be read; the message names the file and what to give instead."""


@dataclass
class Person:
    """One student as the LMS lists them."""

    lms: str  # "canvas", "moodle" or "classroom"
    name: str  # as the LMS writes it: "Hopper, Grace" (Canvas's sortable name), "Grace Hopper"
    line: int  # the roster's line, for messages
    lms_id: str = ""  # Canvas's user id, Moodle's participant id, GitHub's login
    sis_id: str = ""
    login: str = ""
    email: str = ""
    id_number: str = ""  # Moodle's ID number
    section: str = ""
    submitted_at: str = ""  # Moodle's "Last modified (submission)", ISO 8601
    late: bool = False  # Moodle's status says so

    def identifiers(self) -> set[str]:
        """Every identifier an entry of the class may be named by, casefolded."""
        found = {self.lms_id, self.sis_id, self.login, self.email, self.id_number}
        if "@" in self.email:
            found.add(self.email.split("@")[0])
        return {value.casefold() for value in found if value}


@dataclass
class Roster:
    """The students of the class as one LMS lists them."""

    path: Path
    lms: str
    kind: str  # "canvas export", "moodle worksheet", "moodle grades" or "classroom roster"
    people: list[Person]
    maximum: float | None = None  # what the LMS takes as the assignment's points, where it says
    points: dict[str, float] = field(default_factory=dict)  # Canvas: each assignment column's points
    worksheet: WorksheetWords | None = None  # a Moodle worksheet's language
    assignments: list[str] = field(default_factory=list)  # Canvas: the assignment columns' headings

    def maximum_for(self, column: str) -> float | None:
        """The points of the assignment a grade column fills in, where the roster says."""
        return self.points.get(column, self.maximum)


@dataclass
class Join:
    """The class's entries joined to a roster: each person's entry, and what did not join."""

    matched: dict[int, Entry] = field(default_factory=dict)  # by index in roster.people
    how: dict[int, str] = field(default_factory=dict)  # what joined them ("Canvas's user id 12345")
    several: dict[int, list[Entry]] = field(default_factory=dict)  # a person two entries name
    unmatched: list[tuple[Entry, str]] = field(default_factory=list)  # entries with no person, and why
    missing: list[int] = field(default_factory=list)  # people with no entry


def read_roster(path: Path) -> Roster:
    """The roster in `path`, whichever of the exports it is; raises RosterError."""
    try:
        text = read_regular(path, MAX_ROSTER_BYTES).decode("utf-8-sig")
    except UnreadableFile as error:
        raise RosterError(f"--roster {path}: {error}") from None
    except UnicodeDecodeError:
        raise RosterError(f"--roster {path}: not UTF-8; export it from the LMS again (its exports are "
                          "UTF-8), or save it from a spreadsheet as 'CSV UTF-8'") from None
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","  # Canvas's export in some locales
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    if not rows:
        raise RosterError(f"--roster {path}: the file is empty")
    header = [cell.strip() for cell in rows[0]]
    for looks, reader in READERS:
        if looks(header):
            return reader(path, header, rows[1:])
    raise RosterError(f"--roster {path}: not a roster this kit reads; give the CSV that Canvas's Grades "
                      "export, Moodle's grading worksheet or grade export, or GitHub Classroom's roster "
                      "download writes, its first line unchanged")


def column(header: list[str], *names: str) -> int | None:
    """The index of the first of `names` in the header, or None."""
    for name in names:
        if name in header:
            return header.index(name)
    return None


def cell(row: list[str], index: int | None) -> str:
    """A row's cell, stripped, or "" where the row has no such column."""
    return row[index].strip() if index is not None and index < len(row) else ""


def canvas_export(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    """Canvas's Grades export: the header, maybe a "Muted" row, the "Points Possible" row, then
    a row per student (GradebookExporter#csv_data)."""
    split = header[0] == "LastName"
    ids = {name: column(header, name) for name in ("ID", "SIS User ID", "SIS Login ID", "Section")}
    people, points = [], {}
    for line, row in enumerate(rows, 2):
        if not row or not any(c.strip() for c in row):
            continue
        if "Points Possible" in row[0]:
            points = points_possible(header, row)
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.IGNORECASE) for c in row):
            continue
        name = f"{cell(row, 0)}, {cell(row, 1)}" if split else cell(row, 0)
        formula = CANVAS_FORMULA.match(name)
        people.append(Person("canvas", formula[1] if formula else name, line, lms_id=cell(row, ids["ID"]),
                             sis_id=cell(row, ids["SIS User ID"]), login=cell(row, ids["SIS Login ID"]),
                             section=cell(row, ids["Section"])))
    assignments = [h.strip() for h in header if ASSIGNMENT_HEADING.match(h.strip())]
    return Roster(path, "canvas", "canvas export", people, points=points, assignments=assignments)


def assignment_column(roster: Roster | None, title: str) -> str:
    """The heading of the grade column: with a Canvas roster, the roster's assignment column that
    `title` names, by its whole heading or by its title alone (Canvas fills in the column
    `<title> (<id>)` by the id, and creates a new assignment for a heading that names none:
    GradebookImporter#parse_assignments); raises RosterError listing the candidates. Without a
    Canvas roster, `title` as it is."""
    if roster is None or roster.lms != "canvas":
        return title
    if title in roster.assignments:
        return title
    named = [h for h in roster.assignments if (m := ASSIGNMENT_HEADING.match(h)) and m[1] == title.strip()]
    if len(named) == 1:
        return named[0]
    listed = "; ".join(repr(h) for h in (named or roster.assignments)) or "none"
    why = f"{len(named)} assignments of the roster have that title" if named else \
        "no assignment column of the roster has that heading or title (Canvas would create a new assignment)"
    raise RosterError(f"--lms-assignment {title!r}: {why} ({roster.path}); give --lms-assignment one of: "
                      f"{listed}")


def points_possible(header: list[str], row: list[str]) -> dict[str, float]:
    """The points of each assignment (a column headed `<title> (<id>)`) of a Canvas export's
    "Points Possible" row."""
    points = {}
    for heading, value in zip(header, row):
        if ASSIGNMENT_HEADING.match(heading.strip()):
            with contextlib.suppress(ValueError):
                points[heading.strip()] = float(value.replace(",", "."))
    return points


def moodle_worksheet(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    """A Moodle assignment's grading worksheet (Download grading worksheet), in any language the
    kit knows the columns of (WORKSHEET_NAMES); raises RosterError for another."""
    at = {role: next((header.index(name) for name in names if name in header), None)
          for role, names in WORKSHEET_NAMES.items()}
    missing = [role for role in ("Grade", "Last modified (grade)") if at[role] is None]
    if missing:
        raise RosterError(f"--roster {path}: a grading worksheet whose columns {' and '.join(missing)} are "
                          "in a language the kit does not know (English, French, Spanish); download it with "
                          "your Moodle language set to English, and upload the kit's worksheet the same way")
    people, maximum, prefixes = [], None, set()
    for line, row in enumerate(rows, 2):
        identifier = PARTICIPANT_CELL.match(cell(row, 0))
        if identifier is None:
            continue
        prefixes.add(identifier[1])
        people.append(Person("moodle", cell(row, 1), line, lms_id=identifier[2],
                             email=cell(row, at["Email address"]),
                             submitted_at=moodle_time(cell(row, at["Last modified (submission)"])),
                             late=bool(re.search(r"\blate\b", cell(row, at["Status"]), re.IGNORECASE))))
        with contextlib.suppress(ValueError):
            maximum = float(cell(row, at["Maximum Grade"]).replace(",", "."))
    if len(prefixes) > 1:
        listed = ", ".join(sorted(map(repr, prefixes)))
        raise RosterError(f"--roster {path}: its Identifier column holds {len(prefixes)} different prefixes "
                          f"({listed}); download the worksheet from Moodle again")
    names = {"Identifier": header[0], "Full name": header[1]}
    names.update({role: header[index] for role, index in at.items() if index is not None})
    words = WorksheetWords({role: names.get(role, role) for role in WORKSHEET_ENGLISH.header},
                           prefixes.pop() if prefixes else WORKSHEET_ENGLISH.prefix)
    return Roster(path, "moodle", "moodle worksheet", people, maximum, worksheet=words)


def moodle_time(text: str) -> str:
    """A time as Moodle's worksheet writes it ("Monday, 30 November 2026, 8:12 PM", the site's
    own time zone), ISO 8601 without a zone; "" for "-" or what cannot be read."""
    try:
        return datetime.strptime(text, MOODLE_TIME).isoformat(timespec="minutes")
    except ValueError:
        return ""


def moodle_grades(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    """Moodle's grade export (Grades, Export, Plain text file)."""
    at = {name: column(header, name) for name in ("First name", "Last name", "Surname", "ID number",
                                                  "Email address", "Username")}
    last = at["Last name"] if at["Last name"] is not None else at["Surname"]
    people = [Person("moodle", f"{cell(row, at['First name'])} {cell(row, last)}".strip(), line,
                     id_number=cell(row, at["ID number"]), email=cell(row, at["Email address"]),
                     login=cell(row, at["Username"]))
              for line, row in enumerate(rows, 2) if any(c.strip() for c in row)]
    return Roster(path, "moodle", "moodle grades", people)


def classroom_roster(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    """GitHub Classroom's roster download."""
    at = {name: column(header, name) for name in ("identifier", "github_username", "name")}
    people = [Person("classroom", cell(row, at["name"]) or cell(row, at["identifier"]), line,
                     lms_id=cell(row, at["github_username"]), sis_id=cell(row, at["identifier"]))
              for line, row in enumerate(rows, 2) if any(c.strip() for c in row)]
    return Roster(path, "classroom", "classroom roster", people)


READERS = [
    (lambda h: len(h) > 3 and ("Student" in h[0] and "ID" in h[1] or h[:2] == ["LastName", "FirstName"]),
     canvas_export),
    (lambda h: len(h) > 2 and h[0] in WORKSHEET_IDENTIFIERS, moodle_worksheet),
    (lambda h: "First name" in h and ("Last name" in h or "Surname" in h), moodle_grades),
    (lambda h: "github_username" in h, classroom_roster),
]


# -- joining -------------------------------------------------------------------------------------

def name_keys(name: str) -> set[str]:
    """A name's forms for comparing: its words (letters and digits of any script, accents and
    case dropped) sorted, and run together in either order ("Hopper, Grace", "Grace Hopper",
    "grace_hopper" and Canvas's "hoppergrace" all meet)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    words = re.findall(r"[^\W_]+", plain.casefold())
    if not words:
        return set()
    return {" ".join(sorted(words)), "".join(words), "".join(reversed(words))}


def join(roster: Roster, entries: list[Entry]) -> Join:
    """Each entry joined to the one person it names; what joins no one, or two, is said why."""
    found = Join()
    by_id: dict[str, list[int]] = {}
    by_name: dict[str, list[int]] = {}
    for index, person in enumerate(roster.people):
        for identifier in person.identifiers():
            by_id.setdefault(identifier, []).append(index)
        for key in name_keys(person.name):
            by_name.setdefault(key, []).append(index)
    claimed: dict[int, list[Entry]] = {}
    for entry in entries:
        index, how = person_of(entry, roster, by_id, by_name)
        if index is None:
            found.unmatched.append((entry, how))
            continue
        claimed.setdefault(index, []).append(entry)
        found.how[index] = how
    for index, mine in claimed.items():
        if len(mine) == 1:
            found.matched[index] = mine[0]
        else:
            found.several[index] = mine
    found.missing = [index for index in range(len(roster.people)) if index not in claimed]
    return found


def person_of(entry: Entry, roster: Roster, by_id: dict[str, list[int]],
              by_name: dict[str, list[int]]) -> tuple[int | None, str]:
    """The roster's index of the person an entry names, and how; or None and why not."""
    if entry.lms == roster.lms and entry.lms_id:
        same = [i for i, p in enumerate(roster.people) if p.lms_id and p.lms_id == entry.lms_id]
        if len(same) == 1:
            return same[0], f"the {roster.lms} id {entry.lms_id}"
    names = {entry.student, entry.source.rstrip("*").rstrip("_"), entry.lms_name}
    stems = {name.rsplit(".", 1)[0] if name.lower().endswith((".zip", ".py", ".ipynb")) else name
             for name in names if name}
    ids = {index for stem in stems for index in by_id.get(stem.casefold(), [])}
    if len(ids) == 1:
        return ids.pop(), "an identifier of the roster"
    if len(ids) > 1:
        return None, f"its name is an identifier of {len(ids)} students of the roster"
    keys = {key for stem in stems for key in name_keys(stem)}
    named = {index for key in keys for index in by_name.get(key, [])}
    if len(named) == 1:
        return named.pop(), "its name"
    if len(named) > 1:
        listed = ", ".join(roster.people[i].name for i in sorted(named))
        return None, f"its name fits {len(named)} students of the roster ({listed})"
    return None, "no student of the roster has its id or its name"
