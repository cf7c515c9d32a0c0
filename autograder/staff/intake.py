"""Intake: find the gradable files of every submission, in whatever shape the class came.

A class folder holds one entry per submission: a folder, a zip, a notebook or a single .py
file; or an LMS flat download (`smithjane_12345_67890_value.py`, grouped by student); or it
is an nbgrader course folder whose `submitted/<student>/<assignment>/` tree holds them. Every
entry becomes one `Submission`, with the normalised text of its engine files (`value.py`,
`tensor.py`, `dual.py`) and notes saying what was chosen, rejected or missing. Intake only
reads the input; `stage` writes a submission's files into a folder of the grader's own.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

ENGINES = ("value", "tensor", "dual")
# The names a module must define to be taken for an engine file.
DEFINES = {"Value": "value", "unbroadcast": "tensor", "Tensor": "tensor", "cross_entropy": "tensor",
           "Dual": "dual"}
# `value.py`, `Value.py`, and an LMS resubmission or a browser's copy: `value-1.py`, `value (2).py`.
ENGINE_FILE = re.compile(r"^(value|tensor|dual)(?:-(\d+)| \((\d+)\))?\.py$", re.IGNORECASE)
# Canvas: name, an optional LATE, user id, submission id, then the file as the student named it.
LMS_FILE = re.compile(r"^(?P<student>[a-z]+)_(?:late_)?(?P<user>\d+)_(?P<attempt>\d+)_(?P<file>.+)$",
                      re.IGNORECASE)
FUTURE_IMPORT = re.compile(r"^from __future__ import .+$", re.MULTILINE)
MOVED_UP = r"# \g<0>  (moved to the top)"
SKIPPED_PARTS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints"}
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_SUBMISSION_BYTES = 50 * 1024 * 1024
MAX_FILES = 2000


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

    @property
    def reason(self) -> str:
        """Why nothing can be graded, or "" when something can."""
        if self.files:
            return ""
        return "; ".join(self.notes) or "no value.py, tensor.py or dual.py was found"

    @property
    def content_hash(self) -> str:
        text = json.dumps({"files": self.files, "notes": self.notes}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Item:
    """One file found inside a submission: its path there, and its bytes."""

    path: PurePosixPath
    data: bytes


# -- the class folder --------------------------------------------------------------------------

def collect(folder: Path, ignore: Path | None = None) -> list[Submission]:
    """Every submission in a class folder, in a stable order; `ignore` (the grader's own output
    folder, should it sit inside the class folder) is not one."""
    if not folder.is_dir():
        raise IntakeError(f"{folder}: not a folder; point `autograder bulk` at the folder holding "
                          "the submissions (unzip an LMS download first)")
    submitted = folder / "submitted"
    if submitted.is_dir():
        return [read_folder(student, f"submitted/{student.name}", "nbgrader")
                for student in visible_entries(submitted)]
    submissions, lms_groups = [], {}
    for entry in visible_entries(folder):
        if ignore is not None and entry.resolve() == ignore.resolve():
            continue
        match = LMS_FILE.match(entry.name)
        if entry.is_file() and match:
            lms_groups.setdefault(match["student"].lower(), []).append(entry)
        elif entry.is_dir():
            submissions.append(read_folder(entry, entry.name, "folder"))
        else:
            submissions.append(read_entry(entry))
    for student, entries in lms_groups.items():
        submission = Submission(f"{student}_*", student_id(student), "lms")
        items = [read_file(e, LMS_FILE.match(e.name)["file"], submission) for e in entries]
        resolve(submission, expand_zips([i for i in items if i], submission))
        submissions.append(submission)
    return sorted(submissions, key=lambda s: s.source)


def visible_entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if not p.name.startswith(".") and p.name not in SKIPPED_PARTS and not p.is_symlink())


def student_id(name: str) -> str:
    """A name safe as a file name and a CSV cell."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "unnamed"


def read_folder(folder: Path, source: str, kind: str) -> Submission:
    submission = Submission(source, student_id(folder.name), kind)
    files = [path for path in sorted(folder.rglob("*")) if path.is_file() and not path.is_symlink()
             and not skipped(PurePosixPath(path.relative_to(folder).as_posix()))]
    if not files:
        submission.notes.append(f"{source}: the folder is empty")
    if len(files) > MAX_FILES:
        submission.notes.append(f"{source}: more than {MAX_FILES} files; only the first were read")
    items = [read_file(path, path.relative_to(folder).as_posix(), submission) for path in files[:MAX_FILES]
             if path.suffix.lower() in (".py", ".ipynb", ".zip")]
    resolve(submission, expand_zips([i for i in items if i], submission))
    return submission


def read_file(path: Path, inside: str, submission: Submission) -> Item | None:
    """A file's bytes, unless it is too large to be anyone's source."""
    limit = MAX_SUBMISSION_BYTES if path.suffix.lower() == ".zip" else MAX_FILE_BYTES
    if path.stat().st_size > limit:
        submission.notes.append(f"{inside}: larger than {limit // 2**20} MB; not read")
        return None
    return Item(PurePosixPath(inside), path.read_bytes())


def read_entry(path: Path) -> Submission:
    """A zip, a notebook, a single .py file, or something that is none of these."""
    kind = {".zip": "zip", ".ipynb": "notebook", ".py": "file"}.get(path.suffix.lower())
    submission = Submission(path.name, student_id(path.stem), kind or "unknown")
    if kind is None:
        submission.notes.append(f"{path.name}: not a folder, zip, notebook or .py file; "
                                "nothing in it can be graded")
        return submission
    item = read_file(path, path.name, submission)
    resolve(submission, expand_zips([item] if item else [], submission))
    return submission


def skipped(path: PurePosixPath) -> bool:
    return any(part in SKIPPED_PARTS or part.startswith(".") for part in path.parts)


def expand_zips(items: list[Item], submission: Submission) -> list[Item]:
    """Replace each zip by the files inside it (one level: a zip in a zip is not opened)."""
    expanded = []
    for item in items:
        if item.path.suffix.lower() == ".zip":
            expanded += unzip(item, submission)
        else:
            expanded.append(item)
    return expanded


def unzip(item: Item, submission: Submission) -> list[Item]:
    try:
        with zipfile.ZipFile(io.BytesIO(item.data)) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if sum(m.file_size for m in members) > MAX_SUBMISSION_BYTES or len(members) > MAX_FILES:
                submission.notes.append(f"{item.path}: unpacks to more than "
                                        f"{MAX_SUBMISSION_BYTES // 2**20} MB or {MAX_FILES} files; "
                                        "not opened")
                return []
            found = []
            for member in members:
                inside = PurePosixPath(member.filename.replace("\\", "/"))
                if skipped(inside) or member.file_size > MAX_FILE_BYTES:
                    continue
                found.append(Item(inside, archive.read(member)))
            if not found:
                submission.notes.append(f"{item.path}: the zip holds no files")
            return found
    except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, EOFError, OSError, ValueError) as error:
        submission.notes.append(f"{item.path}: not a readable zip file ({error}); ask for a new copy")
        return []


# -- finding the engine files ------------------------------------------------------------------

@dataclass(order=True)
class Candidate:
    """A text that could be an engine file; the smallest rank wins."""

    rank: tuple
    engine: str = field(compare=False)
    text: str = field(compare=False)
    origin: str = field(compare=False)


def resolve(submission: Submission, items: list[Item]) -> None:
    """Choose each engine's text: a file named for it, then a notebook, then any .py defining it."""
    candidates: list[Candidate] = []
    for item in items:
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
        mine = sorted(c for c in candidates if c.engine == engine)
        if not mine:
            if candidates:
                submission.notes.append(f"{engine}.py: not found in the submission; "
                                        "its parts score zero")
            continue
        submission.files[engine] = mine[0].text
        if mine[0].origin != f"{engine}.py":
            submission.notes.append(f"{engine}.py: taken from {mine[0].origin}")
        others = sorted({c.origin for c in mine[1:]} - {mine[0].origin})
        if others:
            submission.notes.append(f"{engine}.py: also found in {', '.join(others)} (not used)")
    if not candidates and not submission.notes:
        submission.notes.append("no value.py, tensor.py or dual.py, and no notebook or .py file "
                                "defining Value, Tensor or Dual")


def decode(item: Item, submission: Submission) -> str | None:
    """UTF-8 text with a BOM dropped and every line ending made `\\n`; None for binary data."""
    if b"\0" in item.data:
        submission.notes.append(f"{item.path}: not a text file (it holds binary data); "
                                "submit the source file itself")
        return None
    try:
        text = item.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = item.data.decode("cp1252", errors="replace")
        submission.notes.append(f"{item.path}: not UTF-8; read as Windows-1252")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def engines_defined(source: str) -> set[str]:
    """The engines whose names a module defines at its top level."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        # Still route it by its definitions, so the student sees the syntax error where it belongs.
        names = re.findall(r"^(?:class|def)\s+(\w+)", source, re.MULTILINE)
        return {DEFINES[n] for n in names if n in DEFINES}
    return {DEFINES[n] for n in top_level_names(tree) if n in DEFINES}


def top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def split_notebook(text: str, where: str, submission: Submission) -> dict[str, str]:
    """One module per engine from a notebook's code cells.

    A cell that defines an engine's names goes to that engine's module; a cell that only uses
    them (a demo, or a method attached to the class) goes with the engines it uses; a cell that
    mentions no engine (imports, helpers) goes to every module. Notebook order is kept.
    """
    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as error:  # noqa: BLE001 - nbformat raises many kinds for a broken file
        submission.notes.append(f"{where}: not a readable notebook ({type(error).__name__}); "
                                "save it again from Jupyter")
        return {}
    cells = [(number, cell.source) for number, cell in enumerate(notebook.cells, 1)
             if cell.cell_type == "code" and cell.source.strip() and not nbgrader_check(cell)]
    if not cells:
        submission.notes.append(f"{where}: the notebook has no code")
        return {}
    routed = []
    for number, source in cells:
        if source.lstrip().startswith("%%"):
            submission.notes.append(f"{where}: cell {number} is a cell magic, not Python; left out")
            continue
        source = python_of(source)
        engines = cell_engines(source)
        if engines is None:
            submission.notes.append(f"{where}: cell {number} is not valid Python and defines no "
                                    "engine; left out")
            continue
        routed.append((number, source, engines))
    defined = {e for _, source, _ in routed for e in engines_defined(source)}
    modules = {}
    for engine in sorted(defined):
        mine = [(n, s) for n, s, engines in routed if not engines or engine in engines]
        # A cell may start with a __future__ import; a module may only do so at its very top.
        futures = sorted({line for _, s in mine for line in FUTURE_IMPORT.findall(s)})
        cells = "\n\n".join(f"# cell {n}\n" + FUTURE_IMPORT.sub(MOVED_UP, s) for n, s in mine)
        header = f"# {engine}.py, made from the code cells {', '.join(str(n) for n, _ in mine)} of {where}\n"
        modules[engine] = header + "".join(line + "\n" for line in futures) + cells + "\n"
    return modules


def nbgrader_check(cell: nbformat.NotebookNode) -> bool:
    """An nbgrader grading cell: it grades the notebook, it is no part of the student's module."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def python_of(cell: str) -> str:
    """A cell's source with IPython's magics and shell lines commented out, line numbers kept."""
    lines = cell.replace("\r\n", "\n").split("\n")
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def cell_engines(source: str) -> set[str] | None:
    """The engines a cell belongs to; empty for every module; None when it cannot be placed."""
    defined = engines_defined(source)
    if defined:
        return defined
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
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
