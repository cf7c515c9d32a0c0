"""Grading a hostile submission at each root level the grader meets, as the hostile tests do.

A hostile submission is the honest base (the reference with `__mul__` put back to its stub, so
there is a part to steal) plus a trick; it is graded with short limits, in a pytest process of
its own, at `isolated` (this machine as it is: root with CAP_SYS_ADMIN), `container` (what a
default container gives: root without CAP_SYS_ADMIN, no writable cgroups, the reference's folder
closed to other accounts), `closed` (the same with this Python closed to other accounts) or
`opened` (this machine, with this Python opened to every account).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder import sandbox

from . import KIT, by_name
from .autograding import autograde_folder

ROOT_WITH_NAMESPACES = sandbox.level() == "isolated"
TOOLS = all(shutil.which(tool) for tool in ("unshare", "setpriv", "sh"))
GRADING_SECONDS = 600
BULK = "import sys; from autograder.staff.cli import main; sys.exit(main(sys.argv[1:]))"

# Run as a default container would: cgroups hidden (Docker mounts them read-only), the
# reference's folder closed to other accounts, CAP_SYS_ADMIN gone, and (for `container`) every
# folder on the way to this Python opened to other accounts by a view of it of mode 711.
CONTAINER = r"""
set -e
mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup
mkdir "$WORK/solutions"
cp "$KIT"/solutions/*.py "$WORK/solutions"
mount -t tmpfs -o mode=0700 tmpfs "$KIT/solutions"
cp "$WORK"/solutions/*.py "$KIT/solutions"
OPEN
exec setpriv --bounding-set -sys_admin "$@"
"""


def closed_steps() -> list[tuple[str, set[str]]]:
    """The folders on the way to this Python that other accounts may not enter, deepest first,
    each with the names below it that lead there."""
    found: dict[str, set[str]] = {}
    for path in (Path(os.path.abspath(sys.executable)), Path(os.path.realpath(sys.executable))):
        for folder in path.parents:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                found.setdefault(str(folder), set()).add(path.relative_to(folder).parts[0])
    return sorted(found.items(), key=lambda item: -len(Path(item[0]).parts))


def opening(work: Path) -> str:
    lines = []
    for index, (folder, steps) in enumerate(closed_steps()):
        view = work / f"open{index}"
        lines.append(f"mkdir -m 0711 {view}")
        for step in sorted(steps):
            lines += [f"mkdir -m 0711 {view / step}", f"mount --rbind {Path(folder) / step} {view / step}"]
        lines.append(f"mount --rbind {view} {folder}")
    return "\n".join(lines)


def prefix(level: str, work: Path) -> tuple[list[str], dict[str, str]]:
    """The command prefix and environment that put a grading at `level` (`opened`: this machine
    as it is, with this Python opened to every account as in `container`)."""
    if level == "isolated":
        return [], {}
    work.mkdir(parents=True, exist_ok=True)
    if level == "closed" and not closed_steps():
        pytest.skip("this Python is open to every account; no closed one to try")
    if level == "opened":
        script = f"set -e\n{opening(work)}\nexec \"$@\"\n"
    else:
        script = CONTAINER.replace("OPEN", opening(work) if level == "container" else "")
    return (["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "container"],
            {"WORK": str(work), "KIT": str(KIT)})


LEVELS = ("isolated", "container")


def at_a_level(test):  # noqa: ANN001, ANN201 - a test function
    """`test` parametrized by the level it grades at: at one a run, which its name and the drawn
    seed pick (by_name: a run meets both levels, each test meets the other at another
    run), at both with --exhaustive."""
    return pytest.mark.parametrize("level", by_name(test.__name__, LEVELS))(test)


class Done:
    def __init__(self, run: subprocess.CompletedProcess, results: Path, tmp: Path) -> None:
        self.code, self.output = run.returncode, run.stdout + run.stderr
        self.results = ({t["tags"][0]: t for t in json.loads(results.read_text())["tests"]}
                        if results.is_file() else None)
        self.tmp_left = sorted(p.name for p in tmp.iterdir())


@contextmanager
def a_busy_core() -> Iterator[None]:
    """One CPU kept busy by a loop in a session of its own (the scheduler shares a CPU per
    session), and everything this process starts meanwhile confined to that CPU: a busy machine
    for the grading started here, while the other CPUs stay free for whatever else runs."""
    every = os.sched_getaffinity(0)
    one = {max(every)}
    os.sched_setaffinity(0, one)
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        yield
    finally:
        loop.kill()
        loop.wait()
        os.sched_setaffinity(0, every)


def run_grading(level: str, submission: Path, folder: Path, name: str, *options: str,
                command: list[str] | None = None) -> Done:
    """Grade `submission` at `level` in a pytest process of its own, with a TMPDIR of its own."""
    tmp = folder / f"{name}-{level}-tmp"
    tmp.mkdir()
    results = folder / f"{name}-{level}-results.json"
    wrap, extra = prefix(level, folder / f"{name}-{level}-container")
    command = command or [sys.executable, "-m", "pytest", "autograder", f"--submission={submission}",
                          f"--results-json={results}", "-q", "-p", "no:cacheprovider", *options]
    env = {**os.environ, **extra, "TMPDIR": str(tmp)}
    run = subprocess.run([*wrap, *command], cwd=KIT, env=env, capture_output=True, text=True,
                         timeout=GRADING_SECONDS)
    return Done(run, results, tmp)


def graded(place: dict, level: str, name: str, *options: str, **trick: str) -> Done:
    submission = make_submission(place["folder"] / level, name, **trick) if trick else None
    done = run_grading(level, submission, place["folder"], name, "--grading=" + str(place["grading"]),
                       "--reference=" + str(place["sealed"]), *options)
    assert done.results is not None, done.output[-3000:]
    return done


def fast_grading(folder: Path) -> Path:
    """grading.toml with short time limits, so that hanging submissions cost seconds."""
    text = (KIT / "grading.toml").read_text(encoding="utf-8")
    for key, value in {"import_seconds": "3.0"}.items():
        text, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
        assert count == 1, f"grading.toml has no single `{key}` line to shorten"
    path = folder / "grading.toml"
    path.write_text(text, encoding="utf-8")
    return path


def grade(submission: Path, folder: Path, grading: Path, *extra: str,
          env: dict | None = None) -> dict[str, dict]:
    """Grade a folder with the short limits; results.json's entries by part id."""
    return autograde_folder(submission, folder / f"{submission.name}-results.json",
                            f"--grading={grading}", *extra, env=env)


def scores(results: dict[str, dict]) -> dict[str, float]:
    return {part: entry["score"] for part, entry in results.items()}


def make_submission(folder: Path, name: str, at_import: str = "", in_backward: str = "",
                    in_mul: str = "") -> Path:
    """The honest base (reference, `__mul__` stubbed) with a trick at import, in backward(), or
    in the stubbed `__mul__` (whose tests fail, so what it prints shows in the results)."""
    target = folder / name
    shutil.copytree(KIT / "solutions", target)
    source = (target / "value.py").read_text(encoding="utf-8")
    start = source.index("    def __mul__")
    end = source.index("\n    def ", start + 1)
    trick = textwrap.indent(textwrap.dedent(in_mul).strip(), " " * 8) + "\n" if in_mul else ""
    stub = f'    def __mul__(self, other):\n{trick}        raise NotImplementedError("value.mul")\n'
    source = source[:start] + stub + source[end:]
    if in_backward:
        head = source.index("    def backward(")
        body = source.index('"""', source.index('"""', head) + 3) + 3
        trick = textwrap.indent(textwrap.dedent(in_backward).strip(), " " * 8)
        source = source[:body] + "\n" + trick + source[body:]
    (target / "value.py").write_text(source + "\n" + textwrap.dedent(at_import), encoding="utf-8")
    return target
