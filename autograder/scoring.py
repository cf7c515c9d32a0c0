"""Points from checks: each part earns its points in proportion to the tests it passes.

Every test of a part counts, always: nothing a submission does can excuse a test or shrink a
part's denominator, so failing more never scores more. A grading in which the grader could not
make a check (`Status.GRADER_FAULT`: the reference failed, a check crashed) has no score at all:
it ends with NOT_GRADED_EXIT and one line that says why, never with points it did not decide.
What the messages say is bounded, each and all together, whatever the submission made them hold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .check_results import Check, Status, line, message
from .config import Grading

NOT_GRADED_EXIT = 70  # EX_SOFTWARE: a fault of the grader, so no score; grade it again once fixed
MAX_MESSAGE = 20_000  # characters of one message (a distinct text of a part), line breaks included
MAX_MESSAGES = 1_000_000  # characters of a grading's messages together (results.json, the feedback)


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


def grouped(failed: list[Check], total: int) -> list[str]:
    """One message per distinct text, headed by the tests that gave it: a missing file gives
    a part one line, not one block per test. Each is cut to MAX_MESSAGE characters."""
    tests_by_message: dict[str, list[str]] = {}
    for result in failed:
        tests_by_message.setdefault(cut(message(result), MAX_MESSAGE), []).append(result.test)
    heads = {message: (f"all {total} checks" if len(tests) == total > 1 else ", ".join(tests))
             for message, tests in tests_by_message.items()}
    return [f"{heads[message]}\n{message}" for message in tests_by_message]


def cut(text: str, most: int) -> str:
    """`text`, or its first `most` characters and a line saying how much was left out."""
    if len(text) <= most:
        return text
    return f"{text[:most]}\n[... {len(text) - most} more characters of this message not shown]"


def bounded(scores: list[PartScore], most: int = MAX_MESSAGES) -> list[PartScore]:
    """The scores with their messages, in order, until `most` characters are said; each message
    past that is left out, and the part says how many were."""
    left = most
    for part in scores:
        kept = []
        for text in part.messages:
            if len(text) > left:
                kept.append(f"[... {len(part.messages) - len(kept)} more messages of this part not shown: a "
                            f"grading's messages say at most {most} characters]")
                left = 0
                break
            kept.append(text)
            left -= len(text)
        part.messages = kept
    return scores


def grader_faults(results: list[Check]) -> list[Check]:
    """The checks the grader could not make: any one of them and the grading has no score."""
    return [result for result in results if result.status is Status.GRADER_FAULT]


def not_graded(faults: list[Check]) -> str:
    """Why a grading has no score, in one line: how many checks the grader could not make, and
    the first."""
    count = f"{len(faults)} check{'s' if len(faults) > 1 else ''}"
    first = " ".join(line(faults[0]).split())[:600]
    return (f"the grader could not make {count}, a fault of the grader and not of the submission "
            f"(first: {first})")


def not_graded_json(why: str, path: Path) -> None:
    """Gradescope's results.json for a grading that could not be made: no test entry, and why,
    with a score of 0 that the output says is no grade (Gradescope needs a number)."""
    output = (f"This submission could not be graded, through no fault of yours: {why}. The score of 0 "
              "is not a grade.")
    path.write_text(json.dumps({"score": 0.0, "tests": [], "stdout_visibility": "hidden", "output": output},
                               indent=2), encoding="utf-8")


def score(results: list[Check], grading: Grading) -> list[PartScore]:
    """One score per part of grading.toml, in its order; a part with no test run scores 0. The
    messages are bounded (`bounded`)."""
    scores = []
    for part in grading.parts.values():
        mine = [c for c in results if c.part == part.id]
        passed = sum(o.passed for o in mine)
        fraction = passed / len(mine) if mine else 0.0
        failed = [o for o in mine if not o.passed]
        scores.append(PartScore(
            part=part.id, title=part.title, score=round(part.points * fraction, 2),
            max_score=part.points, bonus=part.bonus, visibility=part.visibility,
            passed=passed, total=len(mine), messages=grouped(failed, len(mine)),
            misconceptions=sorted({o.misconception for o in failed if o.misconception})))
    return bounded(scores)


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
