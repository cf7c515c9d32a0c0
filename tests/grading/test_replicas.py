"""Bulk grading's replicas of the reference (autograder/staff/replicas) never drift from solutions/.

A replica answers only while verified for the kit's sources as they are, only after it has
agreed with the live reference in the same process, and with the live reference's CPU time;
and every replica agrees with the live reference at every call the suites make, at the public
seed, at the kit's seeds and at more.
"""

from __future__ import annotations

import ast
import gc
import json
import os
import signal
import threading
from types import SimpleNamespace

import pytest
from support import EVERY_SEED, EXHAUSTIVE, KIT
from support.autograding import autograde_folder
from support.corpus import CORPUS, build
from support.shape import GRADED

from autograder import runner, scenario_sources
from autograder.answers import Tolerance
from autograder.config import load
from autograder.junit_properties import recorded_calls
from autograder.questions import make_secret
from autograder.runner import FastReference, Reply, SealedReference, scenario_key, time_limit
from autograder.staff import graders, replicas
from autograder.worker import read_files

SOLUTIONS = KIT / "solutions"
# Seeds beside the kit's own, for the replicas alone (with --exhaustive): a replica must agree
# wherever it is asked.
MORE_SEEDS = ("a11ce001", "b0b00002", "ca7e0003", "d0d00004", "e1e10005", "f00d0006", "0ff10007", "1de40008")
REPLICA_SEEDS = (*EVERY_SEED, *(MORE_SEEDS if EXHAUSTIVE else ()))
TOLERANCES = load().tolerances


# -- what the replicas are ----------------------------------------------------------------------------

def test_every_replica_is_verified_for_the_kit_as_it_is():
    """verified.json holds, for every replica, the key of the scenario modules, the reference's
    files and the replicas as they are: change one and this fails until `autograder replicas`
    has held the replica against the reference again."""
    reference = read_files(SOLUTIONS)[0]
    recorded = replicas.verified()
    stale = [scenario_id for scenario_id in replicas.replicated()
             if recorded.get(scenario_id) != replicas.key(scenario_id, reference)]
    assert not stale, f"not verified as the kit is now: {stale}; run `autograder replicas`"
    assert set(recorded) == set(replicas.replicated())


def test_a_replica_is_a_scenario_of_the_same_name():
    """Every public function of a replica module replicates the scenario of its name."""
    for module in replicas.MODULES:
        found = {name for name, function in vars(replicas._module(module)).items()
                 if callable(function) and not name.startswith("_") and getattr(function, "__module__", "")
                 == f"autograder.staff.replicas.{module}" and name not in ("case",)}
        declared = {scenario.id.partition(":")[2] for scenario in scenario_sources.every_scenario()
                    if scenario.id.startswith(f"{module}:")}
        assert found and found <= declared, f"{module}: {sorted(found - declared)} replicate no scenario"


def test_the_training_replicas_are_judged_with_the_training_tolerance():
    """A replica held to the training tolerance answers only checks judged with it."""
    loose = {scenario_id for scenario_id in replicas.replicated()
             if replicas.tolerance_of(scenario_id) == "training"}
    judged = {}
    for suite in (KIT / "autograder" / "suites").glob("test_*.py"):
        for node in ast.walk(ast.parse(suite.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "grade" and node.args:
                tolerance = next((k.value.value for k in node.keywords if k.arg == "tolerance"), "default")
                judged.setdefault(node.args[0].value, set()).add(tolerance)
    assert loose and all(judged.get(scenario_id) == {"training"} for scenario_id in loose), judged


@pytest.mark.parametrize(("expected", "got", "where"), [
    ({"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}, "keys"),
    ([1.0, 2.0], [1.0], "items"),
    ({"x": 1.0, "inputs": {"a": 0.5}}, {"x": 1.0, "inputs": {"a": 0.5000001}}, "inputs"),
    ({"x": 1.0}, {"x": 1.001}, "1.001"),
    ({"x": 1.0}, {"x": "1.0"}, "'1.0'"),
    ({"x": [1.0]}, {"x": (1.0,)}, "tuple"),
    ({"s": "f(x)"}, {"s": "f(y)"}, "f(y)"),
])
def test_a_disagreement_is_found_and_named(expected, got, where):
    found = replicas.disagreement(expected, got, Tolerance(1e-7, 1e-9))
    assert found is not None and where in found
    assert replicas.disagreement(expected, json.loads(json.dumps(expected)), Tolerance(1e-7, 1e-9)) is None


def test_a_replica_answers_what_a_worker_would_be_sent():
    """A suite parametrizes shapes with tuples, which reach a worker as JSON lists: the replica
    answers the lists, as the reference echoes them in its inputs."""
    asked = {"seed": 100, "out_shape": (2, 3)}
    answered = replicas.answer("tensor:every_operand_shape", asked)
    assert answered == replicas.answer("tensor:every_operand_shape", json.loads(json.dumps(asked)))
    assert answered[0]["inputs"]["out_shape"] == [2, 3]
    assert replicas.as_sent({"pairs": [[(4, 6), (4, 1)]], "X": [[0.5, 1.0]], 1: (2,)}) == \
        {"pairs": [[[4, 6], [4, 1]]], "X": [[0.5, 1.0]], "1": [2]}


# -- how the runner uses them -------------------------------------------------------------------------

class Recorded:
    """Replicas whose answers and verification a test sets."""

    def __init__(self, answers: dict, verified: bool = True) -> None:
        self.answers, self.verified, self.asked = answers, verified, []

    def usable(self, scenario_id: str, reference: dict) -> bool:
        return self.verified

    def answer(self, scenario_id: str, kwargs: dict, reference: dict) -> object:
        self.asked.append(scenario_id)
        answer = self.answers[scenario_id]
        if isinstance(answer, list):  # one per call, in turn
            answer = answer.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def tolerance(self, scenario_id: str) -> str:
        return "default"

    disagreement = staticmethod(replicas.disagreement)


def fast_reference(answers: dict, replica_answers: dict, verified: bool = True, seconds: float = 0.5):
    """A FastReference over a live reference that answers `answers` in `seconds` each, counting its calls."""
    calls = []

    def answer(scenario_id: str, kwargs: dict) -> Reply:
        calls.append(scenario_id)
        return Reply(observations=answers[scenario_id], seconds=seconds)

    live = SimpleNamespace(worker=SimpleNamespace(files={"dual.py": b"class Dual: ..."}), handout=None,
                           answer=answer)
    replicas_of = Recorded(replica_answers, verified)
    return FastReference(live, replicas_of, TOLERANCES), calls, replicas_of


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    """Each test is a grading process of its own: nothing checked yet."""
    monkeypatch.setattr(FastReference, "checked", {})


def test_a_replica_answers_after_it_agreed_live_with_the_live_time():
    """The first call is live, and the replica is compared with it; later calls are the
    replica's, with the live call's CPU time: the yardstick of the limit does not shrink."""
    same = {"dual:lesson": {"val": 1.0}}
    reference, calls, replicas_of = fast_reference(same, same, seconds=0.5)
    first = reference.answer("dual:lesson", {"x": 1.0})
    second = reference.answer("dual:lesson", {"x": 2.0})
    assert calls == ["dual:lesson"] and replicas_of.asked == ["dual:lesson", "dual:lesson"]
    assert first.seconds == second.seconds == 0.5
    limits = load().limits
    assert time_limit(limits, second.seconds) == limits.time_multiplier * 0.5


def test_a_replica_not_verified_for_the_kit_as_it_is_is_never_asked():
    same = {"dual:lesson": {"val": 1.0}}
    reference, calls, replicas_of = fast_reference(same, same, verified=False)
    for x in (1.0, 2.0, 3.0):
        reference.answer("dual:lesson", {"x": x})
    assert calls == ["dual:lesson"] * 3 and replicas_of.asked == []


@pytest.mark.parametrize("replica", [{"val": 1.5}, {"value": 1.0}, ValueError("a bug of the replica")])
def test_a_replica_that_disagrees_or_fails_is_answered_live_from_then_on(replica, monkeypatch):
    monkeypatch.setattr(FastReference, "distrusted", [])
    reference, calls, _ = fast_reference({"dual:lesson": {"val": 1.0}}, {"dual:lesson": replica})
    answers = [reference.answer("dual:lesson", {"x": x}).observations for x in (1.0, 2.0, 3.0)]
    assert answers == [{"val": 1.0}] * 3 and calls == ["dual:lesson"] * 3
    said = FastReference.distrusted
    assert len(said) == 1 and "the replica of dual:lesson disagrees with the live reference" in said[0]
    assert "autograder replicas" in said[0]


def test_the_real_replicas_are_not_used_where_solutions_differ():
    """A reference folder whose engine file is not the one verified answers live."""
    replicated = replicas.replicated()[0]  # dual:lesson in the kit as it is
    engine = scenario_sources.scenario(replicated).engine
    changed = {**read_files(SOLUTIONS)[0]}
    changed[engine] = changed[engine] + b"\n# a change\n"
    real = replicas.Replicas()
    assert real.usable(replicated, read_files(SOLUTIONS)[0])
    assert not real.usable(replicated, changed)
    no_value = {other: b"" for other in GRADED if other != "value"}
    assert not real.usable("value:given_operations", no_value)  # no engine to run it on


def test_a_value_scenario_is_answered_by_the_reference_files_given():
    """The value scenarios' replicas run the scenario on the very engine file the reference
    has: another file, another answer."""
    files = read_files(SOLUTIONS)[0]
    rule = b"            self.grad += other.data * out.grad\n"
    assert files["value"].count(rule) == 1
    broken = {**files, "value": files["value"].replace(rule, rule.replace(b"+=", b"-="))}
    asked = {"seed": 3, "count": 4}
    real = replicas.Replicas()
    assert real.usable("arithmetic:products", files) and real.usable("arithmetic:products", broken)
    right, wrong = (real.answer("arithmetic:products", asked, given) for given in (files, broken))
    assert [case["grads"][0] for case in right] == [-case["grads"][0] for case in wrong] != []
    assert [case["grads"][1] for case in right] == [case["grads"][1] for case in wrong]


def real_answer(files: dict[str, bytes]) -> object:
    return replicas.Replicas().answer("arithmetic:products", {"seed": 3, "count": 4}, files)


def test_a_value_scenario_that_cannot_be_answered_here_as_in_a_worker_is_answered_live():
    """A case where the reference raised (a worker names the line of its own file), a call
    past the CPU limit, and a call outside the main thread (no signal stops it there) are the
    live reference's to answer."""
    files = read_files(SOLUTIONS)[0]
    def_mul = b"    def __mul__(self, other"
    assert files["value"].count(def_mul) == 1
    raises = (b"    def __mul__(self, other, *_):\n        raise ValueError('no')\n\n"
              b"    def _unused(self, other")
    raising = {**files, "value": files["value"].replace(def_mul, raises)}
    with pytest.raises(runner.AnswerLive, match="raised"):
        real_answer(raising)
    with pytest.raises(runner.AnswerLive, match="CPU time"), replicas.inprocess._limit(0.05):
        while True:
            pass
    assert signal.getsignal(signal.SIGPROF) in (signal.SIG_DFL, None)  # as it was
    outside = []

    def in_a_thread() -> None:
        try:
            real_answer(files)
        except runner.AnswerLive as said:
            outside.append(str(said))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert outside == ["a call outside the main thread"]
    assert real_answer(files)  # and in the main thread, an answer


def test_a_value_scenario_here_frees_its_graph_and_leaves_the_collector_as_it_was():
    """Its graph's reference cycles are collected as the call ends, and the automatic collector
    (off during the call) is as it was after every call: answered, raised or out of time."""
    files = read_files(SOLUTIONS)[0]
    Value = replicas.inprocess._engine(files["value"]).Value
    assert gc.isenabled() and real_answer(files)
    assert gc.isenabled()
    assert not [found for found in gc.get_objects() if isinstance(found, Value)]
    with pytest.raises(runner.AnswerLive), replicas.inprocess._limit(0.05), replicas.inprocess._collected():
        while True:
            pass
    assert gc.isenabled()
    gc.disable()
    try:
        real_answer(files)
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- every replica agrees with the live reference ---------------------------------------------------


def calls_of(junit) -> list[tuple[str, dict]]:
    return list({call.recorded: (call.scenario, call.kwargs) for call in recorded_calls(junit)}.values())


@pytest.mark.parametrize("seed", REPLICA_SEEDS)
def test_every_replica_agrees_with_the_live_reference(sealed_at, seed):
    """Every call of a replicated scenario that the suites make at `seed`, answered by the
    replica and by the live reference (sealed at that seed): the same structure, inputs and
    texts, and every number within the tolerance the check is judged with."""
    sealed = sealed_at(seed)
    answers = SealedReference(sealed.path).answers
    asked = [(scenario_id, kwargs) for scenario_id, kwargs in calls_of(sealed.junit)
             if scenario_id in replicas.replicated()]
    assert {scenario_id for scenario_id, _ in asked} == set(replicas.replicated())
    for scenario_id, kwargs in asked:
        loose = replicas.tolerance_of(scenario_id) == "training"
        tolerance = Tolerance(TOLERANCES.training_rel, TOLERANCES.training_abs) if loose \
            else Tolerance(TOLERANCES.rel, TOLERANCES.abs)
        expected = answers[scenario_key(scenario_id, kwargs)].observations
        found = replicas.disagreement(expected, replicas.answer(scenario_id, kwargs), tolerance)
        assert found is None, f"{scenario_id} {kwargs}: {found}"


@pytest.mark.parametrize("seed", REPLICA_SEEDS)
def test_every_value_scenario_run_here_answers_what_the_worker_answered(sealed_at, seed):
    """Every call of a value scenario that the suites make at `seed`, run in this process on
    solutions/value.py, answers exactly what the live reference's worker answered, or is
    left to the live reference (AnswerLive)."""
    sealed = sealed_at(seed)
    answers = SealedReference(sealed.path).answers
    files, real = read_files(SOLUTIONS)[0], replicas.Replicas()
    asked = [(scenario_id, kwargs) for scenario_id, kwargs in calls_of(sealed.junit)
             if scenario_id.partition(":")[0] in replicas.inprocess.MODULES]
    assert {scenario_id.partition(":")[0] for scenario_id, _ in asked} == set(replicas.inprocess.MODULES)
    left_live = []
    for scenario_id, kwargs in asked:
        assert real.usable(scenario_id, files)
        try:
            got = real.answer(scenario_id, kwargs, files)
        except runner.AnswerLive:
            left_live.append(scenario_id)
            continue
        assert got == answers[scenario_key(scenario_id, kwargs)].observations, f"{scenario_id} {kwargs}"
    assert not left_live, left_live  # the reference raises nowhere, and nothing is that slow


def test_a_call_a_replica_cannot_answer_is_live_and_the_replica_still_trusted(monkeypatch):
    """AnswerLive: that one call is the live reference's. A first call the replica cannot answer
    is not counted as checked, so the next one is compared; nothing is distrusted."""
    monkeypatch.setattr(FastReference, "distrusted", [])
    turns = [runner.AnswerLive("first"), {"val": 1.0}, runner.AnswerLive("third"), {"val": 1.0}]
    reference, calls, replicas_of = fast_reference({"dual:lesson": {"val": 1.0}}, {"dual:lesson": turns})
    answers = [reference.answer("dual:lesson", {"x": x}).observations for x in (1.0, 2.0, 3.0, 4.0)]
    assert answers == [{"val": 1.0}] * 4
    assert calls == ["dual:lesson"] * 3 and len(replicas_of.asked) == 4
    assert FastReference.distrusted == []


@pytest.mark.slow
def test_a_grading_process_with_replicas_grades_as_one_without(tmp_path):
    """Submissions graded one after another in one grading process with the replicas (live,
    then from the replicas) get exactly what each gets from the live reference alone."""
    secret = tmp_path / "grading.secret"
    make_secret(secret)
    official = (f"--grading-secret={secret}", "--grading-context", "v1", f"--reference={SOLUTIONS}")
    names = ["unbroadcast-drops-keepdims", "dual-product-rule", "tanh-derivative-of-input",
             "mul-number-not-wrapped"]
    entries = {entry.name: entry for entry in CORPUS}
    folders = {"correct": SOLUTIONS}
    for name in names:
        build(entries[name], SOLUTIONS, tmp_path / name)
        folders[name] = tmp_path / name

    def seen(results: dict) -> dict:
        return {part: (e["score"], e.get("output", "")) for part, e in results.items()}

    alone = {name: seen(autograde_folder(folder, tmp_path / f"{name}.json", *official, env={}))
             for name, folder in folders.items()}
    grader = graders.Grader({**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, tmp_path)
    try:
        for round_ in range(2):
            for name, folder in folders.items():
                results = tmp_path / f"{name}-{round_}.json"
                args = graders.pytest_args(f"--submission={folder}", f"--results-json={results}",
                                           *official, "-p", "autograder.staff.replicas")
                code = grader.grade(args, results.with_suffix(".log"), 600)
                assert code in (0, 1), results.with_suffix(".log").read_text()
                log = results.with_suffix(".log").read_text()
                assert "disagrees" not in log
                got = {t["tags"][0]: t for t in json.loads(results.read_text(encoding="utf-8"))["tests"]}
                assert seen(got) == alone[name], (name, round_)
    finally:
        grader.close()
        grader.process.wait()
    assert len({json.dumps(result, sort_keys=True) for result in alone.values()}) == len(folders)


@pytest.mark.engine("dual")  # the worker then answers a scenario of dual
def test_the_kept_reference_worker_serves_the_next_grading_of_the_same_files(tmp_path, monkeypatch):
    """A grading process keeps the reference's worker for the next grading of the same files,
    and starts a new one for other files."""
    monkeypatch.setattr(runner, "_KEPT", [])
    limits = load().limits
    first = runner.kept_worker(SOLUTIONS, limits)
    assert runner.kept_worker(SOLUTIONS, limits) is first
    changed = tmp_path / "solutions"
    changed.mkdir()
    for name, data in read_files(SOLUTIONS)[0].items():
        (changed / f"{name}.py").write_bytes(data + (b"\n# changed\n" if name == "dual" else b""))
    other = runner.kept_worker(changed, limits)
    try:
        assert other is not first and other.files["dual"].endswith(b"# changed\n")
        assert first.process is None  # the one it replaced was stopped
        answer = other.run("dual:constant", {"c": 2.5}, limits.test_timeout_seconds)
        assert answer.observations == {"val": 2.5, "der": 0.0}
    finally:
        other.close()
