"""Run scenarios on one implementation in a separate, limited process.

The trusted side of the worker: it copies the implementation's files into a fresh folder,
starts `worker_child.py` there with resource limits and a scrubbed environment, sends one
request at a time, and waits for the answer no longer than the request's time limit. A
worker that hangs, crashes or exits is killed with everything it started, and the next
request gets a fresh one.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import scenarios
from .config import Limits
from .sandbox import confine, reap

ENGINE_FILES = ("value", "tensor", "dual")
CHILD_SOURCE = (Path(__file__).parent / "worker_child.py").read_text(encoding="utf-8")
MAX_ANSWER_BYTES = 32 * 1024 * 1024


@dataclass
class Answer:
    """What one request produced: observations, an exception's name, or why there is none."""

    observations: object = None
    raised: str | None = None
    message: str = ""
    where: str = ""
    failure: str | None = None
    seconds: float = 0.0
    output: str = ""
    unloaded: bool = False  # the file the scenario needs is missing or did not import

    @classmethod
    def from_json(cls, line: bytes) -> Answer:
        try:
            data = json.loads(line)
        except ValueError:
            return cls(failure="the worker's answer was not valid JSON")
        if not isinstance(data, dict) or not isinstance(data.get("seconds"), (int, float)):
            return cls(failure="the worker's answer had the wrong form")
        if "unplain" in data:
            return cls(failure=f"the scenario's observations were not plain data: {data['unplain']}")
        texts = {key: data.get(key, "") for key in ("message", "where")}
        if "raised" in data and not all(isinstance(t, str) for t in (data["raised"], *texts.values())):
            return cls(failure="the worker's answer had the wrong form")
        return cls(observations=data.get("observations"), raised=data.get("raised"),
                   seconds=float(data["seconds"]), **texts)


class Output:
    """What a worker printed during one request: the first `limit` bytes, and a count of the rest."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kept, self.dropped = limit, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.kept)
        self.kept += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = self.kept.decode("utf-8", "replace")
        return text + (f"\n[... {self.dropped} more bytes of output not kept]" if self.dropped else "")


class Worker:
    """One implementation (a submission or the reference) behind a process boundary."""

    def __init__(self, folder: Path, limits: Limits) -> None:
        self.folder, self.limits = Path(folder), limits
        self.files = {name: self.folder / f"{name}.py" for name in ENGINE_FILES
                      if (self.folder / f"{name}.py").is_file()}
        self.broken: dict[str, Answer] = {}
        self.process: subprocess.Popen | None = None
        self.loaded: set[str] = set()
        self.import_output = ""

    # -- the process ---------------------------------------------------------------------------

    def _start(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="autograder-worker-"))
        for name, path in self.files.items():
            shutil.copyfile(path, self.home / f"{name}.py")
        request_read, self.requests = os.pipe()
        self.answers, answer_write = os.pipe()
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(self.home),
               "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # older OpenBLAS needs them here
            if name in os.environ:
                env[name] = os.environ[name]
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-u", "-c", CHILD_SOURCE, str(request_read), str(answer_write)],
            cwd=self.home, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, pass_fds=(request_read, answer_write),
            start_new_session=True, preexec_fn=confine(self.limits, self.home))
        os.close(request_read)
        os.close(answer_write)
        self.printed = self.process.stdout.fileno()
        self.buffer = b""
        self.loaded = set()
        boot = {"scenarios": scenarios.sources()}
        self._send(boot)

    def _send(self, message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.requests, data):]
        except OSError:
            pass  # the worker is gone; the wait for its answer says why

    def _receive(self, timeout: float, output: Output) -> Answer:
        """Wait for one answer, collecting what the worker prints meanwhile."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready = select.select([self.answers, self.printed], [], [], max(left, 0))[0]
            if self.printed in ready:
                output.add(os.read(self.printed, 1 << 20))
            if self.answers in ready:
                chunk = os.read(self.answers, 1 << 20)
                if not chunk:
                    return Answer(failure=self._death())
                self.buffer += chunk
                if len(self.buffer) > MAX_ANSWER_BYTES:
                    self.stop()
                    return Answer(failure="the worker's answer was larger than 32 MB")
            elif not ready and left <= 0:
                self.stop()
                return Answer(failure=f"timed out after {timeout:.1f} s", seconds=timeout)
        while select.select([self.printed], [], [], 0)[0] and (chunk := os.read(self.printed, 1 << 20)):
            output.add(chunk)  # printed before the answer was written, so already in the pipe
        line, self.buffer = self.buffer.split(b"\n", 1)
        return Answer.from_json(line)

    def _death(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.stop()
        if code is None:
            return "the worker closed its answer channel and did not exit"
        if code >= 0:
            return f"the worker exited with status {code} before answering"
        name = signal.Signals(-code).name
        reasons = {"SIGXCPU": f"the CPU time limit of {self.limits.cpu_seconds} s was exceeded",
                   "SIGSEGV": "the worker crashed (segmentation fault; a recursion too deep?)",
                   "SIGKILL": "the worker was killed (SIGKILL)"}
        return reasons.get(name, f"the worker was stopped by {name}")

    def stop(self) -> None:
        """Kill the worker and everything it started; the next request starts a new one."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        reap(self.process.pid)
        self.process.stdout.close()
        for fd in (self.requests, self.answers):
            os.close(fd)
        shutil.rmtree(self.home, ignore_errors=True)
        self.process = None

    # -- requests ------------------------------------------------------------------------------

    def _call(self, request: dict, timeout: float) -> Answer:
        if self.process is None:
            self._start()
        self._send(request)
        output = Output(self.limits.output_kb * 1024)
        output.add(self.import_output.encode())
        self.import_output = ""
        answer = self._receive(timeout, output)
        answer.output = output.text()
        if answer.raised == "MemoryError":
            answer.message = f"the memory limit of {self.limits.memory_mb} MB was reached"
        return answer

    def load(self, name: str) -> Answer | None:
        """Import the implementation's `name`.py; None when it loaded, else why it did not."""
        if name in self.broken:
            return self.broken[name]
        if name not in self.files:
            self.broken[name] = Answer(failure=f"{name}.py is missing from the submission")
            return self.broken[name]
        if name in self.loaded and self.process is not None:
            return None
        answer = self._call({"load": name}, self.limits.import_seconds)
        if answer.failure or answer.raised:
            self.broken[name] = answer
            return answer
        self.loaded.add(name)
        self.import_output += answer.output
        return None

    def run(self, scenario_id: str, kwargs: dict, timeout: float) -> Answer:
        """Run one scenario; the answer always comes back, whatever the implementation does."""
        engine = scenarios.scenario(scenario_id).engine
        problem = self.load(engine)
        if problem is not None:
            return Answer(failure=describe_load_problem(engine, problem), unloaded=True)
        return self._call({"scenario": scenario_id, "kwargs": kwargs}, timeout)

    def close(self) -> None:
        self.stop()


def describe_load_problem(engine: str, answer: Answer) -> str:
    if answer.raised:
        where = f" ({answer.where})" if answer.where else ""
        return f"importing {engine}.py raised {answer.raised}: {answer.message}{where}"
    return (answer.failure if "missing" in (answer.failure or "")
            else f"importing {engine}.py failed: {answer.failure}")
