"""The machine shared by the processes that run the kit's tests in parallel (pytest-xdist).

Most tests may run beside another. A test marked `alone` needs the machine to itself: it reads
what the whole machine holds (every worker's cgroup, say), where another test's graders would
show. `held(folder, alone)` is a readers-writer lock over one folder that every process of a
run shares: a test takes it shared, a test marked `alone` takes it exclusive, from its first
fixture to its last teardown.

A turnstile keeps the lock fair: a test that waits for the machine alone is not passed by the
tests that start after it, so it waits at most for the tests running when it asked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def _flock(path: Path, kind: int) -> Iterator[None]:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, kind)
        yield
    finally:
        os.close(descriptor)  # closing the file lets the lock go


@contextlib.contextmanager
def held(folder: Path | None, alone: bool) -> Iterator[None]:
    """The machine for one test: shared, or exclusive when `alone`; no lock at all when the run
    has a single process (`folder` is None)."""
    if folder is None:
        yield
        return
    turnstile, machine = folder / "turnstile.lock", folder / "machine.lock"
    with contextlib.ExitStack() as stack:
        with _flock(turnstile, fcntl.LOCK_EX):
            stack.enter_context(_flock(machine, fcntl.LOCK_EX if alone else fcntl.LOCK_SH))
        yield
