"""Fixtures shared by the kit's own tests."""

import importlib.util
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from autograding import autograde_folder

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


@pytest.fixture(scope="session")
def sealed_reference(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """solutions/ graded once, its answers sealed: `.path` of the sealed file, `.parts` its
    results, `.junit` pytest's report of every test (with the scenario each asked for)."""
    folder = tmp_path_factory.mktemp("reference")
    path, junit = folder / "reference.json", folder / "junit.xml"
    parts = autograde_folder(KIT / "solutions", folder / "results.json", "--seal-reference", str(path),
                             "--junitxml", str(junit))
    return SimpleNamespace(path=path, parts=parts, junit=junit)


@pytest.fixture(scope="session")
def autograde(sealed_reference: SimpleNamespace,
              tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict[str, dict]]:
    """autograde(folder, env=None): results.json's entries by part id, graded against the sealed
    reference in a subprocess. Safe to call from several threads at once."""
    results = tmp_path_factory.mktemp("results")

    def grade(submission: Path, env: dict | None = None) -> dict[str, dict]:
        target = Path(tempfile.mkdtemp(dir=results)) / "results.json"
        return autograde_folder(submission, target, "--reference", str(sealed_reference.path), env=env)

    return grade
