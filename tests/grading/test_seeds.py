"""No bug's grade depends on the seed: the public questions and drawn ones hold no coincidence
that a bug could hide behind, or be caught by, at some seeds only.

Engines of the held-out corpus whose bugs live where a coincidence of numbers would decide
(a Value that compares and hashes by data, so that two distinct nodes of equal data are one;
a Dual whose reflected `__radd__` calls itself, reached only where a drawn function puts a
number on the left of `+`) are graded at the public seed and at several drawn ones: each part's
score and named misconceptions are the same at every seed.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from support import CORES, EXHAUSTIVE, SEEDS, engines

from autograder.inside.scenarios import common
from autograder.inside.scenarios.common import pairs
from autograder.inside.scenarios.dual import random_functions_at, render
from autograder.suites.draws import apart

# Seeds beyond the public one: the run's own, and stand-ins for any course's secrets (four of
# them; with --exhaustive, twelve).
MANY_SEEDS = ("public", *SEEDS, *(hashlib.sha256(f"seed {n}".encode()).hexdigest()[:16]
                                  for n in range(12 if EXHAUSTIVE else 4)))
# The bugs whose grade a coincidence of the questions' numbers once decided.
COINCIDENCES = tuple(name for name in ("value.bug_eq_hash_by_data", "dual.bug_radd_recurses")
                     if name.partition(".")[0] in engines.GRADED)  # of the engines the kit grades


@pytest.fixture(scope="module")
def graded(autograde, tmp_path_factory) -> dict[str, dict[str, dict]]:
    """Each entry of COINCIDENCES graded at every seed of MANY_SEEDS: name -> seed -> parts."""
    chosen = [entry for entry in engines.ALL if entry.name in COINCIDENCES]
    root = tmp_path_factory.mktemp("seeds")
    folders = {entry.name: engines.build(entry, 0, root / entry.name) for entry in chosen}
    jobs = [(entry.name, seed) for entry in chosen for seed in MANY_SEEDS]
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        results = list(pool.map(lambda job: autograde(folders[job[0]], seed=job[1]), jobs))
    found: dict[str, dict[str, dict]] = {}
    for (name, seed), parts in zip(jobs, results):
        found.setdefault(name, {})[seed] = parts
    return found


def number_sides(source: str) -> set[str]:
    """Which forms of a plain number beside a Dual the function's source reaches: "k + x",
    "x + k", "k * x", "x * k" (a number literal on that side of the operator)."""
    found = set()
    for node in ast.walk(ast.parse(source, mode="eval")):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            sign = "+" if isinstance(node.op, ast.Add) else "*"
            if _number(node.left):
                found.add(f"k {sign} x")
            if _number(node.right):
                found.add(f"x {sign} k")
    return found


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def test_every_drawing_of_random_functions_reaches_every_reflected_form():
    """At every seed, the functions of one test put a number on either side of + and of *: a
    Dual whose `__radd__` or `__rmul__` is wrong loses the same tests at every seed."""
    missing = {}
    for seed in range(600):  # without the rule that forces them, about 3 seeds in 100 miss one
        reached = set().union(*(number_sides(render(tree)) for tree, _ in random_functions_at(seed, 25)))
        if reached != {"k + x", "x + k", "k * x", "x * k"}:
            missing[seed] = reached
    assert not missing, f"{len(missing)} seeds miss a form, first: {next(iter(missing.items()))}"


def test_a_pair_apart_holds_no_equal_data():
    assert apart(0.5, 2.5) and apart(-0.5, 2) and apart(3.0, -0.75)
    assert not apart(0.5, 2.0) and not apart(2.0, 2) and not apart(-4.0, -0.25)


@pytest.mark.parametrize(("count", "low", "high", "margin"), [(20, -3.0, 3.0, 0.5), (10, -3.0, 3.0, 0.5),
                                                            (8, -1.0, 1.0, 0.0), (4, -2.0, 2.0, 0.25)])
def test_no_pair_drawn_in_a_worker_holds_equal_data(count, low, high, margin):
    """The workers' pairs (inside/scenarios/common.py) keep the suites' rule at every seed: the
    slice of each side nearest 0 falls back to +-margin in a and b alike, and where the shuffles
    met, a quotient of an engine that compares by data lost points at some seeds only."""
    close = {}
    for seed in range(3000):
        drawn = pairs(seed, count, low, high, margin=margin)
        combinations = Counter((a < 0, b < 0) for a, b in drawn)
        if not all(common.apart(a, b) for a, b in drawn) or min(combinations.values()) < count // 4 - 1:
            close[seed] = drawn
    assert not close, f"{len(close)} seeds of 3000, the first: {next(iter(close.items()))}"
    assert common.apart is not apart  # one rule on each side of the boundary, each tested


def test_every_engine_is_there():
    assert set(COINCIDENCES) <= {entry.name for entry in engines.BUGS}


@pytest.mark.parametrize("name", COINCIDENCES)
def test_the_grade_is_the_same_at_every_seed(name: str, graded):
    grades = {seed: {part: (p["score"], p["tags"]) for part, p in parts.items()}
              for seed, parts in graded[name].items()}
    differ = {seed: {part: grade for part, grade in grade_at.items() if grade != grades["public"][part]}
              for seed, grade_at in grades.items() if grade_at != grades["public"]}
    assert not differ, f"{name} at the public seed: {grades['public']}; elsewhere: {differ}"
    assert any(p["score"] < p["max_score"] for p in graded[name]["public"].values()), \
        f"{name} loses nothing: the bug is caught at no seed"
