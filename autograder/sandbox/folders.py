"""The grader's folders for worker state: one per machine, shared by every grader on it.

`state_folder()` holds the identity locks (`uids/`), the homes of workers that are not
isolated (`homes/`, each of mode 700 and owned by its worker's uid), the mount point of the
isolated workers' private roots (`root/`), and the list of what a worker left that could not be
removed (`left`: each closed to every account, `set_aside`; named in the bulk run's summary,
`left_behind`; removed by the next grader that starts, `remove_left`). Each is owned by the
grader's account and open to no one else's writes; a folder found otherwise is refused with
SandboxError.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from functools import cache
from pathlib import Path

from .errors import SandboxError
from .sweeps import remove_tree


def owned_folder(path: Path, mode: int = 0o700) -> Path:
    """`path`, a folder of this account's alone with `mode` (made if missing), or SandboxError."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, mode)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise SandboxError(f"{path}: must be a folder that only uid {os.geteuid()} can write to "
                           f"(it is mode {stat.S_IMODE(info.st_mode):o}, owner {info.st_uid}); "
                           "remove it and grade again")
    if stat.S_IMODE(info.st_mode) != mode:
        os.chmod(path, mode)
    return path


@cache
def state_folder() -> Path:
    """/run/autograder where the system has a /run of root's, else /tmp/autograder-state: other
    accounts may pass through it (to their own homes), never list or change it."""
    run = Path("/run")
    if run.is_dir() and os.stat(run).st_uid == 0 and not os.stat(run).st_mode & 0o002:
        return owned_folder(run / "autograder", 0o711)
    return owned_folder(Path("/tmp") / "autograder-state", 0o711)


def new_home(uid: int | None) -> Path:
    """A fresh folder for a worker that is not isolated: its own (mode 700, owned by `uid`) under
    the state folder when it has an identity, else in the temporary folder."""
    if uid is None:
        return Path(tempfile.mkdtemp(prefix="autograder-worker-"))
    home = Path(tempfile.mkdtemp(prefix="worker-", dir=owned_folder(state_folder() / "homes", 0o711)))
    os.chown(home, uid, uid)
    return home


@cache
def private_root() -> str:
    """Where each isolated worker mounts its own root file system (in its own mount namespace,
    so that one folder serves every worker at once)."""
    return str(owned_folder(state_folder() / "root"))


def remove(path: str | os.PathLike) -> None:
    """Remove what a worker left at `path`; what cannot be removed is set aside. Never raises."""
    if not remove_tree(path):
        set_aside(path)


def set_aside(path: str | os.PathLike) -> None:
    """What a worker left and could not be removed: closed to every account (mode 0, this
    account's), and listed for the next grader's start. Never raises."""
    with contextlib.suppress(OSError):
        os.chown(path, os.geteuid(), os.getegid(), follow_symlinks=False)
        if not os.path.islink(path):
            os.chmod(path, 0)
    with contextlib.suppress(OSError, SandboxError), open(state_folder() / "left", "a") as listed:
        listed.write(f"{os.path.abspath(path)}\n")


def left_behind() -> list[str]:
    """What workers left that could not be removed and is listed for the next grader's start
    (`set_aside`), as the list stands now. Never raises."""
    try:
        listed = (state_folder() / "left").read_text()
    except (OSError, SandboxError):
        return []
    return list(dict.fromkeys(line for line in listed.splitlines() if line))


def remove_left() -> list[str]:
    """Remove what earlier workers left and could not be removed then (`set_aside`); what still
    cannot be removed, listed again and returned. Never raises."""
    try:
        paths = left_behind()
        (state_folder() / "left").unlink()
    except (OSError, SandboxError):
        return []
    still = [path for path in paths if not remove_tree(path)]
    for path in still:
        set_aside(path)
    return still
