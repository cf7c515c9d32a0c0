"""Run one scenario on the submission and on the reference, with the reference's time as the yardstick.

The reference answers either live, from `solutions/` in a worker of its own, or from a
sealed file of answers made earlier from `solutions/` (where the solutions must not ship).
Times are CPU times, measured by the trusted side, so a busy machine moves no limit. A
scenario that the machine left without CPU for `wall_clock_seconds` is run again in a fresh
worker; when that happens every time, MachineBusy stops the grading without a score (the
plugin exits with BUSY_EXIT), so that the grade is made again later, never a silent zero.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from . import sandbox
from .config import Grading, Limits
from .judge import answered
from .questions import Seed
from .stubs import Handout, StubError, handout
from .worker import Answer, Outcome, Worker, read_files

BUSY_RETRIES = 2
BUSY_EXIT = 75  # EX_TEMPFAIL: try again later


class SealError(Exception):
    """A sealed reference that cannot be used; the message says why."""


class MachineBusy(Exception):
    """The machine left a scenario without CPU every time it ran: no grade can be made now."""


def run_unless_busy(worker: Worker, scenario_id: str, kwargs: dict, limit: float,
                    draw: bool = False) -> Answer:
    """worker.run, again in a fresh worker (up to BUSY_RETRIES times) while the machine was too
    busy to run it. Raises MachineBusy when it was too busy every time."""
    drawing = {"draw": True} if draw else {}
    answer = worker.run(scenario_id, kwargs, limit, **drawing)
    for _ in range(BUSY_RETRIES):
        if answer.outcome is not Outcome.BUSY:
            return answer
        answer = worker.run(scenario_id, kwargs, limit, **drawing)
    if answer.outcome is Outcome.BUSY:
        raise MachineBusy(f"{scenario_id}: {answer.failure}, {BUSY_RETRIES + 1} times; grade this "
                          "submission again when the machine is less loaded")
    return answer


def start_sandbox() -> str:
    """The sandbox level, or the end of the session with the one message that says why not."""
    try:
        return sandbox.require()
    except sandbox.SandboxError as error:
        pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)


def time_limit(limits: Limits, reference_seconds: float) -> float:
    """The CPU time a scenario may take: a multiple of the reference's, with a floor."""
    return max(limits.time_floor_seconds, limits.time_multiplier * reference_seconds)


def files_digest(files: dict[str, bytes]) -> str:
    """The SHA-256 of an implementation's files, by name."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


def folder_digest(folder: Path) -> str:
    """The SHA-256 of the engine files of `folder`, as a worker reads them."""
    return files_digest(read_files(folder)[0])


def scenario_key(scenario_id: str, kwargs: dict) -> str:
    text = json.dumps([scenario_id, kwargs], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class LiveReference:
    """The reference implementation, run in its own worker. With `draw`, every scenario draws
    its graphs, so that a sealed file holds them too; else a scenario draws them only when a
    failed answer's message asks for them."""

    def __init__(self, folder: Path, grading: Grading, draw: bool = False, sha256: str | None = None) -> None:
        start_sandbox()
        if problem := sandbox.exposed(folder, "the reference"):
            pytest.exit(problem, returncode=pytest.ExitCode.USAGE_ERROR)
        self.worker = Worker(folder, grading.limits, share=False)
        if sha256 is not None and files_digest(self.worker.files) != sha256.lower():
            self.worker.close()
            pytest.exit(f"{folder}: not the reference this grading was given (its files changed since "
                        "the grading began); grade again", returncode=pytest.ExitCode.USAGE_ERROR)
        self.draw = draw
        try:
            self.handout = handout(folder)
        except StubError as error:
            self.worker.close()
            pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)
        self.answers: dict[str, Answer] = {}
        self.drawn: dict[str, list | None] = {}
        self.names: dict[str, str] = {}  # key -> scenario id, to name a scenario the reference failed
        self.timeout = grading.limits.test_timeout_seconds

    def answer(self, scenario_id: str, kwargs: dict) -> Answer:
        key = scenario_key(scenario_id, kwargs)
        if key not in self.answers:
            self.answers[key] = run_unless_busy(self.worker, scenario_id, kwargs, self.timeout,
                                                draw=self.draw)
            self.names[key] = scenario_id
        return self.answers[key]

    def graphs(self, scenario_id: str, kwargs: dict) -> list | None:
        """The graphs the reference draws for a scenario (None where it draws none)."""
        answer = self.answer(scenario_id, kwargs)
        if self.draw:
            return answer.graphs
        key = scenario_key(scenario_id, kwargs)
        if key not in self.drawn:
            answer = run_unless_busy(self.worker, scenario_id, kwargs, self.timeout, draw=True)
            self.drawn[key] = answer.graphs
        return self.drawn[key]

    def failures(self) -> list[str]:
        """The scenarios the reference did not answer (a fault of the kit), by id."""
        return sorted({self.names[key] for key, answer in self.answers.items() if not answered(answer)})

    def close(self) -> None:
        self.worker.close()


class SealedReference:
    """Answers recorded from the reference to the questions of one seed (the public ones, for a
    handout that ships without `solutions/`). The graphs they drew stay text until a failed
    scenario's message asks for them."""

    def __init__(self, path: Path, sha256: str | None = None) -> None:
        self.path = path
        data = path.read_bytes()
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256.lower():
            raise SealError(f"{path}: not the sealed reference this grading was given (its SHA-256 "
                            "differs from the one recorded when it was made); something changed it. "
                            "Seal the reference again (delete the file) and grade again")
        try:
            sealed = json.loads(data)
            self.seed, records = Seed(sealed["questions"]), sealed["answers"]
            self.handout = Handout(**sealed["handout"])
            self.drawn = {key: value.pop("graphs", None) for key, value in records.items()}
            self.answers = {key: Answer(**{**value, "outcome": Outcome(value["outcome"])})
                            for key, value in records.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SealError(f"{path}: not a sealed reference this kit can read; seal it again from "
                            "solutions/ with --seal-reference") from None

    def answer(self, scenario_id: str, kwargs: dict) -> Answer:
        try:
            return self.answers[scenario_key(scenario_id, kwargs)]
        except KeyError:
            raise LookupError(f"{self.path} holds no answer for scenario {scenario_id}; "
                              "rebuild the sealed file from solutions/") from None

    def graphs(self, scenario_id: str, kwargs: dict) -> list | None:
        text = self.drawn.get(scenario_key(scenario_id, kwargs))
        return json.loads(text) if isinstance(text, str) else None

    def close(self) -> None:
        pass


def seal(reference: LiveReference, path: Path, seed: Seed) -> list[str]:
    """Write the reference's answers to the questions of `seed` to a sealed file, readable by
    its owner alone (output is dropped: it is not needed); when the reference failed any
    scenario, write nothing and return those scenarios."""
    if failed := reference.failures():
        return failed
    # Sorted by key, but each answer's own keys in the order the scenario made them: the judge
    # reports the first difference in that order, live or sealed alike. The graphs are kept as
    # text, read only for a failed scenario's message.
    records = {key: {**asdict(answer), "output": "", "outcome": answer.outcome.value,
                     "graphs": json.dumps(answer.graphs) if answer.graphs else None}
               for key, answer in sorted(reference.answers.items())}
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        os.fchmod(descriptor, 0o600)
        file.write(json.dumps({"questions": seed.value, "handout": asdict(reference.handout),
                               "answers": records}).encode())
    return []


class Runner:
    """A submission and a reference, side by side."""

    def __init__(self, submission: Path, reference: LiveReference | SealedReference,
                 grading: Grading) -> None:
        start_sandbox()
        self.grading = grading
        self.submission = Worker(submission, grading.limits)
        self.reference = reference
        self.answers: dict[str, tuple[Answer, Answer, float]] = {}
        self.second: Worker | None = None
        self.second_answers: dict[str, Answer] = {}
        self.timeouts: dict[str, int] = {}  # timeouts in a row, by part
        self.seed = Seed()  # the questions' seed, known once the submission's files are read

    def run(self, scenario_id: str, kwargs: dict, part: str = "") -> tuple[Answer, Answer, float]:
        """The reference's answer, the submission's answer, and the time limit it had.

        A part whose scenarios keep timing out stops costing minutes: after
        `timeouts_per_part` in a row, the rest of its scenarios fail without running.
        """
        key = scenario_key(scenario_id, kwargs)
        if key not in self.answers:
            expected = self.reference.answer(scenario_id, kwargs)
            limit = time_limit(self.grading.limits, expected.seconds)
            streak = self.timeouts.get(part, 0)
            if streak >= self.grading.limits.timeouts_per_part:
                got = Answer(failure=f"not run: the last {streak} scenarios of this part timed out",
                             outcome=Outcome.NOT_RUN)
            else:
                got = run_unless_busy(self.submission, scenario_id, kwargs, limit)
                self.timeouts[part] = streak + 1 if got.outcome is Outcome.TIMED_OUT else 0
            self.answers[key] = expected, got, limit
        return self.answers[key]

    def rerun(self, scenario_id: str, kwargs: dict) -> Answer:
        """A failed scenario run once more, in a second worker (a fresh process, whose state no
        judged answer depends on, so that a submission learns nothing it could use from being
        asked), drawing its graphs on the way: for the failure's message only."""
        key = scenario_key(scenario_id, kwargs)
        if key not in self.second_answers:
            _, _, limit = self.run(scenario_id, kwargs)
            if self.second is None:
                self.second = self.submission.fresh_copy()
            self.second_answers[key] = run_unless_busy(self.second, scenario_id, kwargs, limit, draw=True)
        return self.second_answers[key]

    def drawings(self, scenario_id: str, kwargs: dict) -> tuple[list | None, list | None]:
        """The graphs the reference and the submission drew for a scenario the submission
        failed. The submission's come from running it again (a correct submission never pays
        for them), and only where the reference drew some and that run answered exactly as the
        judged one did, so that they explain the very answer judged."""
        def what_it_said(answer: Answer) -> str:
            return json.dumps([answer.observations, answer.raised, answer.message], sort_keys=True)

        expected = self.reference.graphs(scenario_id, kwargs)
        if not expected:
            return None, None
        _, got, _ = self.run(scenario_id, kwargs)
        rerun = self.rerun(scenario_id, kwargs)
        same = not rerun.failure and what_it_said(rerun) == what_it_said(got)
        return expected, (rerun.graphs if same else None)

    def answers_differently_again(self, scenario_id: str, kwargs: dict) -> bool:
        """Does the submission answer differently in another process (with another history)?

        An engine that visits a set of parents, ordered by memory addresses, can do that.
        """
        _, got, _ = self.run(scenario_id, kwargs)
        if got.observations is None:
            return False
        rerun = self.rerun(scenario_id, kwargs)
        return rerun.observations is not None and rerun.observations != got.observations

    def close(self) -> None:
        self.submission.close()
        self.reference.close()
        if self.second is not None:
            self.second.close()
