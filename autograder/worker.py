"""Run scenarios on one implementation in a separate, limited process.

The trusted side of the worker: it reads the implementation's files once (regular files only,
never through a link), has the sandbox start `inside/serve.py` (forked from its zygote), sends
it those files, then one request at a time, and waits for the reply while it measures the CPU time the worker
uses. A request's limit is CPU time, so that a busy machine costs no one a point: the worker
interrupts itself when the limit is spent and goes on with the next request; one that does
not reply within a short grace, that crashes or exits, is killed with everything it started,
and the next request gets a fresh one. Time asleep or blocked is budgeted per implementation
(`idle_seconds`, shared by all its workers): a request that idles past what is left times out.
A request that gets no CPU for a long wall-clock while (`wall_clock_seconds`) comes back
marked `busy`: the machine, not the submission, was slow.

`Worker` is the Linux sandbox's; where that cannot be had (Windows, macOS), the student's own
check runs `portable.PortableWorker`, the same worker with a plain child process behind it
(`isolation.py` says which one a run uses). Reply and the rest here serve both.
"""

from __future__ import annotations

import enum
import json
import os
import re
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import scenario_sources
from .config import Limits
from .isolation import linux_sandbox
from .parts import engines
from .safe_files import UnreadableFile, read_regular

CHILD_SOURCE = (Path(__file__).parent / "inside" / "serve.py").read_bytes()
# The worker's command line: its inside's source comes on its standard input, not here. Its
# environment is the sandbox's alone, so Python reads it (PYTHONHASHSEED among it: the same
# string hashes in every worker), where -I would ignore it; -s and the loader's first
# statement keep the user's site-packages and the working folder off its path, as -I would.
BOOT = ("import sys; sys.path[:] = [p for p in sys.path if p]; "
        "exec(compile(sys.stdin.buffer.read(), 'serve.py', 'exec'))")
PROGRAM = [sys.executable, "-s", "-B", "-u", "-c", BOOT]
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # room for MAX_VALUES numbers; the reference's largest is 15 KB
MAX_PIPE_BYTES = 1 << 20  # the most a pipe holds (an unprivileged account may make one this large)
sandbox = linux_sandbox()  # None where there is no Linux sandbox: only PortableWorker runs there


class Ending(enum.Enum):
    """How a request ended. Every ending but ANSWERED comes with its message in
    `Reply.failure`, made where the ending is decided (the functions below name them)."""

    ANSWERED = "answered"  # observations, or the exception the submission's code raised
    TIMED_OUT = "timed out"  # its CPU time or its idle budget ran out: timed_out(), judge_time()
    BUSY = "busy"  # the machine gave it no CPU for wall_clock_seconds: never a grade (judge_time)
    UNLOADED = "unloaded"  # its engine file is missing, unreadable or did not import
    CRASHED = "crashed"  # the worker died, or closed its channel, before answering (Worker._death)
    MALFORMED = "malformed"  # the reply was not what the worker's inside writes (Reply.from_json)
    NOT_RUN = "not run"  # its part's timeouts spent its budget, or came in a row (Runner.run)


# The longest text of each field of an exception that crosses from a worker: whatever the
# submission names its exception or says in it, a reply stays small.
MAX_TYPE, MAX_MESSAGE, MAX_WHERE = 200, 2000, 500
# What the observations and drawings of one reply may hold: each text (a value or a key, line
# breaks counted), all texts together, and all values. The reference's largest answer holds
# texts of 37 characters and some 2,100 values; a reply past these is malformed, not an answer.
MAX_TEXT, MAX_TEXTS, MAX_VALUES = 10_000, 100_000, 200_000


@dataclass(frozen=True)
class Raised:
    """An exception the submission's code raised: its class name, its text, and the last line of
    the submission's own code it passed through."""

    type: str
    message: str = ""
    where: str = ""

    @classmethod
    def bounded(cls, type: str, message: str = "", where: str = "") -> Raised:
        """One made from a worker's texts, each cut to its bound."""
        return cls(type[:MAX_TYPE], message[:MAX_MESSAGE], where[:MAX_WHERE])


@dataclass
class Reply:
    """What one request produced: observations, an exception the submission's code raised, or
    why there is neither (`failure`, with how the request ended). `seconds` is the CPU time the
    worker used for it, as the trusted side measured it; `printed` the bytes it printed, of
    which `output` keeps the first `output_kb`."""

    observations: object = None
    raised: Raised | None = None
    failure: str | None = None
    ending: Ending = Ending.ANSWERED
    seconds: float = 0.0
    output: str = ""
    printed: int = 0
    graphs: list | None = None  # the graphs the scenario drew, untrusted: see graphs.py

    @classmethod
    def from_json(cls, line: bytes) -> Reply:
        """The reply a worker wrote, checked for its form: anything else is MALFORMED."""
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return cls(failure="the worker's reply was not valid JSON", ending=Ending.MALFORMED)
        if not isinstance(data, dict):
            return cls(failure="the worker's reply had the wrong form", ending=Ending.MALFORMED)
        if data.get("timeout") is True:  # its own timer stopped it: the trusted side says for how long
            return cls(failure="timed out", ending=Ending.TIMED_OUT)
        if "unplain" in data:
            why = data["unplain"] if isinstance(data["unplain"], str) else ""
            return cls(failure=f"the scenario's observations were not plain data: {why[:MAX_MESSAGE]}",
                       ending=Ending.MALFORMED)
        graphs = data.get("graphs")
        graphs = graphs if isinstance(graphs, list) else None
        if problem := oversized([data.get("observations"), graphs]):
            return cls(failure=f"a malformed answer: it holds {problem}", ending=Ending.MALFORMED)
        if "raised" not in data:
            return cls(observations=data.get("observations"), graphs=graphs)
        texts = [data["raised"], data.get("message", ""), data.get("where", "")]
        if not all(isinstance(text, str) for text in texts):
            return cls(failure="the worker's reply had the wrong form", ending=Ending.MALFORMED)
        return cls(raised=Raised.bounded(*texts), graphs=graphs)

    @classmethod
    def from_record(cls, record: dict) -> Reply:
        """A reply as `record` (a sealed file's) holds it: the dict of `dataclasses.asdict`."""
        raised = record.get("raised")
        return cls(**{**record, "ending": Ending(record["ending"]),
                      "raised": Raised(**raised) if raised is not None else None})

    def said(self) -> str | None:
        """What the reply says instead of observations, in one phrase, or None."""
        if self.failure:
            return self.failure
        if self.raised:
            return f"raised {self.raised.type}: {self.raised.message}"
        return None


def oversized(tree: object) -> str | None:
    """What in a reply's parsed JSON is past the bounds (a text over MAX_TEXT characters, texts
    over MAX_TEXTS in all, more than MAX_VALUES values, a whole number no float can hold), or
    None."""
    texts = values = 0
    pending = [tree]
    while pending:
        value = pending.pop()
        values += 1
        if values > MAX_VALUES:
            return f"more than {MAX_VALUES} values"
        if type(value) is int and abs(value) > sys.float_info.max:  # JSON's ints have no bound
            return f"a whole number of {value.bit_length()} bits, which no float can hold"
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                return f"a text of {len(value)} characters (at most {MAX_TEXT})"
            texts += len(value)
            if texts > MAX_TEXTS:
                return f"more than {MAX_TEXTS} characters of text"
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
    return None


def read_files(folder: Path) -> tuple[dict[str, bytes], dict[str, Reply]]:
    """The engine files of a folder, read once: what each holds, and why some cannot be used."""
    files, broken = {}, {}
    for name in engines():
        path = folder / f"{name}.py"
        if not os.path.lexists(path):
            continue
        try:
            files[name] = read_regular(path)
        except UnreadableFile as error:
            broken[name] = Reply(failure=f"{error}; the parts that need {name}.py score 0",
                                  ending=Ending.UNLOADED)
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
                 snapshot: tuple[dict[str, bytes], dict[str, Reply]] | None = None,
                 share: bool = True, idle: IdleBudget | None = None, forked: bool = True,
                 shift: int = 0, sweep: bool = True) -> None:
        """`share`: a cgroup of its own where the machine has them (its fair share of the CPU,
        and the CPU time of all it starts); the reference's trusted worker needs none. `sweep`:
        after every request, kill what the worker started (the reference's starts nothing, and
        its worker, asked the most, is spared the look). `idle`:
        the budget of idle time it shares with the other workers of its implementation.
        `forked`: its processes forked from the zygote (see sandbox/zygote.py), else exec'd.
        `shift`: objects its inside makes before the submission's, which move the submission's
        objects to other addresses (the same ones at every run)."""
        self.folder, self.limits, self.share, self.forked = Path(folder), limits, share, forked
        self.shift, self.sweep = shift, sweep
        self.files, self.unreadable = snapshot or read_files(self.folder)
        self.broken: dict[str, Reply] = dict(self.unreadable)
        self.idle = idle or IdleBudget(limits.idle_seconds)
        self.process: sandbox.Process | None = None
        self.buffer = b""  # what the worker answered past the last full reply
        self.unsent = b""  # what the worker has not taken yet of its request
        self.printing = False  # until its output reaches its end (the worker closed it)
        self.loaded: set[str] = set()
        self.import_output = ""
        self.oom_kills: int | None = None  # the machine's count when its process started

    # -- the process ---------------------------------------------------------------------------

    def _start(self) -> None:
        level = sandbox.require()
        files = {name: data.decode("latin-1") for name, data in self.files.items()}
        boot = {"files": files, "scenarios": scenario_sources.sources(), "shift": self.shift}
        self.process = sandbox.start(level, sandbox.rlimits(self.limits, level), self.limits.scratch_mb,
                                     self.share, first=_line(boot), forked=self.forked, program=PROGRAM,
                                     source=CHILD_SOURCE)
        self.buffer, self.printing, self.loaded, self.unsent = b"", True, set(), b""
        self.oom_kills = oom_kills()

    def _send(self, message: dict) -> None:
        # What the pipe does not take now is written as the worker reads it, while the request's
        # clocks run (_receive): a worker that stops reading costs its request, never hangs the
        # grader. If the worker is gone, its reply says why.
        self.unsent = sandbox.write(self.process.requests, self.unsent + _line(message))

    def _receive(self, limit: float, output: Output) -> Reply:
        """Wait for one reply, collecting what the worker prints meanwhile, for no more than
        `limit` seconds of the worker's CPU time (and a grace to reply once its own timer
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
                sending = [process.requests] if self.unsent else []
                ready, writable, _ = select.select(watched, sending, [], max(left, 0.002))
                if writable:
                    self.unsent = sandbox.write(process.requests, self.unsent)
                if process.output in ready:
                    chunk = os.read(process.output, 1 << 20)
                    output.add(chunk)
                    self.printing = bool(chunk)  # at its end it is always ready: watch it no more
                if process.answers in ready:
                    chunk = os.read(process.answers, 1 << 20)
                    if not chunk:
                        return Reply(failure=self._death(), ending=Ending.CRASHED)
                    self.buffer += chunk
                    if len(self.buffer) > MAX_ANSWER_BYTES:
                        self.stop()
                        return Reply(failure=f"the worker's reply was larger than "
                                             f"{MAX_ANSWER_BYTES >> 20} MB", ending=Ending.MALFORMED)
            if self.unsent or sandbox.unread(process.requests):  # it answered what it had not read:
                self.stop()  # no answer of its inside
                return Reply(failure="the worker answered before it had read the whole request",
                              ending=Ending.MALFORMED)
            if waits_start is not None:
                measured = _idle(clock, waits_start, time.monotonic() - wall_start,
                                 clock.seconds() - cpu_start + family_cpu)
                idle = idle if measured is None else measured
        finally:
            self.idle.spend(idle)
        drained = 0  # no more than a pipe holds: a process that prints on and on must not keep us here
        while (self.printing and drained < MAX_PIPE_BYTES and select.select([process.output], [], [], 0)[0]
               and (chunk := os.read(process.output, 1 << 20))):
            output.add(chunk)  # printed before the reply was written, so already in the pipe
            drained += len(chunk)
        line, self.buffer = self.buffer.split(b"\n", 1)
        reply = Reply.from_json(line)
        reply.seconds = clock.seconds() - cpu_start
        if reply.ending is Ending.TIMED_OUT or reply.seconds > limit:
            reply = Reply(failure=timed_out(limit), ending=Ending.TIMED_OUT, seconds=reply.seconds)
        return reply

    def _death(self) -> str:
        status = self.process.status(5)
        self.stop()
        if status is None:
            return "the worker closed its answer channel and did not exit"
        return ended(os.waitstatus_to_exitcode(status), self.limits,
                     killed_for_memory=(oom_kills() or 0) > (self.oom_kills or 0))

    def stop(self) -> None:
        """Stop the worker and everything it started; the next request starts a new one."""
        process, self.process = self.process, None
        if process is not None:
            process.stop()

    def _sweep(self) -> None:
        """After a request: kill what the worker started, if it is to be swept."""
        if self.sweep and self.process is not None and self.process.clock.others() \
                and not self.process.clock.kill_others():
            self.stop()  # what it started would not die: the next request gets a fresh worker

    # -- requests ------------------------------------------------------------------------------

    def _call(self, request: dict, limit: float) -> Reply:
        if self.process is None:
            self._start()
        self._send({**request, "limit": limit})
        output = Output(self.limits.output_kb * 1024)
        output.add(self.import_output.encode())
        self.import_output = ""
        try:
            reply = self._receive(limit, output)
        except BaseException:
            self.stop()  # whatever stopped the wait, the next request gets a fresh worker
            raise
        self._sweep()
        reply.output, reply.printed = output.text(), output.printed
        if reply.raised is not None and reply.raised.type == "MemoryError":
            limit = f"the memory limit of {self.limits.memory_mb} MB was reached"
            reply.raised = Raised("MemoryError", limit, reply.raised.where)
        return reply

    def load(self, name: str) -> Reply | None:
        """Import the implementation's `name`.py; None when it loaded, else why it did not."""
        if name in self.broken:
            return self.broken[name]
        if name not in self.files:
            self.broken[name] = Reply(failure=f"{name}.py is missing from the submission",
                                       ending=Ending.UNLOADED)
            return self.broken[name]
        if name in self.loaded and self.process is not None:
            return None
        reply = self._call({"load": name}, self.limits.import_seconds)
        if reply.ending is Ending.BUSY:
            return reply
        if reply.failure or reply.raised:
            self.broken[name] = reply
            return reply
        self.loaded.add(name)
        self.import_output += reply.output
        return None

    def run(self, scenario_id: str, kwargs: dict, limit: float, draw: bool = False) -> Reply:
        """Run one scenario with a limit in seconds of CPU time; the reply always comes back,
        whatever the implementation does. With `draw`, the reply also brings the graphs the
        scenario drew (see graphs.py)."""
        engine = scenario_sources.scenario(scenario_id).engine
        problem = self.load(engine)
        if problem is not None:
            if problem.ending is Ending.BUSY:
                return problem
            return Reply(failure=describe_load_problem(engine, problem), ending=Ending.UNLOADED)
        request = {"scenario": scenario_id, "kwargs": kwargs, **({"draw": True} if draw else {})}
        return self._call(request, limit)

    def close(self) -> None:
        self.stop()


GRACE_SECONDS = 0.05  # CPU time a worker has to reply once its own timer has interrupted it
IDLE_SLACK_SECONDS = 1.0  # how much longer than its CPU limit a request may sleep or block
IDLE_FREE_SECONDS = 0.05  # idle time of every request that is not charged: the pipes' and the grader's
FAMILY_EVERY_SECONDS = 0.25  # how often a slow request's other processes are looked at


# Windows' codes for a process that crashed (NTSTATUS), read as the POSIX signal of the same cause.
CRASH_CODES = {0xC0000005: "SIGSEGV", 0xC00000FD: "SIGSEGV"}  # access violation, stack overflow


def ended(code: int, limits: Limits, killed_for_memory: bool = False) -> str:
    """Why a worker that ended with exit code `code` (negative: the signal that ended it) gave no
    answer. `killed_for_memory`: the kernel's out-of-memory killer ended a process meanwhile."""
    name = CRASH_CODES.get(code & 0xFFFFFFFF) if code > 0 else None
    if code >= 0 and name is None:
        return f"the worker exited with status {code} before answering"
    name = name or signal.Signals(-code).name
    reasons = {"SIGXCPU": f"the CPU time limit of {limits.cpu_seconds} s was exceeded",
               "SIGSEGV": "the worker crashed (a segmentation fault): most likely a recursion that "
                          "never ends, such as an operator that calls itself (`__radd__` returning "
                          "`other + self`, or `x + y` inside `__add__`); in your own Python the "
                          "snippet raises RecursionError there instead",
               "SIGKILL": "the worker was killed (SIGKILL)"}
    if name == "SIGKILL" and killed_for_memory:
        return (f"the worker was killed by the kernel's out-of-memory killer: the machine, or its "
                f"memory cgroup, ran out of memory while it ran (within its own limit of "
                f"{limits.memory_mb} MB, it used more than the machine had to give)")
    return reasons.get(name, f"the worker was stopped by {name}")


def oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has ended since the machine started
    (`oom_kill` of /proc/vmstat, Linux 4.13 on), or None where it does not say."""
    try:
        with open("/proc/vmstat", "rb") as vmstat:
            return next((int(line.split()[1]) for line in vmstat if line.startswith(b"oom_kill ")), None)
    except (OSError, ValueError, IndexError):
        return None


def timed_out(limit: float) -> str:
    return f"timed out after {limit:.2f} s of CPU time"  # the limit the judge states, to the same digits


TIMED_OUT = re.compile(r"timed out after (\d+\.\d+) s of CPU time")  # timed_out()'s words, in a message


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
               idle: float | None, wall: float, idle_seconds: float | None = None) -> Reply | None:
    """Whether a request still waiting for its reply has had its time, by the trusted side's
    own measures: CPU time, time asleep or blocked (None where the kernel does not say; past
    `idle_limit`, what is left of the submission's `idle_seconds`, it times out), and wall-clock
    time (which only a machine too busy to give the worker a CPU uses up)."""
    if cpu > limit + grace:
        return Reply(failure=timed_out(limit), ending=Ending.TIMED_OUT, seconds=cpu)
    if idle is not None and idle > idle_limit:
        budget = f"; a submission may do so for {idle_seconds:g} s in all" if idle_seconds is not None else ""
        return Reply(failure=f"{timed_out(limit)}: it slept or waited for {idle:.1f} s without "
                              f"using the CPU (a sleep, a lock, a read that never returns?){budget}",
                      ending=Ending.TIMED_OUT, seconds=cpu)
    if wall > cap:
        return Reply(failure=f"the machine was too busy: after {wall:.0f} s of wall-clock time the "
                              f"worker had had only {cpu:.2f} s of CPU time", seconds=cpu,
                      ending=Ending.BUSY)
    return None


def describe_load_problem(engine: str, reply: Reply) -> str:
    if reply.raised:
        where = f" ({reply.raised.where})" if reply.raised.where else ""
        return f"importing {engine}.py raised {reply.raised.type}: {reply.raised.message}{where}"
    if reply.ending is Ending.UNLOADED:  # missing, or not a file to read: it says so itself
        return reply.failure
    return f"importing {engine}.py failed: {reply.failure}"
