"""The keeper: a small trusted process between the grader and one worker, the reaper of all it starts.

It is a program of its own (`BOOT`, exec'd with the keeper's end of a channel to the grader),
never code run between a fork and an exec of the grader. It reads the worker's `Plan` from the
channel, starts the worker confined (`confine.py`), puts it in its cgroups, and says so on the
channel: `worker <pid> <keeper's pid>` and `placed`. When the worker dies, when the grader
asks it to stop (shuts its end of the channel down), or when the grader itself dies (its end
closes), the keeper kills the worker and everything it started, waits until none of it is
left, removes its cgroups, folder and leftovers, and says `reaped <wait status>`. Within a PID
namespace the kernel kills them all with the worker (its init); without one the keeper kills
every process of the worker's uid at once, or (not root) every child it was handed; and a v2
cgroup's `cgroup.kill` ends everything in the worker's cgroup at every level that has one.

`Channel` is the grader's end.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from . import cgroups, folders, identities, sweeps
from .confine import Plan, confine_worker, prepare_keeper
from .errors import SandboxError

CHANNEL_SECONDS = 30.0  # the longest the grader waits to send a keeper or a zygote its plan
PACKAGE = str(Path(__file__).resolve().parent.parent)  # the autograder package the keeper runs from
# The keeper's command line: `python -I -S -B -c BOOT PACKAGE CHANNEL_FD`. It loads the kit's
# package from its folder by path, whatever else is installed or in the working folder.
BOOT = ("import importlib.util as u, sys\n"
        "s = u.spec_from_file_location('autograder', sys.argv[1] + '/__init__.py', "
        "submodule_search_locations=[sys.argv[1]])\n"
        "sys.modules['autograder'] = m = u.module_from_spec(s)\n"
        "s.loader.exec_module(m)\n"
        "from autograder.sandbox.keeper import main\n"
        "main(int(sys.argv[2]))\n")


def command() -> list[str]:
    """The keeper program's command line, but for its channel's descriptor."""
    return [sys.executable, "-I", "-S", "-B", "-c", BOOT, PACKAGE]


def main(channel: int) -> None:
    """The keeper program: read the plan from `channel`, then keep its worker. Never returns."""
    try:
        plan = Plan.from_json(_read_line(channel))
    except BaseException:  # noqa: BLE001 - nothing started: the grader sees the channel close
        traceback.print_exc()
        os._exit(1)
    keep(plan)


def keep(plan: Plan, in_place: Callable[[Plan], None] | None = None) -> None:
    """Start the plan's worker, confined, and keep it until it ends or is stopped. Never returns;
    whatever goes wrong on the way, the cleaning is still done. A plan with no command is a
    worker that serves in the process forked for it: `in_place(plan)` (the zygote's)."""
    try:
        prepare_keeper(plan)
        alive_read, alive_write = os.pipe()  # the worker's way to know that its keeper lives
        worker = os.fork()
    except BaseException:  # noqa: BLE001 - no worker: say nothing, the grader sees the channel close
        traceback.print_exc()
        os._exit(1)
    if worker == 0:
        os.close(alive_write)
        _start_worker(plan, alive_read, in_place)
    os.close(alive_read)
    _keep(plan, worker, alive_write)


def _start_worker(plan: Plan, keeper_alive: int, in_place: Callable[[Plan], None] | None) -> None:
    """In the worker's process: confine it, keep only its own descriptors, and exec its command
    (or serve in place). Never returns."""
    try:
        confine_worker(plan, keeper_alive)
        keep = sorted({0, 1, 2, plan.requests, plan.answers})
        for low, high in zip(keep, keep[1:] + [1 << 20]):
            os.closerange(low + 1, high)
        if plan.command is None:
            in_place(plan)  # exits the process itself
        for fd in (plan.requests, plan.answers):
            os.set_inheritable(fd, True)
        os.execve(plan.command[0], plan.command, plan.env)
    except BaseException:  # noqa: BLE001 - never back into the keeper's code
        traceback.print_exc()
    finally:
        os._exit(127)


def _keep(plan: Plan, worker: int, alive: int) -> None:
    """The keeper's part once `worker` is forked: place it, say so, wait for its end or the
    grader's word, then leave nothing of it and say so. Never returns."""
    status = None
    try:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for standard in (0, 1, 2):
            os.dup2(null, standard)
        # Let go of everything else it was given (the worker's pipes among them).
        keep = sorted({plan.channel, alive})
        for low, high in zip([2, *keep], [*keep, 1 << 20]):
            os.closerange(low + 1, high)
        # Into its cgroups before it may run submission code: the grader sends none before
        # `placed`. Both lines in one: the grader wakes once.
        cgroups.place(worker, plan.cgroups)
        with contextlib.suppress(OSError):  # a grader already gone still gets its worker killed
            os.write(plan.channel, f"worker {worker} {os.getpid()}\nplaced\n".encode())
        status = _wait_or_stop(plan.channel, worker)
    except BaseException:  # noqa: BLE001 - the keeper must leave nothing alive, whatever happened
        with contextlib.suppress(OSError):
            os.kill(worker, signal.SIGKILL)
    try:
        _leave_nothing(plan)
        try:
            os.write(plan.channel, f"reaped {status}\n".encode() if status is not None else b"")
            told = status is not None
        except OSError:
            told = False  # the grader is gone: so is its hold on the identity, in a moment
        if plan.lock and not told:
            identities.release_if_orphaned(plan.lock)
    finally:
        os._exit(0)


def _wait_or_stop(channel: int, worker: int) -> int:
    """The worker's wait status, once it has ended by itself or been killed at the grader's word."""
    try:
        ended = os.pidfd_open(worker)
    except (AttributeError, OSError):
        ended = None
    while True:
        watched = [channel] + ([ended] if ended is not None else [])
        ready = select.select(watched, [], [], None if ended is not None else 0.05)[0]
        if channel in ready and not os.read(channel, 64):
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
            return os.waitpid(worker, 0)[1]
        if ended is None:
            pid, status = os.waitpid(worker, os.WNOHANG)
            if pid:
                return status
        elif ended in ready:
            return os.waitpid(worker, 0)[1]


def _leave_nothing(plan: Plan) -> None:
    """Once the worker is dead or killed: kill and reap everything it started, then remove its
    cgroups, its folder and what its uid left in shared folders."""
    cgroups.kill(plan.cgroups)  # v2: everything in its cgroup, at once
    if plan.level == "unprivileged":
        identities.kill_identity(plan.uid)
    elif plan.level == "limits":
        sweeps.kill_children()
    while True:  # every orphan of the worker was handed to the keeper: reap until none is left
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    cgroups.remove(plan.cgroups)
    if plan.home and plan.level != "isolated":
        folders.remove(plan.home)
    if plan.level == "unprivileged":
        for path in sweeps.sweep(plan.uid):
            folders.set_aside(path)


def _read_line(fd: int) -> bytes:
    """One line from a descriptor that carries nothing after it until its end."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise EOFError("the channel closed before the plan came")
        data += chunk
    return data


class Channel:
    """The grader's end of a keeper's channel: it sends the plan; the worker's pid comes first,
    and its wait status once nothing of it is left; shutting our side down asks the keeper to
    stop the worker."""

    def __init__(self) -> None:
        self.mine, self.keepers = socket.socketpair()
        self.buffer = b""

    def send(self, plan: Plan) -> None:
        """Send the keeper its plan (OSError when the keeper is gone, or has not taken it within
        CHANNEL_SECONDS)."""
        self.mine.settimeout(CHANNEL_SECONDS)
        try:
            self.mine.sendall(plan.to_json().encode() + b"\n")
        finally:
            self.mine.settimeout(None)

    def handed(self) -> None:
        """The keeper has its end (or never will): close ours of it, so that its end's closing
        is seen."""
        self.keepers.close()

    def _line(self, prefix: bytes, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            lines = self.buffer.split(b"\n")
            for line in lines[:-1]:
                if line.startswith(prefix):
                    return line[len(prefix):]
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.mine], [], [], left)[0]:
                return None
            try:
                chunk = self.mine.recv(4096)
            except OSError:
                return None
            if not chunk:
                return None
            self.buffer += chunk

    def pids(self, timeout: float) -> tuple[int, int]:
        """The worker's pid and its keeper's; SandboxError when the keeper did not say so."""
        line = self._line(b"worker ", timeout)
        if line is None:
            raise SandboxError("the worker's keeper did not start")
        worker, keeper = map(int, line.split())
        return worker, keeper

    def placed(self, timeout: float) -> None:
        """Wait until the keeper has put the worker into its cgroups (SandboxError if it did not)."""
        if self._line(b"placed", timeout) is None:
            raise SandboxError("the worker's keeper did not place the worker in its cgroups")

    def report(self, timeout: float) -> int | None:
        """The worker's wait status once the keeper has left nothing of it alive; None when the
        keeper did not say so within `timeout` seconds."""
        line = self._line(b"reaped ", timeout)
        return None if line is None else int(line)

    def reaped(self, timeout: float) -> bool:
        """Is nothing of the worker alive: reported so, or no worker was ever started?"""
        return self.report(timeout) is not None or b"worker " not in self.buffer

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.mine.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.mine.close()
        with contextlib.suppress(OSError):
            self.keepers.close()
