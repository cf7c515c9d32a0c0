"""What /proc and the shared folders say of a worker's processes and leftovers, and their removal.

The scans read /proc only (no process is signalled that is not pinned by a pidfd and checked
to be a child of the right parent), and none raises: a process that ends during a scan is
simply not found. Removal (`remove_tree`) never raises either, and never recurses: a tree a
worker left thousands of folders deep (which makes `shutil.rmtree` raise RecursionError) is
flattened into its top folder a level at a time, through descriptors, never following a link.
"""

from __future__ import annotations

import contextlib
import itertools
import os
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


def sweep(uid: int) -> list[str]:
    """Remove what `uid` left in the folders any account may write to, and its System V IPC;
    what could not be removed, named."""
    left: list[str] = []
    for top in WORLD_WRITABLE:
        _sweep_folder(top, uid, SWEEP_DEPTH, left)
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
    return left


def _sweep_folder(folder: str, uid: int, depth: int, left: list[str]) -> None:
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
            if not remove_tree(entry.path):
                left.append(entry.path)
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o003 == 0o003 and depth > 0:
            _sweep_folder(entry.path, uid, depth - 1, left)  # another world-writable folder


FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | os.PathLike) -> bool:
    """Remove `path` and everything beneath it (a file, a link, or a folder of any depth); True
    when nothing is left there. Never raises, never follows a link, never recurses."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            top = _open_folder(path, None)
            try:
                _empty(top)
            finally:
                os.close(top)
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError:
        pass
    return not os.path.lexists(path)


def _exists(name: str, folder: int) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _is_folder(name: str, folder: int) -> bool:
    return stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)


def _open_folder(name: str | os.PathLike, folder: int | None) -> int:
    """A descriptor of the folder `name` (in `folder`), opened to its owner first if its mode
    shuts them out (a worker's own folder of mode 0 or 500, where the grader is not root)."""
    try:
        opened = os.open(name, FOLDER_FLAGS, dir_fd=folder)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=folder)  # a folder: checked by the caller, and its owner is dead
        return os.open(name, FOLDER_FLAGS, dir_fd=folder)
    if os.fstat(opened).st_mode & 0o700 != 0o700:
        with contextlib.suppress(OSError):
            os.fchmod(opened, 0o700)  # what it holds can be removed only where its owner may write
    return opened


def _empty(top: int) -> None:
    """Remove everything in the folder `top`: files at once, empty folders at once, and the
    folders inside a folder moved up into `top` (a level less deep each time), until it is
    empty or nothing more can be removed. Two descriptors open at most; OSError skips an entry."""
    fresh = (name for name in (f".removed-{number}" for number in itertools.count())
             if not _exists(name, top))
    while names := os.listdir(top):
        progress = False
        for name in names:
            try:
                if not _is_folder(name, top):
                    os.unlink(name, dir_fd=top)
                    progress = True
                    continue
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=top)
                    progress = True
                    continue
                inner = _open_folder(name, top)
                try:
                    for deeper in os.listdir(inner):
                        if _is_folder(deeper, inner):
                            os.rename(deeper, next(fresh), src_dir_fd=inner, dst_dir_fd=top)
                        else:
                            os.unlink(deeper, dir_fd=inner)
                        progress = True
                finally:
                    os.close(inner)
            except OSError:
                continue
        if not progress:
            return
