"""A hang costs each part it hangs in the part's budget of CPU time, and a check that times out
after others answered costs that check alone. A scenario that runs out of CPU time is asked once
more, and the second answer is judged: a moment the machine took from the worker costs nothing.

The runner is given a reference that answers at once, with a time per scenario, and a
submission whose scenarios take whatever time a test says, or time out: what each part's
scenarios cost, and which of them run, is the runner's budget alone.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from support import KIT

from autograder.config import load
from autograder.runner import Runner
from autograder.worker import Ending, Reply, timed_out

LIMITS = load().limits


class Submission:
    """A submission's worker whose every scenario takes `seconds` of CPU time, or hangs."""

    def __init__(self, hangs: set[str], seconds: float = 0.001) -> None:
        self.hangs, self.seconds, self.ran, self.spent = hangs, seconds, [], 0.0

    def run(self, scenario_id: str, kwargs: dict, limit: float, **drawing) -> Reply:
        self.ran.append(scenario_id)
        if scenario_id in self.hangs:
            self.spent += limit
            return Reply(failure=timed_out(limit), ending=Ending.TIMED_OUT, seconds=limit)
        self.spent += self.seconds
        return Reply(observations={"x": 1.0}, seconds=self.seconds)

    def close(self) -> None:
        pass


def runner_for(submission: Submission, reference_seconds: dict[str, float]) -> Runner:
    reference = SimpleNamespace(answer=lambda scenario_id, kwargs: Reply(observations={"x": 1.0},
                                                                         seconds=reference_seconds[scenario_id]),
                                close=lambda: None)
    runner = Runner(KIT / "solutions", reference, load())
    runner.submission = submission
    return runner


def ask(runner: Runner, part: str, scenario_ids: list[str]) -> list[Ending]:
    return [runner.run(scenario_id, {"n": index}, part)[1].ending
            for index, scenario_id in enumerate(scenario_ids)]


SMALL = [f"backward:s{index}" for index in range(9)]  # nine small scenarios, as value.backward has


def test_a_hang_in_a_part_of_small_scenarios_costs_one_scenario_asked_twice():
    submission = Submission(hangs=set(SMALL))
    runner = runner_for(submission, dict.fromkeys(SMALL, 0.0005))
    endings = ask(runner, "value.backward", SMALL)
    assert endings == [Ending.TIMED_OUT] + [Ending.NOT_RUN] * 8
    assert submission.ran == [SMALL[0], SMALL[0]]
    assert submission.spent == pytest.approx(2 * LIMITS.time_floor_seconds)
    message = runner.run(SMALL[-1], {"n": 8}, "value.backward")[1].failure
    assert message == ("not run: every scenario of this part so far ran out of time (0.10 s of CPU time, "
                       "its whole budget)")


def test_a_hang_in_a_long_scenario_costs_its_limit_twice():
    submission = Submission(hangs={"training:moons"})
    runner = runner_for(submission, {"training:moons": 0.075})
    assert ask(runner, "value.training", ["training:moons"]) == [Ending.TIMED_OUT]
    assert submission.spent == pytest.approx(2 * LIMITS.time_multiplier * 0.075)


class Interrupted(Submission):
    """A submission whose first run of each scenario in `once` the machine put past its limit
    (as a host that takes the CPU away while the worker runs it does); its second is in time."""

    def __init__(self, once: set[str]) -> None:
        super().__init__(hangs=set())
        self.once = set(once)

    def run(self, scenario_id: str, kwargs: dict, limit: float, **drawing) -> Reply:
        if scenario_id in self.once:
            self.once.discard(scenario_id)
            self.ran.append(scenario_id)
            return Reply(failure=timed_out(limit), ending=Ending.TIMED_OUT, seconds=limit)
        return super().run(scenario_id, kwargs, limit, **drawing)


def test_a_scenario_the_machine_put_past_its_limit_once_is_judged_by_its_second_answer():
    submission = Interrupted(once={SMALL[2], SMALL[3]})  # two in a row, which would stop the part
    runner = runner_for(submission, dict.fromkeys(SMALL, 0.0005))
    assert ask(runner, "value.backward", SMALL) == [Ending.ANSWERED] * 9
    assert submission.ran == SMALL[:3] + [SMALL[2], SMALL[3], SMALL[3]] + SMALL[4:]


def test_a_correct_submission_runs_every_scenario_however_slow_within_its_limits():
    """The budget is spent by timeouts alone: a submission far slower than the reference, but
    within every scenario's limit, runs every scenario of the part."""
    submission = Submission(hangs=set(), seconds=0.09)  # 180 times the reference, under the floor
    runner = runner_for(submission, dict.fromkeys(SMALL, 0.0005))
    assert ask(runner, "value.backward", SMALL) == [Ending.ANSWERED] * 9


def test_the_budget_of_a_part_is_its_own():
    """A hang in one part costs no other part a scenario."""
    submission = Submission(hangs=set(SMALL))
    others = [f"arithmetic:s{index}" for index in range(5)]
    runner = runner_for(submission, dict.fromkeys(SMALL + others, 0.0005))
    ask(runner, "value.backward", SMALL)
    assert ask(runner, "value.mul", others) == [Ending.ANSWERED] * 5


def test_a_check_that_times_out_after_others_answered_costs_that_check_alone():
    """A debug print that makes one check of a part time out (the others answered in time)
    leaves the part its budget: every other scenario runs, as before."""
    submission = Submission(hangs={SMALL[4]})
    runner = runner_for(submission, dict.fromkeys(SMALL, 0.0005))
    endings = ask(runner, "value.backward", SMALL)
    assert endings == [Ending.ANSWERED] * 4 + [Ending.TIMED_OUT] + [Ending.ANSWERED] * 4


def test_two_timeouts_in_a_row_still_stop_a_part():
    submission = Submission(hangs=set(SMALL[3:]))
    runner = runner_for(submission, dict.fromkeys(SMALL, 0.0005))
    endings = ask(runner, "value.backward", SMALL)
    assert endings == [Ending.ANSWERED] * 3 + [Ending.TIMED_OUT] * 2 + [Ending.NOT_RUN] * 4
