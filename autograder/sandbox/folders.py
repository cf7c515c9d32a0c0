"""The grader's folders for worker state: one per machine, shared by every grader on it.

`state_folder()` holds the identity locks (`uids/`), the homes of workers that are not
isolated (`homes/`, each of mode 700 and owned by its worker's uid) and the mount point of the
isolated workers' private roots (`root/`). Each is owned by the grader's account and open to
no one else's writes; a folder found otherwise is refused with SandboxError.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from functools import cache
from pathlib import Path

from .errors import SandboxError


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
