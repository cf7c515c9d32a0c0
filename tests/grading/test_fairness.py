"""The grader is fair: a corpus of submissions made from the reference by small edits.

Every correct variant scores full marks on every part; every single bug loses at least a
point in exactly the parts it breaks, keeps full marks on the others, and is named; and so at
every seed, each submission with the same grade at each. Each submission is graded as a TA
would grade it: `python -m pytest autograder` in a subprocess, against a reference sealed once
per seed for the whole run.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import EVERY_SEED, KIT
from support.corpus import BUGS, CORPUS, CORRECT, CorpusError, Submission, build

from autograder.config import load
from autograder.misconceptions import CATALOGUE

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

SOLUTIONS = KIT / "solutions"
PARTS = load().parts
# Each grading run keeps one worker busy at a time, so one run per core fills the machine.
CORES = os.cpu_count() or 2


def entries(submissions: tuple[Submission, ...]) -> list:
    return [pytest.param(s, id=s.name) for s in submissions]


def lost_points(parts: dict[str, dict]) -> dict[str, float]:
    return {part: entry["max_score"] - entry["score"] for part, entry in parts.items()
            if entry["score"] < entry["max_score"]}


def report(parts: dict[str, dict], which: set[str]) -> str:
    """The grader's score and messages for some parts, to show in a failed assertion."""
    return "\n\n".join(f"--- {part}: {parts[part]['score']:g} / {parts[part]['max_score']:g}, "
                       f"tags {parts[part]['tags']}\n{parts[part]['output']}" for part in sorted(which))


def graded(corpus_grades: dict, submission: Submission, seed: str = "public") -> dict[str, dict]:
    outcome = corpus_grades[seed][submission.name]
    if isinstance(outcome, CorpusError):
        pytest.fail(str(outcome), pytrace=False)
    return outcome


# -- the corpus itself --------------------------------------------------------------------------------

@pytest.mark.parametrize("submission", [pytest.param(s, id=s.name) for s in CORPUS])
def test_every_edit_fits_the_reference(submission: Submission, tmp_path: Path):
    """An edit's old text occurs exactly once, so a change of the reference cannot hide a variant."""
    build(submission, SOLUTIONS, tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {"value.py", "tensor.py", "dual.py"}


def test_entries_name_real_parts_and_misconceptions():
    names = [s.name for s in CORPUS]
    assert len(names) == len(set(names)), "two corpus entries share a name"
    for submission in CORPUS:
        assert submission.loses <= PARTS.keys(), f"{submission.name}: unknown parts in `loses`"
        assert submission.names <= CATALOGUE.keys(), f"{submission.name}: unknown misconceptions"
        assert bool(submission.names) == bool(submission.loses), \
            f"{submission.name}: a bug names its misconception; a correct variant names none"


def test_every_misconception_has_a_submission_that_shows_it():
    shown = set().union(*(s.names for s in BUGS))
    assert shown == CATALOGUE.keys(), f"no corpus entry for {sorted(CATALOGUE.keys() - shown)}"


# -- the two ends: the reference and the stubs ------------------------------------------------------

def test_reference_scores_full_marks(sealed_reference):
    parts = sealed_reference.parts
    assert parts.keys() == PARTS.keys()
    assert not lost_points(parts), report(parts, set(lost_points(parts)))
    empty = {part for part, entry in parts.items() if entry["status"] != "passed"}
    assert not empty, f"parts with no test to pass: {sorted(empty)}"


def test_stubs_score_zero_on_every_part(autograde):
    parts = autograde(KIT / "assignments")
    scored = {part: entry["score"] for part, entry in parts.items() if entry["score"] != 0}
    assert parts.keys() == PARTS.keys()
    assert not scored, report(parts, set(scored))


# -- the corpus, graded ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", EVERY_SEED)
@pytest.mark.parametrize("submission", entries(CORRECT))
def test_correct_variant_scores_full_marks(submission: Submission, seed: str, corpus_grades):
    parts = graded(corpus_grades, submission, seed)
    lost = lost_points(parts)
    assert not lost, f"{submission.name} is correct but lost points:\n{report(parts, set(lost))}"


@pytest.mark.parametrize("seed", EVERY_SEED)
@pytest.mark.parametrize("submission", entries(BUGS))
def test_bug_loses_exactly_its_parts_and_is_named(submission: Submission, seed: str, corpus_grades):
    parts = graded(corpus_grades, submission, seed)
    lost = lost_points(parts)
    assert set(lost) == submission.loses, (
        f"{submission.name} should lose {sorted(submission.loses)}, lost {sorted(lost)}:\n"
        f"{report(parts, set(lost) ^ submission.loses)}")
    barely = {part for part, points in lost.items() if points < min(1.0, PARTS[part].points / 4)}
    assert not barely, f"{submission.name} lost less than a point (or a quarter of a small part) in:\n" \
                       f"{report(parts, barely)}"
    named = {tag for part in lost for tag in parts[part]["tags"][1:]}
    assert named == submission.names, (
        f"{submission.name} is {sorted(submission.names)}, named {sorted(named)}; the grader said:\n"
        f"{report(parts, set(lost))}")


@pytest.mark.parametrize("submission", entries(CORPUS))
def test_the_grade_is_the_same_at_every_seed(submission: Submission, corpus_grades):
    """No seed changes what a submission scores, correct or not, part by part, nor what it is
    named for: a student who resubmits the same engine with a new comment rolls for nothing."""
    grades = {seed: {part: (entry["score"], entry["tags"]) for part, entry in
                     graded(corpus_grades, submission, seed).items()} for seed in EVERY_SEED}
    public = grades["public"]
    differ = {seed: {part: (public[part], got) for part, got in grade.items() if got != public[part]}
              for seed, grade in grades.items() if grade != public}
    assert not differ, f"{submission.name}: public -> {differ}"


@pytest.mark.parametrize("seed", EVERY_SEED)
def test_diagnoses_name_the_true_cause_and_only_it(seed: str, corpus_grades, capsys):
    """Over the corpus: what each bug's grade names, against what the bug is."""
    named = {s.name: {tag for entry in graded(corpus_grades, s, seed).values() for tag in entry["tags"][1:]}
             for s in CORPUS}
    true = sum(len(named[s.name] & s.names) for s in CORPUS)
    false = {s.name: sorted(named[s.name] - s.names) for s in CORPUS if named[s.name] - s.names}
    precision = true / max(1, true + sum(map(len, false.values())))
    recall = true / sum(len(s.names) for s in BUGS)
    with capsys.disabled():
        print(f"\ndiagnoses over the corpus at seed {seed}: precision {precision:.0%}, recall {recall:.0%} "
              f"({true} of {sum(len(s.names) for s in BUGS)} named, {sum(map(len, false.values()))} wrong)")
    assert not false, f"named wrongly: {false}"
    assert precision == 1.0 and recall >= 0.95


def test_grades_do_not_depend_on_the_hash_seed(autograde, tmp_path: Path):
    """A bug whose effect could follow object addresses (a set of parents, `=` for `+=`)."""
    submission = next(s for s in BUGS if s.name == "mul-assigns-instead-of-adding-with-set-parents")
    build(submission, SOLUTIONS, tmp_path)
    seeds = ["0", "1", "2718", "31415"]
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        runs = list(pool.map(lambda seed: autograde(tmp_path, env={"PYTHONHASHSEED": seed}), seeds))
    # Scores and names, not messages: a broken training run's wrong accuracy may follow the heap layout.
    grades = [{part: (e["score"], e["tags"]) for part, e in parts.items()} for parts in runs]
    assert all(g == grades[0] for g in grades), "the same submission got different grades"
    assert lost_points(runs[0]), "the submission lost nothing, so the comparison shows nothing"

