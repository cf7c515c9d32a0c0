"""The grades in the import formats of Canvas and Moodle, with the ids their downloads gave.

A class of Canvas, Moodle and plain entries is graded with `--lms-assignment` naming the Canvas
assignment as Canvas's own export heads its column. Each import file is then read the way its
LMS reads it (the rules below follow Canvas's GradebookImporter and Moodle's two importers), and
checked against a sample of what that LMS itself exports for the same course, kept in
tests/data/ (written by hand to each exporter's layout: Canvas's GradebookExporter, Moodle's
grading worksheet download and its gradebook export).
"""

import csv
import re
from datetime import datetime
from pathlib import Path

import pytest
from staff.test_bulk import DUAL, bulk_run, outdir

from autograder.config import load
from autograder.staff import bulk

DATA = Path(__file__).resolve().parent.parent / "data"
ASSIGNMENT = "Homework 3: autograd engines (4821)"  # the column Canvas's export gives the assignment
# Canvas's import: "Student", "ID", then optionally "SIS User ID" and "SIS Login ID", then "Section"
# as the last column about the student; every later column is an assignment.
CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")  # Assignment.title_and_id
# A Moodle assignment's grading worksheet upload finds its columns by these names.
WORKSHEET_COLUMNS = ("Identifier", "Grade", "Last modified (grade)")
BROKEN_DUAL = DUAL.replace("self.der * other.val + self.val * other.der", "self.der * other.der")


def table(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.reader(file))


def by_header(rows: list[list[str]]) -> list[dict[str, str]]:
    return [dict(zip(rows[0], row)) for row in rows[1:]]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """A class from a Canvas download, a Moodle download, and entries named by the students' ID
    numbers, graded into an OUTDIR."""
    root = tmp_path_factory.mktemp("lms")
    sealed = tmp_path_factory.mktemp("sealed")
    bulk.sealed_reference(sealed, bulk.grader_version())
    klass = root / "class"
    files = {"smithjane_12345_67890_dual.py": DUAL, "doejohn_LATE_23456_78901_dual.py": BROKEN_DUAL,
             "Grace Hopper_300021_assignsubmission_file_/dual.py": BROKEN_DUAL,
             "s2024001/dual.py": DUAL, "s2024002/dual.py": BROKEN_DUAL}
    for name, text in files.items():
        (klass / name).parent.mkdir(parents=True, exist_ok=True)
        (klass / name).write_text(text, encoding="utf-8")
    out = outdir(root / "out", sealed / "reference")
    assert bulk_run(klass, out, "--lms-assignment", ASSIGNMENT) == 0
    return out


def totals(out: Path) -> dict[str, float]:
    return {row["student"]: float(row["total"]) for row in by_header(table(out / "grades.csv"))}


def test_the_canvas_file_is_read_by_canvas_rules_into_the_assignment_its_export_names(graded):
    rows = table(graded / "grades-canvas.csv")
    header, points, *students = rows
    assert header == [*CANVAS_HEADER, ASSIGNMENT]  # one assignment column, not one per part
    assert "Student" in header[0] and "ID" in header[1] and header[4] == "Section"
    exported = table(DATA / "canvas-gradebook-export.csv")
    assert exported[0][:5] == CANVAS_HEADER  # the sample has the layout Canvas's exporter writes
    column = exported[0].index(ASSIGNMENT)  # Canvas finds the assignment by the id in the heading
    assert CANVAS_TITLE_AND_ID.match(header[5])[2] == CANVAS_TITLE_AND_ID.match(exported[0][column])[2]
    assert "Points Possible" in points[0] and "Points Possible" in exported[1][0]
    assert float(points[5]) == float(exported[1][column]) == sum(
        p.points for p in load().parts.values() if not p.bonus)
    ids = {row[1]: row[0] for row in students if row[1]}
    assert ids == {"12345": "smithjane_12345", "23456": "doejohn_23456"}  # the user ids the download gave
    assert set(ids) <= {row[1] for row in exported[2:]}
    expected = totals(graded)
    assert {row[0]: float(row[5]) for row in students} == expected


def test_the_moodle_worksheet_finds_each_participant_as_moodle_does(graded):
    rows = table(graded / "grades-moodle-worksheet.csv")
    assert all(column in rows[0] for column in WORKSHEET_COLUMNS)
    sample = {row["Identifier"]: row for row in by_header(table(DATA / "moodle-grading-worksheet.csv"))}
    assert all(column in next(iter(sample.values())) for column in WORKSHEET_COLUMNS)
    (row,) = by_header(rows)  # the one student of the Moodle download
    assert row["Identifier"] == "Participant 300021" and row["Identifier"] in sample
    assert row["Identifier"].removeprefix("Participant ") == "300021"  # as Moodle strips it
    assert row["Full name"] == sample[row["Identifier"]]["Full name"]
    grade = float(row["Grade"])
    assert grade == totals(graded)["Grace_Hopper_300021"]
    assert 0 <= grade <= float(sample[row["Identifier"]]["Maximum Grade"])  # else Moodle skips it
    datetime.fromisoformat(row["Last modified (grade)"])


def test_the_moodle_gradebook_file_maps_each_row_to_one_user_as_moodle_does(graded):
    """The TA maps the identifying column to the users' ID numbers, which name this class's
    entries; Moodle then finds every row's user, and no row lacks one (Moodle would give its
    grade to the user of the row before)."""
    rows = table(graded / "grades-moodle.csv")
    assert rows[0] == ["Student", ASSIGNMENT]
    users = by_header(table(DATA / "moodle-gradebook-export.csv"))
    expected = totals(graded)
    for student, grade in rows[1:]:
        assert student and [user["ID number"] for user in users].count(student) == 1, student
        assert float(grade) == expected[student]
    assert sorted(student for student, _ in rows[1:]) == ["s2024001", "s2024002"]  # no LMS student
