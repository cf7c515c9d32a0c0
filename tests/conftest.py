"""Fixtures shared by the kit's own tests."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

KIT = Path(__file__).resolve().parent.parent
ENGINES = ("value", "tensor", "dual")


def _load(folder: str, name: str) -> ModuleType:
    """Import KIT/folder/name.py under a name of its own, so the two versions never mix."""
    path = KIT / folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{folder}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def reference() -> SimpleNamespace:
    """The complete engines in solutions/, as `reference.value`, `.tensor`, `.dual`."""
    return SimpleNamespace(**{name: _load("solutions", name) for name in ENGINES})


@pytest.fixture(scope="session")
def stubs() -> SimpleNamespace:
    """The student's starting point in assignments/, as `stubs.value`, `.tensor`, `.dual`."""
    return SimpleNamespace(**{name: _load("assignments", name) for name in ENGINES})


# A hung grader fails the kit's tests instead of hanging them; a normal run takes a small fraction.
GRADING_RUN_SECONDS = 1800


def _autograde(submission: Path, results: Path, *options: str, env: dict | None = None) -> dict[str, dict]:
    """Grade `submission` as a TA would, in a pytest subprocess; results.json's entries by part id."""
    command = [sys.executable, "-m", "pytest", "autograder", "--submission", str(submission),
               "--results-json", str(results), "-q", "-p", "no:cacheprovider", *options]
    run = subprocess.run(command, cwd=KIT, env={**os.environ, **(env or {})}, capture_output=True,
                         text=True, timeout=GRADING_RUN_SECONDS)
    if run.returncode not in (0, 1) or not results.is_file():  # 0: all passed, 1: some failed
        raise RuntimeError(f"grading {submission} stopped with exit status {run.returncode} and no "
                           f"results.json; its output ends with:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return {test["tags"][0]: test for test in json.loads(results.read_text(encoding="utf-8"))["tests"]}


@pytest.fixture(scope="session")
def sealed_reference(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """solutions/ graded once, its answers sealed: `.path` of the sealed file, `.parts` its results."""
    folder = tmp_path_factory.mktemp("reference")
    path = folder / "reference.json"
    parts = _autograde(KIT / "solutions", folder / "results.json", "--seal-reference", str(path))
    return SimpleNamespace(path=path, parts=parts)


@pytest.fixture(scope="session")
def autograde(sealed_reference: SimpleNamespace,
              tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict[str, dict]]:
    """autograde(folder, env=None): results.json's entries by part id, graded against the sealed
    reference in a subprocess. Safe to call from several threads at once."""
    results = tmp_path_factory.mktemp("results")

    def grade(submission: Path, env: dict | None = None) -> dict[str, dict]:
        target = Path(tempfile.mkdtemp(dir=results)) / "results.json"
        return _autograde(submission, target, "--reference", str(sealed_reference.path), env=env)

    return grade
