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

import ast
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
from support import KIT, SEEDS
from support.releases import only_packages
from support.shape import GRADED

from autograder import judge, scenario_sources, scoring
from autograder.answers import Tolerance, is_raised
from autograder.check_results import fill
from autograder.config import load
from autograder.junit_properties import recorded_calls
from autograder.misconceptions import CATALOGUE
from autograder.runner import scenario_key
from autograder.staff.check import NUMBER, matches, numbers, numbers_in, scenario_literals, stated
from autograder.staff.reference_run import Call, calls_of, part_of
from autograder.stubs import regions, student_source
from autograder.worker import Reply

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
              if a["failure"] or a["raised"] or any(is_raised(c) for c in cases(a))}
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


@pytest.mark.engine("dual")  # the reference's fault is made in Dual.sin
def test_sealing_refuses_a_reference_that_fails(tmp_path):
    broken = broken_reference(tmp_path / "broken")
    seal = tmp_path / "reference.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           f"--submission={broken}", f"--reference={broken}", f"--seal-reference={seal}"],
                           cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode not in (0, 1), done.stdout[-2000:]
    assert not seal.exists()
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("not sealed: the reference failed dual:lesson, "), done.stdout[-2000:]
    assert "dual:sin_and_exp" in last and "value:" not in last


@pytest.mark.engine("dual")  # the reference's fault is made in Dual.sin
def test_a_failing_reference_is_the_graders_fault_in_one_line(tmp_path):
    """...and never a grade: the grading has no score (tests/hostile/test_grader_faults.py)."""
    broken = broken_reference(tmp_path / "broken")
    results = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           "--submission=" + str(KIT / "solutions"), f"--reference={broken}",
                           f"--results-json={results}"], cwd=KIT, capture_output=True, text=True,
                          check=False)
    assert done.returncode == scoring.NOT_GRADED_EXIT, done.stdout[-2000:]
    output = json.loads(results.read_text(encoding="utf-8"))["output"]
    said = "Not checked, a fault of the grader: the reference failed this scenario (raised ValueError"
    assert said in output and said in done.stderr
    assert "Traceback" not in output and "def test_" not in output and "solutions" not in output


def test_a_reference_that_raises_in_a_case_is_named_with_the_case_and_its_range():
    """Value.log at a negative input raises ValueError: the staff see which case raised, what it
    said, and the range its inputs were drawn from, not an empty `ValueError `."""
    expected = Reply(observations=[
        {"inputs": {"a": 0.5}, "data": 0.1, "grad": 2.0, "grad_fd": 2.0},
        {"inputs": {"a": -1.25},
         "raised": {"type": "ValueError", "message": "math domain error", "where": ""}}])
    kwargs = {"method": "log", "seed": 1, "count": 10, "low": -2.0, "high": 2.0}
    said = judge.reference_failure(expected, kwargs)
    assert said.startswith("the reference failed this scenario (raised ValueError: math domain error) in "
                           "its case a = -1.25, drawn from low = -2.0 to high = 2.0: keep the range where "
                           "the reference is defined (LOW and HIGH"), said
    with pytest.raises(judge.StaffError, match="in its case a = -1.25"):
        judge.judge(test="t", part="p", situation="", snippet="", kwargs=kwargs, expected=expected,
                    got=expected, suspects={}, tolerance=Tolerance(0, 0), fd_tolerance=Tolerance(0, 0),
                    timeout=1)


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
    code = fill(snippet, values)
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
        problems = [p for p in pool.map(lambda c: snippet_problem(
            c, scenario_sources.scenario(c.scenario).snippet, handout), distinct) if p]
    assert not problems, "\n\n".join(problems)


def test_every_snippet_runs_while_backward_is_a_stub(calls, handout, tmp_path):
    """A part that does not grade backward() is graded, and shown, without it: with only
    backward() still a stub, the snippet of every scenario whose reverse pass is the kit's (or
    that has none) runs, and prints the numbers of its case."""
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
    # (The check of the given operations is left out: its message names the operation that
    # changed, and shows no snippet.)
    free = [c for c in {scenario_key(c.scenario, c.kwargs): c for c in calls}.values()
            if scenario_sources.scenario(c.scenario).reverse != "backward"
            and c.scenario != "value:given_operations"]
    assert len(free) > 40

    def problem(call: Call) -> str | None:
        return snippet_problem(call, scenario_sources.scenario(call.scenario).snippet, (unwritten, env))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems = [p for p in pool.map(problem, free) if p]
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
    Value = reference.value.Value
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
    hints = {
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
    }
    if "dual" in GRADED:  # the misconceptions of dual are in the catalogue while a part grades it
        Dual = reference.dual.Dual
        hints["dual-constant-derivative"] = {Dual(3.0).der, Dual(1.0, 1.0).der}
        hints["dual-number-not-wrapped"] = {Dual(2.0).der}
    return hints


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
    # numpy writes an array with small entries in scientific form, a sign on every exponent
    assert stated("[[-2.71277284e+00 -1.14694472e-03] 1e+20]") == \
        ["-2.71277284e+00", "-1.14694472e-03", "1e+20"]


# -- what a scenario declares ----------------------------------------------------------------------------

def test_every_scenario_runs_the_reverse_pass_it_declares(sealed_reference, reference):
    """A scenario declared `reverse="kit"` never calls backward() (a bug there costs it nothing);
    one declared "backward" always does; one declared "none" has no graph to run back."""
    calls = {}
    for call in recorded_calls(sealed_reference.junit):
        calls.setdefault(call.scenario, call.kwargs)
    declared = {s.id: s for s in scenario_sources.every_scenario()}
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


# -- a snippet pasted into Python's prompt -------------------------------------------------------

PASTE = r"""
import codeop, json, sys
compiler, problems = codeop.CommandCompiler(), []
for name, snippet in json.load(sys.stdin):
    buffer = []
    for number, line in enumerate(snippet.splitlines() + [""], 1):
        buffer.append(line)
        try:
            if compiler("\n".join(buffer), "<stdin>", "single") is not None:
                buffer = []  # the prompt runs what it has, and starts again
        except SyntaxError as error:
            problems.append(f"{name}, line {number}: {error.msg}")
            buffer = []
print(json.dumps(problems))
"""
ECHO_FREE = {"print", "backward", "_backward", "zero_grad", "append", "setrecursionlimit"}


def pasted(python: str, snippets: list[tuple[str, str]]) -> list[str]:
    """What goes wrong when each snippet is pasted line by line into `python`'s prompt."""
    done = subprocess.run([python, "-c", PASTE], input=json.dumps(snippets), capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def echoes(snippet: str) -> list[str]:
    """The top-level expressions of a snippet that the prompt would print and a file would not."""
    found = []
    for node in ast.parse(snippet).body:
        if isinstance(node, ast.Expr):
            call = node.value
            name = getattr(getattr(call, "func", None), "attr", None) or getattr(getattr(call, "func", None),
                                                                                 "id", None)
            if not isinstance(call, ast.Call) or name not in ECHO_FREE:
                found.append(ast.unparse(node))
    return found


def test_every_snippet_pastes_into_every_python_prompt(calls):
    """Pasted line by line into the interactive prompt of every Python from 3.9 up that the
    machine has (pyenv's, and this one), each snippet, and the recorded form of an operation's,
    is what it is as a file: a compound statement ends with a blank line before what follows
    it, and no bare expression prints at the prompt alone."""
    snippets = []
    for call in {scenario_key(c.scenario, c.kwargs): c for c in calls}.values():
        case = first_case(call.observations)
        values = {**call.kwargs, **(case.get("inputs", {}) if isinstance(case, dict) else {})}
        snippet = scenario_sources.scenario(call.scenario).snippet
        snippets.append((call.scenario, fill(snippet, values)))
        if recorded := scenario_sources.recorded_snippet(snippet):
            snippets.append((f"{call.scenario} (recorded)", fill(recorded, values)))
    assert not [f"{name}: {echo}" for name, code in snippets for echo in echoes(code)]
    versions = [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.*/bin/python3"))
                if (match := re.search(r"3\.(\d+)", str(p))) and int(match[1]) >= 9] or [sys.executable]
    problems = {python: pasted(python, snippets) for python in {*versions, sys.executable}}
    assert not any(problems.values()), problems
