"""Windows and macOS, simulated on Linux, in every process the kit starts.

`python_for(kind, folder)` writes a `python` into `folder` that runs this machine's Python with
the platform's missing facilities taken away before any other code runs, and hands itself on
as `sys.executable`, so that every Python the kit starts from it (the student's pytest, its
workers, anything started with `-I -S`) is simulated too:

- windows: no `resource`, `fcntl`, `termios`, `pwd` or `grp`; no `os.fork`,
  `os.register_at_fork`, `os.killpg`, `os.setsid` or uid calls; no
  `signal.setitimer` nor SIGPROF; `select.select` on sockets only; no libc through
  `ctypes.CDLL(None)`; no `/proc`.
- macos: `sys.platform == "darwin"`; libc without Linux's calls (`prctl`, `personality`,
  `unshare`, `mount`, `setns`); no `/proc`.

Every attempt to import a module the platform lacks is written, with the file that asked for
it, to the log beside the `python` (`imports.log`), so a test can say which code reached for it.
What it cannot simulate: Windows' own code paths (`os.name == "nt"`: `taskkill`, its consoles
and code pages), and macOS's libc and scheduler themselves.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

KINDS = ("windows", "macos")
LOG = "imports.log"

# Run first in every simulated process, with KIND, SHIM and LOG set.
SIMULATION = r'''
import builtins, ctypes, io, os, select, signal, socket, subprocess, sys, threading, importlib.abc

_PROC = ("/proc", b"/proc")


def _is_proc(path):
    try:
        path = os.fspath(path)
    except TypeError:
        return False
    return isinstance(path, (str, bytes)) and path.rstrip("/" if isinstance(path, str) else b"/").startswith(
        _PROC[0] if isinstance(path, str) else _PROC[1])


def _no_proc(function):
    def refused(path=".", *args, **kwargs):
        if _is_proc(path):
            raise FileNotFoundError(2, "No such file or directory (simulated)", os.fsdecode(os.fspath(path)))
        return function(path, *args, **kwargs)
    return refused


for _module, _name in ((builtins, "open"), (io, "open"), (os, "open"), (os, "listdir"), (os, "scandir"),
                       (os, "stat"), (os, "lstat"), (os, "readlink"), (os, "access")):
    setattr(_module, _name, _no_proc(getattr(_module, _name)))

_LINUX_LIBC = {"prctl", "personality", "unshare", "mount", "umount2", "setns", "pivot_root"}
_CDLL = ctypes.CDLL


class _CDLLWithout(_CDLL):
    def __getattr__(self, name):
        if name in _LINUX_LIBC:
            raise AttributeError(f"symbol not found: {name} (simulated {KIND})")
        return super().__getattr__(name)

    def __getitem__(self, name):
        if name in _LINUX_LIBC:
            raise AttributeError(f"symbol not found: {name} (simulated {KIND})")
        return super().__getitem__(name)


def _cdll(name, *args, **kwargs):
    if name is None and KIND == "windows":
        raise TypeError("LoadLibrary() argument 1 must be str, not None (simulated windows)")
    return _CDLLWithout(name, *args, **kwargs)


ctypes.CDLL = _cdll
_MISSING = ({"resource", "fcntl", "termios", "pwd", "grp"} if KIND == "windows" else set())


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in _MISSING:
            return None
        frame, asker = sys._getframe(1), "?"
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith("<frozen") and "importlib" not in filename:
                asker = filename
                break
            frame = frame.f_back
        stack, frame = [], sys._getframe(1)
        while frame is not None:
            stack.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
            frame = frame.f_back
        with _open_log() as log:
            log.write(f"{name}\t{asker}\t{' < '.join(stack)}\n")
        raise ModuleNotFoundError(f"No module named {name!r} (simulated {KIND})", name=name)


def _open_log():
    return builtins.open(LOG, "a", encoding="utf-8")


for _name in _MISSING:
    sys.modules.pop(_name, None)
sys.meta_path.insert(0, _Refuse())

if KIND == "windows":
    # (os.waitpid and os.WNOHANG stay: this Linux's own subprocess module waits with them.)
    for _name in ("fork", "forkpty", "register_at_fork", "killpg", "setsid", "getpgid", "setpgid",
                  "geteuid", "getuid", "getegid", "getgid", "setresuid", "setresgid",
                  "setgroups", "getgroups", "sched_getaffinity"):
        if hasattr(os, _name):
            delattr(os, _name)
    for _name in ("setitimer", "getitimer", "ITIMER_PROF", "ITIMER_REAL", "ITIMER_VIRTUAL", "SIGPROF",
                  "SIGXCPU", "SIGALRM", "alarm", "pthread_kill"):
        if hasattr(signal, _name):
            delattr(signal, _name)
    for _name in ("poll", "epoll"):
        if hasattr(select, _name):
            delattr(select, _name)
    _select = select.select

    def _sockets_only(readers, writers, errors, *timeout):
        for item in (*readers, *writers, *errors):
            if not isinstance(item, socket.socket):
                raise OSError(10038, "An operation was attempted on something that is not a socket "
                                     "(simulated windows)")
        return _select(readers, writers, errors, *timeout)

    select.select = _sockets_only
else:
    sys.platform = "darwin"
sys.executable = SHIM
'''

# Runs as `python -I -S launcher.py KIND LOG SIMULATION_FILE REAL ARGS...`: starts REAL with the
# same options and the simulation put before the program.
LAUNCHER = r'''
import os, sys

kind, log, simulation, real, *args = sys.argv[1:]
shim = os.path.join(os.path.dirname(log), "python")
options, program, rest = [], None, []
i = 0
while i < len(args):
    arg = args[i]
    if arg in ("-c", "-m"):
        program, rest = (arg, args[i + 1]), args[i + 2:]
        break
    if arg in ("-X", "-W"):
        options += args[i:i + 2]
        i += 2
        continue
    if arg.startswith("-") and arg != "-":
        options.append(arg)
        i += 1
        continue
    program, rest = ("script", arg), args[i + 1:]
    break
if program is None:
    os.execv(real, [real, *options, *args[i:]])
prefix = (f"KIND, SHIM, LOG = {kind!r}, {shim!r}, {log!r}\n"
          f"exec(compile(open({simulation!r}).read(), {simulation!r}, 'exec'))\n")
how, what = program
if how == "-c":
    code = what
elif how == "-m":
    code = f"import runpy; runpy.run_module({what!r}, run_name='__main__', alter_sys=True)"
else:
    code = f"import sys, runpy; sys.argv[0] = {what!r}; runpy.run_path({what!r}, run_name='__main__')"
os.execv(real, [real, *options, "-c", prefix + code, *rest])
'''


def python_for(kind: str, folder: Path) -> Path:
    """A `python` in `folder` that simulates `kind` (one of KINDS) in itself and in every Python
    it starts; attempts to import what the platform lacks go to `folder / LOG`."""
    assert kind in KINDS
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "simulation.py").write_text(SIMULATION, encoding="utf-8")
    (folder / "launcher.py").write_text(LAUNCHER, encoding="utf-8")
    real = os.path.normpath(sys.executable)
    shim = folder / "python"
    shim.write_text(f'#!/bin/sh\nexec {real} -I -S {folder / "launcher.py"} {kind} {folder / LOG} '
                    f'{folder / "simulation.py"} {real} "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return shim


def attempts(folder: Path) -> list[tuple[str, str, str]]:
    """What the simulated processes tried to import that the platform lacks: (module, the file
    that asked, the stack)."""
    log = folder / LOG
    if not log.exists():
        return []
    return [tuple(line.split("\t", 2)) for line in log.read_text(encoding="utf-8").splitlines() if line]
