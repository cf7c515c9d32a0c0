"""Every pipe between the grader and a worker has a deadline: no worker can hold the grader.

The attack: a submission's tensor.py, at its import, writes a stack of fake answers on its
answer pipe (one of them answers the import) and then sleeps without reading. Every request
after that found an answer waiting while its own bytes piled up in the request pipe, until the
grader's 162 KB request of `train_digits` blocked in a write that had no deadline, with no clock
running: the grading never ended. Now what a worker does not take is written while the
request's own clocks run, and an answer to a request the worker has not read (all or part of
it still in the pipe) is not taken: the worker is stopped, the request fails, and a fresh
worker serves the rest, so that the other parts are graded as they would be without it.

Then the other ways a worker stops talking, each with a worker of this process: half an
answer and silence, its request or answer end closed, a process that keeps its answer pipe
open after the worker died, and children that print without end after it answered.
"""

from __future__ import annotations

import threading
import time

import pytest
from support import hostile
from support.hostile import TOOLS, at_a_level, make_submission, run_grading, scores

from autograder import sandbox
from autograder.config import load
from autograder.worker import Ending, Worker
from hostile import test_isolation

pytestmark = pytest.mark.slow  # grades, or starts workers, in processes of its own

KIT = test_isolation.KIT
LIMITS = load(KIT / "grading.toml").limits
ROOT_WITH_NAMESPACES = sandbox.level() == "isolated"
place, nothing_left = test_isolation.place, test_isolation.nothing_left  # test_isolation.py's fixtures
BOUND_SECONDS = 60  # what a request may take here at most, whatever its worker does

# At the end of tensor.py: a stack of answers, and then silence.
FAKES_THEN_SLEEPS = """
import os as _os, sys as _sys, time as _time
_os.write(int(_sys.argv[-1]), b'{"observations": null}\\n' * FAKES)
_time.sleep(3600)
"""


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT_WITH_NAMESPACES and TOOLS),
                    reason="both root levels need root with CAP_SYS_ADMIN, unshare and setpriv")
@at_a_level
def test_a_worker_that_answers_ahead_and_stops_reading_holds_no_grading(place, level, monkeypatch):
    monkeypatch.setattr(hostile, "GRADING_SECONDS", 300)  # it hung for good
    submission = make_submission(place["folder"] / f"pipes-{level}", "answers_ahead")
    with open(submission / "tensor.py", "a", encoding="utf-8") as file:
        file.write(FAKES_THEN_SLEEPS.replace("FAKES", "1000"))
    done = run_grading(level, submission, place["folder"], f"pipes-{level}",
                       "--grading=" + str(place["grading"]), "--reference=" + str(place["sealed"]))
    assert done.results is not None, done.output[-3000:]
    for part, entry in done.results.items():  # tensor.py's parts lost; the others as the honest base
        if part.startswith("tensor."):
            assert entry["score"] == 0, part
        else:
            assert entry["score"] == place["honest"][part], part
    assert scores(done.results) != place["honest"]


# -- with a worker of this process ---------------------------------------------------------------

def submission_with(folder, at_import: str):
    return make_submission(folder, "talks_oddly", at_import=at_import)


def within_bound(worker: Worker, call) -> object:
    """call(), which must return within BOUND_SECONDS; if it does not, the worker is killed (so
    that the test ends) and the test fails."""
    got = []
    thread = threading.Thread(target=lambda: got.append(call()), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(BOUND_SECONDS)
    if thread.is_alive():
        if worker.process is not None:
            worker.process.channel.stop()  # its keeper kills it: the write fails, the thread ends
        thread.join(BOUND_SECONDS)
        pytest.fail(f"the grader was held for more than {BOUND_SECONDS} s")
    assert time.monotonic() - started < BOUND_SECONDS
    return got[0]


BIG = {"points": [2.0], "padding": "x" * 300_000}  # a request larger than a pipe holds


def test_a_worker_that_stops_reading_costs_its_request(tmp_path):
    worker = Worker(submission_with(tmp_path, FAKES_THEN_SLEEPS.replace("FAKES", "1")), LIMITS)
    try:
        assert worker.load("value") is None  # the fake answer to its import
        answer = within_bound(worker, lambda: worker.run("arithmetic:square", BIG, 0.2))
        assert answer.ending is Ending.TIMED_OUT and "slept or waited" in answer.failure
        assert worker.process is None  # stopped: the next request gets a fresh worker
    finally:
        worker.close()


@pytest.mark.parametrize("size", ["larger than a pipe", "small"])
def test_an_answer_to_a_request_never_read_is_not_taken(tmp_path, size):
    """Answers written ahead, by a worker that then reads nothing: not one of them is taken for
    the answer to a request it never read, which would hand them to the requests of other
    parts (their scenarios run in the same worker)."""
    worker = Worker(submission_with(tmp_path, FAKES_THEN_SLEEPS.replace("FAKES", "5")), LIMITS)
    try:
        assert worker.load("value") is None
        kwargs = {"points": [2.0]} if size == "small" else BIG
        answer = within_bound(worker, lambda: worker.run("arithmetic:square", kwargs, 0.2))
        assert answer.ending is Ending.MALFORMED and "before it had read" in answer.failure
        assert worker.process is None
    finally:
        worker.close()


ODD_TALKERS = {
    "half_an_answer": ("""
        import os as _os, sys as _sys, time as _time
        _os.write(int(_sys.argv[-1]), b'{"observations": [1, 2')
        _time.sleep(3600)
        """, Ending.TIMED_OUT),
    "closes_its_request_end": ("""
        import os as _os, sys as _sys, time as _time
        _os.write(int(_sys.argv[-1]), b'{"observations": null}\\n')
        _os.close(int(_sys.argv[-2]))
        _time.sleep(3600)
        """, Ending.TIMED_OUT),
    "closes_its_answer_end": ("""
        import os as _os, sys as _sys, time as _time
        _os.close(int(_sys.argv[-1]))
        _time.sleep(3600)
        """, Ending.CRASHED),
    "leaves_a_child_holding_its_answer_end": ("""
        import os as _os, sys as _sys, time as _time
        _kept = _os.dup(int(_sys.argv[-1]))  # not closed at the fork, as the worker's own is
        if _os.fork() == 0:
            _os.setsid()
            _time.sleep(3600)
        _os._exit(3)
        """, Ending.CRASHED),
}


@pytest.mark.parametrize("talker", ODD_TALKERS)
def test_a_worker_that_stops_talking_costs_only_its_request(tmp_path, talker):
    code, outcome = ODD_TALKERS[talker]
    worker = Worker(submission_with(tmp_path, code), LIMITS)
    try:
        def ask():
            problem = worker.load("value")
            return problem if problem is not None else worker.run("arithmetic:square", BIG, 0.2)

        answer = within_bound(worker, ask)
        assert answer is not None and answer.ending is outcome, answer
    finally:
        worker.close()


FLOODS = """
import os as _os
for _ in range(8):  # after the answer, children that print without end
    if _os.fork() == 0:
        _chunk = b"x" * 65536
        while True:
            _os.write(1, _chunk)
"""


def test_children_that_print_without_end_after_the_answer_hold_nothing(tmp_path):
    worker = Worker(submission_with(tmp_path, FLOODS), LIMITS)
    try:
        assert within_bound(worker, lambda: worker.load("value")) is None
        answer = within_bound(worker, lambda: worker.run("arithmetic:square", {"points": [2.0]}, 0.5))
        assert answer.ending is Ending.ANSWERED and answer.printed > 0
    finally:
        worker.close()
