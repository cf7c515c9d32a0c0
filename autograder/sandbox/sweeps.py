"""What /proc and the shared folders say of a worker's processes and leftovers, and their removal.

The scans read /proc only (no process is signalled that is not pinned by a pidfd and checked
to be a child of the right parent), and none raises: a process that ends during a scan is
simply not found.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

from . import system

# Folders that any account may write to: what a worker's identity left there is removed.
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock")
SWEEP_DEPTH = 6


def children(pid: int, threads: bool = True) -> list[int]:
    """The children of every thread of `pid` (of its main thread only when not `threads`)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task") if threads else [str(pid)]
    except OSError:
        return []
    found = []
    for task in tasks:
        with contextlib.suppress(OSError):
            found += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def parent_if_running(pid: int) -> int | None:
    """The parent of `pid`; None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stats:
            state, parent = stats.read().rsplit(b")", 1)[1].split()[:2]
    except (OSError, ValueError):
        return None
    return None if state in (b"Z", b"X") else int(parent)


def kill_child(pid: int, parents: tuple[int, ...]) -> None:
    """SIGKILL `pid` if it is still a child of one of `parents`, through a pidfd, so that a pid
    the system gave to another process meanwhile is never hit."""
    try:
        pinned = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if parent_if_running(pid) in parents:
            signal.pidfd_send_signal(pinned, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pinned)


def processes_of(uid: int, but: int = 0) -> Iterator[str]:
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


def kill_children() -> None:
    """Kill this process's children until it has none (each orphan of a killed child becomes
    this process's child in turn, where it is a subreaper), reaping them on the way."""
    listing = f"/proc/self/task/{os.getpid()}/children"
    while True:
        try:
            pids = [int(p) for p in Path(listing).read_text().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, 0)


def sweep(uid: int) -> None:
    """Remove what `uid` left in the folders any account may write to, and its System V IPC."""
    for top in WORLD_WRITABLE:
        _sweep_folder(top, uid, SWEEP_DEPTH)
    for kind in ("shm", "sem", "msg"):
        try:
            header, *rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        names = header.split()
        for row in rows:
            entry = dict(zip(names, row.split()))
            if str(uid) in (entry.get("uid"), entry.get("cuid")):
                system.remove_ipc(kind, int(entry.get("shmid") or entry.get("semid") or entry.get("msqid")))


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
