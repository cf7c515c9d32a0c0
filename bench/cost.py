"""What one official grading costs in CPU time, split by what spends it.

Grades a submission (by default the reference's own files) as `autograder bulk` does: in one
warm process, pytest run in it with the options of bulk's official gradings (questions of
their own each time: another `--grading-context` for every run; the reference at
`solutions/`, with its replicas). The first grading warms the process and is not
counted. Every run's CPU time is split into:

- pytest: the grading process's own time outside what follows (starting a session,
  collecting the suites, fixtures, reports, the score table);
- worker start: the grading process starting and stopping workers, and each worker's own CPU
  outside its requests (its boot, its imports before the first scenario);
- submission: its workers' CPU for their requests (imports and scenarios), and the grading
  process's time sending them and reading the replies;
- reference: everything that answers the reference's side (its worker, if it has one, and the
  grading process's time on its answers), its worker's start included;
- judge: comparing answers and making messages (a failed check's reruns count as submission).

Prints the median of each over the runs, and the reference's share of the whole. Target: the
reference at most 10 % of an official grading's CPU time. Then what a pytest session costs
before any test runs (its configuration and the collection of the suites: the same options
with --collect-only, in the same process), the part of "pytest" that a grading pays however
little it runs.

    python bench/cost.py [--repeat 10] [--submission FOLDER]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

from autograder import judge, runner, worker
from autograder.questions import make_secret
from autograder.runner import folder_digest
from autograder.staff import graders
from autograder.staff.official import Official

KIT = Path(__file__).resolve().parent.parent
PARTS = ("pytest", "worker start", "submission", "reference", "judge")


class Meter:
    """CPU seconds by part, the grading process's counted exclusively (the innermost part
    running is charged), the workers' as their clocks say."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.stack = [("pytest", "submission")]  # (part, whose side)
        self.mark = time.process_time()
        self.requests: dict[int, float] = defaultdict(float)  # a worker process's request CPU

    def charge(self) -> None:
        now = time.process_time()
        self.seconds[self.stack[-1][0]] += now - self.mark
        self.mark = now

    @contextlib.contextmanager
    def part(self, name: str, side: str | None = None):
        self.charge()
        self.stack.append((name, side or self.stack[-1][1]))
        try:
            yield
        finally:
            self.charge()
            self.stack.pop()

    def side(self) -> str:
        return self.stack[-1][1]


def instrument(meter: Meter) -> list[tuple[object, str, object]]:
    """Wrap the functions that mark a part's start and end; returns what to put back."""
    saved = []

    def wrap(owner: object, name: str, make) -> None:
        original = getattr(owner, name)
        saved.append((owner, name, original))
        setattr(owner, name, make(original))

    def as_part(part: str, side: str | None = None):
        def make(original):
            def wrapped(*args, **kwargs):
                with meter.part(part, side):
                    return original(*args, **kwargs)
            return wrapped
        return make

    def call(original):
        def wrapped(self, request, limit):
            side = meter.side()
            process_before = self.process
            with meter.part(side):
                reply = original(self, request, limit)
            process = self.process or process_before
            if process is not None:
                meter.requests[id(process)] += reply.seconds
            meter.seconds[side] += reply.seconds
            return reply
        return wrapped

    def stop(original):
        def wrapped(self):
            with meter.part("worker start"):
                if self.process is not None:
                    total = self.process.clock.seconds()
                    requests = meter.requests.pop(id(self.process), 0.0)
                    meter.seconds["worker start"] += max(0.0, total - requests)
                return original(self)
        return wrapped

    for reference in (runner.LiveReference, getattr(runner, "FastReference", runner.LiveReference)):
        wrap(reference, "answer", as_part("reference", "reference"))
        wrap(reference, "graphs", as_part("reference", "reference"))
    wrap(runner.LiveReference, "__init__", as_part("reference", "reference"))
    wrap(worker.Worker, "_call", call)
    wrap(worker.Worker, "_start", as_part("worker start"))
    wrap(worker.Worker, "stop", stop)
    wrap(judge, "judge", as_part("judge"))
    return saved


def grade_once(args: list[str]) -> dict[str, float]:
    meter = Meter()
    saved = instrument(meter)
    try:
        code = quietly(args)
        meter.charge()
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
    if code not in (0, 1):
        raise SystemExit(f"bench/cost.py: the grading ended with status {code}")
    return dict(meter.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--submission", type=Path, default=KIT / "solutions")
    args = parser.parse_args()
    runs: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as scratch:
        secret = Path(scratch) / "grading.secret"
        make_secret(secret)
        official = Official(secret, KIT / "solutions", folder_digest(KIT / "solutions"))
        for index in range(args.repeat + 1):  # each with questions of its own, as bulk asks them
            options = graders.pytest_args(f"--submission={args.submission}",
                                          *official.options(f"bench {index}"), "--tb=line")
            seconds = grade_once(options)
            if index == 0:
                continue  # the first grading warms the process, as a grading process's first does
            for part in PARTS:
                runs[part].append(seconds.get(part, 0.0))
            runs["total"].append(sum(seconds.get(part, 0.0) for part in PARTS))
            runs["share"].append(seconds.get("reference", 0.0) / runs["total"][-1])
        collecting = [session_seconds([*options, "--collect-only"]) for _ in range(args.repeat)]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; an official grading of "
          f"{args.submission}, CPU seconds, median of {args.repeat}:")
    for part in (*PARTS, "total"):
        print(f"  {part:<14} {statistics.median(runs[part]):7.3f} s")
    share = statistics.median(runs["share"])
    met = "met" if share <= 0.10 else "NOT met"
    print(f"the reference's share: {share:.1%}; target at most 10 % -> {met}")
    print(f"a session that collects the suites and runs no test: {statistics.median(collecting):.3f} s")


def session_seconds(args: list[str]) -> float:
    """The CPU seconds of one pytest session in this process."""
    start = time.process_time()
    quietly(args)
    return time.process_time() - start


def quietly(args: list[str]) -> int:
    """pytest in this process, its output dropped; its exit status."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return int(pytest.main(args))


if __name__ == "__main__":
    main()
