"""The .py files and notebooks inside a submission's zip, read within its limits, and the names
of a zip's members as the tool that made it wrote them."""

from __future__ import annotations

import io
import os
import struct
import unicodedata
import zipfile
import zlib
from pathlib import PurePosixPath

from ..config import load
from ..escape import clean
from .reader import Item, Reader, limit_for, skipped
from .submissions import MAX_FILES, MAX_SUBMISSION_BYTES

NOT_READ = "not read from the zip"  # begins the note on a zip's members passed over, for the summary
NAMED_PER_REASON = 5  # members named for each reason they were passed over
HIDDEN = "hidden, or left by macOS, Python or Jupyter"
NOT_CODE = "not a .py file or notebook, all the kit grades"
INNER_ZIP = "a zip inside the zip, which is not opened"
# The records at a zip's end that say how large its central directory is (APPNOTE.TXT 4.3.14-16):
# the end of central directory record, zip64's locator just before it, and zip64's record before that.
END = struct.Struct("<4s4H2LH")
END64_LOCATOR = struct.Struct("<4sLQL")
END64 = struct.Struct("<4sQ2H2L4Q")
MAX_COMMENT = 0xFFFF


def expand_zips(reader: Reader, items: list[Item]) -> list[Item]:
    """Replace each zip by the files inside it (one level: a zip in a zip is not opened)."""
    expanded = []
    for item in items:
        if item.path.suffix.lower() == ".zip":
            expanded += unzip(reader, item)
        else:
            expanded.append(item)
    return expanded


def unzip(reader: Reader, item: Item) -> list[Item]:
    """The .py files and notebooks in the zip `item`, within the limits; the rest is a note."""
    stream = io.BytesIO(item.data)
    if refusal := too_large(stream, str(item.path), load().intake.zip_members):
        reader.note(refusal)
        return []
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as error:
        reader.note(f"{item.path}: not a readable zip file ({error}); ask for a new copy")
        return []
    with archive:
        named = [(m, member_path(m)) for m in archive.infolist() if not m.is_dir()]
        passed = {str(inside): reason for _, inside in named
                  if (reason := passed_over(inside, (".py", ".ipynb")))}
        members = [(m, inside) for m, inside in named if str(inside) not in passed]
        if sum(m.file_size for m, _ in members) > MAX_SUBMISSION_BYTES or len(members) > MAX_FILES:
            reader.note(f"{item.path}: its .py files and notebooks unpack to more than "
                        f"{MAX_SUBMISSION_BYTES // 2**20} MB or {MAX_FILES} files; not opened")
            return []
        found = [unpacked for member, inside in members
                 if (unpacked := unpack(reader, archive, item, member, inside)) is not None]
        inner = sorted(name for name, reason in passed.items() if reason == INNER_ZIP)
        if not members and inner:
            reader.note(f"{item.path}: holds {', '.join(inner[:3])}, a zip inside the zip, which is not "
                        "opened; upload the .py files themselves, or the inner zip alone")
            passed = {name: reason for name, reason in passed.items() if reason != INNER_ZIP}
        elif not members:
            reader.note(f"{item.path}: the zip holds no .py file or notebook")
        if passed:
            reader.note(not_read(str(item.path), passed))
        return found


def passed_over(inside: PurePosixPath, read: tuple[str, ...]) -> str:
    """Why a zip's member is not read (it is hidden or debris, it is not one of the suffixes
    `read`), or "" when it is. (A name with `..` is read: member names are never used as paths.)"""
    if skipped(inside):
        return HIDDEN
    suffix = inside.suffix.lower()
    if suffix not in read:
        return INNER_ZIP if suffix == ".zip" else NOT_CODE
    return ""


def not_read(where: str, passed: dict[str, str]) -> str:
    """The note naming a zip's members passed over, a few for each reason, with the reason."""
    reasons: dict[str, list[str]] = {}
    for name, reason in sorted(passed.items()):
        reasons.setdefault(reason, []).append(name)
    said = []
    for reason, names in reasons.items():
        more = f" and {len(names) - NAMED_PER_REASON} more" if len(names) > NAMED_PER_REASON else ""
        said.append(f"{', '.join(names[:NAMED_PER_REASON])}{more} ({reason})")
    return f"{where}: {NOT_READ}: {'; '.join(said)}"


UTF8_FLAG = 0x800  # bit 11 of the general purpose flags: the name is UTF-8 (APPNOTE.TXT 4.4.4)
UNICODE_PATH = 0x7075  # Info-ZIP's Unicode Path extra field (APPNOTE.TXT 4.6.9)


def member_path(member: zipfile.ZipInfo) -> PurePosixPath:
    """A member's path inside the zip, with a Windows tool's backslashes read as folders."""
    return PurePosixPath(clean(member_name(member).replace("\\", "/")))


def member_name(member: zipfile.ZipInfo) -> str:
    """A member's name as the tool that made the zip wrote it, in NFC: the UTF-8 flag (Python
    has decoded it), then Info-ZIP's Unicode Path extra field where its CRC matches the name,
    then the bytes as UTF-8 where they are valid UTF-8 (macOS's Archive Utility, canvas-lms's
    rubyzip), then code page 437 (Windows Explorer, and what Python reads without the flag)."""
    if member.flag_bits & UTF8_FLAG:
        return unicodedata.normalize("NFC", member.filename)
    raw = member.filename.encode("cp437")  # Python read the raw bytes as cp437, one byte a character
    name = unicode_path(member.extra, raw)
    if name is None:
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            name = member.filename
    return unicodedata.normalize("NFC", name)


def unicode_path(extra: bytes, raw: bytes) -> str | None:
    """The UTF-8 name in an Info-ZIP Unicode Path extra field (version 1, then the CRC-32 of the
    name in the header, then the name), or None when there is none or it is for another name."""
    at = 0
    while at + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4:at + 4 + size]
        at += 4 + size
        if tag != UNICODE_PATH or len(body) < 5 or body[0] != 1:
            continue
        if struct.unpack_from("<I", body, 1)[0] != zlib.crc32(raw):
            return None  # the name was changed by a tool that did not update the field
        try:
            return body[5:].decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def unpack(reader: Reader, archive: zipfile.ZipFile, item: Item, member: zipfile.ZipInfo,
           inside: PurePosixPath) -> Item | None:
    """One member's bytes, or None and a note when it is too large or cannot be unpacked."""
    if member.file_size > limit_for(inside):
        reader.note(f"{item.path}: {inside} unpacks to more than {limit_for(inside) // 2**20} MB; not read")
        return None
    try:
        # The size the archive declares bounds what is read: zipfile stops there.
        return Item(inside, archive.read(member))
    except Exception as error:  # noqa: BLE001 - bad CRC, zlib, encryption, unknown method
        reader.note(f"{item.path}: {inside} cannot be unpacked ({type(error).__name__}: "
                    f"{str(error)[:200]}); ask for a new copy")
        return None


def directory_size(stream) -> tuple[int, int] | None:
    """The members and the bytes of a zip's central directory, as its end record says (zip64's
    where it has one, as zipfile reads it: just before its locator, or where the locator points;
    the larger where both are), read from the end of `stream` without listing anything; None
    where there is no end record (zipfile then refuses the file itself)."""
    size = stream.seek(0, os.SEEK_END)
    tail_start = max(0, size - END.size - MAX_COMMENT)
    stream.seek(tail_start)
    tail = stream.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + END.size > len(tail):
        return None
    record = END.unpack_from(tail, at)
    at += tail_start
    locator_at = at - END64_LOCATOR.size
    stream.seek(max(0, locator_at))
    locator = stream.read(END64_LOCATOR.size)
    found = []
    if locator_at >= 0 and locator[:4] == b"PK\x06\x07":
        for where in {locator_at - END64.size, END64_LOCATOR.unpack(locator)[2]}:
            stream.seek(max(0, where))
            record64 = stream.read(END64.size)
            if where >= 0 and len(record64) == END64.size and record64[:4] == b"PK\x06\x06":
                found.append(END64.unpack(record64)[7:9])
    stream.seek(0)
    if found:
        return max(members for members, _ in found), max(directory for _, directory in found)
    return record[4], record[5]


def too_large(stream, where: str, most: int) -> str:
    """Why the zip in `stream` is not listed (its end record says it holds more than `most`
    members, or a central directory past grading.toml's limit), or "" when it may be."""
    found = directory_size(stream)
    if found is None:
        return ""
    members, directory = found
    limit_mb = load().intake.zip_directory_mb
    if members <= most and directory <= limit_mb * 2**20:
        return ""
    return (f"{where}: the zip says it holds {members} members in a directory of {directory / 2**20:.1f} MB, "
            f"more than intake lists ({most} members, {limit_mb} MB: [intake] in grading.toml), so it was "
            "not opened; ask the student for a zip of the .py files and notebooks alone (or, if it is "
            "the LMS's download of the class, unzip it into the class folder)")
