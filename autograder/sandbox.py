"""What a worker process may do: resource limits, no address randomisation, an identity of its
own, and as little as the machine allows beyond that.

How much the sandbox can do depends on who runs the grader, so the strongest level that works
here is chosen once:

- `isolated` (root with mount rights, CAP_SYS_ADMIN): new mount, PID, network, IPC and UTS
  namespaces; a fresh root file system holding only the Python installation, read-only, and
  the worker's folder as /submission, a size-limited tmpfs; a user id of its own.
- `unprivileged` (root without mount rights, as in a default container): a user id of its
  own, so its files, processes and folder are closed to every other worker and to the
  grader's files that other accounts cannot read.
- `limits` (not root): resource limits only; the worker runs as the grader's own user.

At both root levels every worker gets its own uid from a pool (`allocate`), held under a lock
for as long as any process of it may be alive, and submission code never runs as root: when
no such identity can run the grader's Python, the level is `refused` and nothing is graded.

Every worker is started through a keeper: a small trusted process between the grader and the
worker, the reaper of everything the worker starts. When the worker dies, when the grader asks
it to stop, or when the grader itself dies (its end of the keeper's channel closes), the
keeper kills the worker and everything it started, waits until none of it is left, and says
so on the channel. Within a PID namespace that is the kernel's doing (the worker is its init);
without one the keeper kills every process of the worker's uid at once with kill(-1) from
that uid, which no fork can outrun.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import grp
import os
import pwd
import resource
import secrets
import select
import shutil
import signal
import site
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .config import Limits

ADDR_NO_RANDOMIZE = 0x0040000
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
IPC_RMID = 0
INSIDE = "/submission"
LEVELS = ("isolated", "unprivileged", "limits")
ROOT_LEVELS = ("isolated", "unprivileged")
LEVEL_VARIABLE = "AUTOGRADER_SANDBOX_LEVEL"
# Worker identities: uids (and gids) with no account, one per live worker. The pool is large
# and drawn from at random, so an identity comes back rarely, and never while it is held; it
# lies above the ranges that systemd and /etc/subuid hand out to containers.
UID_POOL_START, UID_POOL_SIZE = 1_900_000_000, 65_536
# Folders that any account may write to: what a worker's identity left there is removed.
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")
SWEEP_DEPTH = 6

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(Exception):
    """The sandbox cannot start a worker here; the message says why and what to do."""


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       flags, data and data.encode()), f"mount {target}")


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


def python_paths() -> list[str]:
    """What the worker's Python needs to read: its installation and its site-packages."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
              "/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache"}
    return sorted(path for path in wanted if os.path.exists(path))


# -- the grader's own folder for worker state ------------------------------------------------------

def _owned_folder(path: Path, mode: int = 0o700) -> Path:
    """`path`, a folder of this account's alone with `mode` (made if missing), or SandboxError."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, mode)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise SandboxError(f"{path}: must be a folder that only uid {os.geteuid()} can write to "
                           f"(it is mode {stat.S_IMODE(info.st_mode):o}, owner {info.st_uid}); "
                           "remove it and grade again")
    if stat.S_IMODE(info.st_mode) != mode:
        os.chmod(path, mode)
    return path


@cache
def state_folder() -> Path:
    """Where worker identities are locked and private roots are mounted: one folder for every
    grader on this machine, in /run where the system has it, else in /tmp. Other accounts may
    pass through it (to their own folders in `homes`), never list or change it."""
    run = Path("/run")
    if run.is_dir() and os.stat(run).st_uid == 0 and not os.stat(run).st_mode & 0o002:
        return _owned_folder(run / "autograder", 0o711)
    return _owned_folder(Path("/tmp") / "autograder-state", 0o711)


def new_home(uid: int | None) -> Path:
    """A fresh folder for a worker that is not isolated: its own (mode 700) under the state
    folder when it has an identity, else in the temporary folder."""
    if uid is None:
        return Path(tempfile.mkdtemp(prefix="autograder-worker-"))
    home = Path(tempfile.mkdtemp(prefix="worker-", dir=_owned_folder(state_folder() / "homes", 0o711)))
    os.chown(home, uid, uid)
    return home


@cache
def private_root() -> str:
    """The folder each isolated worker mounts its own root file system on (in its own mount
    namespace, so one folder serves every worker at once)."""
    return str(_owned_folder(state_folder() / "root"))


# -- identities ----------------------------------------------------------------------------------

def _mapped(path: str) -> list[range]:
    """The ids this user namespace maps, from /proc/self/uid_map or gid_map."""
    try:
        lines = Path(path).read_text().split("\n")
    except OSError:
        return [range(0, 2**32 - 1)]
    return [range(int(start), int(start) + int(count))
            for start, _, count in (line.split() for line in lines if line.strip())]


@cache
def uid_pool() -> range:
    """The ids workers may have: the default pool where this namespace maps it, else the upper
    half of the largest mapped range (a container with remapped ids)."""
    wanted = range(UID_POOL_START, UID_POOL_START + UID_POOL_SIZE)
    maps = [_mapped("/proc/self/uid_map"), _mapped("/proc/self/gid_map")]
    if all(any(r.start <= wanted.start and wanted.stop <= r.stop for r in ranges) for ranges in maps):
        return wanted
    largest = max(maps[0], key=len)
    shared = [r for r in maps[1] if r.start <= largest.start and largest.stop <= r.stop]
    top = largest.stop
    bottom = max(largest.start + len(largest) // 2, 1000)
    if not shared or top - bottom < 64:
        raise SandboxError("this user namespace maps too few ids to give every worker a uid of its "
                           "own; map at least 128 ids (e.g. in /etc/subuid) or grade as a plain user")
    return range(bottom, min(top, bottom + UID_POOL_SIZE))


@dataclass
class Identity:
    """A uid (and the gid of the same number) that only one worker has while it is held."""

    uid: int
    lock: int = field(repr=False)
    path: Path = field(repr=False)


def _has_account(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


def allocate() -> Identity:
    """An identity no live worker of any grader on this machine has, with nothing of it left."""
    folder = _owned_folder(state_folder() / "uids")
    pool = uid_pool()
    start = secrets.randbelow(len(pool))
    for step in range(len(pool)):
        uid = pool[(start + step) % len(pool)]
        if not _has_account(uid) and (identity := _lock(folder, uid)):
            return identity
    raise SandboxError(f"all {len(pool)} worker identities are in use; stop some graders")


def _lock(folder: Path, uid: int) -> Identity | None:
    """The identity `uid` under an exclusive lock, or None when another grader holds it (or
    something of it is still alive)."""
    path = folder / str(uid)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Released identities are unlinked: a lock on a file no longer at `path` is no lock.
        if os.fstat(descriptor).st_ino != os.stat(path, follow_symlinks=False).st_ino:
            raise BlockingIOError
        if os.pread(descriptor, 64, 0) and not clear(uid):
            raise BlockingIOError  # its last holder died before it was cleared: try another
        os.pwrite(descriptor, f"held by {os.getpid()}\n".encode(), 0)
    except OSError:
        os.close(descriptor)
        return None
    return Identity(uid, descriptor, path)


def release(identity: Identity, cleared: bool) -> None:
    """Give an identity back: for reuse when nothing of it is left, else marked for `clear`."""
    if cleared:
        with contextlib.suppress(OSError):
            os.unlink(identity.path)
    os.close(identity.lock)


def clear(uid: int) -> bool:
    """Kill whatever of `uid` is left anywhere, remove what it left in shared folders; True when
    no process of it runs any more (a zombie runs nothing, and its parent's reaper takes it)."""
    reaper = os.fork()
    if reaper == 0:
        try:
            _become(uid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(reaper, 0)
    deadline = time.monotonic() + 5
    while (left := any(True for _ in processes_of(uid))) and time.monotonic() < deadline:
        time.sleep(0.01)
    sweep(uid)
    for group in cgroups(uid):
        with contextlib.suppress(OSError):
            os.rmdir(group)
    return not left


def _children(pid: int, threads: bool = True) -> list[int]:
    """The children of every thread of `pid` (of its main thread only when not `threads`)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task") if threads else [str(pid)]
    except OSError:
        return []
    found = []
    for thread in threads:
        with contextlib.suppress(OSError):
            found += map(int, Path(f"/proc/{pid}/task/{thread}/children").read_text().split())
    return found


def _parent_if_running(pid: int) -> int | None:
    """The parent of `pid`, None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stats:
            state, parent = stats.read().rsplit(b")", 1)[1].split()[:2]
    except (OSError, ValueError):
        return None
    return None if state in (b"Z", b"X") else int(parent)


def _kill_child(pid: int, parents: tuple[int, int]) -> None:
    """SIGKILL `pid` if it is still a child of one of `parents`, through a pidfd, so that a pid
    the system gave to another process meanwhile is never hit."""
    try:
        pinned = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if _parent_if_running(pid) in parents:
            signal.pidfd_send_signal(pinned, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pinned)


def processes_of(uid: int, but: int = 0):
    """/proc/<pid> of every process of `uid` that still runs (not a zombie), but `but`."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == but:
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as status:
                fields = dict(line.split(b":", 1) for line in status if b":" in line)
            running = not fields[b"State"].strip().startswith(b"Z")
            if running and int(fields[b"Uid"].split()[0]) == uid:
                yield entry.path
        except (OSError, KeyError, ValueError):
            continue


def _become(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def sweep(uid: int) -> None:
    """Remove what `uid` left in the folders any account may write to, and its System V IPC."""
    for top in WORLD_WRITABLE:
        _sweep_folder(top, uid, SWEEP_DEPTH)
    for kind, remove in (("shm", lambda i: _libc.shmctl(i, IPC_RMID, None)),
                         ("sem", lambda i: _libc.semctl(i, 0, IPC_RMID)),
                         ("msg", lambda i: _libc.msgctl(i, IPC_RMID, None))):
        try:
            header, *rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        names = header.split()
        for row in rows:
            entry = dict(zip(names, row.split()))
            if str(uid) in (entry.get("uid"), entry.get("cuid")):
                remove(int(entry.get("shmid") or entry.get("semid") or entry.get("msqid")))


def _sweep_folder(folder: str, uid: int, depth: int) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o003 == 0o003 and depth > 0:
            _sweep_folder(entry.path, uid, depth - 1)  # another world-writable folder


# -- cgroups: a CPU share and an exact CPU clock per worker -----------------------------------------

@cache
def _cgroup_parents() -> tuple[Path, ...]:
    """This process's own cgroup in the cpu and cpuacct hierarchies (v1), where this account may
    make cgroups under it; () where it may not (a default container mounts them read-only)."""
    if os.geteuid() != 0:
        return ()
    mine = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(","):
                mine[name] = path.lstrip("/")
    parents = []
    for name in ("cpu", "cpuacct"):
        base = Path("/sys/fs/cgroup") / name
        if name not in mine or not (base / "tasks").exists():
            return ()
        parent = (base / mine[name]).resolve()
        probe = parent / f"autograder-probe-{os.getpid()}"
        try:
            probe.mkdir()
            probe.rmdir()
        except OSError:
            return ()
        if parent not in parents:
            parents.append(parent)
    return tuple(parents)


def cgroups(uid: int) -> list[Path]:
    """The worker's own cgroups (made by `make_cgroups`), one per hierarchy."""
    return [parent / f"autograder-worker-{uid}" for parent in _cgroup_parents()]


def make_cgroups(uid: int) -> list[Path]:
    made = []
    for group in cgroups(uid):
        with contextlib.suppress(FileExistsError):
            group.mkdir()
        made.append(group)
    return made


class CpuClock:
    """The CPU time a worker has used, read by the trusted side: its cgroup's cpuacct.usage
    (every process the worker started) where it has one, else its own process CPU clock, and
    on demand (`family`) the CPU time of every process of its uid."""

    def __init__(self, pid: int, keeper: int, groups: list[Path], uid: int | None) -> None:
        usage = next((g / "cpuacct.usage" for g in groups if (g / "cpuacct.usage").exists()), None)
        self.usage = os.open(usage, os.O_RDONLY | os.O_CLOEXEC) if usage else None
        self.clock = ((~pid) << 3) | 2  # CPUCLOCK_SCHED of the whole process `pid`
        self.schedstat = f"/proc/{pid}/schedstat"
        self.pid, self.keeper, self.uid, self.groups = pid, keeper, uid, groups
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.last = 0.0

    def others(self) -> list[int]:
        """The processes the worker started that still run (after an answer, none should). The
        top of every such chain is a child of the worker or, once orphaned, of the keeper (its
        subreaper): two small files say, where a scan of /proc would take milliseconds."""
        return [pid for pid in _children(self.pid) + _children(self.keeper, threads=False)
                if pid != self.pid and _parent_if_running(pid) in (self.pid, self.keeper)]

    def kill_others(self) -> bool:
        """Kill every process the worker started, round after round (a process being killed
        cannot fork, and its children come up to the keeper); False when some still run."""
        for _ in range(50):
            left = self.others()
            if not left:
                return True
            for pid in left:
                _kill_child(pid, (self.pid, self.keeper))
            time.sleep(0.001)
        return not self.others()

    def family(self) -> float:
        """The CPU time of every live process of the worker's uid but the worker itself, so that
        one that makes its children do the work (or burn the machine) is charged for them."""
        if self.usage is not None:
            return 0.0
        total = 0
        for path in processes_of(self.uid, self.pid) if self.uid is not None else ():
            try:
                with open(f"{path}/stat", "rb") as stat_file:
                    fields = stat_file.read().rsplit(b")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
            except (OSError, IndexError, ValueError):
                continue
        return total / self.ticks

    def seconds(self) -> float:
        """The worker's CPU time so far. Once it is dead and its keeper has removed its cgroup
        (which can happen before its answer channel is seen closed), the last reading: its
        time is final, and its death is noticed on the answer channel."""
        try:
            if self.usage is not None:
                self.last = int(os.pread(self.usage, 64, 0)) / 1e9
            else:
                self.last = time.clock_gettime(self.clock)
        except OSError:
            pass
        return self.last

    def lowered(self) -> bool:
        """Has the worker lowered its own priority (nice, SCHED_IDLE or SCHED_BATCH), so that
        the time it waits for a CPU is its own doing?"""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as stats:
                fields = stats.read().rsplit(b")", 1)[1].split()
            return int(fields[16]) > 0 or int(fields[38]) != 0  # nice, policy
        except (OSError, IndexError, ValueError):
            return False

    def waited(self) -> float | None:
        """Seconds the worker spent runnable but waiting for a CPU (None where the kernel does not
        say): the machine's load, never the submission's doing."""
        try:
            with open(self.schedstat, "rb") as stats:
                return int(stats.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return None

    def close(self) -> None:
        if self.usage is not None:
            os.close(self.usage)
            self.usage = None


# -- the level -------------------------------------------------------------------------------------

def _closed_to_others(path: str) -> str | None:
    """The first folder on the way to `path` (as written, then as its links resolve) that other
    accounts may not enter, or `path` itself when they may not run it; None when they can."""
    real = Path(os.path.realpath(path))
    for folder in [*reversed(Path(os.path.abspath(path)).parents), *reversed(real.parents)]:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return str(folder)
    return None if os.stat(real).st_mode & stat.S_IXOTH else str(real)


def exposed(folder: Path, what: str) -> str | None:
    """Why `folder` must not be used at this level, if it must not: a worker with no private view
    of the files (`unprivileged`) reads whatever any account can reach."""
    if level() != "unprivileged":
        return None
    real = Path(os.path.realpath(folder))
    if all(os.stat(part).st_mode & stat.S_IXOTH for part in [real, *real.parents]):
        return (f"{folder}: {what} is open to every account here, and submissions run as "
                "unprivileged accounts with no private view of the files: close it to them "
                f"(chmod 700 {folder}) and grade again")
    return None


def refusal() -> str:
    """Why no worker may start at this machine's level (`level() == "refused"`)."""
    blocker = _closed_to_others(sys.executable)
    where = (f"{sys.executable} (really {os.path.realpath(sys.executable)}) lies under {blocker}, "
             "which other accounts may not enter" if blocker else
             f"{sys.executable} did not start as an unprivileged account")
    return (f"the grader refuses to run submissions: it runs as root without mount rights "
            f"(CAP_SYS_ADMIN), so each worker must run as an unprivileged account of its own, and "
            f"no such account can run the grader's Python: {where}. Student code never runs as root. "
            "Fix: install the kit into a Python that every account can run (for example a venv made "
            "with /usr/bin/python3 -m venv /opt/autograder), or give the grader CAP_SYS_ADMIN")


def _probe(level: str) -> bool:
    """Can a worker start at this level here? (One short run of this Python, doing nothing.)"""
    identity = allocate() if level in ROOT_LEVELS else None
    home = new_home(identity and identity.uid)
    channel = Channel()
    plan = Plan(level=level, uid=identity and identity.uid, home=str(home), files={}, rlimits={},
                scratch_mb=1, cgroups=(), channel=channel.keepers.fileno())
    cleared = False
    try:
        subprocess.run([sys.executable, "-I", "-c", "pass"], cwd="/", check=True, capture_output=True,
                       timeout=60, preexec_fn=confine(plan))
        return True
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        channel.started()
        cleared = channel.reaped(30)
        channel.close()
        shutil.rmtree(home, ignore_errors=True)
        if identity:
            release(identity, cleared)


@cache
def level() -> str:
    """The strongest isolation that works on this machine for this user (found once; a bulk
    run passes what it found to its pytest processes in LEVEL_VARIABLE): one of LEVELS, or
    `refused` when the grader is root and no unprivileged identity can run its Python."""
    if os.environ.get(LEVEL_VARIABLE) in LEVELS:
        return os.environ[LEVEL_VARIABLE]
    if os.geteuid() != 0:
        return "limits"
    for candidate in ROOT_LEVELS:
        if _probe(candidate):
            return candidate
    return "refused"


def require() -> str:
    """The level, or SandboxError when submissions may not run here."""
    chosen = level()
    if chosen == "refused":
        raise SandboxError(refusal())
    return chosen


# -- starting a worker -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """Everything the child side needs to confine one worker."""

    level: str
    uid: int | None  # None: the grader's own (not root)
    home: str | None  # the host folder the worker runs in (None when isolated: a tmpfs)
    files: dict[str, bytes]  # written into the tmpfs when isolated
    rlimits: dict[int, int]
    scratch_mb: int
    cgroups: tuple[str, ...]
    channel: int  # the keeper's end of its channel to the grader
    lock: str | None = None  # the identity's lock file, removed by the keeper if the grader died


def rlimits(limits: Limits, chosen: str) -> dict[int, int]:
    caps = {
        resource.RLIMIT_CPU: limits.cpu_seconds,
        resource.RLIMIT_AS: limits.memory_mb * 1024 * 1024,
        resource.RLIMIT_FSIZE: limits.file_size_mb * 1024 * 1024,
        resource.RLIMIT_NOFILE: limits.open_files,
        resource.RLIMIT_CORE: 0,
    }
    if chosen in ROOT_LEVELS:  # counted per user, so only meaningful for the worker's own uid
        caps[resource.RLIMIT_NPROC] = limits.processes
    return caps


def confine(plan: Plan) -> Callable[[], None]:
    """The function that runs in the child between fork and exec: it becomes the keeper and
    forks the worker, which is confined and returns to exec the worker's Python."""
    root = private_root() if plan.level == "isolated" else ""

    def in_child() -> None:
        _libc.personality(ADDR_NO_RANDOMIZE)  # the same object addresses on every run
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # every orphan of the worker comes to the keeper
        if plan.level == "isolated":
            _check(_libc.unshare(CLONE_NEWPID), "unshare")
        alive_read, alive_write = os.pipe()  # the worker's way to know that its keeper lives
        worker = os.fork()
        if worker:
            os.close(alive_read)
            _keep(plan, worker, alive_write)
        os.close(alive_write)
        _become_worker(plan, alive_read, root)

    return in_child


def _become_worker(plan: Plan, alive: int, root: str) -> None:
    if plan.level == "isolated":
        _isolate(plan, root)
    else:
        os.chdir(plan.home)
    for kind, value in plan.rlimits.items():
        # A soft CPU limit below the hard one: SIGXCPU first (the worker is told why), then SIGKILL.
        resource.setrlimit(kind, (value, value + 1) if kind == resource.RLIMIT_CPU else (value, value))
    if plan.uid is not None:
        _become(plan.uid)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid change, which clears it
    if select.select([alive], [], [], 0)[0]:  # the keeper died before PDEATHSIG was set
        os._exit(1)
    os.close(alive)


def _isolate(plan: Plan, root: str) -> None:
    """In the worker: a private file system with only Python and its own folder in it."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    binds = [(path, path, True) for path in python_paths()]
    binds += [(f"/dev/{name}", f"/dev/{name}", False) for name in ("null", "zero", "urandom")]
    for source, target, read_only in binds:
        inside = root + target
        if os.path.isdir(source):
            os.makedirs(inside, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            open(inside, "a").close()
        _mount(source, inside, None, MS_BIND | MS_REC)
        if read_only:
            _mount(None, inside, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
    home = root + INSIDE
    os.makedirs(home)
    _mount("tmpfs", home, "tmpfs", MS_NOSUID | MS_NODEV,
           f"mode=0700,uid={plan.uid},gid={plan.uid},size={plan.scratch_mb}m")
    for name, data in plan.files.items():
        path = os.path.join(home, f"{name}.py")
        with open(path, "wb") as file:
            file.write(data)
        os.chown(path, plan.uid, plan.uid)
    os.chroot(root)
    os.chdir(INSIDE)


def _keep(plan: Plan, worker: int, alive: int) -> None:
    """The keeper: wait for the worker to end, or for the grader to ask (or die), then leave
    nothing of it alive and report the worker's wait status. Never returns; whatever goes
    wrong on the way, the cleaning is still done."""
    status = None
    try:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        with contextlib.suppress(OSError):  # a grader already gone still gets its worker killed
            os.write(plan.channel, f"worker {worker}\n".encode())
        null = os.open(os.devnull, os.O_RDWR)
        for standard in (0, 1, 2):
            os.dup2(null, standard)
        # Let go of the grader's descriptors (the pipes Popen waits on among them).
        keep = sorted({plan.channel, alive})
        os.closerange(3, keep[0])
        os.closerange(keep[0] + 1, keep[1])
        os.closerange(keep[1] + 1, 1 << 20)
        # Into its cgroups while it starts Python (moving a process takes milliseconds in cgroup
        # v1); the grader sends it no submission code before this is done.
        for group in plan.cgroups:
            with open(os.path.join(group, "cgroup.procs"), "w") as procs:
                procs.write(f"{worker}\n")
        with contextlib.suppress(OSError):
            os.write(plan.channel, b"placed\n")
        status = _wait_or_stop(plan.channel, worker)
    except BaseException:  # noqa: BLE001 - the keeper must never return into Popen's child
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
            _release_if_orphaned(plan.lock)
    finally:
        os._exit(0)


def _leave_nothing(plan: Plan) -> None:
    """In the keeper, once the worker is dead or killed: kill and reap everything it started,
    then remove its cgroups, its folder and what its uid left in shared folders."""
    if plan.level == "unprivileged":
        _kill_identity(plan.uid)
    elif plan.level == "limits":
        _kill_children()
    while True:  # every orphan of the worker was handed to the keeper: reap until none is left
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    for group in plan.cgroups:
        with contextlib.suppress(OSError):
            os.rmdir(group)
    if plan.home and plan.level != "isolated":
        shutil.rmtree(plan.home, ignore_errors=True)
    if plan.level == "unprivileged":
        sweep(plan.uid)


def _release_if_orphaned(path: str) -> None:
    """Remove the identity's lock once its dead grader's hold on it is gone (its files close one
    by one as it exits), now that nothing of the identity is left."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        for _ in range(200):
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.01)
        else:
            return  # still held: by a grader that lives after all, which removes it itself
        if os.fstat(descriptor).st_ino == os.stat(path, follow_symlinks=False).st_ino:
            os.unlink(path)
    except OSError:
        pass
    finally:
        os.close(descriptor)


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


def _kill_identity(uid: int) -> None:
    """Kill every process of `uid` at once: kill(-1) sent from that uid reaches them all, and a
    process that is being signalled cannot fork."""
    if os.fork() == 0:
        try:
            _become(uid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)


def _kill_children() -> None:
    """Without an identity of its own: kill the keeper's children until it has none (each
    orphan of a killed child becomes the keeper's child in turn)."""
    children = f"/proc/self/task/{os.getpid()}/children"
    while True:
        try:
            pids = [int(p) for p in Path(children).read_text().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, 0)


class Channel:
    """The grader's end of a keeper's channel: the worker's pid comes first, and its wait status
    once nothing of it is left; shutting our side down asks the keeper to stop the worker."""

    def __init__(self) -> None:
        self.mine, self.keepers = socket.socketpair()
        self.buffer = b""

    def started(self) -> None:
        """The keeper has its end (after the fork): close ours of it."""
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

    def worker_pid(self, timeout: float) -> int:
        line = self._line(b"worker ", timeout)
        if line is None:
            raise SandboxError("the worker's keeper did not start")
        return int(line)

    def placed(self, timeout: float) -> None:
        """Wait until the keeper has put the worker into its cgroups."""
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
