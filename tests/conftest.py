"""Fixtures shared by the kit's own tests."""

import importlib.util
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

