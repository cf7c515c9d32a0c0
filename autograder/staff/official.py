"""One submission's official grading: the grader version and the reference it is made with, the
options that make it official, its run in a grading process of the pool (graders.py), and the
gradebook entry made of how that run ended."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .. import intake, scoring
from ..config import GRADING_TOML, KIT_ROOT
from ..runner import BUSY_EXIT
from . import graders
from .gradebook import Entry, Score

BUSY_ATTEMPTS = 3  # a grading the machine starved of CPU is tried again, then reported
DISK_ROOM = 1 << 20  # bytes: less free than this where OUTDIR is, and the disk is full
SHIPPED_REFERENCE = KIT_ROOT / "autograder" / "reference.json"
SOLUTIONS = KIT_ROOT / "solutions"


def grader_version() -> str:
    """A hash of everything a grade depends on: the grading code, grading.toml and the reference."""
    package = KIT_ROOT / "autograder"
    files = [GRADING_TOML, *sorted(SOLUTIONS.glob("*.py"))]
    # The staff tools (this module among them) only move grades around; they never make one.
    files += [path for path in sorted(package.rglob("*.py"))
              if "staff" not in path.relative_to(package).parts]
    if SHIPPED_REFERENCE.is_file():
        files.append(SHIPPED_REFERENCE)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(KIT_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@dataclass
class Job:
    """One submission to grade, and the folder its files are staged in."""

    submission: intake.Submission
    staged: Path


@dataclass(frozen=True)
class Official:
    """What makes a grading official: the course's secret, which its questions are drawn
    from, and the reference that answers them live, as its files were when the run began."""

    secret: Path
    reference: Path
    digest: str  # the reference's files: a grading refuses any other (a worker may write there)

    def options(self, version: str) -> list[str]:
        """The options of `pytest autograder` that make a grading by grader `version` official (in a
        grading process that stays, the reference answers its costliest scenarios from replicas)."""
        return [f"--grading-secret={self.secret}", "--grading-context", version,
                f"--reference={self.reference}", "--reference-sha256", self.digest,
                "-p", "autograder.staff.replicas"]


def entry_for(submission: intake.Submission, version: str, **outcome) -> Entry:
    """The gradebook row of a submission, stamped with the grader version and the time."""
    return Entry(source=submission.source, student=submission.student, format=submission.format,
                 content_hash=submission.content_hash, grader_version=version,
                 graded_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), notes=submission.notes,
                 lms=submission.lms, lms_id=submission.lms_id, lms_name=submission.lms_name,
                 late=submission.late, submitted_at=submission.submitted_at, lms_files=submission.lms_files,
                 **outcome)


def grade(job: Job, official: Official, cap: float, version: str, out: Path,
          pool: graders.Graders) -> Entry | None:
    """Run the suites on one staged submission, with questions of its own; None when the run is
    being interrupted."""
    attempt = Path(tempfile.mkdtemp(prefix=job.staged.name + "-", dir=out / "work"))
    results, log = attempt / "results.json", attempt / "pytest.log"
    # --tb=line: a check that crashes is reported by its error alone, never by the suite's code.
    args = graders.pytest_args(f"--submission={job.staged}", *official.options(version),
                               f"--results-json={results}", "--tb=line")
    start = time.monotonic()
    for _ in range(BUSY_ATTEMPTS):
        ending = pool.grade(args, log, cap)
        if ending.code != BUSY_EXIT:
            break
    seconds = round(time.monotonic() - start, 3)
    try:
        if ending.interrupted or pool.stopping:
            return None
        entry = outcome_of(job.submission, version, seconds, ending, results, log)
        if entry.status == "failed" and disk_full(out):  # not the submission's doing: stop the run
            raise OSError(errno.ENOSPC, "no space left on the disk: a grading could not write its results",
                          str(out))
        if entry.status == "failed":
            with contextlib.suppress(OSError):  # the log is a help; the reason is in the entry
                (out / "logs").mkdir(exist_ok=True)
                shutil.copyfile(log, out / "logs" / f"{job.staged.name}.log")
        return entry
    finally:
        shutil.rmtree(attempt, ignore_errors=True)


def outcome_of(submission: intake.Submission, version: str, seconds: float, ending: graders.GraderExit,
               results: Path, log: Path) -> Entry:
    """The entry of a grading that ended as `ending`: its scores, or why there are none. Every
    way it can end without results.json is the grader's doing (a fault of the grader, the
    machine, a grading process that died), never the submission's: such an entry is held back,
    and the next run grades it again."""
    code = ending.code

    def failed(reason: str) -> Entry:
        return entry_for(submission, version, seconds=seconds, status="failed", reason=reason, fault=True)

    if code == BUSY_EXIT:
        return failed(f"the machine was too busy to grade it fairly, {BUSY_ATTEMPTS} times "
                      f"({last_line(log)}); the next run grades it again: run it when the machine is less "
                      "loaded")
    if code == scoring.NOT_GRADED_EXIT:
        said = last_line(log, 1000).removeprefix("autograder: no score: ")
        return failed(f"{said}; fix the grader, and the next run grades it again")
    if code is None:
        return failed(ending.reason)
    if code < 0:
        return failed(f"the grading process was killed by {signal_name(-code)} before it wrote any results "
                      f"(its log: {last_line(log)}); the next run grades it again")
    if code not in (0, 1) or not results.is_file():
        return failed(f"pytest exited with status {code} and no results: {last_line(log)}")
    try:
        scores = scores_from(json.loads(results.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as error:
        return failed(f"the results.json pytest wrote could not be read ({error})")
    return entry_for(submission, version, seconds=seconds, status="graded", scores=scores)


def signal_name(number: int) -> str:
    """SIGKILL, SIGSEGV, ...; `signal 64` for one Python does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def scores_from(results: dict) -> list[Score]:
    """Part scores from the results.json the plugin wrote: a test entry per part, tagged with the
    part id and then the misconceptions named in it."""
    scores = []
    for test in results["tests"]:
        part, *misconceptions = test["tags"]
        # A part worth 0 points has full points however it went: its status says whether it passed.
        passed = test["status"] == "passed"
        scores.append(Score(part=part, points=float(test["score"]), max=float(test["max_score"]),
                            messages="" if passed else test["output"], misconceptions=misconceptions))
    return scores


def last_line(log: Path, most: int = 300) -> str:
    """The last line of a grading's log that is not blank, cut to `most` characters."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "its log could not be read"
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:most] if lines else "it printed nothing"


def disk_full(folder: Path) -> bool:
    """Is the file system that holds `folder` (all but) full for this user?"""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < DISK_ROOM
