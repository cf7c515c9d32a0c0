"""An nbgrader course as the nbgrader tests make one: configured to use the kit, its assignment
made from `autograder release nbgrader` and handed out, students' notebooks submitted, and the
scores nbgrader's gradebook holds. Imported only where nbgrader is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from autograder.config import load

from . import KIT
from .shape import GRADED

# A module that imports this one is skipped, saying why, where nbgrader is not installed.
nbformat = pytest.importorskip("nbformat", reason="nbformat is a staff extra: pip install -e '.[staff]'")
pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")
from nbgrader.api import Gradebook  # noqa: E402 - only once nbgrader is known to be there

from autograder.notebook import grade_id  # noqa: E402
from autograder.staff.nbgrader_release import BEGIN, END  # noqa: E402

CLI = [sys.executable, "-m", "autograder.staff.cli"]
GRADING = load(KIT / "grading.toml")
MOST = sum(p.points for p in GRADING.parts.values() if not p.bonus)
BONUS = sum(p.points for p in GRADING.parts.values() if p.bonus)
ASSIGNMENT = "engines"
BUG = ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad")  # `=` in __mul__
DUE = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LATE = timedelta(hours=2, minutes=30)  # dana's: three hours' worth of penalty per notebook
NBGRADER_SECONDS = 600  # a generous bound for a hung kernel, far above a normal run
STOCK = "KIT_TEST_STOCK_NBGRADER"  # set to 1: the course's nbgrader runs as nbgrader does by default

COURSE_CONFIG = '''\
import math
import os

from nbgrader.plugins import LateSubmissionPlugin

from autograder.staff.nbgrader_course import use_the_kit

c = get_config()
c.CourseDirectory.root = {root!r}


class PointPerHourLate(LateSubmissionPlugin):
    """A point off each notebook for every hour (or part of one) late."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return float(math.ceil(total_seconds_late / 3600))


c.AssignLatePenalties.plugin_class = PointPerHourLate
if os.environ.get({stock!r}) != "1":
    use_the_kit(c)
'''


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


def submit(course: Path, student: str, make, when: datetime) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    for engine in GRADED:
        nbformat.write(make(engine), folder / f"{engine}.ipynb")
    # as `nbgrader collect` leaves it
    (folder / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f %Z"), encoding="utf-8")
    return folder


def db_url(course: Path) -> str:
    return f"sqlite:///{course / 'gradebook.db'}"


def configure(root: Path) -> None:
    """The course's nbgrader_config.py, which uses the kit."""
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(root=str(root), stock=STOCK),
                                             encoding="utf-8")


def course_without_students(root: Path) -> Path:
    """An nbgrader course in `root`, configured to use the kit, its assignment made from the
    kit's notebooks and handed out: what every course of the tests starts as."""
    configure(root)
    done = subprocess.run(CLI + ["release", "nbgrader", "-o", str(root / "source" / ASSIGNMENT)],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    nbgrader(root, "db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE:%Y-%m-%d %H:%M:%S} UTC")
    nbgrader(root, "generate_assignment", ASSIGNMENT)
    return root


def new_course(root: Path, students, start: Path) -> tuple[Path, Path]:
    """A copy in `root` of the course `start` (course_without_students), its configuration its
    own, with these students added; its source and release folders."""
    shutil.copytree(start, root, dirs_exist_ok=True)
    configure(root)
    # What `nbgrader db student add` does, through the API it calls: one process for the class
    # rather than a Python, nbgrader's imports and alembic per student.
    with Gradebook(db_url(root)) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student)
    return root / "source" / ASSIGNMENT, root / "release" / ASSIGNMENT


def nbgrader_parts(course: Path, student: str) -> dict[str, float]:
    """Each part's score in nbgrader's gradebook (auto or manual score, with extra credit)."""
    with Gradebook(db_url(course)) as gradebook:
        return {part: gradebook.find_grade(grade_id(part), part.split(".")[0], ASSIGNMENT, student).score
                for part in GRADING.parts}
