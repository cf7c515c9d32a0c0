"""Grading a folder as a TA would: the kit's tests' one way.

A grading is `pytest autograder` on the folder, run by one of a few grading processes that
stay for the whole test session (autograder/staff/graders.py, as `autograder bulk` grades), so
that no grading pays for starting Python and pytest; a grading with an environment of its own
gets a pytest process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.staff.graders import GRADING_SECONDS, grade_folder, grading_log

KIT = Path(__file__).resolve().parent.parent.parent


def printed_run(submission: Path, results: Path, *options: str) -> str:
    """What `pytest autograder OPTIONS` on `submission` prints, as a grading process runs it (pytest's
    progress, the lost checks, the score table)."""
    grade_folder(submission, results, *options)
    return grading_log(results).read_text(encoding="utf-8")


def autograde_folder(submission: Path, results: Path, *options: str,
                     env: dict | None = None) -> dict[str, dict]:
    """Grade `submission` as a TA would; results.json's entries by part id."""
    if env is None:
        return grade_folder(submission, results, *options)
    command = [sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
               f"--submission={submission}", f"--results-json={results}", *options]
    run = subprocess.run(command, cwd=KIT, env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=GRADING_SECONDS)
    if run.returncode not in (0, 1) or not results.is_file():  # 0: all passed, 1: some failed
        raise RuntimeError(f"grading {submission} stopped with exit status {run.returncode} and no "
                           f"results.json; its output ends with:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return {test["tags"][0]: test for test in json.loads(results.read_text(encoding="utf-8"))["tests"]}
