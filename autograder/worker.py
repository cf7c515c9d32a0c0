"""Run scenarios on one implementation in a separate, limited process.

The trusted side of the worker: it reads the implementation's files once (regular files only,
never through a link), has the sandbox start `inside/serve.py` (forked from its zygote), sends
it those files, then one request at a time, and waits for the answer while it measures the CPU time the worker
uses. A request's limit is CPU time, so that a busy machine costs no one a point: the worker
interrupts itself when the limit is spent and goes on with the next request; one that does
not answer within a short grace, that crashes or exits, is killed with everything it started,
and the next request gets a fresh one. Time asleep or blocked is budgeted per implementation
(`idle_seconds`, shared by all its workers): a request that idles past what is left times out.
A request that gets no CPU for a long wall-clock while (`wall_clock_seconds`) comes back
marked `busy`: the machine, not the submission, was slow.
"""

from __future__ import annotations

import enum
import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import sandbox, scenarios
from .config import Limits
from .parts import ENGINES
from .submission import UnreadableFile, read_regular

CHILD_SOURCE = (Path(__file__).parent / "inside" / "serve.py").read_bytes()
# The worker's command line: its inside's source comes on its standard input, not here. Its
# environment is the sandbox's alone, so Python reads it (PYTHONHASHSEED among it: the same
# string hashes in every worker), where -I would ignore it; -s and the loader's first
# statement keep the user's site-packages and the working folder off its path, as -I would.
BOOT = ("import sys; sys.path[:] = [p for p in sys.path if p]; "
        "exec(compile(sys.stdin.buffer.read(), 'serve.py', 'exec'))")
PROGRAM = [sys.executable, "-s", "-B", "-u", "-c", BOOT]
MAX_ANSWER_BYTES = 32 * 1024 * 1024


class Outcome(enum.Enum):
    """How a request ended. Every outcome but ANSWERED comes with its message in
    `Answer.failure`, made where the outcome is decided (the functions below name them)."""

    ANSWERED = "answered"  # observations, or the exception the submission's code raised
    TIMED_OUT = "timed out"  # its CPU time or its idle budget ran out: timed_out(), judge_time()
    BUSY = "busy"  # the machine gave it no CPU for wall_clock_seconds: never a grade (judge_time)
    UNLOADED = "unloaded"  # its engine file is missing, unreadable or did not import
    CRASHED = "crashed"  # the worker died, or closed its channel, before answering (Worker._death)
    MALFORMED = "malformed"  # the answer was not what the worker's inside writes (Answer.from_json)
    NOT_RUN = "not run"  # its part's scenarios timed out timeouts_per_part times in a row (Runner.run)


@dataclass
class Answer:
    """What one request produced: observations, an exception's name, or why there is none.
    `seconds` is the CPU time the worker used for it, as the trusted side measured it;
    `printed` the bytes it printed, of which `output` keeps the first `output_kb`."""

    observations: object = None
    raised: str | None = None
    message: str = ""
    where: str = ""
    failure: str | None = None
    outcome: Outcome = Outcome.ANSWERED
    seconds: float = 0.0
    output: str = ""
    printed: int = 0
    graphs: list | None = None  # the graphs the scenario drew, untrusted: see graphs.py

    @classmethod
    def from_json(cls, line: bytes) -> Answer:
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return cls(failure="the worker's answer was not valid JSON", outcome=Outcome.MALFORMED)
        if not isinstance(data, dict):
            return cls(failure="the worker's answer had the wrong form", outcome=Outcome.MALFORMED)
        if data.get("timeout") is True:  # its own timer stopped it: the trusted side says for how long
            return cls(failure="timed out", outcome=Outcome.TIMED_OUT)
        if "unplain" in data:
            return cls(failure=f"the scenario's observations were not plain data: {data['unplain']}",
                       outcome=Outcome.MALFORMED)
        texts = {key: data.get(key, "") for key in ("message", "where")}
        if "raised" in data and not all(isinstance(t, str) for t in (data["raised"], *texts.values())):
            return cls(failure="the worker's answer had the wrong form", outcome=Outcome.MALFORMED)
        graphs = data.get("graphs")
        return cls(observations=data.get("observations"), raised=data.get("raised"),
                   graphs=graphs if isinstance(graphs, list) else None, **texts)


def read_files(folder: Path) -> tuple[dict[str, bytes], dict[str, Answer]]:
    """The engine files of a folder, read once: what each holds, and why some cannot be used."""
    files, broken = {}, {}
    for name in ENGINES:
        path = folder / f"{name}.py"
        if not os.path.lexists(path):
            continue
        try:
            files[name] = read_regular(path)
        except UnreadableFile as error:
            broken[name] = Answer(failure=f"{error}; the parts that need {name}.py score 0",
                                  outcome=Outcome.UNLOADED)
    return files, broken


class Output:
    """What a worker printed during one request: the first `limit` bytes, and a count of the rest."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kept, self.dropped = limit, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.kept)
        self.kept += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    @property
    def printed(self) -> int:
        """Every byte printed, kept or not."""
        return len(self.kept) + self.dropped

    def text(self) -> str:
        text = self.kept.decode("utf-8", "replace")
        return text + (f"\n[... {self.dropped} more bytes of output not kept]" if self.dropped else "")


class IdleBudget:
    """The seconds a submission may spend asleep or blocked, in all its requests and all its
    workers together (`idle_seconds`). A request that idles past what is left times out; the
    first IDLE_FREE_SECONDS of each request's idle time are the pipes' and the grader's, free."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds

    def allowance(self, limit: float) -> float:
        """How long a request with a CPU limit of `limit` may idle: what is left, and never more
        than twice its limit and IDLE_SLACK_SECONDS."""
        return IDLE_FREE_SECONDS + min(2 * limit + IDLE_SLACK_SECONDS, self.left)

    def spend(self, idle: float) -> None:
        """Charge a request's idle seconds (its free share aside)."""
        self.left = max(0.0, self.left - max(0.0, idle - IDLE_FREE_SECONDS))


class Worker:
    """One implementation (a submission or the reference) behind a process boundary."""

    def __init__(self, folder: Path, limits: Limits,
                 snapshot: tuple[dict[str, bytes], dict[str, Answer]] | None = None,
                 share: bool = True, idle: IdleBudget | None = None, forked: bool = True) -> None:
        """`share`: a cgroup of its own where the machine has them (its fair share of the CPU,
        and the CPU time of all it starts); the reference's trusted worker needs none. `idle`:
        the budget of idle time it shares with the other workers of its implementation.
        `forked`: its processes forked from the zygote (see sandbox/zygote.py), else exec'd."""
        self.folder, self.limits, self.share, self.forked = Path(folder), limits, share, forked
        self.files, self.unreadable = snapshot or read_files(self.folder)
        self.broken: dict[str, Answer] = dict(self.unreadable)
        self.idle = idle or IdleBudget(limits.idle_seconds)
        self.process: sandbox.Process | None = None
        self.buffer = b""  # what the worker answered past the last full answer
        self.printing = False  # until its output reaches its end (the worker closed it)
        self.loaded: set[str] = set()
        self.import_output = ""

    def fresh_copy(self) -> Worker:
        """Another worker for the same files, as they were read the first time, sharing this
        one's idle budget."""
        return Worker(self.folder, self.limits, (self.files, self.unreadable), idle=self.idle,
                      forked=self.forked)

    # -- the process ---------------------------------------------------------------------------

    def _start(self) -> None:
        level = sandbox.require()
        files = {name: data.decode("latin-1") for name, data in self.files.items()}
        boot = {"files": files, "scenarios": scenarios.sources()}
        self.process = sandbox.start(level, sandbox.rlimits(self.limits, level), self.limits.scratch_mb,
                                     self.share, first=_line(boot), forked=self.forked, program=PROGRAM,
                                     source=CHILD_SOURCE)
        self.buffer, self.printing, self.loaded = b"", True, set()

    def _send(self, message: dict) -> None:
        sandbox.write(self.process.requests, _line(message))  # if the worker is gone, its answer says why

    def _receive(self, limit: float, output: Output) -> Answer:
        """Wait for one answer, collecting what the worker prints meanwhile, for no more than
        `limit` seconds of the worker's CPU time (and a grace to answer once its own timer
        has interrupted it), and no longer asleep or blocked than its idle budget allows."""
        process = self.process
        clock = process.clock
        cpu_start, wall_start = clock.seconds(), time.monotonic()
        waits_start = None  # the worker's and the grader's waits for a CPU, once it is not quick
        family_start, family_checked, family_cpu = None, 0.0, 0.0
        grace = GRACE_SECONDS + 0.1 * limit
        idle_limit = self.idle.allowance(limit)
        cap = max(self.limits.wall_clock_seconds, 10 * limit)
        idle = 0.0  # the request's idle time, as last measured
        try:
            while b"\n" not in self.buffer:
                wall = time.monotonic() - wall_start
                if wall > 2 * (limit + grace) and wall - family_checked > FAMILY_EVERY_SECONDS:
                    # Slow in wall-clock time: are its own other processes taking the CPU?
                    family_checked, family = wall, clock.family()
                    family_start = family if family_start is None else family_start
                    family_cpu = family - family_start
                cpu = clock.seconds() - cpu_start + family_cpu
                if waits_start is None and wall > IDLE_FREE_SECONDS:
                    waits_start = _waits(clock)  # a wait before this is within the free share
                measured = None
                if wall > idle_limit and waits_start is not None:  # idle <= wall: no need to look before
                    measured = _idle(clock, waits_start, wall, cpu)
                    idle = idle if measured is None else measured
                verdict = judge_time(limit, grace, idle_limit, cap, cpu, measured, wall,
                                     idle_seconds=self.limits.idle_seconds)
                if verdict is not None:
                    self.stop()
                    return verdict
                if waits_start is None:  # look again once it is old enough (or never: no statistics)
                    idle_left = IDLE_FREE_SECONDS - wall if wall <= IDLE_FREE_SECONDS else cap
                else:
                    idle_left = idle_limit - (wall if measured is None else measured)
                left = min(limit + grace - cpu, cap - wall, idle_left,
                           FAMILY_EVERY_SECONDS if family_start is not None else cap)
                watched = [process.answers, process.output] if self.printing else [process.answers]
                ready = select.select(watched, [], [], max(left, 0.002))[0]
                if process.output in ready:
                    chunk = os.read(process.output, 1 << 20)
                    output.add(chunk)
                    self.printing = bool(chunk)  # at its end it is always ready: watch it no more
                if process.answers in ready:
                    chunk = os.read(process.answers, 1 << 20)
                    if not chunk:
                        return Answer(failure=self._death(), outcome=Outcome.CRASHED)
                    self.buffer += chunk
                    if len(self.buffer) > MAX_ANSWER_BYTES:
                        self.stop()
                        return Answer(failure="the worker's answer was larger than 32 MB",
                                      outcome=Outcome.MALFORMED)
            if waits_start is not None:
                measured = _idle(clock, waits_start, time.monotonic() - wall_start,
                                 clock.seconds() - cpu_start + family_cpu)
                idle = idle if measured is None else measured
        finally:
            self.idle.spend(idle)
        while self.printing and select.select([process.output], [], [], 0)[0] and (
                chunk := os.read(process.output, 1 << 20)):
            output.add(chunk)  # printed before the answer was written, so already in the pipe
        line, self.buffer = self.buffer.split(b"\n", 1)
        answer = Answer.from_json(line)
        answer.seconds = clock.seconds() - cpu_start
        if answer.outcome is Outcome.TIMED_OUT or answer.seconds > limit:
            answer = Answer(failure=timed_out(limit), outcome=Outcome.TIMED_OUT, seconds=answer.seconds)
        return answer

    def _death(self) -> str:
        status = self.process.status(5)
        self.stop()
        if status is None:
            return "the worker closed its answer channel and did not exit"
        code = os.waitstatus_to_exitcode(status)
        if code >= 0:
            return f"the worker exited with status {code} before answering"
        name = signal.Signals(-code).name
        reasons = {"SIGXCPU": f"the CPU time limit of {self.limits.cpu_seconds} s was exceeded",
                   "SIGSEGV": "the worker crashed (segmentation fault; a recursion too deep?)",
                   "SIGKILL": "the worker was killed (SIGKILL)"}
        return reasons.get(name, f"the worker was stopped by {name}")

    def stop(self) -> None:
        """Stop the worker and everything it started; the next request starts a new one."""
        process, self.process = self.process, None
        if process is not None:
            process.stop()

    # -- requests ------------------------------------------------------------------------------

    def _call(self, request: dict, limit: float) -> Answer:
        if self.process is None:
            self._start()
        self._send({**request, "limit": limit})
        output = Output(self.limits.output_kb * 1024)
        output.add(self.import_output.encode())
        self.import_output = ""
        try:
            answer = self._receive(limit, output)
        except BaseException:
            self.stop()  # whatever stopped the wait, the next request gets a fresh worker
            raise
        if self.process is not None and self.process.clock.others() and not self.process.clock.kill_others():
            self.stop()  # what it started would not die: the next request gets a fresh worker
        answer.output, answer.printed = output.text(), output.printed
        if answer.raised == "MemoryError":
            answer.message = f"the memory limit of {self.limits.memory_mb} MB was reached"
        return answer

    def load(self, name: str) -> Answer | None:
        """Import the implementation's `name`.py; None when it loaded, else why it did not."""
        if name in self.broken:
            return self.broken[name]
        if name not in self.files:
            self.broken[name] = Answer(failure=f"{name}.py is missing from the submission",
                                       outcome=Outcome.UNLOADED)
            return self.broken[name]
        if name in self.loaded and self.process is not None:
            return None
        answer = self._call({"load": name}, self.limits.import_seconds)
        if answer.outcome is Outcome.BUSY:
            return answer
        if answer.failure or answer.raised:
            self.broken[name] = answer
            return answer
        self.loaded.add(name)
        self.import_output += answer.output
        return None

    def run(self, scenario_id: str, kwargs: dict, limit: float, draw: bool = False) -> Answer:
        """Run one scenario with a limit in seconds of CPU time; the answer always comes back,
        whatever the implementation does. With `draw`, the answer also brings the graphs the
        scenario drew (see graphs.py)."""
        engine = scenarios.scenario(scenario_id).engine
        problem = self.load(engine)
        if problem is not None:
            if problem.outcome is Outcome.BUSY:
                return problem
            return Answer(failure=describe_load_problem(engine, problem), outcome=Outcome.UNLOADED)
        request = {"scenario": scenario_id, "kwargs": kwargs, **({"draw": True} if draw else {})}
        return self._call(request, limit)

    def close(self) -> None:
        self.stop()


GRACE_SECONDS = 0.05  # CPU time a worker has to answer once its own timer has interrupted it
IDLE_SLACK_SECONDS = 1.0  # how much longer than its CPU limit a request may sleep or block
IDLE_FREE_SECONDS = 0.05  # idle time of every request that is not charged: the pipes' and the grader's
FAMILY_EVERY_SECONDS = 0.25  # how often a slow request's other processes are looked at


def timed_out(limit: float) -> str:
    return f"timed out after {limit:.2f} s of CPU time"


def _line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _waits(clock: sandbox.CpuClock) -> tuple[float, float] | None:
    """The worker's and this grader's waits for a CPU so far; None where the kernel does not say."""
    worker = clock.waited()
    return None if worker is None else (worker, sandbox.own_wait() or 0.0)


def _idle(clock: sandbox.CpuClock, start: tuple[float, float], wall: float, cpu: float) -> float | None:
    """A request's time neither on a CPU nor waiting for one (sleeping, blocked), since `start`
    (`_waits`); None where the kernel does not say. A worker that lowered its own priority waits
    for a CPU by its own doing: that wait is its own. While the grader waits for a CPU, a worker
    that has answered waits for it: that wait is not the worker's."""
    waited = start[0] if clock.lowered() else clock.waited()
    if waited is None:
        return None
    grader = sandbox.own_wait()
    return wall - (waited - start[0]) - (0.0 if grader is None else grader - start[1]) - cpu


def judge_time(limit: float, grace: float, idle_limit: float, cap: float, cpu: float,
               idle: float | None, wall: float, idle_seconds: float | None = None) -> Answer | None:
    """Whether a request still waiting for its answer has had its time, by the trusted side's
    own measures: CPU time, time asleep or blocked (None where the kernel does not say; past
    `idle_limit`, what is left of the submission's `idle_seconds`, it times out), and wall-clock
    time (which only a machine too busy to give the worker a CPU uses up)."""
    if cpu > limit + grace:
        return Answer(failure=timed_out(limit), outcome=Outcome.TIMED_OUT, seconds=cpu)
    if idle is not None and idle > idle_limit:
        budget = f"; a submission may do so for {idle_seconds:g} s in all" if idle_seconds is not None else ""
        return Answer(failure=f"{timed_out(limit)}: it slept or waited for {idle:.1f} s without "
                              f"using the CPU (a sleep, a lock, a read that never returns?){budget}",
                      outcome=Outcome.TIMED_OUT, seconds=cpu)
    if wall > cap:
        return Answer(failure=f"the machine was too busy: after {wall:.0f} s of wall-clock time the "
                              f"worker had had only {cpu:.2f} s of CPU time", seconds=cpu,
                      outcome=Outcome.BUSY)
    return None


def describe_load_problem(engine: str, answer: Answer) -> str:
    if answer.raised:
        where = f" ({answer.where})" if answer.where else ""
        return f"importing {engine}.py raised {answer.raised}: {answer.message}{where}"
    if answer.outcome is Outcome.UNLOADED:  # missing, or not a file to read: it says so itself
        return answer.failure
    return f"importing {engine}.py failed: {answer.failure}"
