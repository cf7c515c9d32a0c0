"""Run one scenario on the submission and on the reference, with the reference's time as the yardstick.

The reference answers either live, from `solutions/` in a worker of its own, or from a
sealed file of answers made earlier from `solutions/` (where the solutions must not ship). A
grading process that grades one submission after another (`autograder bulk`) may also have
replicas (autograder/staff/replicas): the reference's answers to its costliest scenarios,
computed in this process, each used only while verified and once it has agreed with the live
answer here; the live answer's CPU time stays the scenario's yardstick (FastReference).
Times are CPU times, measured by the trusted side, so a busy machine moves no limit. A
scenario that the machine left without CPU for `wall_clock_seconds` is run again in a fresh
worker; when that happens every time, MachineBusy stops the grading without a score (the
plugin exits with BUSY_EXIT), so that the grade is made again later, never a silent zero.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar, Protocol

import pytest

from . import isolation, scenario_sources
from .answers import Tolerance, answered
from .config import Grading, Limits, Tolerances
from .portable import PortableWorker
from .questions import Seed
from .stubs import Handout, StubError, handout
from .worker import Ending, IdleBudget, Reply, Worker, read_files

BUSY_RETRIES = 2
SHIFT = 97  # pages and objects the second worker takes first, so that the submission's lie elsewhere
BUSY_EXIT = 75  # EX_TEMPFAIL: try again later


class Unusable(Exception):
    """A reference, or this machine's workers, that cannot grade: the message says why and what to do."""


class SealError(Unusable):
    """A sealed reference that cannot be used; the message says why."""


class MachineBusy(Exception):
    """The machine left a scenario without CPU every time it ran: no grade can be made now."""


def run_unless_busy(worker: Worker, scenario_id: str, kwargs: dict, limit: float,
                    draw: bool = False) -> Reply:
    """worker.run, again in a fresh worker (up to BUSY_RETRIES times) while the machine was too
    busy to run it. Raises MachineBusy when it was too busy every time."""
    drawing = {"draw": True} if draw else {}
    answer = worker.run(scenario_id, kwargs, limit, **drawing)
    for _ in range(BUSY_RETRIES):
        if answer.ending is not Ending.BUSY:
            return answer
        answer = worker.run(scenario_id, kwargs, limit, **drawing)
    if answer.ending is Ending.BUSY:
        raise MachineBusy(f"{scenario_id}: {answer.failure}, {BUSY_RETRIES + 1} times; grade this "
                          "submission again when the machine is less loaded")
    return answer


def answer_in_time(worker: Worker, scenario_id: str, kwargs: dict, limit: float) -> Reply:
    """run_unless_busy, asked once more when it ran out of CPU time, and the second answer judged.
    A loaded machine once put a correct answer to a scenario the reference runs in no time past
    the limit of a tenth of a second (the moment was charged to the worker's clock; where from is
    not known); a slow submission is slow both times."""
    answer = run_unless_busy(worker, scenario_id, kwargs, limit)
    if answer.ending is Ending.TIMED_OUT:
        answer = run_unless_busy(worker, scenario_id, kwargs, limit)
    return answer


def start_sandbox() -> str:
    """How workers are isolated here (isolation.level); Unusable when they cannot run."""
    try:
        return isolation.level()
    except isolation.IsolationError as error:
        raise Unusable(str(error)) from None


def new_worker(folder: Path, limits: Limits, *args, **options) -> Worker:
    """A Worker (the sandbox's) or a PortableWorker (plain child processes), as this run isolates."""
    kind = PortableWorker if isolation.portable() else Worker
    return kind(folder, limits, *args, **options)


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


def what_it_said(answer: Reply) -> str:
    """A reply's answer, its observations or the exception it raised, as one comparable text."""
    return json.dumps([answer.observations, answer.said()], sort_keys=True)


def scenario_key(scenario_id: str, kwargs: dict) -> str:
    text = json.dumps([scenario_id, kwargs], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


_KEPT: list[Worker] = []  # the reference's worker that a grading process keeps between gradings
_HANDOUTS: dict[tuple[Path, str], Handout] = {}  # by folder and the digest of its engine files


def handout_of(folder: Path, files: dict[str, bytes]) -> Handout:
    """The handout of a reference folder (stubs.handout), read once per process for the same files.
    Raises StubError."""
    key = (folder, files_digest(files))
    if key not in _HANDOUTS:
        _HANDOUTS[key] = handout(folder)
    return _HANDOUTS[key]


def reference_idle(limits: Limits) -> IdleBudget:
    """The reference's own idle budget: as long as it may compute, never the submission's."""
    return IdleBudget(limits.test_timeout_seconds)


def kept_worker(folder: Path, limits: Limits) -> Worker:
    """The reference's worker kept from an earlier grading in this process, where its folder,
    files and limits are the same (its idle budget renewed), else a new one kept in its place."""
    files, unreadable = read_files(folder)
    for worker in _KEPT:
        if (worker.folder, worker.limits, worker.files, set(worker.unreadable)) == (folder, limits, files,
                                                                                     set(unreadable)):
            worker.idle = reference_idle(limits)
            return worker
    if not _KEPT:
        atexit.register(lambda: [worker.close() for worker in _KEPT])
    for worker in _KEPT:
        worker.close()
    _KEPT[:] = [new_worker(folder, limits, (files, unreadable), share=False, sweep=False,
                       idle=reference_idle(limits))]
    return _KEPT[0]


class LiveReference:
    """The reference implementation, run in its own worker. With `draw`, every scenario draws
    its graphs, so that a sealed file holds them too; else a scenario draws them only when a
    failed answer's message asks for them. With `keep`, its worker stays for the next grading
    in this process (kept_worker)."""

    def __init__(self, folder: Path, grading: Grading, draw: bool = False, sha256: str | None = None,
                 keep: bool = False) -> None:
        start_sandbox()
        if problem := isolation.exposed(folder, "the reference"):
            raise Unusable(problem)
        # Its own clock: the reference may idle as long as it may compute (test_timeout_seconds in
        # all), never on the submission's idle_seconds, so an instructor's slow change is no fault.
        self.keep = keep
        self.worker = kept_worker(folder, grading.limits) if keep else \
            new_worker(folder, grading.limits, share=False, sweep=False, idle=reference_idle(grading.limits))
        if sha256 is not None and files_digest(self.worker.files) != sha256.lower():
            self.worker.close()
            raise Unusable(f"{folder}: not the reference this grading was given (its files changed since "
                           "the grading began); grade again")
        self.draw = draw
        try:
            self.handout = handout_of(folder, self.worker.files)
        except StubError as error:
            self.worker.close()
            raise Unusable(str(error)) from None
        self.answers: dict[str, Reply] = {}
        self.drawn: dict[str, list | None] = {}
        self.names: dict[str, str] = {}  # key -> scenario id, to name a scenario the reference failed
        self.timeout = grading.limits.test_timeout_seconds

    def answer(self, scenario_id: str, kwargs: dict) -> Reply:
        key = scenario_key(scenario_id, kwargs)
        if key not in self.answers:
            self.answers[key] = run_unless_busy(self.worker, scenario_id, kwargs, self.timeout,
                                                draw=self.draw)
            self.names[key] = scenario_id
        return self.answers[key]

    def graphs(self, scenario_id: str, kwargs: dict) -> list | None:
        """The graphs the reference draws for a scenario (None where it draws none: never asked of
        a scenario that cannot draw, which would run it again for nothing)."""
        if not scenario_sources.scenario(scenario_id).draws:
            return None
        if self.draw:
            return self.answer(scenario_id, kwargs).graphs
        key = scenario_key(scenario_id, kwargs)
        if key not in self.drawn:
            answer = run_unless_busy(self.worker, scenario_id, kwargs, self.timeout, draw=True)
            self.drawn[key] = answer.graphs
        return self.drawn[key]

    def failures(self) -> list[str]:
        """The scenarios the reference did not answer (a fault of the kit), by id."""
        return sorted({self.names[key] for key, answer in self.answers.items() if not answered(answer)})

    def close(self) -> None:
        if not self.keep:
            self.worker.close()


class Replicas(Protocol):
    """Replicas of the reference's answers (autograder/staff/replicas, as a plugin sets them)."""

    def usable(self, scenario_id: str, reference: dict[str, bytes]) -> bool:
        """Is the scenario's replica verified for these reference files and the scenarios as they are?"""

    def answer(self, scenario_id: str, kwargs: dict, reference: dict[str, bytes]) -> object:
        """The replica's answer for the reference's `files`, as plain JSON data; raises
        AnswerLive where the live reference must answer this call."""

    def tolerance(self, scenario_id: str) -> str:
        """"training" or "default": the tolerance of grading.toml its answers hold to."""

    def disagreement(self, expected: object, got: object, tolerance: Tolerance) -> str | None:
        """Where the replica's answer `got` differs from the live one, or None."""


class AnswerLive(Exception):
    """A replica that cannot answer this one call as the worker would: the live reference does."""


REPLICAS = pytest.StashKey[Replicas]()  # set by a plugin: the replicas a grading may answer from


@dataclass(frozen=True)
class Checked:
    """A replicated scenario's first live answer in this process: its CPU time (the scenario's
    yardstick from then on), and whether the replica agreed with it."""

    seconds: float
    agrees: bool


class FastReference:
    """A live reference, with replicas. A scenario whose replica is verified for the reference's
    files answers live the first time this process asks it, and the replica is compared with
    that answer; from then on the replica answers, with the live answer's CPU time. A replica
    that disagrees, or fails, is not used again here. Everything else (every other scenario, the
    graphs of a failed check) is the live reference's."""

    checked: ClassVar[dict[tuple[str, str], Checked]] = {}  # by reference digest and scenario id
    distrusted: ClassVar[list[str]] = []  # what was said of replicas that disagreed, not yet shown

    def __init__(self, live: LiveReference, replicas: Replicas, tolerances: Tolerances) -> None:
        self.live, self.replicas, self.tolerances = live, replicas, tolerances
        self.handout = live.handout
        self.digest = files_digest(live.worker.files)
        self.usable: dict[str, bool] = {}

    def answer(self, scenario_id: str, kwargs: dict) -> Reply:
        if scenario_id not in self.usable:
            self.usable[scenario_id] = self.replicas.usable(scenario_id, self.live.worker.files)
        checked = self.checked.get((self.digest, scenario_id))
        if self.usable[scenario_id] and checked is not None and checked.agrees:
            try:
                return Reply(observations=self.replicas.answer(scenario_id, kwargs, self.live.worker.files),
                             seconds=checked.seconds)
            except AnswerLive:
                pass
            except Exception as error:  # noqa: BLE001 - a replica that fails is the kit's fault: answer live
                self._distrust(scenario_id, checked.seconds, f"it raised {type(error).__name__}: {error}")
        reply = self.live.answer(scenario_id, kwargs)
        if self.usable[scenario_id] and checked is None and answered(reply):
            try:
                why = self._disagreement(scenario_id, kwargs, reply)
            except AnswerLive:
                return reply  # nothing to compare with: the next call is compared
            self.checked[self.digest, scenario_id] = Checked(reply.seconds, True)
            if why:
                self._distrust(scenario_id, reply.seconds, why)
        return reply

    def _disagreement(self, scenario_id: str, kwargs: dict, reply: Reply) -> str | None:
        tolerance = self.tolerances.named(self.replicas.tolerance(scenario_id))
        try:
            replica = self.replicas.answer(scenario_id, kwargs, self.live.worker.files)
            return self.replicas.disagreement(reply.observations, replica, tolerance)
        except AnswerLive:
            raise
        except Exception as error:  # noqa: BLE001 - a replica that fails is the kit's fault
            return f"it raised {type(error).__name__}: {error}"

    def _distrust(self, scenario_id: str, seconds: float, why: str) -> None:
        """Answer the scenario live for the rest of this process, and say why once (the plugin
        that gave the replicas shows it at the end of the session)."""
        self.checked[self.digest, scenario_id] = Checked(seconds, False)
        self.distrusted.append(f"autograder: the replica of {scenario_id} disagrees with the live reference "
                               f"({why[:300]}); it is answered live from now on: run `autograder replicas`, "
                               "which says where it differs")

    def graphs(self, scenario_id: str, kwargs: dict) -> list | None:
        return self.live.graphs(scenario_id, kwargs)

    def failures(self) -> list[str]:
        return self.live.failures()

    def close(self) -> None:
        self.live.close()


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
            self.answers = {key: Reply.from_record(value) for key, value in records.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SealError(f"{path}: not a sealed reference this kit can read; seal it again from "
                            "solutions/ with --seal-reference") from None

    def answer(self, scenario_id: str, kwargs: dict) -> Reply:
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
    records = {key: {**asdict(answer), "output": "", "ending": answer.ending.value,
                     "graphs": json.dumps(answer.graphs) if answer.graphs else None}
               for key, answer in sorted(reference.answers.items())}
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        os.fchmod(descriptor, 0o600)
        file.write(json.dumps({"questions": seed.value, "handout": asdict(reference.handout),
                               "answers": records}).encode())
    return []


@dataclass
class PartTimeBudget:
    """A part's CPU time: the limits of its scenarios asked so far, added up. A scenario spends
    what it took, one that timed out its whole limit; once the part has spent all of it (every
    one of its scenarios so far ran out of time: a hang from the start), its remaining scenarios
    fail without running. A part one of whose scenarios answered in time never runs out, however
    slow, so a debug print that makes one check time out costs that check alone."""

    allowed: float = 0.0
    spent: float = 0.0

    def gone(self) -> bool:
        return self.allowed > 0 and self.spent >= self.allowed

    def spend(self, reply: Reply, limit: float) -> None:
        self.allowed += limit
        self.spent += limit if reply.ending is Ending.TIMED_OUT else min(reply.seconds, limit)


class Runner:
    """A submission and a reference, side by side."""

    def __init__(self, submission: Path, reference: LiveReference | FastReference | SealedReference,
                 grading: Grading) -> None:
        start_sandbox()
        self.grading = grading
        self.submission = new_worker(submission, grading.limits)
        self.reference = reference
        self.answers: dict[str, tuple[Reply, Reply, float]] = {}
        self.second: Worker | None = None
        self.second_answers: dict[str, Reply] = {}
        self.timeouts: dict[str, int] = {}  # timeouts in a row, by part
        self.budgets: dict[str, PartTimeBudget] = {}  # by part
        self.seed = Seed()  # the questions' seed, known once the submission's files are read

    def run(self, scenario_id: str, kwargs: dict, part: str = "") -> tuple[Reply, Reply, float]:
        """The reference's answer, the submission's answer, and the time limit it had.

        A part whose scenarios keep timing out stops costing minutes: once it has spent its
        budget (PartTimeBudget: every scenario so far timed out), or after `timeouts_per_part`
        timeouts in a row, the rest of its scenarios fail without running.
        """
        key = scenario_key(scenario_id, kwargs)
        if key not in self.answers:
            expected = self.reference.answer(scenario_id, kwargs)
            limits = self.grading.limits
            limit = time_limit(limits, expected.seconds)
            budget = self.budgets.setdefault(part, PartTimeBudget())
            streak = self.timeouts.get(part, 0)
            if streak >= limits.timeouts_per_part:
                got = Reply(failure=f"not run: the last {streak} scenarios of this part timed out",
                             ending=Ending.NOT_RUN)
            elif budget.gone():
                got = Reply(failure=f"not run: every scenario of this part so far ran out of time "
                                    f"({budget.spent:.2f} s of CPU time, its whole budget)",
                            ending=Ending.NOT_RUN)
            else:
                got = answer_in_time(self.submission, scenario_id, kwargs, limit)
                self.timeouts[part] = streak + 1 if got.ending is Ending.TIMED_OUT else 0
                budget.spend(got, limit)
            self.answers[key] = expected, got, limit
        return self.answers[key]

    def rerun(self, scenario_id: str, kwargs: dict) -> Reply:
        """A failed scenario run once more, in a second worker (a fresh process, whose state no
        judged answer depends on, so that a submission learns nothing it could use from being
        asked), drawing its graphs on the way: for the failure's message only."""
        key = scenario_key(scenario_id, kwargs)
        if key not in self.second_answers:
            _, _, limit = self.run(scenario_id, kwargs)
            if self.second is None:  # its objects lie elsewhere: an answer that follows them changes
                self.second = new_worker(self.submission.folder, self.grading.limits,
                                     (self.submission.files, self.submission.unreadable),
                                     idle=self.submission.idle, shift=SHIFT)
            self.second_answers[key] = run_unless_busy(self.second, scenario_id, kwargs, limit, draw=True)
        return self.second_answers[key]

    def drawings(self, scenario_id: str, kwargs: dict) -> tuple[list | None, list | None]:
        """The graphs the reference and the submission drew for a scenario the submission
        failed. The submission's come from running it again (a correct submission never pays
        for them), and only where the reference drew some and that run answered exactly as the
        judged one did, so that they explain the very answer judged."""
        expected = self.reference.graphs(scenario_id, kwargs)
        if not expected:
            return None, None
        _, got, _ = self.run(scenario_id, kwargs)
        rerun = self.rerun(scenario_id, kwargs)
        same = not rerun.failure and what_it_said(rerun) == what_it_said(got)
        return expected, (rerun.graphs if same else None)

    def answers_differently_again(self, scenario_id: str, kwargs: dict) -> bool:
        """Does the submission answer differently in another process (with another history)?

        An engine that visits a set of parents, ordered by memory addresses, can do that: one run
        can answer with numbers and the other raise. Of an exception, only its type counts (its
        message may name an object's address). A run that did not answer (it timed out, crashed)
        says nothing about the engine's answer.
        """
        def answer(reply: Reply) -> object:
            return reply.observations if reply.raised is None else ("raised", reply.raised.type)

        _, got, _ = self.run(scenario_id, kwargs)
        if got.failure:
            return False
        rerun = self.rerun(scenario_id, kwargs)
        return not rerun.failure and answer(rerun) != answer(got)

    def close(self) -> None:
        self.submission.close()
        self.reference.close()
        if self.second is not None:
            self.second.close()
