"""Hostile notebooks in an nbgrader course: nbgrader metadata a student has forged.

A student's submitted notebook can carry any cell metadata: a second grading cell of a part
(before or after the kit's, with more points or a score already in its output), an answer
cell marked as a grading cell, a grading cell turned into an answer, another notebook's or a
made-up grade id, a grading cell whose source or points were changed, and metadata of the
notebook itself; and a notebook that answers every scenario from the handout's sealed
answers (the official grading asks other questions). Each student here submits the honest
base (value.mul with `=` for `+=`, so that part has partial credit to inflate; tensor and
dual untouched) with one forgery. The
TA's one command grades them all; the kit's grades.csv and nbgrader's gradebook must both
show exactly the honest base's scores, or, where nbgrader itself refuses a notebook, no
more than them in nbgrader's gradebook, a line saying which submission it refused, and no
grade in grades.csv (held back with the reason: nbgrader's late penalty never ran on it).
"""

from __future__ import annotations

import copy
import csv
import json
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from support.nbgrader_courses import (
    ASSIGNMENT,
    BUG,
    CLI,
    DUE,
    GRADING,
    KIT,
    db_url,
    filled,
    nbgrader_parts,
    new_course,
    submit,
)

from hostile.test_replay import replaying

nbformat = pytest.importorskip("nbformat", reason="nbformat is a staff extra: pip install -e '.[staff]'")
pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")

from autograder.notebook import grade_id  # noqa: E402

MUL = grade_id("value.mul")
# The forged copies of a grading cell share its cell id; nbformat warns as it renames them.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::nbformat.warnings.DuplicateCellId")]


def cell_of(notebook, cell_id: str):
    return next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id)


def forged_score(cell, points: float = 10.0):
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": repr(points)},
                                           execution_count=1)]
    return cell


def extra_after(nb):
    nb.cells.append(forged_score(copy.deepcopy(cell_of(nb, MUL))))


def extra_before(nb):
    real = cell_of(nb, MUL)
    nb.cells.insert(nb.cells.index(real), forged_score(copy.deepcopy(real)))


def extra_more_points(nb):
    fake = forged_score(copy.deepcopy(cell_of(nb, MUL)), 100.0)
    fake.metadata.nbgrader["points"] = 100
    fake.metadata.nbgrader["locked"] = False
    fake.source = "100.0"
    nb.cells.append(fake)


def other_notebooks_id(nb):
    fake = forged_score(copy.deepcopy(cell_of(nb, MUL)))
    fake.metadata.nbgrader["grade_id"] = grade_id("tensor.unbroadcast")
    nb.cells.append(fake)


def made_up_id(nb):
    fake = forged_score(copy.deepcopy(cell_of(nb, MUL)), 50.0)
    fake.metadata.nbgrader.update(grade_id="part-free-points", points=50)
    nb.cells.append(fake)


def answer_as_grading_cell(nb):
    answer = cell_of(nb, "value-Value-__mul__")
    answer.metadata.nbgrader.update(grade=True, points=10)


def grading_cell_as_answer(nb):
    cell_of(nb, MUL).metadata.nbgrader["solution"] = True


def grading_cell_demoted(nb):
    cell_of(nb, MUL).metadata.nbgrader["grade"] = False


def grading_cell_rewritten(nb):
    forged_score(cell_of(nb, MUL)).source = "10.0"


def grading_cell_points(nb):
    cell_of(nb, MUL).metadata.nbgrader["points"] = 100


def prefilled_output(nb):
    forged_score(cell_of(nb, MUL))


def notebook_metadata(nb):
    nb.metadata["nbgrader"] = {"grade": True, "points": 1000, "grade_id": MUL}
    nb.metadata["kernelspec"] = {"name": "python2", "display_name": "forged", "language": "python"}


FORGERIES = {f.__name__.replace("_", "-"): f for f in (
    extra_after, extra_before, extra_more_points, other_notebooks_id, made_up_id, answer_as_grading_cell,
    grading_cell_as_answer, grading_cell_demoted, grading_cell_rewritten, grading_cell_points,
    prefilled_output, notebook_metadata)}


def replaying_the_handout(sealed: Path):
    """The class cell carries every answer of the handout's sealed file, and code that answers
    each scenario from them instead of from the engine (test_hostile_replay.py)."""
    answers = json.loads(sealed.read_text(encoding="utf-8"))["answers"]
    code = replaying({key: answer["observations"] for key, answer in answers.items()})

    def forge(nb):
        cell = next(c for c in nb.cells if c.cell_type == "code" and "class Value" in c.source)
        cell.source += "\n" + code
    return forge


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory, sealed_reference, nbgrader_course: Path) -> dict:
    root = tmp_path_factory.mktemp("hostile-course")
    students = {"honest": None, **FORGERIES, "replay": replaying_the_handout(sealed_reference.path)}
    source, release = new_course(root, students, nbgrader_course)

    def make(forge):
        def notebook(engine: str):
            if engine != "value":
                return nbformat.read(release / f"{engine}.ipynb", as_version=4)
            nb = filled(release / "value.ipynb", source / "value.ipynb", BUG)
            if forge is not None:
                forge(nb)
            return nb
        return notebook

    for student, forge in students.items():
        submit(root, student, make(forge), DUE - timedelta(days=1))
    out = root / "out"
    run = subprocess.run(CLI + ["bulk", str(root), "-o", str(out), "--nbgrader-db", db_url(root),
                                "--assignment", ASSIGNMENT], cwd=KIT, capture_output=True, text=True,
                         check=False)
    with open(out / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student"]: row for row in csv.DictReader(table)}
    return {"root": root, "run": run, "log": run.stdout + run.stderr,
            "kit": {s: {p: float(row[p]) for p in GRADING.parts} for s, row in rows.items() if row["total"]},
            "held": {s: row["held back"] for s, row in rows.items() if not row["total"]}}


def test_the_honest_base_has_partial_credit_to_steal(course):
    assert course["run"].returncode == 0, course["log"][-3000:]
    honest = course["kit"]["honest"]
    assert 0 < honest["value.mul"] < GRADING.parts["value.mul"].points
    assert nbgrader_parts(course["root"], "honest") == pytest.approx(honest)
    assert "[red]" not in course["log"]  # the console prints no markup, so none is written


@pytest.mark.parametrize("student", [*sorted(FORGERIES), "replay"])
def test_forged_nbgrader_metadata_earns_nothing(course, student):
    honest = course["kit"]["honest"]
    found = nbgrader_parts(course["root"], student)
    gained = {part: (found[part], honest[part]) for part in honest if found[part] > honest[part]}
    assert not gained, f"nbgrader's gradebook: {gained}"
    if student in course["held"]:  # nbgrader refused the notebook: held back, and the TA is told which
        log = " ".join(course["log"].split())  # as the console wrapped it
        assert f"nbgrader submitted/{student}/{ASSIGNMENT}: nbgrader could not autograde it" in log
        assert course["held"][student].startswith("could not be graded: nbgrader could not autograde it")
    else:
        assert course["kit"][student] == honest, "the kit's grades.csv"
        assert found == pytest.approx(honest)
