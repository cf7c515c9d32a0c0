"""Points from outcomes: each part earns its points in proportion to the tests it passes."""

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
    excused: bool = False  # not judged: something it needs (named in the message) is missing
    message: str = ""
    misconception: str | None = None


@dataclass
class PartScore:
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


def score(outcomes: list[Outcome], grading: Grading) -> list[PartScore]:
    """One score per part of grading.toml, in its order; a part with no test run scores 0."""
    scores = []
    for part in grading.parts.values():
        mine = [o for o in outcomes if o.part == part.id]
        judged = [o for o in mine if not o.excused]
        passed = sum(o.passed for o in judged)
        fraction = passed / len(judged) if judged else 0.0
        failed = [o for o in mine if not o.passed]
        scores.append(PartScore(
            part=part.id, title=part.title, score=round(part.points * fraction, 2),
            max_score=part.points, bonus=part.bonus, visibility=part.visibility,
            passed=passed, total=len(judged),
            messages=[f"{o.test}\n{o.message}" for o in failed],
            misconceptions=sorted({o.misconception for o in failed if o.misconception})))
    return scores


def totals(scores: list[PartScore]) -> tuple[float, float]:
    """Points got (bonus included) and the maximum (bonus excluded)."""
    return (round(sum(s.score for s in scores), 2),
            round(sum(s.max_score for s in scores if not s.bonus), 2))


def table(scores: list[PartScore]) -> str:
    width = max(len(s.part) for s in scores)
    lines = [f"{'part':<{width}}  {'tests':>7}  {'points':>13}"]
    for s in scores:
        note = "  (bonus)" if s.bonus else ""
        cause = f"  likely: {', '.join(s.misconceptions)}" if s.misconceptions else ""
        lines.append(f"{s.part:<{width}}  {s.passed:>3}/{s.total:<3}  "
                     f"{s.score:>6g} / {s.max_score:<4g}{note}{cause}")
    got, most = totals(scores)
    lines.append(f"{'total':<{width}}  {'':>7}  {got:>6g} / {most:<4g}")
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
