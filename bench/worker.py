"""How long a worker takes to start, as a ratio to a bare fork of a process holding NumPy.

A worker start is measured from asking for one until it has answered its first request (the
import of a one-line file): identity, cgroup, namespaces, limits, keeper, and the worker's own
boot, at the level this machine gives; its stop (everything it started killed, its identity
cleared) is timed apart. The yardstick is `os.fork()` and `os.waitpid()` of a child that exits
at once, in a process that has imported NumPy. Workers forked from the zygote and workers
exec'd afresh are timed in turns with the yardstick, so that the machine's load weighs on
each alike.

    python bench/worker.py [--repeat 40]

Targets: a forked worker's start, median, within 20 ms, and within 10 x the bare fork's (the
same start on a machine whose forks are slower, or busier, than the one the 20 ms was set on).
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

TARGET_MS = 20.0  # a forked worker's start, median


def bare_fork() -> float:
    """Seconds to fork this process (which holds NumPy) and wait for the child to exit."""
    start = time.perf_counter()
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    return time.perf_counter() - start


def worker_cycle(folder: Path, forked: bool) -> tuple[float, float]:
    """Seconds to start a worker (to its first answer), and to stop it."""
    worker = Worker(folder, load().limits, forked=forked)
    start = time.perf_counter()
    problem = worker.load("dual")
    started = time.perf_counter()
    worker.close()
    if problem is not None:
        said = problem.failure or problem.raised
        raise SystemExit(f"bench/worker.py: the worker did not start: {said}")
    return started - start, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    repeat = parser.parse_args().repeat
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "dual.py").write_text("x = 1\n", encoding="utf-8")
        level = sandbox.require()
        for forked in (True, False):  # warm: the zygote, the first of everything
            worker_cycle(folder, forked)
        for _ in range(repeat):
            times.setdefault("fork", []).append(bare_fork())
            for forked, kind in ((True, "forked"), (False, "exec'd")):
                start, stop = worker_cycle(folder, forked)
                times.setdefault(f"{kind} start", []).append(start)
                times.setdefault(f"{kind} stop", []).append(stop)
    medians = {name: statistics.median(values) for name, values in times.items()}
    fork = medians.pop("fork")
    print(f"sandbox level {level}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"medians of {repeat}")
    print(f"{'bare fork and wait of a process holding NumPy':<48} {fork * 1000:8.2f} ms")
    for name, seconds in medians.items():
        what = f"worker {name}" + (", to its first answer" if name.endswith("start") else "")
        print(f"{what:<48} {seconds * 1000:8.2f} ms  {seconds / fork:6.1f} x")
    start = medians["forked start"]
    for target, met in ((f"within {TARGET_MS:g} ms", start * 1000 <= TARGET_MS),
                        ("within 10 x the bare fork", start <= 10 * fork)):
        print(f"target: a forked worker's start {target} -> {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
