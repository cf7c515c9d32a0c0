"""The files each LMS takes back: its grade import and its feedback upload, built in memory so
that the pre-flight check (preflight.py) sees them whole before any is written.

- Canvas: grades-canvas.csv (Grades, Import: GradebookImporter) and feedback-canvas.zip (the
  assignment's "Re-Upload Submissions": Assignment#generate_comments_from_files), each
  feedback file named as the student's own file was in the download.
- Moodle: grades-moodle-worksheet.csv (the assignment's "Upload grading worksheet":
  assignfeedback_offline, with its Feedback comments column), feedback-moodle.zip ("Upload
  multiple feedback files in a zip": assignfeedback_file_zip_importer, a folder per
  participant) and grades-moodle.csv (the gradebook's Import, CSV file: gradeimport_csv).

A student with no grade (held back) has no row and no feedback in any of them; nor has a student
without the identifier an importer finds the row by (every row carries it: an importer that
meets a row without it maps the row to another student, or to none). Each total is posted on
the LMS item's own scale (policies.Scale), at one place: `build`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape

from ..escape import FORMULA_START, csv_cell
from ..intake.lms import CANVAS_FILE, anonymous
from .gradebook import Entry
from .policies import Policy, Scale
from .roster import WORKSHEET_ENGLISH, Join, Person, Roster, WorksheetWords

# Canvas's gradebook import: these five columns, then one per assignment, headed "<title>
# (<assignment id>)" to fill in that assignment; a row whose first cell says "Points Possible"
# gives each one's points (GradebookImporter#header?, #update_column_count, #process_pp).
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS = "    Points Possible"  # as GradebookExporter writes it
# A Moodle assignment's grading worksheet upload finds its columns by these names (Identifier,
# Grade, Last modified (grade), and a feedback plugin's editor field: Feedback comments).
MOODLE_WORKSHEET_COLUMNS = ("Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)",
                            "Feedback comments", "late")  # by their English names (roster.WORKSHEET_ENGLISH)
MOODLE_FEEDBACK_FOLDER = "{name}_{id}_assignsubmission_file"  # mod_assign\downloader's folder of a student
MOODLE_FILENAME_UNSAFE = re.compile(r'[\x00-\x1f/\\:*?"<>|]')  # what Moodle's clean_filename drops


@dataclass
class Target:
    """One student as the LMS files see them: their grade (None when held back), and who they
    are to each LMS."""

    student: str
    entry: Entry | None
    total: float | None  # the kit's final total (after the late penalty); None when held back
    held: str = ""  # why the student has no grade ("" when they have one)
    person: Person | None = None
    late_how: str = ""
    feedback: str = ""  # the feedback page (HTML)
    summary: str = ""  # the feedback's short form, for a comments column (HTML)
    posted: dict[str, float] = field(default_factory=dict)  # by LMS: the total on the item's scale

    def canvas_id(self) -> str:
        """Canvas's user id: the roster's, or the download's."""
        if self.person is not None and self.person.lms == "canvas":
            return self.person.lms_id
        entry = self.entry
        return entry.lms_id if entry is not None and entry.lms == "canvas" and entry.lms_id.isdigit() else ""

    def moodle_participant(self) -> str:
        """Moodle's participant id: the worksheet roster's, or the download's."""
        if self.person is not None and self.person.lms == "moodle" and self.person.lms_id:
            return self.person.lms_id
        entry = self.entry
        return entry.lms_id if entry is not None and entry.lms == "moodle" else ""

    def name(self, lms: str) -> str:
        """The name `lms` knows the student by (its roster's, or its download's), else the kit's id."""
        if self.person is not None:
            return self.person.name
        if self.entry is not None and self.entry.lms_name and self.entry.lms == lms == "moodle":
            return self.entry.lms_name
        return self.student


@dataclass
class Sheet:
    """A CSV file as rows of text, and the students each row is (for messages)."""

    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    students: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)  # student -> why not in this file
    covers: str = ""  # the students the file is for, in words


@dataclass
class LmsFiles:
    """Every file for the LMSs of this run, by name, before any is written."""

    tables: dict[str, Sheet] = field(default_factory=dict)
    zips: dict[str, dict[str, str]] = field(default_factory=dict)  # zip -> member path -> text
    scales: dict[str, Scale] = field(default_factory=dict)  # by LMS: how a total is posted there
    words: WorksheetWords = WORKSHEET_ENGLISH  # the Moodle worksheet's language
    canvas_files: dict[str, list[str]] = field(default_factory=dict)  # Canvas user id -> downloaded names


def number(x: float) -> str:
    """A number as the files write it: `3`, `2.5`, `94.73`."""
    return f"{x:g}"


def formula_like(text: str) -> bool:
    """Would a spreadsheet read this identifier as a formula (OWASP's list)?"""
    return text.startswith(FORMULA_START)


def scales_of(policy: Policy, roster: Roster | None, column: str, kit: float,
              best: float) -> dict[str, Scale]:
    """The scale of each LMS the run writes files for: the roster's LMS, or both without one.
    Raises PolicyError where the options and the roster disagree."""
    lms = [roster.lms] if roster is not None else ["canvas", "moodle"]
    scales = {}
    for name in (name for name in lms if name in ("canvas", "moodle")):
        said = points = None
        if roster is not None and name == "canvas" and column in roster.points:
            points, said = roster.points[column], f"the roster's Points Possible of {column!r}"
        elif roster is not None and name == "moodle" and roster.maximum is not None:
            points, said = roster.maximum, "the worksheet's Maximum Grade"
        scales[name] = policy.scale(name, kit, best, points, said or "")
    return scales


def build(targets: list[Target], scales: dict[str, Scale], roster: Roster | None, column: str,
          written_at: str) -> LmsFiles:
    """Every LMS file of the run, for the LMSs of `scales`; `written_at` is now, the time the
    worksheet says each grade was last changed."""
    files = LmsFiles(scales=scales, words=worksheet_words(roster))
    for target in targets:  # the one place a final total becomes an LMS's grade
        if target.total is not None:
            target.posted = {lms: scale.post(target.total) for lms, scale in scales.items()}
    if "canvas" in scales:
        files.tables["grades-canvas.csv"] = canvas_table(targets, column, scales["canvas"].points)
        files.zips["feedback-canvas.zip"] = canvas_feedback(targets, files)
    if "moodle" in scales:
        worksheet = moodle_worksheet(targets, scales["moodle"].ceiling, written_at, roster)
        files.tables["grades-moodle-worksheet.csv"] = worksheet
        files.zips["feedback-moodle.zip"] = moodle_feedback(targets, worksheet)
        files.tables["grades-moodle.csv"] = moodle_gradebook(targets, column, roster)
    return files


def scale_lines(files: LmsFiles, column: str, roster: Roster | None) -> list[str]:
    """The scale of each LMS in one line, and the Canvas assignment the file fills in."""
    lines = [scale.sentence() for scale in files.scales.values()]
    if "canvas" in files.scales:
        points = number(files.scales["canvas"].points)
        if roster is not None and roster.lms == "canvas":
            lines.append(f"Canvas: grades-canvas.csv fills in the roster's assignment {column!r}.")
        else:
            lines.append(f"Canvas: grades-canvas.csv fills in the assignment titled exactly {column!r}, or "
                         f"creates it worth {points} points; to fill in another, give --roster (Canvas's "
                         "Grades export) or --lms-assignment as its export heads the column")
    return lines


def canvas_table(targets: list[Target], column: str, points: float) -> Sheet:
    """grades-canvas.csv: a row per student with a grade and a Canvas id (the user id, or the
    roster's SIS ids), one assignment column, the grade. Canvas finds a row with no id by its
    name, as the first student of that name (GradebookImporter#process_student): a student
    without an id gets no row."""
    table = Sheet([*CANVAS_COLUMNS, column], [[CANVAS_POINTS, "", "", "", "", number(points)]], [""],
                  covers="the class (a row needs a Canvas id)")
    for target in targets:
        if target.total is None:
            table.left_out[target.student] = target.held
            continue
        entry, person = target.entry, target.person
        if entry is not None and entry.lms == "canvas" and not target.canvas_id():
            table.left_out[target.student] = ("anonymous grading: Canvas's import finds no student by an "
                                              "anonymous id; enter the grade in SpeedGrader")
            continue
        ids = [target.canvas_id(), person.sis_id if person else "", person.login if person else ""]
        if not any(ids):
            table.left_out[target.student] = (
                "no Canvas id (not from a Canvas download, no roster's SIS id): Canvas would post the "
                "row to the first student of its name; give --roster (Canvas's Grades export)")
            continue
        table.rows.append([csv_cell(target.name("canvas")), *ids, csv_cell(person.section if person else ""),
                           number(target.posted["canvas"])])
        table.students.append(target.student)
    return table


def canvas_feedback(targets: list[Target], files: LmsFiles) -> dict[str, str]:
    """feedback-canvas.zip: for each Canvas student with a grade, the feedback page named as one
    of their files was in the download (`<name>_[LATE_]<user id>_<file id>_feedback.html`), by
    which Canvas's Re-Upload Submissions finds the student and the submission."""
    members = {}
    for target in targets:
        entry = target.entry
        if target.total is None or entry is None or entry.lms != "canvas" or not entry.lms_files:
            continue
        named = CANVAS_FILE.match(entry.lms_files[0])
        if named is None or anonymous(entry.lms_files[0]):
            continue
        late = "LATE_" if named["late"] else ""
        # Canvas's re-upload takes the first two all-digit parts for the ids: none may be the name's.
        name = "_".join(part for part in named["name"].split("_") if not part.isdigit())
        members[f"{name}_{late}{named['id']}_{named['file_id']}_feedback.html"] = target.feedback
        files.canvas_files[named["id"]] = entry.lms_files
    return members


def late_cell(target: Target) -> str:
    """The `late` column: how late, in words, or ""."""
    return target.late_how


def moodle_worksheet(targets: list[Target], maximum: float, written_at: str, roster: Roster | None) -> Sheet:
    """grades-moodle-worksheet.csv: a row per Moodle participant with a grade, found by its
    Identifier, with the grade, the time it was written and the feedback's short form. The
    header and the participant prefix are the roster's where a worksheet roster gives them
    (Moodle reads both in the importing user's language). The time is when the file is written:
    Moodle skips a row whose grade it changed more than a minute after that time, so an earlier
    time would leave a regraded row as the last upload left it."""
    words = worksheet_words(roster)
    table = Sheet([words.header[role] for role in MOODLE_WORKSHEET_COLUMNS[:-1]] + ["late"],
                  covers="the participants of a Moodle download or worksheet")
    for target in targets:
        participant = target.moodle_participant()
        if not participant:
            continue
        if target.total is None:
            table.left_out[target.student] = target.held
            continue
        name = csv_cell(moodle_text(target.name("moodle")))
        table.rows.append([f"{words.prefix}{participant}", name, number(target.posted["moodle"]),
                           number(maximum), written_at, target.summary, csv_cell(late_cell(target))])
        table.students.append(target.student)
    return table


def worksheet_words(roster: Roster | None) -> WorksheetWords:
    """The language of the Moodle worksheet: the roster's, or English."""
    return roster.worksheet if roster is not None and roster.worksheet is not None else WORKSHEET_ENGLISH


def moodle_text(text: str) -> str:
    """A cell of a Moodle file with no `\\"`, which PHP's fgetcsv reads as an escaped quote."""
    return text.replace('\\"', '\\ "')


def moodle_feedback(targets: list[Target], worksheet: Sheet) -> dict[str, str]:
    """feedback-moodle.zip: a folder per participant of the worksheet, named as Moodle names a
    student's folder (`<full name>_<participant id>_assignsubmission_file`), holding feedback.html."""
    members = {}
    graded = set(worksheet.students)
    for target in targets:
        participant = target.moodle_participant()
        if target.student not in graded or not participant:
            continue
        name = MOODLE_FILENAME_UNSAFE.sub("", target.name("moodle").replace("_", " ")).strip()
        name = name or "Participant"
        members[MOODLE_FEEDBACK_FOLDER.format(name=name, id=participant) + "/feedback.html"] = target.feedback
    return members


def moodle_gradebook(targets: list[Target], column: str, roster: Roster | None) -> Sheet:
    """grades-moodle.csv, for Moodle's gradebook import: with a Moodle roster, the roster's
    students by their email address, and by ID number where every row has one; without one, the
    entries that are no LMS download's, by the kit's id. Moodle keeps the last non-empty
    identifier for a row whose own is blank (load_data::map_user_data_with_value), and stops the
    whole import at a user it cannot find: every row carries every identifier column, filled."""
    if roster is None:
        chosen = [t for t in targets if t.entry is None or not t.entry.lms]
        columns = ["Student"]
    else:
        chosen = [t for t in targets if t.person is not None]
        graded = [t.person for t in chosen if t.total is not None]
        columns = ["Email address"] + (["ID number"] if graded and all(p.id_number for p in graded) else [])
    table = Sheet([*columns, column, "late"], covers="the entries from no LMS download" if roster is None
                  else "the roster's students")
    for target in chosen:
        if target.total is None:
            table.left_out[target.student] = target.held
            continue
        person = target.person
        ids = [target.student] if roster is None else [person.email, person.id_number][:len(columns)]
        if not all(ids) or any(formula_like(value) for value in ids):
            table.left_out[target.student] = (
                f"no {' or '.join(columns)} in the roster (or one a spreadsheet would run as a formula): "
                "Moodle's import would post this row to the student of the row above")
            continue
        table.rows.append([*ids, number(target.posted["moodle"]), csv_cell(late_cell(target))])
        table.students.append(target.student)
    return table


def comments(total: float, maximum: float, lost: list[tuple[str, float, float]], note: str,
             posted: str = "") -> str:
    """The feedback's short form for Moodle's Feedback comments: HTML with no quote character;
    `posted` is the grade on the item's scale, where it differs."""
    items = "".join(f"<li>{escape(title)}: {number(points)} / {number(most)}</li>"
                    for title, points, most in lost)
    scaled = f" ({escape(posted)})" if posted else ""
    text = (f"<p>Autograder: {number(total)} / {number(maximum)}{scaled}."
            f"{' ' + escape(note) if note else ''}</p>")
    return text + (f"<ul>{items}</ul>" if items else "") + "<p>The whole feedback is in feedback.html.</p>"


def join_targets(targets: dict[str, Target], roster: Roster, joined: Join) -> list[Target]:
    """The targets of a roster's students: each person with the entry joined to them, the people
    with none (held back: no submission), and the entries that joined no one (left out)."""
    by_source = {t.entry.source: t for t in targets.values() if t.entry is not None}
    chosen = []
    for index, person in enumerate(roster.people):
        entry = joined.matched.get(index)
        if entry is not None and entry.source in by_source:
            target = by_source[entry.source]
            target.person = person
            chosen.append(target)
        elif index in joined.several:
            sources = ", ".join(e.source for e in joined.several[index])
            chosen.append(Target(person.name, None, None, f"several entries are this student's ({sources}); "
                                 "remove all but one from the class folder", person))
        else:
            chosen.append(Target(person.name, None, None, "no submission in the class folder", person))
    return chosen
