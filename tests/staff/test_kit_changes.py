"""The changes docs/authoring.md walks through that reach past one suite, each on a copy of the kit:
an operation of any engine as a part (Tensor.__matmul__'s rule inside its _backward, Tensor.sum,
Value.log, Value.__pow__), an engine removed, a bigger training task.

Each either works from `autograder check` to every release (and `autograder mutate`), or is
refused by check, one line each naming the file and the fix; no command ends in a traceback
(`autograder` of test_authoring.py asserts that of every run). Tensor.sum and Tensor.__matmul__
go as Value.__pow__ goes, a new part from check to every release and mutate: only `--exhaustive`
runs them, and the docs' second mutation score of Value.__pow__ (a suite with no power of a power).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import KIT
from support.kit_copy import (
    autograder,
    consistent,
    copy_of_the_kit,
    every_release,
    problems,
    remove_dual,
    set_key,
    totals,
    warnings,
)

from staff.test_check import MATMUL_RULE, MATMUL_STUB

pytestmark = pytest.mark.slow  # each change grades the reference, and builds every release, more than once


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    return copy_of_the_kit(tmp_path / "kit")


def add_table(kit: Path, table: str) -> None:
    """A part's table in grading.toml, after the other parts."""
    toml = kit / "grading.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("[tolerances]", table + "\n[tolerances]", 1),
                    encoding="utf-8")


def mark(kit: Path, engine: str, old: str, new: str) -> None:
    """Replace `old` with `new` (the same code, marked) in solutions/<engine>.py."""
    path = kit / "solutions" / f"{engine}.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def suite(kit: Path, name: str, text: str) -> Path:
    path = kit / "autograder" / "suites" / name
    path.write_text(text, encoding="utf-8")
    return path


# -- Tensor.__matmul__'s rule -------------------------------------------------------------------------

MATMUL_SUITE = '''"""tensor.matmul: the gradients of a matrix product, a @ b, against central differences."""

from autograder.parts import Part

PART = Part("tensor.matmul", also_costs=("tensor.training",))


def test_a_matrix_times_a_matrix(grade, ask):
    """(3, 4) @ (4, 2), (1, 3) @ (3, 5) and (2, 2) @ (2, 1): each operand's gradient."""
    grade("tensor:operation", expression="a @ b", seed=ask.seed(1),
          shapes=[{"a": [3, 4], "b": [4, 2]}, {"a": [1, 3], "b": [3, 5]}, {"a": [2, 2], "b": [2, 1]}])


def test_operands_that_are_computed(grade, ask):
    """(3, 4) @ (4, 2) of computed operands: the gradient must reach the leaves."""
    grade("tensor:operation", expression="a @ b", seed=ask.seed(2), computed=True,
          shapes=[{"a": [3, 4], "b": [4, 2]}])


def test_a_matrix_used_twice(grade, ask):
    """`(a @ b) @ (a @ c)`, backward twice: a collects both contributions, and they add up."""
    grade("tensor:operation", expression="(a @ b) @ (a @ c)", seed=ask.seed(3), twice=True,
          shapes=[{"a": [2, 3], "b": [3, 2], "c": [3, 2]}])
'''
MATMUL_TABLE = '''[parts."tensor.matmul"]
title = "Tensor.__matmul__: the gradients of a matrix product"
points = 6
visibility = "visible"
'''


@pytest.mark.exhaustive  # test_pow_... takes a new part from check to every release and mutate too
def test_a_tensor_rule_inside_backward_as_a_part_works_from_check_to_every_release(kit, tmp_path):
    """check names the training run that borrows the stub until also_costs says so; then every
    release holds it (the nbgrader notebook as an answer cell), and mutate kills its mutants."""
    mark(kit, "tensor", MATMUL_RULE, MATMUL_STUB)
    assert autograder(kit, "stubs").returncode == 0
    unnamed = MATMUL_SUITE.replace(', also_costs=("tensor.training",)', "")
    written = suite(kit, "test_tensor_matmul.py", unnamed)
    add_table(kit, MATMUL_TABLE)
    said = problems(autograder(kit, "check"))
    assert said == ["autograder/suites/test_tensor_training.py: training:train_digits runs Tensor.__matmul__ "
                    "of solutions/tensor.py through Tensor.backward, the stub of tensor.matmul, so a bug "
                    "there would cost tensor.training: build the scenario from given operations, or add "
                    "'tensor.training' to also_costs in test_tensor_matmul.py"], said
    written.write_text(MATMUL_SUITE, encoding="utf-8")
    consistent(kit)
    built = every_release(kit, tmp_path / "out")
    notebook = json.loads((built["nbgrader"] / "tensor.ipynb").read_text(encoding="utf-8"))
    cells = [cell for cell in notebook["cells"] if "def __matmul__" in "".join(cell["source"])]
    assert len(cells) == 1 and cells[0]["metadata"]["nbgrader"]["solution"], cells
    assert not cells[0]["metadata"]["nbgrader"]["locked"]
    done = autograder(kit, "mutate", "tensor.matmul", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("mutation score: 16 of 16 behaviour-changing mutants killed (100.0 %); 16 generated, 0 equivalent"
            in done.stdout), done.stdout  # as docs/authoring.md says


# -- Tensor.sum, Value.log, Value.__pow__ ---------------------------------------------------------------

SUM_DOCSTRING = '''        """Return the sum of the entries over `axis` (all of them by default).

        Rule: each summed entry has derivative 1: put back the axes the sum removed (unless
        keepdims), then broadcast to self's shape. Accumulate with +=.
        """
        # BEGIN SOLUTION tensor.sum: a sum over some axes, and its gradient
'''
SUM_SUITE = '''"""tensor.sum: Tensor.sum, each gradient against central differences."""

from autograder.parts import Part

PART = Part("tensor.sum")

SHAPES = [{"a": [4, 3]}, {"a": [2, 3, 4]}, {"a": [5]}]


def test_a_sum_of_every_entry(grade, ask):
    """`a.sum()` of a (4, 3), a (2, 3, 4) and a (5,) tensor, backward twice."""
    grade("tensor:operation", expression="a.sum()", seed=ask.seed(1), shapes=SHAPES, twice=True)


def test_a_sum_over_one_axis(grade, ask):
    """`a.sum(axis=0)`: the gradient puts back the axis the sum removed."""
    grade("tensor:operation", expression="a.sum(axis=0)", seed=ask.seed(2), shapes=SHAPES)


def test_a_sum_that_keeps_its_axes(grade, ask):
    """`a.sum(axis=-1, keepdims=True)` of computed operands."""
    grade("tensor:operation", expression="a.sum(axis=-1, keepdims=True)", seed=ask.seed(3), shapes=SHAPES,
          computed=True)


def test_a_sum_of_whole_numbers(grade, ask):
    """`a.sum(axis=1)` of a tensor made from int64 entries in [{low}, {high}]: the engine keeps float64."""
    grade("tensor:operation", expression="a.sum(axis=1)", seed=ask.seed(4), shapes=[{"a": [3, 4]}],
          dtype="int64", low=-9.0, high=9.0)
'''


@pytest.mark.exhaustive  # test_pow_... takes a new part from check to every release and mutate too
def test_tensor_sum_as_a_part_works_from_check_to_every_release(kit, tmp_path):
    """No scenario of another part sums through Tensor.sum (broadcast_operand hands backward its
    upstream gradient), so the part is consistent as soon as it is written; mutate kills every
    mutant, and without the test that calls backward twice lists `self.grad = ...` as a survivor."""
    path = kit / "solutions" / "tensor.py"
    text = path.read_text(encoding="utf-8")
    start = text.index('        out = Tensor(self.data.sum(axis=axis, keepdims=keepdims), (self,), "sum")\n')
    end = text.index("        return out\n", start) + len("        return out\n")
    path.write_text(text[:start] + SUM_DOCSTRING + text[start:end] + "        # END SOLUTION\n" + text[end:],
                    encoding="utf-8")
    assert autograder(kit, "stubs").returncode == 0
    suite(kit, "test_tensor_sum.py", SUM_SUITE)
    add_table(kit, '[parts."tensor.sum"]\ntitle = "Tensor.sum: a sum and its gradient"\npoints = 4\n'
                   'visibility = "visible"\n')
    consistent(kit)
    every_release(kit, tmp_path / "out")
    done = autograder(kit, "mutate", "tensor.sum", "--jobs", "2")
    assert "mutation score: 31 of 31 behaviour-changing mutants killed" in done.stdout, done.stdout
    once = SUM_SUITE.replace(", backward twice.", ".").replace("shapes=SHAPES, twice=True)", "shapes=SHAPES)")
    assert "twice" not in once
    suite(kit, "test_tensor_sum.py", once)
    done = autograder(kit, "mutate", "tensor.sum", "--jobs", "2")
    assert "mutation score: 30 of 31 behaviour-changing mutants killed" in done.stdout, done.stdout
    assert "self.grad += np.broadcast_to(grad, self.shape) -> self.grad = np.broadcast_to(grad, self.shape)" \
        in done.stdout


LOG_FAILS = re.compile(
    r"autograder/suites/test_value_log\.py, test_log_\w+ \(value:method_\w+\): the reference failed this "
    r"scenario \(raised ValueError: math domain error\) in its case a = -[\d.]+, drawn from low = -2\.0 to "
    r"high = 2\.0: keep the "
    r"range where the reference is defined \(LOW and HIGH at the top of a suite that `autograder part new` "
    r"wrote\)")


def test_log_as_a_part_names_the_case_and_the_range_its_reference_fails_in(kit):
    done = autograder(kit, "part", "new", "value.log", "Value.log", "--points", "4", "--title",
                      "Value.log: the derivative 1/x", "--todo", "the natural log and its derivative")
    assert done.returncode == 0, done.stdout
    solution = kit / "solutions" / "value.py"
    docstring = '        """Return log(self), for self above 0. Rule: d log(x)/dx = 1/x; add with +=."""\n'
    solution.write_text(solution.read_text(encoding="utf-8").replace(
        "    def log(self) -> Value:\n", "    def log(self) -> Value:\n" + docstring), encoding="utf-8")
    assert autograder(kit, "stubs").returncode == 0
    said = problems(autograder(kit, "check"))
    assert all(LOG_FAILS.fullmatch(line) for line in said), said
    assert [line.split(", ")[1].split(" ")[0] for line in said] == [  # as docs/authoring.md says
        "test_log_at_the_root", "test_log_with_an_upstream_gradient", "test_log_of_computed_values"], said
    written = kit / "autograder" / "suites" / "test_value_log.py"
    text = written.read_text(encoding="utf-8")
    assert text.count("LOW, HIGH = -2.0, 2.0") == 1
    written.write_text(text.replace("LOW, HIGH = -2.0, 2.0", "LOW, HIGH = 0.2, 3.0"), encoding="utf-8")
    consistent(kit)
    assert totals(kit, "solutions") == (106.0, 104.0)


POW_HEAD = '''    def __pow__(self, k: float) -> Value:
        """Return self ** k, for a plain number k. Power rule: d(x**k)/dx = k * x**(k - 1);
        accumulate with +=."""
        # BEGIN SOLUTION value.pow: the power rule, for a plain-number exponent
'''
POW_SUITE = '''"""value.pow: Value.__pow__, the power rule for a plain-number exponent."""

from autograder.parts import Part

PART = Part("value.pow", also_costs=("value.backward", "value.zero_grad"))


def test_powers_of_two_values(grade, ask):
    """`a ** 3`, `a ** 0.5`, `b ** -1`, `(-a) ** 2` and `(a ** 2) ** 3` (the inner power's rule gets
    the outer one's gradient), at a = {a} and b = {b}: each value, and the gradient each leaf
    collects from all of them."""
    grade("value:given_operations", a=ask.number(1.5, 0.5, 3.0), b=ask.number(2.0, 0.5, 3.0),
          checks={"**": ["a ** 3", "a ** 0.5", "b ** -1", "Value(-a.data) ** 2", "(a ** 2) ** 3"]})
'''
POW_ALSO_COSTS = ', also_costs=("value.backward", "value.zero_grad")'
BORROWS_POW = re.compile(r"autograder/suites/test_value_(\w+)\.py: backward:(\w+) runs Value\.__pow__ of "
                         r"solutions/value\.py, the stub of value\.pow, so a bug there would cost "
                         r"value\.(\w+): build the scenario from given operations, or add 'value\.(\w+)' to "
                         r"also_costs in test_value_pow\.py")
# What docs/authoring.md says check names: the lessons' loops and graphs, built from `+` and `**`.
BORROWERS_OF_POW = {
    "backward": ["loop_without_zero_grad", "mixed_graph", "rebuilt_graph", "shared_node"],
    "zero_grad": ["loop_correct", "loop_zero_grad_after_backward", "zero_grad_of_intermediate",
                  "zero_grad_reach", "zero_grad_then_backward"]}


def pow_marked(kit: Path) -> None:
    """docs/authoring.md's first step: Value.__pow__'s body marked for part value.pow."""
    path = kit / "solutions" / "value.py"
    text = path.read_text(encoding="utf-8")
    start = text.index("    def __pow__(self, k: float) -> Value:\n")
    end = text.index("        return out\n", start) + len("        return out\n")
    body = text[start:end].split("\n", 1)[1]
    marked = text[:start] + POW_HEAD + body + "        # END SOLUTION\n" + text[end:]
    path.write_text(marked, encoding="utf-8")
    assert autograder(kit, "stubs").returncode == 0


def pow_table(kit: Path) -> None:
    add_table(kit, '[parts."value.pow"]\ntitle = "Value.__pow__: the power rule"\npoints = 4\n'
                   'visibility = "visible"\n')


def test_pow_as_a_part_goes_as_the_docs_say_from_nine_borrowers_to_every_mutant_killed(kit, tmp_path):
    """docs/authoring.md's `Value.__pow__`, step by step: marked before its suite exists, check names
    the suite to write; with the suite but not its also_costs, check names the nine scenarios of
    value.backward and value.zero_grad that build from `**` and the release refuses; with them the
    kit is consistent, and mutate kills 32 of 32."""
    pow_marked(kit)
    assert problems(autograder(kit, "check")) == [
        "solutions/: value.py Value.__pow__ marked for part 'value.pow', which no suite declares; fix the "
        "marker, or write its suite, autograder/suites/test_value_pow.py, and its table in grading.toml"]
    written = suite(kit, "test_value_pow.py", POW_SUITE.replace(POW_ALSO_COSTS, ""))
    pow_table(kit)
    said = problems(autograder(kit, "check"))
    named: dict[str, list[str]] = {}
    for line in said:
        match = BORROWS_POW.fullmatch(line)
        assert match and match[1] == match[3] == match[4], line
        named.setdefault(match[1], []).append(match[2])
    assert named == BORROWERS_OF_POW, said
    release = autograder(kit, "release", "student", "-o", str(tmp_path / "handout"))
    assert release.returncode == 1 and said[0] in release.stderr
    assert not (tmp_path / "handout").exists()
    written.write_text(POW_SUITE, encoding="utf-8")
    consistent(kit)
    done = autograder(kit, "mutate", "value.pow", "--jobs", "2")
    assert "mutation score: 32 of 32 behaviour-changing mutants killed" in done.stdout, done.stdout


@pytest.mark.exhaustive  # the test above takes the same part to mutate: this is the docs' second score
def test_pow_without_a_power_of_a_power_leaves_the_mutant_the_docs_name(kit):
    """docs/authoring.md: without `(a ** 2) ** 3`, every power is at the root of its expression,
    where the upstream gradient is 1, so `* out.grad` mutated to `/ out.grad` survives: 31 of 32."""
    pow_marked(kit)
    pow_table(kit)
    nested = " and `(a ** 2) ** 3` (the inner power's rule gets\n    the outer one's gradient),"
    every_power_at_a_root = POW_SUITE.replace(', "(a ** 2) ** 3"', "").replace(nested, ",")
    assert "(a ** 2)" not in every_power_at_a_root
    suite(kit, "test_value_pow.py", every_power_at_a_root)
    done = autograder(kit, "mutate", "value.pow", "--jobs", "2")
    assert "mutation score: 31 of 32 behaviour-changing mutants killed" in done.stdout, done.stdout
    assert "self.grad += k * self.data ** (k - 1) / out.grad" in done.stdout


# -- an engine removed, a bigger task -------------------------------------------------------------------

def test_removing_the_dual_engine_works_from_check_to_every_release_and_mutate(kit, tmp_path):
    """As docs/authoring.md says: `part given dual`, check, the two files removed. Then check,
    every release (none ships a scenario of dual), mutate, `autograder replicas`, the example
    class and `autograder bulk` on it all work, in the copy, with its own package; and every test
    module of the kit's own imports there (none reads a file of dual), a test about dual skipped
    with the reason."""
    remove_dual(kit)
    consistent(kit)
    built = every_release(kit, tmp_path / "out")
    assert sorted(path.name for path in built["nbgrader"].iterdir()) == ["tensor.ipynb", "value.ipynb"]
    readme = (built["student"] / "README.md").read_text(encoding="utf-8")
    assert "two small automatic-differentiation engines" in readme and "dual" not in readme
    for target in ("student", "classroom"):
        assert not list(built[target].rglob("dual*.py")), target
    with zipfile.ZipFile(built["gradescope"]) as bundle:
        assert not [name for name in bundle.namelist() if Path(name).name.startswith("dual")]
    done = autograder(kit, "mutate", "value.zero_grad", "--jobs", "2")
    assert done.returncode == 0 and "mutation score: " in done.stdout, done.stdout + done.stderr
    done = autograder(kit, "replicas", "--seeds", "1")
    assert done.returncode == 0 and "recorded 6 of 6 replicas" in done.stdout, done.stdout + done.stderr
    shutil.copytree(KIT / "examples", kit / "examples", ignore=shutil.ignore_patterns("class", "__pycache__"))
    made = subprocess.run([sys.executable, "examples/make_class.py"], cwd=kit, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(kit)}, check=False)
    assert made.returncode == 0, made.stdout + made.stderr
    done = autograder(kit, "bulk", "examples/class", "-o", str(tmp_path / "graded"))
    assert done.returncode == 0, done.stdout + done.stderr
    with (tmp_path / "graded" / "grades.csv").open(newline="", encoding="utf-8") as grades:
        graded = {row["student"]: row for row in csv.DictReader(grades)}
    assert "dual" not in graded["alice"] and float(graded["alice"]["total"]) == 92  # 102 less dual's 10
    pytest_in_copy = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    collected = subprocess.run([*pytest_in_copy, "--collect-only", "tests"], cwd=kit, capture_output=True,
                               text=True, check=False)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert " tests collected" in collected.stdout and "error" not in collected.stdout.splitlines()[-1]
    about_dual = subprocess.run([*pytest_in_copy, "-rs", "tests/grading/test_lessons.py", "-k", "dual"],
                                cwd=kit, capture_output=True, text=True, check=False)
    assert about_dual.returncode == 0, about_dual.stdout[-3000:]
    assert ("about the dual engine, which this kit does not grade: no part of grading.toml starts with 'dual'"
            in about_dual.stdout) and " passed" not in about_dual.stdout


def test_a_bigger_network_is_priced_in_the_cost_report(kit, tmp_path):
    """Moons with 2-16-16-1 for 30 steps, its title and its suite's prose brought up to date: check
    warns that value.training costs more than ten times all the other parts, and that a class of
    100 passes a budget of a minute; the releases say so too, and still build."""
    path = kit / "autograder" / "suites" / "test_value_training.py"
    text = path.read_text(encoding="utf-8").replace("steps=5", "steps=30").replace("hidden=8", "hidden=16")
    path.write_text(text.replace("for 5\nsteps", "for 30\nsteps"), encoding="utf-8")
    toml = kit / "grading.toml"
    set_key(toml, 'parts."value.training"', "title", '"Training a 2-16-16-1 MLP on make_moons"')
    set_key(toml, "budget", "class_of_100_minutes", "1")
    done = autograder(kit, "check")
    assert done.returncode == 0 and not problems(done), done.stdout
    said = warnings(done)
    assert len(said) == 2, said
    assert said[0].startswith("part 'value.training' costs ") and "times all the other parts" in said[0]
    assert said[1].startswith("a class of 100 would take about ") and "past the budget of 1 minutes" in \
        said[1]
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.startswith("  value.")}
    assert float(rows["value.training"][2]) > 10 * float(rows["value.mul"][2])
    release = autograder(kit, "release", "student", "-o", str(tmp_path / "handout"))
    assert release.returncode == 0 and "warning: part 'value.training' costs" in release.stderr
