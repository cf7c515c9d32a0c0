"""The sandbox level: how far a worker is isolated here, settled once per process.

- `isolated` (root with CAP_SYS_ADMIN): new mount, PID, network, IPC and UTS namespaces; a
  private root file system holding only the Python installation, read-only, and the worker's
  folder, a size-limited tmpfs; a uid of its own.
- `unprivileged` (root without CAP_SYS_ADMIN, as a default container): a uid of its own, so its
  files, processes and folder are closed to every other worker; it writes beneath its folder
  alone, where the kernel has Landlock (`landlock.py`).
- `limits` (not root): resource limits, and its writes kept to its folder where the kernel has
  Landlock; the worker runs as the grader's own account.

`level()` is the strongest level that works on this machine, found by starting a worker that
does nothing, or `refused` when the grader is root and no unprivileged identity can run its
Python (submission code never runs as root). Nothing in the environment changes it. At every
level a worker's network, keyrings and IPC are closed where the machine allows it
(`network_closed`), by a seccomp filter; `open_network` says why they are not, where they are not. It may be
lowered only by name (`choose`, for the `--sandbox-level` option), and never to a level the
machine cannot give nor to `limits` as root; `shared_writes` says where a worker's writes are
not kept to its own folder; `autograder bulk` hands the level it found to its
grading processes on their command line (`adopt`).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from . import landlock, seccomp, spawn
from .confine import ROOT_LEVELS
from .errors import SandboxError

LEVELS = ("isolated", "unprivileged", "limits")
# The help of the option that chooses a level, in `pytest autograder` and `autograder bulk` alike.
CHOOSE_HELP = ("isolate the workers less than this machine allows: unprivileged (or, not as root, "
               "limits); see docs/threat-model.md")
PROBE = ["-I", "-c", "pass"]  # a worker that only starts the grader's Python
PROBE_SECONDS = 60.0

_level: str | None = None  # this process's level, once found, chosen or adopted


def level() -> str:
    """This process's level: one of LEVELS, or `refused` (see `refusal`)."""
    global _level
    if _level is None:
        _level = _strongest()
    return _level


def _strongest() -> str:
    if os.geteuid() != 0:
        return "limits"
    for candidate in ROOT_LEVELS:
        if _works(candidate):
            return candidate
    return "refused"


def _check_name(name: str, where: str) -> None:
    """SandboxError when `name` is no level, or one this account may not have."""
    if name not in LEVELS:
        raise SandboxError(f"{where} {name}: not a sandbox level; give one of {', '.join(LEVELS)}")
    root = os.geteuid() == 0
    if name == "limits" and root:
        raise SandboxError(f"{where} limits: the grader runs as root, and at the limits level the "
                           "submission would run as root too; submission code never runs as root. "
                           "Give unprivileged, or leave the option out")
    if name in ROOT_LEVELS and not root:
        raise SandboxError(f"{where} {name}: needs the grader to run as root; this account can have "
                           "only the limits level")


def choose(name: str, where: str = "--sandbox-level") -> str:
    """Set this process's level to `name`, asked for by `where` (an option a user gave): a level
    the machine gives (it is tried), never `limits` as root. SandboxError, naming `where` and
    the fix, otherwise."""
    global _level
    _check_name(name, where)
    if name in ROOT_LEVELS and not _works(name):
        strongest = level()
        if strongest == "refused":
            raise SandboxError(refusal())
        raise SandboxError(f"{where} {name}: this machine cannot give that level (it gives "
                           f"{strongest}); give {strongest}, a lower level, or leave the option out")
    _level = name
    return name


def adopt(name: str) -> None:
    """Take the level a bulk run settled for this machine (one of LEVELS, or `refused`), handed
    on its grading processes' command lines, which no submission and no environment variable
    can set; SandboxError when it is no level or one this account may not have."""
    global _level
    if name != "refused":
        _check_name(name, "the level handed over by autograder bulk:")
    _level = name


def network_closed() -> bool:
    """Can no worker here reach the network, or a keyring, IPC or another process? Only the
    seccomp filter of the calls it needs (`seccomp.py`) closes them all, at every level (a
    network namespace closes the network alone): where the machine has seccomp and libseccomp."""
    return seccomp.works()


def open_network() -> str | None:
    """Why a worker here can reach the network or what other processes share, when it can (None
    when it cannot): a grade made here may have been answered by a correct engine elsewhere, so
    it must not count."""
    if network_closed():
        return None
    reach = ("kernel keyrings and System V IPC, which other processes of the machine share (its "
             "network namespace closes only the network)" if level() == "isolated" else
             "the network, kernel keyrings and System V IPC")
    return (f"at the {level()} level of this machine a worker can reach {reach}: no seccomp filter "
            "can be installed here (a kernel without seccomp, no libseccomp.so.2 or no pyseccomp, "
            "an architecture libseccomp does not know, or a container whose own filter refuses "
            "one). A submission could send every question to a correct engine elsewhere and "
            "answer with what comes back, so no official grading is made here. Fix: grade where "
            "libseccomp is installed (Debian and Ubuntu ship libseccomp2; pip install pyseccomp), "
            "in a container that allows seccomp (Docker's default profile does); see "
            "docs/threat-model.md")


def shared_writes() -> str | None:
    """What a worker here may leave where a classmate's worker can read it, when it may (None
    when it writes beneath its own folder alone: a private root, or Landlock)."""
    if level() not in ("unprivileged", "limits") or landlock.abi():
        return None
    after = ("removed only when it ends" if level() == "unprivileged" else
             "never removed (it has your uid, so nothing tells its files from yours)")
    return (f"at the {level()} level of this machine a worker can write wherever any account may "
            "(/tmp, /var/tmp, /dev/shm, /run/lock): this kernel has no Landlock (Linux 5.13 and "
            "later, unless a container's own filter refuses it), so what it writes there a "
            f"classmate's worker graded at the same time can read, and it is {after}; see "
            "docs/threat-model.md")


def require() -> str:
    """The level, or SandboxError when submissions may not run here."""
    chosen = level()
    if chosen == "refused":
        raise SandboxError(refusal())
    return chosen


def _works(candidate: str) -> bool:
    """Can a worker start at this level here? (One short run of this Python, doing nothing.)"""
    try:
        process = spawn.start(candidate, [], 1, False, first=b"", forked=False,
                              program=[sys.executable, *PROBE], source=b"")
    except (OSError, SandboxError):
        return False
    try:
        return process.status(PROBE_SECONDS) == 0
    finally:
        process.stop()


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
