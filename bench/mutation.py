"""The mutation score of the suites, and how long finding it takes.

Generates every one-edit mutant of the stub bodies (mutants/), probes each against the
reference in this process, grades every behaviour-changing one as a TA grades a folder (a
pytest subprocess against the sealed reference, `--jobs` at a time), and grades the corpus's
single bugs the same way. Prints what tests/staff/test_mutation.py prints (the score per part, the
survivors with their diffs, the mutants that cost another part, the equivalent ones), the
tests that nothing fails, and the timings: sealing, generating, probing and grading, with the
probe's time per mutant and one grading's as a ratio measured in this run.

    .venv/bin/python bench/mutation.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT / "tests"))  # the corpus and the way the kit's tests grade a folder live there

from support.autograding import autograde_folder  # noqa: E402
from support.corpus import bug_folders  # noqa: E402

from autograder.config import load  # noqa: E402
from mutants.grading import collected_tests, grade_all, unfailed  # noqa: E402
from mutants.run import mutation_run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="gradings at a time")
    jobs = parser.parse_args().jobs
    with tempfile.TemporaryDirectory(prefix="mutation-bench-") as folder:
        scratch = Path(folder)
        start = time.perf_counter()
        sealed = scratch / "reference.json"
        autograde_folder(KIT / "solutions", scratch / "sealing.json", f"--seal-reference={sealed}")
        sealing = time.perf_counter() - start
        run = mutation_run(sealed, scratch / "mutants", jobs, parts=list(load().parts))
        start = time.perf_counter()
        bugs = grade_all(bug_folders(scratch / "bugs", KIT / "solutions"), sealed, scratch / "bugs", jobs)
        corpus = time.perf_counter() - start
        nothing = unfailed(collected_tests(), [*run.grades.values(), *bugs.values()])
    print(run.report())
    print(f"\ntests that no mutant and no corpus bug fails ({len(nothing)}):")
    print("\n".join(f"  {test}" for test in nothing))
    per_probe = run.probe_seconds / max(1, len(run.mutants))
    per_grading = run.grading_seconds * jobs / max(1, len(run.grades))
    print(f"\nsealing the reference           {sealing:7.1f} s")
    print(f"probing {len(run.mutants):4} mutants            {run.probe_seconds:7.1f} s   "
          f"{1000 * per_probe:6.1f} ms a mutant")
    print(f"grading {len(run.grades):4} mutants, {jobs} at a time {run.grading_seconds:7.1f} s   "
          f"{per_grading:6.2f} s a grading (wall time x jobs / gradings)")
    print(f"grading {len(bugs):4} corpus bugs           {corpus:7.1f} s")
    seconds = sorted((grade.seconds, mutant) for mutant, grade in run.grades.items())
    print(f"one grading: median {statistics.median(s for s, _ in seconds):.2f} s; the slowest:")
    print("\n".join(f"  {s:6.2f} s  {mutant}" for s, mutant in seconds[-5:]))
    print(f"one grading / one probe: {per_grading / max(per_probe, 1e-9):.0f} x")


if __name__ == "__main__":
    main()
