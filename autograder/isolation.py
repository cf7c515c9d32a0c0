"""Where this run's workers live: in the Linux sandbox, or as plain child processes.

The sandbox (`sandbox/`) needs Linux: `resource`, `fcntl`, `os.fork`, libc's `prctl` and `/proc`.
Where it cannot be had (Windows, macOS, or a Python that lacks those modules), the student's
own check runs its workers through `portable.py` instead: no security boundary, but the same
questions, limits of CPU time, messages and score. Official gradings (`--grading-secret`,
`autograder bulk`, Gradescope, nbgrader) refuse to run anywhere but in the sandbox.

Nothing here imports a Linux-only module unless the sandbox is used.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

PORTABLE = "portable"
NEEDED_MODULES = ("resource", "fcntl", "termios")  # the sandbox's, which only POSIX systems have
# The help of the option that chooses how workers are isolated (`pytest autograder`).
CHOOSE_HELP = ("isolate the workers less than this machine allows: unprivileged (or, not as root, "
               "limits), or portable: plain child processes, the only way on Windows and macOS, "
               "for your own check only; see docs/threat-model.md")
PORTABLE_LIMITS = ("the portable way limits each check's CPU time (a watchdog in the worker, and "
                   "a wall-clock deadline in the grader) and what it prints, and stops everything "
                   "a worker started; it does not limit memory, processes or file sizes, nor keep "
                   "a submission from reading or writing your files")

_portable_chosen = False


class IsolationError(Exception):
    """Workers cannot run as asked; the message names the option or the machine, and the fix."""


@cache  # asked before every worker starts; what the machine has does not change
def linux_sandbox() -> ModuleType | None:
    """The sandbox package, where this is Linux and its Python has what the sandbox uses; else None."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork") \
            or any(importlib.util.find_spec(name) is None for name in NEEDED_MODULES):
        return None
    from . import sandbox

    return sandbox


def portable() -> bool:
    """Do this run's workers run as plain child processes (portable.py)?"""
    return _portable_chosen or linux_sandbox() is None


def choose(name: str, where: str = "--sandbox-level") -> str:
    """Isolate this run's workers as `name` (a sandbox level, or `portable`), asked for by
    `where`; IsolationError, naming the fix, when it cannot be had."""
    global _portable_chosen
    if name == PORTABLE:
        _portable_chosen = True
        return name
    sandbox = linux_sandbox()
    if sandbox is None:
        raise IsolationError(f"{where} {name}: this machine has no Linux sandbox ({platform_name()}); "
                             f"give {PORTABLE}, or leave the option out")
    try:
        return sandbox.choose(name, where)
    except sandbox.SandboxError as error:
        raise IsolationError(str(error)) from None


def level() -> str:
    """`portable`, or the sandbox's level; IsolationError when submissions may not run here."""
    if portable():
        return PORTABLE
    sandbox = linux_sandbox()
    try:
        return sandbox.require()
    except sandbox.SandboxError as error:
        raise IsolationError(str(error)) from None


def warm() -> None:
    """Get the sandbox's zygote going while pytest collects (nothing to do for portable workers)."""
    if not portable():
        linux_sandbox().warm()


def exposed(folder: Path, what: str) -> str | None:
    """Why `folder` must not be used at this level, if it must not (sandbox.exposed)."""
    return None if portable() else linux_sandbox().exposed(folder, what)


def unofficial() -> str | None:
    """Why no official grading may be made here, or None: without the sandbox a submission can
    read the secret and reach the network; inside it, where the network stays open."""
    if portable():
        return (f"an official grading runs only in the Linux sandbox, and this run's workers are "
                f"plain child processes ({platform_name()}): {PORTABLE_LIMITS}. Grade on Linux "
                "(autograder bulk, Gradescope, or a Linux container)")
    return linux_sandbox().open_network()


def shared_writes() -> str | None:
    """Where a worker here may leave what a classmate's can read, if it may (sandbox.shared_writes)."""
    return None if portable() else linux_sandbox().shared_writes()


def platform_name() -> str:
    """This machine's system, as a message names it."""
    if not sys.platform.startswith("linux"):
        return {"win32": "Windows", "darwin": "macOS"}.get(sys.platform, sys.platform)
    return "Linux" if linux_sandbox() is not None else "a Python without what the Linux sandbox uses"
