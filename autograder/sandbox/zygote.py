"""The fork server: workers forked in milliseconds from a Python that has imported what they need.

A zygote is a program of its own (`BOOT`, exec'd as a worker is, `-s -B -u`, with address
randomisation off and the workers' scrubbed environment, holding no descriptor of the
grader's but its control socket), started once per grader process before anything secret is
read (`spawn.warm`). It imports the standard library, NumPy and the worker's inside
(inside/serve.py, and the scenario modules compiled from the kit's files), never runs
submission code, and is told nothing secret: each request is a `Plan` (no file, request or
answer of any worker) with the four descriptors it names. For each it forks a keeper
(`keeper.keep`), which forks the worker; the worker is confined exactly as an exec'd one, then
lets go of everything the zygote had (every descriptor but its pipes, signal handlers,
environment, random state, the kit's modules) and serves its requests in place.

The reference's workers and a submission's come from one zygote: it holds nothing of either
side's to pass on, and no worker can reach into it (another uid at the root levels, and not
dumpable, so not traceable by a worker of its own account). A zygote that dies or does not
fork in time is replaced by `spawn.start`, and the worker it failed to start is started
again; where no zygote works, the worker is exec'd afresh.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import linecache
import os
import signal
import socket
import subprocess
import sys
import traceback
from pathlib import Path

from . import keeper, system
from .confine import Plan

PACKAGE = keeper.PACKAGE
FLAGS = ["-s", "-B", "-u"]  # an exec'd worker's (worker.PROGRAM), and for its reasons
# The zygote's command line, the same for every zygote (what differs, such as a descriptor's
# number or the string hash secret, would move every worker's objects): `python -s -B -u -c
# BOOT`, in the workers' environment (PYTHONHASHSEED=0), with its control
# socket as its standard input, whose first message is the package's folder (so that no worker
# finds where the kit lies in its command line either).
BOOT = ("import sys\n"
        "sys.path[:] = [p for p in sys.path if p]\n"
        "import importlib.util as u, os\n"
        "p = os.read(0, 4096).decode()\n"
        "s = u.spec_from_file_location('autograder', p + '/__init__.py', submodule_search_locations=[p])\n"
        "sys.modules['autograder'] = m = u.module_from_spec(s)\n"
        "s.loader.exec_module(m)\n"
        "from autograder.sandbox.zygote import serve\n"
        "serve()\n")
# Run first, with the zygote's command line after it: address randomisation off, then the zygote.
UNRANDOMISED = ("import ctypes, os, sys\n"
                "ctypes.CDLL(None).personality(0x0040000)\n"
                "os.execv(sys.argv[1], sys.argv[1:])\n")
MAX_PLAN_BYTES = 1 << 16


# -- the grader's end -----------------------------------------------------------------------------

class Zygote:
    """One running fork server, and our end of its control socket."""

    def __init__(self, env: dict[str, str]) -> None:
        """Start one, with `env` as its (and every worker's first) environment; OSError if it
        cannot be started. It works in the background: a fork asked for meanwhile waits for it."""
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control.settimeout(keeper.CHANNEL_SECONDS)  # a zygote that stops reading is replaced
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", UNRANDOMISED, sys.executable, *FLAGS, "-c", BOOT],
                cwd="/", env=env, stdin=theirs, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
            self.control.send(PACKAGE.encode())
        except BaseException:
            self.control.close()
            raise
        finally:
            theirs.close()

    def fork(self, plan: Plan, descriptors: list[int]) -> None:
        """Ask for a keeper and a worker of `plan` with `descriptors`: the keeper's end of its
        channel, the worker's ends of its request and answer pipes, and its output's write end.
        OSError when the zygote is gone, or has not taken a plan for CHANNEL_SECONDS."""
        socket.send_fds(self.control, [plan.to_json().encode()], descriptors)

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Stop it (the keepers and workers it forked live on, each with its own channel)."""
        self.control.close()
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()


# -- the zygote's own program ---------------------------------------------------------------------

def serve() -> None:
    """The zygote: fork a keeper for every plan that comes on its control socket (its standard
    input), until it closes."""
    fresh = _dispositions()
    import numpy  # noqa: F401 - what every worker imports, imported once

    from ..inside import serve as inside
    inside.install_scenarios(_scenario_sources())  # compiled once, with what they import
    system.prctl(system.PR_SET_DUMPABLE, 0)  # no worker of this account may trace it or read it
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # its keepers are reaped by the kernel
    _rehearse()
    server = socket.socket(fileno=0)
    while True:
        message, descriptors = _next(server)
        if os.fork() == 0:
            server.detach()
            _keeper(message, descriptors, fresh)
        for descriptor in descriptors:
            os.close(descriptor)


def _next(server: socket.socket) -> tuple[bytes, list[int]]:
    """The next plan and its four descriptors; exits the zygote when the grader is gone, or
    when it may not fork: only with one thread is forking safe, and only what a grader sends
    is served."""
    while True:
        try:
            message, descriptors, _, _ = socket.recv_fds(server, MAX_PLAN_BYTES, 4)
            break
        except InterruptedError:
            continue
    if not message:
        os._exit(0)
    if len(descriptors) != 4 or len(os.listdir("/proc/self/task")) != 1:
        os._exit(1)
    return message, descriptors


def _rehearse() -> None:
    """Take one plan, of nothing, through `_next` before the first real one: what a first call
    leaves behind (caches, lazy imports) is then there before every fork alike: the first
    worker starts from the memory the later ones start from."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    null = [os.open(os.devnull, os.O_RDONLY) for _ in range(4)]
    socket.send_fds(theirs, [b"{}"], null)
    _, descriptors = _next(mine)
    for descriptor in [*null, *descriptors]:
        os.close(descriptor)
    mine.close()
    theirs.close()


def _scenario_sources() -> dict[str, str]:
    """The scenario modules as the kit holds them (the grader sends these very texts)."""
    folder = Path(PACKAGE) / "inside" / "scenarios"
    return {path.stem: path.read_text(encoding="utf-8")
            for path in sorted(folder.glob("*.py")) if path.stem != "__init__"}


def _dispositions() -> dict[int, object]:
    """Every signal's handling as a fresh Python has it."""
    found = {}
    for signum in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):
            handler = signal.getsignal(signum)
            if handler is not None and signum not in (signal.SIGKILL, signal.SIGSTOP):
                found[signum] = handler
    return found


def _keeper(message: bytes, descriptors: list[int], fresh: dict[int, object]) -> None:
    """In the process forked for a plan: become its keeper, in a session of its own. Never returns."""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # in place of the control socket, first
        os.close(null)
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        channel, requests, answers, output = descriptors
        for standard in (1, 2):  # the worker's output
            os.dup2(output, standard)
        os.close(output)
        plan = dataclasses.replace(Plan.from_json(message), channel=channel, requests=requests,
                                   answers=answers, command=None)
    except BaseException:  # noqa: BLE001 - no worker: the grader sees the channel close
        os._exit(1)
    keeper.keep(plan, functools.partial(_serve_in_place, fresh=fresh))


def _serve_in_place(plan: Plan, fresh: dict[int, object]) -> None:
    """In a forked worker, confined and holding only its own descriptors: let go of what the
    zygote had, then serve as inside/serve.py does in an exec'd worker. Exits the process."""
    system.prctl(system.PR_SET_DUMPABLE, 1)  # as an exec'd worker is
    for signum, handler in fresh.items():
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.environ.clear()
    os.environ.update(plan.env)
    sys.argv[:] = ["-c", str(plan.requests), str(plan.answers)]
    if "random" in sys.modules:
        sys.modules["random"].seed()
    sys.modules["numpy"].random.seed()
    inside = _as_main(sys.modules["autograder.inside.serve"])
    code = 0
    try:
        inside.main(plan.requests, plan.answers)
    except SystemExit as stop:  # as Python ends a program that raised it
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if not isinstance(stop.code, (int, type(None))):
            print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as Python ends a program that raised it
        traceback.print_exc()
        code = 1
    os._exit(code)


def _as_main(inside: object) -> object:
    """The worker's inside as an exec'd worker has it, `__main__`, and the kit's modules gone
    from its reach (sys.modules, the import caches, the cached source lines)."""
    for name in [name for name in sys.modules if name == "autograder" or name.startswith("autograder.")]:
        del sys.modules[name]
    for path in [path for path in sys.path_importer_cache if path.startswith(PACKAGE)]:
        del sys.path_importer_cache[path]
    linecache.clearcache()
    for attribute in ("__file__", "__cached__"):
        inside.__dict__.pop(attribute, None)
    inside.__name__, inside.__spec__, inside.__package__ = "__main__", None, None
    for attribute in ("__loader__", "__annotations__"):  # those of a program run with -c
        setattr(inside, attribute, getattr(sys.modules["__main__"], attribute))
    sys.modules["__main__"] = inside
    return inside


# -- the zygote of this grader process ------------------------------------------------------------

class Holder:
    """This process's zygote: started when first needed, replaced when it fails; given up (its
    workers exec'd instead) after GIVE_UP_AFTER in a row failed to fork a worker (a zygote
    that cannot import NumPy, say)."""

    GIVE_UP_AFTER = 4

    def __init__(self) -> None:
        self.zygote: Zygote | None = None
        self.failures = 0  # in a row

    def current(self, env: dict[str, str]) -> Zygote:
        """The zygote, started (with `env`) if there is none or the last one died."""
        if self.zygote is not None and not self.zygote.alive():
            self.discard()
        if self.zygote is None:
            self.zygote = Zygote(env)
        return self.zygote

    def discard(self) -> None:
        """Stop the zygote, if there is one: the next worker gets a new one."""
        if self.zygote is not None:
            zygote, self.zygote = self.zygote, None
            zygote.close()

    def failed(self) -> None:
        """The zygote did not fork a worker it was asked for: replace it."""
        self.failures += 1
        self.discard()

    def forked(self) -> None:
        """The zygote forked a worker: it and its successors are good."""
        self.failures = 0

    def given_up(self) -> bool:
        return self.failures >= self.GIVE_UP_AFTER


HERE = Holder()
