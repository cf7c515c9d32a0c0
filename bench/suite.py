"""How long the whole hidden suite takes on one submission, as a ratio to the in-process floor.

The floor is the same scenario calls run in one fresh Python process, straight on the
reference's engines: no worker, no pytest, no judge. Against it, in this one run:

- one submission as `autograder bulk` grades it: in a grading process that stays (after a
  first submission has warmed it), with sealed answers to the public questions;
- the same as an official grading: its own questions, with the reference answered beside it
  as bulk answers it (live, in a worker of its own, and from its replicas: autograder/staff/
  replicas), against twice the floor (the submission's calls and the reference's);
- `pytest autograder` as a process of its own, with sealed answers (as a student runs the
  handout, and Gradescope the bundle), with the pytest plugins of this Python and with those
  a student's has (the kit's dependencies' alone);
- the same, with the workers as plain child processes (`--sandbox-level=portable`: how a
  student's Windows or macOS runs it), against the sandbox's;
- `pytest autograder` with the reference answered live (as a student runs it in the kit).

Each a few times; prints the medians and their ratios to the floor. Targets: a submission as
bulk grades it within 1.3 x its floor (the reference's included when it is live), and a
student's `pytest autograder` with sealed answers within 2 x.

    python bench/suite.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.junit_properties import distinct_calls
from autograder.questions import make_secret
from autograder.runner import folder_digest
from autograder.staff import graders
from autograder.staff.graders import pytest_env
from autograder.staff.official import Official

KIT = Path(__file__).resolve().parent.parent
PYTEST = [sys.executable, "-m", "pytest", str(KIT / "autograder"), "-q", "-p", "no:cacheprovider",
          "--submission=" + str(KIT / "solutions")]
# The floor: every scenario call, once, on the reference, in one process.
FLOOR = """
import importlib, json, sys
sys.path.insert(0, {solutions!r})
import value, tensor, dual
engines = {{"value": value, "tensor": tensor, "dual": dual}}
for scenario_id, kwargs in json.load(open({calls!r})):
    module_name, name = scenario_id.split(":")
    function = getattr(importlib.import_module("autograder.inside.scenarios." + module_name), name)
    function(engines[function.__code__.co_varnames[0]], **kwargs)
"""


def wall(command: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """The median wall time of `command` over `repeat` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=KIT, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def as_bulk(reference: list[str], folder: Path, repeat: int) -> float:
    """The median time of grading the reference in a warm grading process, as bulk does, with
    the `reference` options (a sealed file, or the secret and the live reference)."""
    pool = graders.Graders(pytest_env(), folder)
    try:
        times = []
        for index in range(repeat + 1):  # the first warms the process: bulk pays it once per job
            args = graders.pytest_args("--submission=" + str(KIT / "solutions"), *reference,
                                       "--results-json=" + str(folder / f"results-{index}.json"), "--tb=line")
            start = time.perf_counter()
            ending = pool.grade(args, folder / f"log-{index}.txt", cap=600)
            times.append(time.perf_counter() - start)
            if ending.code != 0:
                raise SystemExit(f"bench/suite.py: grading the reference failed ({ending})")
        return statistics.median(times[1:])
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        sealed, junit, calls = folder / "reference.json", folder / "junit.xml", folder / "calls.json"
        subprocess.run([*PYTEST, f"--seal-reference={sealed}", f"--junitxml={junit}"], cwd=KIT,
                       check=True, capture_output=True)
        calls.write_text(json.dumps(distinct_calls(junit)), encoding="utf-8")
        floor_code = FLOOR.format(solutions=str(KIT / "solutions"), calls=str(calls))
        floor = wall([sys.executable, "-c", floor_code], repeat)
        secret = folder / "grading.secret"
        make_secret(secret)
        bulk = as_bulk([f"--reference={sealed}"], folder, repeat)
        # As bulk asks: the reference live beside it, with its replicas (the same questions each
        # time, so every run after the first, which warms the process, answers from them).
        options = Official(secret, KIT / "solutions", folder_digest(KIT / "solutions")).options("bench")
        official = as_bulk(options, folder, repeat)
        from_sealed = wall([*PYTEST, f"--reference={sealed}"], repeat)
        # A student's Python has the pytest plugins of the kit's dependencies alone.
        handout = wall([*PYTEST, "-p", "pytest_timeout", f"--reference={sealed}"], repeat,
                       env=pytest_env())
        portable = wall([*PYTEST, "-p", "pytest_timeout", f"--reference={sealed}",
                         "--sandbox-level=portable"], repeat,
                        env=pytest_env())
        live = wall(PYTEST, repeat)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; medians of {repeat}")
    rows = [("in-process floor: every scenario call once", floor, floor),
            ("as autograder bulk grades it (warm process)", bulk, floor),
            ("the same, official: reference live (vs 2 x floor)", official, 2 * floor),
            ("pytest autograder, sealed answers", from_sealed, floor),
            ("  the same, the handout's plugins only", handout, floor),
            ("  the same, portable workers (Windows, macOS)", portable, floor),
            ("pytest autograder, reference live", live, floor)]
    for label, seconds, yardstick in rows:
        print(f"{label:<50} {seconds:6.3f} s   {seconds / yardstick:5.2f} x its floor")
    print(f"the live reference costs an official grading {official - bulk:.3f} s a submission")
    print(f"portable workers take {portable / handout:.2f} x the sandbox's time for a student's run")
    for what, seconds, yardstick, target in (("bulk, sealed answers", bulk, floor, 1.3),
                                             ("bulk, official (reference live)", official, 2 * floor, 1.3),
                                             ("a student's pytest autograder", handout, floor, 2.0)):
        met = "met" if seconds <= target * yardstick else "NOT met"
        print(f"target: {what} within {target} x its floor -> {met}")


if __name__ == "__main__":
    main()
