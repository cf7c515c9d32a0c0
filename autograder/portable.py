"""Workers as plain child processes: the student's own check where the Linux sandbox cannot be had.

On Windows and macOS (`isolation.py` decides) each worker is a fresh Python started by
`subprocess`, never forked, running `inside/serve.py` with the sandbox's protocol on its
standard streams: requests on its input, answers on its output, and whatever the submission
prints on its error stream. It is not a security boundary (the student grades their own files
with the public questions), but it keeps what makes the check useful:

- CPU time, as a multiple of the reference's: the worker's own timer interrupts a request once
  its limit is spent (`signal.setitimer`, or a watchdog thread on Windows), and says how much a
  request took; a worker that does not answer by a wall-clock deadline (a sleep, a lock, a long
  call into C) is killed with everything it started;
- a crash, an `exit()` or an endless print costs its own request: the next one gets a fresh
  worker, and only the first `output_kb` of what it printed is kept;
- the same files, questions, scenarios and answers, so the same score and messages.

It does not limit memory, processes or file sizes (isolation.PORTABLE_LIMITS).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import scenario_sources
from .worker import (
    GRACE_SECONDS,
    MAX_ANSWER_BYTES,
    Ending,
    Output,
    Reply,
    Worker,
    ended,
    timed_out,
)

SERVE = Path(__file__).parent / "inside" / "serve.py"
# Takes its request and answer channels from its standard input and output, and sends what the
# submission prints (its standard output too) to its error stream.
BOOT = ("import os, sys; sys.path[:] = [p for p in sys.path if p]; "
        "requests, answers = os.dup(0), os.dup(1); os.dup2(2, 1); "
        "code = compile(open(sys.argv[1], 'rb').read(), 'serve.py', 'exec'); "
        "namespace = {'__name__': 'serve'}; exec(code, namespace); "
        "namespace['main'](requests, answers)")
MARK_SECONDS = 5.0  # how long an answer waits for what was printed before it
START_SECONDS = 120.0  # how long a new worker may take to import NumPy and say it is ready
STOP_SECONDS = 5.0  # how long a killed worker may take to be gone


def environment(home: str) -> dict[str, str]:
    """The worker's environment: this one, with what makes every run hash and compute alike."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONPATH", "PYTHONBREAKPOINT")}
    env.update({"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                "HOME": home, "USERPROFILE": home})
    return env


class Child:
    """A running worker: its process, and the threads that feed its input and read its streams
    (Windows' pipes cannot be waited on with `select`)."""

    def __init__(self, popen: subprocess.Popen, home: str, mark: bytes) -> None:
        self.popen, self.home, self.mark = popen, home, mark
        self.answers: queue.Queue[bytes | None] = queue.Queue()
        self.requests: queue.Queue[bytes | None] = queue.Queue()
        self.printed = threading.Condition()
        self.marks = 0  # marks seen on its output: answers whose output is all read
        self.answered = 0  # answers read
        self.started = False  # it has said it is ready
        self.sink: Output | None = None  # where what it prints now goes
        self.output_ended = False
        for target in (self._write, self._read_answers, self._read_output):
            threading.Thread(target=target, daemon=True).start()

    def _write(self) -> None:
        while (data := self.requests.get()) is not None:
            try:
                self.popen.stdin.write(data)
                self.popen.stdin.flush()
            except (OSError, ValueError):
                return

    def _read_answers(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while line := self.popen.stdout.readline(MAX_ANSWER_BYTES + 1):
                self.answers.put(line)
        self.answers.put(None)

    def _read_output(self) -> None:
        carry = b""  # the end of the last chunk, which may hold the start of a mark
        stream = self.popen.stderr
        try:
            while chunk := stream.read1(1 << 16):
                data = carry + chunk
                with self.printed:
                    while (at := data.find(self.mark)) >= 0:
                        self._add(data[:at])
                        data = data[at + len(self.mark):]
                        self.marks += 1
                        self.printed.notify_all()
                    keep = len(self.mark) - 1
                    self._add(data[:-keep] if len(data) > keep else b"")
                    carry = data[-keep:] if len(data) > keep else data
        except (OSError, ValueError):
            pass
        with self.printed:
            self._add(carry)
            self.output_ended = True
            self.printed.notify_all()

    def _add(self, data: bytes) -> None:
        if data and self.sink is not None:
            self.sink.add(data)

    def send(self, data: bytes) -> None:
        self.requests.put(data)

    def ready(self) -> bool:
        """Wait until the worker has read its files and its scenarios (its first answer says so)."""
        if self.started:
            return True
        try:
            line = self.answers.get(timeout=START_SECONDS)
        except queue.Empty:
            return False
        self.started = line == b'{"ready": true}\n'
        return self.started

    def wait_for_output(self, answered: int) -> None:
        """Wait until all the worker printed before its `answered`-th answer is read."""
        with self.printed:
            self.printed.wait_for(lambda: self.marks >= answered or self.output_ended, MARK_SECONDS)

    def stop(self) -> None:
        """Kill the worker and everything it started, and remove its folder."""
        self.requests.put(None)
        kill_tree(self.popen)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(STOP_SECONDS)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        remove(self.home)


def group_options() -> dict:
    """Popen's options that start the worker as the head of a group of its own, to kill it with
    all it starts."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_tree(popen: subprocess.Popen) -> None:
    """Kill a worker and every process it started: its process tree (`taskkill /T`) on Windows,
    its process group elsewhere."""
    if os.name == "nt":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["taskkill", "/T", "/F", "/PID", str(popen.pid)], capture_output=True,
                           timeout=STOP_SECONDS, check=False)
    elif hasattr(os, "killpg"):
        with contextlib.suppress(OSError):
            os.killpg(popen.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        popen.kill()


def remove(folder: str) -> None:
    """Remove a worker's folder, leaving what cannot be removed (a file still open on Windows)."""
    with contextlib.suppress(OSError, RecursionError):
        shutil.rmtree(folder, ignore_errors=True)


class PortableWorker(Worker):
    """A Worker whose process is a plain child Python (see the module's docstring). The options
    that only the sandbox gives (`share`, `forked`, `sweep`) have no effect. A fresh Python takes
    half a second to import NumPy: once one worker has had to be replaced, the next waits ready."""

    process: Child | None
    spare: Child | None = None
    started = 0

    def _start(self) -> None:
        self.process, self.spare = self.spare or self._spawn(), None
        if not self.process.ready():
            self.stop()
            raise OSError(f"a worker ({sys.executable} -c ...) did not start: it ended, or did not say "
                          f"it was ready within {START_SECONDS:g} s; `{sys.executable} -c \"import numpy\"` "
                          "may say why")
        self.started += 1
        if self.started > 1:  # a worker died or was stopped: another may well follow
            self.spare = self._spawn()
        self.buffer, self.printing, self.loaded, self.unsent = b"", True, set(), b""

    def _spawn(self) -> Child:
        """A new worker, sent its files (it reads them once it has started)."""
        home = tempfile.mkdtemp(prefix="autograder-worker-")
        mark = f"\0autograder {secrets.token_hex(16)} answered\0".encode()
        try:
            popen = subprocess.Popen([sys.executable, "-s", "-B", "-u", "-c", BOOT, str(SERVE)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=home, env=environment(home),
                                     **group_options())
        except BaseException:
            remove(home)
            raise
        child = Child(popen, home, mark)
        files = {name: data.decode("latin-1") for name, data in self.files.items()}
        child.send(line({"files": files, "scenarios": scenario_sources.sources(), "shift": self.shift,
                         "portable": True, "mark": mark.decode()}))
        return child

    def _send(self, message: dict) -> None:
        self.process.send(line(message))

    def _receive(self, limit: float, output: Output) -> Reply:
        """Wait for one reply, collecting what the worker prints meanwhile: until the worker's
        own timer has stopped it at `limit` seconds of CPU time, and no longer than a wall-clock
        deadline that leaves it the idle time the sandbox would."""
        child = self.process
        grace = GRACE_SECONDS + 0.1 * limit
        idle_limit = self.idle.allowance(limit)
        deadline = limit + grace + idle_limit
        start = time.monotonic()
        with child.printed:
            child.sink = output
        try:
            line = child.answers.get(timeout=deadline)
        except queue.Empty:
            wall = time.monotonic() - start
            self.idle.spend(wall - limit)
            self.stop()
            return Reply(failure=f"{timed_out(limit)}: it gave no answer within {wall:.1f} s (a sleep, "
                                 "a lock, a read that never returns, or a long call its timer could "
                                 "not interrupt?)", ending=Ending.TIMED_OUT, seconds=limit)
        if line is None:
            with child.printed:
                child.sink = None
            return Reply(failure=self._death(), ending=Ending.CRASHED)
        child.answered += 1
        child.wait_for_output(child.answered)
        with child.printed:
            child.sink = None
        wall = time.monotonic() - start
        if not line.endswith(b"\n"):
            self.stop()
            return Reply(failure=f"the worker's reply was larger than {MAX_ANSWER_BYTES >> 20} MB",
                         ending=Ending.MALFORMED)
        reply = Reply.from_json(line)
        reply.seconds = seconds_of(line)
        self.idle.spend(wall - reply.seconds)
        if reply.ending is Ending.TIMED_OUT or reply.seconds > limit:
            reply = Reply(failure=timed_out(limit), ending=Ending.TIMED_OUT, seconds=reply.seconds)
        return reply

    def _death(self) -> str:
        child = self.process
        try:
            code = child.popen.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            code = None
        self.stop()
        if code is None:
            return "the worker closed its answer channel and did not exit"
        return ended(code, self.limits)

    def _sweep(self) -> None:
        """Nothing between requests: what a worker started dies with it (Child.stop)."""

    def stop(self) -> None:
        child, self.process = self.process, None
        if child is not None:
            child.stop()

    def close(self) -> None:
        super().close()
        spare, self.spare = self.spare, None
        if spare is not None:
            spare.stop()


def line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


def seconds_of(line: bytes) -> float:
    """The CPU time a portable worker says its request took (0.0 where it says nothing usable)."""
    try:
        seconds = json.loads(line).get("seconds", 0.0)
    except (ValueError, AttributeError, RecursionError):
        return 0.0
    return float(seconds) if type(seconds) in (int, float) and seconds >= 0 else 0.0
