"""What a worker process may do: resource limits, no address randomisation, no privileges.

`confine` returns the function that runs in the child between fork and exec.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import resource
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

from .config import Limits

ADDR_NO_RANDOMIZE = 0x0040000
_libc = ctypes.CDLL(None, use_errno=True)


@cache
def unprivileged_user() -> pwd.struct_passwd | None:
    """The account a worker runs as: `nobody` when the grader is root and `nobody` can start
    this Python; None otherwise (the worker then keeps the grader's own account)."""
    if os.geteuid() != 0:
        return None
    nobody = pwd.getpwnam("nobody")

    def become_nobody() -> None:
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    try:
        subprocess.run([sys.executable, "-I", "-c", "import numpy"], preexec_fn=become_nobody,
                       cwd="/", check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return nobody


def confine(limits: Limits, home: Path) -> Callable[[], None]:
    user = unprivileged_user()
    if user is not None:
        os.chown(home, user.pw_uid, user.pw_gid)
        for path in home.iterdir():
            os.chown(path, user.pw_uid, user.pw_gid)
    caps = {
        resource.RLIMIT_CPU: limits.cpu_seconds,
        resource.RLIMIT_AS: limits.memory_mb * 1024 * 1024,
        resource.RLIMIT_FSIZE: limits.file_size_mb * 1024 * 1024,
        resource.RLIMIT_NOFILE: limits.open_files,
        resource.RLIMIT_CORE: 0,
    }
    if user is not None:  # counted per user, so only meaningful for the worker's own account
        caps[resource.RLIMIT_NPROC] = limits.processes

    def in_child() -> None:
        # One submission behaves the same on every run when object addresses do not move.
        _libc.personality(ADDR_NO_RANDOMIZE)
        for kind, value in caps.items():
            resource.setrlimit(kind, (value, value))
        if user is not None:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    return in_child
