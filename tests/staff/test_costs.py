"""The cost report's estimates hold against what the kit really costs: `autograder check` says
what a grading, a mutation run and a class cost, and a real `autograder mutate` of one part takes
about that much CPU time. CPU time, not the clock: the estimate is the same on a busy machine."""

from __future__ import annotations

import re
import resource
import subprocess
import sys

import pytest
from support import KIT

from autograder.config import load
from autograder.parts import declared
from autograder.staff import costs
from autograder.stubs import handout

pytestmark = pytest.mark.slow  # grades, and mutates, in processes of its own

CLI = [sys.executable, "-m", "autograder.staff.cli"]
PART = "value.relu"  # few mutants, so the run is short; graded with training, which it may also cost
SUMMARY = re.compile(r"a grading takes about (?P<grading>[\d.]+) s \((?P<own>[\d.]+) s of its own, and the "
                     r"scenarios of the submission and of the reference, (?P<scenarios>[\d.]+) s each\); "
                     r"on (?P<cores>\d+) cores?, `autograder mutate` about (?P<mutate>.+?), `autograder "
                     r"bulk` on a class of (?P<size>\d+) about (?P<bulk>.+)$")


def seconds(said: str) -> float:
    """A duration as the report writes it (`18 s`, `2.3 min`), in seconds."""
    number, unit = said.split()
    return float(number) * (60 if unit == "min" else 1)


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@pytest.fixture(scope="module")
def report() -> list[str]:
    done = subprocess.run(CLI + ["check"], cwd=KIT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("cost report")):]


def test_the_estimates_follow_from_the_time_of_one_grading(report):
    """A grading is its own time and the scenarios twice (the submission's and the live
    reference's); a mutant is graded by the suites of its part and of the parts it may also cost,
    one of each stub by every suite: a start, a share per scenario call, and those calls' time
    once (the reference is sealed); the class and the mutation run are so many of those on the
    machine's cores."""
    said = SUMMARY.search(report[-1])
    assert said, report[-1]
    own, scenarios, cores = float(said["own"]), float(said["scenarios"]), int(said["cores"])
    assert float(said["grading"]) == pytest.approx(own + 2 * scenarios, abs=0.01)
    bulk = int(said["size"]) * (own + 2 * scenarios) / cores
    assert seconds(said["bulk"]) == pytest.approx(bulk, rel=0.05, abs=1)
    rows = {line.split()[0]: line.split() for line in report[2:-1]}
    assert list(rows) == [*load().parts, "all"]
    calls = {part: int(row[1]) for part, row in rows.items()}
    assert own == pytest.approx(costs.GRADING_START + costs.CALL_OVERHEAD * calls["all"], abs=0.01)
    also, stubs = declared(KIT / "autograder" / "suites"), handout(KIT / "solutions").stubs
    total = 0.0
    for part, row in rows.items():
        if part == "all" or row[-2] == "-":
            continue
        graded = [part, *also[part].also_costs]
        alone = (costs.GRADING_START + costs.CALL_OVERHEAD * sum(calls[p] for p in graded)
                 + sum(float(rows[p][2]) for p in graded))
        mutants, whole = int(row[-3]), len(stubs[part])
        estimate = ((mutants - whole) * alone + whole * (own + scenarios)) / cores
        assert seconds(" ".join(row[-2:])) == pytest.approx(estimate, rel=0.05, abs=1), row
        assert estimate < mutants * (own + scenarios) / cores  # cheaper than every suite for each
        total += estimate
    assert seconds(said["mutate"]) == pytest.approx(total, rel=0.05, abs=1)


def test_a_mutation_run_costs_about_what_the_report_says(report):
    """`autograder mutate PART` takes, in CPU time of all its processes, between half and 1.6
    times the report's estimate: a grading's own time dropped from it, or an estimate ten times
    too large, is far outside."""
    row = next(line.split() for line in report if line.split()[:1] == [PART])
    cores = int(SUMMARY.search(report[-1])["cores"])
    estimate = seconds(" ".join(row[-2:])) * cores
    before = children_cpu()
    done = subprocess.run(CLI + ["mutate", PART, "--jobs", "2"], cwd=KIT, capture_output=True, text=True,
                          timeout=1800)
    used = children_cpu() - before
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert 0.5 * estimate <= used <= 1.6 * estimate, f"{PART}: {estimate:.1f} s estimated, {used:.1f} s used"
