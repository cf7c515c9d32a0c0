"""Grading a folder as a TA would: the kit's tests' one way.

A grading is `pytest autograder` on the folder, run by one of a few grading processes that
stay for the whole test session (the ones `autograder bulk` uses, autograder/staff/graders.py),
so that no grading pays for starting Python and pytest; a grading with an environment of its
own gets a pytest process of its own.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from autograder.staff.graders import Grader, pytest_args

KIT = Path(__file__).resolve().parent.parent
# A hung grader fails the kit's tests instead of hanging them; a normal run takes a small fraction.
GRADING_RUN_SECONDS = 1800


class Pool:
    """Grading processes that stay, each lent to one grading at a time."""

    def __init__(self) -> None:
        self.idle: list[Grader] = []
        self.lock = threading.Lock()
        self.scratch = Path(tempfile.mkdtemp(prefix="autograding-"))
        self.env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

    def grade(self, options: list[str], log: Path) -> int | None:
        """pytest's exit status for `pytest autograder OPTIONS`, its output in `log`; None when
        the grading process died or took too long (it is then stopped)."""
        with self.lock:
            grader = self.idle.pop() if self.idle else None
        if grader is None or not grader.alive():
            grader = Grader(self.env, self.scratch)
        code = grader.grade(pytest_args(*options), log, GRADING_RUN_SECONDS)
        if code is None:
            grader.stop()
            return None
        with self.lock:
            self.idle.append(grader)
        return code

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for grader in idle:
            grader.close()
            grader.process.wait()


_pool: list[Pool] = []


def pool() -> Pool:
    """The session's pool of grading processes, started when first needed."""
    if not _pool:
        _pool.append(Pool())
        atexit.register(_pool[0].close)
    return _pool[0]


def autograde_folder(submission: Path, results: Path, *options: str,
                     env: dict | None = None) -> dict[str, dict]:
    """Grade `submission` as a TA would; results.json's entries by part id."""
    arguments = ["--submission", str(submission), "--results-json", str(results), *options]
    if env is None:
        log = results.with_name(results.name + ".log")
        code = pool().grade(arguments, log)
        output = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    else:
        command = [sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider", *arguments]
        run = subprocess.run(command, cwd=KIT, env={**os.environ, **env}, capture_output=True,
                             text=True, timeout=GRADING_RUN_SECONDS)
        code, output = run.returncode, run.stdout + run.stderr
    if code not in (0, 1) or not results.is_file():  # 0: all passed, 1: some failed
        raise RuntimeError(f"grading {submission} stopped with exit status {code} and no "
                           f"results.json; its output ends with:\n{output[-3000:]}")
    return {test["tags"][0]: test for test in json.loads(results.read_text(encoding="utf-8"))["tests"]}
