"""A CPU share and an exact CPU clock per worker: cgroup v1 `cpu` and `cpuacct`, where writable.

A worker with an identity gets a cgroup of its own in each hierarchy (named for its uid, under
the grader's own cgroup), so that sixty busy loops it starts get one worker's share of the CPU,
and `cpuacct.usage` counts the CPU time of everything it started. Where the hierarchies are
missing or read-only (a default container), there are none, and `CpuClock` falls back to the
worker's own process clock and, on demand, the CPU time of every process of its uid.
"""

from __future__ import annotations

import contextlib
import os
import time
from functools import cache
from pathlib import Path

from . import sweeps


@cache
def _parents() -> tuple[Path, ...]:
    """This process's own cgroup in the cpu and cpuacct hierarchies (v1), where this account may
    make cgroups under it; () where it may not."""
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
    """The cgroups of the worker of `uid`, one per hierarchy (made by `make_cgroups`); [] where
    there are none to make."""
    return [parent / f"autograder-worker-{uid}" for parent in _parents()]


def make_cgroups(uid: int) -> list[Path]:
    """Make (or take, if left over) the cgroups of the worker of `uid`; they are returned."""
    made = []
    for group in cgroups(uid):
        with contextlib.suppress(FileExistsError):
            group.mkdir()
        made.append(group)
    return made


def place(pid: int, groups: list[str]) -> None:
    """Move process `pid` into each of `groups` (OSError if one cannot take it)."""
    for group in groups:
        with open(os.path.join(group, "cgroup.procs"), "w") as procs:
            procs.write(f"{pid}\n")


def remove(groups: list[str] | list[Path]) -> None:
    """Remove the (empty) cgroups `groups`; one that is gone or still busy is left."""
    for group in groups:
        with contextlib.suppress(OSError):
            os.rmdir(group)


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
        return _run_delay(self.schedstat)

    def close(self) -> None:
        if self.usage is not None:
            os.close(self.usage)
            self.usage = None


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
