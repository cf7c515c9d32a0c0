"""The suites, checked rather than trusted, at the public seed and at every seed of SEEDS.

The reference answers every scenario the suites ask for; every number a test's docstring or
a snippet's comment states is one the reference gives (or an input the test chose, or a number
its code writes down); every snippet, filled in as a message fills it, runs in a fresh
interpreter in the handout's layout and prints the numbers of the case it shows; every number a
misconception's explanation states is computed here. The calls come from pytest's own report
(--junitxml) of grading the reference, where the `grade` fixture records each scenario a test
asked for.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from platforms.test_release import only_packages
from support import KIT, SEEDS
from support.autograding import autograde_folder

from autograder import judge, scenarios
from autograder.config import load
from autograder.misconceptions import CATALOGUE
from autograder.runner import scenario_key
from autograder.staff.check import (
    NUMBER,
    Call,
    calls_of,
    matches,
    numbers,
    numbers_in,
    part_of,
    scenario_literals,
    stated,
)
from autograder.stubs import regions, student_source

PLACEHOLDER = re.compile(r"\{\w+\}")


@pytest.fixture(scope="module", params=["public", *SEEDS])
def sealed(request, sealed_at):
    """The reference sealed at each seed in turn."""
    return sealed_at(request.param)


@pytest.fixture(scope="module")
def calls(sealed) -> list[Call]:
    found = calls_of(KIT, sealed.junit, sealed.path)
    assert len({c.test for c in found}) > 40, "the junit report names too few tests to check anything"
    return found


# -- the reference answers everything ----------------------------------------------------------------

def test_every_test_asks_for_a_scenario(calls, sealed):
    tested = {c.test for c in calls}
    reported = {f"{case.get('classname')}:{case.get('name').split('[')[0]}"
                for case in ElementTree.parse(sealed.junit).iter("testcase")}
    assert reported == tested


def test_the_reference_answers_every_scenario_it_is_asked(sealed):
    answers = json.loads(sealed.path.read_text(encoding="utf-8"))["answers"]
    def cases(answer: dict) -> list:
        return answer["observations"] if isinstance(answer["observations"], list) else []

    failed = {key: (a["failure"] or a["raised"]) for key, a in answers.items()
              if a["failure"] or a["raised"] or any(judge.is_raised(c) for c in cases(a))}
    assert not failed


def broken_reference(folder: Path) -> Path:
    """solutions/ with Dual.sin raising: the reference itself fails a scenario."""
    shutil.copytree(KIT / "solutions", folder)
    path = folder / "dual.py"
    text = path.read_text(encoding="utf-8")
    old = "        return Dual(math.sin(self.val), math.cos(self.val) * self.der)"
    assert old in text
    path.write_text(text.replace(old, "        raise ValueError('a broken reference')"), encoding="utf-8")
    return folder


def test_sealing_refuses_a_reference_that_fails(tmp_path):
    broken = broken_reference(tmp_path / "broken")
    seal = tmp_path / "reference.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           "--submission", str(broken), "--reference", str(broken), "--seal-reference",
                           str(seal)], cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode not in (0, 1), done.stdout[-2000:]
    assert not seal.exists()
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("not sealed: the reference failed dual:lesson, "), done.stdout[-2000:]
    assert "dual:sin_and_exp" in last and "value:" not in last


def test_a_failing_reference_is_the_graders_fault_in_one_line(tmp_path):
    broken = broken_reference(tmp_path / "broken")
    parts = autograde_folder(KIT / "solutions", tmp_path / "results.json", "--reference", str(broken))
    output = parts["dual"]["output"]
    assert "Not checked, a fault of the grader: the reference failed this scenario (ValueError" in output
    assert "Traceback" not in output and "def test_" not in output and "solutions" not in output
    assert parts["value.mul"]["score"] == parts["value.mul"]["max_score"]


# -- numbers stated in docstrings and comments ----------------------------------------------------------

def test_every_number_a_test_or_a_title_states_is_the_references_or_its_input(calls):
    """What `autograder check` says of the numbers: at every seed, each number a test's
    docstring (filled in as a message fills it) or a part's title states is one of its calls'
    arguments or the reference's answers, or one its code writes down."""
    assert not numbers(KIT, load(), calls, {call.test: part_of(KIT, call.test) for call in calls})


# -- snippets -------------------------------------------------------------------------------------------

def first_case(observations: object) -> object:
    return observations[0] if isinstance(observations, list) and observations \
        and isinstance(observations[0], dict) else observations


def shown_numbers(case: object) -> list[float]:
    """The numbers of a case a message can show: everything but its inputs and finite differences."""
    if isinstance(case, dict) and "ndarray" in case:
        return [float(x) for x in case["ndarray"]]
    if isinstance(case, dict):
        return [n for key, value in case.items() if key != "inputs" and not key.endswith("_fd")
                for n in shown_numbers(value)]
    if isinstance(case, list):
        return [n for item in case for n in shown_numbers(item)]
    return [float(case)] if type(case) in (int, float) else []


def missing(wanted: list[float], printed: list[float]) -> float | None:
    """The first wanted number that does not appear among the printed ones, in order; None if all do."""
    position = 0
    for number in wanted:
        # numpy prints 8 decimals, Python every digit: both are within 1e-8 of the number.
        while position < len(printed) and not math.isclose(printed[position], number, rel_tol=1e-6,
                                                           abs_tol=1e-8):
            position += 1
        if position == len(printed):
            return number
        position += 1
    return None


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> tuple[Path, dict]:
    """The handout's layout with the reference as the student's files, and an environment in
    which Python sees numpy, and no installed copy of the kit."""
    root = tmp_path_factory.mktemp("layout") / "handout"
    shutil.copytree(KIT / "solutions", root / "assignments")
    shutil.copytree(KIT / "autograder", root / "autograder",
                    ignore=shutil.ignore_patterns("__pycache__", "staff", "reference.json"))
    return root, only_packages(tmp_path_factory.mktemp("numpy-only"), "numpy")


def run_snippet(code: str, handout: tuple[Path, dict]) -> subprocess.CompletedProcess:
    root, env = handout
    return subprocess.run([sys.executable, "-c", code], cwd=root / "assignments", capture_output=True,
                          text=True, check=False, timeout=300, env={**os.environ, **env})


def snippet_problem(call: Call, snippet: str, layout: tuple[Path, dict]) -> str | None:
    """Why `snippet`, filled in as a message fills it, does not run in `layout` and print the
    numbers of the call's first case (or state only numbers it prints); None when it does."""
    case = first_case(call.observations)
    values = {**call.kwargs, **(case.get("inputs", {}) if isinstance(case, dict) else {})}
    code = judge.fill(snippet, values)
    if PLACEHOLDER.search(code):
        return f"{call.scenario}: unfilled {PLACEHOLDER.findall(code)}"
    done = run_snippet(code, layout)
    if done.returncode != 0:
        return f"{call.scenario} {call.kwargs}: exit {done.returncode}\n{code}\n{done.stderr[-1500:]}"
    printed = [float(n) for n in NUMBER.findall(done.stdout)]
    if (lost := missing(shown_numbers(case), printed)) is not None:
        return f"{call.scenario} {call.kwargs}: {lost} is not printed (in order) in {done.stdout[:600]!r}"
    known = printed + numbers_in(values) + scenario_literals(call.scenario) + [
        float(n) for line in code.splitlines() for n in stated(line.split("#")[0])]
    comments = " ".join(line.split("#", 1)[1] for line in code.splitlines() if "#" in line)
    wrong = [n for n in stated(comments) if not matches(n, known)]
    return f"{call.scenario}: the comments state {wrong}, which it does not print" if wrong else None


def test_every_snippet_runs_and_prints_the_numbers_of_its_case(calls, handout):
    distinct = {scenario_key(c.scenario, c.kwargs): c for c in calls}.values()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems = [p for p in pool.map(lambda c: snippet_problem(c, scenarios.scenario(c.scenario).snippet,
                                                                  handout), distinct) if p]
    assert not problems, "\n\n".join(problems)


def test_a_snippet_runs_the_kits_reverse_pass_where_backward_is_unwritten(calls, handout, tmp_path):
    """Where the kit runs the rules itself, a student whose backward() is still a stub is shown
    the snippet as the kit ran it (with its Tape): it runs, and prints the numbers of its case."""
    root, env = handout
    unwritten = tmp_path / "handout"
    shutil.copytree(root, unwritten)
    value = KIT / "solutions" / "value.py"
    source = value.read_text(encoding="utf-8")
    lines = source.splitlines()
    for region in reversed(regions(source, value)):
        if region.part != "value.backward":  # only backward() is a stub: the rules are the reference's
            del lines[region.last - 1]
            del lines[region.first - 1]
    (unwritten / "assignments" / "value.py").write_text(student_source("\n".join(lines), value))
    kit = [c for c in {scenario_key(c.scenario, c.kwargs): c for c in calls}.values()
           if scenarios.scenario(c.scenario).kit_reverse]
    assert len(kit) > 20
    def problem(call: Call) -> str | None:
        snippet = scenarios.kit_reverse_snippet(scenarios.scenario(call.scenario).snippet)
        return snippet_problem(call, snippet, (unwritten, env)) if snippet else f"{call.scenario}: no snippet"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems = [p for p in pool.map(problem, kit) if p]
    assert not problems, "\n\n".join(problems)


# -- what the misconceptions' explanations state ------------------------------------------------------

def naive_backward(root) -> None:
    """backward() with no topological sort: each node pushes and recurses at once."""
    def push(node):
        node._backward()
        for parent in node._prev:
            push(parent)
    root.grad = 1.0
    push(root)


def computed_hints(reference) -> dict[str, set[float]]:
    """Each misconception's numbers, computed from the reference (and the shapes it names)."""
    Value, Dual = reference.value.Value, reference.dual.Dual
    x, naive = Value(2.0), Value(2.0)
    (x * x * (x * x)).backward()
    naive_square = naive * naive
    naive_backward(naive_square * naive_square)
    a, b, c = Value(2.0), Value(3.0), Value(4.0)
    lesson = a * b + a * c
    grads = []
    for _ in range(3):
        lesson.backward()
        grads.append(a.grad)
    positive, negative = Value(1.5), Value(-1.5)
    positive.relu().backward()
    negative.relu().backward()
    root = Value(0.5).exp()
    root.backward()
    root.backward()
    unseeded_leaf = Value(3.0)
    unseeded = unseeded_leaf * Value(2.0)
    unseeded._backward()  # the rule runs, the root's gradient left at 0
    # exp(2x) overflows once 2x passes the logarithm of the largest float.
    threshold = math.log(sys.float_info.max) / 2
    unbroadcast = reference.tensor.unbroadcast
    column = unbroadcast(reference.tensor.np.ones((4, 5)), (4, 1)).shape
    ones = reference.tensor.np.ones((2, 3))
    row = unbroadcast(ones, (3,)).shape
    return {
        "no-topological-order": {2.0, x.grad, naive.grad},
        "backward-clears": {a.data, b.data, c.data, *grads},
        "relu-gate": {positive.grad, negative.grad},
        "root-accumulates": {root.grad},
        "backward-runs-no-rule": {root.grad},
        "root-not-seeded": {root.grad, unseeded_leaf.grad},
        "tanh-overflow": {round(threshold, 1)},
        "unbroadcast-no-keepdims": set(map(float, column)),
        "unbroadcast-leading-axes": {3.0, 2.0, *map(float, (1, *row))},
        # summed over axis 0 (the leading one), or over the last, which leaves (2,)
        "unbroadcast-wrong-axis": {0.0, *map(float, row), *map(float, ones.sum(axis=-1).shape), 2.0, 3.0},
        "dual-constant-derivative": {Dual(3.0).der, Dual(1.0, 1.0).der},
        "dual-number-not-wrapped": {Dual(2.0).der},
    }


def test_every_number_a_misconception_states_is_computed(reference):
    computed = computed_hints(reference)
    assert computed["no-topological-order"] >= {32.0, 64.0}
    assert computed["backward-clears"] >= {7.0, 21.0, 42.0}
    assert computed["tanh-overflow"] == {354.9}
    for misconception_id, entry in CATALOGUE.items():
        prose = re.sub(r"`[^`]*`", "", f"{entry.title} {entry.idea}")  # code in backticks is not a claim
        numbers = stated(prose)
        if not numbers:
            continue
        assert misconception_id in computed, f"{misconception_id} states {numbers}; compute them here"
        wrong = [n for n in numbers if not matches(n, sorted(computed[misconception_id]))]
        assert not wrong, f"{misconception_id} states {wrong}, which the reference does not give"


def test_the_snippet_rule_reads_numbers_as_written():
    assert stated("a 64-128-10 network, (4, 1), x = -2.5 and 2x, dL/dx = 1001.") == \
        ["64", "128", "10", "4", "1", "-2.5", "1001"]
    assert matches("0.001", [0.001024]) and not matches("0.01", [0.001024])
    assert missing([1.0, 2.0], [0.0, 1.0, 5.0, 2.0]) is None and missing([2.0, 1.0], [1.0, 2.0]) == 1.0
    assert stated("a * b**-1 and x^4 and 2 ** 3") == ["2"]


# -- what a scenario declares ----------------------------------------------------------------------------

def test_every_scenario_runs_the_reverse_pass_it_declares(sealed_reference, reference):
    """A scenario declared `reverse="kit"` never calls backward() (a bug there costs it nothing);
    one declared "backward" always does; one declared "none" has no graph to run back."""
    calls = {}
    for case in ElementTree.parse(sealed_reference.junit).iter("testcase"):
        for prop in case.iter("property"):
            if prop.get("name") == "scenario":
                scenario_id, kwargs = json.loads(prop.get("value"))
                calls.setdefault(scenario_id, kwargs)
    declared = {s.id: s for s in scenarios.every_scenario()}
    assert set(calls) <= set(declared), "the suites ask for a scenario nothing declares"
    backwards = []
    engines = {"value": reference.value.Value, "tensor": reference.tensor.Tensor}
    originals = {engine: cls.backward for engine, cls in engines.items()}

    def counting(original):
        def backward(self, *args, **kwargs):
            backwards.append(1)
            return original(self, *args, **kwargs)
        return backward

    tape = importlib.import_module("autograder.inside.scenarios.value").Tape
    taped = []
    reverse = tape.reverse

    def counted_tape(self, *args, **kwargs):
        taped.append(1)
        return reverse(self, *args, **kwargs)

    wrong = []
    try:
        for engine, cls in engines.items():
            cls.backward = counting(originals[engine])
        tape.reverse = counted_tape
        for scenario_id, kwargs in calls.items():
            module_name, _, name = scenario_id.partition(":")
            backwards.clear()
            taped.clear()
            function = getattr(importlib.import_module(f"autograder.inside.scenarios.{module_name}"), name)
            assert function.engine == declared[scenario_id].engine
            function(getattr(reference, function.engine), **kwargs)
            ran = "backward" if backwards else "kit" if taped else "none"
            if declared[scenario_id].reverse != ran:
                wrong.append(f"{scenario_id}: declared {declared[scenario_id].reverse}, ran {ran}")
    finally:
        for engine, cls in engines.items():
            cls.backward = originals[engine]
        tape.reverse = reverse
    assert not wrong
