"""Running `autograder bulk` as the bulk tests do, and reading what it wrote: the means of
staff/test_bulk.py, test_cli.py and test_faults.py, and of the tests of the LMS files and of the
grader's faults.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

from autograder.staff.cli import main
from autograder.staff.gradebook import Entry, Gradebook, Score

from .shape import SAMPLE, broken, reference

CLI = [sys.executable, "-m", "autograder.staff.cli"]
SOURCE, BROKEN = reference(SAMPLE), broken(SAMPLE)  # an engine the kit grades: right, and with a bug
# A hung bulk run fails the test instead of hanging it; a normal one takes a small fraction.
RUN_SECONDS = 600


def outdir(path: Path, reference_cache: Path) -> Path:
    """A fresh OUTDIR that already holds the sealed reference, as a second run would."""
    shutil.copytree(reference_cache, path / "reference")
    return path


def bulk_run(klass: Path, out: Path, *options: str) -> int:
    return main(["bulk", str(klass), "-o", str(out), *options])


def rows(out: Path) -> dict[str, tuple]:
    """Every submission's row and scores, without the time it was graded at or took."""
    book = Gradebook(out / "gradebook.sqlite")
    try:
        return {e.source: (e.student, e.format, e.content_hash, e.grader_version, e.status, e.reason,
                           tuple(e.notes), tuple(score_row(s) for s in e.scores))
                for e in book.entries()}
    finally:
        book.close()


def entries_of(out: Path) -> list[Entry]:
    book = Gradebook(out / "gradebook.sqlite")
    try:
        return book.entries()
    finally:
        book.close()


def score_row(score: Score) -> tuple:
    return score.part, score.points, score.max, score.messages, tuple(score.misconceptions)


def submission_ids(out: Path) -> dict[str, int]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return dict(db.execute("SELECT source, id FROM submissions"))


def one_engine_class(folder: Path, students: dict[str, str]) -> Path:
    """A class whose submissions hold only SAMPLE's file: quick to grade, the other parts fail at once."""
    for student, text in students.items():
        (folder / student).mkdir(parents=True)
        (folder / student / f"{SAMPLE}.py").write_text(text)
    return folder


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def bulk_processes(out: Path) -> list[int]:
    """Processes whose command line names this OUTDIR: the bulk run and the pytest runs it started."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(out).encode() in cmdline.read_bytes() and alive(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found
