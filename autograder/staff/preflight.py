"""The pre-flight check: every LMS file, read as its LMS reads it, before any file is written.

Each rule below is one the LMS's own importer applies, named with where it lives; a file that
breaks one is refused with the row and the fix, never written for the LMS to reject or, worse,
to take in part.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime
from pathlib import PurePosixPath

from ..intake.lms import CANVAS_FILE
from .lmsfiles import CANVAS_POINTS, LmsFiles, Sheet
from .roster import PARTICIPANT_CELL, WorksheetWords

# GradebookImporter's decimal_comma_to_period converter takes a cell as a number when it matches.
CANVAS_NUMBER = re.compile(r"^-?[0-9.,]+%?$")
MOODLE_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")  # what unformat_float reads with a `.` decimal point


def check(files: LmsFiles) -> list[str]:
    """Every problem of every file, one line each naming the file, the row and the fix."""
    problems = []
    for name, table in files.tables.items():
        problems += [f"{name}: {problem}" for problem in common(table)]
        if name == "grades-canvas.csv":
            problems += [f"{name}: {problem}" for problem in canvas(table)]
        elif name == "grades-moodle-worksheet.csv":
            problems += [f"{name}: {problem}" for problem in worksheet(table, files.scales["moodle"].ceiling,
                                                                       files.words)]
        elif name == "grades-moodle.csv":
            problems += [f"{name}: {problem}" for problem in gradebook(table, files.scales["moodle"].ceiling)]
    if "feedback-canvas.zip" in files.zips:
        problems += [f"feedback-canvas.zip: {p}" for p in canvas_feedback(files)]
    if "feedback-moodle.zip" in files.zips:
        problems += [f"feedback-moodle.zip: {p}" for p in moodle_feedback(files)]
    return problems


def text_of(table: Sheet) -> str:
    """The table as the file will hold it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(table.header)
    writer.writerows(table.rows)
    return buffer.getvalue()


def common(table: Sheet) -> list[str]:
    """Rules of both LMSs' CSV readers: UTF-8 (the encoding the upload forms assume), no NUL, as
    many fields in every row as in the header (Moodle's csv_import_reader: csvweirdcolumns),
    column names unique, and no `\\"` in a cell (PHP's fgetcsv takes it for an escaped quote)."""
    problems = []
    text = text_of(table)
    if "\0" in text:
        problems.append("holds a NUL character, which no LMS reads as text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        problems.append("cannot be written as UTF-8")
    if len(set(table.header)) != len(table.header):
        problems.append("two columns have one name (Moodle: csvcolumnduplicates)")
    parsed = list(csv.reader(io.StringIO(text)))
    for number, row in enumerate(parsed[1:], 2):
        if len(row) != len(table.header):
            problems.append(f"line {number} has {len(row)} fields, the header {len(table.header)}")
        if any('\\"' in value for value in row):
            problems.append(f"line {number} holds \\\", which PHP's fgetcsv (Moodle) reads as an escaped "
                            "quote")
    return problems


def canvas(table: Sheet) -> list[str]:
    """canvas-lms's GradebookImporter: the header (#row_has_student_headers?: `Student` in the
    first column, `ID` in the second; #update_column_count: SIS User ID and SIS Login ID, then
    `Section` last), the "Points Possible" row (#check_for_non_student_row), a student
    found by the ID or the SIS ids (#process_student; a row with none is found by its name, as
    the first student of that name, so a row must have one), each once, and a grade that its
    converter reads as a number (extra credit above the points possible is taken)."""
    problems = []
    header = table.header
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1] and "Section" in header[4]):
        problems.append("the header is not Student, ID, SIS User ID, SIS Login ID, Section, then the "
                        "assignment")
    if not table.rows or "Points Possible" not in table.rows[0][0]:
        problems.append(f"the second line must be {CANVAS_POINTS.strip()!r}, as Canvas's export has it")
    seen: dict[str, int] = {}
    for number, (row, student) in enumerate(zip(table.rows[1:], table.students[1:]), 3):
        name, user_id, sis_id, login = row[:4]
        if "Points Possible" in name:
            problems.append(f"line {number} ({student}): a name holding 'Points Possible' is read as "
                            "that row")
        if user_id and not user_id.isdigit():
            problems.append(f"line {number} ({student}): ID {user_id!r} is not a Canvas user id (digits)")
        key = user_id or sis_id or login
        if not key or key.startswith("'"):
            problems.append(f"line {number} ({student}): no ID or SIS id, so Canvas would post the grade to "
                            "the first student of the row's name")
        elif key in seen:
            problems.append(f"lines {seen[key]} and {number}: one student twice ({key})")
        seen[key] = number
        grade = row[5]
        if not CANVAS_NUMBER.match(grade) or float(grade) < 0:
            problems.append(f"line {number} ({student}): the grade {grade!r} is not a number of 0 or more")
    return problems


def worksheet(table: Sheet, maximum: float, words: WorksheetWords) -> list[str]:
    """Moodle's assignfeedback_offline: the columns Identifier, Grade and Last modified (grade)
    by their exact names in the importing user's language (grade_importer::init), a feedback
    column that is not the first (#next skips index 0), the participant prefix in that language
    then the id (#next strips as many characters as the prefix has), a grade from 0 to the
    assignment's maximum grade (process_import_grades skips one out of range), and a time that
    PHP's strtotime reads (a grade Moodle changed more than a minute after it is skipped)."""
    problems = []
    names = {role: words.header[role] for role in ("Identifier", "Grade", "Last modified (grade)")}
    for name in names.values():
        if name not in table.header:
            problems.append(f"no column {name!r}, which Moodle needs by that exact name")
    if table.header and table.header[0] == words.header["Feedback comments"]:
        problems.append("the Feedback comments column may not be the first, which Moodle skips")
    at = {role: table.header.index(name) for role, name in names.items() if name in table.header}
    if len(at) < 3:
        return problems
    seen: dict[str, int] = {}
    for number, (row, student) in enumerate(zip(table.rows, table.students), 2):
        identifier = row[at["Identifier"]]
        found = PARTICIPANT_CELL.match(identifier)
        if found is None or found[1] != words.prefix:
            problems.append(f"line {number} ({student}): Identifier {identifier!r} is not "
                            f"'{words.prefix}<id>', as the roster's worksheet writes it")
        elif identifier in seen:
            problems.append(f"lines {seen[identifier]} and {number}: {identifier} twice")
        seen[identifier] = number
        problems += grade_problems(row[at["Grade"]], maximum, f"line {number} ({student})",
                                   "Moodle skips it as out of range")
        try:
            datetime.fromisoformat(row[at["Last modified (grade)"]])
        except ValueError:
            problems.append(f"line {number} ({student}): Last modified (grade) is not a time Moodle reads")
    return problems


def grade_problems(grade: str, maximum: float, where: str, consequence: str) -> list[str]:
    """A Moodle grade: a number from 0 to the grade item's maximum."""
    if not MOODLE_NUMBER.match(grade):
        return [f"{where}: the grade {grade!r} is not a number"]
    if not 0 <= float(grade) <= maximum:
        return [f"{where}: the grade {grade} is above the grade item's maximum {maximum:g}, and "
                f"{consequence}: use --bonus moodle=cap or moodle=scale, or raise the item's maximum grade "
                f"in Moodle to {grade} and give --moodle-max {grade} with --lms-points (the item's points)"]
    return []


def gradebook(table: Sheet, maximum: float) -> list[str]:
    """Moodle's grade/import/csv (gradeimport_csv_load_data): a row's user is the last non-empty
    value of the column it is mapped by (map_user_data_with_value sets it only from a non-empty
    cell and never resets it: a row with a blank one is posted to the user of the row above, and
    a blank first row stops the whole import: usermappingerrorusernotfound), so every identifier
    column is filled in every row; and a grade that unformat_float reads and that is at most the
    grade item's maximum (above the site's grade point maximum the import stops:
    gradevaluetoobig; above the item's, Moodle lowers it to the maximum)."""
    problems = []
    identifiers = [i for i, name in enumerate(table.header)
                   if name in ("Student", "Email address", "ID number")]
    grade_at = len(identifiers)
    for number, (row, student) in enumerate(zip(table.rows, table.students), 2):
        for i in identifiers:
            if not row[i].strip():
                above = f"the user of line {number - 1}" if number > 2 else "no one: Moodle stops the import"
                problems.append(f"line {number} ({student}): no {table.header[i]}; mapped by it, Moodle "
                                f"posts this row's grade to {above}")
        problems += grade_problems(row[grade_at], maximum, f"line {number} ({student})",
                                   "Moodle lowers it to the maximum or stops the import")
    return problems


def canvas_feedback(files: LmsFiles) -> list[str]:
    """Canvas's Assignment#infer_comment_context_from_filename: of a file's name split at `_`,
    the first two parts that are all digits are the user id and the id of one of the files of
    that student's submission; a name starting with `._` is passed over."""
    problems = []
    for name in files.zips["feedback-canvas.zip"]:
        digits = [part for part in name.split("_") if part.isdigit()][:2]
        user_id = digits[0] if digits else ""
        owned = {found["file_id"] for m in files.canvas_files.get(user_id, [])
                 if (found := CANVAS_FILE.match(m)) and found["id"] == user_id}
        if name.startswith("._") or len(digits) < 2 or digits[1] not in owned:
            problems.append(f"{name}: Canvas would not find the student's user id and one of their "
                            "files' ids as the first two numbers of the name")
    return problems


def moodle_feedback(files: LmsFiles) -> list[str]:
    """Moodle's assignfeedback_file_zip_importer::is_valid_filename_for_import: a folder whose
    name, split at `_` (5 parts at most), has the participant id second and a plugin third and
    fourth (assignsubmission_file), holding files whose names start with neither `.` nor `~`."""
    problems = []
    rows = files.tables["grades-moodle-worksheet.csv"].rows
    participants = {found[2] for row in rows if (found := PARTICIPANT_CELL.match(row[0]))}
    for name in files.zips["feedback-moodle.zip"]:
        path = PurePosixPath(name)
        info = path.parts[0].split("_", 4)
        if len(info) < 4 or not info[1].isdigit() or info[2:4] != ["assignsubmission", "file"]:
            problems.append(f"{name}: the folder is not named "
                            "<full name>_<participant id>_assignsubmission_file")
        elif info[1] not in participants:
            problems.append(f"{name}: participant {info[1]} has no row in grades-moodle-worksheet.csv")
        if path.name.startswith((".", "~")):
            problems.append(f"{name}: Moodle passes over a file whose name starts with '.' or '~'")
    return problems
