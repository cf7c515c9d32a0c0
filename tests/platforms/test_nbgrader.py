"""nbgrader: notebooks made from the .py files, and a course graded by the kit inside nbgrader.

A temporary course folder gets the notebooks of `autograder release nbgrader` as its source,
a due date, and a configuration that uses the kit (`use_the_kit(c)`) and takes a point per
hour late from each notebook. `nbgrader generate_assignment` makes the students' version,
four students submit (right, untouched, one bug, right but late), and the TA runs the one
command: `autograder bulk COURSE --nbgrader-db ... --assignment engines`. The tests then look
where nbgrader's users look, with nbgrader's own apps: formgrader's API, `nbgrader
autograde` run again (with the kit, and as nbgrader runs it by default, executing the
notebooks), `nbgrader generate_feedback`, `nbgrader export`, and a grade typed in by hand.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from datetime import UTC, timedelta
from pathlib import Path

import pytest
from support.releases import solution_lines

from autograder.stubs import stubs_by_part

nbformat = pytest.importorskip("nbformat", reason="nbformat is a staff extra: pip install -e '.[staff]'")
pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")
from nbgrader.api import Gradebook  # noqa: E402 - only once nbgrader is known to be there
from nbgrader.apps.api import NbGraderAPI  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from support import KIT  # noqa: E402
from support.nbgrader_courses import (  # noqa: E402
    ASSIGNMENT,
    BONUS,
    BUG,
    CLI,
    DUE,
    GRADING,
    LATE,
    MOST,
    STOCK,
    db_url,
    filled,
    nbgrader,
    nbgrader_ids,
    nbgrader_parts,
    new_course,
    submit,
)
from support.shape import GRADED  # noqa: E402

from autograder import intake  # noqa: E402
from autograder.notebook import grade_id, score_notebooks  # noqa: E402
from autograder.staff.nbgrader_course import course_config, notebook_module  # noqa: E402
from autograder.staff.nbgrader_release import BEGIN, END, build_notebook  # noqa: E402

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length
@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory, nbgrader_course: Path) -> Path:
    root = tmp_path_factory.mktemp("course")
    source, release = new_course(root, ("alice", "bob", "carol", "dana"), nbgrader_course)
    on_time = DUE - timedelta(days=1)
    submit(root, "alice", lambda e: filled(release / f"{e}.ipynb", source / f"{e}.ipynb"), on_time)
    submit(root, "bob", lambda e: nbformat.read(release / f"{e}.ipynb", as_version=4), on_time)
    submit(root, "carol", lambda e: filled(release / f"{e}.ipynb", source / f"{e}.ipynb", BUG), on_time)
    submit(root, "dana", lambda e: filled(release / f"{e}.ipynb", source / f"{e}.ipynb"), DUE + LATE)
    return root


def bulk(course: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    """The TA's one command."""
    done = subprocess.run(CLI + ["bulk", str(course), "-o", str(out), "--nbgrader-db", db_url(course),
                                 "--assignment", ASSIGNMENT, *options],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def graded(course: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The course after the TA's one command: the kit's own grades by student and part, and
    what the command printed."""
    out = tmp_path_factory.mktemp("out")
    done = bulk(course, out)
    with open(out / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student"]: row for row in csv.DictReader(table)}
    parts = {student: {part: float(row[part]) for part in GRADING.parts} for student, row in rows.items()}
    return {"parts": parts, "out": out, "log": done.stdout + done.stderr}


def api(course: Path) -> NbGraderAPI:
    """formgrader's view of the course, as its handlers get it: with the course's configuration."""
    config = course_config(course)
    return NbGraderAPI(coursedir=CourseDirectory(config=config, root=str(course), db_url=db_url(course)),
                       config=config)


def export(course: Path) -> dict[str, dict]:
    nbgrader(course, "export", "--to", str(course / "grades.csv"))
    with open(course / "grades.csv", newline="", encoding="utf-8") as table:
        return {row["student_id"]: row for row in csv.DictReader(table)}


def penalty_of(scores: dict[str, float]) -> float:
    """dana's late penalty under the course's plugin: per notebook, never above its score."""
    hours = math.ceil(LATE.total_seconds() / 3600)
    return sum(min(hours, sum(s for part, s in scores.items() if part.split(".")[0] == engine))
               for engine in GRADED)


# -- the notebooks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", GRADED)
def test_a_notebook_per_file_made_from_the_py_files(engine):
    notebook = build_notebook(KIT, engine, GRADING)
    assert json.dumps(notebook, sort_keys=True) == json.dumps(build_notebook(KIT, engine, GRADING),
                                                              sort_keys=True)
    first, *cells = notebook.cells
    assert first.cell_type == "markdown" and first.metadata["nbgrader"]["locked"]
    answers = [c for c in cells if c.metadata["nbgrader"]["solution"]]
    stubs = [name for found in stubs_by_part(KIT / "solutions").values()
             for file, name in found if file == engine]
    assert len(answers) == len(stubs)
    for cell in answers:
        assert cell.source.count(BEGIN) == 1 and cell.source.count(END) == 1
    for cell in cells:
        if not cell.metadata["nbgrader"]["solution"]:
            assert cell.metadata["nbgrader"]["locked"]
    grading = [c for c in cells if c.metadata["nbgrader"]["grade"]]
    parts = [p for p in GRADING.parts.values() if p.id.split(".")[0] == engine]
    assert [c.metadata["nbgrader"]["grade_id"] for c in grading] == [grade_id(p.id) for p in parts]
    assert [c.metadata["nbgrader"]["points"] for c in grading] == [0 if p.bonus else p.points for p in parts]
    text = json.dumps(notebook)
    assert "def test_" not in text and "suspects" not in text  # no test enters a notebook


def test_generate_assignment_hands_out_the_stubs(course):
    release = course / "release" / ASSIGNMENT
    texts = {engine: (release / f"{engine}.ipynb").read_text(encoding="utf-8") for engine in GRADED}
    for function, engine in (("Value.__mul__", "value"), ("Value.backward", "value"),
                             ("unbroadcast", "tensor"), ("Dual.sin", "dual")):
        escaped = {line: json.dumps(line)[1:-1] for line in solution_lines(function, engine)}
        leaked = [line for line, text in escaped.items() if text in texts[engine]]
        assert not leaked, f"{engine}.ipynb hands out {function}: {leaked}"
    assert all("raise NotImplementedError()" in text for text in texts.values())
    scores = score_notebooks({engine: release / f"{engine}.ipynb" for engine in GRADED})
    assert not any(entry["score"] for entry in scores.values())


def test_grading_cells_do_nothing_where_a_notebook_is_imported(course, tmp_path):
    """A converter that keeps every code cell, grading cells too, still makes a working module."""
    for engine in GRADED:
        notebook = nbformat.read(course / "source" / ASSIGNMENT / f"{engine}.ipynb", as_version=4)
        code = "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
        assert "check_part(" in code
        (tmp_path / f"{engine}.py").write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           f"--submission={tmp_path}"], cwd=KIT, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:]


# -- the TA's one command, seen from nbgrader -------------------------------------------------------------

def test_the_kit_grades_the_notebooks_as_it_grades_py_files(course, graded, autograde, tmp_path):
    parts = graded["parts"]
    assert parts["alice"] == parts["dana"] == {part.id: part.points for part in GRADING.parts.values()}
    assert not any(parts["bob"].values())
    folder = tmp_path / "carol"  # carol's notebooks score what her code scores as .py files
    folder.mkdir()
    for engine in GRADED:
        text = (KIT / "solutions" / f"{engine}.py").read_text(encoding="utf-8")
        (folder / f"{engine}.py").write_text(text.replace(*BUG), encoding="utf-8")
    assert parts["carol"] == {part: entry["score"] for part, entry in autograde(folder).items()}
    assert 0 < parts["carol"]["value.mul"] < GRADING.parts["value.mul"].points  # partial credit
    assert "SAWarning" not in graded["log"]


def test_the_kit_knows_the_code_nbgrader_autogrades_from_the_code_bulk_graded(course):
    """The kit reuses its grade in nbgrader only for the very module it graded: the same for a
    notebook as submitted, another once a locked cell differs (nbgrader restores those)."""
    submitted = course / "submitted" / "carol" / ASSIGNMENT
    graded = next(s for s in intake.collect(course, assignment=ASSIGNMENT)  # as bulk reads the course
                  if s.source == "submitted/carol").files
    notebook = nbformat.read(submitted / "value.ipynb", as_version=4)
    assert notebook_module(notebook, "value") == graded["value"]
    given = next(cell for cell in notebook.cells if cell.metadata["nbgrader"]["locked"]
                 and cell.cell_type == "code" and "def __add__" in cell.source)
    given.source += "\n# a line the student added to given code"
    assert notebook_module(notebook, "value") != graded["value"]


def test_formgrader_shows_every_submission_autograded_with_the_kits_points(course, graded):
    formgrader = api(course)
    submissions = {s["student"]: s for s in formgrader.get_submissions(ASSIGNMENT)}
    assert set(submissions) == {"alice", "bob", "carol", "dana"}
    for student, submission in submissions.items():
        assert submission["autograded"] and submission["submitted"], student
        assert not submission["needs_manual_grade"], student
        assert submission["score"] == pytest.approx(sum(graded["parts"][student].values())), student
        assert submission["max_score"] == MOST
    for engine in GRADED:  # Manual Grading lists every notebook of every submission
        listed = formgrader.get_notebook_submissions(ASSIGNMENT, engine)
        assert sorted(n["student"] for n in listed) == ["alice", "bob", "carol", "dana"], engine
    for student in submissions:
        assert nbgrader_parts(course, student) == pytest.approx(graded["parts"][student]), student
    with Gradebook(db_url(course)) as gradebook:  # the bonus is extra credit on a cell worth 0
        grade = gradebook.find_grade(grade_id("value.sigmoid"), "value", ASSIGNMENT, "alice")
        assert (grade.max_score, grade.auto_score, grade.extra_credit) == (0, 0, BONUS)


def test_the_timestamp_and_the_late_penalty_are_nbgraders(course, graded):
    with Gradebook(db_url(course)) as gradebook:
        dana = gradebook.find_submission(ASSIGNMENT, "dana")
        alice = gradebook.find_submission(ASSIGNMENT, "alice")
        assert dana.timestamp.replace(tzinfo=UTC) == DUE + LATE
        assert dana.total_seconds_late == LATE.total_seconds()
        assert dana.late_submission_penalty == penalty_of(graded["parts"]["dana"]) > 0
        assert alice.total_seconds_late == 0 and not alice.late_submission_penalty
    rows = export(course)
    assert float(rows["dana"]["raw_score"]) == MOST + BONUS
    assert float(rows["dana"]["score"]) == MOST + BONUS - penalty_of(graded["parts"]["dana"])


def test_the_export_has_a_column_per_part(course, graded):
    rows = export(course)
    assert set(rows) == {"alice", "bob", "carol", "dana"}
    for student, row in rows.items():
        assert {part: float(row[part]) for part in GRADING.parts} == pytest.approx(graded["parts"][student])
        assert float(row["raw_score"]) == pytest.approx(sum(graded["parts"][student].values()))
        assert float(row["max_score"]) == MOST


def test_generate_feedback_shows_the_kits_messages(course, graded):
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    for student in ("alice", "bob", "carol", "dana"):
        for engine in GRADED:
            assert (course / "feedback" / student / ASSIGNMENT / f"{engine}.html").is_file(), student
    carol = (course / "feedback" / "carol" / ASSIGNMENT / "value.html").read_text(encoding="utf-8")
    assert f"value.mul: {graded['parts']['carol']['value.mul']:g} / 10 points" in carol
    assert "overwrites-gradient" in carol  # the misconception the kit named


def test_nbgrader_autograde_after_the_kit_changes_nothing(course, graded):
    before = {student: nbgrader_parts(course, student) for student in ("alice", "bob", "carol", "dana")}
    log = nbgrader(course, "autograde", ASSIGNMENT)  # everything is autograded already
    assert "Skipping existing assignment" in log
    nbgrader(course, "autograde", ASSIGNMENT, "--force", "--student", "carol")  # with the kit
    result = api(course).autograde(ASSIGNMENT, "dana")  # formgrader's Autograde button
    assert result["success"], result.get("error")
    after = {student: nbgrader_parts(course, student) for student in before}
    assert after == before
    with Gradebook(db_url(course)) as gradebook:
        dana = gradebook.find_submission(ASSIGNMENT, "dana")
        assert dana.late_submission_penalty == penalty_of(graded["parts"]["dana"])


def test_nbgrader_executing_the_notebooks_gives_the_kits_partial_credit(course, graded):
    """A course whose nbgrader_config.py does not use the kit: nbgrader executes carol's notebooks
    and every grading cell shows the kit's score as its result, which nbgrader takes."""
    nbgrader(course, "autograde", ASSIGNMENT, "--force", "--student", "carol",
             env={STOCK: "1", "PYTHONPATH": str(KIT)})
    assert nbgrader_parts(course, "carol") == pytest.approx(graded["parts"]["carol"])
    executed = nbformat.read(course / "autograded" / "carol" / ASSIGNMENT / "value.ipynb", as_version=4)
    cell = nbgrader_ids(executed)[grade_id("value.mul")]
    assert cell.execution_count  # the kernel ran it
    assert not [out for out in cell.outputs if out.output_type == "error" or out.get("name") == "stderr"]
    results = [out for out in cell.outputs if out.output_type == "execute_result"]
    assert [float(out.data["text/plain"]) for out in results] == [graded["parts"]["carol"]["value.mul"]]


def test_a_grade_typed_in_by_hand_survives_everything(course, graded, tmp_path):
    with Gradebook(db_url(course)) as gradebook:  # what formgrader's grade handler does
        grade = gradebook.find_grade(grade_id("value.mul"), "value", ASSIGNMENT, "bob")
        grade.manual_score, grade.extra_credit, grade.needs_manual_grade = 7.0, None, False
        gradebook.db.commit()
    bulk(course, tmp_path / "out", "--force")
    nbgrader(course, "autograde", ASSIGNMENT, "--force", "--student", "bob")
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--force", "--student", "bob")
    with Gradebook(db_url(course)) as gradebook:
        grade = gradebook.find_grade(grade_id("value.mul"), "value", ASSIGNMENT, "bob")
        assert (grade.manual_score, grade.auto_score, grade.score) == (7.0, 0.0, 7.0)
    bob = export(course)["bob"]
    assert float(bob["value.mul"]) == 7.0 and float(bob["score"]) == 7.0


def test_grades_csv_and_the_import_files_hold_nbgraders_grades_its_grade_of_record(course, graded, tmp_path):
    """After a grade typed in formgrader (9.5 for carol's value.mul) and with dana's late penalty,
    the next run's grades.csv holds what nbgrader's export holds, part by part, the penalty and the
    total after it; so do the import files. (It held the kit's 90 where nbgrader said 91.5.)"""
    with Gradebook(db_url(course)) as gradebook:
        grade = gradebook.find_grade(grade_id("value.mul"), "value", ASSIGNMENT, "carol")
        grade.manual_score, grade.extra_credit, grade.needs_manual_grade = 9.5, None, False
        gradebook.db.commit()
    out = tmp_path / "out"
    bulk(course, out)
    exported = export(course)
    with open(out / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student"]: row for row in csv.DictReader(table)}
    assert set(rows) == set(exported)
    for student, row in rows.items():
        assert {part: float(row[part]) for part in GRADING.parts} == pytest.approx(
            {part: float(exported[student][part]) for part in GRADING.parts}), student
        assert float(row["late penalty"]) == float(exported[student]["late_submission_penalty"]), student
        assert float(row["total"]) == pytest.approx(float(exported[student]["score"])), student
    assert float(rows["carol"]["value.mul"]) == 9.5
    assert float(rows["dana"]["late penalty"]) == penalty_of(graded["parts"]["dana"]) > 0
    with open(out / "grades-canvas.csv", newline="", encoding="utf-8") as table:
        canvas = list(csv.reader(table))[2:]
    assert canvas == []  # nbgrader's students have no Canvas id: a row by name could go to another
    with open(out / "grades-moodle.csv", newline="", encoding="utf-8") as table:
        moodle = {row[0]: row[1] for row in list(csv.reader(table))[1:]}
    assert {student: float(total) for student, total in moodle.items()} == pytest.approx(
        {student: min(float(row["score"]), 100.0) for student, row in exported.items()})
