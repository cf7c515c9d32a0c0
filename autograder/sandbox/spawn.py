"""Starting a confined worker process, and stopping it with nothing of it left.

`start` gathers what one worker needs (an identity from the pool, a folder, cgroups, pipes)
and has a keeper start it; the `Process` it returns holds all of it, and `Process.stop` stops
the worker and gives everything back once nothing of it is alive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from . import cgroups, folders, identities, keeper, landlock, seccomp, zygote
from .cgroups import CpuClock, make_cgroups
from .confine import INSIDE, ROOT_LEVELS, Plan, python_paths
from .errors import SandboxError
from .folders import new_home, private_root
from .identities import Identity
from .keeper import Channel

KEEPER_SECONDS = 30.0  # what a keeper may take to start its worker, or to leave nothing of it alive
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032  # fcntl's, named there only from Python 3.10
PIPE_SIZE, MAX_PIPE_SIZE = 1 << 16, 1 << 20  # a pipe's size, and the most any account may ask


def environment(home: str) -> dict[str, str]:
    """A worker's whole environment: nothing of the grader's but what NumPy's BLAS needs (and
    Python reads it: one string hash secret for every worker, one layout for every fork); its
    temporary files in its own folder, the one place it may write."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home, "TMPDIR": home,
           "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # older OpenBLAS needs them here
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@dataclass
class Process:
    """A running, confined worker: its pipes (ours: the end we write its requests to, the ends we
    read its answers and its output from), its CPU clock, and what is held for it."""

    pid: int
    requests: int
    answers: int
    output: int
    clock: CpuClock
    channel: Channel
    keeper: subprocess.Popen | None  # the keeper, where it is our child
    identity: Identity | None
    home: Path | None

    def status(self, timeout: float) -> int | None:
        """The worker's wait status once nothing of it is left, None if not said within `timeout`."""
        return self.channel.report(timeout)

    def stop(self) -> None:
        """Stop the worker and everything it started; give back its identity and folder."""
        for fd in (self.requests, self.answers, self.output):
            os.close(fd)
        self.clock.close()
        _stop(self.channel, self.keeper, self.identity, self.home)


def _stop(channel: Channel, keeper_process: subprocess.Popen | None, identity: Identity | None,
          home: Path | None) -> None:
    """Ask the keeper to stop its worker (if it has one), wait until nothing of it is left, and
    give back its identity (cleared from here if the keeper did not finish) and its folder."""
    channel.handed()
    channel.stop()
    reaped = channel.reaped(KEEPER_SECONDS)
    if keeper_process is not None:
        try:
            keeper_process.wait(KEEPER_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(keeper_process.pid, signal.SIGKILL)
            keeper_process.wait()
    channel.close()
    if identity is not None:
        if not reaped:
            reaped = identities.clear(identity.uid)
        identities.release(identity, reaped)
    if home is not None:
        folders.remove(home)


def warm() -> None:
    """Start this process's zygote now, in the background (before anything secret is read, and
    while the grader has other work), so that its first worker does not wait for its imports;
    and the trial of seccomp here, so that it need not wait for that either. What workers of an
    earlier grading left and could not be removed then is removed now, or named on stderr."""
    seccomp.begin()
    for path in folders.remove_left():
        print(f"autograder: {path}: left by a worker of an earlier grading and still not removable "
              "(closed to every account meanwhile); remove it by hand", file=sys.stderr)
    with contextlib.suppress(OSError):
        zygote.HERE.current(environment(INSIDE))


def start(level: str, limits: list[list[int]], scratch_mb: int, share: bool, *, first: bytes,
          forked: bool, program: list[str], source: bytes) -> Process:
    """A worker confined at `level` with resource `limits` ([resource, limit] pairs, see
    `confine.rlimits`) and a scratch folder of `scratch_mb` (when isolated), in a cgroup of its
    own where `share` and the machine has them; it is in its cgroups when this returns, and
    `first` is on its way to it as the start of its requests. The grader's end of its request
    pipe never blocks: `write` says what the worker has not taken yet. `forked`: forked from this
    process's zygote, serving as inside/serve.py in place; else (and where no zygote works) an
    exec'd `program` (followed by its request and answer descriptors) with `source` on its
    standard input. SandboxError (or OSError) when it cannot start."""
    if forked and not zygote.HERE.given_up():
        for _ in range(2):  # a zygote that fails is replaced, once; then the worker is exec'd
            try:
                started = _start(level, limits, scratch_mb, share, first,
                                 zygote.HERE.current(environment(INSIDE)), None, b"")
            except (OSError, SandboxError):
                continue  # _start replaced the zygote
            zygote.HERE.forked()
            return started
    return _start(level, limits, scratch_mb, share, first, None, program, source)


def _start(level: str, limits: list[list[int]], scratch_mb: int, share: bool, first: bytes,
           server: zygote.Zygote | None, program: list[str] | None, source: bytes) -> Process:
    """`start`, from `server` where there is one, else with a keeper of its own running `program`."""
    identity = identities.allocate() if level in ROOT_LEVELS else None
    uid = identity and identity.uid
    home, channel, keeper_process, descriptors, groups = None, Channel(), None, [], []
    try:
        home = None if level == "isolated" else new_home(uid)
        processes = next((value for kind, value in limits if kind == resource.RLIMIT_NPROC), None)
        groups = make_cgroups(uid, processes) if share else []
        request_read, requests = os.pipe()
        os.set_blocking(requests, False)  # a worker that stops reading never holds the grader in a write
        answers, answer_write = os.pipe()
        output, output_write = os.pipe()
        descriptors = [requests, answers, output, request_read, answer_write, output_write]
        # Queued before the worker exists, where the pipe can be made to hold it: it finds its
        # first message waiting (nothing of the submission runs before it is `placed`).
        queued = _queue(requests, first)
        plan = Plan(level=level, uid=uid, home=None if home is None else str(home),
                    root=private_root() if level == "isolated" else "",
                    binds=python_paths() if level == "isolated" else [],
                    rlimits=limits, scratch_mb=scratch_mb,
                    cgroups=[str(g) for g in groups],
                    lock=None if identity is None else str(identity.path),
                    env=environment(INSIDE if home is None else str(home)),
                    channel=channel.keepers.fileno(), requests=request_read, answers=answer_write,
                    command=None if server else [*program, str(request_read), str(answer_write)],
                    seccomp=seccomp.plan_program(),
                    landlock=0 if level == "isolated" else landlock.abi())
        if server is not None:
            # The zygote numbers the descriptors itself: a plan of the same length every time.
            server.fork(dataclasses.replace(plan, channel=-1, requests=-1, answers=-1),
                        [plan.channel, request_read, answer_write, output_write])
        else:
            source_read, source_write = os.pipe()
            descriptors.append(source_read)
            with os.fdopen(source_write, "wb") as pipe:  # far less than a pipe holds: never blocks
                pipe.write(source)
            keeper_process = subprocess.Popen(
                [*keeper.command(), str(plan.channel)], cwd="/", env={}, stdin=source_read,
                stdout=output_write, stderr=output_write,
                pass_fds=(plan.channel, request_read, answer_write), start_new_session=True)
            channel.send(plan)
        channel.handed()
        for fd in descriptors[3:]:  # the keeper's now
            os.close(fd)
        descriptors = descriptors[:3]
        pid, keeper_pid = channel.pids(KEEPER_SECONDS)
        clock = CpuClock(pid, keeper_pid, groups, uid)
    except BaseException:
        for fd in descriptors:
            os.close(fd)
        if server is not None:  # gone, it forks no keeper later: a keeper it never forked is not waited for
            zygote.HERE.failed()
        _stop(channel, keeper_process, identity, home)
        cgroups.remove(groups)  # where no keeper took its plan, no keeper removes them
        raise
    started = Process(pid=pid, requests=requests, answers=answers, output=output, clock=clock,
                      channel=channel, keeper=keeper_process, identity=identity, home=home)
    try:
        channel.placed(KEEPER_SECONDS)
    except BaseException:
        started.stop()
        raise
    if not queued and write(requests, first, KEEPER_SECONDS):  # read before any code of the submission's
        started.stop()
        raise SandboxError("the worker did not take its first message (its files) in time")
    return started


def _queue(pipe: int, data: bytes) -> bool:
    """Write `data` into an empty pipe at once, making the pipe large enough if it may; False
    (nothing written) when it cannot hold it."""
    if len(data) > PIPE_SIZE:
        try:
            fcntl.fcntl(pipe, F_SETPIPE_SZ, min(len(data), MAX_PIPE_SIZE))
        except OSError:
            return False
    if len(data) > fcntl.fcntl(pipe, F_GETPIPE_SZ):
        return False
    write(pipe, data)
    return True


def unread(pipe: int) -> int:
    """How many bytes written into `pipe` its reader has not read yet (0 when it cannot be told)."""
    try:
        return struct.unpack("i", fcntl.ioctl(pipe, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


def write(pipe: int, data: bytes, seconds: float = 0.0) -> bytes:
    """Write `data` into `pipe` (a request pipe's end, which never blocks), waiting no more than
    `seconds` for the reader to take it; what is left unwritten. A reader that is gone is not an
    error here (its end says why): then nothing is left."""
    deadline = time.monotonic() + seconds
    view = memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(pipe, view):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                select.select([], [pipe], [], left)
    except OSError:
        return b""
    return bytes(view)
