"""Faults in the middle of a class, with a real class and real processes: nothing is lost.

`kill -9` of the bulk process at random moments, each followed by the same command again; a
disk that fills while the gradebook and the reports are written; a worker the out-of-memory
killer ends, and a submission that allocates without end; the grading process itself dying on
one submission; two runs started on one class at once. After each, every submission is
graded exactly once (a row recorded is never graded again), the gradebook is readable, no file
is left half written as if it were whole, and the class ends graded as an uninterrupted run
grades it.
"""

from __future__ import annotations

import csv
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import EXHAUSTIVE, KIT, SEEDS
from support.bulk_runs import (
    BROKEN,
    CLI,
    RUN_SECONDS,
    SOURCE,
    bulk_processes,
    entries_of,
    one_engine_class,
    rows,
)
from support.shape import SAMPLE, parts_of, points_of, scored

sys.path.insert(0, str(KIT / "examples"))
from make_class import make_class  # noqa: E402 - examples/ is a folder of scripts, not a package

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]
# Kills of one run, at moments drawn by the run's seed (another at every run); --exhaustive: six.
KILLS = 6 if EXHAUSTIVE else 3


def a_class(folder: Path) -> Path:
    """The example class (folders, zips, a notebook, single files, Canvas and Moodle downloads,
    a corrupt zip, an entry with no Python) and four quick students beside it."""
    make_class(folder)
    extra = {f"extra{index}": SOURCE if index % 2 else BROKEN for index in range(4)}
    return one_engine_class(folder, extra)


def start(klass: Path, out: Path, *options: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(CLI + ["bulk", str(klass), "-o", str(out), "--jobs", "2", *options], cwd=KIT,
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(process: subprocess.Popen) -> tuple[int, str]:
    out, err = process.communicate(timeout=RUN_SECONDS)
    return process.returncode, " ".join((out + err).split())


def ids(out: Path) -> dict[str, int]:
    """Each recorded submission's row id: a new one every time it is graded."""
    if not (out / "gradebook.sqlite").exists():
        return {}
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'submissions'").fetchone():
            return {}  # made, and nothing recorded yet
        sources = db.execute("SELECT source, id FROM submissions").fetchall()
    assert len(sources) == len({source for source, _ in sources})
    return dict(sources)


def whole_reports(out: Path) -> None:
    """Every report in place is whole: each CSV file parses, with a row per student of the class
    or none, and each feedback page ends as a page ends. (What is half written is named as
    such: `*.partial`, feedback.new/, feedback.old/, which the next run removes.)"""
    for path in out.glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as table:
            assert next(csv.reader(table)), path.name
    for page in (out / "feedback").glob("*.html") if (out / "feedback").is_dir() else ():
        assert page.read_text(encoding="utf-8").rstrip().endswith("</html>"), page.name


def nothing_left_running(out: Path) -> None:
    deadline = time.monotonic() + 30
    while bulk_processes(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bulk_processes(out) == [], "a process of a killed run outlived it"


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> dict:
    """The class, graded once without a fault, and how long that took."""
    root = tmp_path_factory.mktemp("whole")
    klass = a_class(root / "class")
    began = time.monotonic()
    code, said = finish(start(klass, root / "out"))
    assert code == 0, said[-3000:]
    seconds = time.monotonic() - began
    return {"class": klass, "out": root / "out", "seconds": seconds, "rows": rows(root / "out")}


def test_kill_9_at_random_moments_then_the_same_command_grades_each_submission_once(whole, tmp_path):
    out = tmp_path / "out"
    moments = random.Random(SEEDS[0])
    recorded: dict[str, int] = {}
    for _ in range(KILLS):
        process = start(whole["class"], out)
        time.sleep(moments.uniform(0.5, whole["seconds"] * 0.6))
        os.kill(process.pid, signal.SIGKILL)  # the bulk process alone, as `kill -9 PID` does
        process.communicate()
        now = ids(out)
        assert all(now[source] == row for source, row in recorded.items()), "a recorded grade was made again"
        recorded = now
        whole_reports(out)
    code, said = finish(start(whole["class"], out))
    assert code == 0, said[-3000:]
    assert all(ids(out)[source] == row for source, row in recorded.items())
    assert rows(out) == whole["rows"]
    whole_reports(out)
    assert not list(out.glob("*.partial")) and not (out / "feedback.new").exists()
    nothing_left_running(out)


CRASH_PLUGIN = """
import os
import signal


def pytest_sessionstart(session):
    if "crashes" in str(session.config.getoption("--submission")):
        os.kill(os.getpid(), signal.SIGSEGV)
"""


def test_a_grading_process_that_dies_holds_back_its_entry_and_the_rest_are_graded(tmp_path):
    """The grading process itself dies (SIGSEGV) on one submission: that entry is held back with
    the reason, never given a zero, the rest are graded, and the next run grades it again."""
    klass = one_engine_class(tmp_path / "class", {"ann": SOURCE, "crashes": SOURCE, "cy": BROKEN})
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "crash_on_one.py").write_text(CRASH_PLUGIN, encoding="utf-8")
    env = {"PYTHONPATH": str(plugins), "PYTEST_ADDOPTS": "-p crash_on_one"}
    code, said = finish(start(klass, tmp_path / "out", env=env))
    assert code == 0, said[-3000:]
    assert "held back crashes: could not be graded: the grading process was killed by SIGSEGV" in said
    with open(tmp_path / "out" / "grades.csv", newline="", encoding="utf-8") as table:
        grades = {row["student"]: row for row in csv.DictReader(table)}
    assert grades["crashes"]["total"] == "" and "SIGSEGV" in grades["crashes"]["held back"]
    assert scored(grades["ann"]) == points_of(SAMPLE) and 0 < scored(grades["cy"]) < points_of(SAMPLE)
    first = ids(tmp_path / "out")
    code, said = finish(start(klass, tmp_path / "out"))  # without the fault
    assert code == 0 and "1 graded now, 2 unchanged" in said
    again = ids(tmp_path / "out")
    assert again["crashes"] != first["crashes"] and again["ann"] == first["ann"]
    assert {e.source: e.status for e in entries_of(tmp_path / "out")}["crashes"] == "graded"


def test_two_runs_on_one_class_at_once_one_is_refused_and_nothing_is_graded_twice(whole, tmp_path):
    out = tmp_path / "out"
    first, second = start(whole["class"], out), start(whole["class"], out)
    endings = sorted([finish(first), finish(second)])
    assert [code for code, _ in endings] == [0, 2], endings
    assert f"another run is writing to {out}; wait for it or choose another -o" in endings[1][1]
    assert rows(out) == whole["rows"]
    recorded = ids(out)
    code, said = finish(start(whole["class"], out))
    assert code == 0 and f"{len(recorded)} unchanged since the last run" in said
    assert ids(out) == recorded


def test_two_runs_on_one_class_into_two_folders_both_grade_it_whole(whole, tmp_path):
    first, second = start(whole["class"], tmp_path / "a"), start(whole["class"], tmp_path / "b")
    assert [finish(first)[0], finish(second)[0]] == [0, 0]
    assert rows(tmp_path / "a") == rows(tmp_path / "b") == whole["rows"]


ALLOCATES = SOURCE + textwrap.dedent("""

    hoard = []
    while True:  # without end, as it is imported: its memory limit, or the machine's, stops it
        hoard.append(bytearray(64 * 2**20))
""")


def test_a_submission_that_allocates_without_end_gets_its_parts_with_the_cause(tmp_path):
    klass = one_engine_class(tmp_path / "class", {"ann": SOURCE, "hoarder": ALLOCATES})
    code, said = finish(start(klass, tmp_path / "out"))
    assert code == 0, said[-3000:]
    book = {e.source: e for e in entries_of(tmp_path / "out")}
    assert book["ann"].status == "graded" and book["hoarder"].status == "graded"
    said = f"importing {SAMPLE}.py raised MemoryError: the memory limit of 2048 MB was reached"
    assert all(s.points == 0 and said in s.messages for s in engine_scores(book["hoarder"]))
    assert all(s.points == s.max for s in engine_scores(book["ann"]))


def engine_scores(entry) -> list:
    """An entry's scores of SAMPLE's parts, every one of them."""
    scores = [s for s in entry.scores if s.part in parts_of(SAMPLE)]
    assert len(scores) == len(parts_of(SAMPLE))
    return scores


MEMORY_CGROUP = Path("/sys/fs/cgroup/memory")


def test_a_worker_the_out_of_memory_killer_ends_costs_its_parts_with_the_cause(tmp_path):
    """The class runs in a memory cgroup of 1 GB, so the hoarder's worker meets the kernel's
    out-of-memory killer before its own limit of 2 GB: its parts name that killer, and the
    honest classmate is graded as ever."""
    if os.geteuid() != 0 or not os.access(MEMORY_CGROUP, os.W_OK):
        pytest.skip("making a memory cgroup needs root and cgroup v1's memory controller, writable")
    group = MEMORY_CGROUP / f"autograder-test-{os.getpid()}"
    group.mkdir()
    try:
        (group / "memory.limit_in_bytes").write_text(str(2**30))
        klass = one_engine_class(tmp_path / "class", {"ann": SOURCE, "hoarder": ALLOCATES})
        process = subprocess.Popen(CLI + ["bulk", str(klass), "-o", str(tmp_path / "out"), "--jobs", "1"],
                                   cwd=KIT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
        code, said = finish(process)
        assert code == 0, said[-3000:]
        killed = int(dict(line.split() for line in (group / "memory.oom_control").read_text().splitlines())
                     .get("oom_kill", "0"))
    finally:
        deadline = time.monotonic() + 30
        while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        group.rmdir()
    assert killed >= 1, "the out-of-memory killer never ran: the test made no fault"
    book = {e.source: e for e in entries_of(tmp_path / "out")}
    assert all(s.points == 0 and "out-of-memory killer" in s.messages for s in engine_scores(book["hoarder"]))
    assert all(s.points == s.max for s in engine_scores(book["ann"]))


# -- a full disk ----------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A file system of 16 MB of its own (a tmpfs, as root), and a way to fill it."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a small file system of its own is mounted here as root")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"no tmpfs can be mounted here ({done.stderr.strip()})")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Take every byte left on `disk`; the file to remove to make room again."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while os.write(descriptor, b"\0" * 65536):
            pass
    except OSError:
        pass  # full
    finally:
        os.close(descriptor)
    return filler


def test_a_disk_that_fills_while_the_class_is_graded_stops_the_run_cleanly(whole, small_disk):
    """The disk fills once a few submissions are recorded: the run stops with one line that says
    what to do, the gradebook holds whole rows and no grading failed for it, and once there is
    room the same command grades the rest, nothing twice."""
    out = small_disk / "out"
    filler = fill(small_disk)  # full before it begins: not even a gradebook can be made
    code, said = finish(start(whole["class"], out))
    assert code == 2 and "gradebook.sqlite: could not be written (database or disk is full)" in said
    filler.unlink()
    process = start(whole["class"], out)
    deadline = time.monotonic() + RUN_SECONDS
    while len(ids(out)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    filler = fill(small_disk)
    code, said = finish(process)
    assert code == 2 and "Traceback" not in said, said[-3000:]
    assert "could not be written" in said and "make room" in said and "run the same command again" in said
    recorded = ids(out)
    assert 3 <= len(recorded) < len(whole["rows"])
    assert not any(entry.fault for entry in entries_of(out))
    assert rows(out).items() <= whole["rows"].items()
    whole_reports(out)
    filler.unlink()  # room made
    code, said = finish(start(whole["class"], out))
    assert code == 0, said[-3000:]
    assert rows(out) == whole["rows"]
    assert all(ids(out)[source] == row for source, row in recorded.items())
    whole_reports(out)


def test_a_disk_that_fills_while_the_reports_are_written_leaves_none_half_written(whole, small_disk):
    """Every grade is recorded, then the disk fills as the reports are written: one line says
    so, what is in place is whole (the last reports), nothing half written is left, and once
    there is room the same command writes them, grading nothing again."""
    out = small_disk / "out"
    code, said = finish(start(whole["class"], out))
    assert code == 0, said[-3000:]
    before = {path.name: path.read_bytes() for path in out.glob("*.csv")}
    recorded = ids(out)
    filler = fill(small_disk)
    for path in out.glob("*.csv"):
        path.unlink()
    code, said = finish(start(whole["class"], out))
    assert code == 2 and "the reports could not be written into" in said and "make room" in said, said[-3000:]
    assert not list(out.glob("*.partial")) and not (out / "feedback.new").exists()
    whole_reports(out)
    assert ids(out) == recorded
    filler.unlink()
    code, said = finish(start(whole["class"], out))
    assert code == 0, said[-3000:]
    assert sorted(path.name for path in out.glob("*.csv")) == sorted(before)
    assert (out / "grades.csv").read_bytes() == before["grades.csv"]
    assert ids(out) == recorded and rows(out) == whole["rows"]
