"""Grade a whole class: a gradebook, grades.csv, feedback per student and a class summary.

`autograder bulk SUBMISSIONS -o OUTDIR` takes a folder of submissions in any mix of shapes
(folders, zips, notebooks, single .py files, an LMS flat download, an nbgrader `submitted/`
tree), grades each one by running the same suites as `pytest autograder` in a process of its
own, several at a time, and records every submission in OUTDIR/gradebook.sqlite as soon as
it is done. Run it again to grade only what is new or changed (or what an interrupted run
did not reach); --force grades everything again.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from .. import sandbox
from ..config import GRADING_TOML, KIT_ROOT, Grading, Limits, load
from ..runner import BUSY_EXIT, SealedReference, time_limit
from . import intake, reports
from .gradebook import Entry, Gradebook, Score

SHIPPED_REFERENCE = KIT_ROOT / "autograder" / "reference.json"
GRACE_SECONDS = 5.0  # after SIGINT, the time pytest gets to stop its own workers
BUSY_ATTEMPTS = 3  # a grading the machine starved of CPU is tried again, then reported
# Start pytest so that it is interrupted (and stops its workers) if this process dies, even by SIGKILL.
LAUNCHER = """
import ctypes, os, signal, sys
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[1]):
        sys.exit("autograder bulk stopped before grading began")
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
"""


class BulkError(Exception):
    """Nothing can be graded: the reference or the class folder is not usable."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                        help="the class folder (folders, zips, notebooks, .py files, an LMS or "
                             "nbgrader download)")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR",
                        help="where the gradebook, grades.csv, feedback/ and summary.html go")
    parser.add_argument("--jobs", type=int, default=cores(), metavar="N",
                        help=f"submissions graded at once (default: the number of cores, {cores()})")
    parser.add_argument("--force", action="store_true",
                        help="grade every submission again, even those already in the gradebook")
    parser.add_argument("--nbgrader-db", metavar="URL",
                        help="also write the scores into this nbgrader gradebook "
                             "(e.g. sqlite:////course/gradebook.db); needs --assignment")
    parser.add_argument("--assignment", metavar="NAME", help="the nbgrader assignment the scores are for")


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# -- what a grade depends on ---------------------------------------------------------------------

def grader_version() -> str:
    """A hash of everything a grade depends on: the grading code, grading.toml and the reference."""
    package = KIT_ROOT / "autograder"
    files = [GRADING_TOML, *sorted((KIT_ROOT / "solutions").glob("*.py"))]
    # The staff tools (this module among them) only move grades around; they never make one.
    files += [path for path in sorted(package.rglob("*.py"))
              if "staff" not in path.relative_to(package).parts]
    if SHIPPED_REFERENCE.is_file():
        files.append(SHIPPED_REFERENCE)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(KIT_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def pytest_command(*options: str) -> list[str]:
    """One grading's pytest, started lean: the suites need no assertion rewriting, and of the
    installed plugins only pytest-timeout (PYTEST_DISABLE_PLUGIN_AUTOLOAD is set in `env`)."""
    plugins = ["-p", "pytest_timeout"] if importlib.util.find_spec("pytest_timeout") else []
    return [sys.executable, "-c", LAUNCHER, str(os.getpid()), "-m", "pytest", str(KIT_ROOT / "autograder"),
            "-q", "-p", "no:cacheprovider", "--assert=plain", *plugins, *options]


def pytest_env() -> dict[str, str]:
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", sandbox.LEVEL_VARIABLE: sandbox.level()}


def sealed_reference(out: Path, version: str) -> Path:
    """The reference's answers for this grader version, sealed once and kept under OUTDIR."""
    if sandbox.level() == "refused":  # no submission may run here: say why, once
        raise BulkError(sandbox.refusal())
    solutions = KIT_ROOT / "solutions"
    if not solutions.is_dir():
        if SHIPPED_REFERENCE.is_file():
            return SHIPPED_REFERENCE
        raise BulkError(f"{solutions}: not found, and no sealed {SHIPPED_REFERENCE} either; "
                        "bulk grading needs the kit with its solutions")
    sealed = out / "reference" / f"{version}.json"
    if sealed.is_file():
        return sealed
    if problem := sandbox.exposed(solutions, "the reference"):
        raise BulkError(problem)
    sealed.parent.mkdir(parents=True, exist_ok=True)
    partial = sealed.with_suffix(".partial")
    log = sealed.with_suffix(".log")
    with log.open("wb") as output:
        code = subprocess.run(pytest_command("--submission", str(solutions), "--reference", str(solutions),
                                             "--seal-reference", str(partial)),
                              stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              env=pytest_env(), cwd=KIT_ROOT, check=False).returncode
    if code != 0 or not partial.is_file():
        raise BulkError(f"the reference in {solutions} did not pass its own suites (pytest exited with "
                        f"{code}; see {log}); fix solutions/ or the suites before grading a class")
    partial.replace(sealed)
    return sealed


def wall_clock_cap(limits: Limits, reference: Path) -> float:
    """The most one submission may take: every scenario's own limit, every import, and one
    test's last-resort timeout on top. Only a grader that is itself stuck gets near it."""
    answers = SealedReference(reference).answers.values()
    scenarios = sum(time_limit(limits, answer.seconds) for answer in answers)
    return limits.test_timeout_seconds + scenarios + len(intake.ENGINES) * limits.import_seconds


# -- grading one submission ----------------------------------------------------------------------

class Processes:
    """The pytest processes running now, so that an interrupted run can stop them all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen] = set()
        self.stopping = False

    def start(self, command: list[str], log: Path) -> subprocess.Popen | None:
        with self.lock:
            if self.stopping:
                return None
            with log.open("wb") as output:
                process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=KIT_ROOT, process_group=0,
                                           env=pytest_env())
            self.running.add(process)
            return process

    def finish(self, process: subprocess.Popen) -> None:
        with self.lock:
            self.running.discard(process)

    def stop_all(self) -> None:
        with self.lock:
            self.stopping = True
            running = list(self.running)
        stop(running)


def stop(processes: list[subprocess.Popen]) -> None:
    """Interrupt pytest process groups (so each stops its workers), then kill whatever is left."""
    signal_groups(processes, signal.SIGINT)
    deadline = time.monotonic() + GRACE_SECONDS
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(max(0.0, deadline - time.monotonic()))
    signal_groups(processes, signal.SIGKILL)


def signal_groups(processes: list[subprocess.Popen], sig: signal.Signals) -> None:
    for process in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)


def run_capped(processes: Processes, command: list[str], log: Path, cap: float) -> int | str | None:
    """The exit status; the reason when the cap stopped it; None when the run is being stopped."""
    process = processes.start(command, log)
    if process is None:
        return None
    try:
        return process.wait(cap)
    except subprocess.TimeoutExpired:
        stop([process])
        return f"grading took longer than {cap:.0f} s (the wall-clock cap per submission) and was stopped"
    finally:
        processes.finish(process)


@dataclass
class Job:
    submission: intake.Submission
    staged: Path


def entry_for(submission: intake.Submission, version: str, **outcome) -> Entry:
    """The gradebook row of a submission, stamped with the grader version and the time."""
    return Entry(source=submission.source, student=submission.student, format=submission.format,
                 content_hash=submission.content_hash, grader_version=version,
                 graded_at=datetime.now(UTC).isoformat(timespec="seconds"), notes=submission.notes,
                 **outcome)


def grade(job: Job, reference: Path, cap: float, version: str, out: Path,
          processes: Processes, digest: str | None = None) -> Entry | None:
    """Run the suites on one staged submission; None when the run is being interrupted.
    `digest` is the sealed reference's SHA-256 as it was made: a grading refuses any other."""
    attempt = Path(tempfile.mkdtemp(prefix=job.staged.name + "-", dir=out / "work"))
    results, log = attempt / "results.json", attempt / "pytest.log"
    # --tb=line: a check that crashes is reported by its error alone, never by the suite's code.
    command = pytest_command("--submission", str(job.staged), "--reference", str(reference),
                             "--results-json", str(results), "--tb=line",
                             *(("--reference-sha256", digest) if digest else ()))
    start = time.monotonic()
    for _ in range(BUSY_ATTEMPTS):
        code = run_capped(processes, command, log, cap)
        if code != BUSY_EXIT:
            break
    seconds = round(time.monotonic() - start, 3)
    try:
        if code is None or processes.stopping:
            return None
        if code == BUSY_EXIT:
            entry = entry_for(job.submission, version, seconds=seconds, status="failed",
                              reason=f"the machine was too busy to grade it fairly, {BUSY_ATTEMPTS} times "
                                     f"({last_line(log)}); grade it again when the machine is less loaded")
        elif isinstance(code, str):
            entry = entry_for(job.submission, version, seconds=seconds, status="failed", reason=code)
        elif code not in (0, 1) or not results.is_file():
            entry = entry_for(job.submission, version, seconds=seconds, status="failed",
                              reason=f"pytest exited with status {code} and no results: {last_line(log)}")
        else:
            try:
                scores = scores_from(json.loads(results.read_text(encoding="utf-8")))
                entry = entry_for(job.submission, version, seconds=seconds, status="graded", scores=scores)
            except (ValueError, KeyError, TypeError) as error:
                entry = entry_for(job.submission, version, seconds=seconds, status="failed",
                                  reason=f"the results.json pytest wrote could not be read ({error})")
        if entry.status == "failed":
            (out / "logs").mkdir(exist_ok=True)
            shutil.copyfile(log, out / "logs" / f"{job.staged.name}.log")
        return entry
    finally:
        shutil.rmtree(attempt, ignore_errors=True)


def scores_from(results: dict) -> list[Score]:
    """Part scores from the results.json the plugin wrote: a test entry per part, tagged with the
    part id and then the misconceptions named in it."""
    scores = []
    for test in results["tests"]:
        part, *misconceptions = test["tags"]
        full = test["score"] >= test["max_score"]
        scores.append(Score(part=part, points=float(test["score"]), max=float(test["max_score"]),
                            messages="" if full else test["output"], misconceptions=misconceptions))
    return scores


def last_line(log: Path) -> str:
    lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else "it printed nothing"


# -- the class -----------------------------------------------------------------------------------

def staging_name(source: str) -> str:
    return f"{intake.student_id(source)}-{hashlib.sha1(source.encode()).hexdigest()[:6]}"


def grade_all(todo: list[intake.Submission], book: Gradebook, grading: Grading, version: str, out: Path,
              workers: int, console: Console) -> None:
    """Grade the submissions in parallel and record each one as soon as it is done."""
    jobs = [Job(s, out / "staging" / staging_name(s.source)) for s in todo if s.files]
    reference = sealed_reference(out, version) if jobs else None
    # The seal as it is now, made or checked by this run: every grading refuses any other.
    digest = hashlib.sha256(reference.read_bytes()).hexdigest() if reference else None
    cap = wall_clock_cap(grading.limits, reference) if reference else 0.0
    shutil.rmtree(out / "work", ignore_errors=True)  # what an interrupted run left behind
    (out / "work").mkdir()
    processes = Processes()
    columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[failed]} failed"), TextColumn("time left"), TimeRemainingColumn())
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("grading", total=len(todo), failed=0)
            futures = [pool.submit(grade, job, reference, cap, version, out, processes, digest)
                       for job in jobs]
            unreadable = [entry_for(s, version, seconds=0.0, status="failed", reason=s.reason)
                          for s in todo if not s.files]
            failed = 0
            for entry in itertools.chain(unreadable, (f.result() for f in as_completed(futures))):
                book.record(entry)
                if entry.status == "failed":
                    failed += 1
                    progress.console.print(f"[red]failed[/red] {entry.source}: {entry.reason}")
                progress.update(task, advance=1, failed=failed)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        processes.stop_all()
        raise
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(out / "work", ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    out: Path = args.output
    if bool(args.nbgrader_db) != bool(args.assignment):
        console.print("autograder bulk: --nbgrader-db and --assignment go together; give both or neither")
        return 2
    try:
        grading = load()
        submissions = intake.collect(args.submissions, ignore=out)
    except (intake.IntakeError, OSError) as error:
        console.print(f"autograder bulk: {error}")
        return 2
    if problem := sandbox.exposed(args.submissions, "the class folder"):  # a student reads another's
        console.print(f"autograder bulk: {problem}")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o700)  # the gradebook, the sealed answers, every submission: no other account's
    with (out / "bulk.lock").open("w") as lock:
        try:
            # Released when this process ends, however it ends: two runs would share one gradebook.
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            console.print(f"autograder bulk: another run is writing to {out}; wait for it or choose "
                          "another -o")
            return 2
        return grade_class(args, submissions, grading, console)


def grade_class(args: argparse.Namespace, submissions: list[intake.Submission], grading: Grading,
                console: Console) -> int:
    """Stage, grade what is new or changed, and write the reports; the exit status."""
    out: Path = args.output
    shutil.rmtree(out / "staging", ignore_errors=True)
    for submission in submissions:
        intake.stage(submission, out / "staging" / staging_name(submission.source))
    version = grader_version()
    book = Gradebook(out / "gradebook.sqlite")
    try:
        for source in book.forget_all_but({s.source for s in submissions}):
            console.print(f"{source}: no longer in {args.submissions}; removed from the gradebook")
        todo = [s for s in submissions
                if args.force or book.graded_with(s.source) != (s.content_hash, version)]
        if todo:
            grade_all(todo, book, grading, version, out, args.jobs, console)
        entries = book.entries()
    except BulkError as error:
        console.print(f"autograder bulk: {error}")
        return 2
    except KeyboardInterrupt:
        console.print(f"interrupted: {len(book.entries())} of {len(submissions)} submissions are in the "
                      "gradebook; run the same command again to grade the rest")
        return 130
    finally:
        book.close()
    reports.write_all(out, entries, grading)
    if args.nbgrader_db:
        from .notebooks import NotebookError, record_in_gradebook  # nbgrader is a staff extra

        try:
            for entry in entries:
                if entry.status == "graded":
                    record_in_gradebook(args.nbgrader_db, args.assignment, entry.student,
                                        {score.part: score.points for score in entry.scores}, grading)
        except NotebookError as error:
            console.print(f"autograder bulk: {error}")
            return 2
    failed = sum(e.status == "failed" for e in entries)
    console.print(f"{len(submissions)} submissions: {len(todo)} graded now, {len(submissions) - len(todo)} "
                  f"unchanged since the last run, {failed} failed (see {out / 'failures.jsonl'}); "
                  f"grades in {out / 'grades.csv'}, class summary in {out / 'summary.html'}")
    return 0
