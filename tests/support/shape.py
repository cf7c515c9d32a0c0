"""The kit's shape as its own tests see it: the engines the kit's grading.toml grades, read here alone.

A test about one engine says so with `@pytest.mark.engine("dual")` (or a module's `pytestmark`):
tests/conftest.py skips it, with the reason, where grading.toml grades no such engine, and only
then, so a skip never hides a missing feature of an engine the kit grades. A test about the kit
in general grades SAMPLE, an engine the kit has, and never reads a file of an engine it has not.
"""

from __future__ import annotations

from autograder.config import load
from autograder.parts import engine_of, engines

from . import KIT

GRADED = engines(KIT / "grading.toml")
# The engine a test of the kit in general grades: the cheapest the kit has (dual's scenarios are a
# few numbers each; the tensor engine's train a network).
SAMPLE = next((engine for engine in ("dual", "value", *GRADED) if engine in GRADED), "")


def not_graded(engine: str) -> str | None:
    """Why a test about `engine` is skipped, or None where the kit grades it."""
    if engine in GRADED:
        return None
    return (f"about the {engine} engine, which this kit does not grade: no part of grading.toml starts "
            f"with {engine!r}")


def reference(engine: str = SAMPLE) -> str:
    """solutions/<engine>.py; empty for an engine the kit does not grade (its tests are skipped)."""
    return (KIT / "solutions" / f"{engine}.py").read_text(encoding="utf-8") if engine in GRADED else ""


def broken(engine: str = SAMPLE) -> str:
    """solutions/<engine>.py with the corpus's first bug of that engine alone: it loses points of
    the engine's parts and no other's; empty for an engine the kit does not grade."""
    from .corpus import BUGS

    text = reference(engine)
    if not text:
        return ""
    bug = next(bug for bug in BUGS if {edit.file for edit in bug.edits} == {engine})
    for edit in bug.edits:
        text = text.replace(edit.old, edit.new)
    return text


def parts_of(engine: str = SAMPLE) -> list[str]:
    """The parts of grading.toml that grade `engine`'s file, in its order."""
    return [part for part in load(KIT / "grading.toml").parts if engine_of(part) == engine]


def points_of(engine: str = SAMPLE) -> float:
    """What an engine's file is worth: its parts' points (bonus parts included)."""
    return sum(load(KIT / "grading.toml").parts[part].points for part in parts_of(engine))


def scored(row: dict[str, str], engine: str = SAMPLE) -> float:
    """An engine's points in a row of grades.csv: the sum of its parts' columns."""
    return sum(float(row[part]) for part in parts_of(engine))
