"""What a worker process may do: resource limits, no address randomisation, and as little as
the machine allows beyond that.

`confine` returns the function that runs in the child between fork and exec. How much it can
do depends on who runs the grader, so the strongest level that works here is chosen once:

- `isolated` (root with mount rights): new mount, network, IPC and UTS namespaces; a fresh
  root file system holding only the Python installation, read-only, and the worker's own
  folder as /submission; a user id of its own, unique to the worker, with no privileges.
- `unprivileged` (root without mount rights, as in many containers): the worker runs as
  `nobody`; it can read what `nobody` can read.
- `limits` (not root): resource limits only; the worker runs as the grader's own user.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import resource
import shutil
import signal
import site
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from .config import Limits

ADDR_NO_RANDOMIZE = 0x0040000
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
WORKER_UID_BASE = 200_000  # worker uid = base + its pid: unique while it runs, owns nothing else
INSIDE = "/submission"
LEVELS = ("isolated", "unprivileged", "limits")
LEVEL_VARIABLE = "AUTOGRADER_SANDBOX_LEVEL"

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       flags, data and data.encode()), f"mount {target}")


def python_paths() -> list[str]:
    """What the worker's Python needs to read: its installation and its site-packages."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
              "/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache"}
    return sorted(path for path in wanted if os.path.exists(path))


@cache
def empty_root() -> str:
    """An empty folder to mount each worker's private root on."""
    return tempfile.mkdtemp(prefix="autograder-root-")


def _isolate(home: Path, uid: int) -> None:
    """In the child: a private file system with only Python and the submission in it."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = empty_root()
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    binds = [(path, path, True) for path in python_paths()]
    binds += [(str(home), INSIDE, False)] + [(f"/dev/{name}", f"/dev/{name}", False)
                                             for name in ("null", "zero", "urandom")]
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
    os.chown(home, uid, uid)
    for path in home.iterdir():
        os.chown(path, uid, uid)
    os.chroot(root)
    os.chdir(INSIDE)


def _drop(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def _probe(level: str) -> bool:
    """Can a worker start at this level here? (One short run of this Python, doing nothing.)"""
    home = Path(tempfile.mkdtemp(prefix="autograder-probe-"))
    try:
        subprocess.run([sys.executable, "-I", "-c", "pass"], cwd=home, check=True,
                       capture_output=True, timeout=60, preexec_fn=_entry(level, home, None))
        return True
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        shutil.rmtree(home, ignore_errors=True)


@cache
def level() -> str:
    """The strongest isolation that works on this machine for this user (found once; a bulk
    run passes what it found to its pytest processes in LEVEL_VARIABLE)."""
    if os.environ.get(LEVEL_VARIABLE) in LEVELS:
        return os.environ[LEVEL_VARIABLE]
    if os.geteuid() != 0:
        return "limits"
    for candidate in ("isolated", "unprivileged"):
        if _probe(candidate):
            return candidate
    return "limits"


def _entry(chosen: str, home: Path, caps: dict | None) -> Callable[[], None]:
    nobody = pwd.getpwnam("nobody")

    def in_child() -> None:
        # One submission behaves the same on every run when object addresses do not move.
        _libc.personality(ADDR_NO_RANDOMIZE)
        if chosen == "isolated":
            uid = WORKER_UID_BASE + os.getpid()
            _isolate(home, uid)
        for kind, value in (caps or {}).items():
            resource.setrlimit(kind, (value, value))
        if chosen == "isolated":
            _drop(uid, uid)
        elif chosen == "unprivileged":
            _drop(nobody.pw_uid, nobody.pw_gid)

    return in_child


def reap(worker_pid: int) -> None:
    """Kill whatever an isolated worker left running, even outside its process group."""
    if level() != "isolated":
        return
    uid = str(WORKER_UID_BASE + worker_pid)
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue
        real_uid = next((line.split()[1] for line in lines if line.startswith("Uid:")), None)
        if real_uid == uid:
            with contextlib.suppress(OSError):
                os.kill(int(status.parent.name), signal.SIGKILL)


def confine(limits: Limits, home: Path) -> Callable[[], None]:
    """The function that limits and isolates a worker about to run in `home`."""
    chosen = level()
    caps = {
        resource.RLIMIT_CPU: limits.cpu_seconds,
        resource.RLIMIT_AS: limits.memory_mb * 1024 * 1024,
        resource.RLIMIT_FSIZE: limits.file_size_mb * 1024 * 1024,
        resource.RLIMIT_NOFILE: limits.open_files,
        resource.RLIMIT_CORE: 0,
    }
    if chosen != "limits":  # counted per user, so only meaningful for the worker's own account
        caps[resource.RLIMIT_NPROC] = limits.processes
    if chosen == "unprivileged":
        nobody = pwd.getpwnam("nobody")
        for path in [home, *home.iterdir()]:
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
    return _entry(chosen, home, caps)
