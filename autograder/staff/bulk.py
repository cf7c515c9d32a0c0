"""Grade a whole class: a gradebook, grades.csv, feedback per student and a class summary.

`autograder bulk SUBMISSIONS -o OUTDIR` grades every entry intake finds in the class folder,
each by the suites of `pytest autograder` in a process of its own, several at a time, and
records each in OUTDIR/gradebook.sqlite as soon as it is done. Run again, it grades only what
is new or changed (by content hash and grader version); --force grades everything again.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import itertools
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from .. import intake, sandbox
from ..config import KIT_ROOT, ConfigError, Grading, Limits, load
from ..escape import printable
from ..parts import engines
from ..questions import SecretError, make_secret, read_secret
from ..runner import SealedReference, folder_digest, time_limit
from . import adjustments, graders, lmsfiles, policies, reports, roster, summary
from .gradebook import Entry, Gradebook, Score
from .official import SOLUTIONS, Job, Official, disk_full, entry_for, grade, grader_version
from .outcomes import CourseRecord, maximum
from .secret import DEFAULT_SECRET

SQLITE_FULL = 13  # "database or disk is full" (sqlite3.SQLITE_FULL from Python 3.11)
# The phases after every grading is recorded, and what running the command again then does.
AFTER_GRADING = {"recording the grades in nbgrader": "record them and write the reports",
                 "writing the reports": "write grades.csv, feedback/ and summary.html"}


class BulkError(Exception):
    """Nothing can be graded: the reference or the class folder is not usable."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder bulk`."""
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                        help="the class folder (folders, zips, notebooks, .py files, an LMS or "
                             "nbgrader download)")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR",
                        help="where the gradebook, grades.csv, feedback/ and summary.html go")
    parser.add_argument("--jobs", type=job_count, default=cores(), metavar="N",
                        help=f"submissions graded at once (default: the number of cores, {cores()})")
    parser.add_argument("--force", action="store_true",
                        help="grade every submission again, even those already in the gradebook")
    parser.add_argument("--nbgrader-db", metavar="URL",
                        help="then autograde the submissions in nbgrader, with the kit's grades, "
                             "into this gradebook (e.g. sqlite:////course/gradebook.db); needs --assignment")
    parser.add_argument("--assignment", metavar="NAME", help="the nbgrader assignment the scores are for")
    parser.add_argument("--secret", type=Path, default=DEFAULT_SECRET, metavar="FILE",
                        help="the course's secret, which each submission's questions are drawn from "
                             f"(default: {DEFAULT_SECRET.name} in the kit, made on first use)")
    parser.add_argument("--lms-assignment", metavar="TITLE", default=reports.LMS_COLUMN,
                        help="the heading of the grade column in the LMS import files: the assignment "
                             "as the LMS's own export heads it, e.g. 'Homework 3 (4821)' for Canvas, "
                             f"so that the import fills in that assignment (default: {reports.LMS_COLUMN!r})")
    parser.add_argument("--sandbox-level", metavar="LEVEL",
                        help=sandbox.CHOOSE_HELP)
    lms = parser.add_argument_group("grades for the LMS (docs/platforms.md)")
    lms.add_argument("--roster", type=Path, metavar="FILE",
                     help="the LMS's own list of the class: Canvas's Grades export, a Moodle grading "
                          "worksheet or grade export, or GitHub Classroom's roster; the LMS files then cover "
                          "exactly it")
    lms.add_argument("--zeros", action="store_true",
                     help="give 0 to a submission that could not be graded, a student with several entries "
                          "and a roster's student with none (by default they are held back: no grade)")
    lms.add_argument("--bonus", action="append", default=[], metavar="LMS=POLICY",
                     help="cap, scale or keep the bonus for canvas or moodle (default: canvas=keep, "
                          "moodle=cap, what each accepts)")
    lms.add_argument("--lms-points", action="append", default=[], metavar="[LMS=]POINTS",
                     help="the LMS item's points, which the kit's full marks are posted as, where no "
                          "roster says them, for canvas or moodle or both (default: the roster's Points "
                          "Possible or Maximum Grade, else the kit's)")
    lms.add_argument("--moodle-max", type=float, metavar="POINTS",
                     help="the Moodle grade item's maximum grade, above its points where it leaves room for "
                          "the bonus (default: the worksheet's, else the item's points)")
    lms.add_argument("--late-per-day", type=float, metavar="POINTS",
                     help="points a late submission loses per day late (a day begun counts)")
    lms.add_argument("--late-cap", type=float, metavar="POINTS", help="the most points lateness costs")
    lms.add_argument("--due", metavar="WHEN",
                     help="the due time, as 2026-12-01T23:59 (the LMS's local time) or with its zone")
    hand = parser.add_argument_group("grades by hand (docs/grading.md, By hand)")
    hand.add_argument("--adjustments", type=Path, metavar="FILE",
                      help="a CSV of student,part,points,reason: a part id or total, and +2, -10 (a "
                           "change) or =0 (a set value), with ! at the end to leave 0 .. the maximum; "
                           "applied on every run, before the late policy")
    hand.add_argument("--extensions", type=Path, metavar="FILE",
                      help="a CSV of student,due: a student's own due time for the late policy, as "
                           "2026-12-03T23:59+01:00")


def job_count(text: str) -> int:
    """--jobs: a whole number of at least 1; raises argparse.ArgumentTypeError otherwise."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least 1, such as "
                                         f"--jobs {cores()} (the number of cores)")
    return count


def cores() -> int:
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# -- what a grade depends on ---------------------------------------------------------------------

def pytest_command(*options: str) -> list[str]:
    """One grading's `pytest autograder` as a process of its own (the reference's sealing), at
    this run's sandbox level, stopped if this process dies."""
    return [sys.executable, "-c", graders.LAUNCHER, str(os.getpid()), "-m", "pytest",
            *graders.pytest_args("--sandbox-level", sandbox.level(), *options)]


def sealed_reference(out: Path, version: str) -> Path:
    """The reference's answers to the public questions for this grader version, sealed once and
    kept under OUTDIR: proof that the reference passes its own suites, and the yardstick of
    each grading's time cap (the gradings themselves ask the reference their own questions).
    Raises BulkError when no submission may run here or the reference fails its suites."""
    if sandbox.level() == "refused":  # no submission may run here: say why, once
        raise BulkError(sandbox.refusal())
    if why := sandbox.open_network():  # every bulk grading is official: its answers must be the engine's
        raise BulkError(why)
    solutions = SOLUTIONS
    if not solutions.is_dir():
        raise BulkError(f"{solutions}: not found; bulk grading asks every submission questions of its "
                        "own, which only the reference can answer: run it from the kit with its solutions/")
    sealed = out / "reference" / f"{version}.json"
    if sealed.is_file():
        return sealed
    if problem := sandbox.exposed(solutions, "the reference"):
        raise BulkError(problem)
    sealed.parent.mkdir(parents=True, exist_ok=True)
    partial = sealed.with_suffix(".partial")
    log = sealed.with_suffix(".log")
    with log.open("wb") as output:
        code = subprocess.run(pytest_command(f"--submission={solutions}", f"--reference={solutions}",
                                             f"--seal-reference={partial}"),
                              stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              env=graders.pytest_env(), cwd=KIT_ROOT, check=False).returncode
    if (code != 0 or not partial.is_file()) and disk_full(out):
        raise OSError(errno.ENOSPC, "no space left on the disk: the reference's answers could not be sealed",
                      str(out))
    if code != 0 or not partial.is_file():
        raise BulkError(f"the reference in {solutions} did not pass its own suites (pytest exited with "
                        f"{code}; see {log}); fix solutions/ or the suites before grading a class")
    partial.replace(sealed)
    return sealed


def wall_clock_cap(limits: Limits, reference: Path) -> float:
    """The most one submission may take: every scenario's own limit, every import, and one
    test's last-resort timeout on top. Only a grader that is itself stuck gets near it."""
    answers = SealedReference(reference).answers.values()
    # The submission's limits, and the live reference's own time for the same questions.
    scenarios = sum(time_limit(limits, answer.seconds) + answer.seconds for answer in answers)
    # The time either side may spend asleep or blocked in all: the reference's is its own.
    idle = limits.idle_seconds + limits.test_timeout_seconds
    return limits.test_timeout_seconds + idle + scenarios + 2 * len(engines()) * limits.import_seconds


# -- grading one submission ----------------------------------------------------------------------

def course_secret(path: Path, console: Console) -> Path:
    """The course's secret, made (and said so) when there is none yet. Raises BulkError."""
    try:
        if make_secret(path):
            say(console, f"made the course's secret in {path}: keep it, and never hand it out (the same "
                         "submission gets the same questions, and the same grade, only with it)")
        read_secret(path)
    except SecretError as error:
        raise BulkError(str(error)) from None
    return path


# -- the class -----------------------------------------------------------------------------------

def staging_name(source: str) -> str:
    """A submission's folder name under staging/: its student id, and a hash of its source."""
    return f"{intake.student_id(source)}-{hashlib.sha1(source.encode()).hexdigest()[:6]}"


@dataclass
class RunState:
    """How far this run got, for the line that ends it however it ends."""

    phase: str = "reading the class folder"
    todo: int = 0
    done: int = 0
    left: dict[str, intake.Submission] = field(default_factory=dict)  # to grade, not yet recorded


def with_zeros(entry: Entry, grading: Grading) -> Entry:
    """A submission that could not be graded scores zero on every part, with the reason."""
    if entry.status == "failed" and not entry.scores:
        entry.scores = [Score(part=part.id, points=0.0, max=float(part.points), messages=entry.reason)
                        for part in grading.parts.values()]
    return entry


def say(console: Console, message: str, style: str | None = None) -> None:
    """One line, whatever names it holds: control characters escaped, no markup, never wrapped."""
    console.print(Text(printable(message), style=style or ""), soft_wrap=True)


def stage_all(todo: list[intake.Submission], staging: Path, version: str) -> tuple[list[Job], list[Entry]]:
    """Each gradable submission's files in a folder of its own; what cannot be staged is an entry."""
    jobs, failed = [], []
    for submission in todo:
        if not submission.files:
            failed.append(entry_for(submission, version, seconds=0.0, status="failed",
                                    reason=submission.reason))
            continue
        folder = staging / staging_name(submission.source)
        try:
            intake.stage(submission, folder)
        except (OSError, UnicodeError) as error:
            if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
                raise  # a full disk stops the run: no entry is failed for it
            failed.append(entry_for(submission, version, seconds=0.0, status="failed",
                                    reason=f"its files could not be written for grading ({error})",
                                    fault=isinstance(error, OSError)))
            continue
        jobs.append(Job(submission, folder))
    return jobs, failed


def clear_scratch(out: Path) -> None:
    """Remove what a run works in, and what a killed run left of it: staging/, work/,
    feedback.new/ and feedback.old/, and the reports and seals half written (`*.partial`)."""
    for scratch in (out / "work", out / "staging", out / "feedback.new", out / "feedback.old"):
        shutil.rmtree(scratch, ignore_errors=True)
    for partial in [*out.glob("*.partial"), *(out / "reference").glob("*.partial")]:
        partial.unlink(missing_ok=True)


def grade_all(todo: list[intake.Submission], book: Gradebook, grading: Grading, version: str, out: Path,
              workers: int, console: Console, state: RunState, secret: Path) -> None:
    """Grade the submissions in parallel and record each one as soon as it is done."""
    (out / "work").mkdir()
    state.phase, state.todo, state.left = "staging the submissions", len(todo), {s.source: s for s in todo}
    jobs, unreadable = stage_all(todo, out / "staging", version)
    state.phase = "sealing the reference's answers"
    reference = sealed_reference(out, version) if jobs else None
    official = Official(secret, SOLUTIONS, folder_digest(SOLUTIONS)) if jobs else None
    cap = wall_clock_cap(grading.limits, reference) if reference else 0.0
    state.phase = "grading"
    pool_of_graders = graders.Graders(graders.pytest_env(), out)
    columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[failed]} failed"), TextColumn("time left"), TimeRemainingColumn())
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("grading", total=len(todo), failed=0)
            futures = [pool.submit(grade, job, official, cap, version, out, pool_of_graders)
                       for job in jobs]
            failed = 0
            for entry in itertools.chain(unreadable, (f.result() for f in as_completed(futures))):
                book.record(with_zeros(entry, grading))
                state.done += 1
                state.left.pop(entry.source, None)
                if entry.status == "failed":
                    failed += 1
                    say(progress.console, f"failed {entry.source}: {entry.reason}", style="red")
                progress.update(task, advance=1, failed=failed)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        with ignoring_interrupts():  # a second Ctrl-C must not leave a grading running
            pool_of_graders.stop_all()
        raise
    finally:
        pool.shutdown(wait=True)
        pool_of_graders.close()
        for scratch in (out / "work", out / "staging"):
            shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def ignoring_interrupts():
    """A block that Ctrl-C does not interrupt (in the main thread; elsewhere it cannot anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run(args: argparse.Namespace) -> int:
    """Run `autograder bulk`; returns the exit status (130 when interrupted)."""
    console = Console(stderr=True, markup=False, emoji=False, highlight=False)
    state = RunState()
    try:
        return checked_run(args, console, state)
    except KeyboardInterrupt:
        say(console, f"autograder bulk: {interrupted(args, state)}")
        return 130


def checked_run(args: argparse.Namespace, console: Console, state: RunState) -> int:
    """Check what the user gave, then grade; every mistake is one line saying what to do."""
    # Every path is the user's, taken from where they stand: the grading runs in the kit's folder.
    args.submissions, args.output = args.submissions.absolute(), args.output.absolute()
    out: Path = args.output
    if bool(args.nbgrader_db) != bool(args.assignment):
        return refuse(console, "--nbgrader-db and --assignment go together; give both or neither")
    if args.sandbox_level is not None:
        try:
            sandbox.choose(args.sandbox_level)
        except sandbox.SandboxError as error:
            return refuse(console, str(error))
    try:
        args.policy = policies.make_policy(args.zeros, args.bonus, args.moodle_max, args.late_per_day,
                                           args.late_cap, args.due, args.lms_points)
        args.roster_read = roster.read_roster(args.roster.absolute()) if args.roster else None
        args.lms_assignment = roster.assignment_column(args.roster_read, args.lms_assignment)
    except (policies.PolicyError, roster.RosterError) as error:
        return refuse(console, str(error))
    if (args.adjustments or args.extensions) and args.nbgrader_db:
        return refuse(console, "--adjustments, --extensions and --nbgrader-db: nbgrader's gradebook is the "
                               "grade of record; grade by hand in formgrader and give extensions in nbgrader")
    if args.late_per_day is not None and args.nbgrader_db:
        return refuse(console, "--late-per-day and --nbgrader-db: nbgrader applies its own late penalty "
                               "(c.LateSubmissionPlugin in nbgrader_config.py); set it there")
    if out.exists() and not out.is_dir():
        return refuse(console, f"-o {out}: a file, not a folder; give -o a folder (it is made if it "
                               "does not exist)")
    if out.resolve() == args.submissions.resolve():
        return refuse(console, f"-o {out}: the class folder itself; give -o a folder of its own")
    try:
        grading = load()
        submissions = intake.collect(args.submissions, ignore=out, assignment=args.assignment)
        lmsfiles.scales_of(args.policy, args.roster_read, args.lms_assignment, maximum(grading),
                           sum(part.points for part in grading.parts.values()))  # refused before any grading
    except (ConfigError, intake.IntakeError, policies.PolicyError) as error:
        return refuse(console, str(error))
    if problem := sandbox.exposed(args.submissions, "the class folder"):  # a student reads another's
        return refuse(console, problem)
    if not submissions:
        return refuse(console, f"{args.submissions}: no submissions found (it is empty, or holds only "
                               "hidden files); point autograder bulk at the folder with one entry per "
                               "student")
    try:  # before anything is written: a mistake in either file costs no grading
        files = [path.absolute() if path else None for path in (args.adjustments, args.extensions)]
        args.by_hand = adjustments.read(*files, {s.student for s in submissions}, grading, args.policy,
                                        args.roster_read, submissions, args.submissions)
    except adjustments.ByHandError as error:
        for problem in error.problems:
            say(console, f"pre-flight: {problem}", style="red")
        return refuse(console, f"{error}, so nothing was graded or written: fix what each line above says, "
                               "then run the same command again")
    try:
        out.mkdir(parents=True, exist_ok=True)
        out.chmod(0o700)  # the gradebook, the sealed answers, every submission: no other account's
        lock = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        return refuse(console, f"-o {out}: cannot be made or opened ({error.strerror}); give -o a folder "
                               "you may write to")
    try:
        # Released when this process ends, however it ends: two runs would share one gradebook.
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return refuse(console, f"another run is writing to {out}; wait for it or choose another -o")
    try:
        return grade_class(args, submissions, grading, console, state)
    finally:
        os.close(lock)


def refused_held_back(entries: list[Entry], record: CourseRecord,
                      refused: dict[str, str]) -> tuple[list[Entry], CourseRecord]:
    """The entries and nbgrader's record, with each submission nbgrader could not autograde
    held back (never exported: in an nbgrader course, whatever its grade would be, nbgrader's
    late penalty never ran on it), whatever nbgrader held for it before."""
    held = [dataclasses.replace(entry, status="failed", reason=refused[entry.source])
            if entry.source in refused and entry.status == "graded" else entry for entry in entries]
    grades = {source: grade for source, grade in record.grades.items() if source not in refused}
    return held, CourseRecord(grades, record.late)


def kept_by_hand(out: Path, by_hand: adjustments.ByHand | None, console: Console) -> None:
    """The run's adjustments and extensions into the gradebook, once the reports that apply them
    are written; of a file not given, the rows an earlier run applied are kept and said."""
    book = Gradebook(out / "gradebook.sqlite")
    try:
        tables = by_hand.records() if by_hand is not None else {}
        book.record_by_hand(tables, datetime.now(timezone.utc).isoformat(timespec="seconds"))
        for table, option in (("adjustments", "--adjustments"), ("extensions", "--extensions")):
            if table in tables:
                continue
            (count, file), = book.db.execute(f"SELECT count(*), min(file) FROM {table} WHERE source != ''")
            if count:
                say(console, f"the gradebook holds {count} {table} an earlier run applied (from {file}), "
                             f"which this run's reports leave out: give {option} {file} to keep them",
                    style="yellow")
    finally:
        book.close()


def refuse(console: Console, message: str) -> int:
    """Say `message` as the command's one line; returns exit status 2."""
    say(console, f"autograder bulk: {message}")
    return 2


def interrupted(args: argparse.Namespace, state: RunState) -> str:
    """What an interrupted run did and what to do next, counted from what this run finished."""
    # The same command with --force would grade everything once more.
    again = "the command again without --force" if args.force else "the same command again"
    if state.phase in AFTER_GRADING:
        return (f"interrupted while {state.phase}; every grade is in the gradebook: run {again} to "
                f"{AFTER_GRADING[state.phase]} (nothing is graded twice)")
    if not state.todo:
        return (f"interrupted while {state.phase}; nothing was graded: run the same command again to grade "
                "the class")
    if state.done == state.todo:
        return (f"interrupted after the last grading: all {state.todo} submissions this run set out to grade "
                f"are in the gradebook; run {again} to write the reports (nothing is graded twice)")
    head = (f"interrupted while {state.phase}: {state.done} of the {state.todo} submissions this run set "
            "out to grade were graded and are in the gradebook")
    if not args.force:
        return f"{head}; run the same command again to grade the other {state.todo - state.done}"
    try:
        book = Gradebook(args.output / "gradebook.sqlite")
        version = grader_version()
        without = sum(book.graded_with(s.source) != (s.content_hash, version) for s in state.left.values())
        book.close()
    except Exception:  # noqa: BLE001 - the message is the last thing this run does
        without = len(state.left)
    kept = len(state.left) - without
    return (f"{head}; of the other {len(state.left)}, {kept} keep the grade an earlier run gave them "
            f"with this grader and {without} have none: run the command again without --force to grade "
            f"{'those' if without else 'nothing and write the reports'}")


def grade_class(args: argparse.Namespace, submissions: list[intake.Submission], grading: Grading,
                console: Console, state: RunState) -> int:
    """Grade what is new or changed, and write the reports; the exit status."""
    out: Path = args.output
    state.phase = "opening the gradebook"
    version = grader_version()
    try:
        book = Gradebook(out / "gradebook.sqlite")
    except sqlite3.Error as error:
        if getattr(error, "sqlite_errorcode", None) == SQLITE_FULL or disk_full(out):
            return refuse(console, f"{out / 'gradebook.sqlite'}: could not be written ({error}); make room, "
                                   "then run the same command again")
        return refuse(console, f"{out / 'gradebook.sqlite'}: not a gradebook this kit can read ({error}); "
                               "move it away, or give -o a folder of its own")
    try:
        for source in book.forget_all_but({s.source for s in submissions}):
            say(console, f"{source}: no longer in {args.submissions}; removed from the gradebook")
        todo = [s for s in submissions
                if args.force or book.graded_with(s.source) != (s.content_hash, version)]
        secret = course_secret(args.secret.absolute(), console)
        clear_scratch(out)  # what a killed run left behind, whether or not this one grades anything
        for submission in todo:
            for line in submission.resubmissions:
                say(console, f"{submission.source}: {line}")
        if todo:
            grade_all(todo, book, grading, version, out, args.jobs, console, state, secret)
        entries = book.entries()
    except BulkError as error:
        return refuse(console, str(error))
    except sqlite3.Error as error:  # a full disk, most likely; each submission recorded is whole
        return refuse(console, f"{out / 'gradebook.sqlite'}: could not be written ({error}); what is in "
                               "it is whole: make room, then run the same command again to grade the rest")
    except OSError as error:  # a full disk, most likely, while staging or grading
        clear_scratch(out)
        return refuse(console, f"{out}: could not be written ({error.strerror or error}); every "
                               "submission recorded in the gradebook is whole: make room (or fix the "
                               "folder's permissions), then run the same command again to grade the rest")
    finally:
        book.close()
    record = None
    if args.nbgrader_db:
        state.phase = "recording the grades in nbgrader"
        try:
            from . import nbgrader_course  # nbgrader is a staff extra
        except ImportError as error:
            console.print(f"autograder bulk: --nbgrader-db needs nbgrader ({error}); "
                          "pip install -e '.[nbgrader]'")
            return 2
        try:  # nbgrader's own autograde, with the kit's grades in place of executing the notebooks
            refused = nbgrader_course.autograde_course(args.submissions, args.nbgrader_db, args.assignment,
                                                       nbgrader_course.known_from_bulk(submissions, entries),
                                                       args.secret.absolute(), out / "logs")
            record = nbgrader_course.course_grades(args.nbgrader_db, args.assignment, args.submissions)
        except nbgrader_course.NotebookError as error:
            console.print(f"autograder bulk: {error}")
            return 2
        for source, why in refused.items():
            console.print(f"nbgrader {source}/{args.assignment}: {why}", style="red")
        entries, record = refused_held_back(entries, record, refused)
    state.phase = "writing the reports"
    try:
        left = sandbox.left_behind()
        outcome = reports.write_all(out, entries, grading, args.lms_assignment, record, args.policy,
                                    args.roster_read, args.by_hand, left)
        kept_by_hand(out, args.by_hand, console)
    except reports.PreflightError as error:
        for line in error.scale:
            say(console, f"pre-flight: {line}")
        for problem in error.problems:
            say(console, f"pre-flight: {problem}", style="red")
        return refuse(console, f"{error}, so no report was written (every grade is in the gradebook): fix "
                               "what each line above says, then run the same command again")
    except OSError as error:
        clear_scratch(out)  # what was half written: each report in place is the last whole one
        return refuse(console, f"the reports could not be written into {out} ({error}); every grade is in "
                               "the gradebook: make room or fix the folder, then run the same command again")
    _, several = reports.by_student(entries)
    for student, mine in several.items():
        say(console, reports.collision(student, mine, grading), style="yellow")
    for line in outcome.lines + (args.by_hand.lines() if args.by_hand else []):
        say(console, line, style="yellow")
    for line in outcome.scale:
        say(console, line)
    for path in left:
        say(console, f"{path}: {summary.LEFT_BEHIND}", style="yellow")
    if why := sandbox.shared_writes():
        say(console, why, style="yellow")
    failed = sum(e.status == "failed" for e in entries)
    held = " (held back: no grade in the LMS files)" if failed and not args.zeros else ""
    without = ""
    if several:
        without = (f", {len(several)} student{'s' if len(several) > 1 else ''} with several entries "
                   f"{'have' if len(several) > 1 else 'has'} no grade")
    say(console, f"{len(submissions)} submissions: {len(todo)} graded now, {len(submissions) - len(todo)} "
                 f"unchanged since the last run, {failed} could not be graded{held}{without} (see "
                 f"{out / 'failures.jsonl'}); grades in {out / 'grades.csv'} (and in the import formats of "
                 f"Canvas and Moodle beside it), class summary in {out / 'summary.html'}")
    return 0
