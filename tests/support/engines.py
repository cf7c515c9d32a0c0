"""The held-out corpus: engines written from scratch, in the styles of public repositories.

tests/engines/<engine>/<style>.py is one engine file; tests/engines/manifest.toml says of each
whether it is correct, which parts it must lose and which misconceptions must be named (a
correct one may lose `slow` parts to the time limit alone). None of them is an edit of
solutions/, so they build every given operation their own way: a question that depends on how
the reference builds what the student was given shows here, where the edited corpus
(corpus.py) cannot see it. A submission is one entry's file with correct files of the other two
engines, taken in turn.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from support import KIT
from support.shape import GRADED

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 and older
    import tomli as tomllib

FOLDER = KIT / "tests" / "engines"


@dataclass(frozen=True)
class Engine:
    """One engine file of the held-out corpus, and what grading it must give."""

    name: str  # "value.micrograd_composite"
    correct: bool
    loses: frozenset[str]
    names: frozenset[str]
    slow: frozenset[str]  # parts a correct engine loses to the time limit alone

    @property
    def engine(self) -> str:
        return self.name.split(".")[0]

    @property
    def path(self) -> Path:
        engine, style = self.name.split(".", 1)
        return FOLDER / engine / f"{style}.py"


def load() -> list[Engine]:
    manifest = tomllib.loads((FOLDER / "manifest.toml").read_text(encoding="utf-8"))
    return [Engine(f"{engine}.{style}", bool(entry["correct"]), frozenset(entry.get("loses", ())),
                   frozenset(entry.get("names", ())), frozenset(entry.get("slow", ())))
            for engine, styles in manifest.items() if engine in GRADED for style, entry in styles.items()]


ALL = load()
CORRECT = [e for e in ALL if e.correct]
BUGS = [e for e in ALL if not e.correct]


def partners(engine: str) -> list[Engine]:
    """The correct files of an engine that lose nothing at all, to stand beside another's entry."""
    return [e for e in CORRECT if e.engine == engine and not e.slow]


def build(entry: Engine, number: int, folder: Path) -> Path:
    """The submission of `entry`: its file, and correct files of the other engines, the
    `number`-th of each in turn."""
    folder.mkdir(parents=True, exist_ok=True)
    for engine in GRADED:
        chosen = entry if engine == entry.engine else partners(engine)[number % len(partners(engine))]
        shutil.copyfile(chosen.path, folder / f"{engine}.py")
    return folder
