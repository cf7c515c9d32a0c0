"""Choosing each engine's text among a submission's files: a file named for it, then a notebook,
then any .py file defining it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..parts import engines, listed
from .ipynb import split_notebook
from .python import engines_defined
from .reader import Item, Reader
from .submissions import Submission
from .zips import expand_zips

# `value.py`, `Value.py`, and an LMS resubmission or a browser's copy: `value-1.py`, `value (2).py`
# ({names}: the engines of the grading.toml in use).
ENGINE_FILE = r"^({names})(?:-(\d+)| \((\d+)\))?\.py$"


@dataclass(order=True)
class Candidate:
    """A text that could be an engine file; the smallest rank wins."""

    rank: tuple
    engine: str = field(compare=False)
    text: str = field(compare=False)
    origin: str = field(compare=False)


def resolve(reader: Reader, items: list[Item]) -> None:
    """Choose each engine's text: a file named for it, then a notebook, then any .py defining it."""
    submission = reader.submission
    candidates = [c for item in expand_zips(reader, items) for c in candidates_in(item, submission)]
    for engine in engines():
        found = sorted(c for c in candidates if c.engine == engine)
        if found:
            choose(engine, found, submission)
        elif candidates:
            submission.note(f"{engine}.py: not found in the submission; its parts score zero")
    if not candidates and not submission.notes:
        files = listed([f"{engine}.py" for engine in engines()], "or")
        classes = listed([engine.capitalize() for engine in engines()], "or")  # Value for value.py
        submission.note(f"no {files}, and no notebook or .py file defining {classes}")


def engine_file(name: str) -> re.Match | None:
    """A file named for an engine of the grading.toml in use: its name, and its revision if any."""
    return re.match(ENGINE_FILE.format(names="|".join(map(re.escape, engines()))), name, re.IGNORECASE)


def candidates_in(item: Item, submission: Submission) -> list[Candidate]:
    """The engine texts one file offers: itself if named for an engine, a notebook's modules, or
    the engines a .py file defines."""
    depth, where = len(item.path.parts), str(item.path)
    suffix = item.path.suffix.lower()
    if suffix not in (".py", ".ipynb"):
        return []
    text = decode(item, submission)
    if text is None:
        return []
    named = engine_file(item.path.name)
    if named:
        revision = int(named[2] or named[3] or 0)
        return [Candidate((0, depth, -revision, where), named[1].lower(), text, where)]
    if suffix == ".ipynb":
        return [Candidate((1, depth, 0, where), engine, module, where)
                for engine, module in split_notebook(text, where, submission).items()]
    return [Candidate((2, depth, 0, where), engine, text, where) for engine in sorted(engines_defined(text))]


def choose(engine: str, found: list[Candidate], submission: Submission) -> None:
    """Take the best of an engine's candidates, and say what was passed over and why."""
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
