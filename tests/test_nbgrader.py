"""nbgrader: notebooks made from the .py files, and a course that nbgrader and the kit grade.

A temporary course folder gets the notebooks of `autograder release nbgrader` as its source,
`nbgrader generate_assignment` makes the students' version, fake students submit, the kit
grades their notebooks and records the scores with `record_in_gradebook`, and `nbgrader
export` reads them back. nbgrader itself runs the grading cells of one submission.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_release import solution_lines

from autograder.config import load
from autograder.staff.release import stubs_of

nbformat = pytest.importorskip("nbformat", reason="nbformat is a staff extra: pip install -e '.[staff]'")
pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")
from nbgrader.api import Gradebook  # noqa: E402 - only once nbgrader is known to be there

from autograder.notebook import grade_id, score_notebooks  # noqa: E402
from autograder.staff.notebooks import BEGIN, END, build_notebook, record_in_gradebook  # noqa: E402

KIT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "autograder.staff.cli"]
ENGINES = ("value", "tensor", "dual")
GRADING = load(KIT / "grading.toml")
ASSIGNMENT = "engines"
BUG = ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad")  # `=` in __mul__
NBGRADER_SECONDS = 600  # a generous bound for a hung kernel, far above a normal run


def nbgrader(course: Path, *args: str, env: dict | None = None) -> str:
    """Run nbgrader as an instructor would, from the course folder."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # it calls `alembic`
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True,
                          text=True, check=False, timeout=NBGRADER_SECONDS,
                          env={**os.environ, "PATH": path, **(env or {})})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def nbgrader_ids(notebook) -> dict[str, object]:
    return {cell.metadata["nbgrader"]["grade_id"]: cell for cell in notebook.cells}


def filled(release: Path, source: Path, edit: tuple[str, str] | None = None):
    """The handed-out notebook with every answer written: the reference's body, as a student
    who got it right would type it (optionally with one edit)."""
    notebook = nbformat.read(release, as_version=4)
    answers = nbgrader_ids(nbformat.read(source, as_version=4))
    for cell in notebook.cells:
        if cell.metadata["nbgrader"]["solution"]:
            lines = answers[cell.metadata["nbgrader"]["grade_id"]].source.splitlines()
            cell.source = "\n".join(line for line in lines if line.strip() not in (BEGIN, END))
            if edit:
                cell.source = cell.source.replace(*edit)
    return notebook


def submit(course: Path, student: str, make) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    for engine in ENGINES:
        nbformat.write(make(engine), folder / f"{engine}.ipynb")
    return folder


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("course")
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n",
                                             encoding="utf-8")
    source = root / "source" / ASSIGNMENT
    done = subprocess.run(CLI + ["release", "nbgrader", "-o", str(source)],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--create")
    release = root / "release" / ASSIGNMENT
    for student in ("alice", "bob", "carol", "dana"):
        nbgrader(root, "db", "student", "add", student)
    submit(root, "alice", lambda e: filled(release / f"{e}.ipynb", source / f"{e}.ipynb"))
    submit(root, "bob", lambda e: nbformat.read(release / f"{e}.ipynb", as_version=4))
    submit(root, "carol", lambda e: filled(release / f"{e}.ipynb", source / f"{e}.ipynb", BUG))
    submit(root, "dana", lambda e: filled(release / f"{e}.ipynb", source / f"{e}.ipynb"))
    return root


def notebooks_of(folder: Path) -> dict[str, Path]:
    return {engine: folder / f"{engine}.ipynb" for engine in ENGINES}


def export(course: Path) -> dict[str, dict]:
    nbgrader(course, "export", "--to", str(course / "grades.csv"))
    with open(course / "grades.csv", newline="", encoding="utf-8") as table:
        return {row["student_id"]: row for row in csv.DictReader(table)}


def kit_scores(folder: Path) -> dict[str, float]:
    return {part: entry["score"] for part, entry in score_notebooks(notebooks_of(folder)).items()}


# -- the notebooks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_a_notebook_per_file_made_from_the_py_files(engine):
    notebook = build_notebook(KIT, engine, GRADING)
    assert json.dumps(notebook, sort_keys=True) == json.dumps(build_notebook(KIT, engine, GRADING),
                                                              sort_keys=True)
    first, *cells = notebook.cells
    assert first.cell_type == "markdown" and first.metadata["nbgrader"]["locked"]
    answers = [c for c in cells if c.metadata["nbgrader"]["solution"]]
    stubs = [name for names in stubs_of(KIT / "assignments" / f"{engine}.py").values() for name in names]
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
    texts = {engine: (release / f"{engine}.ipynb").read_text(encoding="utf-8") for engine in ENGINES}
    for function, engine in (("Value.__mul__", "value"), ("Value.backward", "value"),
                             ("unbroadcast", "tensor"), ("Dual.sin", "dual")):
        escaped = {line: json.dumps(line)[1:-1] for line in solution_lines(function, engine)}
        leaked = [line for line, text in escaped.items() if text in texts[engine]]
        assert not leaked, f"{engine}.ipynb hands out {function}: {leaked}"
    assert all("raise NotImplementedError()" in text for text in texts.values())
    assert not any(kit_scores(release).values())


def test_the_source_notebooks_earn_every_point(course):
    scores = kit_scores(course / "source" / ASSIGNMENT)
    assert scores == {part.id: part.points for part in GRADING.parts.values()}


def test_grading_cells_do_nothing_where_a_notebook_is_imported(course, tmp_path):
    """A converter that keeps every code cell, grading cells too, still makes a working module."""
    for engine in ENGINES:
        notebook = nbformat.read(course / "source" / ASSIGNMENT / f"{engine}.ipynb", as_version=4)
        code = "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
        assert "check_part(" in code
        (tmp_path / f"{engine}.py").write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           "--submission", str(tmp_path)], cwd=KIT, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:]


# -- the gradebook ---------------------------------------------------------------------------------------

def test_the_kits_scores_reach_nbgraders_export(course, tmp_path):
    bonus = sum(p.points for p in GRADING.parts.values() if p.bonus)
    most = sum(p.points for p in GRADING.parts.values() if not p.bonus)
    recorded = {}
    for student in ("alice", "bob", "carol"):
        recorded[student] = kit_scores(course / "submitted" / student / ASSIGNMENT)
        record_in_gradebook(f"sqlite:///{course / 'gradebook.db'}", ASSIGNMENT, student, recorded[student])
    rows = export(course)
    assert float(rows["alice"]["score"]) == most + bonus and float(rows["alice"]["max_score"]) == most
    assert float(rows["bob"]["score"]) == 0
    assert float(rows["carol"]["score"]) == sum(recorded["carol"].values()) < most
    # carol's notebook scores what her code scores as a .py file in the kit
    folder = tmp_path / "carol"
    folder.mkdir()
    for engine in ENGINES:
        text = (KIT / "solutions" / f"{engine}.py").read_text(encoding="utf-8")
        (folder / f"{engine}.py").write_text(text.replace(*BUG), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           "--submission", str(folder), "--results-json", str(folder / "r.json")],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    as_files = {t["tags"][0]: t["score"] for t in json.loads((folder / "r.json").read_text())["tests"]}
    assert recorded["carol"] == as_files


def test_a_grade_typed_in_by_hand_is_kept(course):
    db_url = f"sqlite:///{course / 'gradebook.db'}"
    record_in_gradebook(db_url, ASSIGNMENT, "bob", {"value.mul": 0.0})
    with Gradebook(db_url) as gradebook:  # what formgrader does when a grader types a score
        gradebook.find_grade(grade_id("value.mul"), "value", ASSIGNMENT, "bob").manual_score = 7.0
        gradebook.db.commit()
    record_in_gradebook(db_url, ASSIGNMENT, "bob", {"value.mul": 2.5})
    with Gradebook(db_url) as gradebook:
        grade = gradebook.find_grade(grade_id("value.mul"), "value", ASSIGNMENT, "bob")
        assert (grade.manual_score, grade.auto_score, grade.score) == (7.0, 2.5, 7.0)
    assert float(export(course)["bob"]["score"]) == 7.0


def test_nbgrader_autograde_runs_the_grading_cells(course):
    """nbgrader executes dana's notebooks; each grading cell asks the kit for its part."""
    nbgrader(course, "autograde", ASSIGNMENT, "--student", "dana", env={"PYTHONPATH": str(KIT)})
    most = sum(p.points for p in GRADING.parts.values() if not p.bonus)
    assert float(export(course)["dana"]["score"]) == most  # the bonus cell is worth 0 to nbgrader
    graded = nbformat.read(course / "autograded" / "dana" / ASSIGNMENT / "value.ipynb", as_version=4)
    outputs = [out.get("text", "") for cell in graded.cells if cell.metadata["nbgrader"]["grade"]
               for out in cell.outputs]
    assert any("value.mul: 10 / 10 points" in text for text in outputs)
    scores = kit_scores(course / "submitted" / "dana" / ASSIGNMENT)
    record_in_gradebook(f"sqlite:///{course / 'gradebook.db'}", ASSIGNMENT, "dana", scores)
    assert float(export(course)["dana"]["score"]) == sum(scores.values())



def test_bulk_grading_writes_into_nbgraders_gradebook(course, tmp_path):
    """`autograder bulk` reads the course's submitted/ tree and records every part in nbgrader."""
    db_url = f"sqlite:///{course / 'gradebook.db'}"
    done = subprocess.run(CLI + ["bulk", str(course),
                           "-o", str(tmp_path / "out"), "--nbgrader-db", db_url, "--assignment", ASSIGNMENT],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = export(course)
    with open(tmp_path / "out" / "grades.csv", newline="", encoding="utf-8") as table:
        kit = {row["student"]: float(row["total"]) for row in csv.DictReader(table)}
    most = sum(p.points for p in GRADING.parts.values() if not p.bonus)
    assert kit["alice"] > most and kit["bob"] == 0 and 0 < kit["carol"] < most
    for student in ("alice", "carol"):  # bob's may be a grade typed in by hand, which wins
        assert float(rows[student]["score"]) == kit[student]
