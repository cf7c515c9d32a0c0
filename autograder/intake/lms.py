"""Downloads of a learning management system, read by the names their LMS gives each file.

A download may sit in the class folder as its loose files, as a folder of them, or as the zip
the LMS made; each of its students is one entry, whatever else the class folder holds. What
the LMS puts beside the files (Canvas's online text and URL entries, Moodle's online text) is
no file a student uploaded: it is named in a note, never graded.
"""

from __future__ import annotations

import os
import re
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config import load
from ..escape import clean
from ..safe_files import UnreadableFile, open_regular
from .engines import resolve
from .reader import READ, Item, Reader, limit_for, skipped
from .submissions import MAX_FILES, MAX_SUBMISSION_BYTES, Submission
from .zips import member_path, not_read, passed_over, too_large

# Canvas's "Download Submissions" (get_filename, sanitize_user_name and add_upload_submission in
# canvas-lms's lib/content_zipper.rb): the sortable name lower-cased, with every character that is
# not Ruby's [[:word:]] removed (letters, marks, decimal digits and connector punctuation of any
# script: `_` and digits stay), `LATE` for a late one, the user id, the file's id, then the file
# as the student named it. The name may end in `_<digits>`, so the ids are read from the right:
# the last `_<user id>_<file id>_` is the one Canvas wrote. Under anonymous grading
# `anon_<id>` stands for the name and the user id. An online text entry is
# `<name>_<user id>_text.html`, a URL `..._link.html`.
CANVAS_IDS = re.compile(r"_(?=[0-9]+_[0-9]+_.)")  # each place a `_<user id>_<file id>_` may start
CANVAS_ANONYMOUS = re.compile(r"^(?P<late>LATE_)?(?P<name>anon)_(?P<id>[A-Za-z0-9]+)_(?P<file_id>\d+)_"
                              r"(?P<file>.+)$", re.IGNORECASE)
CANVAS_ONLINE = re.compile(r"^(?:(?P<name>.*)_(?P<id>[0-9]+)|(?P<anon_late>LATE_)?"
                           r"(?P<anon>anon)_(?P<anon_id>[A-Za-z0-9]+))_(?P<kind>text|link)\.html$",
                           re.IGNORECASE)
WORD_CATEGORIES = ("Nd", "Pc")  # with every letter (L*) and mark (M*): Onigmo's [[:word:]]
# Moodle's "Download all submissions" (mod_assign\downloader, download_submissions before 4.1):
# the full name (its `_` made spaces; "Participant" under blind marking), the participant id,
# the plugin (`assignsubmission_file`, `assignsubmission_onlinetext`), and a folder (Moodle 3.1
# on; with a last `_` before 4.1) or, with "Download submissions in folders" off, the file's name.
MOODLE_ENTRY = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)"
                          r"(?:_(?P<file>.*))?$")
MAX_CLASH_FILES = 3  # files named in a note on a user id read from two names


def canvas_word(text: str) -> bool:
    """Is every character of `text` one Canvas keeps in a name (Ruby's [[:word:]])?"""
    return all(unicodedata.category(ch)[0] in "LM" or unicodedata.category(ch) in WORD_CATEGORIES
               for ch in text)


def canvas_named(prefix: str) -> tuple[str, bool] | None:
    """The student's name and whether it was late, from what Canvas writes before the user id
    (`<name>` or `<name>_LATE`), or None when that is no name Canvas writes."""
    late = prefix[-5:].upper() == "_LATE"
    name = prefix[:-5] if late else prefix
    return (name.lower(), late) if canvas_word(name) else None


class CanvasFiles:
    """The names Canvas gives uploaded files, read from the right; `match` as a pattern's."""

    def match(self, name: str) -> dict[str, str | None] | None:
        """The parts of a Canvas file's name (name, late, id, file_id, file), or None."""
        for start in reversed([found.start() for found in CANVAS_IDS.finditer(name)]):
            named = canvas_named(name[:start])
            if named is not None:
                user_id, file_id, own_name = name[start + 1:].split("_", 2)
                return {"name": named[0], "late": "LATE_" if named[1] else None, "id": user_id,
                        "file_id": file_id, "file": own_name}
        return None


CANVAS_FILE = CanvasFiles()
ONLINE_TEXT = ("an online text entry, which is no uploaded file: the kit grades files only, so "
               "it is not graded (read it in the LMS)")


@dataclass
class Piece:
    """One thing an LMS download holds for a student: a file, a folder of files, its members in
    the LMS's zip, or an online entry that is not graded."""

    lms: str
    name: str
    lms_id: str
    kind: str  # "file", "folder", "members" (of `archive`, under `prefix`) or "online"
    download_name: str  # its name in the download
    own_name: str = ""  # a file's name as the student gave it
    path: Path | None = None
    archive: zipfile.ZipFile | None = None
    members: list[zipfile.ZipInfo] = field(default_factory=list)
    late: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        """The student: (lms, name, id)."""
        return self.lms, self.name, self.lms_id


def piece_named(name: str, is_dir: bool) -> Piece | None:
    """The piece an LMS download names so, or None for a name no LMS download gives. Names are
    compared in NFC: a Mac writes `ü` as `u` and a combining mark."""
    name = unicodedata.normalize("NFC", name)
    moodle = MOODLE_ENTRY.match(name)
    if moodle:
        who = ("moodle", moodle["name"].replace("_", " "), moodle["id"])
        if moodle["plugin"] != "file":
            return Piece(*who, "online", name)
        if is_dir:
            return Piece(*who, "folder", name)
        return Piece(*who, "file", name, own_name=moodle["file"]) if moodle["file"] else None
    if is_dir:
        return None
    online = CANVAS_ONLINE.match(name)
    if online and online["anon"]:
        return Piece("canvas", "anon", online["anon_id"], "online", name, late=bool(online["anon_late"]))
    named = canvas_named(online["name"]) if online else None
    if named:
        return Piece("canvas", named[0], online["id"], "online", name, late=named[1])
    canvas = anonymous(name) or CANVAS_FILE.match(name)
    if canvas:
        return Piece("canvas", canvas["name"].lower(), canvas["id"], "file", name, own_name=canvas["file"],
                     late=bool(canvas["late"]))
    return None


def anonymous(name: str) -> re.Match | None:
    """The parts of an anonymous Canvas file's name, where only Canvas could have written it: an
    id that is not all digits, or Canvas's own `LATE_` (a student's name is lower-cased), so that
    a student named `anon_4242` is not read as the anonymous student 4242."""
    found = CANVAS_ANONYMOUS.match(name)
    return found if found and (not found["id"].isdigit() or name.startswith("LATE_")) else None


def clashes(keys: list[tuple[str, str, str]], files: dict[tuple[str, str, str], list[str]]) -> dict:
    """For each Canvas student whose user id is read from another name too, the note that names
    both's files and the ids read from them (Canvas gives a user one name: one was misread)."""
    by_id: dict[str, list[tuple[str, str, str]]] = {}
    for key in keys:
        if key[0] == "canvas" and key[1] != "anon":
            by_id.setdefault(key[2], []).append(key)
    notes = {}
    for user_id, named in by_id.items():
        for key in named if len(named) > 1 else []:
            others = "; ".join(f"{', '.join(files[other][:MAX_CLASH_FILES])} (name {other[1]})"
                               for other in named if other != key)
            notes[key] = (f"{', '.join(files[key][:MAX_CLASH_FILES])}: read as Canvas user {user_id}, as "
                          f"{others} is too; Canvas gives a user one name, so one of these file names "
                          f"misleads: find user {user_id} in Canvas's gradebook before importing")
    return notes


def lms_entry(entry: Path) -> Piece | None:
    """The piece of an LMS download that an entry of the class folder is, or None."""
    is_dir = entry.is_dir() and not entry.is_symlink()
    piece = piece_named(entry.name, is_dir)
    if piece is None or (not is_dir and not entry.is_file()):
        return None
    piece.path = entry
    return piece


def download_in(entry: Path) -> list[Piece] | None:
    """The pieces of a whole LMS download that a folder or zip of the class folder holds, or
    None when it is not one: every name in it (hidden ones and a Mac's debris aside) must be
    one an LMS gives, and a Canvas download names two students or more (by name and id, each
    read as Canvas writes it, whether or not two names share an id), or is Canvas's zip
    (`... submissions.zip`), so that one student's zip of `lab_3_1_notes.py` is not taken for one."""
    if entry.is_symlink():
        return None
    if entry.is_dir():
        pieces = folder_download(entry)
    elif entry.suffix.lower() == ".zip" and entry.is_file():
        pieces = zip_download(entry)
    else:
        return None
    if not pieces:
        return None
    canvas_students = {p.key for p in pieces if p.lms == "canvas"}
    if len(canvas_students) == 1 and not entry.name.lower().endswith("submissions.zip") and \
            not any(p.lms == "moodle" for p in pieces):
        return None
    return pieces


def folder_download(folder: Path) -> list[Piece] | None:
    """The pieces of a folder that holds an LMS download and nothing else, or None."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    pieces = []
    for name in names:
        if skipped(PurePosixPath(name)):
            continue
        piece = lms_entry(folder / name)
        if piece is None:
            return None
        pieces.append(piece)
    return pieces


def zip_download(path: Path) -> list[Piece] | None:
    """The pieces of a zip that is an LMS download, or None; the zip stays open while its
    students are read (its members are read one at a time, never the whole zip at once)."""
    try:
        stream = open_regular(path)
    except UnreadableFile:
        return None
    try:
        if too_large(stream, path.name, load().intake.download_members):
            stream.close()
            return None  # read as one entry, whose note says why it is not opened
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError):
        stream.close()
        return None
    members = archive.infolist()
    if len(members) > load().intake.download_members:  # more than its end record said
        archive.close()
        return None
    top: dict[str, list[zipfile.ZipInfo]] = {}
    for member in members:
        inside = member_path(member)
        if inside.parts and not skipped(inside):
            top.setdefault(inside.parts[0], []).append(member)
    pieces = []
    for name, held in sorted(top.items()):
        is_dir = any(len(member_path(m).parts) > 1 or m.is_dir() for m in held)
        piece = piece_named(name, is_dir)
        if piece is None:
            archive.close()
            return None
        piece.kind = "members" if piece.kind in ("file", "folder") else piece.kind
        piece.archive, piece.members = archive, [m for m in held if not m.is_dir()]
        pieces.append(piece)
    if not pieces:
        archive.close()
        return None
    return pieces


def read_lms(key: tuple[str, str, str], pieces: list[Piece], source: str, student: str) -> Submission:
    """One student of an LMS download: their files (by the names they gave them) and folders."""
    lms, name, lms_id = key
    submission = Submission(source, student, lms, lms=lms, lms_id=lms_id, lms_name=clean(name),
                            late=any(p.late for p in pieces))
    if lms == "canvas":
        submission.lms_files = sorted(clean(p.download_name) for p in pieces if p.kind != "online")
    reader = Reader(submission)
    items: list[Item | None] = []
    for piece in pieces:
        if piece.kind == "online":
            submission.note(f"{clean(piece.download_name)}: {ONLINE_TEXT}")
        elif piece.kind == "folder":
            assert piece.path is not None
            found = reader.files_in(piece.path, clean(piece.path.name))
            items += [reader.read(file, inside) for file, inside in found]
        elif piece.kind == "file":
            assert piece.path is not None
            items.append(reader.read(piece.path, PurePosixPath(clean(piece.own_name))))
        else:
            passed = {}
            for member in piece.members:
                parts = member_path(member).parts
                inside = PurePosixPath(*parts[1:]) if len(parts) > 1 else PurePosixPath(clean(piece.own_name))
                if reason := passed_over(inside, READ):
                    passed[str(inside)] = reason
                else:
                    items.append(read_member(reader, piece, member, inside))
            if passed:
                submission.note(not_read(clean(piece.download_name), passed))
    resolve(reader, [item for item in items if item])
    return submission


def read_member(reader: Reader, piece: Piece, member: zipfile.ZipInfo, inside: PurePosixPath) -> Item | None:
    """One file of a student in the LMS's zip, by its path under the student's name (a Moodle
    folder) or the name the student gave it (a Canvas file), within the submission's limits."""
    if reader.files >= MAX_FILES or member.file_size > min(reader.left, limit_for(inside)):
        reader.note(f"{inside}: larger than the submission's limits ({MAX_SUBMISSION_BYTES // 2**20} MB, "
                    f"{MAX_FILES} files); not read")
        return None
    assert piece.archive is not None
    try:
        data = piece.archive.read(member)  # zipfile stops at the size the archive declares
    except Exception as error:  # noqa: BLE001 - bad CRC, zlib, encryption, unknown method
        reader.note(f"{inside}: cannot be unpacked from the download ({type(error).__name__}); "
                    "download it again")
        return None
    reader.files += 1
    reader.left -= len(data)
    return Item(inside, data)
