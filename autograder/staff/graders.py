"""Grading processes that stay: each runs `pytest autograder` on one submission after another.

Starting Python, pytest and the kit for every submission costs more than grading a correct
one. So `autograder bulk` keeps one grading process per job: it is told, one line at a time,
the options of a `pytest autograder` run (the submission, the sealed reference, where to
write results.json) and a log file; it runs pytest in itself, exactly as the command line
would (the same plugin, suites, fixtures and workers, each worker as isolated as ever), and
answers with pytest's exit status. A grading that takes longer than its cap, or a process
that dies, is stopped with everything it started; the next submission gets a new process.

    python -m autograder.staff.graders REPLY_FD OUTDIR LEVEL    (started by `Graders`, never by
                                                                 hand; OUTDIR names the run it
                                                                 grades for, LEVEL is the sandbox
                                                                 level bulk settled)
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .. import sandbox
from ..config import KIT_ROOT

GRACE_SECONDS = 5.0  # after SIGINT, the time pytest gets to stop its own workers
# The pytest plugins that grading does without: each adds hooks to every test (one of them a
# full garbage collection to every session), and none changes an outcome. pytest-timeout is not
# loaded either (PYTEST_DISABLE_PLUGIN_AUTOLOAD): here the cap on a whole grading is the last
# resort, and every scenario has its own limit in the worker's CPU time.
PLUGINS_OFF = ("-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception",
        "-p", "no:faulthandler", "-p", "no:warnings", "-p", "no:logging", "--assert=plain")
# Start the grading process so that it is interrupted (and stops its workers) if bulk dies,
# even by SIGKILL.
LAUNCHER = """
import ctypes, os, signal, sys
if sys.platform.startswith("linux"):
    ctypes.CDLL(None).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[1]):
        sys.exit("autograder bulk stopped before grading began")
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
"""


def pytest_args(*options: str, suites: tuple[str, ...] = ()) -> list[str]:
    """The arguments of one grading: the kit's suites (only the modules named in `suites`,
    test_value_mul, ..., when it names some: pytest collects no other), lean, and `options`."""
    where = [str(KIT_ROOT / "autograder" / "suites" / f"{module}.py") for module in suites]
    return [*(where or [str(KIT_ROOT / "autograder")]), "-q", *PLUGINS_OFF, *options]


# -- the grading process ---------------------------------------------------------------------------

def serve(reply_fd: int) -> None:
    """Read a job per line from stdin, grade it, answer its exit status on `reply_fd`."""
    import pytest

    replies = os.fdopen(reply_fd, "w", buffering=1)
    for line in sys.stdin:
        job = json.loads(line)
        with open(job["log"], "w", encoding="utf-8") as log, contextlib.redirect_stdout(log), \
                contextlib.redirect_stderr(log):
            try:
                code = int(pytest.main(job["args"]))
            except KeyboardInterrupt:
                return
        replies.write(json.dumps({"code": code}) + "\n")
        if code == pytest.ExitCode.INTERRUPTED:
            return


# -- the pool, in autograder bulk ---------------------------------------------------------------------

@dataclass(frozen=True)
class GraderExit:
    """How one submission's grading ended, as `Graders.grade` tells it.

    `code` is pytest's exit status, or the grading process's own when it died before answering;
    None when it was stopped, and then `reason` says why. `interrupted` means the run is being
    stopped: the submission was not graded, and must not be reported as failed.
    """
    code: int | None = None
    reason: str = ""
    interrupted: bool = False


INTERRUPTED = GraderExit(interrupted=True)


# The kernel sends PR_SET_PDEATHSIG when the *thread* that started the process ends, not the
# process: a grading process started by a thread of a pool that is done would be interrupted
# while another thread still uses it. So every one is started by this thread, which lives as
# long as this process does.
_STARTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grading-starter")


class Grader:
    """One grading process, used by one thread of bulk at a time."""

    def __init__(self, env: dict[str, str], out: Path) -> None:
        reply_read, reply_write = os.pipe()
        try:
            self.process = _STARTER.submit(
                subprocess.Popen,
                [sys.executable, "-c", LAUNCHER, str(os.getpid()), "-m", "autograder.staff.graders",
                 str(reply_write), str(out), sandbox.level()],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=KIT_ROOT,
                env=env, pass_fds=(reply_write,), start_new_session=True, text=True).result()
        except BaseException:
            os.close(reply_read)
            raise
        finally:
            os.close(reply_write)
        self.replies = reply_read
        self.buffer = b""

    def grade(self, args: list[str], log: Path, cap: float) -> int | None:
        """pytest's exit status; None when the process died or `cap` seconds passed first (it
        is then stopped)."""
        try:
            self.process.stdin.write(json.dumps({"args": args, "log": str(log)}) + "\n")
            self.process.stdin.flush()
        except OSError:
            return None
        deadline = time.monotonic() + cap
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                return None
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return int(json.loads(line)["code"])

    def alive(self) -> bool:
        return self.process.poll() is None

    def interrupt(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGINT)

    def stop(self) -> None:
        """Interrupt it (so pytest stops its workers), then kill whatever is left."""
        self.interrupt()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(GRACE_SECONDS)
        self.kill()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        with contextlib.suppress(OSError):
            os.close(self.replies)


class Graders:
    """A grading process per thread of bulk's pool, started when first needed and replaced
    after a grading that went wrong; an interrupted run stops them all."""

    def __init__(self, env: dict[str, str], out: Path) -> None:
        self.env, self.out = env, out
        self.lock = threading.Lock()
        self.by_thread = threading.local()  # .grader: that thread's process
        self.every: set[Grader] = set()
        self.stopping = False

    def grade(self, args: list[str], log: Path, cap: float) -> GraderExit:
        """Run one grading (`args` for pytest, its output in `log`) in this thread's process,
        stopped after `cap` seconds of wall-clock time."""
        with self.lock:
            if self.stopping:
                return INTERRUPTED
            grader = getattr(self.by_thread, "grader", None)
            if grader is None or not grader.alive():
                grader = self.by_thread.grader = Grader(self.env, self.out)
                self.every.add(grader)
        start = time.monotonic()
        code = grader.grade(args, log, cap)
        if code is not None:
            return GraderExit(code)
        with self.lock:
            self.every.discard(grader)
            self.by_thread.grader = None
        if self.stopping:
            grader.kill()
            return INTERRUPTED
        capped = time.monotonic() - start >= cap
        grader.stop()
        if capped:
            return GraderExit(reason=f"grading took longer than {cap:.0f} s (the wall-clock cap per "
                                     "submission) and was stopped")
        return GraderExit(grader.process.returncode)  # it died before answering: as pytest would have ended

    def stop_all(self) -> None:
        with self.lock:
            self.stopping = True
            every = list(self.every)
            self.every.clear()
        for grader in every:
            grader.interrupt()
        deadline = time.monotonic() + GRACE_SECONDS
        for grader in every:
            with contextlib.suppress(subprocess.TimeoutExpired):
                grader.process.wait(max(0.0, deadline - time.monotonic()))
            grader.kill()

    def close(self) -> None:
        """The run is over: each process ends when its input does."""
        with self.lock:
            every = list(self.every)
            self.every.clear()
        for grader in every:
            grader.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                grader.process.wait(GRACE_SECONDS)
            if grader.alive():
                grader.kill()


def pytest_env() -> dict[str, str]:
    """A grading's environment: this one, with no plugin autoloaded."""
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class Pool:
    """Grading processes that stay, each lent to one grading at a time, for a program that grades
    many folders (the kit's own tests, mutation testing) and has no run to interrupt."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.idle: list[Grader] = []
        self.lock = threading.Lock()
        self.scratch = Path(tempfile.mkdtemp(prefix="autograder-graders-"))
        self.env = {**pytest_env(), **(env or {})}

    def grade(self, options: list[str], log: Path, cap: float, suites: tuple[str, ...] = ()) -> int | None:
        """pytest's exit status for `pytest autograder OPTIONS` (of the suite modules `suites`
        alone, when it names some), its output in `log`; None when the grading process died or
        took longer than `cap` seconds (it is then stopped)."""
        with self.lock:
            grader = self.idle.pop() if self.idle else None
        if grader is None or not grader.alive():
            grader = Grader(self.env, self.scratch)
        code = grader.grade(pytest_args(*options, suites=suites), log, cap)
        if code is None:
            grader.stop()
            return None
        with self.lock:
            self.idle.append(grader)
        return code

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for grader in idle:
            grader.close()
            grader.process.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)


_pools: list[Pool] = []
GRADING_SECONDS = 1800  # a grading that takes this long is stuck: a normal one takes seconds


def grading_log(results: Path) -> Path:
    """Where `grade_folder` writes what the grading printed, beside its results.json."""
    return results.with_name(results.name + ".log")


def grade_folder(submission: Path, results: Path, *options: str,
                 suites: tuple[str, ...] = ()) -> dict[str, dict]:
    """Grade `submission` as `pytest autograder` does (by the suite modules `suites` alone, when
    it names some), in a grading process that stays (one pool per program); results.json's
    entries by part id. Raises RuntimeError when no results came."""
    if not _pools:
        _pools.append(Pool())
        atexit.register(_pools[0].close)
    log = grading_log(results)
    code = _pools[0].grade([f"--submission={submission}", f"--results-json={results}", *options], log,
                           GRADING_SECONDS, suites)
    if code not in (0, 1) or not results.is_file():  # 0: all passed, 1: some failed
        output = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        raise RuntimeError(f"grading {submission} stopped with exit status {code} and no results.json; "
                           f"its output ends with:\n{output[-3000:]}")
    return {test["tags"][0]: test for test in json.loads(results.read_text(encoding="utf-8"))["tests"]}


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sandbox.adopt(sys.argv[3])  # bulk found it once, for every grading process
    sandbox.warm()  # the workers' zygote, before anything is graded
    serve(int(sys.argv[1]))
