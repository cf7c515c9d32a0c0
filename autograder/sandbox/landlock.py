"""Where a worker with no private view of the files may write: beneath its own folder alone.

At the unprivileged and the limits level a worker sees the machine's file system, and could
write wherever any account may (`/tmp`, `/var/tmp`, `/dev/shm`, `/run/lock`, ...): a classmate's
worker graded at the same time could read it there, and at the limits level (no uid of its own
to sweep) it would outlive the worker. Landlock (Linux 5.13 and later) lets a process give up
rights for good with no privilege: `restrict`, in the worker after its uid change and before
its seccomp filter, leaves it the right to make, write, truncate, rename or remove files only
beneath its own folder (which goes with it), and to write to /dev/null; reading is untouched.
Its domain holds for everything it starts or execs. `abi()` says, once per process, which
Landlock this kernel has (0: none, or a container's own filter refuses it).
"""

from __future__ import annotations

import ctypes
import os
from functools import cache

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
WRITE_FILE, TRUNCATE = 1 << 1, 1 << 14
# Every right that changes the file system (ABI 1), then REFER (moving a file between folders,
# ABI 2) and TRUNCATE (ABI 3): what a worker keeps beneath its folder alone.
CHANGES = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
REFER = 1 << 13
WRITABLE_FILES = ("/dev/null",)  # what the standard library opens for writing (subprocess.DEVNULL)


class _Ruleset(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)


@cache
def abi() -> int:
    """The version of Landlock this kernel gives this process; 0 where it has none."""
    version = _libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(version, 0)


def handled(version: int) -> int:
    """The rights a worker gives up outside its folder, with Landlock of `version`."""
    return CHANGES | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)


def restrict(folder: str, version: int) -> None:
    """From now on, this process and all it starts change the file system beneath `folder`
    alone (and write to /dev/null). OSError when the kernel refuses."""
    rights = handled(version)
    attributes = _Ruleset(rights)
    ruleset = _check(_libc.syscall(CREATE_RULESET, ctypes.byref(attributes), ctypes.c_size_t(8),
                                   ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        _allow(ruleset, folder, rights)
        for path in WRITABLE_FILES:
            _allow(ruleset, path, rights & (WRITE_FILE | TRUNCATE))
        _check(_libc.syscall(RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    opened = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(rights, opened)
        _check(_libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)),
               f"landlock_add_rule {path}")
    finally:
        os.close(opened)


def _check(result: int, what: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result
