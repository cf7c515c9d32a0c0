"""The late penalty cannot be escaped: an nbgrader course whose penalty for lateness is "zero".

A late student once tampered with a grading cell's metadata (its `grade` flag turned off), so
that nbgrader's autograde refused the notebook; nbgrader then held no grade for the student,
and the kit wrote its own, with no penalty: 102 in grades.csv and the import files, where the
honest late classmate got 0, and the run ended well with no failure row. Deleting the grading
cell does the same by another way: nbgrader autogrades the rest, holds no grade for that part,
and the kit's grade stood in. Now a notebook that nbgrader refuses is held back with its
reason (in no file as a grade), and wherever the kit's own grade stands in, the course's own
penalty is taken from it, as nbgrader would have, from when the student handed it in.
"""

from __future__ import annotations

import csv
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from support.nbgrader_courses import ASSIGNMENT, CLI, DUE, GRADING, KIT, db_url, filled, new_course, submit

from hostile.test_nbgrader import MUL, cell_of

nbformat = pytest.importorskip("nbformat", reason="nbformat is a staff extra: pip install -e '.[staff]'")
pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::nbformat.warnings.DuplicateCellId")]
EVERY_POINT = sum(part.points for part in GRADING.parts.values())
LATE = DUE + timedelta(days=2)


def demoted(nb) -> None:
    cell_of(nb, MUL).metadata.nbgrader["grade"] = False  # nbgrader's checksum no longer matches


def deleted(nb) -> None:
    nb.cells.remove(cell_of(nb, MUL))


def rows_of(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as table:
        return {row["student"]: row for row in csv.DictReader(table)}


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory, nbgrader_course: Path) -> dict:
    root = tmp_path_factory.mktemp("late-course")
    students = {"ontime": (None, DUE - timedelta(days=1)), "late": (None, LATE), "demoted": (demoted, LATE),
                "deleted": (deleted, LATE)}
    source, release = new_course(root, students, nbgrader_course)
    config = root / "nbgrader_config.py"
    text = config.read_text(encoding="utf-8")
    assert text.count("c.AssignLatePenalties.plugin_class = PointPerHourLate\n") == 1
    config.write_text(text.replace("c.AssignLatePenalties.plugin_class = PointPerHourLate\n",
                                   "c.LateSubmissionPlugin.penalty_method = 'zero'\n"), encoding="utf-8")
    for student, (forge, when) in students.items():
        def notebook(engine: str, forge=forge):
            nb = filled(release / f"{engine}.ipynb", source / f"{engine}.ipynb")
            if forge is not None and engine == "value":
                forge(nb)
            return nb
        submit(root, student, notebook, when)
    root.chmod(0o700)
    out = root.parent / f"{root.name}-out"
    run = subprocess.run(CLI + ["bulk", str(root), "-o", str(out), "--nbgrader-db", db_url(root),
                                "--assignment", ASSIGNMENT], cwd=KIT, capture_output=True, text=True,
                         check=False)
    return {"out": out, "run": run, "said": " ".join((run.stdout + run.stderr).split()),
            "grades": rows_of(out / "grades.csv")}


def test_the_honest_students_get_the_courses_grades(course):
    assert course["run"].returncode == 0, course["said"][-3000:]
    assert float(course["grades"]["ontime"]["total"]) == EVERY_POINT
    late = course["grades"]["late"]
    assert float(late["late penalty"]) == EVERY_POINT and float(late["total"]) == 0


def test_a_notebook_nbgrader_refuses_is_held_back_with_its_reason(course):
    demoted = course["grades"]["demoted"]
    assert demoted["total"] == "" and demoted["late penalty"] == ""
    assert demoted["held back"].startswith("could not be graded: nbgrader could not autograde it")
    assert "held back demoted: could not be graded: nbgrader could not autograde it" in course["said"]
    assert '"student": "demoted"' in (course["out"] / "failures.jsonl").read_text(encoding="utf-8")
    for name in ("grades-canvas.csv", "grades-moodle.csv", "grades-moodle-worksheet.csv"):
        path = course["out"] / name
        if path.is_file():
            assert "demoted" not in path.read_text(encoding="utf-8"), name


def test_the_kits_own_grade_takes_the_courses_penalty(course):
    """nbgrader autogrades a notebook whose grading cell was deleted and holds no grade for that
    part: the kit's grade stands in, less the penalty the course's plugin gives it."""
    deleted = course["grades"]["deleted"]
    assert float(deleted["late penalty"]) == EVERY_POINT and float(deleted["total"]) == 0
    assert "the course's own penalty" in deleted["late"]
