"""Grading mutants and bugs as a TA grades a folder, test by test.

Each folder is graded in the grading processes of autograder/staff/graders.py against the
sealed reference, with pytest's --junitxml for every test's outcome.
"""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from autograder.config import KIT_ROOT as KIT
from autograder.staff.graders import grade_folder


@dataclass(frozen=True)
class GradedFolder:
    """One folder graded: every part's (score, max_score), and every test's outcome."""

    scores: dict[str, tuple[float, float]]
    outcomes: dict[str, str]  # test id -> "passed", "failed" or "skipped"
    messages: dict[str, str]  # part -> what the grader told the student, for a part that lost points
    seconds: float

    @property
    def lost(self) -> set[str]:
        """The parts that lost points."""
        return {part for part, (score, most) in self.scores.items() if score < most}

    @property
    def failed(self) -> set[str]:
        """The tests that failed."""
        return {test for test, outcome in self.outcomes.items() if outcome == "failed"}


def _outcomes(junit: Path) -> dict[str, str]:
    """Test id (as `pytest --collect-only` writes it) -> outcome, from pytest's --junitxml file."""
    outcomes = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"
        tags = {child.tag for child in case}
        outcomes[test] = ("failed" if tags & {"failure", "error"} else
                          "skipped" if "skipped" in tags else "passed")
    return outcomes


def grade(folder: Path, sealed: Path, scratch: Path, seed: str = "public",
          modules: tuple[str, ...] = (), parts: tuple[str, ...] = ()) -> GradedFolder:
    """GradedFolder `folder` as a TA does (in the grading processes of graders.py), at `seed`, against the
    reference sealed at it, with every test's outcome from --junitxml; with `modules`, only the
    tests of those suite modules (test_value_mul, ...), and the scores of `parts`, theirs."""
    scratch.mkdir(parents=True, exist_ok=True)
    junit = scratch / "junit.xml"
    start = time.perf_counter()
    entries = grade_folder(folder, scratch / "results.json", f"--reference={sealed}",
                           f"--junitxml={junit}", "--grading-seed", seed, suites=modules)
    if modules:  # a part none of whose tests ran says "all 0 checks passed" with no points
        entries = {part: entry for part, entry in entries.items() if part in parts}
    return GradedFolder({part: (entry["score"], entry["max_score"]) for part, entry in entries.items()},
                 _outcomes(junit), {part: entry["output"] for part, entry in entries.items()
                                    if entry["score"] < entry["max_score"]},
                 time.perf_counter() - start)


def grade_all(folders: dict[str, Path], sealed: Path, scratch: Path, workers: int, seed: str = "public",
              parts: dict[str, tuple[str, ...]] | None = None, kit: Path = KIT) -> dict[str, GradedFolder]:
    """Every folder graded at `seed`, `workers` at a time (one grading keeps about one core
    busy); `parts` limits a folder's grading to the suites of the parts it names for it (none:
    every suite)."""
    from concurrent.futures import ThreadPoolExecutor

    held = suite_modules(kit) if parts else {}

    def one(numbered: tuple[int, str]) -> GradedFolder:
        number, name = numbered
        asked = (parts or {}).get(name, ())
        modules = tuple(sorted({module for part in asked for module in held.get(part, ())}))
        try:
            return grade(folders[name], sealed, scratch / f"grade-{number}", seed, modules, asked)
        except RuntimeError as error:
            raise RuntimeError(f"grading {name} ({folders[name]}) failed: {error}") from error

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(folders, pool.map(one, enumerate(folders))))


def collected_tests(kit: Path = KIT) -> set[str]:
    """Every test id that `pytest autograder` collects; raises RuntimeError when collecting fails."""
    import subprocess

    run = subprocess.run([sys.executable, "-m", "pytest", "autograder", "--collect-only", "-q",
                          "-p", "no:cacheprovider"], cwd=kit, capture_output=True, text=True, timeout=300)
    tests = {line.strip() for line in run.stdout.splitlines() if "::" in line}
    if run.returncode != 0 or not tests:
        raise RuntimeError(f"collecting the suites failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return tests


def suite_modules(kit: Path = KIT) -> dict[str, tuple[str, ...]]:
    """Part -> the suite modules that hold its tests (test_value_mul, ...)."""
    from autograder.staff.release import collect

    found: dict[str, set[str]] = {}
    for test in collect(kit):
        found.setdefault(test.part, set()).add(test.file.stem)
    return {part: tuple(sorted(modules)) for part, modules in found.items()}


def unfailed(tests: set[str], grades: list[GradedFolder]) -> list[str]:
    """The tests that no grading failed: each checks nothing the mutants and bugs could show."""
    failed = set().union(*(g.failed for g in grades))
    return sorted(tests - failed)
