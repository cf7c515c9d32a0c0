"""The parts of `autograder check` that need no grading of the kit: the engine files, the cost
report, the stubs a scenario runs, and the mutation probe of a stub inside a method.

Each works on a copy of the kit's reference, edited as an author would; tests/staff/
test_authoring.py runs the whole check on changed copies of the kit.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest
from support import KIT
from support.shape import GRADED

from autograder.config import CostBudget, load, parse
from autograder.parts import Part, declared, engines
from autograder.staff.check import engine_files_of
from autograder.staff.costs import CALL_OVERHEAD, CLASS, GRADING_START, cost_report
from autograder.staff.dry_run import borrowed_stubs
from autograder.stubs import regions
from mutants.generate import edits_per_part, generate
from mutants.probe import Probe
from mutants.replay import SuiteCall, reached

MATMUL_RULE = '''        def _backward() -> None:
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
'''
MATMUL_STUB = '''        def _backward() -> None:
            # BEGIN SOLUTION tensor.matmul: the gradient of each operand of a matrix product
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
            # END SOLUTION
'''


def kit_files(folder: Path) -> Path:
    """A kit's grading.toml, reference and student files, as check and the mutants read them."""
    for name in ("solutions", "assignments"):
        shutil.copytree(KIT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(KIT / "grading.toml", folder / "grading.toml")
    return folder


def with_matmul_stub(folder: Path) -> Path:
    """The kit's files with Tensor.__matmul__'s rule, inside its _backward, a stub of tensor.matmul."""
    kit = kit_files(folder)
    path = kit / "solutions" / "tensor.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(MATMUL_RULE) == 1
    path.write_text(text.replace(MATMUL_RULE, MATMUL_STUB), encoding="utf-8")
    return kit


# -- the engine files --------------------------------------------------------------------------------

def test_the_engines_are_the_first_words_of_the_parts_in_grading_toml(tmp_path):
    assert set(engines(KIT / "grading.toml")) == {path.stem for path in (KIT / "solutions").glob("*.py")}
    assert engine_files_of(KIT, load()) == []
    toml, kit_toml = tmp_path / "grading.toml", (KIT / "grading.toml").read_text(encoding="utf-8")
    rest = kit_toml[kit_toml.index("[tolerances]"):]  # parts b.x, a, b.y: engines b and a, in that order
    toml.write_text('[parts."b.x"]\ntitle = "x"\npoints = 1\n\n[parts.a]\ntitle = "a"\npoints = 1\n\n'
                    '[parts."b.y"]\ntitle = "y"\npoints = 1\n\n' + rest, encoding="utf-8")
    assert engines(toml) == ("b", "a")


@pytest.mark.engine("dual")  # the engine file removed
def test_an_engine_file_missing_or_graded_by_no_part_is_named_with_its_fix(tmp_path):
    kit = kit_files(tmp_path / "kit")
    (kit / "solutions" / "dual.py").unlink()
    said = engine_files_of(kit, parse(kit / "grading.toml"))
    assert said == [
        'grading.toml: dual grade dual.py, but solutions/dual.py is missing; put its reference there, or '
        'remove those parts (their tables and their suites), as docs/authoring.md says under "Removing an '
        'engine"',
        "assignments/dual.py: no solutions/dual.py makes it; remove it, or put its reference in "
        "solutions/dual.py"]
    toml = kit / "grading.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('[parts."dual"]', '[parts."duel"]'),
                    encoding="utf-8")
    (kit / "assignments" / "dual.py").unlink()
    shutil.copyfile(KIT / "solutions" / "dual.py", kit / "solutions" / "dual.py")
    said = engine_files_of(kit, parse(toml))
    assert ('solutions/dual.py: no part of grading.toml grades it; remove it and assignments/dual.py, or '
            'add a part whose id starts with "dual"') in said
    assert any(line.startswith("grading.toml: duel grade duel.py, but solutions/duel.py is missing")
               for line in said)


# -- the cost report ---------------------------------------------------------------------------------

def test_the_cost_report_has_a_row_per_part_and_the_estimates():
    grading = load()
    seconds = {part: [0.001, 0.002] for part in grading.parts}
    report = cost_report(grading, seconds, {"value.mul": 45}, cores=2)
    assert report.warnings == []
    rows = {line.split()[0]: line for line in report.lines[2:] if line.startswith("  ") and
            line.split()[0] in grading.parts}
    assert list(rows) == list(grading.parts)
    assert rows["value.mul"].split()[1:3] == ["2", "0.003"] and "0.10 s" in rows["value.mul"]
    assert "`autograder mutate` about" in report.lines[-1] and f"a class of {CLASS} about" in report.lines[-1]


def test_a_part_that_costs_ten_times_all_the_others_together_is_warned_of():
    grading = load()
    seconds = {part: [0.01] for part in grading.parts}
    seconds["value.training"] = [10.5]  # moons 2-16-16-1 for 200 steps, as the reference took it
    report = cost_report(grading, seconds, {}, cores=2)
    assert not any("cpu_seconds" in w for w in report.warnings)  # 105 s: within what a worker may use
    dominant = [w for w in report.warnings if w.startswith("part 'value.training' costs 10.50 s")]
    others = 0.01 * (len(grading.parts) - 1)  # 0.12 s in the kit as it is
    assert len(dominant) == 1 and f"times all the other parts together ({others:.2f} s)" in dominant[0]
    assert "1.05-1.05 s" not in "\n".join(report.lines) and "105.00 s" in "\n".join(report.lines)


def test_a_limit_past_what_a_worker_may_use_in_all_is_warned_of():
    grading = load()
    seconds = {part: [0.001] for part in grading.parts}
    seconds["value.training"] = [21.5]  # moons 2-16-16-1 for 200 steps, as the reference took it here
    said = [w for w in cost_report(grading, seconds, {}, cores=2).warnings if "cpu_seconds" in w]
    assert said == ["a call of 'value.training' may take 215 s of CPU time by [limits], more than the "
                    "cpu_seconds = 120 a worker may use in all: a correct engine slower than the reference "
                    "is stopped before its limit; make the scenario smaller, or raise cpu_seconds"]


def test_a_class_past_the_budget_is_warned_of():
    grading = load()
    seconds = {part: [0.4] for part in grading.parts}
    assert cost_report(grading, seconds, {}, cores=2).warnings == []  # 100 x (0.21 + 2 x 5.2 s) / 2: 8.8 min
    tight = type(grading)(grading.parts, grading.tolerances, grading.limits, grading.source, CostBudget(5.0))
    said = cost_report(tight, seconds, {}, cores=2).warnings
    own = GRADING_START + CALL_OVERHEAD * len(grading.parts)  # a call per part
    minutes = CLASS * (own + 2 * 0.4 * len(grading.parts)) / 2 / 60  # 8.8 in the kit as it is
    assert said == [f"a class of {CLASS} would take about {minutes:.1f} min of `autograder bulk` on 2 cores, "
                    "past the budget of 5 minutes in [budget] of grading.toml; 'value.given' costs the most "
                    "(0.40 s a grading): make its scenario smaller, or raise class_of_100_minutes"]


# -- the stubs a scenario runs -----------------------------------------------------------------------

def test_a_tensor_scenario_that_multiplies_runs_the_unbroadcast_stub():
    """broadcast_operand builds its graph from the given +, - and *, whose rules call unbroadcast:
    a part that asked for it without being named in unbroadcast's also_costs borrows the stub."""
    call = SuiteCall("autograder.suites.test_tensor_other:test_x", "tensor.other", "tensor:broadcast_operand",
                {"seed": 1, "shape": [5]}, 0.001)
    reaches = reached(KIT, [call])[0]
    assert {(reach.region.function, reach.via) for reach in reaches} >= {
        ("unbroadcast", f"Tensor.{method}") for method in ("__add__", "__mul__", "__sub__")}
    parts = {**declared(), "tensor.other": Part("tensor.other")}
    said = borrowed_stubs(KIT, parts, [call])
    assert said and all(line.startswith("autograder/suites/test_tensor_other.py: tensor:broadcast_operand "
                                        "runs unbroadcast of solutions/tensor.py through Tensor.__")
                        and line.endswith("add 'tensor.other' to also_costs in test_tensor_unbroadcast.py")
                        for line in said), said
    named = {**parts, "tensor.unbroadcast": Part("tensor.unbroadcast", also_costs=("tensor.other",))}
    assert borrowed_stubs(KIT, named, [call]) == []


def test_a_value_scenario_on_the_kits_own_reverse_pass_runs_no_backward_stub():
    call = SuiteCall("autograder.suites.test_value_mul:test_products", "value.mul", "arithmetic:products",
                {"seed": 1, "count": 3}, 0.001)
    assert {reach.region.part for reach in reached(KIT, [call])[0]} == {"value.mul"}


# -- a stub inside a method: its mutants and the probe ---------------------------------------------

def matmul_calls() -> list[SuiteCall]:
    """The scenario calls a suite of tensor.matmul makes, as docs/authoring.md writes it."""
    shapes = [{"a": [3, 4], "b": [4, 2]}, {"a": [1, 3], "b": [3, 5]}]
    return [SuiteCall("autograder.suites.test_tensor_matmul:test_a_matrix_times_a_matrix", "tensor.matmul",
                 "tensor:operation", {"expression": "a @ b", "shapes": shapes, "seed": 1}, 0.002),
            SuiteCall("autograder.suites.test_tensor_matmul:test_a_matrix_used_twice", "tensor.matmul",
                 "tensor:operation", {"expression": "(a @ b) @ (a @ c)", "seed": 2, "twice": True,
                                      "shapes": [{"a": [2, 3], "b": [3, 2], "c": [3, 2]}]}, 0.002)]


def test_the_mutants_of_a_stub_inside_a_method_change_its_region_alone(tmp_path):
    kit = with_matmul_stub(tmp_path / "kit")
    text = (kit / "solutions" / "tensor.py").read_text(encoding="utf-8")
    region = next(r for r in regions(text, kit / "solutions" / "tensor.py") if r.part == "tensor.matmul")
    mutants = generate(kit, ["tensor.matmul"])
    assert mutants and {m.stub for m in mutants} == {"Tensor.__matmul__"}
    assert len(mutants) <= edits_per_part(kit)["tensor.matmul"]
    for mutant in mutants:
        matcher = difflib.SequenceMatcher(a=text.splitlines(), b=mutant.source.splitlines(), autojunk=False)
        changed = [(first, last) for tag, first, last, _, _ in matcher.get_opcodes() if tag != "equal"]
        # lines first+1 .. last (1-based) changed: strictly between the region's markers
        assert all(region.first < first + 1 and last < region.last for first, last in changed), mutant.diff


def test_the_probe_replays_the_parts_own_scenarios(tmp_path):
    """The seeded programs never use @: the part's own scenario calls tell its mutants apart."""
    kit = with_matmul_stub(tmp_path / "kit")
    mutants = generate(kit, ["tensor.matmul"])
    blind = Probe(kit)
    assert not any(blind(m).changes for m in mutants)
    probe = Probe(kit, matmul_calls())
    verdicts = [probe(m) for m in mutants]
    assert sum(v.changes for v in verdicts) >= len(mutants) - 1
    assert all("tensor:operation (asked by test_" in v.evidence for v in verdicts if v.changes)


def test_the_probes_programs_all_run_on_the_reference():
    assert Probe().dropped == []


@pytest.mark.parametrize("name", GRADED)
def test_the_stubs_of_the_kit_as_shipped_have_mutants(name):
    assert any(m.engine == name for m in generate(KIT, per_stub=2))


# -- the scenarios any operation can use ----------------------------------------------------------------

def test_the_generic_scenarios_hold_the_reference_to_its_own_central_differences(reference):
    from autograder.inside.scenarios import tensor

    cases = tensor.operation(reference.tensor, "(a @ b) * c", [{"a": [3, 4], "b": [4, 2], "c": [2]},
                                                              {"a": [1, 2], "b": [2, 3], "c": [1, 3]}],
                             seed=5, dtype="float32", computed=True, twice=True)
    for case in cases:
        assert case["dtype"] == "float64"
        for name in ("a", "b", "c"):
            assert abs(case[f"grad_{name}"] - case[f"grad_{name}_fd"]).max() < 1e-6
            assert abs(case[f"grad_{name}_twice"] - 2 * case[f"grad_{name}"]).max() < 1e-12


@pytest.mark.engine("dual")
def test_the_generic_dual_scenario_holds_the_reference_to_its_own_central_differences(reference):
    from autograder.inside.scenarios import dual

    for case in dual.operation(reference.dual, "x.sin() * x + 2 * x.exp()", seed=3, count=4, low=-2.0,
                               high=2.0, der=0.5):
        assert abs(case["der"] - case["der_fd"]) < 1e-6 * (1 + abs(case["der"]))


def test_a_case_that_raises_is_that_cases_answer(reference):
    from autograder.inside.scenarios import tensor

    shapes = {"a": [3, 4], "b": [3, 4]}  # no product of these
    cases = tensor.operation(reference.tensor, "a @ b", [shapes], seed=1)
    assert cases[0]["raised"]["type"] == "ValueError" and cases[0]["inputs"]["shapes"] == shapes
