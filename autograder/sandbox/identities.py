"""The identity pool: one uid (and the gid of the same number) per live worker, at the root levels.

The uids have no account and lie above the ranges that systemd and /etc/subuid hand out. One is
drawn at random, held under an exclusive lock in the state folder for as long as any process
of it may be alive, and never given again before everything of it is gone: a holder that died
leaves its lock file behind, and the next one to take that uid clears it first (`clear`).
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import os
import pwd
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from . import cgroups, folders, sweeps
from .errors import SandboxError
from .folders import owned_folder, state_folder

UID_POOL_START, UID_POOL_SIZE = 1_900_000_000, 65_536
# Run as root, it becomes `uid` and kills every process of it: a process of its own, so that
# the grader (which may have threads) never forks.
KILL_AS = """import os, sys
uid = int(sys.argv[1])
os.setgroups([])
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
try:
    os.kill(-1, 9)
except ProcessLookupError:
    pass
"""


@dataclass
class Identity:
    """A uid (and the gid of the same number) that only one worker has while it is held."""

    uid: int
    lock: int = field(repr=False)
    path: Path = field(repr=False)


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
    half of the largest mapped range (a container with remapped ids); SandboxError when too few."""
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


def _has_account(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


def allocate() -> Identity:
    """An identity no live worker of any grader on this machine has, with nothing of it left;
    SandboxError when every one is held."""
    folder = owned_folder(state_folder() / "uids")
    pool = uid_pool()
    start = secrets.randbelow(len(pool))
    for step in range(len(pool)):
        uid = pool[(start + step) % len(pool)]
        if not _has_account(uid) and (identity := take(folder, uid)):
            return identity
    raise SandboxError(f"all {len(pool)} worker identities are in use; stop some graders")


def take(folder: Path, uid: int) -> Identity | None:
    """The identity `uid` under an exclusive lock in `folder`, or None when another grader holds
    it (or something of it is still alive)."""
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
    """Give an identity back: for reuse when nothing of it is left (`cleared`), else marked for
    `clear` by its next holder."""
    if cleared:
        with contextlib.suppress(OSError):
            os.unlink(identity.path)
    os.close(identity.lock)


def release_if_orphaned(path: str) -> None:
    """Remove an identity's lock file once its dead holder's lock is gone (its files close one by
    one as it exits); for a keeper whose grader died, once nothing of the identity is left."""
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


def become(uid: int) -> None:
    """This process takes the identity `uid`: no supplementary groups, gid and uid `uid`."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def kill_identity(uid: int) -> None:
    """Kill every process of `uid` at once: kill(-1) sent from that uid reaches them all, and a
    process that is being signalled cannot fork. Forks: only for a process of one thread."""
    killer = os.fork()
    if killer == 0:
        try:
            become(uid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(killer, 0)


def clear(uid: int) -> bool:
    """Kill whatever of `uid` is left anywhere, remove what it left in shared folders and its
    cgroups; True when no process of it runs any more (a zombie runs nothing)."""
    subprocess.run([sys.executable, "-I", "-S", "-c", KILL_AS, str(uid)], cwd="/", env={},
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    deadline = time.monotonic() + 5
    while (left := any(True for _ in sweeps.processes_of(uid))) and time.monotonic() < deadline:
        time.sleep(0.01)
    for path in sweeps.sweep(uid):
        folders.set_aside(path)
    cgroups.remove(cgroups.cgroups(uid))
    return not left
