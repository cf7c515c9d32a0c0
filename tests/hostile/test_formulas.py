"""Names a spreadsheet would run as formulas, in every CSV file the kit writes.

A student's name comes from the class folder (a folder's name, a Moodle download's full name)
or from nbgrader's gradebook (a student id is a folder's name under submitted/). Names that
begin with `=`, `+`, `-`, `@`, a tab or a carriage return would be formulas in the spreadsheet
a TA opens grades.csv, the import files or nbgrader's export in; each such cell is written
after a `'`.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
from pathlib import Path

import pytest
from support import KIT

from autograder.escape import FORMULA_START
from autograder.staff.cli import main

NAMES = ["=cmd|' /C calc'!A0", "+1+2", "-2+3", "@SUM(A1)", "\t=1+2", "\r=1+2"]
MOODLE = ["=HYPERLINK(evil.example)_300021_assignsubmission_file", "+Ann Lee_300022_assignsubmission_file",
          "-Bo Lee_300023_assignsubmission_file", "@Cy Lee_300024_assignsubmission_file"]


def formulas(folder: Path) -> list[tuple[str, str]]:
    """Every cell of every CSV file in `folder` that a spreadsheet would take for a formula."""
    found = []
    for path in sorted(folder.glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as table:
            found += [(path.name, cell) for row in csv.reader(table) for cell in row
                      if cell.startswith(FORMULA_START)]
    return found


@pytest.mark.slow
def test_no_csv_of_a_bulk_run_holds_a_formula(tmp_path):
    klass = tmp_path / "class"
    for name in NAMES + MOODLE:
        (klass / name).mkdir(parents=True)
        shutil.copyfile(KIT / "solutions" / "dual.py", klass / name / "dual.py")
    out = tmp_path / "out"
    assert main(["bulk", str(klass), "-o", str(out), "--jobs", "2"]) == 0
    assert sorted(p.name for p in out.glob("*.csv")) == ["grades-canvas.csv", "grades-moodle-worksheet.csv",
                                                        "grades-moodle.csv", "grades.csv"]
    assert formulas(out) == []
    with open(out / "grades-moodle-worksheet.csv", newline="", encoding="utf-8") as table:
        names = sorted(row["Full name"] for row in csv.DictReader(table))
    assert names == ["'+Ann Lee", "'-Bo Lee", "'=HYPERLINK(evil.example)", "'@Cy Lee"]


def test_nbgraders_export_writes_names_as_text(tmp_path, monkeypatch):
    """`nbgrader export` with the kit's plugin (a column per part), for students whose ids and
    names would be formulas."""
    pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install nbgrader==0.9.6")
    from nbgrader.api import Gradebook

    from autograder.staff.nbgrader_course import PartsCsvExport

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("+engines")
        for index, name in enumerate(NAMES):
            gradebook.add_student(name, first_name=name, last_name=f"-{index}", email=f"@{index}.example")
        PartsCsvExport(to=str(tmp_path / "grades.csv")).export(gradebook)
    assert formulas(tmp_path) == []
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as table:
        ids = sorted(row["student_id"] for row in csv.DictReader(table))
    assert ids == sorted("'" + name for name in NAMES)
