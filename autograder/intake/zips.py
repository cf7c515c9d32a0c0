"""The .py files and notebooks inside a submission's zip, read within its limits, and the names
of a zip's members as the tool that made it wrote them."""

from __future__ import annotations

import io
import struct
import unicodedata
import zipfile
import zlib
from pathlib import PurePosixPath

from ..escape import clean
from .reader import Item, Reader, limit_for, skipped
from .submissions import MAX_FILES, MAX_SUBMISSION_BYTES


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
    try:
        archive = zipfile.ZipFile(io.BytesIO(item.data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as error:
        reader.note(f"{item.path}: not a readable zip file ({error}); ask for a new copy")
        return []
    with archive:
        named = [(m, member_path(m)) for m in archive.infolist()]
        members = [(m, inside) for m, inside in named if not m.is_dir() and not skipped(inside)
                   and inside.suffix.lower() in (".py", ".ipynb")]
        if sum(m.file_size for m, _ in members) > MAX_SUBMISSION_BYTES or len(members) > MAX_FILES:
            reader.note(f"{item.path}: its .py files and notebooks unpack to more than "
                        f"{MAX_SUBMISSION_BYTES // 2**20} MB or {MAX_FILES} files; not opened")
            return []
        found = [unpacked for member, inside in members
                 if (unpacked := unpack(reader, archive, item, member, inside)) is not None]
        inner = sorted(str(inside) for m, inside in named if not m.is_dir() and not skipped(inside)
                       and inside.suffix.lower() == ".zip")
        if not members and inner:
            reader.note(f"{item.path}: holds {', '.join(inner[:3])}, a zip inside the zip, which is not "
                        "opened; upload the .py files themselves, or the inner zip alone")
        elif not members:
            reader.note(f"{item.path}: the zip holds no .py file or notebook")
        return found


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
