"""The portable worker (autograder/portable.py), the student's check on Windows and macOS, run
here directly: a submission that spins, sleeps, exits, starts processes or prints without end
costs the request it hit, and the next request gets an answer.

The whole student run under simulated Windows and macOS is tests/platforms/test_laptops.py.
"""

from __future__ import annotations

import dataclasses
import ntpath
import os
import posixpath
import time
from pathlib import Path

import pytest

from autograder import check_results
from autograder.config import load
from autograder.portable import PortableWorker
from autograder.worker import Ending

LIMITS = dataclasses.replace(load().limits, import_seconds=0.3, output_kb=1)


def worker(tmp_path: Path, source: str) -> PortableWorker:
    """A portable worker for a submission whose value.py is `source`."""
    folder = tmp_path / "submission"
    folder.mkdir(exist_ok=True)
    (folder / "value.py").write_text(source, encoding="utf-8")
    return PortableWorker(folder, LIMITS)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_spin_is_stopped_by_the_workers_own_clock_at_its_limit(tmp_path):
    spinning = worker(tmp_path, "while True:\n    pass\n")
    try:
        reply = spinning.load("value")
        assert reply.ending is Ending.TIMED_OUT and reply.failure.startswith("timed out after 0.30 s")
        assert spinning.process is not None  # interrupted, not killed: the worker goes on
    finally:
        spinning.close()


def test_a_sleep_is_ended_by_the_deadline_with_all_it_started(tmp_path):
    pid_file = tmp_path / "child.pid"
    source = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
              f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
              "time.sleep(600)\n")
    sleeping = worker(tmp_path, source)
    try:
        start = time.monotonic()
        reply = sleeping.load("value")
        took = time.monotonic() - start
    finally:
        sleeping.close()
    assert reply.ending is Ending.TIMED_OUT and "gave no answer within" in reply.failure
    assert took < 60  # the deadline, not the sleep, ended it
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_an_exit_is_a_crash_and_the_next_request_gets_a_fresh_worker(tmp_path):
    exiting = worker(tmp_path, "import os\nos._exit(3)\n")
    try:
        first = exiting.load("value")
        assert first.ending is Ending.CRASHED
        assert first.failure == "the worker exited with status 3 before answering"
        assert exiting.process is None
        exiting.broken.clear()
        (exiting.folder / "value.py").write_text("X = 1\n", encoding="utf-8")
        exiting.files["value"] = b"X = 1\n"
        assert exiting.load("value") is None  # a new worker, started ahead once one was replaced
        assert exiting.started == 2
    finally:
        exiting.close()


def test_what_it_prints_is_kept_to_output_kb_and_counted(tmp_path):
    printing = worker(tmp_path, "print('x' * 5000)\nprint('last line')\n")
    try:
        assert printing.load("value") is None
        kept = printing.import_output
    finally:
        printing.close()
    assert kept.startswith("x" * 1000) and "more bytes of output not kept" in kept and "last line" not in kept


def test_printed_output_belongs_to_the_request_that_printed_it(tmp_path):
    """The output before an answer is all read before the answer is taken (the worker's mark)."""
    printing = worker(tmp_path, "\n".join(f"print({n})" for n in range(200)) + "\n")
    try:
        assert printing.load("value") is None
        lines = printing.import_output.splitlines()
    finally:
        printing.close()
    assert lines[-1] == "199" or "not kept" in lines[-1]
    assert lines[0] == "0"


@pytest.mark.parametrize("path", [ntpath.join("C:\\", "Users", "Zoë O'Neil", "engines", "assignments"),
                                  ntpath.join("\\\\server\\share", "work\\"),
                                  posixpath.join("/home", "zoë", "my engines", "assignments")])
def test_a_snippets_first_line_finds_a_folder_of_any_system(path):
    """A snippet's first line puts exactly the graded folder first on Python's path, whatever
    its backslashes, drive letter, quotes, spaces or letters."""
    namespace = {"sys": type("sys", (), {"path": ["elsewhere"]})}
    line = check_results.finding(path)
    exec(line.replace("import sys; ", ""), namespace)
    assert namespace["sys"].path == [path, "elsewhere"]
    assert line.isascii() or not path.isascii()
