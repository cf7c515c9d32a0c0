"""What a worker process may do, and the trusted processes that hold it to that.

Every worker runs confined at this machine's level (`levels.py`): resource limits, no address
randomisation, a scrubbed environment, at the root levels a uid of its own from a pool
(`identities.py`) and a cgroup of its own where the machine has them (`cgroups.py`, with the
CPU clock the time limits are judged by), and when isolated its own namespaces and private
root (`confine.py`); at every level, where the machine has seccomp and libseccomp, a filter
that allows only the system calls a worker needs (`seccomp.py`: no socket but a pair of its
own, no keyring, no IPC). Each is started and kept by a keeper (`keeper.py`), which leaves nothing
of it alive when it ends (`sweeps.py` finds and removes what it left), and is forked from a
zygote that has imported what a worker needs (`zygote.py`) or exec'd afresh; `spawn.py` is the
grader's side of starting and stopping one. It needs Linux: where it cannot be had, the
student's own check runs plain child processes instead (`isolation.py`, `portable.py`).

The names below are what the rest of the kit uses.
"""

import os
import sys

from .cgroups import CpuClock, make_cgroups, own_wait
from .confine import INSIDE, ROOT_LEVELS, rlimits
from .errors import SandboxError
from .folders import left_behind, state_folder
from .identities import allocate, release, take, uid_pool
from .levels import (
    CHOOSE_HELP,
    LEVELS,
    adopt,
    choose,
    exposed,
    level,
    open_network,
    refusal,
    require,
    shared_writes,
)
from .spawn import Process, start, unread, warm, write
from .sweeps import WORLD_WRITABLE, processes_of

__all__ = ["CHOOSE_HELP", "INSIDE", "LEVELS", "ROOT_LEVELS", "WORLD_WRITABLE", "CpuClock", "Process",
           "SandboxError", "adopt", "allocate", "choose", "exposed", "left_behind", "level", "make_cgroups",
           "open_network", "own_wait", "processes_of", "refusal", "release", "require", "rlimits",
           "shared_writes", "start", "state_folder", "take", "uid_pool", "unread", "warm", "write"]

# A Python started as `../.venv/bin/python` from a folder of the kit has a path through that
# folder, which a worker's private root does not hold: every process the sandbox starts runs
# the same Python by its plain path.
sys.executable = os.path.normpath(sys.executable)
