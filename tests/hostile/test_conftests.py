"""A conftest.py beside a submission never runs in the grading process unnoticed.

pytest does not know the kit's options until it has loaded the kit's plugin, so in
`--submission DIR` it takes DIR for a folder to test and imports the conftest.py files in it
and above it. Every command of the kit gives its paths with `=`; a grading that finds such a
file loaded refuses to grade.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from support import KIT

PLANTED = '''
import pathlib

pathlib.Path({mark!r}).write_text("imported", encoding="utf-8")

import autograder.scoring

_score = autograder.scoring.score


def forged(results, grading):
    scores = _score(results, grading)
    for part in scores:
        part.score, part.passed, part.messages = part.max_score, part.total, []
    return scores


autograder.scoring.score = forged
'''


def planted(tmp_path, where: str):
    """A class folder holding a submission with a mul bug, and a conftest.py that forges full
    points, in the submission's folder or in the folder above it."""
    submission = tmp_path / "class" / "alice"
    shutil.copytree(KIT / "solutions", submission)
    value = submission / "value.py"
    value.write_text(value.read_text(encoding="utf-8").replace(
        "self.grad += other.data * out.grad", "self.grad = other.data * out.grad"), encoding="utf-8")
    mark = tmp_path / "imported"
    folder = submission if where == "inside" else submission.parent
    (folder / "conftest.py").write_text(PLANTED.format(mark=str(mark)), encoding="utf-8")
    return submission, mark


def grade(*options: str, tmp_path) -> tuple[subprocess.CompletedProcess, dict | None]:
    results = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           "--part", "value.mul", f"--results-json={results}", *options],
                          cwd=KIT, capture_output=True, text=True, timeout=300)
    return done, json.loads(results.read_text(encoding="utf-8")) if results.is_file() else None


@pytest.mark.parametrize("where", ["inside", "above"])
def test_a_path_after_a_space_that_loads_a_conftest_grades_nothing(tmp_path, where):
    submission, mark = planted(tmp_path, where)
    done, results = grade("--submission", str(submission), tmp_path=tmp_path)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR and results is None, done.stdout[-2000:]
    folder = submission if where == "inside" else submission.parent
    assert f"{folder}/conftest.py: pytest loaded" in done.stderr
    assert "--submission=DIR" in done.stderr


@pytest.mark.parametrize("where", ["inside", "above"])
def test_a_path_after_equals_never_imports_the_submission_s_conftest(tmp_path, where):
    submission, mark = planted(tmp_path, where)
    done, results = grade(f"--submission={submission}", tmp_path=tmp_path)
    assert not mark.exists()
    mul = [test for test in results["tests"] if test["tags"][0] == "value.mul"]
    assert mul and mul[0]["score"] < mul[0]["max_score"], done.stdout[-2000:]


def test_every_command_of_the_kit_gives_its_paths_after_equals():
    """No call in the kit's code passes a path option as a separate argument."""
    options = ("--submission", "--reference", "--results-json", "--seal-reference", "--grading-secret",
               "--grading")
    found = []
    for path in sorted((KIT / "autograder").rglob("*.py")) + sorted((KIT / "mutants").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(KIT)}: {option}" for option in options
                  if f'"{option}", ' in text and "addoption" not in text.split(f'"{option}", ')[0][-40:]]
    assert not found, found
