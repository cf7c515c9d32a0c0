"""The graph report: a failed value scenario's message shows the graph it built beside the
reference's, and marks where the gradients first go wrong.

On the fairness corpus, graded as a TA grades: every gradient bug's messages mark the node
of the operation that is wrong (the root, for a backward() that does not set it to 1.0).
Run in this process on the corpus's correct variants, every scenario the suites ask for
draws graphs in which the report finds no difference; combined with a bug elsewhere, a
composite division or a set of parents is never told its graph differs in shape. Drawings
come from the worker, so malformed ones are refused and forged ones change no score.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
from support import KIT
from support.corpus import BUGS, CORRECT, Edit, Submission, build
from support.shape import GRADED

from autograder import graphs, runner, scenario_sources
from autograder.answers import Tolerance
from autograder.config import load
from autograder.inside.scenarios import common
from autograder.junit_properties import recorded_calls
from autograder.runner import scenario_key
from autograder.staff.reports import graph_table
from grading.test_messages import failures

CORES = os.cpu_count() or 2
TOLERANCE = Tolerance(load().tolerances.rel, load().tolerances.abs)
SHAPE = "differs from the expected one in shape"

# Each gradient bug of the corpus, and the op label of the node its messages must mark:
# "root" for the root itself, "first" for the first node, from the output, whose gradient
# differs (a backward() whose graph holds only given rules has no wrong operation to mark).
POINTS_AT = {
    "mul-assigns-instead-of-adding": "*", "mul-assigns-instead-of-adding-with-set-parents": "*",
    "mul-names-the-wrong-parents": "*", "mul-ignores-upstream": "*",
    "tanh-derivative-of-input": "tanh", "tanh-ignores-upstream": "tanh",
    "tanh-assigns-instead-of-adding": "tanh", "tanh-rule-attached-to-the-input": "tanh",
    "sigmoid-rule-attached-to-the-input": "sigmoid",
    "relu-gate-on-the-wrong-side": "relu", "relu-ignores-upstream": "relu",
    "relu-assigns-instead-of-adding": "relu",
    "quotient-rule-sign": "/", "truediv-ignores-upstream": "/", "truediv-assigns-instead-of-adding": "/",
    "truediv-assigns-to-the-denominator": "/",
    "backward-adds-one-to-the-root": "root", "backward-does-not-seed-the-root": "root",
    "backward-in-forward-order": "first", "backward-recursive-without-sort": "first",
    "backward-runs-no-rule": "first", "backward-clears-first": "first",
    "backward-pre-order-with-a-visited-set": "first",
}
# The corpus's other bugs, and why their messages have no graph to point into.
NOT_IN_A_GRAPH = {
    "mul-number-not-wrapped": "raises before a graph is built", "truediv-number-not-wrapped": "the same",
    "tanh-through-exp-2x": "overflows in the forward pass", "zero-grad-on-self-only": "zero_grad's checks",
    "zero-grad-on-leaves-only": "zero_grad's checks", "zero-grad-one-level-deep": "zero_grad's checks",
    "unbroadcast-drops-keepdims": "tensor.py",
    "unbroadcast-keeps-leading-axes": "tensor.py", "unbroadcast-sums-the-trailing-axes": "tensor.py",
    "dual-product-rule": "dual.py", "dual-sin-sign": "dual.py",
    "dual-default-derivative-one": "dual.py", "dual-number-not-wrapped": "dual.py",
    "relu-cuts-the-unit-out-of-the-graph": "every gradient right: the graph's shape, not a node, differs",
    "values-compared-by-data-in-a-set-of-parents": "the kit's reverse pass stops at the merged parent",
}
GRADIENT_BUGS = [s for s in BUGS if s.name in POINTS_AT]
# The operations whose every failed check shows a table (but for a wrong parents tuple, whose
# graph may differ in no way that is certain, and then gets none).
ALWAYS_A_TABLE = {"*", "tanh", "sigmoid", "relu", "/"}
# Correct variants whose graphs differ from the reference's, each with bugs elsewhere.
COMBINED = [(variant, bug) for variant, bugs in {
    "division-as-product-with-power": ["mul-assigns-instead-of-adding", "mul-ignores-upstream",
                                       "tanh-derivative-of-input", "backward-in-forward-order"],
    "parents-as-a-set": ["mul-assigns-instead-of-adding", "mul-ignores-upstream", "tanh-derivative-of-input",
                         "relu-gate-on-the-wrong-side", "quotient-rule-sign",
                         "truediv-assigns-instead-of-adding", "backward-in-forward-order",
                         "backward-runs-no-rule"]}.items() for bug in bugs]


def graph_messages(messages: dict[str, str]) -> dict[str, tuple[graphs.Table, str]]:
    """Each message's graph table, with the sentence after it (on one line), by test."""
    found = {}
    for test, message in messages.items():
        parts = graphs.blocks(message)
        for index, part in enumerate(parts):
            if isinstance(part, graphs.Table):
                after = re.sub(r"^\(rows \d+ to \d+ of \d+ shown\)\n", "", parts[index + 1].lstrip("\n"))
                found[test] = (part, " ".join(after.split("\n\n")[0].split()))
    return found


def test_every_bug_of_the_corpus_is_either_pointed_at_or_in_no_graph():
    # The corpus holds the bugs of the engines the kit grades (`autograder part given` removes the rest).
    gone = {name for name, why in NOT_IN_A_GRAPH.items() if why.endswith(".py") and why[:-3] not in GRADED}
    assert sorted(POINTS_AT.keys() | NOT_IN_A_GRAPH.keys() - gone) == sorted(s.name for s in BUGS)
    assert not POINTS_AT.keys() & NOT_IN_A_GRAPH.keys()


# -- messages of the corpus, graded ---------------------------------------------------------------

@pytest.fixture(scope="module")
def graded_bugs(sealed_reference, tmp_path_factory) -> dict[str, tuple[dict, dict[str, str]]]:
    root = tmp_path_factory.mktemp("gradient-bugs")

    def grade(submission: Submission) -> tuple[dict, dict[str, str]]:
        folder = root / submission.name
        build(submission, KIT / "solutions", folder)
        return failures(folder, root, sealed_reference.path)

    with ThreadPoolExecutor(max_workers=CORES) as pool:
        return dict(zip([s.name for s in GRADIENT_BUGS], pool.map(grade, GRADIENT_BUGS)))


@pytest.mark.parametrize("submission", [pytest.param(s, id=s.name) for s in GRADIENT_BUGS])
def test_a_gradient_bug_is_marked_where_it_is(submission: Submission, graded_bugs):
    parts, messages = graded_bugs[submission.name]
    tables = graph_messages(messages)
    assert tables, f"no message of {submission.name} shows its graph:\n{next(iter(messages.values()))}"
    wanted = POINTS_AT[submission.name]
    for test, (table, sentence) in tables.items():
        assert table.marked is not None, f"{test}: nothing marked\n{messages[test]}"
        row = table.rows[table.marked]
        if wanted == "root":
            assert table.marked == 0 and sentence.startswith("First difference: the root"), messages[test]
        elif wanted == "first":
            differs = [r[4] != r[5] and r[5] != "-" for r in table.rows]
            assert differs.index(True) == table.marked, messages[test]
        else:
            assert row[2] == wanted, f"{test} marks row {row}, not the `{wanted}` node:\n{messages[test]}"
        assert SHAPE not in sentence or submission.name == "mul-names-the-wrong-parents", messages[test]
    if wanted in ALWAYS_A_TABLE and submission.name != "mul-names-the-wrong-parents":
        # (Far from zero the right gradient is 0, which a rule that never runs gives too: such a
        # graph has no difference to point at, and its message says what the kit saw instead.)
        operation_checks = {test for test in messages
                            if "training" not in test and "far_from_zero" not in test}
        assert operation_checks <= tables.keys(), \
            f"no table in {sorted(operation_checks - tables.keys())}"


def test_a_wrong_parents_tuple_is_said_to_be_one(graded_bugs):
    _, messages = graded_bugs["mul-names-the-wrong-parents"]
    sentences = [sentence for _, sentence in graph_messages(messages).values()]
    # b, or v where the operands are computed values (u and v)
    assert sentences and all(SHAPE in s and re.search(r"\b[bv] is not in it", s) for s in sentences)
    assert any("a wrong parents tuple" in s for s in sentences)


def test_the_table_fits_the_terminal_and_renders_as_a_table(graded_bugs):
    for name, (_, messages) in graded_bugs.items():
        for test, message in messages.items():
            if graphs.INTRO not in message:
                continue
            block = message[message.index(graphs.INTRO):].split("\n\n")[0]
            assert max(map(len, block.splitlines())) <= graphs.WIDTH, f"{name} {test}:\n{block}"
    _, messages = graded_bugs["mul-assigns-instead-of-adding"]
    blocks = graphs.blocks(messages["test_value_mul::test_value_used_twice"])
    assert [type(block) for block in blocks] == [str, graphs.Table, str]
    assert blocks[0].endswith("Expected: x.grad = 1.0\n\n" + graphs.INTRO)
    assert blocks[2].startswith("First difference: the `*` node y (row 1).")
    markdown, html = graph_table(blocks[1], as_markdown=True), graph_table(blocks[1], as_markdown=False)
    assert markdown.splitlines() == [
        "| row | node | op | data | your grad | expected grad | parents |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| **\\> 1** | **y** | **\\*** | **0.25** | **1.0** | **1.0** | **2, 2** |",
        "| 2 | x |  | 0.5 | 0.5 | 1.0 |  |"]
    assert "<tr class='bad'><td><b>&gt; 1</b></td><td><b>y</b></td><td><b>*</b></td>" in html


# -- correct engines, run in this process -------------------------------------------------------------

@pytest.fixture(scope="module")
def drawn_calls(sealed_reference) -> list[tuple[str, dict, list]]:
    """Every value scenario the suites ask for whose reference answer holds graphs, with them."""
    answers = json.loads(sealed_reference.path.read_text(encoding="utf-8"))["answers"]
    found = {}
    for call in recorded_calls(sealed_reference.junit):
        drawn = answers[scenario_key(call.scenario, call.kwargs)]["graphs"]  # kept as text
        if scenario_sources.scenario(call.scenario).engine == "value" and drawn:
            found[scenario_key(call.scenario, call.kwargs)] = (call.scenario, call.kwargs, json.loads(drawn))
    assert len(found) > 25 and any(name == "backward:three_calls" for name, _, _ in found.values())
    return list(found.values())


def engine(submission: Submission, folder: Path):
    """The submission's value.py, imported here under a name of its own."""
    build(submission, KIT / "solutions", folder)
    name = "graphs_" + re.sub(r"\W", "_", submission.name)
    spec = importlib.util.spec_from_file_location(name, folder / "value.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reports(module, drawn_calls) -> list[tuple[str, str | None]]:
    """(scenario, report) for every case: the engine's graph against the reference's. A scenario
    that raises outside its cases fails the test: its graph would go unchecked."""
    found = []
    for name, kwargs, expected in drawn_calls:
        common.draw_graphs(True)
        try:
            module_name, _, function = name.partition(":")
            inside = importlib.import_module(f"autograder.inside.scenarios.{module_name}")
            getattr(inside, function)(module, **kwargs)
            got = common.drawings()
        finally:
            common.draw_graphs(False)
        assert len(got) in (0, len(expected)), name
        found += [(name, graphs.report(e, g, TOLERANCE)) for e, g in zip(expected, got)]
    return found


@pytest.mark.parametrize("submission", [pytest.param(s, id=s.name) for s in CORRECT])
def test_a_correct_engine_draws_graphs_with_no_difference(submission, drawn_calls, tmp_path):
    found = reports(engine(submission, tmp_path), drawn_calls)
    assert len(found) == sum(len(expected) for _, _, expected in drawn_calls)
    assert not [(name, report) for name, report in found if report is not None]


@pytest.mark.parametrize(("variant", "bug"), COMBINED, ids=[f"{v}+{b}" for v, b in COMBINED])
def test_another_correct_graph_is_never_told_its_shape_differs(variant, bug, drawn_calls, tmp_path):
    both = Submission(f"{variant}+{bug}", next(s for s in CORRECT if s.name == variant).edits
                      + next(s for s in BUGS if s.name == bug).edits)
    found = [(name, report) for name, report in reports(engine(both, tmp_path), drawn_calls) if report]
    assert found, f"{both.name}: no report to check"
    assert not [(name, report) for name, report in found if SHAPE in report]
    if variant == "division-as-product-with-power" and bug.startswith("mul-"):
        quotients = [report for name, report in found if "quotient" in name]
        assert quotients and all("`*`" in report for report in quotients), quotients[:1]


def test_an_engine_with_other_fields_gets_no_table(drawn_calls, tmp_path):
    """Its graph is read through the given constructor's fields only: renamed, there is none."""
    bug = next(s for s in BUGS if s.name == "mul-assigns-instead-of-adding")
    build(bug, KIT / "solutions", tmp_path / "built")
    text = (tmp_path / "built" / "value.py").read_text(encoding="utf-8")
    renamed = Submission("renamed", (*bug.edits, Edit("value", text, text.replace("_prev", "_inputs"))))
    assert any(report for _, report in reports(engine(bug, tmp_path / "as-given"), drawn_calls))
    found = reports(engine(renamed, tmp_path / "renamed"), drawn_calls)
    assert found == [] and "_inputs" in (tmp_path / "renamed" / "value.py").read_text(encoding="utf-8")


# -- drawings are untrusted ----------------------------------------------------------------------------

def drawing(nodes: list, names: dict | None = None) -> dict:
    return {"nodes": nodes, "names": {"x": len(nodes) - 1} if names is None else names}


GOOD = drawing([["*", 9.0, 1.0, [1, 1], [[0.0, 6.0], [0.0, 6.0]]], ["", 3.0, 6.0, [], []]])
MALFORMED = {
    "not a dict": [],
    "an extra key": {**GOOD, "score": 1},
    "no nodes": drawing([], {}),
    "too many nodes": drawing([["+", 1.0, 1.0, [i + 1], None] for i in range(64)]
                              + [["", 1.0, 1.0, [], None]]),
    "a parent before its node": drawing([["*", 9.0, 1.0, [0], None]], {}),
    "a parent out of range": drawing([["*", 9.0, 1.0, [2], None], ["", 3.0, 6.0, [], None]]),
    "a bool for a number": drawing([["*", True, 1.0, [1], None], ["", 3.0, 6.0, [], None]]),
    "text for a number": drawing([["*", "9", 1.0, [1], None], ["", 3.0, 6.0, [], None]]),
    "a long op label": drawing([["*" * 41, 9.0, 1.0, [1], None], ["", 3.0, 6.0, [], None]]),
    "passes that do not fit": drawing([["*", 9.0, 1.0, [1, 1], [[0.0, 6.0]]], ["", 3.0, 6.0, [], []]]),
    "a node nothing reaches": drawing([["*", 9.0, 1.0, [], None], ["", 3.0, 6.0, [], None]]),
    "too many parents": drawing([["+", 9.0, 1.0, [1] * 9, None], ["", 3.0, 6.0, [], None]]),
    "a name out of range": drawing([["*", 9.0, 1.0, [1], None], ["", 3.0, 6.0, [], None]], {"x": 7}),
    "a name that is code": drawing([["*", 9.0, 1.0, [1], None], ["", 3.0, 6.0, [], None]], {"x)\n": 1}),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_drawing_is_refused(case):
    assert graphs.unreadable(GOOD) is None
    assert graphs.unreadable(MALFORMED[case]) is not None
    wrong = drawing([["*", 9.0, 1.0, [1, 1], [[0.0, 3.0], [0.0, 3.0]]], ["", 3.0, 3.0, [], []]])
    assert graphs.report(GOOD, wrong, TOLERANCE) is not None
    assert graphs.report(GOOD, MALFORMED[case], TOLERANCE) is None
    assert graphs.report(MALFORMED[case], wrong, TOLERANCE) is None


def test_an_op_label_is_shown_only_in_safe_characters():
    label = "<b>`|\n"
    expected = drawing([["*", 9.0, 1.0, [1], [[0.0, 6.0]]], ["", 3.0, 6.0, [], []]])
    got = drawing([[label, 9.0, 1.0, [1], [[0.0, 3.0]]], ["", 3.0, 3.0, [], []]])
    report = graphs.report(expected, got, TOLERANCE)
    assert report is not None and "`?b????`" in report and "<" not in report and "|" not in report


FORGERIES = {
    "raises": "def drawings():\n    raise SystemExit(3)\n",
    "malformed": "def drawings():\n    return [{'nodes': 'all of them', 'names': {}}] * 40\n",
    "lying": ("def drawings():\n    return [{'nodes': [['*', 9.0, 1.0, [1], [[0.0, 1.0]]],"
              " ['', 3.0, 1.0, [], []]], 'names': {}}]\n"),
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_forged_drawings_change_no_score(forgery, sealed_reference, tmp_path, graded_bugs):
    bug = next(s for s in BUGS if s.name == "mul-assigns-instead-of-adding")
    folder = tmp_path / forgery
    build(bug, KIT / "solutions", folder)
    forge = ("\n\nimport sys as _sys\n" + FORGERIES[forgery]
             + "_sys.modules['scenarios.common'].drawings = drawings\n")
    with (folder / "value.py").open("a", encoding="utf-8") as file:
        file.write(forge)
    parts, messages = failures(folder, tmp_path, sealed_reference.path)
    honest, _ = graded_bugs[bug.name]
    assert {p: e["score"] for p, e in parts.items()} == {p: e["score"] for p, e in honest.items()}
    assert not any("fault of the grader" in m for m in messages.values())
    if forgery != "lying":
        assert not graph_messages(messages)


def test_a_rerun_that_answers_otherwise_draws_nothing(sealed_reference, tmp_path):
    """The graphs come from running a failed scenario again: they explain the judged answer
    only if that run answers the same, so an engine that answers differently each time gets none."""
    drifting = Submission("mul-drifts", (
        Edit("value", "import math\n", "import math\nimport os\n"),
        Edit("value", "self.grad += other.data * out.grad",
             "self.grad += other.data * out.grad + int.from_bytes(os.urandom(4), 'little')"),
    ))
    folder = tmp_path / drifting.name
    build(drifting, KIT / "solutions", folder)
    parts, messages = failures(folder, tmp_path, sealed_reference.path)
    assert parts["value.mul"]["score"] < parts["value.mul"]["max_score"]
    assert not graph_messages(messages)


# -- which scenarios can draw ---------------------------------------------------------------------------

def test_the_modules_that_can_draw_follow_their_imports():
    modules = {
        "common": "def drawn(graph): ...\ndef scenario(*a): ...\n",
        "recorder": "from .common import drawn\n",
        "renamed": "from .common import drawn as keep\n",
        "whole": "from . import common\n",
        "starred": "from .common import *\n",
        "through": "from .recorder import something\n",
        "twice_through": "from . import through\n",
        "plain": "from .common import scenario\nimport numpy\n",
        "absolute": "from common import drawn\n",  # not a relative import: not the scenarios' common
    }
    assert scenario_sources.drawing_modules(modules) == {"recorder", "renamed", "whole", "starred", "through",
                                                  "twice_through"}


def test_no_scenario_said_never_to_draw_draws(sealed_reference):
    """Held against what the reference drew when sealed (every scenario asked to draw): the
    reference is never run for a drawing of a scenario that cannot make one, so none may."""
    answers = json.loads(sealed_reference.path.read_text(encoding="utf-8"))["answers"]
    drew, never = set(), set()
    for call in recorded_calls(sealed_reference.junit):
        if answers[scenario_key(call.scenario, call.kwargs)]["graphs"]:
            drew.add(call.scenario)
        if not scenario_sources.scenario(call.scenario).draws:
            never.add(call.scenario)
    assert drew and not drew & never
    assert {name.partition(":")[0] for name in never} == {"dual", "tensor", "training"}


def test_the_reference_runs_no_scenario_for_a_drawing_it_cannot_make(monkeypatch):
    ran = []
    monkeypatch.setattr(runner, "run_unless_busy",
                        lambda worker, scenario_id, kwargs, limit, draw=False: ran.append(scenario_id)
                        or SimpleNamespace(graphs=[{"nodes": []}]))
    reference = object.__new__(runner.LiveReference)
    reference.draw, reference.drawn, reference.worker, reference.timeout = False, {}, None, 1.0
    assert reference.graphs("training:train_moons", {"steps": 5}) is None
    assert reference.graphs("tensor:broadcast_operand", {}) is None
    assert ran == []
    assert reference.graphs("backward:three_calls", {}) == [{"nodes": []}]
    assert ran == ["backward:three_calls"]
