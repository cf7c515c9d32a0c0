"""Building a release of a copy of the kit and trying it as a student's machine would: the means
of the release tests (platforms/test_release.py and the tests of the Classroom, Gradescope and
nbgrader releases that build on them).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.config import load

from . import KIT
from .shape import GRADED

CLI = [sys.executable, "-m", "autograder.staff.cli"]
GRADING = load(KIT / "grading.toml")
AFTER_THE_DUE_DATE = "value.stability"  # what this course shows only after the deadline
VISIBLE = {part.id for part in GRADING.parts.values()
           if part.visibility == "visible" and part.id != AFTER_THE_DUE_DATE}

# Imported first by every Python started with it: only the standard library and the packages
# of ALLOWED (say numpy, pytest and what they require) can be imported, and no installed copy
# of the kit stands in for a module missing from the folder being tried.
ONLY_THESE_PACKAGES = '''
import importlib.machinery
import sys

ALLOWED = set(%r)
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path_hooks[:] = [h for h in sys.path_hooks if "__editable__" not in getattr(h, "__module__", "")]
sys.path_importer_cache.clear()


class OnlyThesePackages:
    """Refuse any installed package that a machine with only ALLOWED would not have."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        top = name.partition(".")[0]
        if top in ALLOWED or top in sys.stdlib_module_names or "." in name:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and "-packages" in (spec.origin or ""):
            raise ImportError(f"{name} is installed here, but not where the kit is tried")
        return None


sys.meta_path.insert(0, OnlyThesePackages)
'''


def requirement_closure(*names: str) -> set[str]:
    """These distributions and everything they require here, recursively."""
    found, todo = set(), list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        found.add(name)
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def importable_names(distributions: set[str]) -> list[str]:
    """The top-level modules that these installed distributions provide."""
    return sorted(module for module, owners in metadata.packages_distributions().items()
                  if any(canonicalize_name(owner) in distributions for owner in owners))


def run(command: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})


def kit_with_visibility(folder: Path, visibility: dict[str, str]) -> Path:
    """A copy of the kit whose grading.toml gives these parts these visibilities."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "reference.json", ".pytest_cache")
    for name in ("assignments", "solutions", "autograder", "docs"):
        shutil.copytree(KIT / name, folder / name, ignore=ignore)
    shutil.copyfile(KIT / "pyproject.toml", folder / "pyproject.toml")
    text = (KIT / "grading.toml").read_text(encoding="utf-8")
    for part, value in visibility.items():
        header = f'[parts."{part}"]\n'
        start = text.index(header)
        end = text.find("\n[", start + len(header))
        block = text[start:end if end >= 0 else len(text)]
        text = text.replace(block, re.sub(r'(?m)^visibility = ".*"$', f'visibility = "{value}"', block))
    (folder / "grading.toml").write_text(text, encoding="utf-8")
    assert load(folder / "grading.toml").parts[part].visibility == value
    return folder


def only_packages(folder: Path, *distributions: str) -> dict:
    """Environment variables under which Python sees only the standard library and these
    distributions (with what they require), and pytest loads no plugin by itself."""
    allowed = importable_names(requirement_closure(*distributions))
    (folder / "sitecustomize.py").write_text(ONLY_THESE_PACKAGES % allowed, encoding="utf-8")
    return {"PYTHONPATH": str(folder), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


STUB_MARKER = re.compile(r"# (BEGIN|END) SOLUTION\b")


def solution_lines(qualified: str, engine: str) -> set[str]:
    """The lines of one function of solutions/ that appear nowhere in the given code."""
    given = {line.strip() for name in GRADED
             for line in (KIT / "assignments" / f"{name}.py").read_text(encoding="utf-8").splitlines()}
    source = (KIT / "solutions" / f"{engine}.py").read_text(encoding="utf-8")
    name = qualified.rpartition(".")[2]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            lines = source.splitlines()[node.lineno - 1:node.end_lineno]
            # the solution markers are the kit's machinery, and their words are the stub's TODO
            return {line.strip() for line in lines if len(line.strip()) > 12
                    and not STUB_MARKER.match(line.strip())} - given
    raise AssertionError(f"solutions/{engine}.py has no {qualified}")
