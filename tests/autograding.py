"""Grading a folder as a TA would, in a pytest process of its own: the kit's tests' one way."""

import json
import os
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
# A hung grader fails the kit's tests instead of hanging them; a normal run takes a small fraction.
GRADING_RUN_SECONDS = 1800


def autograde_folder(submission: Path, results: Path, *options: str,
                     env: dict | None = None) -> dict[str, dict]:
    """Grade `submission` as a TA would, in a pytest subprocess; results.json's entries by part id."""
    command = [sys.executable, "-m", "pytest", "autograder", "--submission", str(submission),
               "--results-json", str(results), "-q", "-p", "no:cacheprovider", *options]
    run = subprocess.run(command, cwd=KIT, env={**os.environ, **(env or {})}, capture_output=True,
                         text=True, timeout=GRADING_RUN_SECONDS)
    if run.returncode not in (0, 1) or not results.is_file():  # 0: all passed, 1: some failed
        raise RuntimeError(f"grading {submission} stopped with exit status {run.returncode} and no "
                           f"results.json; its output ends with:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return {test["tags"][0]: test for test in json.loads(results.read_text(encoding="utf-8"))["tests"]}
