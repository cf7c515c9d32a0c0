"""Every seed asks every case: both signs, and small and large sizes, of every operand.

A bug confined to one sign or one size of an operand (support/corpus.py, CONFINED: a rule
written with abs() or a threshold) costs its parts at every seed, and the same points at each:
a test asks each sign and each size whatever the seed, so which tests fail never depends on it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from support import CORES, EVERY_SEED, KIT
from support.corpus import CONFINED, Submission, build

pytestmark = pytest.mark.slow  # grades in processes of its own


@pytest.fixture(scope="module")
def confined_grades(autograde, tmp_path_factory) -> dict[tuple[str, str], dict[str, dict]]:
    """Every confined bug, graded at every seed: (seed, name) -> results by part."""
    root = tmp_path_factory.mktemp("confined")
    for bug in CONFINED:
        build(bug, KIT / "solutions", root / bug.name)
    jobs = [(seed, bug.name) for seed in EVERY_SEED for bug in CONFINED]
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        return dict(zip(jobs, pool.map(lambda job: autograde(root / job[1], seed=job[0]), jobs)))


@pytest.mark.parametrize("bug", [pytest.param(b, id=b.name) for b in CONFINED])
def test_a_bug_of_one_sign_or_size_costs_the_same_at_every_seed(bug: Submission, confined_grades):
    grades = {seed: confined_grades[seed, bug.name] for seed in EVERY_SEED}
    for seed, parts in grades.items():
        lost = {part for part, entry in parts.items() if entry["score"] < entry["max_score"]}
        assert lost == bug.loses, f"{bug.name} at {seed} lost {sorted(lost)}, not {sorted(bug.loses)}"
    scores = {seed: {part: entry["score"] for part, entry in parts.items()} for seed, parts in grades.items()}
    assert all(score == scores["public"] for score in scores.values()), scores
