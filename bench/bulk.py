"""How fast `autograder bulk` grades a class, and what the hangs and the memory cost.

Generates classes (by default of 100 and of 1,000 submissions: two in three correct, one in
three with a one-line bug, and 3 in every 100 whose backward() never returns, spread through
the class as they would be: a hang graded first would count as its own the warm-up of its
grading process, which the first submissions each process grades pay), seals the
reference once, times a bulk run of one correct submission, then the bulk run of each class,
and prints submissions a second, the share of the grading time the hanging submissions
took, and the peak memory of the whole run (bulk and every process it started), sampled:
resident (as the targets count it) and proportional (shared pages, such as a worker's and its
zygote's, counted once). The yardstick of a class of 100 is 100 bare starts of Python that
import NumPy and pytest, as many at a time as bulk has jobs, timed right after it: what any
grader that starts a process per submission pays before it grades anything.

    .venv/bin/python bench/bulk.py [--sizes 100,1000] [--hanging-per-100 3] [--jobs N] [--correct-only]

`--correct-only` grades classes of correct submissions alone (no bug, no hang): what the ratio
comes to when no submission fails a check, the least any class can cost.

Targets, on 2 cores: 100 submissions in at most 1.6 x the time of 100 bare starts; 1,000 in
under 3 minutes with peak memory under 1 GB; a hanging submission in at most 1.5 s.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.staff import bulk
from autograder.staff.cli import main

KIT = Path(__file__).resolve().parent.parent
SOLUTIONS = {name: (KIT / "solutions" / f"{name}.py").read_text(encoding="utf-8")
             for name in ("value", "tensor", "dual")}
# One-line bugs: (file, the reference's line, the bug).
BUGS = [
    ("value", "            self.grad += other.data * out.grad\n",
     "            self.grad = other.data * out.grad\n"),
    ("value", "            self.grad += (1.0 - t * t) * out.grad\n",
     "            self.grad += (1.0 - self.data**2) * out.grad\n"),
    ("value", "            self.grad += (self.data > 0) * out.grad\n",
     "            self.grad += (self.data < 0) * out.grad\n"),
    ("value", "                stack.extend(node._prev)\n", "                break\n"),
    ("dual", "self.der * other.val + self.val * other.der", "self.der * other.der"),
]
HANG = ("value", "        self.grad = 1.0\n", "        while True:\n            pass\n")


def variant(bug: tuple[str, str, str] | None) -> dict[str, str]:
    files = dict(SOLUTIONS)
    if bug:
        name, old, new = bug
        if files[name].count(old) != 1:
            raise SystemExit(f"bench/bulk.py: solutions/{name}.py no longer holds {old.strip()!r} once; "
                             "update BUGS to a line it has")
        files[name] = files[name].replace(old, new)
    return files


def make_class(folder: Path, size: int, hanging: int, bugs: bool = True) -> dict[str, str]:
    """Write the class; return what each submission is (correct, a bug, or hanging). One in
    three has a bug unless `bugs` is False; the hanging ones take the places of bugs, evenly
    spaced: 15, 48, 81 in a class of 100."""
    places = range(0, size, 3)  # the bugs'
    step = len(places) // hanging if hanging else 1
    hangs = set(places[step // 2::step][:hanging])
    kinds = {}
    for index in range(size):
        if index in hangs:
            kind, bug = "hanging", HANG
        elif bugs and index % 3 == 0:
            bug = BUGS[(index // 3) % len(BUGS)]
            kind = f"bug in {bug[0]}.py"
        else:
            kind, bug = "correct", None
        student = folder / f"student{index:03d}"
        student.mkdir(parents=True)
        for name, text in variant(bug).items():
            (student / f"{name}.py").write_text(text, encoding="utf-8")
        kinds[student.name] = kind
    return kinds


def tree_memory(root: int) -> tuple[int, int]:
    """The memory, in bytes, of a process and all its descendants: resident (a page shared by
    several counted in each) and proportional (a shared page counted once, in shares)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except (OSError, ValueError):
            continue
        pid = int(status.parent.name)
        children.setdefault(int(fields.get("PPid", "0").strip() or 0), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
    resident = proportional = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        resident += rss.get(pid, 0)
        proportional += pss(pid)
        todo += children.get(pid, [])
    return resident, proportional


def pss(pid: int) -> int:
    """A process's proportional set size in bytes (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class PeakMemory:
    """Samples the memory of this process's tree while a block runs; `.peak` (resident) and
    `.peak_pss` (proportional) in bytes."""

    def __enter__(self) -> PeakMemory:
        self.peak, self.peak_pss, self.running = 0, 0, True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()
        return self

    def sample(self) -> None:
        while self.running:
            resident, proportional = tree_memory(os.getpid())
            self.peak, self.peak_pss = max(self.peak, resident), max(self.peak_pss, proportional)
            time.sleep(0.2)

    def __exit__(self, *exc_info) -> None:
        self.running = False
        self.thread.join()


def timed_bulk(klass: Path, out: Path, jobs: int) -> tuple[float, PeakMemory]:
    """Wall-clock seconds and peak memory of one bulk run, its output kept aside in a log."""
    log = out.parent / f"{out.name}.log"
    start = time.perf_counter()
    with PeakMemory() as memory, open(log, "w", encoding="utf-8") as kept, \
            contextlib.redirect_stderr(kept), contextlib.redirect_stdout(kept):
        code = main(["bulk", str(klass), "-o", str(out), "--jobs", str(jobs)])
    if code != 0:
        said = "\n".join(log.read_text(encoding="utf-8").strip().splitlines()[-5:])
        raise SystemExit(f"bench/bulk.py: the bulk run of {klass} failed (status {code}):\n{said}")
    return time.perf_counter() - start, memory


def bare_starts(count: int, jobs: int) -> float:
    """Wall-clock seconds for `count` starts of Python that import NumPy and pytest, `jobs` at a time."""
    def start(_: int) -> None:
        subprocess.run([sys.executable, "-c", "import numpy, pytest"], check=True)

    begun = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(start, range(count)))
    return time.perf_counter() - begun


def seconds_by_source(out: Path) -> dict[str, float]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return dict(db.execute("SELECT source, seconds FROM submissions ORDER BY rowid"))  # as graded


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="class sizes, comma-separated")
    parser.add_argument("--hanging-per-100", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=bulk.cores())
    parser.add_argument("--correct-only", action="store_true",
                        help="classes of correct submissions alone (no bugs, no hangs)")
    args = parser.parse_args()
    if args.correct_only:
        args.hanging_per_100 = 0
    sizes = [int(size) for size in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
    try:
        reference = work / "reference-out"
        start = time.perf_counter()
        bulk.sealed_reference(reference, bulk.grader_version())
        sealing = time.perf_counter() - start
        print(f"{args.jobs} jobs on {bulk.cores()} cores, load average {os.getloadavg()[0]:.2f}; sealing "
              f"the reference (once per grader version): {sealing:.1f} s")

        single_class = work / "single" / "class"
        make_class(single_class, 2, 0)
        shutil.rmtree(single_class / "student000")  # a bug; student001 is correct
        single_out = work / "single" / "out"
        shutil.copytree(reference / "reference", single_out / "reference")
        single, _ = timed_bulk(single_class, single_out, 1)
        print(f"one correct submission alone: {single:.2f} s for the whole bulk run, "
              f"{seconds_by_source(single_out)['student001']:.2f} s of it grading")

        verdicts = []
        for size in sizes:
            hanging = size * args.hanging_per_100 // 100
            kinds = make_class(work / f"class-{size}", size, hanging, bugs=not args.correct_only)
            out = work / f"out-{size}"
            shutil.copytree(reference / "reference", out / "reference")
            whole, memory = timed_bulk(work / f"class-{size}", out, args.jobs)
            seconds = seconds_by_source(out)
            by_kind: dict[str, list[float]] = {}
            for source, kind in kinds.items():
                by_kind.setdefault(kind, []).append(seconds[source])
            hangs = sum(by_kind.get("hanging", []))
            first = list(seconds.values())[:args.jobs]  # in the order graded
            shape = "correct submissions only" if args.correct_only else f"{hanging} hanging in backward"
            print(f"\nclass of {size} ({shape}): {whole:.1f} s, "
                  f"{size / whole:.2f} submissions/s, peak memory {memory.peak / 2**20:.0f} MB resident "
                  f"({memory.peak_pss / 2**20:.0f} MB proportional); the hanging "
                  f"submissions took {hangs / sum(seconds.values()):.0%} of the grading time")
            for kind, times in sorted(by_kind.items()):
                print(f"  {kind:>16}: {len(times):4d} submissions, median {statistics.median(times):.2f} s, "
                      f"total {sum(times):.0f} s")
            print(f"  the first {len(first)} graded, which warm their grading processes: "
                  + ", ".join(f"{value:.2f} s" for value in first))
            if size == 100:
                bare = bare_starts(size, args.jobs)
                print(f"  {size} bare starts of Python with NumPy and pytest, {args.jobs} at a time: "
                      f"{bare:.1f} s; the class took {whole / bare:.2f} x as long (load average "
                      f"{os.getloadavg()[0]:.2f})")
                verdicts.append(("a class of 100 in at most 1.6 x 100 bare starts", whole <= 1.6 * bare))
            if size == 1000:
                verdicts.append(("a class of 1,000 in under 180 s and 1 GB",
                                 whole < 180 and memory.peak < 2**30))
            if by_kind.get("hanging"):
                verdicts.append((f"a hanging submission in at most 1.5 s (class of {size})",
                                 statistics.median(by_kind["hanging"]) <= 1.5))
        print(f"\nload average {os.getloadavg()[0]:.2f}; targets on 2 cores:")
        for target, met in verdicts:
            print(f"  {target} -> {'met' if met else 'NOT met'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main_bench()
