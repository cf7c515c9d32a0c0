"""How long a worker takes to start, as a ratio to a bare fork of a process holding NumPy.

A worker start is measured from asking for one until it has answered its first request (the
import of a one-line file): identity, folder, cgroup, namespaces, limits, keeper, and the
worker's own boot, at the level this machine gives. Its stop (everything it started killed,
its identity cleared) is timed apart. The yardstick is `os.fork()` and `os.waitpid()` of a
child that exits at once, in a process that has imported NumPy.

    python bench/worker.py [--repeat 40]

Target: a worker start's median within 10 x the bare fork's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy  # noqa: F401 - the yardstick forks a process holding NumPy

from autograder import sandbox
from autograder.config import load
from autograder.worker import Worker


def bare_fork(repeat: int) -> float:
    """The median seconds of a fork and wait of this process (which holds NumPy)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def worker_cycles(folder: Path, repeat: int) -> tuple[float, float]:
    """The median seconds of starting a worker (to its first answer) and of stopping it."""
    limits = load().limits
    starts, stops = [], []
    for _ in range(repeat):
        worker = Worker(folder, limits)
        start = time.perf_counter()
        problem = worker.load("dual")
        started = time.perf_counter()
        worker.close()
        stops.append(time.perf_counter() - started)
        starts.append(started - start)
        if problem is not None:
            said = problem.failure or problem.raised
            raise SystemExit(f"bench/worker.py: the worker did not start: {said}")
    return statistics.median(starts), statistics.median(stops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "dual.py").write_text("x = 1\n", encoding="utf-8")
        level = sandbox.require()
        worker_cycles(folder, 2)  # warm: the level's probe, the first of everything
        fork = bare_fork(repeat)
        start, stop = worker_cycles(folder, repeat)
    print(f"sandbox level: {level}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"bare fork and wait of a process holding NumPy   {fork * 1000:7.2f} ms")
    print(f"worker start, to its first answer                {start * 1000:7.2f} ms   {start / fork:6.1f} x")
    print(f"worker stop, nothing of it left                  {stop * 1000:7.2f} ms   {stop / fork:6.1f} x")
    print(f"target: a start within 10 x the bare fork -> {'met' if start <= 10 * fork else 'NOT met'}")


if __name__ == "__main__":
    main()
