"""Failing more never scores more.

For the reference and every submission of the fairness corpus, one scenario function per
part at a time (every round for the reference, the two ways in turn, both with --exhaustive; one
round for each corpus entry, the rounds and the two ways taken in turn) is made to fail inside
the worker, as a hostile submission can make it fail (its file replaces the scenario with one
that raises, or with one that answers hollow data of the right shape). No part may score more
than without the break; the parts whose scenarios were not broken score exactly the same; and
the reference loses points wherever one of its scenarios was broken. The breaks are graded at
every seed in turn, each against the same submission unbroken at the same seed.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import EVERY_SEED, KIT, in_turn
from support.corpus import CORPUS, build
from support.shape import GRADED

from autograder.junit_properties import recorded_calls
from autograder.staff.release import collect

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

CORES = os.cpu_count() or 2
# Put at the end of every engine file: whichever is imported first breaks the scenarios.
BREAK = """

def _break_scenarios(names, kind):
    import sys
    import numpy

    def hollow(x):
        if isinstance(x, numpy.ndarray):
            return {{"ndarray": [], "shape": list(x.shape)}}
        if isinstance(x, dict):
            return {{k: hollow(v) for k, v in x.items()}}
        if isinstance(x, list):
            return [hollow(v) for v in x]
        return "0" if isinstance(x, float) else x

    for qualified in names:
        module_name, name = qualified.split(":")
        module = sys.modules["scenarios." + module_name]
        original = getattr(module, name)

        def broken(*args, original=original, **kwargs):
            if kind == "raise":
                raise RuntimeError("broken on purpose")
            return hollow(original(*args, **kwargs))

        setattr(module, name, broken)


_break_scenarios({names!r}, {kind!r})
"""


@pytest.fixture(scope="module")
def scenarios_by_part(sealed_reference) -> dict[str, list[str]]:
    """Every scenario function the suites call, by the part of the tests that call it."""
    part_of = {(t.file.stem, t.name): t.part for t in collect(KIT)}
    found: dict[str, list[str]] = {}
    for call in recorded_calls(sealed_reference.junit):
        module, _, function = call.test.partition(":")
        scenarios = found.setdefault(part_of[(module.rsplit(".", 1)[1], function)], [])
        if call.scenario not in scenarios:
            scenarios.append(call.scenario)
    return found


def rounds(by_part: dict[str, list[str]]) -> list[list[str]]:
    """Round r breaks the r-th scenario of every part (each function once over all rounds)."""
    done: set[str] = set()
    chosen = []
    for index in range(max(map(len, by_part.values()))):
        this = sorted({names[index] for names in by_part.values() if index < len(names)} - done)
        done |= set(this)
        if this:
            chosen.append(this)
    return chosen


def broken_copy(source: Path, folder: Path, names: list[str], kind: str) -> Path:
    folder.mkdir(parents=True)
    for engine in GRADED:
        text = (source / f"{engine}.py").read_text(encoding="utf-8")
        (folder / f"{engine}.py").write_text(text + BREAK.format(names=names, kind=kind), encoding="utf-8")
    return folder


def scores(parts: dict[str, dict]) -> dict[str, float]:
    return {part: entry["score"] for part, entry in parts.items()}


def test_failing_a_scenario_never_raises_a_score(autograde, scenarios_by_part, corpus_grades, sealed_at,
                                                 tmp_path):
    plan = rounds(scenarios_by_part)
    assert sum(map(len, plan)) >= 40, "too few scenario functions found to test anything"
    submissions = {"reference": KIT / "solutions"}
    for entry in CORPUS:
        build(entry, KIT / "solutions", tmp_path / "corpus" / entry.name)
        submissions[entry.name] = tmp_path / "corpus" / entry.name
    # The reference through every round, the two ways taking the rounds in turn from a start the
    # drawn seed picks (--exhaustive: both ways); each corpus entry through one round, so that
    # every round meets several entries, and each way of breaking half of them.
    ways = ("raise", "hollow")
    jobs = [("reference", index, kind) for index, kind in in_turn(range(len(plan)), ways)]
    for number, name in enumerate(list(submissions)[1:]):
        lap = number // len(plan)  # each lap through the rounds starts with the other kind
        jobs.append((name, number % len(plan), ways[(number + lap) % 2]))
    seed_of = {job: EVERY_SEED[number % len(EVERY_SEED)] for number, job in enumerate(jobs)}

    def unbroken(name: str, seed: str) -> dict[str, float]:
        return scores(sealed_at(seed).parts if name == "reference" else corpus_grades[seed][name])

    def grade(job: tuple[str, int, str]) -> dict[str, float]:
        name, index, kind = job
        folder = tmp_path / "broken" / f"{name}-{index}-{kind}"
        return scores(autograde(broken_copy(submissions[name], folder, plan[index], kind), seed=seed_of[job]))

    with ThreadPoolExecutor(max_workers=CORES) as pool:
        broken = dict(zip(jobs, pool.map(grade, jobs)))
    problems = []
    for (name, index, kind), got in broken.items():
        touched = {part for part, names in scenarios_by_part.items() if set(names) & set(plan[index])}
        for part, points in got.items():
            before = unbroken(name, seed_of[name, index, kind])[part]
            if points > before or (part not in touched and points != before):
                problems.append(f"{name}, {kind} {plan[index]}: {part} went from {before} to {points}")
            if name == "reference" and part in touched and points >= before > 0:
                problems.append(f"reference, {kind} {plan[index]}: {part} lost nothing")
    assert not problems, "\n".join(problems)
