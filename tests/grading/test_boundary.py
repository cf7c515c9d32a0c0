"""The trust boundary is in the folders: what runs inside a worker lives in autograder/inside/.

The trusted side imports nothing from there but the worker's program, which the zygote loads
to fork workers from; the inside imports nothing of the trusted side. Each rule is checked on
the kit's own sources, and on a planted import, so that the check is seen to fail.
"""

from __future__ import annotations

import ast
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
