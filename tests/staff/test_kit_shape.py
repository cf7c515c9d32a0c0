"""The kit's shape, its engines and parts, comes from one place: the grading.toml in use.

The files a worker reads and the names intake takes for engine files follow the grading.toml the
grader was given (`parts.use`, the plugin's `--grading`). (An engine removed as docs/authoring.md
says leaves the kit's own tests importable, those about that engine skipped with the reason:
test_kit_changes.py, which takes the same copy through every command.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import KIT
from support.shape import GRADED

from autograder import intake, parts
from autograder.worker import read_files

ANOTHER_SHAPE = '''[parts."value.mul"]
title = "Value.__mul__"
points = 1

[parts."matrix.product"]
title = "Matrix.__matmul__"
points = 1

'''


@pytest.fixture
def another_grading(tmp_path: Path):
    """A grading.toml of the engines value and matrix, in use while the test runs."""
    toml = tmp_path / "grading.toml"
    kit_toml = (KIT / "grading.toml").read_text(encoding="utf-8")
    toml.write_text(ANOTHER_SHAPE + kit_toml[kit_toml.index("[tolerances]"):], encoding="utf-8")
    parts.use(toml)
    yield toml
    parts.use(KIT / "grading.toml")


def test_the_engines_are_those_of_the_grading_toml_in_use(another_grading):
    assert parts.engines() == ("value", "matrix")
    assert parts.engines(KIT / "grading.toml") == GRADED != parts.engines()  # the kit's, asked by name


def test_a_worker_reads_the_files_of_the_engines_in_use(another_grading, tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    for name in ("value", "matrix", "dual"):
        (folder / f"{name}.py").write_text(f"# {name}\n", encoding="utf-8")
    assert sorted(read_files(folder)[0]) == ["matrix", "value"]


def test_intake_takes_the_files_named_for_the_engines_in_use(another_grading, tmp_path):
    klass = tmp_path / "class"
    (klass / "ann").mkdir(parents=True)
    (klass / "ann" / "Matrix (2).py").write_text("class Matrix:\n    pass\n", encoding="utf-8")
    (klass / "ann" / "dual.py").write_text("class Dual:\n    pass\n", encoding="utf-8")
    (klass / "bo").mkdir()
    (klass / "bo" / "notes.txt").write_text("nothing\n", encoding="utf-8")
    ann, bo = intake.collect(klass)
    assert sorted(ann.files) == ["matrix"] and "value.py: not found in the submission" in " ".join(ann.notes)
    assert bo.notes == ["no value.py or matrix.py, and no notebook or .py file defining Value or Matrix"]
