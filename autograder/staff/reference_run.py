"""The reference graded by its own suites, and what pytest's report of that grading says.

`grade_reference` runs the grading (the reference as the submission, at the public seed) with
its answers sealed and pytest's report written; `calls_of` reads each scenario call back with
the reference's answer and time, and `reference_failures` each test the reference lost.
`autograder check`, the mutation testing of mutants/ and the kit's own tests read it here.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from ..check_results import GRADER_FAULT, fill
from ..junit_properties import recorded_calls
from ..parts import read_declaration
from ..runner import scenario_key

FAULT = f"{GRADER_FAULT}: "  # how a check the grader could not make begins (check_results.Check.fault)


@dataclass(frozen=True)
class Call:
    """One scenario a test asked for, with the reference's answer and time."""

    test: str  # module:function, parametrizations together
    docstring: str  # filled in with the call's arguments, as a message shows it
    scenario: str
    kwargs: dict
    observations: object
    seconds: float


def tail(text: str, lines: int = 40) -> str:
    """The last `lines` lines of `text`."""
    return "\n".join(text.splitlines()[-lines:])


def grade_reference(kit: Path, folder: Path, listing: Path | None = None
                    ) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """The reference graded by its own suites at the public seed: pytest's run, the sealed
    answers (with each scenario's time) and pytest's report (with every call and suspect). With
    `listing`, the same run writes each test it collected, with its part, there (release.listed
    reads it)."""
    sealed, junit = folder / "reference.json", folder / "junit.xml"
    command = [sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
               "--submission=" + str(kit / "solutions"), "--reference=" + str(kit / "solutions"),
               f"--seal-reference={sealed}",
               f"--junitxml={junit}"]
    if listing is not None:
        command += ["-p", "autograder.staff.release", f"--list-parts={listing}"]
    done = subprocess.run(command, cwd=kit, capture_output=True, text=True, check=False)
    return done, sealed, junit


def suite_of(kit: Path, test: str) -> Path:
    """The suite file of a test named as pytest's report names it, `...suites.test_value_mul:name`."""
    return kit / "autograder" / "suites" / (test.partition(":")[0].rsplit(".", 1)[-1] + ".py")


def docstring_of(kit: Path, test: str) -> str:
    """A test's docstring, read from its suite's source."""
    tree = ast.parse(suite_of(kit, test).read_text(encoding="utf-8"))
    name = test.partition(":")[2]
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_docstring(function) or ""


def part_of(kit: Path, test: str) -> str:
    """The part a test counts for: the PART its suite declares."""
    return read_declaration(suite_of(kit, test)).id


def calls_of(kit: Path, junit: Path, sealed: Path) -> list[Call]:
    """Every scenario call of a graded run of the reference, from pytest's report (--junitxml)
    and the sealed answers of the same run."""
    answers = json.loads(sealed.read_text(encoding="utf-8"))["answers"]
    found, docstrings = [], {}
    for call in recorded_calls(junit):
        answer = answers.get(scenario_key(call.scenario, call.kwargs))
        if answer is None:  # the test failed before the scenario ran: its message says why
            continue
        if call.test not in docstrings:  # a test makes many calls: its suite is read once
            docstrings[call.test] = docstring_of(kit, call.test)
        found.append(Call(call.test, fill(docstrings[call.test], call.kwargs), call.scenario, call.kwargs,
                          answer["observations"], answer["seconds"]))
    return found


def reference_failures(junit: Path) -> list[str]:
    """A line for each test the reference itself failed, from pytest's report: the suite, the
    test, and what the grader said of it (what the reference raised, in which case, drawn from
    which range)."""
    if not junit.is_file():
        return []
    found = []
    for case in ElementTree.parse(junit).iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            continue
        text = failure.get("message") or failure.text or ""
        said = next((line for line in text.splitlines() if FAULT in line), text.strip().splitlines()[-1:])
        said = said if isinstance(said, str) else " ".join(said)
        reason = said.split(FAULT, 1)[-1].removesuffix(" Tell the course staff.").rstrip(".")
        scenario = re.search(r" in scenario (\S+)$", reason)
        where = f" ({scenario[1]})" if scenario else ""
        reason = reason[:scenario.start()] if scenario else reason
        suite = case.get("classname").rsplit(".", 1)[-1]
        found.append(f"autograder/suites/{suite}.py, {case.get('name')}{where}: {reason}")
    return found
