"""The grades in the import formats of Canvas and Moodle, with the ids their downloads gave.

A class of Canvas, Moodle and plain entries is graded with `--lms-assignment` naming the Canvas
assignment as Canvas's own export heads its column. Each import file is then read the way its
LMS reads it (the rules below follow Canvas's GradebookImporter and Moodle's two importers), and
checked against a sample of what that LMS itself exports for the same course, kept in
tests/data/ (written by hand to each exporter's layout: Canvas's GradebookExporter, Moodle's
grading worksheet download and its gradebook export).
"""

import csv
import html
import json
import math
import re
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from support import KIT
from support.bulk_runs import BROKEN, SOURCE, bulk_run, entries_of, outdir
from support.corpus import BUGS, build
from support.lms import (
    canvas_import,
    canvas_reupload,
    lms_class,
    moodle_feedback_import,
    moodle_worksheet_import,
)
from support.shape import GRADED, SAMPLE

from autograder.config import load
from autograder.staff import bulk

pytestmark = pytest.mark.slow  # grades, or starts workers, in processes of its own

DATA = Path(__file__).resolve().parent.parent / "data"
ASSIGNMENT = "Homework 3: autograd engines (4821)"  # the column Canvas's export gives the assignment
# Canvas's import: "Student", "ID", then optionally "SIS User ID" and "SIS Login ID", then "Section"
# as the last column about the student; every later column is an assignment.
CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")  # Assignment.title_and_id
# A Moodle assignment's grading worksheet upload finds its columns by these names.
WORKSHEET_COLUMNS = ("Identifier", "Grade", "Last modified (grade)")


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
    files = {f"smithjane_12345_67890_{SAMPLE}.py": SOURCE, f"doejohn_LATE_23456_78901_{SAMPLE}.py": BROKEN,
             f"Grace Hopper_300021_assignsubmission_file_/{SAMPLE}.py": BROKEN,
             f"s2024001/{SAMPLE}.py": SOURCE, f"s2024002/{SAMPLE}.py": BROKEN}
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
    # Only the rows Canvas finds by an id: one with a name alone goes to the first student of the name.
    assert {row[0]: float(row[5]) for row in students} == {s: expected[s] for s in ids.values()}
    summary = (graded / "summary.html").read_text(encoding="utf-8")
    for student in set(expected) - set(ids.values()):
        assert f"<td>{student}</td><td>not in grades-canvas.csv</td><td>no Canvas id" in summary


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
    assert rows[0] == ["Student", ASSIGNMENT, "late"]  # Moodle's import ignores a column left unmapped
    users = by_header(table(DATA / "moodle-gradebook-export.csv"))
    expected = totals(graded)
    for student, grade, _late in rows[1:]:
        assert student and [user["ID number"] for user in users].count(student) == 1, student
        assert float(grade) == expected[student]
    assert sorted(row[0] for row in rows[1:]) == ["s2024001", "s2024002"]  # no LMS student


# -- a whole class from each LMS, in one command ---------------------------------------------------
# Each class is the LMS's own download zip (tests/data/*/download.json names its members as the
# LMS does), with a bonus, a late entry, a text entry, a corrupt zip and a non-ASCII name, graded
# with the LMS's own roster export. Every file is then read by that LMS's importer (support/lms.py).

def summary_text(out: Path) -> str:
    return re.sub(r"base64,[^']*", "", (out / "summary.html").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def canvas_class(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("canvas")
    sealed = tmp_path_factory.mktemp("sealed-canvas")
    bulk.sealed_reference(sealed, bulk.grader_version())
    klass = lms_class(root / "class", DATA / "canvas" / "download.json", utf8_flag=False)
    out = outdir(root / "out", sealed / "reference")
    code = bulk_run(klass, out, "--roster", str(DATA / "canvas" / "grades-export.csv"), "--lms-assignment",
                    ASSIGNMENT, "--late-per-day", "2", "--late-cap", "3")
    assert code == 0
    return out, klass


@pytest.mark.engine("dual")  # the downloads of tests/data hold dual.py files, worth 10 of 102 points
def test_a_canvas_download_grades_in_one_command_and_imports_by_canvas_rules(canvas_class, capsys):
    out, klass = canvas_class
    export = DATA / "canvas" / "grades-export.csv"
    grades = canvas_import(out / "grades-canvas.csv", export)
    # The bonus kept (Canvas takes extra credit), the late entry less a day, the non-ASCII name
    # joined by its user id, the student who handed in beside the download joined by name.
    assert grades == {"12345": 102.0, "23456": 8.0, "34567": 10.0, "61234": 10.0}
    summary = summary_text(out)
    for name, why in (("leeann_45678", "an online text entry"), ("obrienpat_56789", "not a readable zip")):
        held = f"<td>{name}</td><td>held back</td><td>could not be graded: [^<]*{why}"
        assert re.search(held, summary), name
    assert "Student, Test" in summary  # in the roster, with no submission: said, not zeroed
    book = {e.student: e for e in entries_of(out)}
    assert set(book) == {"smithjane_12345", "doejohn_23456", "müllerjürgen_34567", "leeann_45678",
                         "obrienpat_56789", "Sam_Kim"}  # one entry per student, none doubled
    assert book["doejohn_23456"].late and not book["smithjane_12345"].late
    with (out / "grades.csv").open(newline="", encoding="utf-8") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    doe = rows["doejohn_23456"]
    assert doe["late penalty"] == "2" and "counted as 1 day" in doe["late"]
    assert rows["leeann_45678"]["total"] == "" and "online text entry" in rows["leeann_45678"]["held back"]
    feedback = canvas_reupload(out / "feedback-canvas.zip", json.loads(
        (DATA / "canvas" / "download.json").read_text(encoding="utf-8"))["members"])
    assert set(feedback) == {"12345", "23456", "34567"}  # Sam Kim handed in outside Canvas: no file to name


@pytest.fixture(scope="module")
def sealed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sealed-moodle")
    bulk.sealed_reference(out, bulk.grader_version())
    return out / "reference"


@pytest.mark.engine("dual")  # the downloads of tests/data hold dual.py files, worth 10 of 102 points
def test_a_moodle_download_grades_in_one_command_and_imports_by_moodle_rules(tmp_path, sealed):
    klass = lms_class(tmp_path / "class", DATA / "moodle" / "download.json", utf8_flag=True)
    out = outdir(tmp_path / "out", sealed)
    worksheet = DATA / "moodle" / "grading-worksheet.csv"
    assert bulk_run(klass, out, "--roster", str(worksheet), "--late-per-day", "2", "--late-cap", "3",
                    "--due", "2026-11-30T12:00") == 0
    grades = moodle_worksheet_import(out / "grades-moodle-worksheet.csv", worksheet)
    # The bonus capped at the maximum, 100 (Moodle skips a grade above it); Alan 27 hours late:
    # 2 days, 4 points, capped at 3.
    assert grades == {"300021": 100.0, "300022": 7.0, "300023": 10.0}
    feedback = moodle_feedback_import(out / "feedback-moodle.zip", set(grades))
    assert feedback == {participant: ["feedback.html"] for participant in grades}
    header, *rows = table(out / "grades-moodle-worksheet.csv")
    comments = {row[0]: row[header.index("Feedback comments")] for row in rows}
    assert "Autograder: 7 / 100" in comments["Participant 300022"] and '"' not in "".join(comments.values())
    assert "2 days late" in rows[[r[0] for r in rows].index("Participant 300022")][header.index("late")]
    by_email = {row[0]: row for row in table(out / "grades-moodle.csv")[1:]}
    assert set(by_email) == {"ghopper@example.edu", "aturing@example.edu", "zangstrom@example.edu"}
    summary = summary_text(out)
    assert "Ada Lovelace_300024_*" not in summary or "online text entry" in summary
    for student, why in (("Ada_Lovelace_300024", "an online text entry"),
                         ("Edsger_Dijkstra_300025", "not a readable zip")):
        assert re.search(f"<td>{student}</td><td>held back</td><td>could not be graded: [^<]*{why}", summary)
    assert "Barbara Liskov" in summary  # no submission: listed, never a grade
    names = {e.lms_name for e in entries_of(out)}
    assert "Zoë Ångström" in names


@pytest.mark.engine("dual")  # the downloads of tests/data hold dual.py files, worth 10 of 102 points
def test_a_bonus_moodle_would_skip_is_refused_before_anything_is_written(tmp_path, sealed, capsys):
    klass = lms_class(tmp_path / "class", DATA / "moodle" / "download.json", utf8_flag=True)
    out = outdir(tmp_path / "out", sealed)
    worksheet = DATA / "moodle" / "grading-worksheet.csv"
    assert bulk_run(klass, out, "--roster", str(worksheet), "--bonus", "moodle=keep") == 2
    err = capsys.readouterr().err
    assert ("pre-flight: grades-moodle-worksheet.csv: line 2 (Grace_Hopper_300021): the grade 102 is above "
            "the grade item's maximum 100") in err
    assert ("pre-flight: Moodle: totals out of 100 are posted out of 100 points (the worksheet's Maximum "
            "Grade); the bonus is kept above 100.") in err  # the scale, in one line
    assert not (out / "grades.csv").exists() and not (out / "grades-moodle-worksheet.csv").exists()
    # Once the TA has raised the assignment's maximum grade in Moodle, and says so:
    assert bulk_run(klass, out, "--roster", str(worksheet), "--bonus", "moodle=keep", "--moodle-max",
                    "102") == 0
    header, *rows = table(out / "grades-moodle-worksheet.csv")
    assert rows[0][header.index("Grade")] == "102"


# -- every snippet of every feedback file runs, pasted where the student's files are -------------------

ONE_BUG = tuple(name for engine, name in (
    ("value", "mul-assigns-instead-of-adding"), ("value", "tanh-derivative-of-input"),
    ("value", "relu-gate-on-the-wrong-side"), ("value", "quotient-rule-sign"),
    ("value", "backward-clears-first"), ("value", "zero-grad-on-self-only"),
    ("tensor", "unbroadcast-keeps-leading-axes"),
    ("dual", "dual-default-derivative-one")) if engine in GRADED)  # bugs of each engine the kit grades
REPRODUCE = "To reproduce"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def pairs_in_markdown(text: str) -> list[tuple[str, str]]:
    """Each snippet of a Markdown feedback file (the indented lines after "To reproduce") and the
    "Came out" line after it."""
    found, lines = [], text.splitlines()
    for at, line in enumerate(lines):
        if not line.startswith(REPRODUCE):
            continue
        end = at + 1
        while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
            end += 1
        snippet = "\n".join(line[4:] for line in lines[at + 1:end]).strip("\n")
        came = next((line for line in lines[end:] if line.startswith("Came out:")), "")
        found.append((snippet, came))
    return found


def pairs_in_html(text: str) -> list[tuple[str, str]]:
    """Each snippet of an HTML feedback file (its <pre><code> after "To reproduce") and the
    "Came out" line after it."""
    found = []
    for match in re.finditer(r"To reproduce[^<]*</p>\s*<pre><code>(.*?)</code></pre>(.*?)(?=To reproduce|\Z)",
                             text, re.DOTALL):
        came = re.search(r"Came out: (.*?)(?:<br>|</p>)", match[2], re.DOTALL)
        found.append((html.unescape(match[1]), "Came out: " + html.unescape(came[1]) if came else ""))
    return found


def prints_what_came_out(ran: subprocess.CompletedProcess, came: str) -> bool:
    """Does a snippet's run show what "Came out" says: the exception it raised, or each number it
    states (to the digits stated), or its text where it states none?"""
    said = came.removeprefix("Came out:").strip()
    if said.startswith("raised "):
        return ran.returncode != 0 and said.removeprefix("raised ") in ran.stderr
    output = ran.stdout
    if ran.returncode != 0:
        return False
    value = said.rsplit(" = ", 1)[-1]
    stated = NUMBER.findall(value)
    if not stated:
        return value in output
    printed = [float(n) for n in NUMBER.findall(output)]
    return all(any(math.isclose(float(n), p, rel_tol=1e-6, abs_tol=1e-9) for p in printed) for n in stated)


def test_every_snippet_in_every_feedback_file_runs_where_the_students_files_are(tmp_path, sealed):
    """A class of eight one-bug students, from a Canvas download, a Moodle download and folders:
    every snippet of feedback/*.md, *.html, feedback-canvas.zip and feedback-moodle.zip compiles,
    runs pasted in the student's folder (a folder of the kit's, as the snippets say), and prints
    what its "Came out" line says."""
    bugs = {entry.name: entry for entry in BUGS}
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "autograder").symlink_to(KIT / "autograder")
    klass = tmp_path / "class"
    klass.mkdir()
    folders = {}
    for n, name in enumerate(ONE_BUG):
        folders[name] = kit / name
        build(bugs[name], KIT / "solutions", folders[name])
        for file_id, engine in enumerate(GRADED):
            target = (klass / f"bug{n}_{41000 + n}_{9000 + 10 * n + file_id}_{engine}.py" if n < 3 else
                      klass / f"Bug {n}_{300040 + n}_assignsubmission_file_" / f"{engine}.py" if n < 6 else
                      klass / f"bug{n}" / f"{engine}.py")
            target.parent.mkdir(exist_ok=True)
            target.write_bytes((folders[name] / f"{engine}.py").read_bytes())
    out = outdir(tmp_path / "out", sealed)
    assert bulk_run(klass, out) == 0
    def owner(name: str) -> str:
        return ONE_BUG[int(re.search(r"bug[ _]?(\d)", name, re.IGNORECASE)[1])]

    files = [(path.name, owner(path.name), path.read_text(encoding="utf-8"))
             for path in sorted((out / "feedback").iterdir())]
    for archive in ("feedback-canvas.zip", "feedback-moodle.zip"):
        with zipfile.ZipFile(out / archive) as opened:
            files += [(f"{archive}/{member}", owner(member), opened.read(member).decode("utf-8"))
                      for member in opened.namelist()]
    assert {where.split("/")[0] for where, _, _ in files} >= {"feedback-canvas.zip", "feedback-moodle.zip"}
    snippets = {}  # (snippet, whose) -> came out, and every file that holds it
    for where, whose, text in files:
        pairs = pairs_in_markdown(text) if where.endswith(".md") else pairs_in_html(text)
        assert pairs or "Came out" not in text, where
        for snippet, came in pairs:
            snippets.setdefault((snippet, whose, came), []).append(where)
    assert len(snippets) >= 20 and sum(len(w) for w in snippets.values()) >= 60
    failures = []
    for (snippet, whose, came), where in snippets.items():
        compile(snippet, where[0], "exec")
        ran = subprocess.run([sys.executable, "-c", snippet], cwd=folders[whose], capture_output=True,
                             text=True, timeout=300, check=False)
        if not prints_what_came_out(ran, came):
            failures.append(f"{where}: {came!r}\n{snippet}\n{ran.stdout[-500:]}{ran.stderr[-800:]}")
    assert not failures, f"{len(failures)} of {len(snippets)} snippets:\n" + "\n\n".join(failures[:5])
