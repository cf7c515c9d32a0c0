"""How fast `autograder bulk` grades a class, against grading its submissions one at a time.

Generates a class (by default 100 submissions: mostly correct, some with a one-line bug, a few
whose backward never returns), seals the reference, times a bulk run of one correct
submission, then times the bulk run of the whole class, and prints submissions per second
and the ratio of the class's time to 100 x the single submission's time.

    .venv/bin/python bench/bulk.py [--size 100] [--hanging 3] [--jobs N]

The target: 100 submissions in at most 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
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


def make_class(folder: Path, size: int, hanging: int) -> dict[str, str]:
    """Write the class; return what each submission is (correct, a bug, or hanging)."""
    kinds = {}
    for index in range(size):
        if index < hanging:
            kind, bug = "hanging", HANG
        elif index % 3 == 0:
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


def timed_bulk(klass: Path, out: Path, jobs: int) -> float:
    """Wall-clock seconds of one bulk run, its progress output dropped."""
    start = time.perf_counter()
    with open(os.devnull, "w") as quiet, contextlib.redirect_stderr(quiet):
        code = main(["bulk", str(klass), "-o", str(out), "--jobs", str(jobs)])
    if code != 0:
        raise SystemExit(f"bench/bulk.py: the bulk run of {klass} failed (status {code})")
    return time.perf_counter() - start


def seconds_by_source(out: Path) -> dict[str, float]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return dict(db.execute("SELECT source, seconds FROM submissions"))


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--hanging", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=bulk.cores())
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
    try:
        kinds = make_class(work / "class", args.size, args.hanging)
        out = work / "out"
        start = time.perf_counter()
        bulk.sealed_reference(out, bulk.grader_version())
        sealing = time.perf_counter() - start

        single_class = work / "single" / "class"
        correct = next(student for student, kind in kinds.items() if kind == "correct")
        shutil.copytree(work / "class" / correct, single_class / correct)
        single_out = work / "single" / "out"
        shutil.copytree(out / "reference", single_out / "reference")
        single = timed_bulk(single_class, single_out, 1)
        single_grading = seconds_by_source(single_out)[correct]

        whole = timed_bulk(work / "class", out, args.jobs)
        seconds = seconds_by_source(out)
        by_kind: dict[str, list[float]] = {}
        for source, kind in kinds.items():
            by_kind.setdefault(kind, []).append(seconds[source])

        print(f"class of {args.size} ({args.hanging} hanging in backward), {args.jobs} jobs, "
              f"{bulk.cores()} cores")
        print(f"sealing the reference (once per grader version): {sealing:.1f} s")
        print(f"one correct submission alone: {single:.1f} s for the bulk run, {single_grading:.1f} s of it "
              "grading (the rest: intake, reports)")
        print(f"the class: {whole:.1f} s, {args.size / whole:.2f} submissions/s; "
              f"{whole / (args.size * single):.2f} x {args.size} single bulk runs, "
              f"{whole / (args.size * single_grading):.2f} x {args.size} single gradings")
        for kind, times in sorted(by_kind.items()):
            print(f"  {kind:>16}: {len(times):3d} submissions, pytest median "
                  f"{statistics.median(times):.1f} s, total {sum(times):.0f} s")
        print(f"target: 100 submissions in at most 60 s on 2 cores; measured {whole:.0f} s for "
              f"{args.size} on {args.jobs} jobs")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main_bench()
