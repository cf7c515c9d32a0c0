"""Messages a student can act on: the stub that raised, the given code that changed, a missing
file, the very case that failed, and a score table that is the last thing printed."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import KIT
from support.autograding import autograde_folder, printed_run
from support.corpus import BUGS, CORPUS, GIVEN_CHANGES, Edit, Submission, build

from autograder import judge, scenario_sources
from autograder.config import load
from autograder.parts import start_with
from autograder.stubs import OPERATORS, handout

PARTS = load().parts


def failures(submission: Path, tmp_path: Path, sealed: Path) -> tuple[dict[str, dict], dict[str, str]]:
    """results.json's entries by part, and every failed test's message by test id."""
    junit = tmp_path / f"{submission.name}.xml"
    parts = autograde_folder(submission, tmp_path / f"{submission.name}.json", f"--reference={sealed}",
                             f"--junitxml={junit}")
    messages = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        failure = case.find("failure")
        if failure is not None:
            test = f"{case.get('classname').rsplit('.', 1)[1]}::{case.get('name')}"
            text = failure.text or ""  # pytest's report opens with the part the test counts for
            messages[test] = text.split("\n", 1)[1] if text.startswith("[counts for ") else text
    return parts, messages


def test_the_stub_that_raised_is_named(sealed_reference, tmp_path):
    folder = tmp_path / "mul-only"
    shutil.copytree(KIT / "assignments", folder)
    done = (KIT / "solutions" / "value.py").read_text(encoding="utf-8")
    stub = (folder / "value.py").read_text(encoding="utf-8")
    start, end = done.index("    def __mul__"), done.index("    def __pow__")
    stub_start, stub_end = stub.index("    def __mul__"), stub.index("    def __pow__")
    (folder / "value.py").write_text(stub[:stub_start] + done[start:end] + stub[stub_end:], encoding="utf-8")
    parts, messages = failures(folder, tmp_path, sealed_reference.path)
    # The kit runs the rules itself, so a stubbed backward() costs value.mul nothing.
    assert parts["value.mul"]["score"] == PARTS["value.mul"].points
    backward = [m for test, m in messages.items() if test.startswith("test_value_backward")]
    assert backward and all("Value.backward is still a stub (part value.backward): this check needs it."
                            in m for m in backward)
    assert "Value.tanh is still a stub (part value.tanh)" in parts["value.tanh"]["output"]


@pytest.mark.parametrize("broken", ["missing", "unimportable"])
def test_a_file_that_cannot_be_loaded_costs_one_line_per_part(sealed_reference, tmp_path, broken):
    folder = tmp_path / broken
    shutil.copytree(KIT / "solutions", folder)
    if broken == "missing":
        (folder / "tensor.py").unlink()
    else:
        (folder / "tensor.py").write_text("def unbroadcast(grad, shape)\n    return grad\n", encoding="utf-8")
    parts = autograde_folder(folder, tmp_path / "results.json", f"--reference={sealed_reference.path}")
    for part in ("tensor.unbroadcast", "tensor.training"):
        lines = parts[part]["output"].splitlines()
        assert len(lines) == 2, parts[part]["output"]
        reason = ("tensor.py is missing from the submission" if broken == "missing"
                  else "importing tensor.py raised SyntaxError")
        assert lines[1].startswith(reason)
    assert parts["dual"]["score"] == PARTS["dual"].points


@pytest.mark.parametrize("operation", list(GIVEN_CHANGES))
def test_a_changed_given_operation_is_named_first(sealed_reference, tmp_path, operation):
    name = operation.split()[0]
    folder = tmp_path / GIVEN_CHANGES[operation].name
    build(GIVEN_CHANGES[operation], KIT / "solutions", folder)
    parts, messages = failures(folder, tmp_path, sealed_reference.path)
    assert parts["value.given"]["status"] == "failed"
    assert parts["value.given"]["output"].splitlines()[1].startswith(f"Your `{name}` is not the given one:")
    lost = {part for part, entry in parts.items() if entry["score"] < entry["max_score"]}
    assert lost <= {p for p in PARTS if p.startswith("value.")}
    # `-` between two values is in no check but this one: a student may build it from `*`.
    assert bool(lost) == (name != "-"), lost
    for test, message in messages.items():
        if "training" in test or "given" in test:
            continue
        assert message.startswith(f"Your `{name}` is not the given one:"), (test, message[:300])
    for part in lost - {"value.training"}:
        assert parts[part]["tags"] == [part], f"{part} names a stub's misconception: {parts[part]['tags']}"


def test_the_case_shown_is_the_one_that_failed(sealed_reference, tmp_path):
    """A sigmoid written as e^x / (1 + e^x) overflows at +1000 only: the snippet shows 1000."""
    folder = tmp_path / "sigmoid-overflows-above"
    build(Submission("sigmoid-overflows-above", (Edit("value", """        if self.data >= 0:
            s = 1.0 / (1.0 + math.exp(-self.data))
        else:
            e = math.exp(self.data)  # the other form, so exp never sees a large argument
            s = e / (1.0 + e)
""", """        e = math.exp(self.data)
        s = e / (1.0 + e)
"""),)), KIT / "solutions", folder)
    _, messages = failures(folder, tmp_path, sealed_reference.path)
    far = messages["test_value_sigmoid::test_sigmoid_far_from_zero"]
    assert "x = Value(1000.0)" in far and "Value(-1000.0)" not in far
    assert "Came out: [1] raised OverflowError" in far


def test_every_given_operation_a_scenario_uses_is_in_its_snippet(reference):
    """So that a message names a changed given operation exactly where its check uses it."""
    Value = reference.value.Value
    given = set(handout(KIT / "solutions").given)
    methods = {name: OPERATORS.get(name, name) for name in vars(Value)
               if OPERATORS.get(name, name) in given and name != "__init__"}
    assert {"+", "-", "**", "exp", "log", "unary -"} <= set(methods.values())
    used: set[str] = set()
    originals = {method: getattr(Value, method) for method in methods}

    def recording(method):
        def call(self, *args):
            used.add(methods[method])
            return originals[method](self, *args)
        return call

    # (The check of the given operations itself is left out: its message names every one that changed.)
    calls = {"arithmetic:products": {"seed": 1, "count": 3},
             "backward:three_calls": {"a": 2.0, "b": 3.0, "c": 4.0},
             "backward:loop_correct": {"w0": 0.0, "target": 4.0, "lr": 0.1},
             "activations:relu_in_expression": {"a": 1.5, "c": -0.5},
             "backward:mixed_graph": {"seed": 5, "count": 2},
             "arithmetic:quotients_of_computed_values": {"seed": 16, "count": 2},
             "arithmetic:quotient_of_itself": {"points": [2.0, -0.75]},
             "activations:tanh_at_root": {"seed": 12, "count": 2},
             "activations:tanh_beside_input": {"points": [0.5, -3.0]},
             "backward:zero_grad_reach": {"a": 0.3, "b": -0.8},
             "backward:rebuilt_graph": {"x": 0.5}, "backward:diamond": {"points": [1.0, -2.0]}}
    try:
        for method in methods:
            setattr(Value, method, recording(method))
        for scenario_id, kwargs in calls.items():
            module, _, name = scenario_id.partition(":")
            used.clear()
            scenario = getattr(importlib.import_module(f"autograder.inside.scenarios.{module}"), name)
            scenario(reference.value, **kwargs)
            declared = scenario_sources.scenario(scenario_id).operations
            assert used <= declared, f"{scenario_id} uses {sorted(used - declared)}, which its snippet hides"
    finally:
        for method, original in originals.items():
            setattr(Value, method, original)


def pytest_output(*options: str) -> list[str]:
    command = [sys.executable, "-m", "pytest", "autograder", "-p", "no:cacheprovider", *options]
    done = subprocess.run(command, cwd=KIT, capture_output=True, text=True, check=False)
    return done.stdout.rstrip().splitlines()


def test_the_score_table_is_the_last_thing_printed():
    lines = pytest_output("-q")
    out_of = sum(part.points for part in PARTS.values() if not part.bonus)  # the kit's: 100
    assert lines[-1].startswith("total") and f"/ {out_of:g}" in lines[-1]
    assert not any(line.startswith("FAILED ") for line in lines), "a short summary scrolls the table away"
    table = lines[lines.index(next(line for line in lines if line.startswith("part "))):]
    assert [line.split()[0] for line in table[1:-1]] == list(PARTS)


def test_a_partial_run_says_its_total_covers_only_what_ran():
    lines = pytest_output("-q", "-k", "product")
    ran = {"value.mul", "dual"} & set(PARTS)  # the parts with a test of products, of those the kit has
    assert lines[-1].startswith(f"Only {len(ran)} of {len(PARTS)} parts ran and ")
    assert "covers only what ran" in lines[-1]
    assert {line.split()[0] for line in lines[-2 - len(ran):-2]} == ran


def test_a_run_with_one_test_left_out_says_so():
    left_out = "autograder/suites/test_value_mul.py::test_value_used_twice"
    lines = pytest_output("-q", "--deselect", left_out)
    assert lines[-1].startswith("1 test was left out, so this total covers only what ran"), lines[-1]
    assert len([line for line in lines if line.split()[:1] and line.split()[0] in PARTS]) == len(PARTS)


def test_a_timeout_that_printing_explains_says_how_much_was_printed(sealed_reference, tmp_path):
    """Debug prints in backward() take the scenario's time: the message says so. (10 GB of them, so
    that they outlast the limit on the fastest machine and under any load.)"""
    folder = tmp_path / "prints-in-backward"
    build(Submission("prints-in-backward", (Edit("value", """        order: list[Value] = []
""", """        for _ in range(10_000):
            print("x" * 1_000_000)  # a debug print left in
        order: list[Value] = []
"""),)), KIT / "solutions", folder)
    parts, messages = failures(folder, tmp_path, sealed_reference.path)
    timed_out = [message for test, message in messages.items()
                 if test.startswith("test_value_backward") and "timed out" in message]
    assert timed_out, {test: m[:200] for test, m in messages.items()}
    assert all(re.search(r"It printed \d+\.\d MB meanwhile, and printing that much takes time of its own", m)
               for m in timed_out), timed_out[0]


def test_a_first_run_on_the_stubs_fits_a_screen():
    """The untouched stubs printed 1,419 lines, a traceback per check: now each part waits on one
    line, naming the stub it waits for, and the score table follows."""
    lines = pytest_output("-q")
    assert len(lines) <= 40, "\n".join(lines)
    waiting = lines[lines.index(next(line for line in lines if "waiting for stubs" in line)) + 1:]
    waiting = waiting[:next(i for i, line in enumerate(waiting) if " waiting in " in line)]
    worth = [part for part, declared in PARTS.items() if declared.points]
    assert sorted(line.split(":")[0] for line in waiting) == sorted(worth)
    assert all(re.search(r": \d+ checks? waits? for \S+, still a stub$", line) for line in waiting), waiting
    assert not any("Traceback" in line or "NotImplementedError" in line for line in lines)


def test_a_failed_check_says_first_which_part_it_counts_for(sealed_reference, tmp_path):
    folder = tmp_path / "mul-and-training"
    build(next(s for s in CORPUS if s.name == "mul-assigns-instead-of-adding"), KIT / "solutions", folder)
    junit = tmp_path / "report.xml"
    autograde_folder(folder, tmp_path / "results.json", f"--reference={sealed_reference.path}",
                     f"--junitxml={junit}")
    firsts = {case.get("classname").rsplit(".", 1)[1]: case.find("failure").text.splitlines()[0]
              for case in ElementTree.parse(junit).iter("testcase") if case.find("failure") is not None}
    assert firsts == {"test_value_mul": "[counts for value.mul]",
                      "test_value_training": "[counts for value.training]"}


def test_a_training_run_says_where_it_departs_and_which_parts_it_needs(sealed_reference, tmp_path):
    """A lost training run showed only `losses[2] = 0.574` against `0.568`: now it says at which
    step the run departs, what that implies, which parts training needs and which of them lost
    points too."""
    folder = tmp_path / "mul-and-training"
    build(next(s for s in CORPUS if s.name == "mul-assigns-instead-of-adding"), KIT / "solutions", folder)
    parts = autograde_folder(folder, tmp_path / "results.json", f"--reference={sealed_reference.path}")
    message = " ".join(parts["value.training"]["output"].split())
    assert re.search(r"The run follows the reference's for \d+ steps?, and departs in step \d+\.", message)
    assert "a gradient (an operation's rule, backward() or zero_grad()) is wrong" in message
    assert ("This check needs value.backward, value.mul, value.relu and value.zero_grad: a bug in any of "
            "them may cost it. Of those, value.mul lost points too: start with its messages.") in message


def test_a_run_that_raises_in_one_worker_and_not_in_the_other_is_said_to_be_unsteady(sealed_reference,
                                                                                     tmp_path):
    """An engine that follows memory addresses can end a training run with numbers where its
    objects lie in the judged worker, and raise where they lie in the second one (a run that
    overflows in one order of its nodes only): the message says that its snippet may print
    otherwise, as it says of two runs that give different numbers.

    The engine here tells the second worker by the objects the grader placed first in it, once
    per process: a stand-in for an order of nodes that the addresses decide."""
    folder = tmp_path / "backward-follows-addresses"
    build(Submission("backward-follows-addresses", (
        Edit("value", "import math\n", "import gc\nimport math\n\nMOVED = []\n"),
        Edit("value", "        self.grad = 1.0\n        for node in reversed(order):\n",
             "        if not MOVED:\n"
             "            MOVED.append(any(type(o).__name__ == 'Shift' for o in gc.get_objects()))\n"
             "        if MOVED[0]:\n"
             "            raise OverflowError('math range error')\n"
             "        self.grad = 2.0\n        for node in reversed(order):\n"),
    )), KIT / "solutions", folder)
    parts, _ = failures(folder, tmp_path, sealed_reference.path)
    training = parts["value.training"]
    assert training["score"] < training["max_score"]
    came_out = re.search(r"^Came out: (.*)$", training["output"], re.MULTILINE)
    assert came_out and "raised" not in came_out[1], training["output"]
    assert " ".join(judge.UNSTEADY.split()) in " ".join(training["output"].split()), training["output"]


# -- a student's default run: a line per lost check ---------------------------------------------

# The part each corpus bug is in, by its name's first word: a stub of that part holds the bug
# (None: a bug of the Value class itself, which no one stub holds).
BUG_PART = {"values": None, "mul": "value.mul", "tanh": "value.tanh", "relu": "value.relu",
            "quotient": "value.truediv", "truediv": "value.truediv", "backward": "value.backward",
            "zero": "value.zero_grad", "sigmoid": "value.sigmoid", "unbroadcast": "tensor.unbroadcast",
            "dual": "dual"}


def test_a_default_run_gives_each_lost_check_one_line_that_names_its_mistake(sealed_reference, tmp_path):
    """For every bug of the corpus, `pytest autograder` as a student runs it (against the sealed
    reference, as in the handout): after pytest's own
    progress, one line per lost check (its part, its test, the first difference), the line of
    every check that names the mistake says so, no whole message, and the part it suggests to
    grade alone is the part whose stub holds the bug where that part lost points (tanh's, not
    stability's that needs it)."""
    def run(bug: Submission) -> str | None:
        build(bug, KIT / "solutions", tmp_path / bug.name)
        output = printed_run(tmp_path / bug.name, tmp_path / f"{bug.name}.json",
                             f"--reference={sealed_reference.path}")
        section = output.split(" lost checks ", 1)[1] if " lost checks " in output else "\n"
        lines = section.split("\n", 1)[1].split("Each one's whole message", 1)[0].splitlines()
        lost = [line for line in lines if line.split("  ")[0] in PARTS]
        failed = int(re.search(r"(\d+) lost", output)[1]) if re.search(r"(\d+) lost", output) else 0
        named = {tag for line in lost for tag in re.findall(r"\[([\w-]+)\]$", line)}
        suggested = re.search(r"--part (\S+) \(one part\)", output)
        if not lost or len(lost) != failed or "To reproduce" in output or not bug.names & named:
            return f"{bug.name}: {len(lost)} lines, {failed} lost, named {sorted(named)}\n{output[-3000:]}"
        own = BUG_PART[bug.name.split("-")[0]]  # a KeyError: a corpus bug to add here
        lost_parts = {line.split("  ")[0] for line in lost}
        if suggested is None or suggested[1] != (own if own in lost_parts else suggested[1]) \
                or suggested[1] not in lost_parts:
            return f"{bug.name}: suggests {suggested and suggested[1]}\n{output[-3000:]}"
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(run, [b for b in BUGS if b.names]) if p]
    assert not problems, "\n\n".join(problems[:3])


@pytest.mark.parametrize(("lost", "first"), [
    ({"value.stability", "value.tanh"}, "value.tanh"),  # stability's checks need tanh
    ({"value.training", "value.mul"}, "value.mul"),  # training needs every operation
    ({"value.training", "value.stability", "value.tanh", "dual"}, "value.tanh"),
    ({"value.stability"}, "value.stability"),  # where tanh passes, the part that lost is the one
    ({"dual", "value.truediv"}, "value.truediv"),  # neither needs the other: grading.toml's order
])
def test_the_part_to_read_first_is_the_one_the_cause_is_in(lost, first):
    assert start_with(lost, list(PARTS)) == first


@pytest.mark.slow
def test_repro_says_where_it_wrote_and_each_file_runs_from_anywhere(tmp_path):
    folder = tmp_path / "quotient"
    build(next(b for b in BUGS if b.name == "quotient-rule-sign"), KIT / "solutions", folder)
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-p", "no:cacheprovider",
                           f"--submission={folder}", "--repro"], cwd=KIT, capture_output=True, text=True)
    said = re.search(r"^--repro: (\d+) snippets written to (\S+); run one with: python (\S+)$", done.stdout,
                     re.MULTILINE)
    assert said and Path(said[2]) == folder / "repro", done.stdout[-2000:]
    files = sorted((folder / "repro").glob("*.py"))
    assert len(files) == int(said[1]) == int(re.search(r"(\d+) lost", done.stdout)[1])
    ran = subprocess.run([sys.executable, said[3]], cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0 and re.search(r"-?\d+\.\d+", ran.stdout), ran.stderr
