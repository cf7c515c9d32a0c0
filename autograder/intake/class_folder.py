"""The class folder: one Submission per entry (a folder, a zip, a notebook, a .py file, an LMS
download's student or an nbgrader `submitted/` student), each read apart from the others."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from ..escape import clean
from ..safe_files import UnreadableFile, read_regular
from .engines import resolve
from .lms import clashes, download_in, lms_entry, read_lms
from .reader import SKIPPED_PARTS, Reader
from .submissions import IntakeError, Submission, student_id


def collect(folder: Path, ignore: Path | None = None, assignment: str | None = None) -> list[Submission]:
    """Every submission in a class folder, in a stable order; `ignore` (the grader's own output
    folder, should it sit inside the class folder) is not one. In an nbgrader course, only
    `submitted/<student>/<assignment>/` is read where an assignment is named. Raises IntakeError
    when the folder itself cannot be read."""
    if not folder.is_dir():
        raise IntakeError(f"{folder}: not a folder; point `autograder bulk` at the folder holding "
                          "the submissions (an LMS's download, unzipped or not, may sit in it)")
    submitted = folder / "submitted"
    if submitted.is_dir() and not submitted.is_symlink():
        return unique([guarded(lambda e=entry: read_student(e, assignment), f"submitted/{clean(entry.name)}",
                               entry.name, "nbgrader") for entry in listing(submitted)])
    ignored = ignore.name if ignore is not None and same_folder(ignore.parent, folder) else None
    entries = [entry for entry in listing(folder) if entry.name != ignored]
    prefix = classroom_prefix(entries)
    if prefix:
        return unique([guarded(lambda e=entry: read_repository(e, prefix), clean(entry.name),
                               entry.name[len(prefix):], "classroom") for entry in entries])
    submissions, groups = [], {}
    for entry in entries:
        piece = lms_entry(entry)
        pieces = [piece] if piece else download_in(entry)
        if pieces:
            for found in pieces:
                groups.setdefault(found.key, []).append(found)
        else:
            submissions.append(guarded(lambda e=entry: read_entry(e), clean(entry.name), entry.name,
                                       "unknown"))
    notes = clashes(list(groups), {key: sorted(clean(p.download_name) for p in pieces)
                                   for key, pieces in groups.items()})
    try:
        for (lms, name, lms_id), pieces in groups.items():
            # The id the LMS gave is part of the student's: two students it names alike stay two.
            student = student_id(f"{name}_{lms_id}")
            source = f"{clean(name)}_{clean(lms_id)}_*"
            submissions.append(guarded(lambda k=(lms, name, lms_id), p=pieces, s=source, t=student:
                                       read_lms(k, p, s, t), source, student, lms))
            if (lms, name, lms_id) in notes:
                submissions[-1].note(notes[lms, name, lms_id])
    finally:
        for archive in {id(p.archive): p.archive for ps in groups.values() for p in ps if p.archive}.values():
            archive.close()
    return unique(submissions)


def classroom_prefix(entries: list[Path]) -> str:
    """The prefix GitHub Classroom gives every student's repository of an assignment (`hw3-` of
    `hw3-octocat`, as `gh classroom clone student-repos` clones them), or "" when the entries
    are not two or more such repositories."""
    if len(entries) < 2 or not all(entry.is_dir() and not entry.is_symlink() and (entry / ".git").exists()
                                   for entry in entries):
        return ""
    common = os.path.commonprefix([entry.name for entry in entries])
    prefix = common[:common.rfind("-") + 1]
    return prefix if prefix and all(len(entry.name) > len(prefix) for entry in entries) else ""


def read_repository(folder: Path, prefix: str) -> Submission:
    """One student's repository of a GitHub Classroom assignment, known by their GitHub login."""
    submission = read_folder(folder, clean(folder.name), "classroom")
    login = folder.name[len(prefix):]
    submission.student = student_id(login)
    submission.lms, submission.lms_id, submission.lms_name = "classroom", clean(login), clean(login)
    return submission


def read_student(folder: Path, assignment: str | None) -> Submission:
    """One student of an nbgrader course: their folder, or its `assignment` folder alone."""
    source = f"submitted/{clean(folder.name)}"
    if assignment is None:
        return read_folder(folder, source, "nbgrader")
    chosen = folder / assignment
    if not chosen.is_dir() or chosen.is_symlink():
        submission = Submission(source, student_id(folder.name), "nbgrader")
        submission.note(f"{source}: no submission of {assignment} (no folder {clean(assignment)}/)")
        return submission
    submission = read_folder(chosen, source, "nbgrader")
    submission.student = student_id(folder.name)
    submission.submitted_at = nbgrader_timestamp(chosen / "timestamp.txt")
    return submission


def nbgrader_timestamp(path: Path) -> str:
    """When nbgrader's collect says the student handed the assignment in (its timestamp.txt,
    `2026-11-30 10:00:00.123456 UTC`), ISO 8601; "" when there is none it can read."""
    try:
        text = read_regular(path, 200).decode("utf-8").strip()
        when = datetime.fromisoformat(text.removesuffix(" UTC").strip())
    except (UnreadableFile, UnicodeDecodeError, ValueError):
        return ""
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).isoformat(timespec="seconds")


def listing(folder: Path) -> list[Path]:
    """The entries of the class folder, hidden ones and a Mac's debris left out; raises IntakeError."""
    try:
        names = os.listdir(folder)
    except OSError as error:
        raise IntakeError(f"{folder}: cannot be read ({error.strerror}); give the user running "
                          "`autograder bulk` read access to it") from None
    return [folder / name for name in sorted(names) if not name.startswith(".") and name not in SKIPPED_PARTS]


def same_folder(a: Path, b: Path) -> bool:
    """Are `a` and `b` one folder? False when either cannot be resolved."""
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def guarded(read: Callable[[], Submission], source: str, name: str, kind: str) -> Submission:
    """What `read` finds in one entry; if reading it fails, a submission with no files and the reason."""
    try:
        return read()
    except Exception as error:  # noqa: BLE001 - one entry, whatever it holds, never stops the class
        submission = Submission(source, student_id(name), kind)
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        submission.note(f"{source}: could not be read ({detail[:300]}); look at it by hand, or ask "
                        "for a new copy")
        return submission


def unique(submissions: list[Submission]) -> list[Submission]:
    """By source, each source once: two names that read the same (say, an LMS group `ann_*` and a
    folder named so) are told apart, so that neither replaces the other in the gradebook."""
    seen: set[str] = set()
    for submission in sorted(submissions, key=lambda s: s.source):
        base, number = submission.source, 1
        while submission.source in seen:
            number += 1
            submission.source = f"{base} ({number})"
        seen.add(submission.source)
    return sorted(submissions, key=lambda s: s.source)


def read_entry(path: Path) -> Submission:
    """A folder, a zip, a notebook, a single .py file, or something that is none of these."""
    name = clean(path.name)
    if not os.path.lexists(path):
        submission = Submission(name, student_id(path.name), "unknown")
        submission.note(f"{name}: gone while the class folder was read; run the command again")
        return submission
    if path.is_symlink():
        submission = Submission(name, student_id(path.name), "link")
        submission.note(f"{name}: a symbolic link; links are not followed, so put the submission "
                        "itself in the class folder")
        return submission
    if path.is_dir():
        return read_folder(path, name, "folder")
    suffix = path.suffix.lower()
    kind = {".zip": "zip", ".ipynb": "notebook", ".py": "file"}.get(suffix)
    submission = Submission(name, student_id(path.stem), kind or "unknown")
    if kind is None:
        submission.note(f"{name}: not a folder, zip, notebook or .py file; nothing in it can be graded")
        return submission
    reader = Reader(submission)
    resolve(reader, [item for item in [reader.read(path, PurePosixPath(name))] if item])
    return submission


def read_folder(folder: Path, source: str, kind: str) -> Submission:
    """The submission of one folder, every file in it (down to MAX_DEPTH) looked at."""
    submission = Submission(source, student_id(folder.name), kind)
    if folder.is_symlink() or not folder.is_dir():
        submission.note(f"{source}: not a folder; each student's submission should be a folder here")
        return submission
    reader = Reader(submission)
    found = reader.files_in(folder, source)
    resolve(reader, [item for item in (reader.read(path, inside) for path, inside in found) if item])
    return submission


def stage(submission: Submission, folder: Path) -> None:
    """Write the submission's engine files, and nothing else, into a fresh folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.py"):
        old.unlink()
    for engine, text in submission.files.items():
        (folder / f"{engine}.py").write_text(text, encoding="utf-8")
