"""An nbgrader course's own late penalty, on the kit's grade: wherever nbgrader holds no grade
for a submission, the kit's grade stands in, less what the course's LateSubmissionPlugin
takes, per notebook, as nbgrader's AssignLatePenalties takes it."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.config import load
from autograder.staff.gradebook import Entry, Score
from autograder.staff.outcomes import CourseRecord, grade_of

pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")
from nbgrader.api import Gradebook  # noqa: E402 - only once nbgrader is known to be there

from autograder.staff.nbgrader_course import course_late_penalty  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own doing
GRADING = load()
DUE = datetime(2026, 12, 1, 12, 0)  # as nbgrader keeps it: UTC, no zone
FULL = {part.id: float(part.points) for part in GRADING.parts.values()}
PER_HOUR = '''\
import math
from nbgrader.plugins import LateSubmissionPlugin

c = get_config()


class PointPerHourLate(LateSubmissionPlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return float(math.ceil(total_seconds_late / 3600))


c.AssignLatePenalties.plugin_class = PointPerHourLate
'''
ZERO = "c = get_config()\nc.LateSubmissionPlugin.penalty_method = 'zero'\n"


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A gradebook with an assignment due at DUE and two students, ben with an extension of 3
    hours; its URL. (nbgrader makes it with the `alembic` of its own installation.)"""
    url = f"sqlite:///{tmp_path_factory.mktemp('gradebook') / 'gradebook.db'}"
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"
    try:
        with Gradebook(url) as book:
            book.add_assignment("engines", duedate=DUE)
            for student in ("ann", "ben"):
                book.add_student(student)
            book.add_submission("engines", "ben")
            book.grant_extension("engines", "ben", hours=3)
    finally:
        os.environ["PATH"] = path
    return url


def course(folder: Path, config: str) -> Path:
    """A course folder with `config` as its nbgrader_config.py."""
    folder.mkdir()
    (folder / "nbgrader_config.py").write_text(config, encoding="utf-8")
    return folder


def handed_in(after: timedelta) -> str:
    return (DUE + after).replace(tzinfo=timezone.utc).isoformat()


@pytest.mark.engine("dual")  # the course's three notebooks, dual's among them
def test_the_courses_plugin_takes_its_points_per_notebook_never_more_than_the_notebook(tmp_path, gradebook):
    penalty = course_late_penalty(course(tmp_path / "c", PER_HOUR), gradebook, "engines")
    taken, how = penalty("ann", FULL, handed_in(timedelta(hours=2, minutes=30)))
    assert taken == 3 * 3 and "the course's own penalty" in how  # 3 hours begun, in each of 3 notebooks
    only_dual = {part: (points if part == "dual" else 0.0) for part, points in FULL.items()}
    assert penalty("ann", only_dual, handed_in(timedelta(hours=20)))[0] == FULL["dual"]  # at most its score
    assert penalty("ben", FULL, handed_in(timedelta(hours=2, minutes=30))) == (0.0, "")  # the extension
    assert penalty("ann", FULL, handed_in(-timedelta(minutes=1))) == (0.0, "")
    assert penalty("ann", FULL, "") == (0.0, "")  # no time: no penalty can be counted


def test_zero_takes_the_whole_score(tmp_path, gradebook):
    penalty = course_late_penalty(course(tmp_path / "c", ZERO), gradebook, "engines")
    assert penalty("ann", FULL, handed_in(timedelta(seconds=1)))[0] == sum(FULL.values())


def test_the_kits_grade_takes_the_courses_penalty_where_nbgrader_holds_none(tmp_path, gradebook):
    penalty = course_late_penalty(course(tmp_path / "c", ZERO), gradebook, "engines")
    entry = Entry(source="submitted/ann", student="ann", format="nbgrader", content_hash="0",
                  grader_version="0", graded_at="", seconds=1.0, status="graded",
                  submitted_at=handed_in(timedelta(days=2)),
                  scores=[Score(part, points, points) for part, points in FULL.items()])
    kit = grade_of(entry, GRADING, CourseRecord({}, penalty))
    assert kit.total == 0 and kit.penalty == sum(FULL.values())
    nbgraders = grade_of(entry, GRADING, CourseRecord({"submitted/ann": (FULL, 5.0)}, penalty))
    assert nbgraders.penalty == 5.0 and nbgraders.total == sum(FULL.values()) - 5
