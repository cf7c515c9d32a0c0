"""Reading one submission's files within its limits: regular files only, never through a link."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..escape import clean
from ..safe_files import UnreadableFile, read_regular
from .submissions import (
    MAX_DEPTH,
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_NOTEBOOK_BYTES,
    MAX_SUBMISSION_BYTES,
    Submission,
)

SKIPPED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}
READ = (".py", ".ipynb", ".zip")  # the files intake opens; every other file is passed over


@dataclass
class Item:
    """One file found inside a submission: its path there, and its bytes."""

    path: PurePosixPath
    data: bytes


def skipped(path: PurePosixPath) -> bool:
    """Hidden files and folders, and the debris of Macs, Python and Jupyter. (A zip's `../` is
    no hidden folder: member names are never used as paths.)"""
    return any(part in SKIPPED_PARTS or (part.startswith(".") and part != "..") for part in path.parts)


def limit_for(path: PurePosixPath) -> int:
    """The most bytes intake reads of a file with this name: a zip, a notebook, a .py file."""
    limits = {".zip": MAX_SUBMISSION_BYTES, ".ipynb": MAX_NOTEBOOK_BYTES}
    return limits.get(path.suffix.lower(), MAX_FILE_BYTES)


class Reader:
    """Reads one submission's files, within its limits; what it cannot read becomes a note."""

    def __init__(self, submission: Submission) -> None:
        self.submission = submission
        self.left = MAX_SUBMISSION_BYTES  # bytes this submission may still bring in
        self.files = 0
        self.full = False

    def note(self, text: str) -> None:
        """Add a note to the submission being read."""
        self.submission.note(text)

    def files_in(self, folder: Path, source: str) -> list[tuple[Path, PurePosixPath]]:
        """The files in a submission's folder that intake opens, by their path inside it; links
        are not followed, and a folder that cannot be listed is a note."""
        found: list[tuple[Path, PurePosixPath]] = []
        looked = 0
        top = PurePosixPath()
        pending = [(folder, top)]
        while pending:
            directory, inside = pending.pop()
            entries = self.scanned(directory, source if inside == top else f"{source}/{inside}")
            if entries is None:
                continue
            if inside == top and not entries:
                self.note(f"{source}: the folder is empty")
            for entry in entries:
                looked += 1
                if looked > MAX_ENTRIES:
                    self.note(f"{source}: more than {MAX_ENTRIES} files and folders; only the first "
                              "were looked at")
                    return sorted(found, key=lambda f: f[1])
                self.sort_entry(entry, inside / clean(entry.name), found, pending)
        return sorted(found, key=lambda f: f[1])

    def scanned(self, directory: Path, where: str) -> list[os.DirEntry] | None:
        """The entries of one folder by name; None, and a note, when it cannot be listed."""
        try:
            with os.scandir(directory) as scan:
                return sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            self.note(f"{where}: the folder cannot be read ({error.strerror}); nothing in it was graded")
            return None

    def sort_entry(self, entry: os.DirEntry, relative: PurePosixPath, found: list, pending: list) -> None:
        """Put one entry of a folder where it belongs: a file to open, a folder to look into, a note."""
        if skipped(relative):
            return
        if entry.is_symlink():
            if relative.suffix.lower() in READ or entry.is_dir():
                self.note(f"{relative}: a symbolic link; links are not followed, so submit the file itself")
        elif entry.is_dir(follow_symlinks=False):
            if len(relative.parts) > MAX_DEPTH:
                self.note(f"{relative}: folders nested more than {MAX_DEPTH} deep; not read")
            else:
                pending.append((Path(entry.path), relative))
        elif relative.suffix.lower() in READ:
            found.append((Path(entry.path), relative))

    def read(self, path: Path, inside: PurePosixPath) -> Item | None:
        """A file's bytes (a FIFO, device or link is a note), unless the submission is over its limits."""
        if self.files >= MAX_FILES or self.left <= 0:
            if not self.full:
                self.full = True
                self.note(f"{inside}: the submission holds more than {MAX_FILES} files or "
                          f"{MAX_SUBMISSION_BYTES // 2**20} MB; this file and the rest were not read")
            return None
        try:
            data = read_regular(path, limit_for(inside))
        except UnreadableFile as error:
            self.note(f"{inside}: {str(error).removeprefix(f'{path.name}: ')}")
            return None
        self.files += 1
        self.left -= len(data)
        return Item(inside, data)
