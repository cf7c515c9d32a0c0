"""A fault of the grader is never a grade.

An instructor's slow change to the reference (a `Dual.sin` that sleeps) once ran out of the
submission's idle budget of 5 s: the reference's scenarios timed out, and their checks, marked
"Not checked, a fault of the grader", still scored 0 (98.36 of 102 for the reference graded
against itself). The reference now has an idle budget of its own, and a grading in which the
grader could not make any check has no score at all: `pytest autograder` ends with exit status
70 and one line, results.json says the grading could not be made, and `autograder bulk` holds
the entry back with the reason, in no file as a grade, and grades it again on the next run.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import KIT
from support.bulk_runs import entries_of, outdir
from support.kit_copy import set_key
from support.shape import reference

from autograder import scoring
from autograder.config import load
from autograder.staff import bulk
from autograder.staff.cli import main

# Grades in processes of its own; the grader's faults are made in the reference's Dual.sin.
pytestmark = [pytest.mark.slow, pytest.mark.engine("dual")]
SIN = "        return Dual(math.sin(self.val), math.cos(self.val) * self.der)"
GRADING_SECONDS = 600


def reference_with(folder: Path, before_sin: str) -> Path:
    """solutions/ with `before_sin` run first in Dual.sin, closed to other accounts."""
    shutil.copytree(KIT / "solutions", folder)
    path = folder / "dual.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(SIN) == 1
    path.write_text(text.replace(SIN, f"        {before_sin}\n{SIN}"), encoding="utf-8")
    folder.chmod(0o700)
    return folder


def grade(submission: Path, results: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           f"--submission={submission}", f"--results-json={results}", *options],
                          cwd=KIT, capture_output=True, text=True, timeout=GRADING_SECONDS)


def test_a_slow_reference_is_timed_on_its_own_clock(tmp_path):
    """Dual.sin sleeping 0.05 s a call: some 3 s asleep in all, three times what a submission may
    idle here (idle_seconds = 1), and none of it the submission's. The reference graded against
    it scores every point."""
    slow = reference_with(tmp_path / "slow", "import time; time.sleep(0.05)")
    grading = tmp_path / "grading.toml"
    shutil.copyfile(KIT / "grading.toml", grading)
    set_key(grading, "limits", "idle_seconds", "1.0")
    done = grade(KIT / "solutions", tmp_path / "results.json", f"--reference={slow}", "--part", "dual",
                 f"--grading={grading}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    dual = {t["tags"][0]: t for t in json.loads((tmp_path / "results.json").read_text())["tests"]}["dual"]
    assert dual["score"] == dual["max_score"] and "fault of the grader" not in dual["output"]


def test_a_reference_that_fails_leaves_the_grading_without_a_score(tmp_path):
    broken = reference_with(tmp_path / "broken", "raise ValueError('a broken reference')")
    results = tmp_path / "results.json"
    done = grade(KIT / "solutions", results, f"--reference={broken}")
    assert done.returncode == scoring.NOT_GRADED_EXIT, done.stdout[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("autograder: no score: the grader could not make ")
    assert "a fault of the grader and not of the submission" in last and "a broken reference" in last
    assert "score =====" not in done.stdout and "total" not in done.stdout.splitlines()[-1]
    written = json.loads(results.read_text(encoding="utf-8"))  # what Gradescope shows
    assert written["tests"] == [] and written["score"] == 0
    assert written["output"].startswith("This submission could not be graded, through no fault of yours")
    assert "The score of 0 is not a grade" in written["output"]


def test_a_reference_that_stalls_for_good_ends_the_grading_within_its_limit(tmp_path):
    """A reference that never returns from Dual.sin may idle test_timeout_seconds in all (here
    3 s); after that its scenarios fail at once, and the grading ends with no score within the
    cap autograder bulk states for one submission (pytest-timeout, bulk's last resort per test,
    is left out as bulk leaves it out)."""
    stalled = reference_with(tmp_path / "stalled", "import time; time.sleep(100_000)")
    toml = (KIT / "grading.toml").read_text(encoding="utf-8")
    assert toml.count("test_timeout_seconds = 300") == 1
    grading = tmp_path / "grading.toml"
    grading.write_text(toml.replace("test_timeout_seconds = 300", "test_timeout_seconds = 3"),
                       encoding="utf-8")
    seal = tmp_path / "sealed"
    seal.mkdir()
    sealed = seal / "reference.json"
    assert grade(KIT / "solutions", seal / "results.json", f"--grading={grading}",
                 "--reference=" + str(KIT / "solutions"), f"--seal-reference={sealed}").returncode == 0
    cap = bulk.wall_clock_cap(load(grading).limits, sealed)
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                               "--submission=" + str(KIT / "solutions"), f"--grading={grading}",
                               f"--reference={stalled}"], cwd=KIT, capture_output=True, text=True,
                              timeout=cap, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"the grading took longer than the {cap:.0f} s autograder bulk allows it")
    assert done.returncode == scoring.NOT_GRADED_EXIT, done.stdout[-3000:]
    assert "the reference failed this scenario (timed out" in done.stderr


def test_bulk_holds_back_a_grading_the_grader_could_not_make_and_grades_it_again(
        tmp_path, reference_cache, monkeypatch, capsys):
    """Every grading of a class against a broken reference is held back (the console, the
    summary and failures.jsonl say why; grades.csv and the import files hold no grade); once
    the reference is fixed, the same command grades them again."""
    klass = tmp_path / "class"
    for student in ("ann", "bo"):
        (klass / student).mkdir(parents=True)
        (klass / student / "dual.py").write_text(reference("dual"), encoding="utf-8")
    out = outdir(tmp_path / "out", reference_cache)
    monkeypatch.setattr(bulk, "SOLUTIONS", reference_with(tmp_path / "broken",
                                                           "raise ValueError('a broken reference')"))
    assert main(["bulk", str(klass), "-o", str(out), "--jobs", "2"]) == 0
    said = " ".join(capsys.readouterr().err.split())
    for student in ("ann", "bo"):
        assert f"held back {student}: could not be graded: the grader could not make " in said
    assert all(e.status == "failed" and e.fault and "a broken reference" in e.reason for e in entries_of(out))
    with open(out / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student"]: row for row in csv.DictReader(table)}
    assert all(rows[s]["total"] == "" and "the grader could not make" in rows[s]["held back"] for s in rows)
    failures = [json.loads(line) for line in (out / "failures.jsonl").read_text().splitlines()]
    assert sorted(f["student"] for f in failures) == ["ann", "bo"]
    summary = (out / "summary.html").read_text(encoding="utf-8")
    assert summary.count("the grader could not make") >= 2

    monkeypatch.setattr(bulk, "SOLUTIONS", KIT / "solutions")  # the reference fixed
    assert main(["bulk", str(klass), "-o", str(out), "--jobs", "2"]) == 0
    assert "2 submissions: 2 graded now" in " ".join(capsys.readouterr().err.split())
    with open(out / "grades.csv", newline="", encoding="utf-8") as table:
        rows = {row["student"]: row for row in csv.DictReader(table)}
    dual = load().parts["dual"].points
    assert all(float(rows[s]["dual"]) == dual and rows[s]["held back"] == "" for s in ("ann", "bo"))
