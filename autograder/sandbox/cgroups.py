"""A cgroup per worker, where the grader may make one: its CPU clock, its CPU share, its end.

Two kinds of host, found once per process (`found()`):

- cgroup v1, where this process (as root) may make cgroups in its own `cpu` and `cpuacct`
  hierarchies: a cgroup in each (named for the worker's uid), so that sixty busy loops it
  starts get one worker's share of the CPU, and `cpuacct.usage` counts the CPU time of
  everything it started.
- cgroup v2 (the unified hierarchy), where this account may make a cgroup under its own (as
  root, or where that cgroup was delegated to it): one cgroup, whose `cpu.stat` `usage_usec`
  counts the CPU time of everything the worker started; `cpu.max` (one CPU) and `pids.max`
  where the parent's `cgroup.subtree_control` enables `cpu` and `pids` (a parent that holds
  processes, as the grader's own cgroup does, may enable them only at the root); and when the
  worker ends, `cgroup.kill` (or, before Linux 5.14, `cgroup.freeze` and a SIGKILL to each of
  its processes) ends everything in it, wherever it moved in the process tree.

v1 is used where both are writable (on this kind of host it has the CPU controller). Where
neither is (a default container), there are none, and `CpuClock` falls back to the worker's own
process clock and, on demand, the CPU time of every process of its uid. What is mounted where
is the machine's, read from /proc/self/mountinfo and /proc/self/cgroup: no worker can change
it, nor can anything in the environment. A test makes the kit take the v2 path by hiding v1 in
a mount namespace of its own (a tmpfs on /sys/fs/cgroup, and the unified hierarchy mounted
there, as on a host with v2 only), or in its own process by replacing `found`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import sweeps

CPU_MAX = "100000 100000"  # cgroup v2: at most one CPU's time in every 100 ms
EMPTY_SECONDS = 10.0  # how long the end of a v2 cgroup's processes may take


@dataclass(frozen=True)
class Hierarchy:
    """Where this process makes its workers' cgroups: `version` 1 (a parent per hierarchy), 2
    (one parent, with whether its children may have cpu.max and pids.max), or 0 (none)."""

    version: int
    parents: tuple[Path, ...] = ()
    cpu_max: bool = False
    pids_max: bool = False


NONE = Hierarchy(0)


@cache
def found() -> Hierarchy:
    """This process's kind of cgroup for its workers (see the module's docstring)."""
    return _v1() or _v2() or NONE


def _own() -> dict[str, str]:
    """This process's cgroup in each hierarchy: by controller (v1), and "" for the unified one."""
    mine = {}
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(","):
                mine[name] = path
    return mine


def _makes(parent: Path) -> bool:
    """May this process make a cgroup under `parent`?"""
    probe = parent / f"autograder-probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def _v1() -> Hierarchy | None:
    """The cpu and cpuacct hierarchies (v1), where this process, as root, may make cgroups under
    its own cgroup in each."""
    if os.geteuid() != 0:
        return None
    mine = _own()
    parents = []
    for name in ("cpu", "cpuacct"):
        base = Path("/sys/fs/cgroup") / name
        if name not in mine or not (base / "tasks").exists():
            return None
        parent = (base / mine[name].lstrip("/")).resolve()
        if not _makes(parent):
            return None
        if parent not in parents:
            parents.append(parent)
    return Hierarchy(1, tuple(parents))


def _unescape(field: str) -> str:
    """A path as /proc/self/mountinfo writes it (space, tab, newline, backslash as octal)."""
    for octal, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(octal, char)
    return field


def _v2() -> Hierarchy | None:
    """The unified hierarchy (v2), where this process may make a cgroup under its own cgroup and
    that cgroup counts CPU time (cpu.stat)."""
    own = _own().get("")
    if own is None or not own.startswith("/"):
        return None
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    parent = None
    for line in mounts:
        fields, _, after = line.partition(" - ")
        fields = fields.split()
        if len(fields) < 5 or not after.startswith("cgroup2 "):
            continue
        root, point = _unescape(fields[3]), _unescape(fields[4])
        if own == root or own.startswith(root.rstrip("/") + "/"):
            candidate = Path(point) / own[len(root):].lstrip("/")
            if (candidate / "cgroup.procs").exists():
                parent = candidate
    if parent is None:
        return None
    probe = parent / f"autograder-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return None
    try:
        # A worker must be able to join it (a domain cgroup: not in a threaded subtree), and its
        # CPU time must be counted there.
        if (probe / "cgroup.type").read_text().strip() != "domain" or not (probe / "cpu.stat").exists():
            return None
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        cpu_max = "cpu" in enabled and _set(probe / "cpu.max", CPU_MAX)
        pids_max = "pids" in enabled and _set(probe / "pids.max", "max")
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()
    return Hierarchy(2, (parent,), cpu_max, pids_max)


def _set(path: Path, value: str) -> bool:
    """Write `value` into a cgroup's file; False when it cannot be written."""
    try:
        with open(path, "w") as file:
            file.write(value)
    except OSError:
        return False
    return True


_NUMBERS = itertools.count()  # names for the cgroups of workers with no uid of their own


def cgroups(uid: int | None) -> list[Path]:
    """The cgroups of the worker of `uid`, one per hierarchy (made by `make_cgroups`); [] where
    there are none to make. A worker with no uid of its own (not root: only v2, delegated) has
    one named for this process and a number."""
    name = (f"autograder-worker-{uid}" if uid is not None
            else f"autograder-worker-p{os.getpid()}-{next(_NUMBERS)}")
    return [parent / name for parent in found().parents]


def make_cgroups(uid: int | None, processes: int | None = None) -> list[Path]:
    """Make (or take, if left over) the cgroups of the worker of `uid`, with v2's limits (one
    CPU, `processes` tasks) where the machine allows them; they are returned."""
    hierarchy, made = found(), []
    for group in cgroups(uid):
        with contextlib.suppress(FileExistsError):
            group.mkdir()
        made.append(group)
        if hierarchy.version == 2:
            if hierarchy.cpu_max:
                _set(group / "cpu.max", CPU_MAX)
            if hierarchy.pids_max and processes is not None:
                _set(group / "pids.max", str(processes))
    return made


def place(pid: int, groups: list[str]) -> None:
    """Move process `pid` into each of `groups` (OSError if one cannot take it)."""
    for group in groups:
        with open(os.path.join(group, "cgroup.procs"), "w") as procs:
            procs.write(f"{pid}\n")


def unified(group: str | Path) -> bool:
    """Is `group` a cgroup of the unified hierarchy (v2)? (Only those have cgroup.events.)"""
    return os.path.exists(os.path.join(group, "cgroup.events"))


def kill(groups: list[str] | list[Path]) -> None:
    """End every process in the v2 cgroups among `groups` (wherever it moved in the process
    tree), and wait until none is left; v1 cgroups are left to the caller's own kill."""
    for group in map(str, groups):
        if not unified(group):
            continue
        if not _set(Path(group) / "cgroup.kill", "1"):  # before Linux 5.14: freeze, kill each, thaw
            frozen = _set(Path(group) / "cgroup.freeze", "1")
            for _ in range(1000):
                pids = _pids(group)
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.001)
            if frozen:
                _set(Path(group) / "cgroup.freeze", "0")
        _wait_empty(group)


def _pids(group: str) -> list[int]:
    try:
        return [int(pid) for pid in Path(group, "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _wait_empty(group: str) -> bool:
    """Wait until the v2 cgroup `group` holds no process (dead ones may take a moment to go)."""
    deadline = time.monotonic() + EMPTY_SECONDS
    while True:
        try:
            populated = b"populated 1" in Path(group, "cgroup.events").read_bytes()
        except OSError:
            return True  # gone
        if not populated:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


def remove(groups: list[str] | list[Path]) -> None:
    """Remove the (emptied) cgroups `groups`; one that is gone or still busy is left."""
    for group in groups:
        if unified(group):
            _wait_empty(str(group))
        with contextlib.suppress(OSError):
            os.rmdir(group)


class CpuClock:
    """The CPU time a worker has used, read by the trusted side: its cgroup's cpuacct.usage (v1)
    or cpu.stat usage_usec (v2), every process the worker started, where it has one, else its
    own process CPU clock, and on demand (`family`) the CPU time of every process of its uid."""

    def __init__(self, pid: int, keeper: int, groups: list[Path], uid: int | None) -> None:
        usage = next((g / "cpuacct.usage" for g in groups if (g / "cpuacct.usage").exists()), None)
        if usage is None:  # (v1's cpu controller has a cpu.stat too, of another kind)
            usage = next((g / "cpu.stat" for g in groups if unified(g)), None)
        self.unified = usage is not None and usage.name == "cpu.stat"
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
        return [pid for pid in sweeps.children(self.pid) + sweeps.children(self.keeper, threads=False)
                if pid != self.pid and sweeps.parent_if_running(pid) in (self.pid, self.keeper)]

    def kill_others(self) -> bool:
        """Kill every process the worker started, round after round (a process being killed
        cannot fork, and its children come up to the keeper); False when some still run."""
        for _ in range(50):
            left = self.others()
            if not left:
                return True
            for pid in left:
                sweeps.kill_child(pid, (self.pid, self.keeper))
            time.sleep(0.001)
        return not self.others()

    def family(self) -> float:
        """The CPU time of every live process of the worker's uid but the worker itself, so that
        one that makes its children do the work (or burn the machine) is charged for them."""
        if self.usage is not None:
            return 0.0
        total = 0
        for path in sweeps.processes_of(self.uid, self.pid) if self.uid is not None else ():
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
            if self.unified:  # "usage_usec N" comes first
                fields = os.pread(self.usage, 4096, 0).split()
                if fields[:1] == [b"usage_usec"]:
                    self.last = int(fields[1]) / 1e6
            elif self.usage is not None:
                self.last = int(os.pread(self.usage, 64, 0)) / 1e9
            else:
                self.last = time.clock_gettime(self.clock)
        except (OSError, ValueError, IndexError):
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
        return _run_delay(self.schedstat)

    def close(self) -> None:
        if self.usage is not None:
            os.close(self.usage)
            self.usage, self.unified = None, False


def own_wait() -> float | None:
    """Seconds this thread (the grader's) spent runnable but waiting for a CPU, None where the
    kernel does not say: while it waits, a worker that has answered waits for it."""
    return _run_delay("/proc/thread-self/schedstat")


def _run_delay(path: str) -> float | None:
    try:
        with open(path, "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None
