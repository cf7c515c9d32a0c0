"""Canvas's and Moodle's importers, as their code reads a file, for the tests to read the kit's
files by: each function follows the method named in its docstring, and returns what the LMS
would take in, or raises AssertionError where the LMS would refuse or skip.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from datetime import datetime
from pathlib import Path, PurePosixPath

from support import KIT
from support.shape import broken, reference

DATA = KIT / "tests" / "data"
# What the downloads of tests/data hold: dual.py files (the tests that read them are about dual).
DUAL, BROKEN_DUAL = reference("dual"), broken("dual")
CANVAS_NUMBER = re.compile(r"^-?[0-9.,]+%?$")


def rows_of(path: Path) -> list[list[str]]:
    """A CSV's rows, split at `;` where its first line has more of them than commas (Canvas's
    export in a locale whose decimal separator is a comma)."""
    text = path.read_text(encoding="utf-8-sig")
    first = text.split("\n", 1)[0]
    return list(csv.reader(io.StringIO(text), delimiter=";" if first.count(";") > first.count(",") else ","))


def canvas_export_students(export: Path) -> list[dict[str, str]]:
    """The students of a Canvas Grades export (GradebookExporter): every row after the header
    that is not the Points Possible row."""
    header, *rows = rows_of(export)
    return [dict(zip(header, row)) for row in rows if "Points Possible" not in row[0]]


def canvas_import(path: Path, export: Path) -> dict[str, float]:
    """GradebookImporter#parse!: the header (#header?), the delimiter (#identify_delimiter),
    the Points Possible row (#check_for_non_student_row), each row's student by ID, then SIS
    User ID, then SIS Login ID, then the name or sortable name (#process_student), each grade
    through the decimal_comma_to_period converter. Returns the grade of each Canvas user id;
    a row whose student Canvas does not know fails."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()[:3]
    commas = [len(next(csv.reader([line]))) for line in lines]
    semicolons = [len(next(csv.reader([line], delimiter=";"))) for line in lines]
    assert not (len(set(semicolons)) == 1 and semicolons[0] > commas[0]), "Canvas would split at ;"
    header, *rows = list(csv.reader(io.StringIO(text)))
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], "invalid header row"
    assert header[2] == "SIS User ID" and header[3] == "SIS Login ID" and "Section" in header[4]
    students = canvas_export_students(export)
    grades: dict[str, float] = {}
    for row in rows:
        if "Points Possible" in row[0]:
            continue
        found = [s for s in students if row[1] and s["ID"] == row[1]] or \
            [s for s in students if row[2] and s["SIS User ID"] == row[2]] or \
            [s for s in students if row[3] and s["SIS Login ID"] == row[3]] or \
            [s for s in students if s["Student"] == row[0]][:1]  # @all_students.detect: the first of the name
        assert len(found) == 1, f"Canvas knows no student {row[:4]}"
        grade = row[5].strip()
        assert CANVAS_NUMBER.match(grade), grade
        assert found[0]["ID"] not in grades, f"two rows for {found[0]['Student']}"
        grades[found[0]["ID"]] = float(grade)
    return grades


def canvas_reupload(path: Path, download: list[str]) -> dict[str, list[str]]:
    """Assignment#generate_comments_from_files and #infer_comment_context_from_filename: each
    file's user id and attachment id are the first two parts of its name, split at `_`, that
    are all digits; the attachment must be one of that student's files in the download, or the
    file is ignored (here: fails). Returns the files each user id gets as a comment."""
    owned = {}
    for name in download:
        digits = [part for part in name.split("_") if part.isdigit()][:2]
        if len(digits) == 2:
            owned.setdefault(digits[0], set()).add(digits[1])
    got: dict[str, list[str]] = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            base = PurePosixPath(name).name
            user_id, attachment_id = [part for part in base.split("_") if re.fullmatch(r"\d+", part)][:2]
            assert not base.startswith("._") and attachment_id in owned.get(user_id, set()), \
                f"Canvas ignores {name}"
            got.setdefault(user_id, []).append(name)
    return got


def moodle_worksheet_import(path: Path, worksheet: Path) -> dict[str, float]:
    """assignfeedback_offline_grade_importer#init and #next, and process_import_grades: the
    Identifier, Grade and Last modified (grade) columns by their exact names, the participant
    id after `Participant `, the participant one of the assignment's; a grade empty, below 0 or
    above the assignment's maximum is skipped (here: fails, for a non-empty one). Returns the
    grade of each participant id."""
    header, *rows = rows_of(path)
    at = {name: header.index(name) for name in ("Identifier", "Grade", "Last modified (grade)")}
    participants = {row["Identifier"].removeprefix("Participant "): float(row["Maximum Grade"])
                    for row in (dict(zip(rows_of(worksheet)[0], r)) for r in rows_of(worksheet)[1:])}
    grades = {}
    for row in rows:
        assert len(row) == len(header), "csvweirdcolumns"
        participant = row[at["Identifier"]].removeprefix("Participant ")
        assert participant in participants, f"Moodle has no participant {participant}"
        grade = float(row[at["Grade"]])
        assert 0 <= grade <= participants[participant], f"{participant}: {grade} is out of range"
        grades[participant] = grade
    if "Feedback comments" in header:
        assert header.index("Feedback comments") > 0
    return grades


def moodle_feedback_import(path: Path, participants: set[str]) -> dict[str, list[str]]:
    """assignfeedback_file_zip_importer#is_valid_filename_for_import: of a path's parts, the
    first that splits at `_` (5 parts at most) into 4 or more, with a numeric participant id
    second and a plugin third and fourth; files starting with `.` or `~` are passed over."""
    got: dict[str, list[str]] = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            parts = PurePosixPath(name).parts
            assert not parts[-1].startswith((".", "~"))
            info = parts[0].split("_", 4)
            assert len(info) >= 4 and info[1].isdigit() and info[2:4] == ["assignsubmission", "file"], name
            assert info[1] in participants, f"no participant {info[1]}"
            got.setdefault(info[1], []).append("/".join(parts[1:]))
    return got


# What assignfeedback_offline reads a worksheet by, in the importing user's language: get_string
# ('recordid', 'assign'), ('grade'), ('lastmodifiedgrade', 'assign'), ('hiddenuser', 'assign'),
# and assignfeedback_comments' editor field, from Moodle's English strings and the French pack.
MOODLE_STRINGS = {
    "en": {"recordid": "Identifier", "grade": "Grade", "lastmodifiedgrade": "Last modified (grade)",
           "hiddenuser": "Participant ", "comments": "Feedback comments"},
    "fr": {"recordid": "Identifiant", "grade": "Note", "lastmodifiedgrade": "Dernière modification (note)",
           "hiddenuser": "Participant", "comments": "Commentaires de feedback"},
}


Graded = dict[str, tuple[float, float]]  # Moodle's (grade, time modified) by participant id


def moodle_worksheet_upload(path: Path, strings: dict[str, str], participants: set[str], maximum: float,
                            graded: Graded, now: float) -> Graded:
    """mod/assign/feedback/offline: importgradeslib.php's grade_importer#init (Identifier, Grade
    and Last modified (grade) found by the importing user's strings, or the upload is invalid)
    and #next (the id is what follows as many characters as get_string('hiddenuser') has), and
    locallib.php's process_import_grades: a row is skipped when its grade equals Moodle's, is
    empty or below 0, is above the maximum grade, or when Moodle's grade was modified more than
    60 seconds after the row's time (strtotime). `graded` is Moodle's (grade, time modified) by
    participant; returns it after the upload, at time `now`."""
    header, *rows = rows_of(path)
    names = (strings["recordid"], strings["grade"], strings["lastmodifiedgrade"])
    assert all(name in header for name in names), "invalidgradeimport"
    at = [header.index(name) for name in names]
    after = dict(graded)
    for row in rows:
        participant = row[at[0]][len(strings["hiddenuser"]):]
        if participant not in participants:
            continue
        grade = float(row[at[1]].replace(",", ".")) if row[at[1]].strip() else None
        modified = datetime.fromisoformat(row[at[2]]).timestamp()
        current = graded.get(participant)
        stale = current is not None and current[1] > modified + 60
        same = current is not None and current[0] == grade
        if same or grade is None or grade < 0 or stale or grade > maximum:
            continue
        after[participant] = (grade, now)
    return after


def moodle_gradebook_import(path: Path, users: list[dict[str, str]], map_from: str, map_to: str,
                            grade_column: str) -> dict[str, float]:
    """grade/import/csv/classes/load_data.php, prepare_import_grade_data and
    map_user_data_with_value: the row's user is looked up from the `map_from` column only where
    that cell is not empty; a blank one leaves the user of the row before, and a row with no user
    yet stops the whole import (usermappingerrorusernotfound). Returns each user's grade by the
    `map_to` field's value of the user it went to."""
    header, *rows = rows_of(path)
    column, grade_at = header.index(map_from), header.index(grade_column)
    student = None
    grades: dict[str, float] = {}
    for row in rows:
        if len(row) <= 1:
            continue
        value = row[column].strip()
        if value:
            found = [user for user in users if user[map_to] == value]
            assert found, f"usermappingerrorusernotfound: {value}"
            student = found[0][map_to]
        assert student is not None, "usermappingerrorusernotfound: the whole import stops"
        grades[student] = float(row[grade_at])
    return grades


def member_bytes(what: str) -> bytes:
    """What a member of a download manifest holds."""
    if what.startswith("solutions/"):
        return (KIT / what).read_bytes()
    if what == "broken dual":
        return BROKEN_DUAL.encode()
    if what == "corrupt zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("dual.py", DUAL)
        return buffer.getvalue()[:200]
    return what.encode()


class UnflaggedName(zipfile.ZipInfo):
    """A member whose UTF-8 name is written without the UTF-8 flag, as rubyzip writes it."""

    def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own name
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def lms_class(folder: Path, manifest: Path, utf8_flag: bool) -> Path:
    """A class folder holding the LMS's download zip of `manifest` and what it says sits beside it."""
    described = json.loads(manifest.read_text(encoding="utf-8"))
    folder.mkdir(parents=True)
    kind = zipfile.ZipInfo if utf8_flag else UnflaggedName
    with zipfile.ZipFile(folder / described["zip"], "w") as archive:
        for name, what in described["members"].items():
            archive.writestr(kind(name, (2026, 12, 1, 9, 0, 0)), member_bytes(what))
    for name, what in described.get("beside", {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(member_bytes(what))
    return folder
