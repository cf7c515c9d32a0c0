"""Namespaces and confinement: what a worker process is allowed, set up in it before it runs.

`Plan` is everything the keeper needs to confine one worker, made by the grader and sent to the
keeper as JSON: it holds no submission file, request or answer. In the keeper,
`prepare_keeper` turns address randomisation off and makes the keeper the reaper of all the
worker starts (and, when isolated, the parent of a new PID namespace); in the worker's own
process, `confine_worker` gives it its private file system and network namespace (when
isolated), its limits, its identity, the folder it may write to (`landlock.py`, when not
isolated) and its seccomp filter (`seccomp.py`: only the calls it
needs, where the machine has seccomp), for good: nothing it runs afterwards can take any of them back.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import site
import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from . import identities, landlock, seccomp, system

if TYPE_CHECKING:
    from ..config import Limits

INSIDE = "/submission"
ROOT_LEVELS = ("isolated", "unprivileged")


@dataclass(frozen=True)
class Plan:
    """One worker's confinement, and the descriptors the keeper is given for it."""

    level: str
    uid: int | None  # None: the grader's own (not root)
    home: str | None  # the host folder the worker runs in (None when isolated: a tmpfs)
    root: str  # where an isolated worker mounts its private root ("" when not isolated)
    binds: list[str]  # what an isolated worker sees, read-only: the Python installation
    rlimits: list[list[int]]  # [resource, limit] pairs
    scratch_mb: int
    cgroups: list[str]
    lock: str | None  # the identity's lock file, removed by the keeper if the grader died
    env: dict[str, str]  # the worker's whole environment
    channel: int  # the keeper's end of its channel to the grader
    requests: int  # the worker's end of its request pipe
    answers: int  # the worker's end of its answer pipe
    command: list[str] | None  # what the worker execs; None: it serves in place (a forked worker)
    seccomp: str = ""  # the filter of seccomp.py to install, in hex ("": none can be installed here)
    landlock: int = 0  # the Landlock version that keeps its writes to its folder (0: none, or isolated)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> Plan:
        return cls(**json.loads(text))


def rlimits(limits: Limits, level: str) -> list[list[int]]:
    """The resource limits of a worker at `level`: [resource, limit] pairs."""
    caps = [
        [resource.RLIMIT_CPU, limits.cpu_seconds],
        [resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024],
        [resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024],
        [resource.RLIMIT_NOFILE, limits.open_files],
        [resource.RLIMIT_CORE, 0],
    ]
    if level in ROOT_LEVELS:  # counted per user, so only meaningful for the worker's own uid
        caps.append([resource.RLIMIT_NPROC, limits.processes])
    return caps


def python_paths() -> list[str]:
    """What the worker's Python needs to read: its installation and its site-packages."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
              "/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache"}
    return sorted(path for path in wanted if os.path.exists(path))


def prepare_keeper(plan: Plan) -> None:
    """In the keeper, before it forks the worker: the worker's addresses the same on every run,
    every orphan of it handed to the keeper, and (isolated) the worker the init of a new PID
    namespace. OSError when the kernel refuses."""
    system.turn_randomisation_off()
    system.prctl(system.PR_SET_CHILD_SUBREAPER, 1)
    if plan.level == "isolated":
        system.unshare(system.CLONE_NEWPID)


def confine_worker(plan: Plan, keeper_alive: int) -> None:
    """In the worker, right after the fork: its file system, limits and identity. Exits the
    process when its keeper died meanwhile (`keeper_alive`, a pipe's read end, is then ready)."""
    if plan.level == "isolated":
        _isolate(plan)
    else:
        os.chdir(plan.home)
    for kind, value in plan.rlimits:
        # A soft CPU limit below the hard one: SIGXCPU first (the worker is told why), then SIGKILL.
        resource.setrlimit(kind, (value, value + 1) if kind == resource.RLIMIT_CPU else (value, value))
    if plan.uid is not None:
        identities.become(plan.uid)
    system.prctl(system.PR_SET_NO_NEW_PRIVS, 1)
    if plan.landlock:  # nothing written where a classmate's worker could read it, or that outlives it
        landlock.restrict(plan.home, plan.landlock)
    if plan.seccomp:
        # only the calls it needs: no network, keyring or IPC, at every level, for all it will start
        seccomp.install(bytes.fromhex(plan.seccomp))
    system.prctl(system.PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid change, which clears it
    if select.select([keeper_alive], [], [], 0)[0]:  # the keeper died before PDEATHSIG was set
        os._exit(1)
    os.close(keeper_alive)


def _isolate(plan: Plan) -> None:
    """A private file system with only Python (read-only) and its own scratch folder in it, and
    no network, IPC or host name of the machine's."""
    system.unshare(system.CLONE_NEWNS | system.CLONE_NEWNET | system.CLONE_NEWIPC | system.CLONE_NEWUTS)
    root = plan.root
    system.mount(None, "/", None, system.MS_REC | system.MS_PRIVATE)
    system.mount("tmpfs", root, "tmpfs", system.MS_NOSUID | system.MS_NODEV, "mode=0755,size=4m")
    binds = [(path, path, True) for path in plan.binds]
    binds += [(f"/dev/{name}", f"/dev/{name}", False) for name in ("null", "zero", "urandom")]
    for source, target, read_only in binds:
        inside = root + target
        if os.path.isdir(source):
            os.makedirs(inside, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            open(inside, "a").close()
        system.mount(source, inside, None, system.MS_BIND | system.MS_REC)
        if read_only:
            system.mount(None, inside, None, system.MS_REMOUNT | system.MS_BIND | system.MS_RDONLY
                         | system.MS_NOSUID)
    home = root + INSIDE
    os.makedirs(home)
    system.mount("tmpfs", home, "tmpfs", system.MS_NOSUID | system.MS_NODEV,
                 f"mode=0700,uid={plan.uid},gid={plan.uid},size={plan.scratch_mb}m")
    os.chroot(root)
    os.chdir(INSIDE)
