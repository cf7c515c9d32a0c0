"""Unbounded texts from a worker: every text that crosses the boundary is bounded, and so are a
grading's messages together.

The worker once cut an exception's message to 2,000 characters and quoted its class name in
full: a name of 1,000,000 characters made a results.json of 65.6 MB, and one of 250,000 line
breaks cost 97 MB of results, 1.85 GB of memory and two minutes (each line break is quoted as
a line of its own). The same can be tried with every other text a reply carries: the
observations (a text where the reference has a number), the reason an answer was not plain
data, what the worker printed, the op labels of its drawings, and an exception recorded in a
case. Each hostile submission below is the honest base (the reference with `__mul__` stubbed)
with one such trick, graded by `pytest autograder` at the isolated or the unprivileged level (a
container without CAP_SYS_ADMIN), the levels taking the tricks in turn (each at both with
--exhaustive); a class holding all of them is graded by `autograder bulk` at both levels.
None may score more than the base in any part, the honest classmate's grade is the base's,
and every grading ends within the cap `autograder bulk` states for one submission.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import KIT, in_turn
from support.hostile import BULK, LEVELS, TOOLS, make_submission, prefix, scores

from autograder import scoring
from autograder.config import load
from autograder.scoring import MAX_MESSAGE, MAX_MESSAGES, PartScore, bounded
from autograder.staff import bulk
from autograder.worker import MAX_TEXT, MAX_TEXTS, MAX_VALUES, Ending, Reply
from hostile import test_isolation

place, nothing_left = test_isolation.place, test_isolation.nothing_left
SLACK = 200  # what the kit adds to a part's messages at most: its note that some were left out

# The worker's inside is the `__main__` of its process; whatever the trick replaces there is
# what the trusted side reads.
INSIDE = """
import sys as _sys
_inside = _sys.modules["__main__"]
_handle = _inside.handle
"""
TRICKS = {
    "a class name of 1,000,000 characters": {
        "in_mul": 'raise type("A" * 1_000_000, (Exception,), {})("x")'},
    "a class name of 250,000 line breaks": {
        "in_mul": 'raise type("\\n" * 250_000, (Exception,), {})("x")'},
    "exception texts of 1,000,000 line breaks": {"at_import": INSIDE + """
_LINES = "\\n" * 1_000_000
_inside.message = lambda error: _LINES
_inside.where = lambda error: _LINES
"""},
    "observations that are texts of 1,000,000 line breaks": {"at_import": INSIDE + """
_LINES = "\\n" * 1_000_000
def _texts(x):
    if type(x) is float:
        return _LINES
    if type(x) is list:
        return [_texts(v) for v in x]
    if type(x) is dict:
        return {k: (v if k == "inputs" else _texts(v)) for k, v in x.items()}
    return x
_inside.handle = lambda request, engines: (_texts(_handle(request, engines)) if "scenario" in request
                                            else _handle(request, engines))
"""},
    "a reason it was not plain data of 1,000,000 line breaks": {"at_import": INSIDE + """
_LINES = "\\n" * 1_000_000
def _unplain(request, engines):
    if "scenario" in request:
        raise _inside.Unplain(_LINES)
    return _handle(request, engines)
_inside.handle = _unplain
"""},
    "printing 1,000,000 line breaks in every scenario": {"at_import": INSIDE + """
_LINES = "\\n" * 1_000_000
def _prints(request, engines):
    if "scenario" in request:
        print(_LINES)
    return _handle(request, engines)
_inside.handle = _prints
"""},
    "drawings whose op labels are 1,000,000 line breaks": {"at_import": INSIDE + """
_LINES = "\\n" * 1_000_000
_inside.drawings = lambda: [{"nodes": [[_LINES, 1.0, 1.0, [], None]], "names": {_LINES: 0}}]
"""},
    "an exception recorded in each case, 10,000 line breaks a text": {"at_import": INSIDE + """
_LINES = "\\n" * 10_000
def _raised(request, engines):
    answer = _handle(request, engines)
    if "scenario" in request and type(answer) is list:
        return [{"inputs": case.get("inputs", {}), "raised": {"type": _LINES, "message": _LINES,
                                                             "where": _LINES}}
                if type(case) is dict else case for case in answer]
    return answer
_inside.handle = _raised
"""},
}


BOTH_LEVELS = pytest.mark.skipif(
    not (test_isolation.ROOT_WITH_NAMESPACES and TOOLS),
    reason="both root levels are made here from root with CAP_SYS_ADMIN, unshare and setpriv")


def stated_cap(place: dict) -> float:
    """The most `autograder bulk` lets one submission's grading take, for these limits."""
    return bulk.wall_clock_cap(load(place["grading"]).limits, place["sealed"])


def run_at(level: str, command: list[str], work: Path, timeout: float) -> subprocess.CompletedProcess:
    """`command` (a grading, or a bulk run) at `level`, the unprivileged one asked for by name in
    the container; it fails the test if it takes longer than `timeout` seconds."""
    wrap, extra = prefix(level, work)
    options = ["--sandbox-level", "unprivileged"] if level == "container" else []
    try:
        return subprocess.run([*wrap, *command, *options], cwd=KIT, env={**os.environ, **extra},
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"it took longer than {timeout:.0f} s, the limit autograder bulk states for it")


# -- the bounds, on the wire ---------------------------------------------------------------------------

def reply(**data) -> Reply:
    return Reply.from_json(json.dumps(data).encode())


@pytest.mark.parametrize(("field", "observations"), [
    ("a text", {"x": "\n" * (MAX_TEXT + 1)}),
    ("a key", {"\n" * (MAX_TEXT + 1): 1.0}),
    ("texts in all", [{"x": "a" * MAX_TEXT} for _ in range(MAX_TEXTS // MAX_TEXT + 1)]),
    ("values", {"inputs": {"pad": [0] * MAX_VALUES}}),
    ("a case's exception", [{"inputs": {}, "raised": {"type": "\n" * (MAX_TEXT + 1), "message": "",
                                                       "where": ""}}]),
    ("a whole number no float holds", {"inputs": {"made": 10 ** 400}, "x": 1.0}),
])
def test_a_reply_past_the_bounds_is_malformed_wherever_it_holds_it(field, observations):
    got = reply(observations=observations)
    assert got.ending is Ending.MALFORMED and got.observations is None, field
    assert len(got.failure) < 200


def test_drawings_past_the_bounds_make_the_reply_malformed():
    drawing = {"nodes": [["\n" * (MAX_TEXT + 1), 1.0, 1.0, [], None]], "names": {}}
    assert reply(observations=1.0, graphs=[drawing]).ending is Ending.MALFORMED
    assert reply(observations=1.0, graphs=[{**drawing, "nodes": [["+", 1.0, 1.0, [], None]]}]).graphs


def test_the_texts_of_an_exception_and_of_unplain_data_are_cut():
    got = reply(raised="\n" * 1_000_000, message="\n" * 1_000_000, where="\n" * 1_000_000)
    assert got.ending is Ending.ANSWERED and got.raised is not None
    assert len(got.raised.type) + len(got.raised.message) + len(got.raised.where) <= 2700
    assert len(reply(unplain="\n" * 1_000_000).failure) < 2100


def test_answers_within_the_bounds_pass_as_they_are():
    observations = [{"inputs": {"f": "x.sin()"}, "data": 1.5, "grad": [0.5] * 1000}]
    assert reply(observations=observations).observations == observations


def test_a_gradings_messages_are_bounded_each_and_all_together():
    part = PartScore("value.mul", "x", 0.0, 10.0, False, "visible", 0, 1)
    parts = []
    for index in range(80):
        check = scoring.Check(f"test_{index}", "value.mul", scoring.Status.WRONG, came_out="\n" * 50_000)
        messages = scoring.grouped([check], 1)
        assert len(messages[0]) <= MAX_MESSAGE + 200
        parts.append(PartScore(**{**vars(part), "messages": messages}))
    kept = bounded(parts)
    assert sum(len(m) for p in kept for m in p.messages) <= MAX_MESSAGES + len(kept) * SLACK
    assert "more messages of this part not shown" in kept[-1].messages[-1]


# -- the attacks, graded at both levels ---------------------------------------------------------------

def total_messages(results: dict[str, dict]) -> int:
    return sum(len(entry["output"]) for entry in results.values())


@pytest.mark.slow
@BOTH_LEVELS
# Each trick by `pytest autograder` at one level, the levels in turn (`autograder bulk` grades every
# trick at both levels in every run: test_a_class_of_them_...).
@pytest.mark.parametrize(("trick", "level"), in_turn(sorted(TRICKS), LEVELS))
def test_a_text_without_end_from_the_worker_costs_its_checks_and_nothing_more(place, trick, level):
    folder = place["folder"] / f"bounds-{level}"
    name = "-".join(trick.split()[:6]).replace(",", "")
    submission = make_submission(folder, name, **TRICKS[trick])
    results_file = folder / f"{name}.json"
    done = run_at(level, [sys.executable, "-m", "pytest", "autograder", f"--submission={submission}",
                          f"--results-json={results_file}", "-q", "-p", "no:cacheprovider",
                          "--grading=" + str(place["grading"]), "--reference=" + str(place["sealed"])],
                  folder / f"{name}-container", stated_cap(place))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    results = {t["tags"][0]: t for t in json.loads(results_file.read_text())["tests"]}
    assert total_messages(results) <= MAX_MESSAGES + len(results) * SLACK
    assert results_file.stat().st_size <= 3 * MAX_MESSAGES  # a line break is 2 bytes of JSON
    gained = {part: got for part, got in scores(results).items() if got > place["honest"][part]}
    assert not gained


@pytest.mark.slow
@BOTH_LEVELS
@pytest.mark.parametrize("level", LEVELS)
def test_a_class_of_them_grades_the_honest_classmate_as_alone(place, level, tmp_path):
    """`autograder bulk` on the honest base and every trick: the honest entry scores what it
    scores alone, no entry scores more than it in any part, and what the gradebook and the
    feedback files hold of each is bounded."""
    klass = tmp_path / "class"
    make_submission(klass, "honest")
    for index, trick in enumerate(sorted(TRICKS)):
        make_submission(klass, f"trick{index}", **TRICKS[trick])
    out = tmp_path / "out"
    done = run_at(level, [sys.executable, "-c", BULK, "bulk", str(klass), "-o", str(out), "--jobs", "2"],
                  tmp_path / "container", (len(TRICKS) + 2) * stated_cap(place))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        rows = db.execute("SELECT s.source, c.part, c.points, c.messages FROM submissions s "
                          "JOIN scores c ON c.submission = s.id").fetchall()
    by_entry: dict[str, dict[str, tuple[float, int]]] = {}
    for source, part, points, messages in rows:
        by_entry.setdefault(source, {})[part] = (points, len(messages))
    honest = {part: points for part, (points, _) in by_entry["honest"].items()}
    assert honest == place["honest"]
    for source, parts in by_entry.items():
        assert sum(size for _, size in parts.values()) <= MAX_MESSAGES + len(parts) * SLACK, source
        assert all(points <= honest[part] for part, (points, _) in parts.items()), source
    for page in (out / "feedback").iterdir():
        assert page.stat().st_size <= 8 * MAX_MESSAGES, page.name  # HTML escapes a character in 6 bytes
