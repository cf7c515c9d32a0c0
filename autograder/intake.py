"""Intake: find the gradable files of every submission, in whatever shape the class came.

`collect` turns a class folder (folders, zips, notebooks, .py files, a Canvas or Moodle
download grouped by student, an nbgrader `submitted/` tree) into one `Submission` per entry:
the normalised text of its engine files, and notes on what was chosen, rejected or missing.
It only reads; `stage` writes a submission's files into a folder of the grader's own. No
entry can stop the others: every read is bounded and never follows a link, and an entry that
still cannot be read is a Submission with no files and the reason.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import re
import unicodedata
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .escape import SURROGATE, clean, printable
from .parts import ENGINES
from .submission import UnreadableFile, read_regular

# The names a module must define to be taken for an engine file.
DEFINES = {"Value": "value", "unbroadcast": "tensor", "Tensor": "tensor", "cross_entropy": "tensor",
           "Dual": "dual"}
# `value.py`, `Value.py`, and an LMS resubmission or a browser's copy: `value-1.py`, `value (2).py`.
ENGINE_FILE = re.compile(r"^(value|tensor|dual)(?:-(\d+)| \((\d+)\))?\.py$", re.IGNORECASE)
# Canvas's "Download Submissions" (get_filename in canvas-lms's lib/content_zipper.rb): the
# sortable name lower-cased with every character that is not a letter, digit or `_` of any
# script removed, `LATE` for a late one, the user id, the file's id, then the file as the
# student named it. Under anonymous grading `anon_<id>` stands for the name and the user id.
CANVAS_FILE = re.compile(r"^(?P<name>\w+?)_(?:LATE_)?(?P<id>\d+)_\d+_(?P<file>.+)$", re.IGNORECASE)
CANVAS_ANONYMOUS = re.compile(r"^(?:LATE_)?(?P<name>anon)_(?P<id>[A-Za-z0-9]+)_\d+_(?P<file>.+)$",
                              re.IGNORECASE)
# Moodle's "Download all submissions" (download_submissions in mod/assign/locallib.php): the full
# name (its `_` made spaces; "Participant" under blind marking), the participant id, the
# plugin, and a folder (Moodle 3.1 on) or the file's own name after it.
MOODLE_ENTRY = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+(?:_(?P<file>.*))?$")
FUTURE_IMPORT = re.compile(r"^from __future__ import .+$", re.MULTILINE)
MOVED_UP = r"# \g<0>  (moved to the top)"
SKIPPED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}
READ = (".py", ".ipynb", ".zip")  # the files intake opens; every other file is passed over
MAX_FILE_BYTES = 2 * 1024 * 1024  # a .py file
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024  # a notebook, whose outputs (plots) are thrown away
MAX_SUBMISSION_BYTES = 50 * 1024 * 1024  # a zip, what it unpacks to, and all of one submission
MAX_FILES = 2000  # files read from one submission
MAX_ENTRIES = 20000  # names looked at in one submission's folders
MAX_DEPTH = 12  # folders inside a submission
MAX_NOTES = 40
MAX_ID = 80  # characters of a student id
# What ast.parse raises for source it cannot turn into a tree; only the first is a real syntax error.
UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


class IntakeError(Exception):
    """The class folder itself cannot be read (not one submission: all of them)."""


@dataclass
class Submission:
    """One entry of the class: who it is, where it came from, and its normalised files."""

    source: str
    student: str
    format: str
    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # From an LMS download: "canvas" or "moodle", the id it gave the student (Canvas's user id,
    # Moodle's participant id) and the name it wrote ("smithjane", "Jane Smith").
    lms: str = ""
    lms_id: str = ""
    lms_name: str = ""
    resubmissions: list[str] = field(default_factory=list)  # an earlier upload left out, a line each

    def note(self, text: str) -> None:
        """Add a note for the TA and the student; past MAX_NOTES, one line says the rest are left out."""
        if len(self.notes) < MAX_NOTES:
            self.notes.append(clean(text))
        elif len(self.notes) == MAX_NOTES:
            self.notes.append(f"more than {MAX_NOTES} notes; the rest are left out")

    @property
    def reason(self) -> str:
        """Why nothing can be graded, or "" when something can."""
        if self.files:
            return ""
        return "; ".join(self.notes) or "no value.py, tensor.py or dual.py was found"

    @property
    def content_hash(self) -> str:
        """SHA-256 of everything intake found for the entry; a new hash means a new grading."""
        text = json.dumps({"files": self.files, "notes": self.notes, "student": self.student, "lms": self.lms,
                           "lms_id": self.lms_id, "lms_name": self.lms_name}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Item:
    """One file found inside a submission: its path there, and its bytes."""

    path: PurePosixPath
    data: bytes


# -- the class folder --------------------------------------------------------------------------

def collect(folder: Path, ignore: Path | None = None, assignment: str | None = None) -> list[Submission]:
    """Every submission in a class folder, in a stable order; `ignore` (the grader's own output
    folder, should it sit inside the class folder) is not one. In an nbgrader course, only
    `submitted/<student>/<assignment>/` is read where an assignment is named. Raises IntakeError
    when the folder itself cannot be read."""
    if not folder.is_dir():
        raise IntakeError(f"{folder}: not a folder; point `autograder bulk` at the folder holding "
                          "the submissions (unzip an LMS download first)")
    submitted = folder / "submitted"
    if submitted.is_dir() and not submitted.is_symlink():
        return unique([guarded(lambda e=entry: read_student(e, assignment), f"submitted/{clean(entry.name)}",
                               entry.name, "nbgrader") for entry in listing(submitted)])
    ignored = ignore.name if ignore is not None and same_folder(ignore.parent, folder) else None
    submissions, groups = [], {}
    for entry in listing(folder):
        if entry.name == ignored:
            continue
        found = lms_entry(entry)
        if found:
            groups.setdefault(found[:3], []).append((entry, found[3]))
        else:
            submissions.append(guarded(lambda e=entry: read_entry(e), clean(entry.name), entry.name,
                                       "unknown"))
    for (lms, name, lms_id), entries in groups.items():
        # The id the LMS gave is part of the student's: two students it names alike stay two.
        student = student_id(f"{name}_{lms_id}")
        source = f"{clean(name)}_{clean(lms_id)}_*"
        submissions.append(guarded(lambda k=(lms, name, lms_id), e=entries, s=source, t=student:
                                   read_lms(k, e, s, t), source, student, lms))
    return unique(submissions)


def lms_entry(entry: Path) -> tuple[str, str, str, str | None] | None:
    """(lms, name, id, the file's own name or None for a folder) of an entry an LMS download
    named, or None. Names are compared in NFC: a Mac writes `ü` as `u` and a combining mark."""
    name = unicodedata.normalize("NFC", entry.name)
    moodle = MOODLE_ENTRY.match(name)
    if moodle:
        if entry.is_dir() and not entry.is_symlink():
            return "moodle", moodle["name"].replace("_", " "), moodle["id"], None
        if moodle["file"] and entry.is_file():
            return "moodle", moodle["name"].replace("_", " "), moodle["id"], moodle["file"]
        return None
    canvas = CANVAS_ANONYMOUS.match(name) or CANVAS_FILE.match(name)
    if canvas and entry.is_file():
        return "canvas", canvas["name"].lower(), canvas["id"], canvas["file"]
    return None


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
    return submission


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


def student_id(name: str) -> str:
    """A name safe as a file name and a CSV cell: letters of any script, digits, `.`, `_` and `-`.
    A name with nothing safe in it, or a very long one, keeps a hash of itself, so that two
    students never share an id by accident."""
    name = unicodedata.normalize("NFC", clean(name))
    safe = re.sub(r"[^\w.-]+", "_", name).strip("._")
    if not safe or len(safe) > MAX_ID:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        safe = f"{safe[:MAX_ID - 9].rstrip('._') or 'unnamed'}-{digest}"
    return safe


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
    reader.resolve([item for item in [reader.read(path, PurePosixPath(name))] if item])
    return submission


def read_lms(key: tuple[str, str, str], entries: list[tuple[Path, str | None]], source: str,
             student: str) -> Submission:
    """One student of an LMS download: their files (by the names they gave them) and folders."""
    lms, name, lms_id = key
    submission = Submission(source, student, lms, lms=lms, lms_id=lms_id, lms_name=clean(name))
    reader = Reader(submission)
    items = []
    for path, own_name in entries:
        if own_name is None:  # a folder of Moodle's: its files, by their path inside it
            items += [reader.read(file, inside) for file, inside in reader.files_in(path, clean(path.name))]
        else:
            items.append(reader.read(path, PurePosixPath(clean(own_name))))
    reader.resolve([item for item in items if item])
    return submission


def read_folder(folder: Path, source: str, kind: str) -> Submission:
    """The submission of one folder, every file in it (down to MAX_DEPTH) looked at."""
    submission = Submission(source, student_id(folder.name), kind)
    if folder.is_symlink() or not folder.is_dir():
        submission.note(f"{source}: not a folder; each student's submission should be a folder here")
        return submission
    reader = Reader(submission)
    found = reader.files_in(folder, source)
    reader.resolve([item for item in (reader.read(path, inside) for path, inside in found) if item])
    return submission


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
        found, looked = [], 0
        top = PurePosixPath()
        pending = [(folder, top)]
        while pending:
            directory, inside = pending.pop()
            try:
                with os.scandir(directory) as scan:
                    entries = sorted(scan, key=lambda entry: entry.name)
            except OSError as error:
                where = source if inside == top else f"{source}/{inside}"
                self.note(f"{where}: the folder cannot be read ({error.strerror}); nothing in it was graded")
                continue
            if inside == top and not entries:
                self.note(f"{source}: the folder is empty")
            for entry in entries:
                looked += 1
                if looked > MAX_ENTRIES:
                    self.note(f"{source}: more than {MAX_ENTRIES} files and folders; only the first "
                              "were looked at")
                    return sorted(found, key=lambda f: f[1])
                relative = inside / clean(entry.name)
                if skipped(relative):
                    continue
                if entry.is_symlink():
                    if relative.suffix.lower() in READ or entry.is_dir():
                        self.note(f"{relative}: a symbolic link; links are not followed, so submit "
                                  "the file itself")
                elif entry.is_dir(follow_symlinks=False):
                    if len(relative.parts) > MAX_DEPTH:
                        self.note(f"{relative}: folders nested more than {MAX_DEPTH} deep; not read")
                    else:
                        pending.append((Path(entry.path), relative))
                elif relative.suffix.lower() in READ:
                    found.append((Path(entry.path), relative))
        return sorted(found, key=lambda f: f[1])

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

    def expand_zips(self, items: list[Item]) -> list[Item]:
        """Replace each zip by the files inside it (one level: a zip in a zip is not opened)."""
        expanded = []
        for item in items:
            if item.path.suffix.lower() == ".zip":
                expanded += self.unzip(item)
            else:
                expanded.append(item)
        return expanded

    def unzip(self, item: Item) -> list[Item]:
        """The .py files and notebooks in the zip `item`, within the limits; the rest is a note."""
        try:
            archive = zipfile.ZipFile(io.BytesIO(item.data))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as error:
            self.note(f"{item.path}: not a readable zip file ({error}); ask for a new copy")
            return []
        with archive:
            named = [(m, PurePosixPath(clean(m.filename.replace("\\", "/")))) for m in archive.infolist()]
            members = [(m, inside) for m, inside in named if not m.is_dir() and not skipped(inside)
                       and inside.suffix.lower() in (".py", ".ipynb")]
            if sum(m.file_size for m, _ in members) > MAX_SUBMISSION_BYTES or len(members) > MAX_FILES:
                self.note(f"{item.path}: its .py files and notebooks unpack to more than "
                          f"{MAX_SUBMISSION_BYTES // 2**20} MB or {MAX_FILES} files; not opened")
                return []
            found = []
            for member, inside in members:
                if member.file_size > limit_for(inside):
                    self.note(f"{item.path}: {inside} unpacks to more than {limit_for(inside) // 2**20} MB; "
                              "not read")
                    continue
                try:
                    # The size the archive declares bounds what is read: zipfile stops there.
                    found.append(Item(inside, archive.read(member)))
                except Exception as error:  # noqa: BLE001 - bad CRC, zlib, encryption, unknown method
                    self.note(f"{item.path}: {inside} cannot be unpacked ({type(error).__name__}: "
                              f"{str(error)[:200]}); ask for a new copy")
            inner = sorted(str(inside) for m, inside in named if not m.is_dir() and not skipped(inside)
                           and inside.suffix.lower() == ".zip")
            if not members and inner:
                self.note(f"{item.path}: holds {', '.join(inner[:3])}, a zip inside the zip, which is not "
                          "opened; upload the .py files themselves, or the inner zip alone")
            elif not members:
                self.note(f"{item.path}: the zip holds no .py file or notebook")
            return found

    # -- finding the engine files --------------------------------------------------------------

    def resolve(self, items: list[Item]) -> None:
        """Choose each engine's text: a file named for it, then a notebook, then any .py defining it."""
        submission = self.submission
        candidates: list[Candidate] = []
        for item in self.expand_zips(items):
            depth, where = len(item.path.parts), str(item.path)
            suffix = item.path.suffix.lower()
            named = ENGINE_FILE.match(item.path.name)
            if suffix not in (".py", ".ipynb"):
                continue
            text = decode(item, submission)
            if text is None:
                continue
            if named:
                revision = int(named[2] or named[3] or 0)
                candidates.append(Candidate((0, depth, -revision, where), named[1].lower(), text, where))
            elif suffix == ".ipynb":
                for engine, module in split_notebook(text, where, submission).items():
                    candidates.append(Candidate((1, depth, 0, where), engine, module, where))
            else:
                for engine in sorted(engines_defined(text)):
                    candidates.append(Candidate((2, depth, 0, where), engine, text, where))
        for engine in ENGINES:
            found = sorted(c for c in candidates if c.engine == engine)
            if not found:
                if candidates:
                    submission.note(f"{engine}.py: not found in the submission; its parts score zero")
                continue
            submission.files[engine] = found[0].text
            earlier = sorted({c.origin for c in found[1:] if c.rank[:2] == found[0].rank[:2]
                              and c.rank[2] > found[0].rank[2]})
            if earlier:  # an LMS's (or a browser's) numbered copy: the newest upload counts
                line = (f"{engine}.py: {found[0].origin} counts, the newest upload; the earlier "
                        f"{', '.join(earlier)} is not graded")
                submission.note(line)
                submission.resubmissions.append(line)
            elif found[0].origin != f"{engine}.py":
                submission.note(f"{engine}.py: taken from {found[0].origin}")
            others = sorted({c.origin for c in found[1:]} - {found[0].origin} - set(earlier))
            if others:
                submission.note(f"{engine}.py: also found in {', '.join(others)} (not used)")
        if not candidates and not submission.notes:
            submission.note("no value.py, tensor.py or dual.py, and no notebook or .py file "
                            "defining Value, Tensor or Dual")


@dataclass(order=True)
class Candidate:
    """A text that could be an engine file; the smallest rank wins."""

    rank: tuple
    engine: str = field(compare=False)
    text: str = field(compare=False)
    origin: str = field(compare=False)


def decode(item: Item, submission: Submission) -> str | None:
    """UTF-8 text with a BOM dropped and every line ending made `\\n`; None for binary data."""
    if b"\0" in item.data:
        submission.note(f"{item.path}: not a text file (it holds binary data); submit the source file itself")
        return None
    try:
        text = item.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = item.data.decode("cp1252", errors="replace")
        submission.note(f"{item.path}: not UTF-8; read as Windows-1252")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parsed(source: str) -> ast.Module | None:
    """The module's tree, or None when Python's parser cannot make one (a syntax error, a null
    byte, or an expression nested too deep for it, such as a sum of 5000 terms)."""
    try:
        return ast.parse(source)
    except UNPARSABLE:
        return None


def engines_defined(source: str) -> set[str]:
    """The engines whose names a module defines at its top level."""
    tree = parsed(source)
    if tree is None:
        # Still route it by its definitions, so the student sees the syntax error where it belongs.
        names = re.findall(r"^(?:class|def)\s+(\w+)", source, re.MULTILINE)
        return {DEFINES[n] for n in names if n in DEFINES}
    return {DEFINES[n] for n in top_level_names(tree) if n in DEFINES}


def top_level_names(tree: ast.Module) -> set[str]:
    """The names a module's top level defines: classes, functions, assigned names."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def code_cells(text: str, where: str, submission: Submission) -> list[tuple[int, str]] | None:
    """(number, source) of a notebook's code cells; None, and a note, for a notebook that cannot
    be read. Read from its JSON: a cell that is not what the format describes is a note, never
    an error."""
    notebook = notebook_json(text)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        problem = "not JSON" if notebook is None else "no list of cells"
        submission.note(f"{where}: not a readable notebook ({problem}); save it again from Jupyter")
        return None
    found = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            submission.note(f"{where}: cell {number} has a source that is not text; left out")
            continue
        if source.strip() and not nbgrader_check(cell):
            if SURROGATE.search(source):
                submission.note(f"{where}: cell {number} holds characters that are not valid Unicode; "
                                "each was replaced by U+FFFD")
            found.append((number, SURROGATE.sub("\ufffd", source)))
    return found


def notebook_json(text: str) -> object:
    """A notebook as nbformat 4 describes it; None when the text is not JSON. Notebooks of
    format 3 and older are converted by nbformat (imported only then: it takes most of a second)."""
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(notebook, dict) and notebook.get("nbformat") in (1, 2, 3):
        import nbformat

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return nbformat.convert(nbformat.from_dict(notebook), 4)
        except Exception:  # noqa: BLE001 - an old notebook that nbformat cannot convert
            return {}
    return notebook


def split_notebook(text: str, where: str, submission: Submission) -> dict[str, str]:
    """One module per engine from a notebook's code cells, in notebook order: a cell goes to the
    engines whose names it defines, else to those it uses (a demo, a method attached to the
    class), else, mentioning none (imports, helpers), to every module."""
    cells = code_cells(text, where, submission)
    if cells is None:
        return {}
    if not cells:
        submission.note(f"{where}: the notebook has no code")
        return {}
    routed = []
    for number, source in cells:
        if source.lstrip().startswith("%%"):
            submission.note(f"{where}: cell {number} is a cell magic, not Python; left out")
            continue
        source = python_of(source)
        engines = cell_engines(source)
        if engines is None:
            submission.note(f"{where}: cell {number} is not valid Python (or is nested too deep for "
                            "Python's parser) and defines no engine; left out")
            continue
        routed.append((number, source, engines))
    defined = {e for _, source, _ in routed for e in engines_defined(source)}
    modules = {}
    label = printable(where)  # the module's first line is a comment: no line break may end it early
    for engine in sorted(defined):
        cells = [(n, s) for n, s, engines in routed if not engines or engine in engines]
        # A cell may start with a __future__ import; a module may only do so at its very top.
        futures = sorted({line for _, s in cells for line in FUTURE_IMPORT.findall(s)})
        cells_text = "\n\n".join(f"# cell {n}\n" + FUTURE_IMPORT.sub(MOVED_UP, s) for n, s in cells)
        header = f"# {engine}.py, made from the code cells {', '.join(str(n) for n, _ in cells)} of {label}\n"
        modules[engine] = header + "".join(line + "\n" for line in futures) + cells_text + "\n"
    return modules


def nbgrader_check(cell: dict) -> bool:
    """An nbgrader grading cell: it grades the notebook, it is no part of the student's module."""
    metadata = cell.get("metadata")
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return isinstance(meta, dict) and bool(meta.get("grade")) and not meta.get("solution")


def python_of(cell: str) -> str:
    """A cell's source with IPython's magics and shell lines commented out, line numbers kept."""
    lines = cell.replace("\r\n", "\n").split("\n")
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def cell_engines(source: str) -> set[str] | None:
    """The engines a cell belongs to; empty for every module; None when it cannot be placed."""
    defined = engines_defined(source)
    if defined:
        return defined
    tree = parsed(source)
    if tree is None:
        return None
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return {DEFINES[name] for name in used if name in DEFINES}


def stage(submission: Submission, folder: Path) -> None:
    """Write the submission's engine files, and nothing else, into a fresh folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.py"):
        old.unlink()
    for engine, text in submission.files.items():
        (folder / f"{engine}.py").write_text(text, encoding="utf-8")
