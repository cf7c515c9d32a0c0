"""Reading a file the course was sent: regular files only, never through a link.

Every path that reads a submission (the worker's copy, bulk intake, Gradescope, Classroom),
a roster or a list of adjustments goes through `read_regular` or `open_regular`: a submitted
`value.py` may be a link to the sealed answers or to `solutions/`, a FIFO that blocks the
reader, or a device.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

MAX_SOURCE_BYTES = 2 * 1024 * 1024


class UnreadableFile(Exception):
    """A submission's file that is not a plain file the grader may read; the message says why."""


def kind_of(mode: int) -> str:
    """What a file of this `st_mode` is, in words: "a symbolic link", "a folder", ..."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes, reached
    without following a link in its last component (checked on the open file); raises
    UnreadableFile."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = None
        if mode is None or stat.S_ISREG(mode):  # gone, or a plain file this user may not read
            raise UnreadableFile(f"{path.name}: cannot be read ({error.strerror})") from None
        raise UnreadableFile(f"{path.name}: {kind_of(mode)}, not a regular file; submit the file "
                             "itself") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(f"{path.name}: {kind_of(info.st_mode)}, not a regular file; submit "
                                 "the file itself")
        if info.st_size > limit:
            raise UnreadableFile(f"{path.name}: larger than {limit // 1024} KB; a source file this "
                                 "large is not anyone's engine")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(descriptor, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise UnreadableFile(f"{path.name}: larger than {limit // 1024} KB")
        return data
    finally:
        os.close(descriptor)


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading, which must be a regular file reached without following a link
    in its last component (checked on the open file); for a file too large to read whole, such
    as an LMS's download of a class. Raises UnreadableFile."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise UnreadableFile(f"{path.name}: cannot be read ({error.strerror}); it must be a file, not "
                             "a link") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise UnreadableFile(f"{path.name}: {kind_of(mode)}, not a regular file")
    return os.fdopen(descriptor, "rb")
