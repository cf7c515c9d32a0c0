"""The trust boundary is in the folders: what runs inside a worker lives in autograder/inside/.

The trusted side imports nothing from there but the worker's program, which the zygote loads
to fork workers from; the inside imports nothing of the trusted side. Each rule is checked on
the kit's own sources, and on a planted import, so that the check is seen to fail.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import KIT

PACKAGE = KIT / "autograder"
INSIDE = PACKAGE / "inside"
# The one way in: the zygote imports the worker's program before it forks workers.
ENTRY = {("autograder/sandbox/zygote.py", "autograder.inside.serve")}
# What code inside a worker may import: the standard library, numpy, and its own folder.
THIRD_PARTY = {"numpy"}


def imported(path: Path) -> list[str]:
    """Every name `path` imports, dotted in full (`from a import b` is `a.b`; relative imports
    resolved against the folder it lies in)."""
    package = ".".join(path.relative_to(KIT).with_suffix("").parts[:-1])
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            names += [f"{stem}.{alias.name}" for alias in node.names]
    return names


def crossings_in(path: Path) -> list[str]:
    """The imports of one module that cross the boundary the wrong way."""
    where = path.relative_to(KIT).as_posix()
    inside = path.is_relative_to(INSIDE)
    found = []
    for name in imported(path):
        if inside:
            top = name.split(".")[0]
            allowed = (name.startswith("autograder.inside.") or top in THIRD_PARTY
                       or top in sys.stdlib_module_names or top == "scenarios" or top == "__future__")
            if not allowed:
                found.append(f"{where} imports {name}")
        elif (name == "autograder.inside" or name.startswith("autograder.inside.")) \
                and (where, name) not in ENTRY:
            found.append(f"{where} imports {name}")
    return found


def crossings(root: Path) -> list[str]:
    return [crossing for path in sorted(root.rglob("*.py")) for crossing in crossings_in(path)]


def test_nothing_crosses_the_boundary():
    assert crossings(PACKAGE) == []


def test_the_worker_has_one_way_in():
    """The zygote's import is there: were it gone, the rule above would hold of nothing."""
    assert "autograder.inside.serve" in imported(PACKAGE / "sandbox" / "zygote.py")
    assert not crossings_in(PACKAGE / "sandbox" / "zygote.py")


@pytest.mark.parametrize("planted, where", [
    ("from autograder.inside.scenarios.value import Tape\n", "autograder/judge.py"),
    ("from .inside.scenarios import common\n", "autograder/judge.py"),
    ("from ...config import load\n", "autograder/inside/scenarios/value.py"),
    ("import autograder.judge\n", "autograder/inside/serve.py"),
    ("from ... import questions\n", "autograder/inside/scenarios/value.py"),
])
def test_a_planted_import_is_found(tmp_path: Path, planted: str, where: str, monkeypatch):
    """The same check, on a copy of one module with an import that crosses, finds it."""
    copy = tmp_path / "kit"
    target = copy / where
    target.parent.mkdir(parents=True)
    target.write_text(planted + (KIT / where).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "KIT", copy)
    monkeypatch.setattr(sys.modules[__name__], "INSIDE", copy / "autograder" / "inside")
    assert crossings_in(target), f"{planted.strip()} in {where} was not found"


# -- what is loaded and run, not only what is written ---------------------------------------------------

# What of inside/ the trusted side may load or run as it grades, by the module that does it, and
# why: the design's exceptions, each of which a grading must be seen to make (else it is stale).
RUNS_INSIDE = {
    "autograder/staff/replicas/inprocess.py":
        "the value scenarios' sources, compiled and run in bulk's grading processes on the "
        "reference's own engine file (the in-process replicas): the reference is trusted; a "
        "submission never meets them",
}

# Runs a grading in this process with an audit hook that writes down every import of an inside/
# module, and every compile (but ast.parse's, which reads) or exec of an inside/ source (by its
# text, whatever file name it is given), with the kit's trusted module that asked for it. Only
# this process: the workers and the zygote forked from it run inside/ by design.
RECORDER = r"""
import json, os, sys
from pathlib import Path

import pytest

KIT, LOG = Path(sys.argv[1]), sys.argv[2]
PACKAGE, INSIDE = KIT / "autograder", KIT / "autograder" / "inside"
SOURCES = {path.read_text(encoding="utf-8"): path.relative_to(KIT).as_posix()
           for path in INSIDE.rglob("*.py")}
PID = os.getpid()


def asker():
    frame = sys._getframe(2)
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(PACKAGE) and not path.is_relative_to(INSIDE):
            return path.relative_to(KIT).as_posix()
        frame = frame.f_back
    return "no module of the kit"


def parsing():  # is compile() called by ast.parse? Reading a source's tree is not running it
    caller = sys._getframe(2).f_code
    return caller.co_name == "parse" and Path(caller.co_filename).name == "ast.py"


def hook(event, args):
    if os.getpid() != PID:
        return
    what = None
    if event == "import" and args[0].startswith("autograder.inside"):
        what = args[0]
    elif event == "compile" and isinstance(args[0], (str, bytes)) and not parsing():
        text = args[0].decode("utf-8", "replace") if isinstance(args[0], bytes) else args[0]
        what = SOURCES.get(text)
    elif event == "exec" and Path(getattr(args[0], "co_filename", "")).is_relative_to(INSIDE):
        what = Path(args[0].co_filename).relative_to(KIT).as_posix()
    if what:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps([asker(), event, what]) + "\n")


sys.addaudithook(hook)
sys.exit(pytest.main(sys.argv[3:]))
"""


def loaded_inside(tmp_path: Path) -> dict[str, set[str]]:
    """Trusted module -> what of inside/ it loaded or ran, in an official grading of the reference
    with bulk's replicas (the most of the trusted side one grading runs)."""
    log = tmp_path / "loaded.jsonl"
    log.touch()
    done = subprocess.run([sys.executable, "-c", RECORDER, str(KIT), str(log), "autograder", "-q",
                           "-p", "no:cacheprovider", "-p", "autograder.staff.replicas",
                           f"--submission={KIT / 'solutions'}", "--grading-seed", "5eed0001",
                           f"--results-json={tmp_path / 'results.json'}"],
                          cwd=KIT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found: dict[str, set[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        asker, event, what = json.loads(line)
        found.setdefault(asker, set()).add(f"{event} {what}")
    return found


@pytest.mark.slow
def test_nothing_inside_is_loaded_or_run_by_the_trusted_side_but_what_is_declared(tmp_path):
    """Seen as it happens (an audit hook), not read from import statements: an importlib call,
    an exec of a source read as text, or an import hidden in a string cannot pass unseen."""
    found = loaded_inside(tmp_path)
    undeclared = {asker: sorted(what) for asker, what in found.items() if asker not in RUNS_INSIDE}
    assert not undeclared, f"the trusted side loads or runs inside/ with no exception declared: {undeclared}"
    assert set(found) == set(RUNS_INSIDE), f"declared, not seen in a grading: {set(RUNS_INSIDE) - set(found)}"
    assert any(what.startswith("compile autograder/inside/scenarios/") for what in found[
        "autograder/staff/replicas/inprocess.py"])
