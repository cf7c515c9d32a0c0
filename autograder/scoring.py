"""Points from outcomes: each part earns its points in proportion to the tests it passes.

Every test of a part counts, always: nothing a submission does can excuse a test or shrink a
part's denominator, so failing more never scores more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .config import Grading


@dataclass
class Outcome:
    """One test's result, as the scorer sees it."""

    test: str
    part: str
    passed: bool
    message: str = ""
    misconception: str | None = None
    kit_reverse: bool = False  # judged through the kit's own reverse pass
    kit_snippet: tuple[str, str] | None = None  # its snippet, and the snippet as the kit ran it
    unloaded: bool = False  # its engine file is missing or did not import: no other cause to name


@dataclass
class PartScore:
    """One part's score: points got and possible, tests passed of those run, messages, misconceptions."""

    part: str
    title: str
    score: float
    max_score: float
    bonus: bool
    visibility: str
    passed: int
    total: int
    messages: list[str] = field(default_factory=list)
    misconceptions: list[str] = field(default_factory=list)


def grouped(failed: list[Outcome], total: int) -> list[str]:
    """One message per distinct text, headed by the tests that gave it: a missing file gives
    a part one line, not one block per test."""
    tests_by_message: dict[str, list[str]] = {}
    for outcome in failed:
        tests_by_message.setdefault(outcome.message, []).append(outcome.test)
    heads = {message: (f"all {total} checks" if len(tests) == total > 1 else ", ".join(tests))
             for message, tests in tests_by_message.items()}
    return [f"{heads[message]}\n{message}" for message in tests_by_message]


def score(outcomes: list[Outcome], grading: Grading) -> list[PartScore]:
    """One score per part of grading.toml, in its order; a part with no test run scores 0."""
    scores = []
    for part in grading.parts.values():
        mine = [o for o in outcomes if o.part == part.id]
        passed = sum(o.passed for o in mine)
        fraction = passed / len(mine) if mine else 0.0
        failed = [o for o in mine if not o.passed]
        scores.append(PartScore(
            part=part.id, title=part.title, score=round(part.points * fraction, 2),
            max_score=part.points, bonus=part.bonus, visibility=part.visibility,
            passed=passed, total=len(mine), messages=grouped(failed, len(mine)),
            misconceptions=sorted({o.misconception for o in failed if o.misconception})))
    return scores


def totals(scores: list[PartScore]) -> tuple[float, float]:
    """Points got (bonus included) and the maximum (bonus excluded)."""
    return (round(sum(s.score for s in scores), 2),
            round(sum(s.max_score for s in scores if not s.bonus), 2))


def table(scores: list[PartScore], partial: bool = False, left_out: int = 0) -> str:
    """The score table; with `partial` (some tests deselected or not collected), only the parts
    that ran, and a total that says it covers only what ran (`left_out`: the tests deselected)."""
    shown = [s for s in scores if s.total] if partial else scores
    if not shown:
        return "No test of any part ran."
    width = max(len(s.part) for s in shown)
    lines = [f"{'part':<{width}}  {'tests':>7}  {'points':>13}"]
    for s in shown:
        note = "  (bonus)" if s.bonus else ""
        cause = f"  likely: {', '.join(s.misconceptions)}" if s.misconceptions else ""
        lines.append(f"{s.part:<{width}}  {s.passed:>3}/{s.total:<3}  "
                     f"{s.score:>6g} / {s.max_score:<4g}{note}{cause}")
    got, most = totals(shown)
    lines.append(f"{'total':<{width}}  {'':>7}  {got:>6g} / {most:<4g}")
    if partial:
        said = [f"only {len(shown)} of {len(scores)} parts ran"] if len(shown) < len(scores) else []
        if left_out:
            said.append(f"{left_out} test{' was' if left_out == 1 else 's were'} left out")
        sentence = " and ".join(said or ["not every test ran"])
        lines.append(f"{sentence[0].upper()}{sentence[1:]}, so this total covers only what ran; "
                     "`pytest autograder` grades every test of every part.")
    return "\n".join(lines)


def results_json(scores: list[PartScore], path: Path) -> None:
    """Gradescope's results.json: one test entry per part."""
    got, _ = totals(scores)
    tests = [{"name": s.title, "score": s.score, "max_score": s.max_score,
              "status": "passed" if s.passed == s.total and s.total else "failed",
              "output": "\n\n".join(s.messages) or f"All {s.total} checks passed.",
              "tags": [s.part, *s.misconceptions], "visibility": s.visibility}
             for s in scores]
    path.write_text(json.dumps({"score": got, "tests": tests,
                                "stdout_visibility": "hidden"}, indent=2), encoding="utf-8")
