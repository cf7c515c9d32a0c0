"""The kernel calls the sandbox makes that Python's `os` module lacks, through libc.

Each function raises OSError (with the call's errno) when the kernel refuses.
"""

from __future__ import annotations

import ctypes
import os

ADDR_NO_RANDOMIZE = 0x0040000
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38
IPC_RMID = 0

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    """`result`, or OSError when it is -1 (each call here returns -1 on failure)."""
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """mount(2); `source`, `fstype` and `data` may be None."""
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), "mount")


def unshare(flags: int) -> None:
    """unshare(2): new namespaces of the kinds in `flags` (CLONE_NEW*)."""
    _check(_libc.unshare(flags), "unshare")


def prctl(option: int, value: int) -> None:
    """prctl(2) with one argument."""
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), "prctl")


def turn_randomisation_off() -> bool:
    """No address-space randomisation from the next exec on: the same addresses on every run.
    False where the kernel refuses (a container's seccomp filter may): then there is some."""
    return _libc.personality(ctypes.c_ulong(ADDR_NO_RANDOMIZE)) != -1


def remove_ipc(kind: str, identifier: int) -> None:
    """Remove one System V IPC object: `kind` is shm, sem or msg; a failure is ignored (gone)."""
    if kind == "shm":
        _libc.shmctl(identifier, IPC_RMID, None)
    elif kind == "sem":
        _libc.semctl(identifier, 0, IPC_RMID)
    else:
        _libc.msgctl(identifier, IPC_RMID, None)
