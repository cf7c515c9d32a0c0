"""Mutation testing of the suites: every small edit of a stub's reference body that changes
behaviour must lose points in that stub's part, and nowhere else but in the parts that need it
by nature; every test of the suites must be failed by some mutant or corpus bug.

The mutants (mutants/, beside the grader) are one-edit copies of solutions/*.py's stub bodies. A
probe of seeded random programs, run in this process against the reference, leaves out those that
behave exactly like it (equivalent mutants); each of the others is graded as a TA grades a
folder, in a pytest subprocess against the sealed reference, with --junitxml for every test's
outcome. test_the_mutation_score prints the score per part, the survivors and the timings.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from support import EXHAUSTIVE, SEEDS
from support.corpus import BUGS, CORRECT, GIVEN_CHANGES, Submission, bug_folders, build

from autograder.config import load
from autograder.stubs import engine_files
from mutants.generate import KIT, Mutant, generate, stubs
from mutants.grading import collected_tests, grade_all, suite_modules, unfailed
from mutants.probe import Probe
from mutants.replay import calls_from
from mutants.run import MutationRun, drawn_from_each, killed_at, may_also_cost, mutation_run

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

SOLUTIONS = KIT / "solutions"
PARTS = list(load().parts)
# Each grading run keeps one worker busy at a time, so one run per core fills the machine.
CORES = os.cpu_count() or 2


@pytest.fixture(scope="module")
def mutants() -> list[Mutant]:
    return generate()


@pytest.fixture(scope="module")
def probe() -> Probe:
    return Probe()


@pytest.fixture(scope="module")
def run(sealed_reference, tmp_path_factory: pytest.TempPathFactory) -> MutationRun:
    """Every mutant probed, and every behaviour-changing one graded, two or more at a time: by the
    suites of the parts it may cost, and one of each stub, drawn by this run's seed, by every
    suite (with --exhaustive, every one)."""
    calls = calls_from(KIT, sealed_reference.junit, sealed_reference.path)
    return mutation_run(sealed_reference.path, tmp_path_factory.mktemp("mutants"), CORES, parts=PARTS,
                        calls=calls, whole_seed=None if EXHAUSTIVE else SEEDS[0])


def as_mutants(submission: Submission, folder: Path) -> list[Mutant]:
    """A corpus entry's edited engine files, each as a mutant the probe can take."""
    build(submission, SOLUTIONS, folder)
    texts = {path.stem: (folder / path.name).read_text(encoding="utf-8") for path in engine_files(SOLUTIONS)}
    return [Mutant(submission.name, name, "", text, "") for name, text in texts.items()
            if text != (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8")]


def named(mutants: list[Mutant], function: str, change: str) -> Mutant:
    """The one mutant of `function` ("value.py Value.tanh") whose id ends with `change`."""
    file, name = function.split()
    found = [m for m in mutants if m.id.startswith(f"{file}:") and f" {name}: " in m.id
             and m.id.endswith(change)]
    assert len(found) == 1, f"{len(found)} mutants of {function} end with {change!r}"
    return found[0]


# -- the generator -------------------------------------------------------------------------------


def test_every_stub_has_mutants_and_each_is_one_edit(mutants: list[Mutant]):
    parts = {part for owners in stubs().values() for part in owners.values()}
    assert parts == {m.part for m in mutants}, f"stubs with no mutant: {parts - {m.part for m in mutants}}"
    assert len({m.id for m in mutants}) == len(mutants), "two mutants share an id"
    assert len({m.source for m in mutants}) == len(mutants), "two mutants are the same file"
    for mutant in mutants:
        reference = (SOLUTIONS / f"{mutant.engine}.py").read_text(encoding="utf-8")
        assert mutant.id.startswith(f"{mutant.engine}.py:"), mutant.id
        assert ast.dump(ast.parse(mutant.source)) != ast.dump(ast.parse(reference)), mutant.id
        changed = [line for line in mutant.diff.splitlines()[2:] if line[:1] in "+-"]
        assert changed and len(changed) <= 16, f"{mutant.id}: not a small edit:\n{mutant.diff}"


def test_mutants_include_the_edits_that_leaf_operands_hide(mutants: list[Mutant], probe: Probe):
    """The bugs that pass every test whose operands are leaves: the probe must see each one."""
    hidden = [
        named(mutants, "value.py Value.__mul__", '-> out = Value(self.data * other.data, (self, self), "*")'),
        named(mutants, "value.py Value.__truediv__._backward",
              "-> other.grad = -self.data / other.data ** 2 * out.grad"),
        named(mutants, "value.py Value.tanh", "-> self._backward = _backward"),
        named(mutants, "value.py Value.sigmoid", "-> self._backward = _backward"),
    ]
    unseen = [m.id for m in hidden if not probe(m).changes]
    assert not unseen, f"the probe cannot tell these from the reference: {unseen}"


# -- the probe -----------------------------------------------------------------------------------


@pytest.mark.parametrize("submission", [pytest.param(s, id=s.name) for s in CORRECT])
def test_the_probe_finds_no_difference_in_a_correct_variant(submission: Submission, probe: Probe,
                                                            tmp_path: Path):
    """The probe keeps to behaviour every correct implementation shares."""
    for mutant in as_mutants(submission, tmp_path):
        verdict = probe(mutant)
        assert not verdict.changes, f"{submission.name} ({mutant.engine}.py): {verdict.evidence}"


@pytest.mark.parametrize("submission", [pytest.param(s, id=s.name) for s in BUGS])
def test_the_probe_finds_every_corpus_bug(submission: Submission, probe: Probe, tmp_path: Path):
    verdicts = [probe(mutant) for mutant in as_mutants(submission, tmp_path)]
    assert any(v.changes for v in verdicts), f"{submission.name} behaves like the reference to the probe"


# -- the suites, under mutation --------------------------------------------------------------------


def test_the_mutation_score(run: MutationRun, capsys: pytest.CaptureFixture):
    """Prints the score per part, the survivors with their diffs, and the equivalent mutants."""
    with capsys.disabled():
        print("\n" + run.report())
    assert len(run.changing) + len(run.equivalent) == len(run.mutants)
    assert set(run.grades) == {m.id for m in run.changing}
    quiet = {m.part for m in run.mutants} - {m.part for m in run.changing}
    assert not quiet, f"parts whose mutants all behave like the reference: {sorted(quiet)}"


def test_every_grading_saw_every_test_it_was_asked_for(run: MutationRun):
    """Every grading ran, and reported, every test of the suites it was asked for and no other, and
    their parts; one mutant of each stub was graded by every suite."""
    tests, modules = collected_tests(), suite_modules()
    short = {}
    for mutant in run.changing:
        asked = run.asked(mutant) or tuple(PARTS)
        expected = {test for test in tests if Path(test.split("::")[0]).stem in
                    {module for part in asked for module in modules.get(part, ())}}
        grade = run.grades[mutant.id]
        if grade.outcomes.keys() != expected or set(grade.scores) != set(asked):
            short[mutant.id] = (sorted(expected ^ grade.outcomes.keys())[:5], sorted(grade.scores))
    assert not short, f"gradings that miss tests or parts, or ran others: {short}"
    stubs_of = {(m.engine, m.stub) for m in run.changing}
    assert {(m.engine, m.stub) for m in run.changing if m.id in run.whole} == stubs_of
    assert len(run.whole) == (len(run.changing) if EXHAUSTIVE else len(stubs_of))


def test_every_behaviour_changing_mutant_loses_points_in_its_own_part(run: MutationRun):
    survivors = run.survivors
    assert not survivors, f"{len(survivors)} mutants kept full marks on their own part:\n\n" + "\n\n".join(
        f"{m.id} (part {m.part}; the probe saw: {run.verdicts[m.id].evidence})\n{m.diff}" for m in survivors)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_behaviour_changing_mutant_is_killed_at_every_seed(
        run: MutationRun, seed: str, sealed_at, tmp_path: Path, capsys: pytest.CaptureFixture):
    """At another seed, every mutant still loses points in its own part: its part's suites alone
    grade it (what killing it takes). Half of each part's, drawn by the seed (another half at
    every run); with --exhaustive, all of them at every seed."""
    asked = run.changing if EXHAUSTIVE else drawn_from_each(run.changing, lambda m: m.part,
                                                            lambda n: (n + 1) // 2, seed)
    grades = killed_at(run, sealed_at(seed).path, seed, tmp_path, CORES, mutants=asked)
    survivors = [m for m in asked if m.part not in grades[m.id].lost]
    assert {m.part for m in asked} == {m.part for m in run.changing}
    with capsys.disabled():
        print(f"\nmutation score at seed {seed}: {len(asked) - len(survivors)} of {len(asked)} "
              f"behaviour-changing mutants killed in their own part (of {len(run.changing)})")
    shown = "\n\n".join(f"{m.id} (part {m.part})\n{m.diff}" for m in survivors)
    assert not survivors, f"{len(survivors)} mutants kept full marks on their own part:\n\n{shown}"


def test_no_mutant_costs_a_part_other_than_its_own(run: MutationRun):
    """Besides its own part, a mutant may cost only the parts that need it by nature: training
    (value.training, tensor.training) and, for tanh, tanh far from zero (value.stability). The
    mutants graded by every suite show it (one of each stub, another at every run): the others
    were graded by their own part's suites and those."""
    assert run.whole and all(run.grades[mutant].scores.keys() == set(PARTS) for mutant in run.whole)
    others = run.costs_others()
    assert not others, f"{len(others)} mutants cost other parts:\n" + "\n".join(run.other_costs())


def bugs_for(tests: list[str], scratch: Path) -> dict[str, Path]:
    """The corpus's single bugs and changes to the given code that could fail one of `tests`,
    built: a bug that fails a test loses its part (the fairness tests hold each bug to the parts
    it declares), and a change to the given code may cost any part."""
    modules = {Path(test.split("::")[0]).stem for test in tests}
    parts = {part for part, held in suite_modules().items() if modules & set(held)}
    declared = {s.name: s.loses for s in [*BUGS, *GIVEN_CHANGES.values()]}
    return {name: folder for name, folder in bug_folders(scratch, SOLUTIONS).items()
            if not declared[name] or declared[name] & parts}


def test_every_test_of_the_suites_is_failed_by_some_mutant_or_bug(run: MutationRun, sealed_reference,
                                                                  tmp_path: Path):
    """Graded test by test, the corpus bugs that could fail a test no mutant failed."""
    tests = collected_tests()
    left = unfailed(tests, list(run.grades.values()))
    bug_grades = grade_all(bugs_for(left, tmp_path), sealed_reference.path, tmp_path, CORES) if left else {}
    nothing = unfailed(set(left), list(bug_grades.values()))
    assert not nothing, (f"{len(nothing)} tests are failed by no mutant and no corpus bug, so they "
                         "check nothing either could show:\n" + "\n".join(f"  {t}" for t in nothing))


def test_only_training_and_stability_are_excused(run: MutationRun):
    """The parts a mutant may also cost are few and named; everything else counts against it."""
    excused = {part: may_also_cost(part) for part in {m.part for m in run.mutants}}
    assert set().union(*excused.values()) <= {"value.training", "tensor.training", "value.stability"}
    assert excused["value.tanh"] == {"value.stability"}
    assert excused["dual"] == set()
